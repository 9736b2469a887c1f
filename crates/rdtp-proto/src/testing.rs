//! A two-node network for tests, in the manner of quinn-proto's `Pair`: two cores under the
//! contract of every core ([`Node`]) joined by a fixed one-way delay, stepped in virtual time.
//!
//! It is for the core's own tests and for other crates' quick ones (feature `testing`). A
//! network with links, queues, impairments and many nodes is the `rdtp-harness` crate; it
//! drives the same contract. Nothing here is used by the protocol itself.

use core::time::Duration;
use std::net::SocketAddr;

use crate::node::Node;
use crate::time::Time;

/// A datagram on the wire between the two nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InFlight {
    /// When it arrives.
    pub at: Time,
    /// Toward node `b` (else toward `a`).
    pub to_b: bool,
    pub bytes: Vec<u8>,
}

/// Nodes `a` (at `a_addr`) and `b` (at `b_addr`) with `delay` each way.
#[derive(Debug)]
pub struct Pair<A, B> {
    pub a: A,
    pub b: B,
    pub a_addr: SocketAddr,
    pub b_addr: SocketAddr,
    pub now: Time,
    pub delay: Duration,
    /// Datagrams sent and not yet delivered, in the order they were sent.
    pub wire: Vec<InFlight>,
    /// Datagrams each node sent so far (`a`, `b`).
    pub sent: (u64, u64),
    buf: Vec<u8>,
}

impl<A: Node, B: Node> Pair<A, B> {
    /// `a` and `b` at the addresses `"192.0.2.1:5000"` and `"192.0.2.2:6000"`, 5 ms apart,
    /// starting at time zero.
    pub fn new(a: A, b: B) -> Self {
        Pair::with(a, "192.0.2.1:5000".parse().expect("an address"), b, "192.0.2.2:6000".parse().expect("an address"))
    }

    /// `a` at `a_addr` and `b` at `b_addr`, 5 ms apart, starting at time zero.
    pub fn with(a: A, a_addr: SocketAddr, b: B, b_addr: SocketAddr) -> Self {
        let buf = vec![0u8; a.max_datagram().max(b.max_datagram())];
        Pair {
            a,
            b,
            a_addr,
            b_addr,
            now: Time::ZERO,
            delay: Duration::from_millis(5),
            wire: Vec::new(),
            sent: (0, 0),
            buf,
        }
    }

    /// Put everything both nodes want to send now on the wire.
    pub fn transmit(&mut self) {
        let at = self.now + self.delay;
        while let Some(t) = self.a.poll_transmit(self.now, &mut self.buf) {
            debug_assert_eq!(t.to, self.b_addr, "node a sent to an address off this pair");
            self.wire.push(InFlight { at, to_b: true, bytes: self.buf[..t.len].to_vec() });
            self.sent.0 += 1;
        }
        while let Some(t) = self.b.poll_transmit(self.now, &mut self.buf) {
            debug_assert_eq!(t.to, self.a_addr, "node b sent to an address off this pair");
            self.wire.push(InFlight { at, to_b: false, bytes: self.buf[..t.len].to_vec() });
            self.sent.1 += 1;
        }
    }

    /// The next instant something happens: a datagram arrives or a timer is due.
    pub fn next_event(&self) -> Option<Time> {
        let wire = self.wire.iter().map(|d| d.at).min();
        [wire, self.a.poll_timeout(), self.b.poll_timeout()].into_iter().flatten().min()
    }

    /// Advance to the next event and handle every arrival and timer due then, then
    /// transmit. Returns false when nothing is left to happen.
    pub fn step(&mut self) -> bool {
        self.transmit();
        let Some(t) = self.next_event() else { return false };
        self.now = self.now.max(t);
        while let Some(i) = self.wire.iter().position(|d| d.at <= self.now) {
            let d = self.wire.remove(i);
            if d.to_b {
                self.b.handle_datagram(self.now, self.a_addr, &d.bytes);
            } else {
                self.a.handle_datagram(self.now, self.b_addr, &d.bytes);
            }
        }
        if self.a.poll_timeout().is_some_and(|t| t <= self.now) {
            self.a.handle_timeout(self.now);
        }
        if self.b.poll_timeout().is_some_and(|t| t <= self.now) {
            self.b.handle_timeout(self.now);
        }
        self.transmit();
        true
    }

    /// Step until `done` holds, nothing is left to happen, or `limit` of virtual time
    /// passes. Returns whether `done` held.
    pub fn drive(&mut self, limit: Duration, mut done: impl FnMut(&Self) -> bool) -> bool {
        let end = self.now + limit;
        while !done(self) {
            if self.now >= end || !self.step() {
                return done(self);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::lister::Lister;
    use crate::receiver::{Receiver, ReceiverConfig, Target};
    use crate::server::{MemoryCatalog, Server, ServerNode};

    fn server(files: impl IntoIterator<Item = (String, Vec<u8>)>) -> ServerNode<MemoryCatalog> {
        ServerNode::new(Server::default(), Arc::new(MemoryCatalog::new(files)))
    }

    #[test]
    fn a_receiver_and_a_server_node_finish_a_fetch() {
        let object: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let b: SocketAddr = "192.0.2.2:6000".parse().unwrap();
        let rx = Receiver::new(ReceiverConfig::default(), b, Target::Name("f".into()), Time::ZERO);
        let mut pair = Pair::new(rx, server([("f".to_string(), object.clone())]));
        assert!(pair.drive(Duration::from_secs(30), |p| p.a.is_finished()), "{:?}", pair.a.error());
        let mut got = vec![0u8; object.len() + 1];
        assert_eq!(pair.a.read(&mut got), object.len());
        assert_eq!(&got[..object.len()], &object[..]);
    }

    #[test]
    fn a_lister_lists_a_server_node() {
        let b: SocketAddr = "192.0.2.2:6000".parse().unwrap();
        let lister = Lister::new(b, Time::ZERO, Duration::from_millis(100), Duration::from_secs(5), 1, None);
        let files = (0..40).map(|i| (format!("f{i:02}"), vec![0u8; i]));
        let mut pair = Pair::new(lister, server(files));
        assert!(pair.drive(Duration::from_secs(10), |p| p.a.is_done()));
        assert_eq!(pair.a.entries().len(), 40);
        assert_eq!(pair.a.entries()[7].size, 7);
    }
}
