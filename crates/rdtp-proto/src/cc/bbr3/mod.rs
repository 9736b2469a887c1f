//! `bbr3`: receiver-based BBRv3 after draft-ietf-ccwg-bbr-06 ("the draft" below; section
//! numbers are its). `bbr` stays seed 000's BBRv1 port of Linux `tcp_bbr.c`.
//!
//! What BBRv3 adds to v1, and why rdtp wants it: v1 bounds in-flight only by `2 × BDP` and
//! keeps probing with pacing gain 1.25 for one round every eight, whatever the losses; v3
//! learns from loss how much may be in flight (`inflight_hi`, the draft's
//! `inflight_longterm`, set when a probe loses more than 2 % of what was in flight) and what
//! the path delivers now (`bw_lo`/`inflight_lo`, the draft's `bw_shortterm` /
//! `inflight_shortterm`, cut by β = 0.7 per lossy round), cruises with 15 % headroom below
//! `inflight_hi`, probes only every 2–3 s (or Reno-coexistence rounds), leaves Startup on
//! high loss, and drains its Startup queue with pacing gain 0.5 instead of 0.35.
//!
//! # Files: one per state, plus the model and the window
//!
//! | file | draft | what |
//! |---|---|---|
//! | [`state`] | §5.1 | the states with their data, the legal transitions, the gains (§5.6.1) |
//! | [`startup`] | §5.3.1 | gain 2.77 (4 ln 2), full-pipe estimator, exit on high loss |
//! | [`drain`] | §5.3.2 | gain 0.5 until in-flight ≤ BDP or 3 rounds |
//! | [`probe_bw`] | §5.3.3.8–9 | the cycle shared by the four ProbeBW states: when to probe, `AdaptLongTermModel` |
//! | [`probe_bw_down`] | §5.3.3.1 | gain 0.9 until in-flight ≤ BDP and below `inflight_hi` − headroom |
//! | [`probe_bw_cruise`] | §5.3.3.2 | gain 1.0 with headroom until it is time to probe |
//! | [`probe_bw_refill`] | §5.3.3.3 | one round at gain 1.0 with the short-term bounds reset |
//! | [`probe_bw_up`] | §5.3.3.4–7 | gain 1.25 (window gain 2.25), `inflight_hi` grown 1, 2, 4 … units per round |
//! | [`probe_rtt`] | §5.3.4 | every 5 s without a lower RTT: window ½ BDP for 200 ms and a round |
//! | [`informed`] | — | informed start (Hiorth and Welzl): a predicted rate skips Startup and Drain |
//! | [`ack_aggregation`] | §5.5.9 | `extra_acked` (a key, off by default): the units a burst of arrivals brings beyond `bw` |
//! | [`bursts`] | — | aggregated delivery (keys, off in `bbr3`, on in `bbr3-rdtp`): bursts of arrivals longer than a request, the aggregation period |
//! | [`congestion`] | — | which rounds were congested beyond the draft's rule: loss above the path's base rate, a standing queue that drains under the cuts |
//! | [`model`] | §5.5 | rounds, `max_bw` (two cycles), loss rounds, `bw_lo`/`inflight_lo`, loss too high? |
//! | [`cwnd`] | §5.6 | pacing rate, send quantum, `max_inflight`, the window and its bounds, recovery |
//!
//! # Receiver-driven
//!
//! An "ACK" is an arriving unit ([`AckSample`]); a "packet" is a unit; a transmission is a
//! request, so its "in-flight at transmit" (`RS.tx_in_flight`) and the losses so far
//! (`P.lost`) travel in the request's cookie ([`Controller::on_request`]) and come back with
//! each of its units. The send quantum (§5.6.3) is the request aggregation of seed 000
//! eq. 8: one millisecond of the pacing rate in units, at least 1, at most L (the draft's
//! 64 KB cap); the offload budget is three requests (§5.5.8.1, as `bbr`'s quantization
//! budget). Data lengths are in units, rates in units per second.
//!
//! # Not implemented
//!
//! * `HandleLostPacket` per lost unit (§5.5.10.2): the receiver reports how many units an
//!   arrival declared lost, not which, so the loss-rate test runs per arrival on the arriving
//!   unit's sample (`RS.lost` vs `RS.tx_in_flight`), as Linux `bbr_adapt_upper_bounds` also
//!   does.
//! * `BBR.extra_acked` (§5.5.9) by default: in Startup, where the bandwidth estimate trails
//!   the arrival rate, it adds up to a whole window of in-flight; `bbr` leaves it out as
//!   well. The `extra_acked` key adds it once the pipe is full ([`ack_aggregation`]).
//! * Spurious-recovery undo (§5.5.11): the receiver does not detect spurious recoveries.

