//! Min-RTT filter and ProbeRTT: when the 10-second min-RTT estimate expires, hold the window
//! at 4 units for ≥ 200 ms and one round to re-measure the propagation delay (Linux
//! `bbr_update_min_rtt`; seed 000 eq. 7).

use core::time::Duration;

use super::{Bbr, Mode};
use crate::cc::AckSample;
use crate::time::Time;

/// Window of the min-RTT filter.
pub(crate) const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);
/// Least time spent at the minimum window in ProbeRTT.
pub(crate) const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
/// The minimum window, in units (ProbeRTT's window and BBR's floor).
pub(crate) const CWND_MIN_TARGET: u64 = 4;

impl Bbr {
    pub(super) fn update_min_rtt(&mut self, rs: &AckSample) {
        let expired = rs.now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        if let Some(rtt) = rs.rtt
            && (self.min_rtt.is_none_or(|m| rtt <= m) || expired)
        {
            self.min_rtt = Some(rtt);
            self.min_rtt_stamp = rs.now;
        }

        if self.cfg.probe_rtt && expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }

        if self.mode == Mode::ProbeRtt {
            // Keep at most 4 units in flight for max(200 ms, one round).
            match self.probe_rtt_done_stamp {
                None if rs.inflight <= CWND_MIN_TARGET => {
                    self.probe_rtt_done_stamp = Some(rs.now + PROBE_RTT_DURATION);
                    self.probe_rtt_round_done = false;
                    self.next_rtt_delivered = rs.delivered;
                }
                Some(_) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done {
                        self.check_probe_rtt_done(rs.now);
                    }
                }
                None => {}
            }
        }
        // Restarting after idle ends once a unit has been delivered.
        if rs.rate.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Leave ProbeRTT once its time is up: restore the window and resume.
    pub(super) fn check_probe_rtt_done(&mut self, now: Time) {
        if self.probe_rtt_done_stamp.is_none_or(|d| now <= d) {
            return;
        }
        self.min_rtt_stamp = now; // wait a while until the next ProbeRTT
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode(now);
    }

    /// Back to ProbeBW if the pipe was filled, else to Startup.
    pub(super) fn reset_mode(&mut self, now: Time) {
        if self.full_bw_reached { self.enter_probe_bw(now) } else { self.enter_startup() }
    }
}
