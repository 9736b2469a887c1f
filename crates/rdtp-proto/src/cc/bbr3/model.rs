//! The network path model (draft §5.5): packet-timed rounds, the bandwidth filter, the
//! delivery signals of the latest round, and how loss moves the short-term bounds
//! (`bw_lo`, `inflight_lo`) and tells whether in-flight was too high for `inflight_hi`.

use super::congestion::QUEUE_CUT;
use super::{BETA, Bbr3, Sample};

/// BBR.max_bw_filter (§5.5.3, §5.5.6): the max delivery rate over two ProbeBW cycles, the
/// current and the previous one. The draft notes it needs only two slots, one per cycle;
/// advancing the cycle drops the older one (Linux v3 keeps `bw_hi[2]` the same way).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct MaxBwFilter {
    /// Max of the previous cycle and of the current one, units/s.
    slots: [f64; 2],
}

impl MaxBwFilter {
    pub(super) fn get(&self) -> f64 {
        self.slots[0].max(self.slots[1])
    }
    pub(super) fn update(&mut self, bw: f64) {
        self.slots[1] = self.slots[1].max(bw);
    }
    /// `AdvanceMaxBwFilter`: BBR.cycle_count++.
    fn advance(&mut self) {
        self.slots = [self.slots[1], 0.0];
    }
}

impl Bbr3 {
    /// `StartRound` (§5.5.1): the round ends when a unit requested after now arrives.
    pub(super) fn start_round(&mut self) {
        self.rounds.restart(self.delivered);
    }

    /// `UpdateRound` (§5.5.1).
    fn update_round(&mut self, s: &Sample) {
        if self.rounds.on_sample(s.prior_delivered, self.delivered) {
            self.cycle.rounds_since_probe_up += 1;
        }
    }

    /// `UpdateMaxBw` (§5.5.5): application-limited samples count only if they raise it.
    fn update_max_bw(&mut self, s: &Sample) {
        self.update_round(s);
        if s.delivery_rate > 0.0 && (s.delivery_rate >= self.max_bw.get() || !s.is_app_limited) {
            self.max_bw.update(s.delivery_rate);
        }
    }

    /// `AdvanceMaxBwFilter` (§5.5.6).
    pub(super) fn advance_max_bw_filter(&mut self) {
        self.max_bw.advance();
    }

    /// `UpdateLatestDeliverySignals` (§5.5.10.3), near the start of an arrival.
    pub(super) fn update_latest_delivery_signals(&mut self, s: &Sample) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(s.delivery_rate);
        self.inflight_latest = self.inflight_latest.max(s.delivered);
        if s.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
    }

    /// `AdvanceLatestDeliverySignals` (§5.5.10.3), near the end of an arrival.
    pub(super) fn advance_latest_delivery_signals(&mut self, s: &Sample) {
        if self.loss_round_start {
            self.bw_latest = s.delivery_rate;
            self.inflight_latest = s.delivered;
        }
    }

    /// `ResetCongestionSignals` (§5.5.10.3).
    pub(super) fn reset_congestion_signals(&mut self) {
        self.is_loss_in_round = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0;
    }

    /// `UpdateCongestionSignals` (§5.5.10.3): once per round, adapt the short-term bounds.
    pub(super) fn update_congestion_signals(&mut self, s: &Sample) {
        self.update_max_bw(s);
        self.note_burst_sample(s);
        self.note_random_loss_sample(s);
        if !self.loss_round_start {
            return;
        }
        let congested = self.end_loss_round();
        self.adapt_lower_bounds_from_congestion(congested);
        self.is_loss_in_round = false;
    }

    /// `AdaptLowerBoundsFromCongestion`: not while probing, where loss goes to `inflight_hi`.
    fn adapt_lower_bounds_from_congestion(&mut self, congested: bool) {
        if self.mode().is_probing_bw() || !congested {
            self.queue_round = false;
            return;
        }
        // InitLowerBounds: the first congestion episode of this cycle.
        if self.bw_lo == f64::INFINITY {
            self.bw_lo = self.max_bw.get();
        }
        if self.inflight_lo == u64::MAX {
            self.inflight_lo = self.cwnd;
        }
        // LossLowerBounds: follow the latest delivery, down by at most β per round.
        self.bw_lo = self.bw_latest.max(BETA * self.bw_lo);
        self.inflight_lo = self.inflight_latest.max((BETA * self.inflight_lo as f64) as u64);
        if std::mem::take(&mut self.queue_round) {
            // A standing queue: go below what the path delivered, to drain it.
            self.bw_lo = QUEUE_CUT * self.bw_lo.min(self.bw_latest);
            self.inflight_lo = (QUEUE_CUT * self.inflight_lo.min(self.inflight_latest) as f64) as u64;
        }
    }

    /// `ResetShortTermModel` (§5.5.10.3).
    pub(super) fn reset_short_term_model(&mut self) {
        self.bw_lo = f64::INFINITY;
        self.inflight_lo = u64::MAX;
    }

    /// `BoundBWForModel` (§5.5.10.3): BBR.bw = min(max_bw, bw_lo).
    pub(super) fn bound_bw_for_model(&mut self) {
        self.bw = self.max_bw.get().min(self.bw_lo);
        if self.cfg.random_loss {
            // Delivery rates count only the units that survived; the path carried the lost
            // ones too (congestion.rs).
            self.bw /= 1.0 - self.random_loss.base;
        }
    }

    /// `NoteLoss` (§5.5.10.2): an arrival declared units lost.
    pub(super) fn note_loss(&mut self) {
        if !self.is_loss_in_round {
            self.loss_round_delivered = self.delivered;
            self.save_state_upon_loss();
        }
        self.is_loss_in_round = true;
        self.loss_events_in_round = self.loss_events_in_round.saturating_add(1);
    }

    /// `SaveStateUponLoss` (§5.5.11.1); the undo state itself is not kept (no spurious-loss
    /// detection), so what remains is `SaveCwnd`.
    pub(super) fn save_state_upon_loss(&mut self) {
        self.save_cwnd();
    }

    /// `IsInflightTooHigh` (§5.5.10.2): the units lost while the arriving unit was out exceed
    /// 2 % of what was in flight when it was requested. The receiver sees every unit (it has
    /// "selective acknowledgments"), so a single loss is not enough.
    pub(super) fn is_inflight_too_high(&self, s: &Sample) -> bool {
        s.lost as f64 > self.tolerated_loss(s.tx_in_flight)
    }

    /// `HandleInflightTooHigh` (§5.5.10.2). Returns whether it left ProbeBW_UP.
    pub(super) fn handle_inflight_too_high(&mut self, s: &Sample) -> bool {
        self.cycle.prev_probe_too_high = true;
        self.cycle.is_bw_probe_sample = false; // only react once per probe
        if !s.is_app_limited {
            self.inflight_hi = s.tx_in_flight.max((self.target_inflight() as f64 * BETA) as u64);
        }
        if self.mode() == super::Mode::ProbeBwUp {
            self.start_probe_bw_down(s.now);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_bw_filter_keeps_two_cycles() {
        let mut f = MaxBwFilter::default();
        f.update(10.0);
        f.update(5.0);
        assert_eq!(f.get(), 10.0);
        f.advance();
        f.update(7.0);
        assert_eq!(f.get(), 10.0, "the previous cycle's max still counts");
        f.advance();
        assert_eq!(f.get(), 7.0, "two cycles later it is gone");
        f.advance();
        assert_eq!(f.get(), 0.0);
    }
}
