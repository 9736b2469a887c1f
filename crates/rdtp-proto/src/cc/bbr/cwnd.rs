//! The congestion window: target from the model, loss recovery and restore
//! (Linux `bbr_set_cwnd`, `bbr_set_cwnd_to_recover_or_restore`, `bbr_save_cwnd`;
//! seed 000 eq. 2: `cwnd = cwnd_gain × BtlBw × RTTmin`).

use super::probe_bw::Cycle;
use super::probe_rtt::CWND_MIN_TARGET;
use super::{Bbr, Mode, State};
use crate::cc::{AckSample, CaState, CongestionEvent, LossKind};

impl Bbr {
    /// `ceil(gain × bw × min_rtt)` in units; the initial window before any RTT sample.
    pub(super) fn bdp(&self, bw: f64, gain: f64) -> u64 {
        match self.min_rtt() {
            None => self.cfg.init_cwnd,
            Some(m) => (bw * m.as_secs_f64() * gain).ceil() as u64,
        }
    }

    /// Room for the units of requests in flight at both ends: three aggregated requests
    /// (Linux budgets three TSO bursts; an aggregated request plays that role here), rounded
    /// up to even, +2 in the probing phase so gain cycling gets above BDP on tiny BDPs.
    pub(super) fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut c = cwnd + 3 * u64::from(self.base_aggregation());
        c = (c + 1) & !1;
        if let State::ProbeBw(Cycle { idx: 0, .. }) = self.state {
            c += 2;
        }
        c
    }

    /// In-flight target for `gain`: BDP plus quantization budget.
    pub(super) fn inflight_target(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// Remember the last good window before loss recovery or ProbeRTT cut it.
    pub(super) fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode() != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// Packet conservation in the first round of Recovery, restore on exit. Returns the
    /// window and whether conservation decided it.
    fn recover_or_restore(&mut self, rs: &AckSample) -> (u64, bool) {
        let prev = self.prev_ca_state;
        let state = rs.ca_state;
        let mut cwnd = self.cwnd;
        // An arrival for P units should release at most 2·P: take the losses out first.
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of Recovery: send one unit per unit delivered.
            self.packet_conservation = true;
            self.rounds.restart(rs.delivered); // start the round now
            cwnd = rs.inflight + rs.acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            // Leaving recovery: restore the window saved when it started.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(rs.inflight + rs.acked), true);
        }
        (cwnd, false)
    }

    /// Slow-start toward the target window, or snap down to it once the pipe was filled.
    pub(super) fn set_cwnd(&mut self, rs: &AckSample, bw: f64, gain: f64) {
        if rs.acked > 0 {
            let (mut cwnd, conserving) = self.recover_or_restore(rs);
            if !conserving {
                let target = self.quantization_budget(self.bdp(bw, gain));
                if self.full_pipe.is_full() {
                    cwnd = (cwnd + rs.acked).min(target);
                } else if cwnd < target || rs.delivered < self.cfg.init_cwnd {
                    cwnd += rs.acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
            self.cwnd = cwnd;
        }
        if self.mode() == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// Loss detected by the receiver.
    pub(super) fn handle_congestion(&mut self, e: &CongestionEvent) {
        // Entering recovery: `bbr_ssthresh` saves the window.
        self.save_cwnd();
        if e.kind == LossKind::Timeout {
            // `tcp_enter_loss`: window = in-flight + 1; `bbr_set_state(TCP_CA_Loss)`:
            // treat the timeout as the end of a round and restart full-pipe detection.
            self.cwnd = e.inflight + 1;
            self.prev_ca_state = CaState::Loss;
            self.full_pipe.forget_bw();
            self.rounds.mark_start();
            self.lt_bw_on_timeout(e.now);
        }
    }
}