mod ack_aggregation;
mod bursts;
mod congestion;
mod cwnd;
mod drain;
mod informed;
mod model;
mod probe_bw;
mod probe_bw_cruise;
mod probe_bw_down;
mod probe_bw_refill;
mod probe_bw_up;
mod probe_rtt;
mod startup;
mod state;
#[cfg(test)]
mod tests;

use core::time::Duration;

use rand_core::SeedableRng;
use rand_pcg::Pcg32;

use super::bbr_common::{FullPipe, RoundCounter};
use super::spec::{Key, Keyed, Kind, key};
use super::{AckSample, Built, CaState, CcParams, CongestionEvent, Controller, ControllerSpec, RequestInfo};
use crate::time::Time;
use model::MaxBwFilter;
use probe_bw::Cycle;

pub use state::Mode;

/// BBR.LossThresh: the most loss a probe may cause, per round (§2.8).
pub const LOSS_THRESH: f64 = 0.02;
/// BBR.Beta: the multiplicative decrease per lossy round (§2.8).
pub const BETA: f64 = 0.7;
/// BBR.Headroom: the share of `inflight_hi` left free for others while cruising (§2.8).
pub const HEADROOM: f64 = 0.15;
/// BBR.MinPipeCwnd: the least window, in units (§2.8).
pub const MIN_PIPE_CWND: u64 = 4;
/// BBR.DefaultCwndGain: the window gain of every state but ProbeBW_UP and ProbeRTT (§2.6).
pub const CWND_GAIN: f64 = 2.0;
/// BBR.PacingMarginPercent: pace 1 % below the estimate (§2.5), as the family does.
pub use super::bbr_common::PACING_MARGIN;

/// `bbr3-rdtp`'s `queue_floor`, seconds: the largest floor that leaves the queue signal as
/// it was on wired paths of 20 ms and more (10 % of a 20 ms RTprop; the four-flow rows of the
/// harness suite are unchanged), so that on shorter or aggregating paths — loopback's
/// scheduling jitter, a WiFi MAC's aggregation and contention — a round's least RTT must be
/// 2 ms above the minimum before it counts as a standing queue (docs/CONTROLLER.md: Liu et
/// al.'s Fig. 9, 174.6 → 190.4 and 171.5 → 201.0 Mbit/s).
pub const QUEUE_FLOOR: f64 = 0.002;

/// `bbr3` parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Bbr3Config {
    /// Initial window in units (C.InitialCwnd; `bbr`'s default, Linux TCP_INIT_CWND).
    pub init_cwnd: u64,
    /// Enter ProbeRTT when no lower RTT was seen for 5 s (§5.3.4).
    pub probe_rtt: bool,
    /// Count as congestion only the loss above the rate the path loses without a queue
    /// ([`congestion`]); `false`: every loss, as the draft.
    pub random_loss: bool,
    /// Window gain of ProbeBW's DOWN, CRUISE and REFILL (the draft's 2).
    pub cwnd_gain: f64,
    /// An RTT sample at most this fraction above the ProbeRTT minimum confirms it (no
    /// ProbeRTT while the path shows no queue); 0: only a lower sample, as the draft.
    pub min_rtt_slack: f64,
    /// Seconds from one bandwidth probe to the next, before the random part (the draft's 2).
    pub probe_wait: f64,
    /// A round whose smallest RTT sample exceeds the minimum by this fraction counts as
    /// congested, as a lossy one does (0: off, the draft).
    pub queue_signal: f64,
    /// Seconds the smallest RTT sample of such a round must also exceed the minimum by: a
    /// standing queue is a delay that matters, not a WiFi MAC's aggregation or a host's
    /// scheduling jitter (0: `queue_signal` alone).
    pub queue_floor: f64,
    /// Consecutive steady rounds that must each keep a standing queue before one counts as
    /// congested (1: every such round).
    pub queue_rounds: u64,
    /// Cut rounds of the queue signal in a row after which a queue that stayed above
    /// `queue_drained` of its largest is taken as not this flow's to drain (a loss-based
    /// flow fills what this one leaves): the cuts are lifted and the signal stands down until
    /// a steady round sees the queue empty (0: never).
    pub queue_patience: u64,
    /// With `queue_patience`: the share of the episode's largest excess delay a cut round's
    /// queue must fall below to count as draining.
    pub queue_drained: f64,
    /// A round is quiet (its losses teach the base rate) also when its largest RTT sample
    /// is within the queue signal's floor of the minimum, not only within
    /// [`congestion::QUIET_RTT`] of it: on a short or aggregating path (WiFi) no round is
    /// within 12.5 %.
    pub quiet_floor: bool,
    /// Add `BBR.extra_acked` (§5.5.9) to the window once the pipe is full
    /// ([`ack_aggregation`]); `false`: left out, as `bbr`.
    pub extra_acked: bool,
    /// The window adds the offload budget (three send quanta) to the BDP multiple, as BBR v1
    /// and `bbr` do, instead of taking the larger of the two (the draft's
    /// `BBRQuantizationBudget`).
    pub offload_sum: bool,
    /// While arrivals come in aggregates ([`bursts`]: a WiFi hop's A-MPDUs), the queue
    /// signal's floor is at least `burst_periods` aggregation periods; `false`: `queue_floor`
    /// alone.
    pub burst_floor: bool,
    /// With `burst_floor`: how many aggregation periods the queue signal's floor is.
    pub burst_periods: f64,
    /// While arrivals come in aggregates ([`bursts`]), the window adds the offload budget as
    /// with `offload_sum`; `false`: only `offload_sum` decides.
    pub burst_window: bool,
}

