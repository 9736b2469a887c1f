//! Receiver-based BBR v1 (seed 000 §3.5), a port of Linux `net/ipv4/tcp_bbr.c` in units
//! instead of packets, plus the `bbr-wifi` variant (seed 000 §4.2–4.3, see [`wifi`]).
//!
//! On every arriving unit: update the model (bandwidth filter, gain cycle, full-pipe
//! check, drain check, min-RTT and ProbeRTT, gains), then set
//! `pacing_rate = pacing_gain × BtlBw × 0.99` (eq. 1) and
//! `cwnd = cwnd_gain × BtlBw × RTTmin` + quantization budget (eq. 2), where
//! `BtlBw = max(delivery rate)` over 10 rounds (eq. 6) and `RTTmin = min(rtt)` over 10 s
//! (eq. 7). The state machine is in [`state`] (each state carrying its own data, one
//! checked transition function); one file per state with its gains and exit conditions:
//! [`startup`], [`drain`], [`probe_bw`], [`probe_rtt`]; the window and loss recovery are in
//! [`cwnd`], policer detection in [`lt_bw`]. Both model filters are
//! [`WindowedFilter`](super::windowed_filter::WindowedFilter)s.
//!
//! Not ported: the ACK-aggregation extra window (added to Linux in 5.1; seed 000 ports
//! 4.14/4.19) and the EDT in-network correction (pacing here is per request, so in-flight
//! is used directly).

mod cwnd;
mod drain;
mod informed;
mod lt_bw;
mod probe_bw;
mod probe_rtt;
mod startup;
mod state;
pub mod wifi;

use core::time::Duration;

use rand_core::SeedableRng;
use rand_pcg::Pcg32;

use super::bbr_common::{FullPipe, RoundCounter};
use super::spec::{Key, Keyed, Kind, key};
use super::windowed_filter::{Max, Min, WindowedFilter};
use super::{AckSample, Built, CaState, CcParams, CongestionEvent, Controller, ControllerSpec, aggregation_count};
use crate::time::Time;
use lt_bw::{LtBw, LtInput};
use state::BbrState;
pub(crate) use state::State;
use wifi::RoundRttAverage;

pub use drain::DRAIN_GAIN;
pub use probe_bw::CWND_GAIN;
pub use startup::HIGH_GAIN;
pub use state::Mode;

pub use super::bbr_common::PACING_MARGIN;
/// Bandwidth filter window, in rounds (Linux: CYCLE_LEN + 2).
pub const BW_WINDOW_ROUNDS: u64 = 10;

/// Max delivery rate (units/s) over the last [`BW_WINDOW_ROUNDS`] rounds: Linux's three-sample
/// `minmax_running_max` (seed 000 eq. 6).
type BwFilter = WindowedFilter<f64, u64, Max, 3>;
/// Min RTT over [`probe_rtt::MIN_RTT_WINDOW`]: one sample, replaced by a lower or equal one or
/// by any sample once it is older than the window (Linux `bbr_update_min_rtt`; seed 000 eq. 7).
type MinRttFilter = WindowedFilter<Duration, Time, Min, 1>;
/// The min-RTT filter's value before the first sample (Linux starts `min_rtt_us` at ~0U).
const NO_RTT: Duration = Duration::MAX;

/// BBR parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct BbrConfig {
    /// Apply seed 000 §4.2–4.3 (the `bbr-wifi` controller).
    pub wifi: bool,
    /// Pacing gain of the probing ProbeBW phase (1.25; BBRp uses 1.5 or 2).
    pub probe_bw_gain: f64,
    /// Initial window in units (Linux TCP_INIT_CWND, seed 000's code: 10).
    pub init_cwnd: u64,
    /// Enter ProbeRTT when the min-RTT estimate is 10 s old.
    pub probe_rtt: bool,
    /// Long-term (policer) bandwidth sampling.
    pub lt_bw: bool,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig { wifi: false, probe_bw_gain: 1.25, init_cwnd: 10, probe_rtt: true, lt_bw: true }
    }
}

impl Keyed for BbrConfig {
    const KEYS: &'static [Key<Self>] = &[
        key!(
            init_cwnd,
            Kind::Int { min: 1, max: u32::MAX as u64 },
            "initial window and BDP before an RTT sample, units (Linux TCP_INIT_CWND)"
        ),
        key!(probe_rtt, Kind::Bool, "enter ProbeRTT when the min-RTT estimate is 10 s old (Liu et al. eq. 7)"),
        key!(lt_bw, Kind::Bool, "long-term bandwidth sampling: pace at a policer's rate (Linux bbr_lt_bw_sampling)"),
        key!(wifi, Kind::Bool, "Liu et al. §4.2–4.3: aggregation ×3 under ineq. (9), no window limit in ProbeBW"),
        key!(
            "probe_gain" => probe_bw_gain,
            Kind::Float { min: 1.0, max: 4.0 },
            "pacing gain of ProbeBW's probing phase (BBRp: 1.5 = bbrp_pace 6, 2 = 8)"
        ),
    ];
}

