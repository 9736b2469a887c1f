//! `bbr-cd`: BBR-CD, seed 001's BBR-guided congestion control for data fetching (S1 §III).
//!
//! S1 Fig. 2's four components, and where they are:
//! * **BDP Estimator** ([`estimator`]): `RTprop` = the *average* RTT over a window
//!   `W = β × (latest average RTT)` (β = 8), `BtlBw` = the average delivery rate over W, and
//!   δ = the standard deviation of the RTTs over W (S1 §III-B).
//! * **Loss Detector** ([`crate::recovery::bbr_cd`]): a unit requested at T is lost if not received by
//!   `T + RTprop + α·δ` (α = 10), instead of seed 000's fast re-request and RFC 6298 timer; it
//!   is built with the controller ([`ControllerSpec::build`]) and reads its threshold from
//!   [`Controller::loss_threshold`] at every call. A unit's later
//!   requests wait 2, 4, … thresholds (`backoff`, a choice: S1 is silent on it, see [`crate::recovery::bbr_cd`]).
//! * **Inflight Controller** ([`state`], one file per state: [`startup`], [`drain`],
//!   [`probe_bw`], [`probe_rtt`]): `cwnd = cwnd_gain × BtlBw × RTprop + quanta` with
//!   `quanta` = 3 units (S1 §III-B), gains set by the state; initial window 1 (§III-C a).
//! * **Interest Scheduler**: pacing at `pacing_gain × BtlBw` (the receiver's pacer spaces
//!   requests by unit / pacing rate), and first-time requests before re-requests
//!   ([`Controller::new_units_first`]; S1 §IV-D: "it prioritizes the transmission of the
//!   initial interests over retransmissions").
//!
//! **One sample per unit** (S1 §III-B: every Data gives an RTT and a delivery-rate sample;
//! an NDN consumer sends one Interest per Data): rdtp requests carry several units when the
//! pacing rate is high (seed 000 eq. 8, up to 64), and the receiver samples only the first
//! unit of each request (later ones also carry the burst's serialisation, which biases
//! BBR's min filter). BBR-CD needs them all: its Loss Detector times *every* unit from its
//! request, so its threshold must describe that delay. Sampled from the first units only,
//! δ missed the spread within a burst, and the later units of a burst passed `RTprop + α·δ`
//! while still on their way (harness, 100 Mbit/s / 5 ms / 1 BDP, 8 units a request: 47 902
//! units declared lost for 11 594 queue drops). The request's time travels in the cookie
//! ([`Controller::on_request`]), so each unit's RTT is taken from its own request.
//!
//! **RTT filtering** (S1 §III-B): no RTT or delivery-rate sample from a re-requested unit
//! (the request cookie marks re-requests; an original answered late is as ambiguous as the
//! re-request) and none from a unit served by the receiver's own cache. rdtp receivers have
//! no cache of their own; a receiver fetching through a caching router *on its own host* (as
//! an NDN consumer through its local NFD) says so with `local_cache=true`, and then units that
//! router's store serves (hops 0, cached) give no sample. Units from the AP's or any other
//! router's store are samples like any other: averaging over both is the point of BBR-CD.
//!
//! Choices S1 leaves open, each documented where it is made: delivery-rate samples taken
//! while application-limited are left out (as BBR does; otherwise ProbeRTT's 4 units/s would
//! pull BtlBw down), but Startup's plateau check counts application-limited rounds
//! ([`startup`]); losses do not change the window (S1 reacts to them only by re-requesting
//! and, when samples stop, ProbeRTT), nor does the receiver's loss window after an expiry
//! ([`Controller::controls_recovery`]); S1's "next send time = now() + packet_size/pacing_rate
//! after each data arrival or timeout" is the pacing interval between requests, recomputed
//! at every arrival and timeout from the current rate but only ever moved earlier
//! ([`Controller::retime_pacing`]) — re-anchoring it at `now()` every arrival would starve the
//! sender whenever data arrives faster than that interval (Drain, the 3/4 phase), and never
//! recomputing it would hold the first request after ProbeRTT for ProbeRTT's 250 ms, long
//! enough (W is 8 RTTs) to fall back into ProbeRTT for good; the delivery rate is S1's
//! (units delivered since the request over its RTT, [`delivery_rate`]), not BBR's; averages
//! change only from windows of at least `min_samples` samples, and a window is long enough
//! to expect twice that many at BtlBw ([`estimator`]); no
//! delivery-rate sample from a unit in flight during ProbeRTT ([`probe_rtt`]); quanta is 3 *requests* of the current aggregation (3 units
//! at S1's 8600-byte packets, where requests carry one unit); ProbeRTT's entry and exit are
//! explained in [`probe_rtt`].

