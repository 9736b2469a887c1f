//! The control parameters (draft §5.6): pacing rate, send quantum (the request aggregation)
//! and the congestion window with its bounds, and the window in loss recovery.

use core::time::Duration;

use super::state::State;
use super::{Bbr3, MIN_PIPE_CWND, Mode, PACING_MARGIN, Sample, startup};
use crate::cc::{CaState, CongestionEvent, LossKind, aggregation_count};
use crate::time::Time;

/// How many send quanta the offload budget holds (§5.5.8.1: one queued at the sender, one
/// being sent, one at the receiver — here: one request being served, two in the network).
const OFFLOAD_QUANTA: u64 = 3;

impl Bbr3 {
    // ----- pacing (§5.6.2) and send quantum (§5.6.3) --------------------------------------

    /// `InitPacingRate`: StartupPacingGain × InitialCwnd / SRTT (1 ms before any sample).
    pub(super) fn init_pacing_rate(&mut self, srtt: Option<Duration>) {
        let rtt = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                s.max(Duration::from_micros(1))
            }
            None => Duration::from_millis(1),
        };
        let nominal_bw = self.cfg.init_cwnd as f64 / rtt.as_secs_f64();
        self.pacing_rate = startup::PACING_GAIN * nominal_bw * f64::from(self.params.unit);
    }

    /// `SetPacingRateWithGain`: gain × bw × 99 %, lowered only once the pipe was full.
    pub(super) fn set_pacing_rate_with_gain(&mut self, gain: f64) {
        let rate = gain * self.bw * PACING_MARGIN * f64::from(self.params.unit);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `SetPacingRate`.
    pub(super) fn set_pacing_rate(&mut self) {
        self.set_pacing_rate_with_gain(self.pacing_gain);
    }

    /// `SetSendQuantum`: one millisecond at the pacing rate, in units — seed 000 eq. 8, whose
    /// limit L plays the draft's 64 KB cap and whose floor is one unit.
    pub(super) fn send_quantum(&self) -> u32 {
        aggregation_count(self.pacing_rate, self.params.unit, self.params.max_aggregation)
    }

    // ----- the window (§5.6.4) --------------------------------------------------------------

    /// `BDPMultiple(gain)` for bandwidth `bw` (units/s): ⌈gain × bw × min_rtt⌉ units, or
    /// C.InitialCwnd before any RTT sample.
    pub(super) fn bdp_multiple(&self, bw: f64, gain: f64) -> u64 {
        match self.min_rtt {
            None => self.cfg.init_cwnd,
            Some(m) => (gain * bw * m.as_secs_f64()).ceil() as u64,
        }
    }

    /// `QuantizationBudget`: at least the offload budget (three send quanta; added instead
    /// with `offload_sum`, or `burst_window` while delivery is aggregated, as BBR v1) and BBR.MinPipeCwnd; two units more in ProbeBW_UP so that probing lifts in-flight above the
    /// BDP even on tiny BDPs.
    fn quantization_budget(&self, cap: u64) -> u64 {
        let offload_budget = OFFLOAD_QUANTA * u64::from(self.send_quantum());
        let cap = if self.offload_sum() { cap + offload_budget } else { cap.max(offload_budget) };
        let mut cap = cap.max(MIN_PIPE_CWND);
        if self.mode() == Mode::ProbeBwUp {
            cap += 2;
        }
        cap
    }

    /// `Inflight(gain)` at bandwidth `bw`: the BDP multiple with its quantization budget.
    pub(super) fn inflight_with_gain(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// `UpdateMaxInflight`: BBR.extra_acked only with the `extra_acked` key (module docs).
    pub(super) fn max_inflight(&self) -> u64 {
        self.quantization_budget(self.bdp_multiple(self.bw, self.cwnd_gain) + self.extra_acked())
    }

    /// `SetCwnd` (§5.6.4.6): grow by what arrived toward `max_inflight`, cut to it at once
    /// once the pipe was full; then the ProbeRTT and model bounds.
    pub(super) fn set_cwnd(&mut self, s: &Sample) {
        let max_inflight = self.max_inflight();
        self.modulate_cwnd_for_recovery(s);
        if self.packet_conservation.is_none() {
            if self.full_bw_reached {
                self.cwnd = (self.cwnd + s.newly_acked).min(max_inflight);
            } else if self.cwnd < max_inflight || self.delivered < self.cfg.init_cwnd {
                self.cwnd += s.newly_acked;
            }
            self.cwnd = self.cwnd.max(MIN_PIPE_CWND);
        }
        self.bound_cwnd_for_probe_rtt();
        self.bound_cwnd_for_model();
    }

    /// `ModulateCwndForRecovery` (§5.6.4.4): take the units this arrival declared lost out of
    /// the window, and in the first round of fast recovery let no more out than arrived
    /// (packet conservation), so re-requests replace lost units instead of adding to a full
    /// queue.
    fn modulate_cwnd_for_recovery(&mut self, s: &Sample) {
        if s.newly_lost > 0 {
            self.cwnd = self.cwnd.saturating_sub(s.newly_lost).max(1);
        }
        if let Some(end) = self.packet_conservation {
            if s.prior_delivered >= end {
                self.packet_conservation = None; // a round trip in fast recovery has passed
            } else {
                self.cwnd = self.cwnd.max(s.inflight + s.newly_acked);
            }
        }
    }

    /// `BoundCwndForProbeRTT` (§5.6.4.5).
    fn bound_cwnd_for_probe_rtt(&mut self) {
        if self.mode() == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// `BoundCwndForModel` (§5.6.4.7): `inflight_hi` while probing or draining a probe,
    /// `inflight_hi` less headroom while cruising or in ProbeRTT, `inflight_lo` always.
    fn bound_cwnd_for_model(&mut self) {
        let mode = self.mode();
        let mut cap = u64::MAX;
        if mode.is_probe_bw() && mode != Mode::ProbeBwCruise {
            cap = self.inflight_hi;
        } else if matches!(mode, Mode::ProbeRtt | Mode::ProbeBwCruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(MIN_PIPE_CWND);
        self.cwnd = self.cwnd.min(cap);
    }

    // ----- loss recovery (§5.6.4.4) and idle restarts (§5.4) --------------------------------

    /// `SaveCwnd`: the last window not cut by recovery or ProbeRTT.
    pub(super) fn save_cwnd(&mut self) {
        if self.prev_ca_state == CaState::Open && self.mode() != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// `RestoreCwnd`.
    pub(super) fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    /// The receiver entered fast recovery or timed out: `OnEnterFastRecovery` (window =
    /// in-flight + the arriving unit, packet conservation on) / `OnEnterRTO` (window =
    /// in-flight + 1).
    pub(super) fn handle_congestion(&mut self, e: &CongestionEvent) {
        self.save_state_upon_loss();
        match e.kind {
            LossKind::Timeout => {
                self.cwnd = e.inflight + 1;
                self.prev_ca_state = CaState::Loss;
                self.packet_conservation = None;
            }
            // Reported once per episode, while an arrival (one unit) is processed.
            LossKind::Fast => {
                self.cwnd = e.inflight + 1;
                self.packet_conservation = Some(self.delivered);
            }
        }
    }

    /// Follow the receiver's loss-recovery state: remember when fast recovery began (for
    /// Startup's loss exit), and restore the window when recovery ends (§5.6.4.4).
    pub(super) fn on_recovery_state(&mut self, state: CaState) {
        let prev = self.prev_ca_state;
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.recovery_round = Some(self.rounds.count());
        }
        if prev != CaState::Open && state == CaState::Open {
            self.packet_conservation = None;
            self.restore_cwnd();
            self.recovery_round = None;
        }
        self.prev_ca_state = state;
    }

    /// `HandleRestartFromIdle` (§5.4.1), before a request leaves.
    pub(super) fn handle_restart_from_idle(&mut self, now: Time, inflight: u64, app_limited: bool) {
        if inflight == 0 && app_limited {
            self.idle_restart = true;
            if self.mode().is_probe_bw() {
                self.set_pacing_rate_with_gain(1.0);
            } else if let State::ProbeRtt(_) = self.state {
                self.check_probe_rtt_done(now);
            }
        }
    }
}