impl ControllerSpec for BbrConfig {
    fn name(&self) -> &'static str {
        BbrConfig::name(self)
    }
    fn build(&self, params: CcParams) -> Built {
        Built::Standard(Box::new(Bbr::new(self.clone(), params)))
    }
}

impl BbrConfig {
    /// The name the receiver reports: `bbr-wifi` with the WiFi changes, else `bbrp` with a
    /// probing gain other than 1.25, else `bbr-orig` with an initial window of 1, else `bbr`.
    pub fn name(&self) -> &'static str {
        if self.wifi {
            "bbr-wifi"
        } else if self.probe_bw_gain != BbrConfig::default().probe_bw_gain {
            "bbrp"
        } else if self.init_cwnd == 1 {
            "bbr-orig"
        } else {
            "bbr"
        }
    }

    /// `bbr-orig`: the original BBR as seed 001 ran it in NDN (S1 §IV-A: min RTT over 10 s,
    /// max delivery rate over 10 rounds, the draft's state machine, "the starting window size
    /// is set to 1 for all schemes").
    pub fn orig() -> Self {
        BbrConfig { init_cwnd: 1, ..Self::default() }
    }

    /// The `bbr-wifi` configuration.
    pub fn wifi() -> Self {
        BbrConfig { wifi: true, ..Self::default() }
    }

    /// BBRp (seed 000 §5.3, ref. [39]): the probing ProbeBW phase paces at `gain`
    /// (1.5 for `bbrp_pace` = 6, 2 for `bbrp_pace` = 8) instead of 1.25.
    pub fn bbrp(gain: f64) -> Self {
        BbrConfig { probe_bw_gain: gain, ..Self::default() }
    }
}

/// The BBR controller.
#[derive(Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    params: CcParams,
    rng: Pcg32,
    state: BbrState,
    cwnd: u64,
    /// Bytes per second.
    pacing_rate: f64,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// Max delivery rate (units/s) over the last 10 rounds.
    bw: BwFilter,
    /// Packet-timed rounds (Linux `rtt_cnt`, `next_rtt_delivered`, `round_start`).
    rounds: RoundCounter,
    min_rtt: MinRttFilter,
    packet_conservation: bool,
    prev_ca_state: CaState,
    prior_cwnd: u64,
    idle_restart: bool,
    /// A request has left: the min-RTT filter's clock started then (Linux `bbr_init` stamps
    /// the min RTT at connection start, not at the clock's origin).
    started: bool,
    /// Startup's full-pipe check (Linux `full_bw_reached`, `full_bw`, `full_bw_cnt`).
    full_pipe: FullPipe,
    has_seen_rtt: bool,
    lt: LtBw,
    delivered: u64,
    lost_total: u64,
    rtt_avg: RoundRttAverage,
    /// Whether inequality (9) held at the last arrival (`bbr-wifi` only).
    eq9: bool,
    /// Informed start waits for the first min-RTT to open the window (see [`informed`]).
    informed_window_pending: bool,
}

impl Bbr {
    pub fn new(cfg: BbrConfig, params: CcParams) -> Self {
        let mut b = Bbr {
            rng: Pcg32::seed_from_u64(params.seed),
            cwnd: cfg.init_cwnd,
            cfg,
            params,
            state: State::Startup,
            pacing_rate: 0.0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            bw: BwFilter::new(BW_WINDOW_ROUNDS, 0, 0.0),
            rounds: RoundCounter::default(),
            min_rtt: MinRttFilter::new(probe_rtt::MIN_RTT_WINDOW, Time::ZERO, NO_RTT),
            packet_conservation: false,
            prev_ca_state: CaState::Open,
            prior_cwnd: 0,
            idle_restart: false,
            started: false,
            full_pipe: FullPipe::default(),
            has_seen_rtt: false,
            lt: LtBw::default(),
            delivered: 0,
            lost_total: 0,
            rtt_avg: RoundRttAverage::default(),
            eq9: false,
            informed_window_pending: false,
        };
        b.init_pacing_rate(None);
        b
    }

