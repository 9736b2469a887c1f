//! Startup: grow the rate with gain 2/ln 2 until the bandwidth stops growing
//! (Linux `bbr_check_full_bw_reached`; seed 000 §3.5).

use super::Bbr;
use crate::cc::AckSample;

/// Startup gain 2/ln 2: the smallest gain that doubles the rate every round.
pub const HIGH_GAIN: f64 = 2.0 / core::f64::consts::LN_2;
/// Pacing and window gains in Startup.
pub(super) const GAINS: (f64, f64) = (HIGH_GAIN, HIGH_GAIN);

impl Bbr {
    /// After 3 non-app-limited rounds in which the max bandwidth grew by < 25 %, estimate
    /// that Startup filled the pipe ([`FullPipe`](crate::cc::bbr_common::FullPipe)).
    pub(super) fn check_full_bw_reached(&mut self, rs: &AckSample) {
        if self.full_pipe.is_full() || !self.rounds.is_start() || rs.rate.is_app_limited {
            return;
        }
        let max_bw = self.max_bw();
        self.full_pipe.on_round(max_bw);
    }
}
