//! The server under the call contract of every core ([`crate::node::Node`]).
//!
//! [`Server::handle`] answers one datagram with a [`super::Reply`] that writes its datagrams
//! straight from the catalogue into the caller's buffer: no copy and no state between
//! datagrams, which is what a server with many receivers wants (the UDP runtime serves that
//! way). [`ServerNode`] wraps a server and its catalogue in the shape every host already
//! drives for a receiver or a router: `handle_datagram` queues the answer's datagrams,
//! `poll_transmit` hands them out, each addressed to the datagram's source. It keeps no
//! state per receiver either: its queue holds one answer at a time unless the host lets
//! answers pile up between `poll_transmit` calls.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;

use super::{Catalog, Server};
use crate::node::Transmit;
use crate::time::Time;

/// Largest datagram a server answer can be, and the buffer [`ServerNode::poll_transmit`]
/// needs.
pub const MAX_DATAGRAM: usize = 65_536;

/// A [`Server`] with its catalogue, driven as a [`crate::node::Node`].
pub struct ServerNode<C: ?Sized> {
    server: Server,
    catalog: Arc<C>,
    /// The queued datagrams, back to back, and where each goes.
    bytes: Vec<u8>,
    queue: VecDeque<(SocketAddr, usize, usize)>,
    scratch: Vec<u8>,
}

impl<C: ?Sized> core::fmt::Debug for ServerNode<C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ServerNode").field("server", &self.server).field("queued", &self.queue.len()).finish()
    }
}

impl<C: Catalog + ?Sized> ServerNode<C> {
    /// `server` serving `catalog`.
    pub fn new(server: Server, catalog: Arc<C>) -> Self {
        ServerNode { server, catalog, bytes: Vec::new(), queue: VecDeque::new(), scratch: vec![0; MAX_DATAGRAM] }
    }

    /// The server core (its configuration and counters).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The catalogue served.
    pub fn catalog(&self) -> &Arc<C> {
        &self.catalog
    }

    /// Replace the server core (a new configuration: its counters start over).
    pub fn set_server(&mut self, server: Server) {
        self.server = server;
    }

    /// Answer one datagram from `from` (see [`Server::handle`]); the answer waits for
    /// [`ServerNode::poll_transmit`].
    pub fn handle_datagram(&mut self, now: Time, from: SocketAddr, datagram: &[u8]) {
        let mut reply = self.server.handle(now, from, &*self.catalog, datagram);
        while let Some(n) = reply.next_datagram(&mut self.scratch) {
            self.queue.push_back((from, self.bytes.len(), n));
            self.bytes.extend_from_slice(&self.scratch[..n]);
        }
    }

    /// The next datagram of the queued answers, written into `buf` (≥ [`MAX_DATAGRAM`]
    /// bytes; a datagram that does not fit is dropped and counted).
    pub fn poll_transmit(&mut self, _now: Time, buf: &mut [u8]) -> Option<Transmit> {
        loop {
            let (to, at, len) = self.queue.pop_front()?;
            let fits = len <= buf.len();
            if fits {
                buf[..len].copy_from_slice(&self.bytes[at..at + len]);
            }
            if self.queue.is_empty() {
                self.bytes.clear(); // all handed out: reuse the space from its start
            }
            if fits {
                return Some(Transmit { to, len });
            }
            self.server.stats.dropped += 1;
        }
    }

    /// The server keeps no timers.
    pub fn poll_timeout(&self) -> Option<Time> {
        None
    }

    /// Nothing to do: the server keeps no timers.
    pub fn handle_timeout(&mut self, _now: Time) {}
}

impl<C: Catalog + ?Sized> crate::node::Node for ServerNode<C> {
    fn handle_datagram(&mut self, now: Time, from: SocketAddr, datagram: &[u8]) {
        ServerNode::handle_datagram(self, now, from, datagram)
    }
    fn poll_transmit(&mut self, now: Time, buf: &mut [u8]) -> Option<Transmit> {
        ServerNode::poll_transmit(self, now, buf)
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn max_datagram(&self) -> usize {
        MAX_DATAGRAM
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receiver::{Receiver, ReceiverConfig, Target};
    use crate::server::MemoryCatalog;

    /// A datagram from another address than the receiver's peer is not read.
    #[test]
    fn a_receiver_reads_only_its_peer() {
        let catalog = Arc::new(MemoryCatalog::new([("f".to_string(), vec![1u8; 1000])]));
        let (client, peer, other): (SocketAddr, SocketAddr, SocketAddr) =
            ("192.0.2.1:5000".parse().unwrap(), "192.0.2.2:6000".parse().unwrap(), "192.0.2.3:6000".parse().unwrap());
        let mut server = ServerNode::new(Server::default(), catalog);
        let mut rx = Receiver::new(ReceiverConfig::default(), peer, Target::Name("f".into()), Time::ZERO);
        let mut buf = vec![0u8; MAX_DATAGRAM];
        let t = rx.poll_transmit(Time::ZERO, &mut buf).expect("a resolve request");
        assert_eq!(t.to, peer);
        server.handle_datagram(Time::ZERO, client, &buf[..t.len]);
        let r = server.poll_transmit(Time::ZERO, &mut buf).expect("a Retry");
        assert_eq!(r.to, client);
        rx.handle_datagram(Time::ZERO, other, &buf[..r.len]);
        assert_eq!(rx.address_token(), None, "the Retry came from an address that is not the peer");
        assert_eq!(rx.stats().invalid, 1);
        rx.handle_datagram(Time::ZERO, peer, &buf[..r.len]);
        assert!(rx.address_token().is_some());
    }
}
