//! The client side of listing (`rdtp ls`): pages through a server's catalogue with
//! ListRequests, retrying with exponential backoff. The contract of every core
//! ([`crate::node::Node`]): `poll_transmit`, `handle_datagram`, `handle_timeout`,
//! `poll_timeout`. Like a receiver it talks to one peer (the server, or the router it lists
//! through), sends the peer's address token once it has one (a Retry gives it) and accepts
//! only answers from that peer carrying its own (random) tag.

use core::time::Duration;
use std::net::SocketAddr;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg32;

use crate::eid::Eid;
use crate::node::Transmit;
use crate::receiver::FetchError;
use crate::time::Time;
use crate::wire::{DEFAULT_HOP_LIMIT, ListRequest, NackCode, OptionsWriter, Packet};

/// One catalogue entry, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    pub eid: Eid,
    pub size: u64,
}

/// Fetches the whole catalogue of one server.
#[derive(Debug)]
pub struct Lister {
    peer: SocketAddr,
    cursor: u32,
    tag: u32,
    rng: Pcg32,
    token: Option<Vec<u8>>,
    next_try: Time,
    initial_interval: Duration,
    interval: Duration,
    idle_timeout: Duration,
    last_heard: Time,
    entries: Vec<Listed>,
    total: Option<u32>,
    done: bool,
    error: Option<FetchError>,
}

crate::node::impl_node!(Lister, crate::wire::LIST_REQUEST_LEN + 3 + crate::token::MAX_TOKEN_LEN);

impl Lister {
    /// Start listing the catalogue of `peer` at `now`; retry after `retry` (doubling), give
    /// up after `idle_timeout` without an answer. Tags are drawn from `seed`; `token` is the
    /// peer's address token, if one is known.
    pub fn new(
        peer: SocketAddr,
        now: Time,
        retry: Duration,
        idle_timeout: Duration,
        seed: u64,
        token: Option<Vec<u8>>,
    ) -> Self {
        Lister {
            peer,
            cursor: 0,
            tag: 0,
            rng: Pcg32::seed_from_u64(seed),
            token,
            next_try: now,
            initial_interval: retry,
            interval: retry,
            idle_timeout,
            last_heard: now,
            entries: Vec::new(),
            total: None,
            done: false,
            error: None,
        }
    }

    pub fn is_done(&self) -> bool {
        self.done
    }
    pub fn error(&self) -> Option<&FetchError> {
        self.error.as_ref()
    }
    /// Entries received so far, in catalogue order.
    pub fn entries(&self) -> &[Listed] {
        &self.entries
    }
    /// The server's address token, once it gave one.
    pub fn address_token(&self) -> Option<&[u8]> {
        self.token.as_deref()
    }
    /// Catalogue size the server reported.
    pub fn total(&self) -> Option<u32> {
        self.total
    }

    fn finished(&self) -> bool {
        self.done || self.error.is_some()
    }

    /// Write the next ListRequest, to the peer, into `buf` if one is due.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut [u8]) -> Option<Transmit> {
        if self.finished() || now < self.next_try {
            return None;
        }
        self.tag = self.rng.next_u32().max(1);
        let mut opts = [0u8; 3 + crate::token::MAX_TOKEN_LEN];
        let options = OptionsWriter::new(&mut opts).address_token(self.token.as_deref()).finish();
        let n = ListRequest { hop_limit: DEFAULT_HOP_LIMIT, tag: self.tag, cursor: self.cursor, options }
            .encode(buf)
            .ok()?;
        self.next_try = now + self.interval;
        self.interval = (self.interval * 2).min(Duration::from_secs(60));
        Some(Transmit { to: self.peer, len: n })
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        (!self.finished()).then(|| self.next_try.min(self.last_heard + self.idle_timeout))
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if !self.finished() && now >= self.last_heard + self.idle_timeout {
            self.error = Some(FetchError::Timeout(self.idle_timeout));
        }
    }

    /// Take one datagram from `from`; only the peer's count.
    pub fn handle_datagram(&mut self, now: Time, from: SocketAddr, datagram: &[u8]) {
        if self.finished() || from != self.peer {
            return;
        }
        match Packet::decode(datagram) {
            Ok(Packet::ListResponse(r)) if r.tag == self.tag && r.cursor == self.cursor => {
                self.last_heard = now;
                self.total = Some(r.total);
                self.entries.extend(r.entries().map(|e| Listed { name: e.name.to_string(), eid: e.eid, size: e.size }));
                self.cursor = self.cursor.saturating_add(r.len() as u32);
                if r.more && !r.is_empty() {
                    self.interval = self.initial_interval;
                    self.next_try = now; // ask for the next page at once
                } else {
                    self.done = true;
                }
            }
            Ok(Packet::Retry(r)) if r.tag == self.tag => {
                // Address validation: send the same page request again, with the token.
                self.token = Some(r.token.to_vec());
                self.last_heard = now;
                self.interval = self.initial_interval;
                self.next_try = now;
            }
            Ok(Packet::Nack(n)) if n.tag == self.tag => {
                let who = crate::receiver::refusals::describe_node(n.from, n.hops, false, false);
                self.error = Some(FetchError::Refused { code: n.code, by: n.from, who, detail: n.detail.to_string() });
                if n.code == NackCode::UnknownContent {
                    self.error = Some(FetchError::NotFound("catalogue".into()));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::server::{MemoryCatalog, Server, ServerNode};
    use crate::testing::Pair;

    #[test]
    fn pages_through_a_large_catalogue_and_survives_a_lost_page() {
        let cat =
            MemoryCatalog::new((0..100).map(|i| (format!("dir/file-{i:03}-{}", "x".repeat(60)), vec![i as u8; i])));
        let server_addr: SocketAddr = "192.0.2.2:6000".parse().unwrap();
        let l = Lister::new(server_addr, Time::ZERO, Duration::from_millis(100), Duration::from_secs(5), 1, None);
        let mut pair = Pair::new(l, ServerNode::new(Server::default(), Arc::new(cat)));
        // Run until a third of the catalogue came, then lose the next page on its way back.
        assert!(pair.drive(Duration::from_secs(5), |p| p.a.entries().len() > 30));
        let lost = pair.sent.1;
        assert!(pair.drive(Duration::from_secs(5), |p| p.sent.1 > lost));
        pair.wire.retain(|d| d.to_b); // the page the server just sent is lost: the lister must retry
        assert!(pair.drive(Duration::from_secs(30), |p| p.a.is_done() || p.a.error().is_some()));
        let l = &pair.a;
        assert!(l.error().is_none());
        assert_eq!(l.total(), Some(100));
        assert_eq!(l.entries().len(), 100);
        assert_eq!(l.entries()[42].size, 42);
        assert!(l.entries().windows(2).all(|w| w[0].name < w[1].name));
    }

    #[test]
    fn times_out_without_answers() {
        let peer = "192.0.2.2:6000".parse().unwrap();
        let mut l = Lister::new(peer, Time::ZERO, Duration::from_millis(100), Duration::from_secs(1), 1, None);
        let mut buf = [0u8; 64];
        let mut now = Time::ZERO;
        while l.error().is_none() {
            let _ = l.poll_transmit(now, &mut buf);
            now = l.poll_timeout().unwrap();
            l.handle_timeout(now);
        }
        assert_eq!(l.error(), Some(&FetchError::Timeout(Duration::from_secs(1))));
    }
}
