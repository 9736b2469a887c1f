//! The ProbeBW cycle (draft §5.3.3.8–9) that the four ProbeBW states share — DOWN
//! ([`super::probe_bw_down`]), CRUISE ([`super::probe_bw_cruise`]), REFILL
//! ([`super::probe_bw_refill`]), UP ([`super::probe_bw_up`]): when to probe again, the
//! feedback phases of a probe, and how probing moves the long-term model (`inflight_hi`,
//! the bandwidth filter).

use core::time::Duration;

use rand_core::Rng;

use super::{Bbr3, HEADROOM, MIN_PIPE_CWND, Mode, Sample};
use crate::time::Time;

/// T_bbr: probe again after 2 s plus a random fraction of a second (§5.3.3.8.2).
pub(super) const PROBE_WAIT_BASE: Duration = Duration::from_secs(2);
/// T_reno's bound: at most this many rounds between probes (§5.3.3.8.2).
const RENO_ROUNDS_MAX: u64 = 63;

/// BBR.ack_phase (§2.14): what the arriving units say about the latest probe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum AckPhase {
    /// Not probing; no probe feedback.
    #[default]
    Init,
    /// Sending at the estimate to fill the pipe (REFILL).
    Refilling,
    /// In-flight rising to probe (UP's first round).
    ProbeStarting,
    /// Feedback from the probe arrives.
    ProbeFeedback,
    /// The probe stopped; its feedback still arrives.
    ProbeStopping,
}

/// The state of the ProbeBW cycle (§2.14), kept across its four states.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Cycle {
    /// BBR.cycle_stamp: when the cycle (its DOWN phase) began, or the current UP phase.
    pub(super) stamp: Time,
    /// BBR.bw_probe_wait: how long to wait before probing again.
    pub(super) bw_probe_wait: Duration,
    /// BBR.rounds_since_probe_up.
    pub(super) rounds_since_probe_up: u64,
    /// BBR.bw_probe_up_rounds: rounds `inflight_hi` has grown in this UP phase.
    pub(super) bw_probe_up_rounds: u32,
    /// BBR.bw_probe_up_acked: units delivered since `inflight_hi` last grew.
    pub(super) bw_probe_up_acked: u64,
    /// BBR.probe_up_acked_per_inc: units to deliver per unit of `inflight_hi` growth.
    pub(super) probe_up_acked_per_inc: u64,
    pub(super) ack_phase: AckPhase,
    /// BBR.is_bw_probe_sample: samples come from a probe (REFILL/UP sends).
    pub(super) is_bw_probe_sample: bool,
    /// BBR.prev_probe_too_high: the latest probe lost more than 2 %.
    pub(super) prev_probe_too_high: bool,
    /// BBR.prev_probe_precautionary: the latest UP stopped at `inflight_hi` as a precaution.
    pub(super) prev_probe_precautionary: bool,
    /// The round count when DOWN began (not the draft's: `random_loss`'s queue signal).
    pub(super) down_round: u64,
}

impl Default for Cycle {
    fn default() -> Self {
        Cycle {
            stamp: Time::ZERO,
            bw_probe_wait: Duration::ZERO,
            rounds_since_probe_up: 0,
            bw_probe_up_rounds: 0,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: u64::MAX,
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            down_round: 0,
        }
    }
}

impl Bbr3 {
    /// `EnterProbeBW` (§5.3.3.9).
    pub(super) fn enter_probe_bw(&mut self, now: Time) {
        self.start_probe_bw_down(now);
    }

    /// `UpdateProbeBWCyclePhase` (§5.3.3.9): the cycle's state machine, on every arrival.
    pub(super) fn update_probe_bw_cycle_phase(&mut self, s: &Sample) {
        if !self.full_bw_reached {
            return; // only steady-state behaviour here
        }
        if self.adapt_long_term_model(s) {
            return; // already decided a transition
        }
        match self.mode() {
            Mode::ProbeBwDown => {
                if self.is_time_to_probe_bw(s.now) {
                    return;
                }
                if self.is_time_to_cruise(s.inflight) {
                    self.start_probe_bw_cruise();
                }
            }
            Mode::ProbeBwCruise => {
                self.is_time_to_probe_bw(s.now);
            }
            // After one round of REFILL, probe.
            Mode::ProbeBwRefill if self.rounds.is_start() => {
                self.cycle.is_bw_probe_sample = true;
                self.start_probe_bw_up(s);
            }
            Mode::ProbeBwUp if self.is_time_to_go_down(s) => {
                self.cycle.prev_probe_too_high = false; // no high loss (yet)
                self.start_probe_bw_down(s.now);
            }
            _ => {}
        }
    }

