//! What the BBR family (`bbr`, `bbr-cd`, `bbr3`) shares, written once: packet-timed rounds
//! ([`RoundCounter`]), Startup's full-pipe check ([`FullPipe`]) and the constants the three
//! agree on. Reusable parts in the way of s2n-quic's `bbr/round.rs` and `bbr/full_pipe.rs`.
//!
//! What they do differently stays in each controller, on purpose: which samples may start a
//! round (bbr needs a valid delivery rate, bbr-cd a valid rate interval, bbr3 any arrival),
//! which rounds the full-pipe check counts (bbr and bbr3 skip application-limited ones, Linux
//! `bbr_check_full_bw_reached` and draft-ietf-ccwg-bbr §5.3.1.2; bbr-cd counts them, Hu et
//! al. §III-C a, see `bbr_cd/startup.rs`) and what bandwidth it compares (bbr its max filter,
//! bbr-cd its average BtlBw, bbr3 the delivery rate of the sample). This module imports
//! nothing of the controllers.

use core::time::Duration;

/// Bandwidth must grow by this factor per round to count as still growing (Linux
/// `bbr_full_bw_thresh`, 25 %; Hu et al. §III-C a; draft §5.3.1.2).
pub const FULL_BW_THRESH: f64 = 1.25;
/// Rounds without such growth after which the pipe is full (Linux `bbr_full_bw_cnt`: 3).
pub const FULL_BW_COUNT: u32 = 3;
/// Pace 1 % below the estimated bandwidth, so that the bottleneck queue drains (Linux
/// `bbr_pacing_margin_percent`; draft `BBR.PacingMarginPercent`). bbr and bbr3 use it; bbr-cd
/// paces at its gain times its average BtlBw, as Hu et al. write it.
pub const PACING_MARGIN: f64 = 0.99;
/// How long ProbeRTT holds its low in-flight, at least (Linux `bbr_probe_rtt_mode_ms`; draft
/// `ProbeRTTDuration`). bbr and bbr3 use it; bbr-cd's ProbeRTT ends after a number of
/// samples (Hu et al. §III-C d, `bbr_cd/probe_rtt.rs`).
pub const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);

/// Packet-timed round trips (Linux `bbr_update_bw`'s round counting; draft §5.5.1): a round
/// ends when a unit requested after the previous round's end is delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoundCounter {
    /// Units delivered when the current round began (`next_round_delivered`).
    next_round_delivered: u64,
    /// Rounds so far.
    count: u64,
    /// The last sample started a round.
    start: bool,
}

impl RoundCounter {
    /// A delivery sample: the acked unit's request left when `prior_delivered` units were
    /// delivered, `delivered` are now. Returns whether it starts a round (counted).
    pub fn on_sample(&mut self, prior_delivered: u64, delivered: u64) -> bool {
        self.start = prior_delivered >= self.next_round_delivered;
        if self.start {
            self.next_round_delivered = delivered;
            self.count += 1;
        }
        self.start
    }

    /// A sample that may not start a round (the controller's rule): none starts.
    pub fn no_round(&mut self) {
        self.start = false;
    }

    /// Let the next round begin now, with `delivered` units delivered (ProbeRTT's and bbr3's
    /// phase changes; draft `StartRound`).
    pub fn restart(&mut self, delivered: u64) {
        self.next_round_delivered = delivered;
    }

    /// Treat now as a round start without counting a round (Linux `bbr_set_state` on a
    /// timeout: `round_start = 1`).
    pub fn mark_start(&mut self) {
        self.start = true;
    }

    /// Whether the last sample started a round.
    pub fn is_start(&self) -> bool {
        self.start
    }

    /// Rounds so far.
    pub fn count(&self) -> u64 {
        self.count
    }
}

/// Startup's full-pipe check (Linux `bbr_check_full_bw_reached`; draft `CheckFullBWReached`):
/// the pipe is full once [`FULL_BW_COUNT`] rounds in a row raised the bandwidth by less than
/// [`FULL_BW_THRESH`]. The caller decides which rounds count and what bandwidth it compares.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FullPipe {
    /// The bandwidth at the last growth.
    full_bw: f64,
    /// Rounds since without growth.
    count: u32,
    /// The pipe is full.
    full: bool,
}

impl FullPipe {
    /// A counted round with bandwidth `bw`.
    pub fn on_round(&mut self, bw: f64) {
        if bw >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = bw;
            self.count = 0;
            return;
        }
        self.count += 1;
        self.full = self.count >= FULL_BW_COUNT;
    }

    /// Whether the pipe is full.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Start over from `bw` (draft `ResetFullBW` followed by `full_bw = rs.delivery_rate`).
    pub fn reset_to(&mut self, bw: f64) {
        *self = FullPipe { full_bw: bw, ..FullPipe::default() };
    }

    /// Forget the bandwidth, keeping the verdict and the count (Linux `bbr_set_state` on a
    /// timeout: `full_bw = 0`).
    pub fn forget_bw(&mut self) {
        self.full_bw = 0.0;
    }

    /// The pipe is full at `bw` (informed start: the rate is known).
    pub fn set_full(&mut self, bw: f64) {
        self.full_bw = bw;
        self.full = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_end_when_a_later_request_is_answered() {
        let mut r = RoundCounter::default();
        assert!(r.on_sample(0, 1), "the first sample starts round 1");
        assert!(!r.on_sample(0, 2) && !r.is_start(), "requested before round 1 began");
        assert!(r.on_sample(1, 3) && r.count() == 2);
        r.restart(10);
        assert!(!r.on_sample(9, 11));
        r.mark_start();
        assert!(r.is_start() && r.count() == 2, "marked, not counted");
        r.no_round();
        assert!(!r.is_start());
    }

    #[test]
    fn three_rounds_under_25_percent_fill_the_pipe() {
        let mut f = FullPipe::default();
        for bw in [10.0, 20.0, 24.0, 24.0] {
            f.on_round(bw);
            assert!(!f.is_full());
        }
        f.on_round(24.9);
        assert!(f.is_full());
        f.reset_to(30.0);
        assert!(!f.is_full());
        f.on_round(37.5);
        f.on_round(37.5);
        f.on_round(37.5);
        assert!(!f.is_full(), "37.5 grew by 25 %, the count restarted");
        f.on_round(37.5);
        assert!(f.is_full());
    }
}
