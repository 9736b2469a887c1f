//! Pending requests (NDN's PIT): the units a router asked upstream for, and who waits for
//! each (seed 001 §III-B "interest aggregation"; NFD's in-records and out-records).
//!
//! An entry is keyed by (EID, offset, unit): requests with different unit sizes for the same
//! offset want different Data. It holds the downstreams waiting (their address and tag — the
//! Data goes back to each with its own tag), the upstream requests it went out in (tag and
//! next hop: only a Data or Nack answering one of those satisfies it), the nonces it has seen
//! and from whom (a nonce coming back from another peer is a loop; from the same peer it is
//! the network duplicating a datagram, as NFD treats point-to-point faces), when it was
//! last forwarded (a further request for it, from anyone, is forwarded again only after the
//! suppression interval), and the source it is charged to ([`super::limits`]: the downstream whose request created
//! it; a source holds at most its share of the table).

use std::net::SocketAddr;

use super::limits::{SlotIx, Sourced};
use crate::eid::Eid;
use crate::time::Time;

/// Upstream requests remembered per entry (older ones are forgotten: their Data is then
/// unsolicited).
pub(crate) const MAX_OUT: usize = 4;
/// Nonces remembered per entry.
pub(crate) const MAX_NONCES: usize = 8;

/// What identifies a pending unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PitKey {
    pub eid: Eid,
    pub offset: u64,
    pub unit: u16,
}

/// A downstream waiting for the unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct InRecord {
    pub peer: SocketAddr,
    /// The tag of its latest request for the unit.
    pub tag: u32,
    /// When its latest request reached the entry: a Data answering an upstream request
    /// forwarded well before that answers an earlier request than its own, and its copy may
    /// be marked `COALESCED` ([`PitEntry::early`]).
    pub asked: Time,
}

/// One pending unit.
#[derive(Clone, Debug)]
pub(crate) struct PitEntry {
    pub downstream: Vec<InRecord>,
    /// `(tag, next hop, when)` of the upstream requests it was forwarded in, oldest first.
    pub out: Vec<(u32, SocketAddr, Time)>,
    /// Nonces seen, with the peer each came from.
    pub nonces: Vec<(u64, SocketAddr)>,
    pub last_forwarded: Time,
    /// Times it was forwarded again after its first forwarding (saturating; exponential
    /// retransmission suppression grows with it, [`super::strategy::RetxSuppression`]).
    pub reforwards: u8,
    /// The slot of the source that created it ([`super::limits`]).
    pub source: SlotIx,
}

impl Sourced for PitEntry {
    fn source(&self) -> SlotIx {
        self.source
    }
    fn joined(&self) -> usize {
        self.downstream.len().saturating_sub(1)
    }
}

/// The lists of entries that were answered, kept for new entries, so that a pending unit
/// costs no allocation in steady state. At most [`SpareLists::KEPT`] sets, each of lists no
/// longer than a new entry's usually grow to ([`SpareLists::SMALL`]): what a full table
/// holds is what it held without them.
#[derive(Debug, Default)]
pub(crate) struct SpareLists(Vec<Lists>);

type Lists = (Vec<InRecord>, Vec<(u32, SocketAddr, Time)>, Vec<(u64, SocketAddr)>);

impl SpareLists {
    pub(crate) const KEPT: usize = 1024;
    pub(crate) const SMALL: usize = 4;

    /// A new entry for the unit `peer` asked for with `tag` and `nonce` (lists reused).
    pub(crate) fn entry(&mut self, peer: SocketAddr, tag: u32, nonce: u64, now: Time, source: SlotIx) -> PitEntry {
        // Fresh lists are as small as a new entry's always were.
        let (mut downstream, out, mut nonces) =
            self.0.pop().unwrap_or_else(|| (Vec::with_capacity(1), Vec::new(), Vec::with_capacity(1)));
        downstream.push(InRecord { peer, tag, asked: now });
        nonces.push((nonce, peer));
        PitEntry { downstream, out, nonces, last_forwarded: now, reforwards: 0, source }
    }

    /// Keep the lists of an entry that left (if small, and while fewer than `KEPT` are kept).
    pub(crate) fn recycle(&mut self, e: PitEntry) {
        let PitEntry { mut downstream, mut out, mut nonces, .. } = e;
        let small = downstream.capacity().max(out.capacity()).max(nonces.capacity()) <= Self::SMALL;
        if small && self.0.len() < Self::KEPT {
            downstream.clear();
            out.clear();
            nonces.clear();
            self.0.push((downstream, out, nonces));
        }
    }
}

