//! Long-term bandwidth sampling: detect a token-bucket policer (two intervals of similar
//! throughput with ≥ 20 % loss) and pace at the policed rate for 48 rounds
//! (Linux `bbr_lt_bw_sampling`; part of the BBR v1 that seed 000 §3.5 transplants).

use super::{Bbr, Mode};
use crate::cc::AckSample;
use crate::time::Time;

/// Fewest rounds in a sampling interval.
const LT_INTERVAL_MIN_ROUNDS: u32 = 4;
/// Loss ratio above which an interval is lossy (50/256 ≈ 20 %).
const LT_LOSS_THRESH: f64 = 50.0 / 256.0;
/// Two intervals are consistent if their rates differ by ≤ 1/8 …
const LT_BW_RATIO: f64 = 1.0 / 8.0;
/// … or by ≤ 4 kbit/s.
const LT_BW_DIFF_BYTES_PER_SEC: f64 = 4000.0 / 8.0;
/// Rounds to use the policed rate before probing again.
const LT_BW_MAX_ROUNDS: u32 = 48;

#[derive(Clone, Debug, Default)]
pub(crate) struct LtBw {
    pub(crate) is_sampling: bool,
    pub(crate) use_bw: bool,
    /// Estimated policed rate, units/s (0 = none yet).
    pub(crate) bw: f64,
    rounds: u32,
    last_stamp: Time,
    last_delivered: u64,
    last_lost: u64,
}

/// The fields of a sample long-term sampling needs.
pub(super) struct LtInput {
    pub now: Time,
    pub losses: u64,
    pub is_app_limited: bool,
}

impl From<&AckSample> for LtInput {
    fn from(rs: &AckSample) -> Self {
        LtInput { now: rs.now, losses: rs.losses, is_app_limited: rs.rate.is_app_limited }
    }
}

impl Bbr {
    fn lt_reset_interval(&mut self, now: Time) {
        self.lt.last_stamp = now;
        self.lt.last_delivered = self.delivered;
        self.lt.last_lost = self.lost_total;
        self.lt.rounds = 0;
    }

    pub(super) fn lt_reset(&mut self, now: Time) {
        self.lt.bw = 0.0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.lt_reset_interval(now);
    }

    fn lt_interval_done(&mut self, now: Time, bw: f64) {
        if self.lt.bw > 0.0 {
            let diff = (bw - self.lt.bw).abs();
            let unit = f64::from(self.params.unit);
            if diff <= LT_BW_RATIO * self.lt.bw || diff * unit <= LT_BW_DIFF_BYTES_PER_SEC {
                // Two consistent lossy intervals: we are probably policed.
                self.lt.bw = (bw + self.lt.bw) / 2.0;
                self.lt.use_bw = true;
                self.pacing_gain = 1.0;
                self.lt.rounds = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.lt_reset_interval(now);
    }

    pub(super) fn lt_bw_sampling(&mut self, rs: &LtInput) {
        if !self.cfg.lt_bw {
            return;
        }
        if self.lt.use_bw {
            if self.mode() == Mode::ProbeBw && self.rounds.is_start() {
                self.lt.rounds += 1;
                if self.lt.rounds >= LT_BW_MAX_ROUNDS {
                    self.lt_reset(rs.now);
                    self.enter_probe_bw(rs.now);
                }
            }
            return;
        }
        // Start at the first loss, when the policer's tokens are spent.
        if !self.lt.is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.lt_reset_interval(rs.now);
            self.lt.is_sampling = true;
        }
        if rs.is_app_limited {
            self.lt_reset(rs.now);
            return;
        }
        if self.rounds.is_start() {
            self.lt.rounds += 1;
        }
        if self.lt.rounds < LT_INTERVAL_MIN_ROUNDS {
            return;
        }
        if self.lt.rounds > 4 * LT_INTERVAL_MIN_ROUNDS {
            self.lt_reset(rs.now);
            return;
        }
        // End the interval at a loss.
        if rs.losses == 0 {
            return;
        }
        let lost = self.lost_total - self.lt.last_lost;
        let delivered = self.delivered - self.lt.last_delivered;
        if delivered == 0 || (lost as f64) < LT_LOSS_THRESH * delivered as f64 {
            return;
        }
        let t = rs.now - self.lt.last_stamp;
        if t.as_millis() < 1 {
            return;
        }
        self.lt_interval_done(rs.now, delivered as f64 / t.as_secs_f64());
    }

    /// A timeout is a loss at the end of a round for long-term sampling.
    pub(super) fn lt_bw_on_timeout(&mut self, now: Time) {
        let input = LtInput { now, losses: 1, is_app_limited: false };
        self.lt_bw_sampling(&input);
    }
}
