//! Drain (draft §5.3.2): pace at half the estimated bandwidth until the queue Startup built
//! is gone — in-flight at most one BDP — or three rounds have passed (the estimate may be too
//! high when other flows share the bottleneck).

use super::state::State;
use super::{Bbr3, Sample};

/// BBR.DrainPacingGain: at or below 1 / DefaultCwndGain drains Startup's queue in a round (§2.5).
pub const PACING_GAIN: f64 = 0.5;
/// The window keeps BBR.DefaultCwndGain.
pub const CWND_GAIN: f64 = super::CWND_GAIN;
/// Rounds after which Drain ends whatever in-flight is.
pub(super) const MAX_ROUNDS: u64 = 3;

impl Bbr3 {
    /// `EnterDrain` (§5.3.2).
    pub(super) fn enter_drain(&mut self) {
        self.transition_to(State::Drain { start_round: self.rounds.count() });
    }

    /// `CheckDrainDone` (§5.3.2).
    pub(super) fn check_drain_done(&mut self, s: &Sample) {
        let State::Drain { start_round } = self.state else { return };
        if s.inflight <= self.inflight_with_gain(self.bw, 1.0) || self.rounds.count() > start_round + MAX_ROUNDS {
            self.enter_probe_bw(s.now);
        }
    }
}
