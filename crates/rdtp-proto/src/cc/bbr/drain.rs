//! Drain: pace at 1/high_gain until the queue Startup built is gone (Linux `bbr_check_drain`).

use super::startup::HIGH_GAIN;
use super::{Bbr, State};
use crate::cc::AckSample;

/// Drain pacing gain: empties Startup's queue in about one round.
pub const DRAIN_GAIN: f64 = 1.0 / HIGH_GAIN;
/// Pacing and window gains in Drain (the window keeps Startup's gain).
pub(super) const GAINS: (f64, f64) = (DRAIN_GAIN, HIGH_GAIN);

impl Bbr {
    pub(super) fn check_drain(&mut self, rs: &AckSample) {
        if self.state == State::Startup && self.full_pipe.is_full() {
            self.transition_to(State::Drain);
        }
        // Fall through: in-flight may already be small enough.
        if self.state == State::Drain && rs.inflight <= self.inflight_target(self.max_bw(), 1.0) {
            self.enter_probe_bw(rs.now);
        }
    }
}