impl Default for Bbr3Config {
    fn default() -> Self {
        Bbr3Config {
            init_cwnd: 10,
            probe_rtt: true,
            random_loss: false,
            cwnd_gain: CWND_GAIN,
            min_rtt_slack: 0.0,
            probe_wait: 2.0,
            queue_signal: 0.0,
            queue_floor: 0.0,
            queue_rounds: 1,
            queue_patience: 0,
            queue_drained: congestion::QUEUE_DRAINED,
            quiet_floor: false,
            extra_acked: false,
            offload_sum: false,
            burst_floor: false,
            burst_periods: bursts::FLOOR_PERIODS,
            burst_window: false,
        }
    }
}

impl Bbr3Config {
    /// `bbr3-rdtp`, the receivers' default controller: BBRv3 with rdtp's changes
    /// (docs/CONTROLLER.md), each constant chosen from the controller suite
    /// (`tools/suite.sh`), which also lists the rows where it is not yet within its goals.
    pub fn rdtp() -> Self {
        Bbr3Config {
            random_loss: true,
            min_rtt_slack: 0.02,
            queue_signal: 0.1,
            queue_floor: QUEUE_FLOOR,
            queue_patience: congestion::QUEUE_PATIENCE,
            quiet_floor: true,
            burst_floor: true,
            burst_window: true,
            ..Bbr3Config::default()
        }
    }
}

impl Keyed for Bbr3Config {
    const KEYS: &'static [Key<Self>] = &[
        key!(
            init_cwnd,
            Kind::Int { min: 1, max: u32::MAX as u64 },
            "initial window and BDP before an RTT sample, units (the draft's C.InitialCwnd)"
        ),
        key!(probe_rtt, Kind::Bool, "enter ProbeRTT (½ BDP) when no lower RTT was seen for 5 s"),
        key!(
            random_loss,
            Kind::Bool,
            "count as congestion only loss above the rate the path loses without a queue (not the draft)"
        ),
        key!(
            cwnd_gain,
            Kind::Float { min: 1.0, max: 4.0 },
            "window gain of ProbeBW DOWN, CRUISE and REFILL (the draft's 2)"
        ),
        key!(
            min_rtt_slack,
            Kind::Float { min: 0.0, max: 1.0 },
            "an RTT sample within this fraction of the minimum postpones ProbeRTT (0: the draft)"
        ),
        key!(
            queue_signal,
            Kind::Float { min: 0.0, max: 10.0 },
            "a round whose least RTT is this fraction above the minimum is congested (0: off)"
        ),
        key!(
            queue_floor,
            Kind::Float { min: 0.0, max: 1.0 },
            "seconds a round's least RTT must also exceed the minimum by for queue_signal (0: no floor)"
        ),
        key!(
            queue_rounds,
            Kind::Int { min: 1, max: 1000 },
            "consecutive steady rounds with a standing queue before queue_signal counts one as congested"
        ),
        key!(
            queue_patience,
            Kind::Int { min: 0, max: 1000 },
            "queue_signal cuts in a row with the queue above queue_drained of its largest before the signal stands down until the queue empties (0: never)"
        ),
        key!(
            queue_drained,
            Kind::Float { min: 0.0, max: 1.0 },
            "with queue_patience: the share of the episode's largest excess delay the queue must fall below"
        ),
        key!(
            quiet_floor,
            Kind::Bool,
            "with random_loss: a round within the queue_signal floor of the minimum RTT is quiet too (teaches the base loss rate)"
        ),
        key!(
            extra_acked,
            Kind::Bool,
            "add the units arrivals bring in bursts beyond bw (the draft's extra_acked) to the window once the pipe is full"
        ),
        key!(
            offload_sum,
            Kind::Bool,
            "the window is the BDP multiple plus three send quanta, as BBR v1 (the draft: the larger of the two)"
        ),
        key!(
            burst_floor,
            Kind::Bool,
            "while arrivals come in aggregates (WiFi A-MPDUs), the queue_signal floor is at least burst_periods aggregation periods"
        ),
        key!(
            burst_periods,
            Kind::Float { min: 1.0, max: 32.0 },
            "with burst_floor: the queue_signal floor in aggregation periods"
        ),
        key!(
            burst_window,
            Kind::Bool,
            "while arrivals come in aggregates (WiFi A-MPDUs), the window adds the offload budget as offload_sum"
        ),
        key!(
            probe_wait,
            Kind::Float { min: 0.05, max: 10.0 },
            "seconds between bandwidth probes, plus up to half as much at random (the draft's 2 + 0–1)"
        ),
    ];
}

