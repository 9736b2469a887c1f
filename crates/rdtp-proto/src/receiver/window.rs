//! The request window `req_una .. req_nxt` (seed 000 §3.2): one record per requested unit
//! holding what its request looked like when it left, plus loss detection.
//!
//! Loss is declared two ways:
//! * fast re-request (seed 000 §3.4): a unit still outstanding is lost once
//!   `threshold` (6) units *requested after it* have arrived;
//! * timeout (seed 000 §3.3): on RTO expiry every unit requested more than an RTO ago is
//!   lost, and the earliest outstanding one in any case.
//!
//! Lost units wait in a set until the receiver re-requests them.

use std::collections::{BTreeSet, VecDeque};

use core::time::Duration;

use super::rate::SendSnapshot;
use crate::time::Time;

/// Where a unit stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnitState {
    /// Requested, not arrived, not (yet) thought lost: counts as in flight.
    Requested,
    /// Thought lost; waiting to be re-requested.
    Lost,
    /// Arrived.
    Received,
}

/// What the receiver remembers about one unit's latest request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UnitRecord {
    pub state: UnitState,
    /// When its latest request left.
    pub sent_at: Time,
    /// How many times it has been requested.
    pub tx: u16,
    /// Tag of its latest request (echoed by Data).
    pub tag: u32,
    /// Receiver-internal id of its latest request (units of one request share it).
    pub req_id: u64,
    /// Transmission order of its latest request, across all units.
    pub seq: u64,
    /// Delivery state when its latest request left.
    pub snap: SendSnapshot,
    /// Units requested after it that arrived while it was outstanding.
    pub later_arrivals: u32,
}

/// The window of requested units.
#[derive(Debug, Default)]
pub(crate) struct Window {
    /// First unit not received in order (`req_una`).
    base: u64,
    /// Records of units `base .. base + records.len()` (`req_nxt` = the end).
    records: VecDeque<UnitRecord>,
    /// Units in state `Requested`.
    inflight: u64,
    /// Lost units waiting for a re-request.
    lost: BTreeSet<u64>,
    /// Units below `high` that had not arrived when `high` passed them.
    holes: BTreeSet<u64>,
    /// One past the highest unit that has arrived.
    high: u64,
}

impl Window {
    pub(crate) fn una(&self) -> u64 {
        self.base
    }
    /// One past the highest unit ever requested (`req_nxt`).
    pub(crate) fn next(&self) -> u64 {
        self.base + self.records.len() as u64
    }
    pub(crate) fn high(&self) -> u64 {
        self.high
    }
    pub(crate) fn inflight(&self) -> u64 {
        self.inflight
    }
    pub(crate) fn has_lost(&self) -> bool {
        !self.lost.is_empty()
    }
    #[cfg(test)]
    pub(crate) fn lost_count(&self) -> usize {
        self.lost.len()
    }

    fn index(&self, unit: u64) -> Option<usize> {
        unit.checked_sub(self.base).map(|i| i as usize).filter(|&i| i < self.records.len())
    }

    pub(crate) fn get(&self, unit: u64) -> Option<&UnitRecord> {
        self.index(unit).map(|i| &self.records[i])
    }

    /// Record the first request of unit `next()`.
    pub(crate) fn push_requested(&mut self, rec: UnitRecord) {
        debug_assert_eq!(rec.state, UnitState::Requested);
        self.records.push_back(rec);
        self.inflight += 1;
    }

    /// Up to `max` lost units, lowest first, taken out of the lost set.
    pub(crate) fn take_lost(&mut self, max: usize, out: &mut Vec<u64>) {
        while out.len() < max {
            let Some(u) = self.lost.pop_first() else { break };
            out.push(u);
        }
    }

    /// A lost unit is requested again.
    pub(crate) fn mark_rerequested(&mut self, unit: u64, update: impl FnOnce(&mut UnitRecord)) {
        if let Some(i) = self.index(unit) {
            let r = &mut self.records[i];
            if r.state == UnitState::Lost {
                update(r);
                r.state = UnitState::Requested;
                r.later_arrivals = 0;
                self.inflight += 1;
            }
        }
    }

    /// Declare `unit` lost (a Busy Nack), or put a lost unit that was taken out of the lost
    /// set but not re-requested back into it. Returns true if it was in flight.
    pub(crate) fn force_lost(&mut self, unit: u64) -> bool {
        let Some(i) = self.index(unit) else { return false };
        match self.records[i].state {
            UnitState::Requested => {
                self.records[i].state = UnitState::Lost;
                self.inflight -= 1;
                self.lost.insert(unit);
                true
            }
            UnitState::Lost => {
                self.lost.insert(unit);
                false
            }
            UnitState::Received => false,
        }
    }

