//! Startup (S1 §III-C a): pacing and window gain `highGain = 2.885`; the pipe is full once
//! three consecutive rounds raised the (average) BtlBw by less than 25 %.

use super::BbrCd;
use crate::cc::AckSample;

/// Bandwidth must grow by this factor per round to count as still growing (S1: 25 %).
pub(crate) const FULL_BW_THRESH: f64 = 1.25;
/// Rounds without such growth after which the pipe is full (S1: three).
pub(crate) const FULL_BW_COUNT: u32 = 3;

/// `(pacing_gain, cwnd_gain)` in Startup: both `highGain`.
pub(super) fn gains(high_gain: f64) -> (f64, f64) {
    (high_gain, high_gain)
}

impl BbrCd {
    /// At the start of a round (not app-limited): is BtlBw still growing?
    pub(super) fn check_full_bw_reached(&mut self, rs: &AckSample) {
        if self.full_bw_reached || !self.round_start || rs.rate.is_app_limited {
            return;
        }
        let Some(bw) = self.est.btlbw() else { return };
        if bw >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_COUNT;
    }
}