mod drain;
pub mod estimator;
mod probe_bw;
mod probe_rtt;
mod startup;
mod state;

use rand_core::SeedableRng;
use rand_pcg::Pcg32;

use super::bbr_common::{FullPipe, RoundCounter};
use super::spec::{Key, Keyed, Kind, key};
use super::{AckSample, Built, CcParams, CongestionEvent, Controller, ControllerSpec, RequestInfo, aggregation_count};
use crate::recovery::BbrCdLoss;
use crate::time::Time;
use estimator::BdpEstimator;
use state::State;

pub use crate::cc::bbr::Mode;

/// Cookie bit of a re-request ([`Controller::on_request`]).
const REREQUEST: u64 = 1;
/// Cookie bit saying the bits above it hold the request's time in nanoseconds.
const SENT_AT: u64 = 2;

/// The cookie of a request that left at `now`.
fn cookie(now: Time, retransmission: bool) -> u64 {
    (now.as_nanos() << 2) | SENT_AT | if retransmission { REREQUEST } else { 0 }
}

/// When the request a cookie belongs to left, if it says.
fn cookie_sent_at(c: u64) -> Option<Time> {
    (c & SENT_AT != 0).then(|| Time::from_nanos(c >> 2))
}

/// BBR-CD's parameters (S1's values by default).
#[derive(Clone, Debug, PartialEq)]
pub struct BbrCdConfig {
    /// β: the estimator's window is β average RTTs (S1 §III-B: 8 for 802.11n).
    pub beta: f64,
    /// α: a unit is lost after RTprop + α·δ (S1 §III-B: 10).
    pub alpha: f64,
    /// Startup gain (S1 §III-C a: 2.885).
    pub high_gain: f64,
    /// Window headroom in requests (S1 §III-B: 3 packets).
    pub quanta: u64,
    /// Initial window in units (S1 §III-C a: 1).
    pub init_cwnd: u64,
    /// ProbeRTT's request rate k, units per second (S1 §III-C d: 4).
    pub probe_rtt_rate: f64,
    /// Arrivals over W below which ProbeRTT begins, and after which it ends (S1: 4 RTT
    /// samples; see [`probe_rtt`] for why every arrival counts); also the samples a window
    /// needs to change the estimator's averages ([`estimator`]).
    pub min_samples: u32,
    /// First-time requests before re-requests (S1 §IV-D).
    pub new_first: bool,
    /// The first-hop router runs on the receiver's host: its store's units give no samples.
    pub local_cache: bool,
    /// A unit's k-th request waits 2^(k−1) loss thresholds ([`crate::recovery::bbr_cd`]; S1 is silent on units
    /// lost more than once).
    pub backoff: bool,
}

impl Default for BbrCdConfig {
    fn default() -> Self {
        BbrCdConfig {
            beta: 8.0,
            alpha: 10.0,
            high_gain: 2.885,
            quanta: 3,
            init_cwnd: 1,
            probe_rtt_rate: 4.0,
            min_samples: 4,
            new_first: true,
            local_cache: false,
            backoff: true,
        }
    }
}

impl Keyed for BbrCdConfig {
    const KEYS: &'static [Key<Self>] = &[
        key!(
            beta,
            Kind::Float { min: 1.0, max: 1000.0 },
            "window W = beta × average RTT (Hu et al. §III-B), at least 2 × min_samples units at BtlBw"
        ),
        key!(
            alpha,
            Kind::Float { min: 0.0, max: 1000.0 },
            "lost after RTprop + alpha × RTT std dev (Hu et al. §III-B)"
        ),
        key!(high_gain, Kind::Float { min: 1.0, max: 10.0 }, "Startup pacing and window gain (Hu et al. §III-C a)"),
        key!(quanta, Kind::Int { min: 0, max: 1000 }, "window headroom, requests (Hu et al. §III-B: 3 packets)"),
        key!(init_cwnd, Kind::Int { min: 1, max: u32::MAX as u64 }, "initial window, units (Hu et al. §III-C a)"),
        key!(
            "probe_rtt_rate" => probe_rtt_rate,
            Kind::Float { min: 0.1, max: 1e6 },
            "ProbeRTT request rate k, units/s (Hu et al. §III-C d)"
        ),
        key!(
            min_samples,
            Kind::Int { min: 1, max: 1_000_000 },
            "arrivals over W below which ProbeRTT starts, after which it ends, and samples W needs to change the averages (Hu et al. §III-C d)"
        ),
        key!(new_first, Kind::Bool, "first-time requests before re-requests (Hu et al. §IV-D)"),
        key!(
            local_cache,
            Kind::Bool,
            "the first-hop router is on this host: no samples from its store (Hu et al. §III-B)"
        ),
        key!(backoff, Kind::Bool, "a unit's k-th request waits 2^(k-1) loss thresholds (Hu et al. are silent on it)"),
    ];
}

