//! Startup (draft §5.3.1): double the sending rate every round with pacing gain 4 ln 2 ≈ 2.77
//! and window gain 2 until the bandwidth stops growing (three rounds under +25 %) or losses
//! show the queue is full.

use super::state::State;
use super::{Bbr3, Sample};
use crate::cc::CaState;

/// BBR.StartupPacingGain = 4 ln 2: the least gain that doubles the rate every round (§2.5).
pub const PACING_GAIN: f64 = 4.0 * core::f64::consts::LN_2;
/// Startup's window gain: BBR.DefaultCwndGain (§2.6).
pub const CWND_GAIN: f64 = super::CWND_GAIN;
/// BBRStartupFullLossCnt: lossy arrivals ("discontiguous lost ranges") in a round (§5.3.1.3).
pub(super) const FULL_LOSS_COUNT: u32 = 6;

impl Bbr3 {
    /// `EnterStartup` (§5.3.1.1).
    pub(super) fn enter_startup(&mut self) {
        if self.state != State::Startup {
            self.transition_to(State::Startup);
        }
        (self.pacing_gain, self.cwnd_gain) = State::Startup.gains();
    }

    /// `CheckFullBWReached` (§5.3.1.2), in Startup and ProbeBW_UP: at each round start of a
    /// non-application-limited sample, has the delivery rate grown by 25 %?
    pub(super) fn check_full_bw_reached(&mut self, s: &Sample) {
        if self.full_pipe.is_full() || !self.rounds.is_start() || s.is_app_limited || s.delivery_rate <= 0.0 {
            return;
        }
        self.full_pipe.on_round(s.delivery_rate);
        if self.full_pipe.is_full() {
            self.full_bw_reached = true;
        }
    }

    /// `CheckStartupDone` (§5.3.1): leave for Drain once the pipe is full.
    pub(super) fn check_startup_done(&mut self, s: &Sample) {
        self.check_startup_high_loss(s);
        if self.state == State::Startup && self.full_bw_reached {
            self.enter_drain();
        }
    }

    /// `CheckStartupHighLoss` (§5.3.1.3, Linux v3 `bbr_check_loss_too_high_in_startup`): at
    /// the end of a round that was entirely in fast recovery, with ≥ 6 lossy arrivals and
    /// more than 2 % of in-flight lost, the queue is full: set `inflight_hi` to
    /// max(BDP, delivered in the last round) and leave Startup.
    fn check_startup_high_loss(&mut self, s: &Sample) {
        if self.full_bw_reached || self.state != State::Startup {
            return;
        }
        let full_round_in_recovery =
            self.prev_ca_state == CaState::Recovery && self.recovery_round.is_some_and(|r| self.rounds.count() > r);
        if self.loss_round_start
            && full_round_in_recovery
            && self.loss_events_in_round >= FULL_LOSS_COUNT
            && self.is_inflight_too_high(s)
        {
            self.full_bw_reached = true;
            self.inflight_hi = self.bdp_multiple(self.bw, 1.0).max(self.inflight_latest);
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }
}
