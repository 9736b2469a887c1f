//! Drain (S1 §III-C b): pacing gain `1/highGain`, window gain `highGain` (the window is kept),
//! until the data in flight matches the estimated BDP.

use super::{BbrCd, State};
use crate::cc::AckSample;

/// `(pacing_gain, cwnd_gain)` in Drain.
pub(super) fn gains(high_gain: f64) -> (f64, f64) {
    (1.0 / high_gain, high_gain)
}

impl BbrCd {
    /// Startup filled the pipe: drain; once in-flight ≤ BDP, ProbeBW.
    pub(super) fn check_drain(&mut self, rs: &AckSample) {
        if self.state == State::Startup && self.full_pipe.is_full() {
            self.transition_to(State::Drain);
        }
        if self.state == State::Drain && (rs.inflight as f64) <= self.est.bdp().unwrap_or(0.0).ceil() {
            self.enter_probe_bw(rs.now);
        }
    }
}
