//! ProbeBW: cycle the pacing gain through {1.25, 0.75, 1, 1, 1, 1, 1, 1}, one phase per
//! min-RTT, starting at a random phase that is never the 0.75 one (Linux
//! `bbr_update_cycle_phase`, `bbr_reset_probe_bw_mode`; seed 000 §2.2, §4.1).

use rand_core::Rng;

use super::{Bbr, Mode};
use crate::cc::AckSample;
use crate::time::Time;

/// Phases in a gain cycle.
pub(crate) const CYCLE_LEN: usize = 8;
/// Gain of the draining phase.
pub(crate) const DRAIN_PHASE_GAIN: f64 = 0.75;

impl Bbr {
    /// Pacing gain of phase `idx` (phase 0 probes with the configured gain, 1.25 by default).
    pub(super) fn cycle_gain(&self, idx: usize) -> f64 {
        match idx {
            0 => self.cfg.probe_bw_gain,
            1 => DRAIN_PHASE_GAIN,
            _ => 1.0,
        }
    }

    /// Enter ProbeBW at a random phase other than the draining one.
    pub(super) fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        // Linux: cycle_idx = CYCLE_LEN - 1 - rand(7), then advance → {0, 2, 3, …, 7}.
        let r = ((u64::from(self.rng.next_u32()) * 7) >> 32) as usize; // uniform in 0..7
        self.cycle_idx = CYCLE_LEN - 1 - r;
        self.advance_cycle_phase(now);
    }

    fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = now;
    }

    pub(super) fn update_cycle_phase(&mut self, rs: &AckSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase(rs.now);
        }
    }

    /// End a phase when it has lasted a min-RTT and/or reached its in-flight target.
    fn is_next_cycle_phase(&self, rs: &AckSample) -> bool {
        let full_length = self.min_rtt.is_some_and(|m| rs.now - self.cycle_stamp > m);
        let gain = self.pacing_gain;
        if gain == 1.0 {
            return full_length;
        }
        let bw = self.max_bw();
        if gain > 1.0 {
            // Probe until in-flight reaches gain·BDP (counting the request about to go
            // out), but do not persist if that loses units: the buffer may be too small.
            let inflight = rs.prior_inflight + u64::from(self.base_aggregation());
            return full_length && (rs.losses > 0 || inflight >= self.inflight_target(bw, gain));
        }
        // Drain phase: stop early once the queue we added is gone.
        full_length || rs.prior_inflight <= self.inflight_target(bw, 1.0)
    }
}
