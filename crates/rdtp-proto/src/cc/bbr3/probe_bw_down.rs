//! ProbeBW_DOWN (draft §5.3.3.1): decelerate — pace at 90 % of the estimate — until the queue
//! a probe built is gone (in-flight ≤ BDP) and in-flight has left headroom below
//! `inflight_hi`; then cruise. Entering it starts a new cycle: the wall-clock and round
//! counts until the next probe are drawn here.

use super::probe_bw::AckPhase;
use super::state::State;
use super::{Bbr3, CWND_GAIN};
use crate::time::Time;

/// Pacing and window gains: 0.9, the least that still lets flows converge to fair shares
/// against UP's 1.25 (§5.3.3.1).
pub(super) const GAINS: (f64, f64) = (0.9, CWND_GAIN);

impl Bbr3 {
    /// `StartProbeBW_DOWN` (§5.3.3.9).
    pub(super) fn start_probe_bw_down(&mut self, now: Time) {
        self.reset_congestion_signals();
        self.cycle.probe_up_acked_per_inc = u64::MAX; // not growing inflight_hi
        self.pick_probe_wait();
        self.cycle.stamp = now;
        self.cycle.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.cycle.down_round = self.rounds.count();
        self.transition_to(State::ProbeBwDown);
    }

    /// `IsTimeToCruise` (§5.3.3.9): headroom below `inflight_hi`, and no queue (in-flight
    /// within the BDP with its quantization budget).
    pub(super) fn is_time_to_cruise(&self, inflight: u64) -> bool {
        inflight <= self.inflight_with_headroom() && inflight <= self.inflight_with_gain(self.max_bw(), 1.0)
    }
}