    /// Current state.
    pub fn mode(&self) -> Mode {
        self.state.mode()
    }
    /// Windowed max delivery rate, units/s.
    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }
    /// The bandwidth in use: the policed rate if one was detected, else the max filter.
    pub fn bw(&self) -> f64 {
        if self.lt.use_bw { self.lt.bw } else { self.max_bw() }
    }
    /// Min-RTT estimate.
    pub fn min_rtt(&self) -> Option<Duration> {
        Some(self.min_rtt.get()).filter(|&m| m != NO_RTT)
    }
    /// Whether Startup has filled the pipe.
    pub fn full_bw_reached(&self) -> bool {
        self.full_pipe.is_full()
    }
    /// Current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    /// Current ProbeBW phase index (0 = probing phase, 1 = draining phase); `None` outside ProbeBW.
    pub fn cycle_index(&self) -> Option<usize> {
        match &self.state {
            State::ProbeBw(cycle) => Some(cycle.idx),
            _ => None,
        }
    }
    /// Whether `bbr-wifi`'s inequality (9) held at the last arrival.
    pub fn eq9_active(&self) -> bool {
        self.eq9
    }

    fn rate_bytes(&self, bw_units: f64, gain: f64) -> f64 {
        bw_units * f64::from(self.params.unit) * gain * PACING_MARGIN
    }

    /// Initial pacing: `high_gain × cwnd / RTT`, with RTT = SRTT or a nominal 1 ms.
    fn init_pacing_rate(&mut self, srtt: Option<Duration>) {
        let rtt = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                s.max(Duration::from_micros(1))
            }
            None => Duration::from_millis(1),
        };
        let bw = self.cwnd as f64 / rtt.as_secs_f64();
        self.pacing_rate = self.rate_bytes(bw, HIGH_GAIN);
    }

    fn set_pacing_rate(&mut self, bw: f64, gain: f64, srtt: Option<Duration>) {
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate(srtt);
        }
        let rate = self.rate_bytes(bw, gain);
        if self.full_pipe.is_full() || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Aggregation from eq. 8 at the current pacing rate (without the WiFi boost).
    fn base_aggregation(&self) -> u32 {
        aggregation_count(self.pacing_rate, self.params.unit, self.params.max_aggregation)
    }

    /// Round counting and the bandwidth filter (Linux `bbr_update_bw`).
    fn update_bw(&mut self, rs: &AckSample) {
        self.rounds.no_round();
        let Some(bw) = rs.rate.units_per_sec() else { return };
        if self.rounds.on_sample(rs.rate.prior_delivered, rs.delivered) {
            self.packet_conservation = false;
            self.rtt_avg.on_round_start();
        }
        self.lt_bw_sampling(&LtInput::from(rs));
        // App-limited samples only count if they show at least the current estimate.
        if !rs.rate.is_app_limited || bw >= self.max_bw() {
            self.bw.update(self.rounds.count(), bw);
        }
    }

    fn update_wifi(&mut self, rs: &AckSample) {
        if let Some(rtt) = rs.rtt {
            self.rtt_avg.on_rtt(rtt);
        }
        self.eq9 = self.cfg.wifi
            && self.mode() == Mode::ProbeBw
            && match (self.rtt_avg.average(), self.min_rtt()) {
                (Some(avg), Some(min)) => wifi::eq9_holds(avg, min),
                _ => false,
            };
    }

    fn update_model(&mut self, rs: &AckSample) {
        self.update_bw(rs);
        self.update_cycle_phase(rs);
        self.check_full_bw_reached(rs);
        self.check_drain(rs);
        self.update_min_rtt(rs);
        self.update_gains();
        self.update_wifi(rs);
    }
}

impl Controller for Bbr {
    fn name(&self) -> &'static str {
        self.cfg.name()
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn pacing_rate(&self) -> Option<f64> {
        Some(self.pacing_rate)
    }
    fn aggregation(&self) -> u32 {
        let base = self.base_aggregation();
        if self.eq9 { (base * wifi::AGGREGATION_BOOST).min(self.params.max_aggregation).max(base) } else { base }
    }
    fn cwnd_limits(&self) -> bool {
        !(self.cfg.wifi && self.mode() == Mode::ProbeBw)
    }
    fn state(&self) -> &'static str {
        self.mode().name()
    }
    fn on_send(&mut self, now: Time, _units: u64, inflight: u64, app_limited: bool) {
        if !self.started {
            // bbr_init: min_rtt_stamp = now. A receiver whose first request leaves more than
            // 10 s after the clock's origin must not start in ProbeRTT.
            self.started = true;
            self.min_rtt.restamp(now);
        }
        // CA_EVENT_TX_START after an app-limited idle period.
        if inflight == 0 && app_limited {
            self.idle_restart = true;
            match self.mode() {
                Mode::ProbeBw => {
                    let rate = self.rate_bytes(self.bw(), 1.0);
                    if self.full_pipe.is_full() || rate > self.pacing_rate {
                        self.pacing_rate = rate;
                    }
                }
                Mode::ProbeRtt => self.check_probe_rtt_done(now),
                _ => {}
            }
        }
    }
    fn on_ack(&mut self, rs: &AckSample) {
        self.delivered = rs.delivered;
        self.lost_total = rs.lost_total;
        self.update_model(rs);
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, rs.srtt);
        self.set_cwnd(rs, bw, self.cwnd_gain);
        if self.informed_window_pending {
            self.open_informed_window(bw);
        }
    }
    fn on_congestion(&mut self, e: &CongestionEvent) {
        self.handle_congestion(e);
    }
    fn wants_app_limited(&self) -> bool {
        self.mode() == Mode::ProbeRtt
    }
    fn controls_recovery(&self) -> bool {
        true // packet conservation and restore, cwnd.rs
    }
    fn informed_start(&mut self, now: Time, bytes_per_sec: f64) -> bool {
        self.start_informed(now, bytes_per_sec)
    }
}

#[cfg(test)]
mod tests;
