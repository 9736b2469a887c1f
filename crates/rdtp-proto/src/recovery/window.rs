//! The request window `req_una .. req_nxt` (seed 000 §3.2): one record per requested unit
//! holding what its request looked like when it left, and the set of units waiting to be
//! re-requested.
//!
//! The window only keeps records; *which* units are lost is decided by a
//! [`super::loss::LossDetector`], which calls [`Window::declare_lost`].

use std::collections::{BTreeSet, VecDeque};

use super::rate::SendSnapshot;
use crate::time::Time;

/// Where a unit stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitState {
    /// Requested, not arrived, not (yet) thought lost: counts as in flight.
    Requested,
    /// Thought lost; waiting to be re-requested.
    Lost,
    /// Arrived.
    Received,
}

/// Earlier requests of a unit whose answers are still accepted, besides the latest.
///
/// An NDN consumer takes a Data answering *any* of its pending Interests for a name (S1
/// §III-B: "identifying exactly which interest retrieves a data back can be challenging"),
/// and rdtp must too: a controller whose loss threshold falls below the path's RTT (BBR-CD's
/// RTprop + α·δ, frozen while only re-requests are out, S1 §III-B filters their samples)
/// re-requests a unit several times before the first answer is back. Accepting only the
/// latest two tags then rejected every answer, and each rejected answer cost a full
/// unit's airtime (measured, seed 001 Topology 1 with ≈ 10 % loss: 3 078 re-requests for
/// 2 326 units, the AP sending 69 MB for a 20 MB object). Eight tags cover a threshold of an
/// eighth of the RTT; a forger off the path must still guess one of them (SECURITY.md).
pub const PREV_TAGS: usize = 7;

/// What the receiver remembers about one unit's latest request.
#[derive(Clone, Copy, Debug)]
pub struct UnitRecord {
    pub state: UnitState,
    /// When its latest request left.
    pub sent_at: Time,
    /// How many times it has been requested.
    pub tx: u16,
    /// Tag of its latest request (echoed by Data).
    pub tag: u32,
    /// Tags of the requests before that, newest first (Data answering any of them is still
    /// accepted, see [`UnitRecord::answers`]).
    pub prev_tags: [u32; PREV_TAGS],
    /// Receiver-internal id of its latest request (units of one request share it).
    pub req_id: u64,
    /// Transmission order of its latest request, across all units.
    pub seq: u64,
    /// Delivery state when its latest request left.
    pub snap: SendSnapshot,
    /// What the controller asked to keep for this request (the cookie its `on_request` returned).
    pub cookie: u64,
    /// Nonce of its latest request (a Data carrying this request's annotations names it).
    pub nonce: u64,
}

impl UnitRecord {
    /// Whether `tag` is that of the unit's latest request or of one of the
    /// [`PREV_TAGS`] before it.
    pub fn answers(&self, tag: u32) -> bool {
        self.tag == tag || self.prev_tags.contains(&tag)
    }

    /// A first request for a unit, sent at `sent_at`, every other field zero (for tests).
    #[cfg(test)]
    pub(crate) fn requested_at(sent_at: Time) -> Self {
        UnitRecord {
            state: UnitState::Requested,
            sent_at,
            tx: 1,
            tag: 0,
            prev_tags: [0; PREV_TAGS],
            req_id: 0,
            seq: 0,
            snap: SendSnapshot::default(),
            cookie: 0,
            nonce: 0,
        }
    }

    /// A new request for the unit, with `tag`: the current tag becomes the newest old one.
    pub fn retag(&mut self, tag: u32) {
        self.prev_tags.copy_within(..PREV_TAGS - 1, 1);
        self.prev_tags[0] = self.tag;
        self.tag = tag;
    }
}

/// An arrival as the window saw it.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub unit: u64,
    /// The unit's record before the arrival (state `Requested` or `Lost`).
    pub before: UnitRecord,
    /// [`Window::high`] before the arrival.
    pub prev_high: u64,
}

/// The window of requested units.
#[derive(Debug, Default)]
pub struct Window {
    /// First unit not received in order (`req_una`).
    base: u64,
    /// Records of units `base .. base + records.len()` (`req_nxt` = the end).
    records: VecDeque<UnitRecord>,
    /// Units in state `Requested`.
    inflight: u64,
    /// Lost units waiting for a re-request.
    lost: BTreeSet<u64>,
    /// One past the highest unit that has arrived.
    high: u64,
}