impl ControllerSpec for Bbr3Config {
    fn name(&self) -> &'static str {
        // The defining change names it (as `bbr`'s `wifi` names `bbr-wifi`).
        if self.random_loss { "bbr3-rdtp" } else { "bbr3" }
    }
    fn build(&self, params: CcParams) -> Built {
        Built::Standard(Box::new(Bbr3::new(self.clone(), params)))
    }
}

/// What one arrival tells BBR: the draft's rate sample `RS` (§2.3) plus the connection state
/// it reads.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sample {
    pub now: Time,
    /// RS.delivery_rate, units/s; 0 if the sample is invalid.
    pub delivery_rate: f64,
    /// RS.delivered: units delivered while the arriving unit was outstanding.
    pub delivered: u64,
    /// P.delivered of the arriving unit: C.delivered when it was requested.
    pub prior_delivered: u64,
    /// RS.is_app_limited.
    pub is_app_limited: bool,
    /// RS.rtt.
    pub rtt: Option<Duration>,
    /// RS.newly_acked (1: every unit is its own event).
    pub newly_acked: u64,
    /// RS.newly_lost: units this arrival declared lost.
    pub newly_lost: u64,
    /// RS.tx_in_flight: in flight when the arriving unit's request left, its own units included.
    pub tx_in_flight: u64,
    /// RS.lost: units declared lost since the arriving unit's request left.
    pub lost: u64,
    /// C.inflight after the arrival.
    pub inflight: u64,
}

/// The cookie of a request: in flight when it left (its units included), C.lost then (mod
/// 2³¹), and whether the receiver was application-limited.
fn cookie(tx_in_flight: u64, lost: u64, app_limited: bool) -> u64 {
    (tx_in_flight.min(u64::from(u32::MAX)) << 32) | ((lost & 0x7fff_ffff) << 1) | u64::from(app_limited)
}

/// `(tx_in_flight, lost, app_limited)` of a [`cookie`].
fn uncookie(c: u64) -> (u64, u64, bool) {
    (c >> 32, (c >> 1) & 0x7fff_ffff, c & 1 == 1)
}

/// The `bbr3` controller.
#[derive(Debug)]
pub struct Bbr3 {
    cfg: Bbr3Config,
    params: CcParams,
    rng: Pcg32,
    state: state::State,
    /// C.cwnd, units.
    cwnd: u64,
    /// C.pacing_rate, bytes/s.
    pacing_rate: f64,
    pacing_gain: f64,
    cwnd_gain: f64,
    has_seen_rtt: bool,
    /// A request has left (the min-RTT clocks start then, as `bbr`'s do).
    started: bool,

    // Connection state the draft reads (C.*).
    delivered: u64,
    lost: u64,
    inflight: u64,
    /// Round in which a request last filled the window (C.is_cwnd_limited).
    cwnd_limited_round: Option<u64>,
    /// In flight (its own units included) and application-limitation of the request about to
    /// leave, between `on_send` and `on_request`.
    pending: (u64, bool),

    // Rounds (§5.5.1).
    /// Packet-timed rounds (BBR.round_count, BBR.round_start, BBR.next_round_delivered).
    rounds: RoundCounter,

