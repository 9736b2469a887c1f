//! Min-RTT filter and ProbeRTT: when the 10-second min-RTT estimate expires, hold the window
//! at 4 units for ≥ 200 ms and one round to re-measure the propagation delay (Linux
//! `bbr_update_min_rtt`; seed 000 eq. 7).

use core::time::Duration;

use super::{Bbr, State};
use crate::cc::AckSample;
use crate::cc::bbr_common::PROBE_RTT_DURATION;
use crate::time::Time;

/// Window of the min-RTT filter.
pub(crate) const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);
/// The minimum window, in units (ProbeRTT's window and BBR's floor).
pub(crate) const CWND_MIN_TARGET: u64 = 4;
/// Pacing and window gains in ProbeRTT.
pub(super) const GAINS: (f64, f64) = (1.0, 1.0);

/// ProbeRTT's data (Linux `probe_rtt_done_stamp`, `probe_rtt_round_done`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct ProbeRtt {
    /// When the 200 ms are up; set once in-flight first falls to the minimum window.
    done_stamp: Option<Time>,
    /// A round has passed since then.
    round_done: bool,
}

impl Bbr {
    pub(super) fn update_min_rtt(&mut self, rs: &AckSample) {
        let expired = self.min_rtt.is_expired(rs.now);
        if let Some(rtt) = rs.rtt {
            self.min_rtt.update(rs.now, rtt);
        }

        if self.cfg.probe_rtt && expired && !self.idle_restart && !matches!(self.state, State::ProbeRtt(_)) {
            self.transition_to(State::ProbeRtt(ProbeRtt::default()));
            self.save_cwnd();
        }

        if let State::ProbeRtt(p) = &mut self.state {
            // Keep at most 4 units in flight for max(200 ms, one round).
            let mut check_done = false;
            match p.done_stamp {
                None if rs.inflight <= CWND_MIN_TARGET => {
                    p.done_stamp = Some(rs.now + PROBE_RTT_DURATION);
                    p.round_done = false;
                    self.rounds.restart(rs.delivered);
                }
                Some(_) => {
                    if self.rounds.is_start() {
                        p.round_done = true;
                    }
                    check_done = p.round_done;
                }
                None => {}
            }
            if check_done {
                self.check_probe_rtt_done(rs.now);
            }
        }
        // Restarting after idle ends once a unit has been delivered.
        if rs.rate.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Leave ProbeRTT once its time is up: restore the window and resume.
    pub(super) fn check_probe_rtt_done(&mut self, now: Time) {
        let State::ProbeRtt(p) = &self.state else { return };
        if p.done_stamp.is_none_or(|d| now <= d) {
            return;
        }
        self.min_rtt.restamp(now); // wait a while until the next ProbeRTT
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode(now);
    }

    /// Back to ProbeBW if the pipe was filled, else to Startup.
    pub(super) fn reset_mode(&mut self, now: Time) {
        if self.full_pipe.is_full() { self.enter_probe_bw(now) } else { self.transition_to(State::Startup) }
    }
}
