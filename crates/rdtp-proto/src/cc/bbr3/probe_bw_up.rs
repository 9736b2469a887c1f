//! ProbeBW_UP (draft §5.3.3.4–7): accelerate — pacing gain 1.25, window gain 2.25 — to look for
//! more bandwidth, growing `inflight_hi` (when it binds) by 1, 2, 4, … units per round; stop
//! at a bandwidth plateau, at loss above 2 % (`HandleInflightTooHigh`, in
//! [`super::model`]), once the estimated queue is high enough (§5.3.3.4: after a min RTT in
//! UP, in-flight above 1.25 × BDP), or — after a probe that lost too much — as soon as
//! in-flight reaches `inflight_hi` (precautionary probing).

use super::probe_bw::AckPhase;
use super::state::State;
use super::{Bbr3, Sample};

/// Pacing and window gains (§5.6.1).
pub(super) const GAINS: (f64, f64) = (1.25, 2.25);
/// In-flight, in BDPs, at which the probe has built enough queue to have found any bandwidth
/// there is (§5.3.3.4's "estimated queue" exit: `packets_in_flight > 1.25 * BBR.bdp`; Linux v3
/// `bbr_param(sk, bw_probe_pif_gain)`).
pub(super) const QUEUE_EXIT_GAIN: f64 = 1.25;

impl Bbr3 {
    /// `StartProbeBW_UP` (§5.3.3.9).
    pub(super) fn start_probe_bw_up(&mut self, s: &Sample) {
        self.cycle.ack_phase = AckPhase::ProbeStarting;
        // The estimated-queue exit waits a min RTT from here (Linux v3 `bbr_start_bw_probe_up`
        // restarts `cycle_mstamp`; DOWN restarts it again before it is read for probe waits).
        self.cycle.stamp = s.now;
        self.start_round();
        self.full_pipe.reset_to(s.delivery_rate); // ResetFullBW, full_bw = rs.delivery_rate
        self.transition_to(State::ProbeBwUp);
        self.raise_inflight_hi_slope();
    }

    /// `IsTimeToGoDown` (§5.3.3.9), with the estimated-queue exit of §5.3.3.4's prose (the
    /// draft's pseudocode leaves it out; Linux v3 `bbr_update_cycle_phase` has it as
    /// `is_queuing`).
    pub(super) fn is_time_to_go_down(&mut self, s: &Sample) -> bool {
        // Precautionary probing: deceleration (§5.3.3.6).
        if self.cycle.prev_probe_too_high && s.inflight >= self.inflight_hi {
            self.cycle.prev_probe_precautionary = true;
            return true;
        }
        // Estimated queue: UP has lasted a min RTT, so its extra in-flight has reached the
        // bottleneck, and a quarter BDP more than the path holds is in flight: a queue, not
        // more bandwidth, took it. Without this, UP stops only at a plateau (three rounds, up
        // to ¾ BDP of queue) or at loss — with `inflight_hi` at BDP + buffer, a full buffer.
        // The prose's `1.25 * BBR.bdp` is used as written, without the quantization budget
        // Linux adds (`bbr_inflight`): on a 4-unit BDP that budget (+2 in UP, at least 3 send
        // quanta) asks for a 3-unit queue before the exit, more than a 0.25–1 BDP buffer holds.
        if let Some(min_rtt) = self.min_rtt
            && self.has_elapsed_in_phase(s.now, min_rtt)
            && s.inflight as f64 > QUEUE_EXIT_GAIN * self.bw * min_rtt.as_secs_f64()
        {
            return true;
        }
        if self.is_cwnd_limited() && self.cwnd >= self.inflight_hi {
            // inflight_hi, not the path, limits the bandwidth seen: keep probing.
            self.full_pipe.reset_to(s.delivery_rate); // ResetFullBW, full_bw = rs.delivery_rate
        } else if self.full_pipe.is_full() {
            return true; // the path's bandwidth is used
        }
        false
    }

    /// `RaiseInflightLongtermSlope` (§5.3.3.9): grow `inflight_hi` twice as fast each round.
    pub(super) fn raise_inflight_hi_slope(&mut self) {
        let growth_this_round = 1u64 << self.cycle.bw_probe_up_rounds;
        self.cycle.bw_probe_up_rounds = (self.cycle.bw_probe_up_rounds + 1).min(30);
        self.cycle.probe_up_acked_per_inc = (self.cwnd / growth_this_round).max(1);
    }

    /// `ProbeInflightLongtermUpward` (§5.3.3.9): while the window is limited by `inflight_hi`,
    /// raise it by one unit per `probe_up_acked_per_inc` units delivered.
    pub(super) fn probe_inflight_hi_upward(&mut self, s: &Sample) {
        if !self.is_cwnd_limited() || self.cwnd < self.inflight_hi {
            return; // not fully using inflight_hi: do not grow it
        }
        let c = &mut self.cycle;
        c.bw_probe_up_acked += s.newly_acked;
        if c.bw_probe_up_acked >= c.probe_up_acked_per_inc {
            let delta = c.bw_probe_up_acked / c.probe_up_acked_per_inc;
            c.bw_probe_up_acked -= delta * c.probe_up_acked_per_inc;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.rounds.is_start() {
            self.raise_inflight_hi_slope();
        }
    }
}
