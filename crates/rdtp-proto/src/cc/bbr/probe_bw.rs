//! ProbeBW: cycle the pacing gain through {1.25, 0.75, 1, 1, 1, 1, 1, 1}, one phase per
//! min-RTT, starting at a random phase that is never the 0.75 one (Linux
//! `bbr_update_cycle_phase`, `bbr_reset_probe_bw_mode`; seed 000 §2.2, §4.1).

use rand_core::Rng;

use super::{Bbr, State};
use crate::cc::AckSample;
use crate::time::Time;

/// Phases in a gain cycle.
pub(crate) const CYCLE_LEN: usize = 8;
/// Gain of the draining phase.
pub(crate) const DRAIN_PHASE_GAIN: f64 = 0.75;
/// Window gain in ProbeBW.
pub const CWND_GAIN: f64 = 2.0;

/// ProbeBW's data: the gain cycle's phase and when it began.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Cycle {
    /// 0 = probing phase, 1 = draining phase, 2…7 = cruising.
    pub(super) idx: usize,
    pub(super) stamp: Time,
}

impl Cycle {
    fn advance(&mut self, now: Time) {
        self.idx = (self.idx + 1) % CYCLE_LEN;
        self.stamp = now;
    }
}

impl Bbr {
    /// Pacing gain of phase `idx` (phase 0 probes with the configured gain, 1.25 by default).
    pub(super) fn cycle_gain(&self, idx: usize) -> f64 {
        match idx {
            0 => self.cfg.probe_bw_gain,
            1 => DRAIN_PHASE_GAIN,
            _ => 1.0,
        }
    }

    /// Pacing and window gains in ProbeBW: the phase's, or 1 while a policer's rate is used.
    pub(super) fn probe_bw_gains(&self, cycle: &Cycle) -> (f64, f64) {
        (if self.lt.use_bw { 1.0 } else { self.cycle_gain(cycle.idx) }, CWND_GAIN)
    }

    /// Enter ProbeBW at a random phase other than the draining one.
    pub(super) fn enter_probe_bw(&mut self, now: Time) {
        // Linux: cycle_idx = CYCLE_LEN - 1 - rand(7), then advance → {0, 2, 3, …, 7}.
        let r = ((u64::from(self.rng.next_u32()) * 7) >> 32) as usize; // uniform in 0..7
        let mut cycle = Cycle { idx: CYCLE_LEN - 1 - r, stamp: now };
        cycle.advance(now);
        self.transition_to(State::ProbeBw(cycle));
    }

    pub(super) fn update_cycle_phase(&mut self, rs: &AckSample) {
        if let State::ProbeBw(cycle) = self.state
            && self.is_next_cycle_phase(&cycle, rs)
            && let State::ProbeBw(cycle) = &mut self.state
        {
            cycle.advance(rs.now);
        }
    }

    /// End a phase when it has lasted a min-RTT and/or reached its in-flight target.
    fn is_next_cycle_phase(&self, cycle: &Cycle, rs: &AckSample) -> bool {
        let full_length = self.min_rtt().is_some_and(|m| rs.now - cycle.stamp > m);
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