    // The model (§2.9–2.10, §5.5).
    max_bw: MaxBwFilter,
    /// BBR.bw = min(max_bw, bw_lo), units/s.
    bw: f64,
    /// BBR.bw_shortterm (`bw_lo`), units/s; infinite when unset.
    bw_lo: f64,
    /// BBR.inflight_shortterm (`inflight_lo`), units; `u64::MAX` when unset.
    inflight_lo: u64,
    /// BBR.inflight_longterm (`inflight_hi`), units; `u64::MAX` when unset.
    inflight_hi: u64,
    bw_latest: f64,
    inflight_latest: u64,
    loss_round_start: bool,
    loss_round_delivered: u64,
    is_loss_in_round: bool,
    /// Arrivals of this round that declared losses (Startup's "discontiguous lost ranges").
    loss_events_in_round: u32,
    /// The base loss rate and this round's counts (`random_loss`).
    random_loss: congestion::RandomLoss,
    /// The round that just ended kept a queue throughout (`queue_signal`).
    queue_round: bool,
    /// BBR.extra_acked and its epoch (`extra_acked`).
    extra_acked: ack_aggregation::ExtraAcked,
    /// Bursts of arrivals and the aggregation period (`burst_floor`, `burst_window`).
    bursts: bursts::Bursts,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Time,
    probe_rtt_min_delay: Option<Duration>,
    probe_rtt_min_stamp: Time,
    probe_rtt_expired: bool,

    // Startup's full-pipe estimator (§2.13).
    /// BBR.full_bw, BBR.full_bw_count, BBR.full_bw_now: reset when ProbeBW_UP starts.
    full_pipe: FullPipe,
    /// BBR.full_bw_reached: set once, when Startup fills the pipe (kept apart from
    /// `full_pipe`, which ProbeBW_UP reuses, on purpose: draft §5.3.1.2).
    full_bw_reached: bool,

    // ProbeBW (§2.14).
    cycle: Cycle,

    // Loss recovery and idle restarts.
    prior_cwnd: u64,
    prev_ca_state: CaState,
    /// Round in which the current fast recovery began.
    recovery_round: Option<u64>,
    /// BBR.packet_conservation: in the first round of fast recovery, one unit requested per
    /// unit arrived (§5.6.4.4); it ends once a unit requested after this C.delivered arrives.
    packet_conservation: Option<u64>,
    idle_restart: bool,
    /// Informed start waits for the first min RTT to open the window ([`informed`]).
    informed_window_pending: bool,
}

impl Bbr3 {
    pub fn new(cfg: Bbr3Config, params: CcParams) -> Self {
        let mut b = Bbr3 {
            rng: Pcg32::seed_from_u64(params.seed),
            state: state::State::Startup,
            cwnd: cfg.init_cwnd,
            pacing_rate: 0.0,
            pacing_gain: startup::PACING_GAIN,
            cwnd_gain: startup::CWND_GAIN,
            has_seen_rtt: false,
            started: false,
            delivered: 0,
            lost: 0,
            inflight: 0,
            cwnd_limited_round: None,
            pending: (0, false),
            rounds: RoundCounter::default(),
            max_bw: MaxBwFilter::default(),
            bw: 0.0,
            bw_lo: f64::INFINITY,
            inflight_lo: u64::MAX,
            inflight_hi: u64::MAX,
            bw_latest: 0.0,
            inflight_latest: 0,
            loss_round_start: false,
            loss_round_delivered: 0,
            is_loss_in_round: false,
            loss_events_in_round: 0,
            random_loss: congestion::RandomLoss::default(),
            queue_round: false,
            extra_acked: ack_aggregation::ExtraAcked::default(),
            bursts: bursts::Bursts::default(),
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: Time::ZERO,
            probe_rtt_expired: false,
            full_pipe: FullPipe::default(),
            full_bw_reached: false,
            cycle: Cycle::default(),
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            recovery_round: None,
            packet_conservation: None,
            idle_restart: false,
            informed_window_pending: false,
            cfg,
            params,
        };
        b.init_pacing_rate(None);
        b.enter_startup();
        b
    }

