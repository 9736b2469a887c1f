//! The router's output: Nacks (well-formed, blank for what did not decode, or attributable
//! to a malformed request's tag, within the 3× amplification limit toward unvalidated
//! addresses), the transmit queue [`Router::poll_transmit`] drains with its pool of reusable
//! buffers, and the tags of the router's own requests.
//!
//! It decides nothing: the pipelines say what to send and to whom.

use std::net::SocketAddr;

use rand_core::Rng;

use crate::eid::Eid;
use crate::node::NodeId;
use crate::time::Time;
use crate::token::MalformedAnswer;
use crate::wire::{self, ByteRange, Nack, NackCode, Retry};

use super::{POOL, POOL_BUFFER, Router, UNIT_SIZES};

impl Router {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn send_nack(
        &mut self,
        to: SocketAddr,
        code: NackCode,
        tag: u32,
        eid: Eid,
        range: ByteRange,
        by: NodeId,
        hops: u8,
        detail: &str,
    ) {
        let n = Nack { code, hops, tag, eid, offset: range.offset, length: range.length, from: by, detail };
        self.enqueue(to, n.encoded_len(), |b| n.encode(b).ok());
        self.stats.nacks_out += 1;
    }

    /// A Nack echoing nothing of a datagram of `received` bytes that could not be decoded,
    /// so its sender is unvalidated: cut to the amplification budget, or not sent.
    pub(super) fn nack_blank(&mut self, to: SocketAddr, received: usize, code: NackCode, detail: &str) {
        let n = Nack { code, hops: 0, tag: 0, eid: Eid::default(), offset: 0, length: 0, from: self.id, detail };
        match n.fitting(self.validator.budget(received)) {
            Some(n) => {
                self.enqueue(to, n.encoded_len(), |b| n.encode(b).ok());
                self.stats.nacks_out += 1;
            }
            None => self.stats.dropped += 1,
        }
    }

    /// A request that does not decode but names its tag (issue 23, item 12): a Nack
    /// `Malformed` its sender can attribute, or a Retry, or nothing, as a server answers
    /// ([`Validator::answer_malformed`]: within 3× toward an unvalidated address).
    pub(super) fn nack_malformed(
        &mut self,
        now: Time,
        from: SocketAddr,
        received: usize,
        a: &wire::Attribution<'_>,
        detail: &str,
    ) {
        let n = Nack {
            code: NackCode::Malformed,
            hops: 0,
            tag: a.tag,
            eid: a.eid,
            offset: a.range.offset,
            length: a.range.length,
            from: self.id,
            detail,
        };
        match self.validator.answer_malformed(now, from, a.token, received, n.encoded_len()) {
            MalformedAnswer::Nack => {
                self.enqueue(from, n.encoded_len(), |b| n.encode(b).ok());
                self.stats.nacks_out += 1;
            }
            MalformedAnswer::Retry(token) => {
                let r = Retry { tag: a.tag, token: &token };
                self.enqueue(from, r.encoded_len(), |b| r.encode(b).ok());
                self.stats.retries_out += 1;
            }
            MalformedAnswer::Nothing => self.stats.dropped += 1,
        }
    }

    /// Queue a datagram of `len` bytes written by `write` (which returns the length written).
    pub(super) fn enqueue(&mut self, to: SocketAddr, len: usize, write: impl FnOnce(&mut [u8]) -> Option<usize>) {
        let mut b = self.pool.pop().unwrap_or_default();
        b.clear();
        b.resize(len, 0);
        match write(&mut b) {
            Some(n) => {
                b.truncate(n);
                self.queue.push_back((to, b));
            }
            None => self.recycle(b),
        }
    }

    pub(super) fn recycle(&mut self, b: Vec<u8>) {
        if self.pool.len() < POOL && b.capacity() <= POOL_BUFFER {
            self.pool.push(b);
        }
    }

    /// A fresh tag of this router's class ([`RouterConfig::tags`]), not 0, not pending.
    pub(super) fn new_tag(&mut self) -> u32 {
        let m = self.tags.modulus.max(1);
        let r = self.tags.residue % m;
        loop {
            let t = self.rng.next_u32();
            let Some(t) = (t - t % m).checked_add(r) else { continue };
            if t != 0 && self.upstream.get(&t).is_none() && self.control.get(&t).is_none() {
                return t;
            }
        }
    }

    pub(super) fn note_unit_size(&mut self, unit: u16) {
        if self.unit_sizes.first() == Some(&unit) {
            return;
        }
        self.unit_sizes.retain(|&u| u != unit);
        self.unit_sizes.insert(0, unit);
        self.unit_sizes.truncate(UNIT_SIZES);
    }
}
