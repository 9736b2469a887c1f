//! BBR-CD's state machine (S1 §III-C, Fig. 3): the state with the data only that state has,
//! the legal transitions, and the one function that changes state.
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

/// The state without its data, for callers and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// The state, carrying what only it uses.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum State {
    Startup,
    Drain,
    /// The gain cycle's phase and when it began.
    ProbeBw(Cycle),
    /// When ProbeRTT began and the RTT samples collected since.
    ProbeRtt(ProbeRtt),
}

impl State {
    pub(super) fn mode(&self) -> Mode {
        match self {
            State::Startup => Mode::Startup,
            State::Drain => Mode::Drain,
            State::ProbeBw(_) => Mode::ProbeBw,
            State::ProbeRtt(_) => Mode::ProbeRtt,
        }
    }

    /// Whether S1 Fig. 3 goes from `self` to `next`.
    fn may_become(&self, next: &State) -> bool {
        use Mode::*;
        matches!(
            (self.mode(), next.mode()),
            (Startup, Drain) | (Drain, ProbeBw) | (Startup | Drain | ProbeBw, ProbeRtt) | (ProbeRtt, Startup | ProbeBw)
        )
    }
}

impl BbrCd {
    /// Change state.
    pub(super) fn transition_to(&mut self, next: State) {
        debug_assert!(
            self.state.may_become(&next),
            "illegal BBR-CD transition {:?} → {:?}",
            self.state.mode(),
            next.mode()
        );
        self.state = next;
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
        let all = [State::Startup, State::Drain, State::ProbeBw(Cycle::default()), State::ProbeRtt(Default::default())];
        let legal: Vec<(Mode, Mode)> =
            all.iter().flat_map(|a| all.iter().filter(|b| a.may_become(b)).map(|b| (a.mode(), b.mode()))).collect();
        use Mode::{Drain, ProbeBw, ProbeRtt, Startup};
        assert_eq!(
            legal,
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
}
