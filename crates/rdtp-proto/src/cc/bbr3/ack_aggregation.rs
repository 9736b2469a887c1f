//! `BBR.extra_acked` (draft §5.5.9), behind the `extra_acked` key (not the draft's default
//! here): how many units arrive in a burst beyond what the bandwidth estimate explains, added
//! to the window so that in-flight covers the gaps between bursts. On a WiFi hop the data
//! comes in A-MPDU aggregates (Liu et al. §3: aggregation is what carries 802.11n/ac's rate),
//! so the RTT a unit sees includes waiting for its aggregate and a window of
//! `2 × bw × min_rtt` leaves the link idle between them.
//!
//! As the draft: over an epoch that restarts whenever arrivals fall behind `bw`, the units
//! that arrived minus `bw × epoch` is one sample, at most the window; the estimate is the max
//! of the samples of the last [`WINDOW_ROUNDS`] rounds. Unlike the draft, samples are taken
//! and the estimate used only once the pipe was full: in Startup the bandwidth estimate
//! trails the arrival rate and the "excess" would add up to a whole window of in-flight.
//! This holds no other state and reads no clock but the samples' times.

use crate::cc::windowed_filter::{Max, WindowedFilter};
use crate::time::Time;

use super::{Bbr3, Sample};

/// BBR.extra_acked_filter_len once the pipe is full (the draft's 10 rounds).
pub const WINDOW_ROUNDS: u64 = 10;

/// The epoch and the windowed max of the excess (units, by round count).
#[derive(Clone, Debug)]
pub(super) struct ExtraAcked {
    filter: WindowedFilter<u64, u64, Max, 3>,
    interval_start: Option<Time>,
    delivered: u64,
}

impl Default for ExtraAcked {
    fn default() -> Self {
        ExtraAcked { filter: WindowedFilter::new(WINDOW_ROUNDS, 0, 0), interval_start: None, delivered: 0 }
    }
}

impl Bbr3 {
    /// `UpdateACKAggregation`, per arrival.
    pub(super) fn update_ack_aggregation(&mut self, s: &Sample) {
        if !self.cfg.extra_acked || !self.full_bw_reached {
            return;
        }
        let e = &mut self.extra_acked;
        let start = *e.interval_start.get_or_insert(s.now);
        let mut expected = self.bw * s.now.saturating_since(start).as_secs_f64();
        // Arrivals no faster than the estimate: start a new epoch here.
        if e.delivered as f64 <= expected {
            e.delivered = 0;
            e.interval_start = Some(s.now);
            expected = 0.0;
        }
        e.delivered += s.newly_acked;
        let extra = ((e.delivered as f64 - expected).max(0.0) as u64).min(self.cwnd);
        e.filter.update(self.rounds.count(), extra);
    }

    /// BBR.extra_acked, units (0 unless the key is on and the pipe was full).
    pub(super) fn extra_acked(&self) -> u64 {
        if self.cfg.extra_acked && self.full_bw_reached { self.extra_acked.filter.get() } else { 0 }
    }
}
