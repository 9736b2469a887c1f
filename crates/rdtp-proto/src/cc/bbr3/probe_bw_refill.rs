//! ProbeBW_REFILL (draft §5.3.3.3): forget the short-term bounds (losses caused by cross
//! traffic) and send at the estimate for one round to fill the pipe, so that the probe that
//! follows measures the path and not a half-empty pipe.

use super::probe_bw::AckPhase;
use super::state::State;
use super::{Bbr3, CWND_GAIN};

/// Pacing and window gains.
pub(super) const GAINS: (f64, f64) = (1.0, CWND_GAIN);

impl Bbr3 {
    /// `StartProbeBW_REFILL` (§5.3.3.9).
    pub(super) fn start_probe_bw_refill(&mut self) {
        self.reset_short_term_model();
        self.cycle.bw_probe_up_rounds = 0;
        self.cycle.bw_probe_up_acked = 0;
        self.cycle.prev_probe_precautionary = false;
        self.cycle.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.transition_to(State::ProbeBwRefill);
    }
}
