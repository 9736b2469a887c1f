//! ProbeBW_UP (draft §5.3.3.4–7): accelerate — pacing gain 1.25, window gain 2.25 — to look for
//! more bandwidth, growing `inflight_hi` (when it binds) by 1, 2, 4, … units per round; stop
//! at a bandwidth plateau, at loss above 2 % (`HandleInflightTooHigh`, in
//! [`super::model`]), or — after a probe that lost too much — as soon as in-flight reaches
//! `inflight_hi` (precautionary probing).

use super::probe_bw::AckPhase;
use super::state::State;
use super::{Bbr3, Sample};

/// Pacing and window gains (§5.6.1).
pub(super) const GAINS: (f64, f64) = (1.25, 2.25);

impl Bbr3 {
    /// `StartProbeBW_UP` (§5.3.3.9).
    pub(super) fn start_probe_bw_up(&mut self, s: &Sample) {
        self.cycle.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = s.delivery_rate;
        self.transition_to(State::ProbeBwUp);
        self.raise_inflight_hi_slope();
    }

    /// `IsTimeToGoDown` (§5.3.3.9).
    pub(super) fn is_time_to_go_down(&mut self, s: &Sample) -> bool {
        // Precautionary probing: deceleration (§5.3.3.6).
        if self.cycle.prev_probe_too_high && s.inflight >= self.inflight_hi {
            self.cycle.prev_probe_precautionary = true;
            return true;
        }
        if self.is_cwnd_limited() && self.cwnd >= self.inflight_hi {
            // inflight_hi, not the path, limits the bandwidth seen: keep probing.
            self.reset_full_bw();
            self.full_bw = s.delivery_rate;
        } else if self.full_bw_now {
            return true; // the path's bandwidth is used
        }
        false
    }

    /// `RaiseInflightLongtermSlope` (§5.3.3.9): grow `inflight_hi` twice as fast each round.
    pub(super) fn raise_inflight_hi_slope(&mut self) {
        let growth_this_round = 1u64 << self.cycle.bw_probe_up_rounds;
        self.cycle.bw_probe_up_rounds = (self.cycle.bw_probe_up_rounds + 1).min(30);
        self.cycle.probe_up_acked_per_inc = (self.cwnd / growth_this_round).max(1);
    }

    /// `ProbeInflightLongtermUpward` (§5.3.3.9): while the window is limited by `inflight_hi`,
    /// raise it by one unit per `probe_up_acked_per_inc` units delivered.
    pub(super) fn probe_inflight_hi_upward(&mut self, s: &Sample) {
        if !self.is_cwnd_limited() || self.cwnd < self.inflight_hi {
            return; // not fully using inflight_hi: do not grow it
        }
        let c = &mut self.cycle;
        c.bw_probe_up_acked += s.newly_acked;
        if c.bw_probe_up_acked >= c.probe_up_acked_per_inc {
            let delta = c.bw_probe_up_acked / c.probe_up_acked_per_inc;
            c.bw_probe_up_acked -= delta * c.probe_up_acked_per_inc;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_hi_slope();
        }
    }
}
