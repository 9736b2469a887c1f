//! ProbeBW (S1 §III-C c): BBR's 8-phase gain cycle `[5/4, 3/4, 1, 1, 1, 1, 1, 1]` for the
//! pacing gain, each phase "normally … roughly one RTT" (one RTprop, the average RTT), and a
//! window gain of 1 throughout. Like BBR, a flow enters the cycle at a random phase other
//! than the 3/4 one, so flows that start together do not probe together.
//!
//! Phase ends, as BBR's (Linux `bbr_is_next_cycle_phase`), where S1's window allows:
//! * the 3/4 phase ends after an RTprop, or as soon as in-flight is down to the BDP (plus
//!   quanta): it only drains the queue the 5/4 phase built. This matters more here than in
//!   BBR: with BtlBw an *average* of delivery rates, a full-length 3/4 phase cancels the 5/4
//!   phase exactly (the gains average 1 over W ≈ one cycle), every rate below the bottleneck
//!   becomes a resting point, and the estimate drifts down with any noise (measured over
//!   802.11n before this rule: 24 of ≈ 50 Mbit/s, for good);
//! * the 5/4 phase lasts an RTprop. BBR also waits until in-flight reaches 5/4 BDP, which a
//!   window of BDP + quanta (S1's window gain 1) can never allow: the phase would never end;
//! * the others last an RTprop.

use rand_core::Rng;

use super::{BbrCd, State};
use crate::cc::AckSample;
use crate::time::Time;

/// Phases in a gain cycle.
pub(crate) const CYCLE_LEN: usize = 8;
/// Pacing gain per phase (S1 §III-C c).
pub(crate) const CYCLE_GAINS: [f64; CYCLE_LEN] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Window gain in ProbeBW (S1: "cwnd_gain is set to 1 and stays constant in this state").
pub(crate) const CWND_GAIN: f64 = 1.0;

/// ProbeBW's data: the phase and when it began.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Cycle {
    pub(super) idx: usize,
    pub(super) stamp: Time,
}

/// `(pacing_gain, cwnd_gain)` in phase `cycle.idx`.
pub(super) fn gains(cycle: &Cycle) -> (f64, f64) {
    (CYCLE_GAINS[cycle.idx], CWND_GAIN)
}

impl BbrCd {
    /// Enter ProbeBW at a random phase other than the draining (3/4) one.
    pub(super) fn enter_probe_bw(&mut self, now: Time) {
        let r = ((u64::from(self.rng.next_u32()) * (CYCLE_LEN as u64 - 1)) >> 32) as usize; // 0..7
        let idx = if r == 0 { 0 } else { r + 1 }; // {0, 2, 3, …, 7}
        self.transition_to(State::ProbeBw(Cycle { idx, stamp: now }));
    }

    /// Next phase once this one lasted an RTprop, or the 3/4 phase drained in-flight to the BDP.
    pub(super) fn update_cycle_phase(&mut self, rs: &AckSample) {
        let State::ProbeBw(cycle) = self.state else { return };
        let full_length = self.est.rtprop().is_some_and(|r| rs.now - cycle.stamp > r);
        let drained = CYCLE_GAINS[cycle.idx] < 1.0 && rs.prior_inflight <= self.inflight_target(1.0);
        if (full_length || drained)
            && let State::ProbeBw(cycle) = &mut self.state
        {
            cycle.idx = (cycle.idx + 1) % CYCLE_LEN;
            cycle.stamp = rs.now;
        }
    }
}