impl ControllerSpec for BbrCdConfig {
    fn name(&self) -> &'static str {
        "bbr-cd"
    }
    /// BBR-CD with its Loss Detector (S1 Fig. 2), which reads the controller's threshold
    /// ([`Controller::loss_threshold`]).
    fn build(&self, params: CcParams) -> Built {
        Built::Detector(Box::new(BbrCd::new(self.clone(), params)), Box::new(BbrCdLoss::new(self.backoff)))
    }
}

/// The BBR-CD controller.
#[derive(Debug)]
pub struct BbrCd {
    cfg: BbrCdConfig,
    params: CcParams,
    rng: Pcg32,
    state: State,
    est: BdpEstimator,
    /// `RTprop + α·δ` for the Loss Detector ([`Controller::loss_threshold`]), once there is one.
    threshold: Option<core::time::Duration>,
    cwnd: u64,
    /// Bytes per second; `None` until there is a BtlBw.
    pacing_rate: Option<f64>,
    // Round counting (BBR's, by delivered units) for Startup's plateau check.
    rounds: RoundCounter,
    full_pipe: FullPipe,
    last_probe_rtt_exit: Option<Time>,
}

impl BbrCd {
    pub fn new(cfg: BbrCdConfig, params: CcParams) -> Self {
        BbrCd {
            rng: Pcg32::seed_from_u64(params.seed),
            est: BdpEstimator::new(cfg.beta, cfg.min_samples as usize, cfg.probe_rtt_rate),
            cwnd: cfg.init_cwnd.max(1),
            cfg,
            params,
            state: State::Startup,
            threshold: None,
            pacing_rate: None,
            rounds: RoundCounter::default(),
            full_pipe: FullPipe::default(),
            last_probe_rtt_exit: None,
        }
    }

    /// Current state.
    pub fn mode(&self) -> Mode {
        self.state.mode()
    }
    /// The BDP Estimator.
    pub fn estimator(&self) -> &BdpEstimator {
        &self.est
    }
    /// Whether Startup has filled the pipe.
    pub fn full_bw_reached(&self) -> bool {
        self.full_pipe.is_full()
    }

    /// Slide the estimator's window to `now`, publish the loss threshold, check ProbeRTT entry.
    fn refresh(&mut self, now: Time) {
        self.est.update(now);
        if let (Some(rtprop), Some(delta)) = (self.est.rtprop(), self.est.delta()) {
            self.threshold = Some(published(rtprop + delta.mul_f64(self.cfg.alpha)));
        }
        self.check_probe_rtt_entry(now);
    }

    /// `pacing_gain × BtlBw` in bytes/s, or ProbeRTT's k units/s.
    fn pacing_rate_bytes(&self, pacing_gain: f64) -> Option<f64> {
        let unit = f64::from(self.params.unit);
        if matches!(self.state, State::ProbeRtt(_)) {
            return Some(self.cfg.probe_rtt_rate * unit);
        }
        self.est.btlbw().map(|bw| pacing_gain * bw * unit)
    }

    /// `gain × BDP + quanta` in units (S1 §III-B), once there is a BDP.
    fn inflight_target(&self, gain: f64) -> u64 {
        match self.est.bdp() {
            Some(bdp) => ((gain * bdp).ceil() as u64 + self.cfg.quanta * u64::from(self.aggregation())).max(1),
            None => self.cwnd,
        }
    }

    /// Set the window and pacing rate from the estimates and the state's gains.
    fn set_knobs(&mut self) {
        let (pacing_gain, cwnd_gain) = self.gains();
        self.pacing_rate = self.pacing_rate_bytes(pacing_gain);
        self.cwnd = self.inflight_target(cwnd_gain);
    }

    /// Round counting (Linux `bbr_update_bw`'s): a round ends when a unit requested after the
    /// previous round's end is delivered.
    fn update_round(&mut self, rs: &AckSample) {
        if rs.rate.interval.is_some() {
            self.rounds.on_sample(rs.rate.prior_delivered, rs.delivered);
        } else {
            self.rounds.no_round();
        }
    }
}

/// The threshold as the Loss Detector gets it: whole nanoseconds, at least 1 ns (a zero
/// threshold would read as none), at most `u64::MAX` ns.
fn published(d: core::time::Duration) -> core::time::Duration {
    core::time::Duration::from_nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1))
}

