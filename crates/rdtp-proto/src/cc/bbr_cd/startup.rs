//! Startup (S1 §III-C a): pacing and window gain `highGain = 2.885`; the pipe is full once
//! three consecutive rounds raised the (average) BtlBw by less than 25 %.
//!
//! **Every round counts, application-limited or not** (S1 counts rounds; Linux BBR skips
//! application-limited ones, which cannot show growth). A BBR-CD flow asks for every new
//! unit before re-requesting a lost one (S1 §IV-D); after Startup's overshoot the receive
//! window fills with units behind the holes, nothing else may be asked for, and the receiver
//! marks every round application-limited. Skipping those rounds, Startup never ended and
//! kept pacing at 2.885 × BtlBw into a full queue (harness, 1 Gbit/s / 100 ms / 2 BDP: 30 s
//! in Startup, 272 000 queue drops). Such rounds leave the average unchanged (their
//! delivery-rate samples stay out of it, [`super::BbrCd`]), so they count as rounds without
//! growth.

use super::BbrCd;
use crate::cc::AckSample;

/// `(pacing_gain, cwnd_gain)` in Startup: both `highGain`.
pub(super) fn gains(high_gain: f64) -> (f64, f64) {
    (high_gain, high_gain)
}

impl BbrCd {
    /// At the start of a round (application-limited or not, module docs): is BtlBw still
    /// growing?
    pub(super) fn check_full_bw_reached(&mut self, _rs: &AckSample) {
        if self.full_pipe.is_full() || !self.rounds.is_start() {
            return;
        }
        let Some(bw) = self.est.btlbw() else { return };
        // S1: 25 % growth, three rounds (the family's constants, `bbr_common`).
        self.full_pipe.on_round(bw);
    }
}
