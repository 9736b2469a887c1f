//! BBRv3's state machine (draft §5.1): the states, each with the data only it has, the legal
//! transitions, and the one function that changes state (which also sets the state's gains,
//! §5.6.1).
//!
//! ```text
//!          |
//!          V
//! +---> Startup  ------------+      Startup → Drain: full pipe (plateau or high loss)
//! |        |                 |      Drain → DOWN: in-flight ≤ BDP, or 3 rounds
//! |        V                 |      DOWN → CRUISE: in-flight ≤ BDP and ≤ inflight_hi − headroom
//! |     Drain  --------------+      DOWN/CRUISE → REFILL: time to probe (2–3 s, or Reno
//! |        |                 |        rounds), or a precautionary probe went well
//! |        V                 |      REFILL → UP: one round
//! +---> ProbeBW_DOWN  -------+      UP → DOWN: bandwidth plateau, loss > 2 %, or a
//! | ^      |                 |        precautionary probe reached inflight_hi
//! | |      V                 |      any → ProbeRTT: no lower RTT for 5 s
//! | |   ProbeBW_CRUISE ------+      ProbeRTT → DOWN (→ CRUISE at once) if the pipe was
//! | |      |                 |        ever full, else → Startup
//! | |      V                 |
//! | |   ProbeBW_REFILL  -----+
//! | |      |                 |
//! | |      V                 |
//! | |   ProbeBW_UP  ---------+
//! | |      |                 |
//! | +------+                 |
//! |                          |
//! +---- ProbeRTT <-----------+
//! ```

use core::time::Duration;

use super::{Bbr3, drain, probe_bw_cruise, probe_bw_down, probe_bw_refill, probe_bw_up, probe_rtt, startup};
use crate::time::Time;

/// The state without its data, for callers and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBwDown,
    ProbeBwCruise,
    ProbeBwRefill,
    ProbeBwUp,
    ProbeRtt,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBwDown => "probe_bw_down",
            Mode::ProbeBwCruise => "probe_bw_cruise",
            Mode::ProbeBwRefill => "probe_bw_refill",
            Mode::ProbeBwUp => "probe_bw_up",
            Mode::ProbeRtt => "probe_rtt",
        }
    }

    /// One of the four ProbeBW states (the draft's `IsInAProbeBWState`).
    pub fn is_probe_bw(self) -> bool {
        matches!(self, Mode::ProbeBwDown | Mode::ProbeBwCruise | Mode::ProbeBwRefill | Mode::ProbeBwUp)
    }

    /// Accelerating to probe for bandwidth (the draft's `IsProbingBW`).
    pub fn is_probing_bw(self) -> bool {
        matches!(self, Mode::Startup | Mode::ProbeBwRefill | Mode::ProbeBwUp)
    }
}

/// The state, carrying what only it uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum State {
    Startup,
    /// BBR.drain_start_round.
    Drain {
        start_round: u64,
    },
    ProbeBwDown,
    ProbeBwCruise,
    ProbeBwRefill,
    ProbeBwUp,
    ProbeRtt(ProbeRtt),
}

/// ProbeRTT's data (BBR.probe_rtt_done_stamp, BBR.probe_rtt_round_done).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct ProbeRtt {
    /// When ProbeRTTDuration is up; set once in-flight first falls to ProbeRTT's window.
    pub(super) done_stamp: Option<Time>,
    /// A round has passed since then.
    pub(super) round_done: bool,
}

impl State {
    pub(super) fn mode(&self) -> Mode {
        match self {
            State::Startup => Mode::Startup,
            State::Drain { .. } => Mode::Drain,
            State::ProbeBwDown => Mode::ProbeBwDown,
            State::ProbeBwCruise => Mode::ProbeBwCruise,
            State::ProbeBwRefill => Mode::ProbeBwRefill,
            State::ProbeBwUp => Mode::ProbeBwUp,
            State::ProbeRtt(_) => Mode::ProbeRtt,
        }
    }