    /// Unit `unit` arrived. Returns its record as it was (or `None` for a duplicate or a
    /// unit never requested) and appends units newly found lost to `newly_lost`.
    pub(crate) fn on_arrival(&mut self, unit: u64, threshold: u32, newly_lost: &mut Vec<u64>) -> Option<UnitRecord> {
        let i = self.index(unit)?;
        let before = self.records[i];
        match before.state {
            UnitState::Received => return None,
            UnitState::Requested => self.inflight -= 1,
            UnitState::Lost => {
                self.lost.remove(&unit);
            }
        }
        self.records[i].state = UnitState::Received;

        if unit >= self.high {
            for h in self.high.max(self.base)..unit {
                if self.records[(h - self.base) as usize].state != UnitState::Received {
                    self.holes.insert(h);
                }
            }
            self.high = unit + 1;
        }
        self.holes.remove(&unit);

        // Seed 000 §3.4: a unit is lost after `threshold` later-requested units arrived.
        let seq = before.seq;
        for &h in self.holes.range(..unit) {
            let r = &mut self.records[(h - self.base) as usize];
            if r.state == UnitState::Requested && r.seq < seq {
                r.later_arrivals += 1;
                if r.later_arrivals >= threshold {
                    r.state = UnitState::Lost;
                    self.inflight -= 1;
                    self.lost.insert(h);
                    newly_lost.push(h);
                }
            }
        }
        Some(before)
    }

    /// Seed 000 §3.3: on RTO expiry, every unit requested at least `rto` ago is lost, and
    /// the earliest outstanding unit in any case. Appends them to `out`.
    pub(crate) fn expire(&mut self, now: Time, rto: Duration, out: &mut Vec<u64>) {
        let mut first = true;
        for (i, r) in self.records.iter_mut().enumerate() {
            if r.state != UnitState::Requested {
                continue;
            }
            if first || now - r.sent_at >= rto {
                r.state = UnitState::Lost;
                self.inflight -= 1;
                let u = self.base + i as u64;
                self.lost.insert(u);
                out.push(u);
            }
            first = false;
        }
    }

    /// The in-order point moved to `una`: drop the records below it (all received).
    pub(crate) fn advance_to(&mut self, una: u64) {
        while self.base < una {
            let r = self.records.pop_front();
            debug_assert!(r.is_some_and(|r| r.state == UnitState::Received));
            self.base += 1;
        }
        while self.holes.first().is_some_and(|&h| h < una) {
            self.holes.pop_first();
        }
    }

    /// Drop all records (the transfer ended).
    pub(crate) fn clear(&mut self) {
        self.records.clear();
        self.lost.clear();
        self.holes.clear();
        self.inflight = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(seq: u64, sent_ms: u64) -> UnitRecord {
        UnitRecord {
            state: UnitState::Requested,
            sent_at: Time::from_millis(sent_ms),
            tx: 1,
            tag: 0,
            req_id: seq,
            seq,
            snap: SendSnapshot::default(),
            later_arrivals: 0,
        }
    }

    #[test]
    fn sixth_later_arrival_declares_loss() {
        let mut w = Window::default();
        for s in 0..10 {
            w.push_requested(rec(s, 0));
        }
        let mut lost = vec![];
        assert!(w.on_arrival(0, 6, &mut lost).is_some());
        w.advance_to(1);
        // Unit 1 is missing; units 2..=6 arrive: 5 later arrivals, not yet lost.
        for u in 2..=6 {
            w.on_arrival(u, 6, &mut lost);
        }
        assert!(lost.is_empty());
        assert_eq!(w.inflight(), 4); // units 1, 7, 8, 9
        w.on_arrival(7, 6, &mut lost);
        assert_eq!(lost, vec![1]);
        assert_eq!(w.inflight(), 2);
        assert!(w.on_arrival(7, 6, &mut lost).is_none(), "duplicate");
        // Re-requested with a later seq: arrivals of units requested before it do not count.
        let mut take = vec![];
        w.take_lost(8, &mut take);
        assert_eq!(take, vec![1]);
        w.mark_rerequested(1, |r| r.seq = 100);
        lost.clear();
        for u in 8..10 {
            w.on_arrival(u, 6, &mut lost);
        }
        assert!(lost.is_empty());
        // The late original (or the re-request) arrives: everything is in.
        w.on_arrival(1, 6, &mut lost);
        assert_eq!(w.inflight(), 0);
        w.advance_to(10);
        assert_eq!(w.una(), 10);
    }

    #[test]
    fn expiry_takes_old_units_and_always_the_earliest() {
        let mut w = Window::default();
        w.push_requested(rec(0, 100)); // earliest but recent
        w.push_requested(rec(1, 0));
        w.push_requested(rec(2, 350));
        let mut out = vec![];
        w.expire(Time::from_millis(400), Duration::from_millis(200), &mut out);
        assert_eq!(out, vec![0, 1]);
        assert_eq!(w.inflight(), 1);
        assert_eq!(w.lost_count(), 2);
    }
}