impl Window {
    /// First unit not received in order (`req_una`).
    pub fn una(&self) -> u64 {
        self.base
    }
    /// One past the highest unit ever requested (`req_nxt`).
    pub fn next(&self) -> u64 {
        self.base + self.records.len() as u64
    }
    /// One past the highest unit that has arrived.
    pub fn high(&self) -> u64 {
        self.high
    }
    /// Units requested and neither arrived nor thought lost.
    pub fn inflight(&self) -> u64 {
        self.inflight
    }
    /// Whether lost units wait for a re-request.
    pub fn has_lost(&self) -> bool {
        !self.lost.is_empty()
    }
    /// The lowest lost unit waiting for a re-request (the next to be asked for again).
    pub fn first_lost(&self) -> Option<u64> {
        self.lost.first().copied()
    }
    #[cfg(test)]
    pub(crate) fn lost_count(&self) -> usize {
        self.lost.len()
    }

    fn index(&self, unit: u64) -> Option<usize> {
        unit.checked_sub(self.base).map(|i| i as usize).filter(|&i| i < self.records.len())
    }

    /// The record of `unit`, if it is inside the window.
    pub fn get(&self, unit: u64) -> Option<&UnitRecord> {
        self.index(unit).map(|i| &self.records[i])
    }

    /// The earliest unit in the window that has not arrived (TCP's `snd_una`), if any. With
    /// verified streaming the window slides only once a whole block verified, so this can be
    /// past [`Window::una`].
    pub fn first_missing(&self) -> Option<u64> {
        self.iter().find(|(_, r)| r.state != UnitState::Received).map(|(u, _)| u)
    }

    /// Units in the window with their records, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &UnitRecord)> {
        self.records.iter().enumerate().map(|(i, r)| (self.base + i as u64, r))
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
                self.inflight += 1;
            }
        }
    }

    /// Declare an in-flight unit lost (a loss detector's verdict, or a Busy Nack). Returns
    /// true if it was in flight.
    pub fn declare_lost(&mut self, unit: u64) -> bool {
        let Some(i) = self.index(unit) else { return false };
        if self.records[i].state != UnitState::Requested {
            return false;
        }
        self.records[i].state = UnitState::Lost;
        self.inflight -= 1;
        self.lost.insert(unit);
        true
    }

    /// An in-flight unit's request was refused unanswered (a Retry): it waits to be
    /// requested again, and its refused request does not count as a transmission (`tx`
    /// drops back, so the next one is not a retransmission for RTT sampling or statistics).
    pub(crate) fn refuse(&mut self, unit: u64) -> bool {
        if !self.declare_lost(unit) {
            return false;
        }
        let i = self.index(unit).expect("declared lost");
        self.records[i].tx = self.records[i].tx.saturating_sub(1);
        true
    }

    /// A received unit's bytes were dropped (its block failed verification): it waits to be
    /// requested again. Not a loss: no congestion signal.
    pub(crate) fn reopen(&mut self, unit: u64) -> bool {
        let Some(i) = self.index(unit) else { return false };
        if self.records[i].state != UnitState::Received {
            return false;
        }
        self.records[i].state = UnitState::Lost;
        self.lost.insert(unit);
        true
    }

    /// Put a lost unit that was taken out of the lost set but not re-requested back.
    pub(crate) fn return_lost(&mut self, unit: u64) {
        if self.get(unit).is_some_and(|r| r.state == UnitState::Lost) {
            self.lost.insert(unit);
        }
    }

    /// Unit `unit` arrived: mark it received. `None` for a duplicate or a unit never
    /// requested.
    pub(crate) fn mark_received(&mut self, unit: u64) -> Option<Arrival> {
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
        let prev_high = self.high;
        self.high = self.high.max(unit + 1);
        Some(Arrival { unit, before, prev_high })
    }

    /// The in-order point moved to `una`: drop the records below it (all received).
    pub(crate) fn advance_to(&mut self, una: u64) {
        while self.base < una {
            let r = self.records.pop_front();
            debug_assert!(r.is_some_and(|r| r.state == UnitState::Received));
            self.base += 1;
        }
    }

    /// Drop all records (the transfer ended).
    pub(crate) fn clear(&mut self) {
        self.records.clear();
        self.lost.clear();
        self.inflight = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_to_the_latest_eight_requests_of_a_unit_count() {
        let mut r = UnitRecord { tag: 100, prev_tags: [100; PREV_TAGS], ..UnitRecord::requested_at(Time::ZERO) };
        assert!(r.answers(100) && !r.answers(101));
        for tag in 101..=110 {
            r.retag(tag);
        }
        // Requests 103 … 110 are the latest eight: their answers count, older ones do not.
        assert!((103..=110).all(|t| r.answers(t)));
        assert!(!r.answers(102) && !r.answers(100) && !r.answers(111));
        assert_eq!(r.tag, 110);
    }
}