    /// `IsTimeToProbeBW` (§5.3.3.8): after BBR.bw_probe_wait, or after the Reno-coexistence
    /// number of rounds, go to REFILL.
    fn is_time_to_probe_bw(&mut self, now: Time) -> bool {
        if self.has_elapsed_in_phase(now, self.cycle.bw_probe_wait) || self.is_reno_coexistence_probe_time() {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// `PickProbeWait` (§5.3.3.8): 0 or 1 rounds already counted, 2–3 s of wall clock.
    pub(super) fn pick_probe_wait(&mut self) {
        self.cycle.rounds_since_probe_up = u64::from(self.rng.next_u32() & 1);
        let frac = f64::from(self.rng.next_u32()) / (f64::from(u32::MAX) + 1.0);
        let base = Duration::from_secs_f64(self.cfg.probe_wait);
        // The draft's 2–3 s; a shorter base keeps the random part at half of it.
        let spread = if base == PROBE_WAIT_BASE { Duration::from_secs(1) } else { base / 2 };
        self.cycle.bw_probe_wait = base + spread.mul_f64(frac);
    }

    /// `IsRenoCoexistenceProbeTime` (§5.3.3.8): a Reno flow would have grown its window by
    /// one BDP (in units) by now, one unit per round, or 63 rounds passed.
    fn is_reno_coexistence_probe_time(&self) -> bool {
        let rounds = self.target_inflight().min(RENO_ROUNDS_MAX);
        self.cycle.rounds_since_probe_up >= rounds
    }

    /// `TargetInflight` (§5.3.3.8): the BDP, unless congestion cut the window below it.
    pub(super) fn target_inflight(&self) -> u64 {
        self.bdp_multiple(self.bw, 1.0).min(self.cwnd)
    }

    /// `InflightWithHeadroom` (§5.3.3.9): `inflight_hi` less 15 % left for other flows.
    pub(super) fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_hi == u64::MAX {
            return u64::MAX;
        }
        let headroom = ((HEADROOM * self.inflight_hi as f64) as u64).max(1);
        self.inflight_hi.saturating_sub(headroom).max(MIN_PIPE_CWND)
    }

    /// `AdaptLongTermModel` (§5.3.3.9): follow the probe's feedback phases, advance the
    /// bandwidth filter once per cycle, and move `inflight_hi` — down when a probe lost too
    /// much (Linux v3 `bbr_adapt_upper_bounds` tests this per arrival too), up when it did
    /// not. Returns whether it decided a state transition.
    fn adapt_long_term_model(&mut self, s: &Sample) -> bool {
        let in_probe_bw = self.mode().is_probe_bw();
        if self.cycle.ack_phase == AckPhase::ProbeStarting && self.rounds.is_start() {
            self.cycle.ack_phase = AckPhase::ProbeFeedback; // samples from the probe arrive
        }
        if self.cycle.ack_phase == AckPhase::ProbeStopping && self.rounds.is_start() {
            // The probe's samples are over.
            self.cycle.is_bw_probe_sample = false;
            self.cycle.ack_phase = AckPhase::Init;
            if in_probe_bw && !s.is_app_limited {
                self.advance_max_bw_filter();
            }
            // Precautionary probing: acceleration (§5.3.3.6).
            if in_probe_bw && self.cycle.prev_probe_precautionary && !self.cycle.prev_probe_too_high {
                self.start_probe_bw_refill();
                return true;
            }
        }
        if self.is_inflight_too_high(s) {
            return self.cycle.is_bw_probe_sample && self.handle_inflight_too_high(s);
        }
        // The loss rate is safe: raise the upper bound.
        if self.inflight_hi == u64::MAX {
            return false;
        }
        if s.tx_in_flight > self.inflight_hi {
            self.inflight_hi = s.tx_in_flight;
        }
        if self.mode() == Mode::ProbeBwUp {
            self.probe_inflight_hi_upward(s);
        }
        false
    }
}
