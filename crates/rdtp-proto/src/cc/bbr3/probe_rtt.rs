//! The min-RTT estimate and ProbeRTT (draft §5.3.4): when no RTT sample lower than the
//! current ProbeRTT minimum came for 5 s, hold the window at half the BDP (at least 4 units)
//! for 200 ms and a round so the queue drains and the propagation delay can be measured;
//! the min-RTT estimate itself spans 10 s.

use core::time::Duration;

use super::probe_bw::AckPhase;
use super::state::{ProbeRtt, State};
use super::{Bbr3, MIN_PIPE_CWND, Mode, Sample};
use crate::cc::bbr_common::PROBE_RTT_DURATION; // BBR.ProbeRTTDuration (§2.16.2)
use crate::time::Time;

/// BBR.MinRTTFilterLen (§2.9.2).
pub(super) const MIN_RTT_FILTER_LEN: Duration = Duration::from_secs(10);
/// BBR.ProbeRTTInterval (§2.16.2): every flow must use 5 s so that flows coordinate.
pub(super) const PROBE_RTT_INTERVAL: Duration = Duration::from_secs(5);
/// BBR.ProbeRTTCwndGain = 0.5: ProbeRTT holds in-flight at half the BDP (§2.16.2).
pub(super) const CWND_GAIN: f64 = 0.5;
/// Pacing and window gains in ProbeRTT (§5.6.1).
pub(super) const GAINS: (f64, f64) = (1.0, CWND_GAIN);

impl Bbr3 {
    /// `UpdateMinRTT` (§5.3.4.3).
    pub(super) fn update_min_rtt(&mut self, s: &Sample) {
        self.probe_rtt_expired = s.now > self.probe_rtt_min_stamp + PROBE_RTT_INTERVAL;
        if let Some(rtt) = s.rtt
            && (self.probe_rtt_min_delay.is_none_or(|m| rtt < m) || self.probe_rtt_expired)
        {
            self.probe_rtt_min_delay = Some(rtt);
            self.probe_rtt_min_stamp = s.now;
        } else if let (Some(rtt), Some(m)) = (s.rtt, self.probe_rtt_min_delay)
            && self.cfg.min_rtt_slack > 0.0
            && rtt.as_secs_f64() <= m.as_secs_f64() * (1.0 + self.cfg.min_rtt_slack)
        {
            // Not the draft: a sample within the slack confirms the minimum (no queue now),
            // so ProbeRTT, which would only measure it again, waits (docs/CONTROLLER.md).
            self.probe_rtt_min_stamp = s.now;
        }
        let min_rtt_expired = s.now > self.min_rtt_stamp + MIN_RTT_FILTER_LEN;
        if let Some(d) = self.probe_rtt_min_delay
            && (self.min_rtt.is_none_or(|m| d < m) || min_rtt_expired)
        {
            self.min_rtt = Some(d);
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
    }

    /// `CheckProbeRTT` (§5.3.4.3).
    pub(super) fn check_probe_rtt(&mut self, s: &Sample) {
        if self.cfg.probe_rtt && self.mode() != Mode::ProbeRtt && self.probe_rtt_expired && !self.idle_restart {
            self.transition_to(State::ProbeRtt(ProbeRtt::default())); // EnterProbeRTT
            self.save_cwnd();
            self.cycle.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.mode() == Mode::ProbeRtt {
            self.handle_probe_rtt(s);
        }
        if s.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `HandleProbeRTT` (§5.3.4.3); the receiver marks itself application-limited meanwhile
    /// ([`crate::cc::Controller::wants_app_limited`]).
    fn handle_probe_rtt(&mut self, s: &Sample) {
        let State::ProbeRtt(mut p) = self.state else { return };
        let mut check_done = false;
        match p.done_stamp {
            None if s.inflight <= self.probe_rtt_cwnd() => {
                // Wait at least ProbeRTTDuration, and at least one round.
                p.done_stamp = Some(s.now + PROBE_RTT_DURATION);
                p.round_done = false;
                self.start_round();
            }
            Some(_) => {
                p.round_done |= self.rounds.is_start();
                check_done = p.round_done;
            }
            None => {}
        }
        self.state = State::ProbeRtt(p);
        if check_done {
            self.check_probe_rtt_done(s.now);
        }
    }

    /// `CheckProbeRTTDone` (§5.3.4.3).
    pub(super) fn check_probe_rtt_done(&mut self, now: Time) {
        let State::ProbeRtt(p) = self.state else { return };
        if p.done_stamp.is_some_and(|d| now > d) {
            self.probe_rtt_min_stamp = now; // schedule the next ProbeRTT
            self.restore_cwnd();
            self.exit_probe_rtt(now);
        }
    }

    /// `ExitProbeRTT` (§5.3.4.4): back to ProbeBW (through DOWN straight to CRUISE: in-flight
    /// is already below the BDP) if the pipe was ever full, else to Startup.
    fn exit_probe_rtt(&mut self, now: Time) {
        self.reset_short_term_model();
        if self.full_bw_reached {
            self.start_probe_bw_down(now);
            self.start_probe_bw_cruise();
        } else {
            self.enter_startup();
        }
    }

    /// `ProbeRTTCwnd` (§5.6.4.5): half the BDP, at least BBR.MinPipeCwnd.
    pub(super) fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp_multiple(self.bw, CWND_GAIN).max(MIN_PIPE_CWND)
    }
}