    /// Current state.
    pub fn mode(&self) -> Mode {
        self.state.mode()
    }
    /// BBR.max_bw, units/s.
    pub fn max_bw(&self) -> f64 {
        self.max_bw.get()
    }
    /// BBR.bw, units/s.
    pub fn bw(&self) -> f64 {
        self.bw
    }
    /// BBR.min_rtt.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    /// BBR.inflight_longterm, units (`None`: not set).
    pub fn inflight_hi(&self) -> Option<u64> {
        (self.inflight_hi != u64::MAX).then_some(self.inflight_hi)
    }
    /// BBR.inflight_shortterm, units (`None`: not set).
    pub fn inflight_lo(&self) -> Option<u64> {
        (self.inflight_lo != u64::MAX).then_some(self.inflight_lo)
    }
    /// BBR.full_bw_reached.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// BBR.pacing_gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// The draft's rate sample from the receiver's.
    fn sample(&self, rs: &AckSample) -> Sample {
        let (tx_in_flight, p_lost, cookie_app_limited) = uncookie(rs.cookie);
        Sample {
            now: rs.now,
            delivery_rate: rs.rate.units_per_sec().unwrap_or(0.0),
            delivered: rs.rate.delivered,
            prior_delivered: rs.rate.prior_delivered,
            is_app_limited: rs.rate.is_app_limited || cookie_app_limited,
            rtt: rs.rtt,
            newly_acked: rs.acked,
            newly_lost: rs.losses,
            tx_in_flight,
            lost: (rs.lost_total & 0x7fff_ffff).wrapping_sub(p_lost) & 0x7fff_ffff,
            inflight: rs.inflight,
        }
    }

    /// C.is_cwnd_limited: a request filled the window in this round or the last.
    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited_round.is_some_and(|r| r + 1 >= self.rounds.count())
    }

    /// UpdateModelAndState (§5.2.3).
    fn update_model_and_state(&mut self, s: &Sample) {
        self.update_latest_delivery_signals(s);
        self.update_congestion_signals(s);
        self.update_ack_aggregation(s);
        self.check_full_bw_reached(s);
        self.check_startup_done(s);
        self.check_drain_done(s);
        self.update_probe_bw_cycle_phase(s);
        self.update_min_rtt(s);
        self.check_probe_rtt(s);
        self.advance_latest_delivery_signals(s);
        self.bound_bw_for_model();
    }
}

impl Controller for Bbr3 {
    fn name(&self) -> &'static str {
        ControllerSpec::name(&self.cfg)
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn pacing_rate(&self) -> Option<f64> {
        Some(self.pacing_rate)
    }
    fn aggregation(&self) -> u32 {
        self.send_quantum()
    }
    fn state(&self) -> &'static str {
        self.mode().name()
    }
    fn on_send(&mut self, now: Time, units: u64, inflight: u64, app_limited: bool) {
        if !self.started {
            // OnInit: BBR.min_rtt_stamp = Now() (and ProbeRTT's clock with it).
            self.started = true;
            self.min_rtt_stamp = now;
            self.probe_rtt_min_stamp = now;
            self.cycle.stamp = now;
        }
        self.handle_restart_from_idle(now, inflight, app_limited);
        if inflight + units >= self.cwnd {
            self.cwnd_limited_round = Some(self.rounds.count());
        }
        self.pending = (inflight + units, app_limited);
    }
    fn on_request(&mut self, _req: &RequestInfo<'_>) -> u64 {
        cookie(self.pending.0, self.lost, self.pending.1)
    }
    fn on_ack(&mut self, rs: &AckSample) {
        self.delivered = rs.delivered;
        self.lost = rs.lost_total;
        self.inflight = rs.inflight;
        self.on_recovery_state(rs.ca_state);
        let s = self.sample(rs);
        if s.newly_lost > 0 {
            self.note_loss();
        }
        if !self.has_seen_rtt && rs.srtt.is_some() {
            self.init_pacing_rate(rs.srtt);
        }
        self.update_model_and_state(&s);
        // UpdateControlParameters (§5.2.3); the send quantum is computed when asked for.
        self.set_pacing_rate();
        self.set_cwnd(&s);
        self.open_informed_window();
    }
    fn on_congestion(&mut self, e: &CongestionEvent) {
        self.handle_congestion(e);
    }
    fn informed_start(&mut self, now: Time, bytes_per_sec: f64) -> bool {
        self.start_informed(now, bytes_per_sec)
    }
    fn cwnd_limits(&self) -> bool {
        !self.informed_window_pending // informed.rs: paced only until the first min RTT
    }
    fn wants_app_limited(&self) -> bool {
        self.mode() == Mode::ProbeRtt // HandleProbeRTT: MarkConnectionAppLimited
    }
    fn controls_recovery(&self) -> bool {
        true // §5.6.4.4, cwnd.rs
    }
}
