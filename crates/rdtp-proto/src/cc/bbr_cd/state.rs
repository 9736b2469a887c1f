//! BBR-CD's state machine (S1 §III-C, Fig. 3): BBR's four states (`Mode` and the state
//! enum are `bbr`'s, `cc/bbr/state.rs`) with BBR-CD's own ProbeBW cycle and ProbeRTT data,
//! S1's legal transitions, and the one function that changes state.
//!
//! ```text
//!            BtlBw plateau            in-flight ≤ BDP
//!  Startup ─────────────────▶ Drain ─────────────────▶ ProbeBW (8-phase gain cycle)
//!     ▲  │                      │                        │  ▲
//!     │  └──────────────────────┴── < 4 RTT samples in W ┘  │
//!     │                             ▼                       │
//!     └──── pipe not filled ─── ProbeRTT (k units/s) ── pipe filled
//!                             (left once 4 samples came)
//! ```

use super::probe_bw::Cycle;
use super::probe_rtt::ProbeRtt;
use super::{BbrCd, drain, probe_bw, probe_rtt, startup};
use crate::cc::bbr::Mode;

/// The state, carrying what only it uses: ProbeBW the gain cycle's phase and when it began,
/// ProbeRTT when it began and the RTT samples collected since.
pub(super) type State = crate::cc::bbr::State<Cycle, ProbeRtt>;

/// Whether S1 Fig. 3 goes from `from` to `to`.
fn legal(from: Mode, to: Mode) -> bool {
    use Mode::*;
    matches!(
        (from, to),
        (Startup, Drain) | (Drain, ProbeBw) | (Startup | Drain | ProbeBw, ProbeRtt) | (ProbeRtt, Startup | ProbeBw)
    )
}

impl BbrCd {
    /// Change state.
    pub(super) fn transition_to(&mut self, next: State) {
        self.state.change_to(next, legal, "BBR-CD");
    }

    /// Pacing and window gains of the current state.
    pub(super) fn gains(&self) -> (f64, f64) {
        match &self.state {
            State::Startup => startup::gains(self.cfg.high_gain),
            State::Drain => drain::gains(self.cfg.high_gain),
            State::ProbeBw(cycle) => probe_bw::gains(cycle),
            State::ProbeRtt(_) => probe_rtt::GAINS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_transitions_are_fig3s() {
        use Mode::{Drain, ProbeBw, ProbeRtt, Startup};
        assert_eq!(
            Mode::transitions(legal),
            [
                (Startup, Drain),
                (Startup, ProbeRtt),
                (Drain, ProbeBw),
                (Drain, ProbeRtt),
                (ProbeBw, ProbeRtt),
                (ProbeRtt, Startup),
                (ProbeRtt, ProbeBw)
            ]
        );
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "illegal BBR-CD transition ProbeBw → Drain")]
    fn illegal_transition_is_caught() {
        let mut b = BbrCd::new(
            super::super::BbrCdConfig::default(),
            crate::cc::CcParams { unit: 1000, max_aggregation: 64, seed: 0 },
        );
        b.state = State::ProbeBw(Cycle::default());
        b.transition_to(State::Drain);
    }
}