    /// Pacing and window gains of the state (§5.6.1's table).
    pub(super) fn gains(&self) -> (f64, f64) {
        match self {
            State::Startup => (startup::PACING_GAIN, startup::CWND_GAIN),
            State::Drain { .. } => (drain::PACING_GAIN, drain::CWND_GAIN),
            State::ProbeBwDown => probe_bw_down::GAINS,
            State::ProbeBwCruise => probe_bw_cruise::GAINS,
            State::ProbeBwRefill => probe_bw_refill::GAINS,
            State::ProbeBwUp => probe_bw_up::GAINS,
            State::ProbeRtt(_) => probe_rtt::GAINS,
        }
    }

    /// Whether the draft's diagram (§5.1.1) has an edge from `self` to `next`.
    fn may_become(&self, next: &State) -> bool {
        use Mode::*;
        matches!(
            (self.mode(), next.mode()),
            (Startup, Drain)
                | (Drain, ProbeBwDown)
                | (ProbeBwDown, ProbeBwCruise)
                | (ProbeBwDown | ProbeBwCruise, ProbeBwRefill)
                | (ProbeBwRefill, ProbeBwUp)
                | (ProbeBwUp, ProbeBwDown)
                | (Startup | Drain | ProbeBwDown | ProbeBwCruise | ProbeBwRefill | ProbeBwUp, ProbeRtt)
                | (ProbeRtt, Startup | ProbeBwDown)
        )
    }
}

impl Bbr3 {
    /// Change state and take its gains. Entry actions stay with the callers (the draft's
    /// `Start…`/`Enter…` functions, one per state file).
    pub(super) fn transition_to(&mut self, next: State) {
        debug_assert!(
            self.state.may_become(&next),
            "illegal BBRv3 transition {:?} → {:?}",
            self.state.mode(),
            next.mode()
        );
        self.state = next;
        (self.pacing_gain, self.cwnd_gain) = next.gains();
        if matches!(next, State::ProbeBwDown | State::ProbeBwCruise | State::ProbeBwRefill) {
            self.cwnd_gain = self.cfg.cwnd_gain;
        }
    }

    /// `HasElapsedInPhase(interval)`: time since the ProbeBW cycle began.
    pub(super) fn has_elapsed_in_phase(&self, now: Time, interval: Duration) -> bool {
        now > self.cycle.stamp + interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legal_transitions_are_the_drafts() {
        let all = [
            State::Startup,
            State::Drain { start_round: 0 },
            State::ProbeBwDown,
            State::ProbeBwCruise,
            State::ProbeBwRefill,
            State::ProbeBwUp,
            State::ProbeRtt(super::ProbeRtt::default()),
        ];
        let legal: Vec<(Mode, Mode)> =
            all.iter().flat_map(|a| all.iter().filter(|b| a.may_become(b)).map(|b| (a.mode(), b.mode()))).collect();
        use Mode::*;
        assert_eq!(
            legal,
            [
                (Startup, Drain),
                (Startup, ProbeRtt),
                (Drain, ProbeBwDown),
                (Drain, ProbeRtt),
                (ProbeBwDown, ProbeBwCruise),
                (ProbeBwDown, ProbeBwRefill),
                (ProbeBwDown, ProbeRtt),
                (ProbeBwCruise, ProbeBwRefill),
                (ProbeBwCruise, ProbeRtt),
                (ProbeBwRefill, ProbeBwUp),
                (ProbeBwRefill, ProbeRtt),
                (ProbeBwUp, ProbeBwDown),
                (ProbeBwUp, ProbeRtt),
                (ProbeRtt, Startup),
                (ProbeRtt, ProbeBwDown),
            ]
        );
        // §5.6.1: the gains of every state.
        let gains: Vec<(f64, f64)> = all.iter().map(State::gains).collect();
        let startup = 4.0 * core::f64::consts::LN_2;
        assert_eq!(gains, [(startup, 2.0), (0.5, 2.0), (0.9, 2.0), (1.0, 2.0), (1.0, 2.0), (1.25, 2.25), (1.0, 0.5)]);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "illegal BBRv3 transition ProbeBwCruise → ProbeBwUp")]
    fn illegal_transition_is_caught() {
        let mut b = Bbr3::new(
            super::super::Bbr3Config::default(),
            crate::cc::CcParams { unit: 1000, max_aggregation: 64, seed: 0 },
        );
        b.state = State::ProbeBwCruise;
        b.transition_to(State::ProbeBwUp);
    }
}
