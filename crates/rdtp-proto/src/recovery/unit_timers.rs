//! Per-unit retransmission timers: each requested unit is lost if it has not arrived by its
//! own deadline, set when its request left (the CCN way: every Interest has a timer; seed
//! 003 §II-A "a Data packet not received within a timeout period is inferred as a sign of
//! congestion"). CCTCP (a timeout per expected source) and ICP (one timer from all samples)
//! both keep their units here, with the source each unit was expected from, so that a
//! window can be charged per source; so does ndnget's loss detection
//! ([`super::NdngetTimers`], one source).
//!
//! No fast re-request: in an ICN, out-of-order arrival is no sign of loss (S3 §I: "a packet
//! might arrive out of order simply because it has been sent by a node located further
//! away").

use std::collections::{BTreeSet, HashMap};

use core::time::Duration;

use crate::time::Time;

/// A unit's armed timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Armed {
    pub deadline: Time,
    /// When its request left.
    pub sent_at: Time,
    /// Index of the source it was expected from (the controller's own numbering).
    pub source: usize,
}

/// The timers of the outstanding units.
#[derive(Debug, Default)]
pub struct UnitTimers {
    by_unit: HashMap<u64, Armed>,
    by_deadline: BTreeSet<(Time, u64)>,
    /// Armed timers per source.
    counts: Vec<u64>,
}

impl UnitTimers {
    /// `unit`'s request left at `sent_at`, expected from `source`: lost unless it arrives
    /// within `timeout`. Replaces the unit's earlier timer, if any.
    pub fn arm(&mut self, unit: u64, sent_at: Time, timeout: Duration, source: usize) {
        self.disarm(unit);
        let a = Armed { deadline: sent_at + timeout, sent_at, source };
        self.by_unit.insert(unit, a);
        self.by_deadline.insert((a.deadline, unit));
        if self.counts.len() <= source {
            self.counts.resize(source + 1, 0);
        }
        self.counts[source] += 1;
    }

    /// Stop `unit`'s timer (it arrived); returns what it was.
    pub fn disarm(&mut self, unit: u64) -> Option<Armed> {
        let a = self.by_unit.remove(&unit)?;
        self.by_deadline.remove(&(a.deadline, unit));
        self.counts[a.source] -= 1;
        Some(a)
    }

    pub fn get(&self, unit: u64) -> Option<&Armed> {
        self.by_unit.get(&unit)
    }

    /// The earliest deadline.
    pub fn next_deadline(&self) -> Option<Time> {
        self.by_deadline.first().map(|&(t, _)| t)
    }

    /// A unit whose deadline is at or before `now`, taken out.
    pub fn pop_expired(&mut self, now: Time) -> Option<(u64, Armed)> {
        let &(t, unit) = self.by_deadline.first()?;
        if t > now {
            return None;
        }
        self.disarm(unit).map(|a| (unit, a))
    }

    /// Units armed and expected from `source`.
    pub fn outstanding(&self, source: usize) -> u64 {
        self.counts.get(source).copied().unwrap_or(0)
    }

    /// Units armed.
    pub fn len(&self) -> usize {
        self.by_unit.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_unit.is_empty()
    }

    pub fn clear(&mut self) {
        self.by_unit.clear();
        self.by_deadline.clear();
        self.counts.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn deadlines_counts_and_rearming() {
        let mut t = UnitTimers::default();
        t.arm(1, Time::from_millis(0), 50 * MS, 0);
        t.arm(2, Time::from_millis(5), 20 * MS, 1);
        t.arm(3, Time::from_millis(6), 20 * MS, 1);
        assert_eq!((t.outstanding(0), t.outstanding(1), t.outstanding(7)), (1, 2, 0));
        assert_eq!(t.next_deadline(), Some(Time::from_millis(25)));
        // Re-armed (requested again): the old deadline is gone.
        t.arm(2, Time::from_millis(30), 20 * MS, 0);
        assert_eq!((t.outstanding(0), t.outstanding(1)), (2, 1));
        assert_eq!(t.next_deadline(), Some(Time::from_millis(26)));
        assert_eq!(t.pop_expired(Time::from_millis(25)), None);
        assert_eq!(t.pop_expired(Time::from_millis(60)).map(|(u, _)| u), Some(3));
        assert_eq!(t.pop_expired(Time::from_millis(60)).map(|(u, _)| u), Some(1));
        assert_eq!(t.disarm(2).map(|a| a.sent_at), Some(Time::from_millis(30)));
        assert!(t.is_empty() && t.pop_expired(Time::MAX).is_none());
        assert_eq!(t.disarm(2), None);
    }
}
