//! ProbeBW_CRUISE (draft §5.3.3.2): send at the estimate (gain 1) with in-flight capped 15 %
//! below `inflight_hi`, adapting the short-term bounds to any loss, until it is time to probe
//! ([`super::probe_bw`]'s `IsTimeToProbeBW`).

use super::state::State;
use super::{Bbr3, CWND_GAIN};

/// Pacing and window gains.
pub(super) const GAINS: (f64, f64) = (1.0, CWND_GAIN);

impl Bbr3 {
    /// `StartProbeBW_CRUISE` (§5.3.3.9).
    pub(super) fn start_probe_bw_cruise(&mut self) {
        self.transition_to(State::ProbeBwCruise);
    }
}