/// S1 §III-B's delivery rate of one data: "the ratio between the amount of data delivered and
/// the time elapsed" over "the interval between interest sent and data received", i.e. the
/// units delivered since this unit was requested (itself included) over its RTT, in units/s.
///
/// Not BBR's `max(send_elapsed, ack_elapsed)` interval: averaged (S1's BtlBw is a mean, not
/// BBR's max), the max of two noisy intervals is biased low, every sample a little below the
/// rate the flow is paced at, and the estimate ratchets down cycle after cycle (measured over
/// 802.11n with 8600-byte units: from 50 to 24 Mbit/s within 2 s, then stuck there).
pub fn delivery_rate(delivered: u64, rtt: core::time::Duration) -> Option<f64> {
    let secs = rtt.as_secs_f64();
    (secs > 0.0 && delivered > 0).then(|| delivered as f64 / secs)
}

impl Controller for BbrCd {
    fn name(&self) -> &'static str {
        "bbr-cd"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn pacing_rate(&self) -> Option<f64> {
        self.pacing_rate
    }
    fn aggregation(&self) -> u32 {
        self.pacing_rate.map_or(1, |r| aggregation_count(r, self.params.unit, self.params.max_aggregation))
    }
    fn state(&self) -> &'static str {
        self.mode().name()
    }
    fn on_send(&mut self, now: Time, _units: u64, _inflight: u64, _app_limited: bool) {
        self.refresh(now);
        self.set_knobs();
    }
    fn on_request(&mut self, req: &RequestInfo<'_>) -> u64 {
        cookie(req.now, req.retransmission)
    }
    fn on_ack(&mut self, rs: &AckSample) {
        // S1 §III-B RTT filtering: nothing from re-requested units or the own cache.
        let rerequested = rs.cookie & REREQUEST != 0;
        let own_cache = self.cfg.local_cache && rs.source.cached && rs.source.hops == 0;
        let admitted = !(rerequested || own_cache);
        self.est.on_arrival(rs.now);
        self.on_probe_rtt_arrival(rs.now);
        // Every unit is a sample, timed from its request, not only the first unit of each
        // request the receiver samples ("One sample per unit" in the module docs).
        let rtt = rs.rtt.or_else(|| cookie_sent_at(rs.cookie).map(|t| rs.now.saturating_since(t)));
        if admitted && let Some(rtt) = rtt {
            self.est.on_rtt(rs.now, rtt);
            if !rs.rate.is_app_limited
                && !self.overlaps_probe_rtt(rs.now.saturating_sub(rtt))
                && let Some(bw) = delivery_rate(rs.rate.delivered, rtt)
            {
                self.est.on_rate(rs.now, bw);
            }
        }
        self.update_round(rs);
        self.refresh(rs.now);
        self.check_full_bw_reached(rs);
        self.check_drain(rs);
        self.update_cycle_phase(rs);
        self.set_knobs();
    }
    fn on_congestion(&mut self, e: &CongestionEvent) {
        // Losses do not shrink the window (S1 reacts by re-requesting; if samples stop
        // coming, ProbeRTT). The timeout is an event the scheduler runs at (§III-C).
        self.refresh(e.now);
        self.set_knobs();
    }
    /// The loss threshold `RTprop + α·δ` (S1 §III-B), once there is one.
    fn loss_threshold(&self) -> Option<core::time::Duration> {
        self.threshold
    }
    fn new_units_first(&self) -> bool {
        self.cfg.new_first
    }
    fn controls_recovery(&self) -> bool {
        // S1 §III: a loss only makes BBR-CD re-request; its window stays `cwnd_gain × BDP +
        // quanta` and every request, re-requests included, leaves paced at `pacing_gain ×
        // BtlBw`, so lost units cannot go out in a burst. The receiver's loss window
        // (RFC 5681 §3.1's, for window controllers after a retransmission timeout) is not
        // BBR-CD's: applied after each per-unit expiry, it held in-flight at in-flight + 1
        // after Startup's overshoot, the delivery-rate samples of that slow start dragged the
        // BtlBw average down, and the flow left Startup at a fraction of the path
        // (harness, 1 Gbit/s / 100 ms / 1 BDP: BtlBw ≈ 280 Mbit/s, 31 % utilisation).
        true
    }
    fn retime_pacing(&self) -> bool {
        true // S1 §III-B: the next send time is computed after each arrival or timeout
    }
    fn wants_app_limited(&self) -> bool {
        matches!(self.state, State::ProbeRtt(_))
    }
}

#[cfg(test)]
mod tests;