impl PitEntry {
    /// The next hop of the latest upstream request it went out in.
    pub(crate) fn last_next_hop(&self) -> Option<SocketAddr> {
        self.out.last().map(|&(_, p, _)| p)
    }

    /// Whether `(tag, from)` is one of the upstream requests this entry went out in.
    pub(crate) fn answered_by(&self, tag: u32, from: SocketAddr) -> bool {
        self.out.iter().any(|&(t, p, _)| t == tag && p == from)
    }

    /// When the upstream request `(tag, from)` went out (the latest forwarding if it is
    /// not one this entry remembers).
    pub(crate) fn forwarded_at(&self, tag: u32, from: SocketAddr) -> Time {
        self.out.iter().find(|&&(t, p, _)| t == tag && p == from).map_or(self.last_forwarded, |&(_, _, at)| at)
    }

    /// Whether `nonce` came before from a peer other than `from`: the request looped.
    pub(crate) fn is_loop(&self, nonce: u64, from: SocketAddr) -> bool {
        self.nonces.iter().any(|&(n, p)| n == nonce && p != from)
    }

    pub(crate) fn note_nonce(&mut self, nonce: u64, from: SocketAddr) {
        if self.nonces.contains(&(nonce, from)) {
            return;
        }
        if self.nonces.len() >= MAX_NONCES {
            self.nonces.remove(0);
        }
        self.nonces.push((nonce, from));
    }

    pub(crate) fn note_forwarded(&mut self, tag: u32, next_hop: SocketAddr, now: Time) {
        if self.out.len() >= MAX_OUT {
            self.out.remove(0);
        }
        self.out.push((tag, next_hop, now));
        self.last_forwarded = now;
    }

    /// Add `peer` as waiting with `tag`, or update its tag; either way as having asked at
    /// `now` (see [`InRecord::asked`]). The same tag again is the same request duplicated
    /// by the network: nothing changes. Returns `Some(true)` if it was not waiting yet,
    /// `None` if the entry already has `max` downstreams.
    pub(crate) fn add_downstream(&mut self, peer: SocketAddr, tag: u32, max: usize, now: Time) -> Option<bool> {
        if let Some(d) = self.downstream.iter_mut().find(|d| d.peer == peer) {
            if d.tag != tag {
                // A new request (not the network duplicating the one it has waiting).
                d.tag = tag;
                d.asked = now;
            }
            return Some(false);
        }
        if self.downstream.len() >= max {
            return None;
        }
        self.downstream.push(InRecord { peer, tag, asked: now });
        Some(true)
    }

    /// A request that reached the entry is forwarded upstream again (let through the
    /// suppression interval): one more re-forwarding.
    pub(crate) fn reforwarded(&mut self) {
        self.reforwards = self.reforwards.saturating_add(1);
    }

    /// Forget the upstream request `(tag, hop)` (refused by `hop`) if the entry went to
    /// another next hop too, which may still answer: returns whether it did.
    pub(crate) fn drop_out_if_others(&mut self, tag: u32, hop: SocketAddr) -> bool {
        if !self.out.iter().any(|&(_, p, _)| p != hop) {
            return false;
        }
        self.out.retain(|&(t, p, _)| !(t == tag && p == hop));
        true
    }

    /// Whether downstream `d`'s copy at `now` of the Data answering the upstream request
    /// forwarded at `sent` ([`PitEntry::forwarded_at`]) is early: `d`'s latest request
    /// reached the entry after that forwarding, so that the time since its request is less
    /// than 7/8 of the time since the forwarding (the round trip of the request that went
    /// upstream). Such a copy is marked `COALESCED` and gives its receiver no RTT sample: a
    /// min-RTT filter fed with it would size a window (BBR: 2 × bandwidth × min RTT) for a
    /// fraction of the round trip the receiver has once nobody else's request is ahead of
    /// its own, and a rate limited by that window only shrinks (issue 23,
    /// `experiments/smoke-routers.toml`: 0.7 ms against 20 ms). A request that arrived just
    /// after the forwarding keeps its sample: understated by at most 1/8 (the variation SRTT
    /// smooths over, RFC 6298's α), it keeps BBR's window above 1.75 bandwidth-delay
    /// products — and receivers that started together would otherwise lose nearly all their
    /// samples to one another (measured: they then drift apart and stop sharing the Data).
    /// The downstream whose request went out at `sent` asked then: its copy is never early.
    /// A request forwarded again itself (let through the suppression interval) whose copy
    /// answers an earlier forwarding is early like one that joined.
    pub(crate) fn early(&self, d: &InRecord, now: Time, sent: Time) -> bool {
        8 * now.saturating_since(d.asked) < 7 * now.saturating_since(sent)
    }
}
