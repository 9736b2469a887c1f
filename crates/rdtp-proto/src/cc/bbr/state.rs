//! BBR's state machine (Linux `bbr->mode`; seed 000 §3.5): the state with the data only that
//! state has, the legal transitions, and the one function that changes state.
//!
//! ```text
//!            full pipe            queue drained
//!  Startup ────────────▶ Drain ────────────────▶ ProbeBW ◀─┐ policed rate used for
//!     ▲  │                 │                      │  │  └───┘ 48 rounds: new cycle
//!     │  └─────────────────┴──── min RTT 10 s old ┘  │
//!     │                          ▼                   │
//!     └──── pipe not full ── ProbeRTT ── pipe full ──┘ (after ≥ 200 ms and a round)
//! ```
//!
//! BBR-CD (seed 001, `cc/bbr_cd`) has the same four states (S1 Fig. 3) with its own ProbeBW
//! cycle and ProbeRTT data and other transitions: it uses [`Mode`] and [`State`] from here
//! with its own types and its own table of legal transitions.

use super::probe_bw::Cycle;
use super::probe_rtt::ProbeRtt;
use super::{Bbr, drain, probe_rtt, startup};

/// The state without its data, for callers and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl Mode {
    /// Every mode, in the order above.
    pub const ALL: [Mode; 4] = [Mode::Startup, Mode::Drain, Mode::ProbeBw, Mode::ProbeRtt];

    /// Every (from, to) pair `legal` allows, in [`Mode::ALL`]'s order (for tests of the
    /// transition tables).
    #[cfg(test)]
    pub(crate) fn transitions(legal: fn(Mode, Mode) -> bool) -> Vec<(Mode, Mode)> {
        let all = Mode::ALL;
        all.iter().flat_map(|&a| all.iter().filter(move |&&b| legal(a, b)).map(move |&b| (a, b))).collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// The state, carrying what only it uses: ProbeBW its gain cycle's phase and when it began
/// (`C`), ProbeRTT its own data (`P`). `bbr`'s is [`BbrState`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum State<C, P> {
    Startup,
    Drain,
    ProbeBw(C),
    ProbeRtt(P),
}

impl<C, P> State<C, P> {
    pub(crate) fn mode(&self) -> Mode {
        match self {
            State::Startup => Mode::Startup,
            State::Drain => Mode::Drain,
            State::ProbeBw(_) => Mode::ProbeBw,
            State::ProbeRtt(_) => Mode::ProbeRtt,
        }
    }

    /// Become `next`. In debug builds, panic unless `legal` (the controller's diagram)
    /// allows the transition; `family` names the controller in the message. Entry actions
    /// stay with the caller.
    pub(crate) fn change_to(&mut self, next: Self, legal: fn(Mode, Mode) -> bool, family: &str) {
        debug_assert!(
            legal(self.mode(), next.mode()),
            "illegal {family} transition {:?} → {:?}",
            self.mode(),
            next.mode()
        );
        *self = next;
    }
}

/// `bbr`'s state: ProbeRTT knows when it may end.
pub(super) type BbrState = State<Cycle, ProbeRtt>;

/// Whether Linux `tcp_bbr.c` ever goes from `from` to `to`.
fn legal(from: Mode, to: Mode) -> bool {
    use Mode::*;
    matches!(
        (from, to),
        // bbr_check_drain: Startup filled the pipe; then its queue is gone.
        (Startup, Drain) | (Drain, ProbeBw)
        // bbr_lt_bw_sampling: after 48 rounds at the policed rate, a fresh gain cycle.
        | (ProbeBw, ProbeBw)
        // bbr_update_min_rtt: the min-RTT estimate expired (from any other state).
        | (Startup | Drain | ProbeBw, ProbeRtt)
        // bbr_check_probe_rtt_done → bbr_reset_mode.
        | (ProbeRtt, Startup | ProbeBw)
        // Informed start (seed 002, not Linux): a known rate skips Startup and Drain.
        | (Startup, ProbeBw)
    )
}

impl Bbr {
    /// Change state. Entry actions stay with the caller (Linux order: e.g. ProbeRTT's
    /// `bbr_save_cwnd` runs after the mode changed).
    pub(super) fn transition_to(&mut self, next: BbrState) {
        self.state.change_to(next, legal, "BBR");
    }

    /// Pacing and window gains of the current state (Linux `bbr_update_gains`).
    pub(super) fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match &self.state {
            State::Startup => startup::GAINS,
            State::Drain => drain::GAINS,
            State::ProbeBw(cycle) => self.probe_bw_gains(cycle),
            State::ProbeRtt(_) => probe_rtt::GAINS,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_transitions_are_linuxs_and_informed_start() {
        use Mode::{Drain, ProbeBw, ProbeRtt, Startup};
        assert_eq!(
            Mode::transitions(legal),
            [
                (Startup, Drain),
                (Startup, ProbeBw),
                (Startup, ProbeRtt),
                (Drain, ProbeBw),
                (Drain, ProbeRtt),
                (ProbeBw, ProbeBw),
                (ProbeBw, ProbeRtt),
                (ProbeRtt, Startup),
                (ProbeRtt, ProbeBw)
            ]
        );
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "illegal BBR transition ProbeBw → Drain")]
    fn illegal_transition_is_caught() {
        let mut b = Bbr::new(
            super::super::BbrConfig::default(),
            crate::cc::CcParams { unit: 1000, max_aggregation: 64, seed: 0 },
        );
        b.state = State::ProbeBw(Cycle::default());
        b.transition_to(State::Drain);
    }
}
