//! `sirc`: SIRC as seed 001 describes it (S1 §IV-A, §V; ref. [5], Amadeo et al., "Transport
//! layer design for named data wireless networking", INFOCOM WKSHPS 2014).
//!
//! What S1 says: "SIRC follows AIMD initially until 10 inter-data gap samples are collected,
//! it then regulates interest sending based on inter-data gap samples"; "a consumer paces the
//! interests based on inter-data gaps. When data arrives more frequently, the interests are
//! pumped out more quickly"; it is "totally reactive to the data arrival rate" and does not
//! probe; S1 implemented it "per file flow" rather than per path. [5] is not available here,
//! so everything else is a choice, listed here:
//!
//! 1. **One flow per object** (S1's own choice): one gap estimate and one window per receiver,
//!    whoever serves the units (origin or a router's store).
//! 2. **Phase 1, AIMD**: ndnget's AIMD as our `aimd` (slow start `+1`, then `+1/⌊cwnd⌋` per
//!    unit; on loss `×β` (0.5), at most once per window), unpaced, initial window 1 (S1: "the
//!    starting window size is set to 1 for all schemes").
//! 3. **An inter-data gap (IDG) sample** is the time between the arrivals of two units that
//!    were requested one right after the other (same or consecutive first-time requests). A
//!    gap across a lost unit, a re-request or an idle period is not a sample: it would measure
//!    the loss or our own silence, not how the network spaces data. (Were every gap a sample,
//!    pacing at the measured gap under random loss p would request at (1 − p) of the arrival
//!    rate, round after round, and the flow would dwindle.)
//! 4. **The switch**: after `gaps` (10) samples; the gap estimate starts as their mean.
//! 5. **Phase 2, IDG pacing**: the estimate is an EWMA of the samples (weight `gap_weight`,
//!    1/8); each request may leave `gap × units / gap_gain` after the previous one (release
//!    times, [`Controller::release_time`]), `gap_gain` = 1.125. Pacing at exactly the gap
//!    makes every rate a fixed point — data arrive as fast as they are asked for, so the gap
//!    confirms itself — and the flow would stay at whatever rate it had when it switched
//!    (measured: 3.6 Mbit/s on a 100 Mbit/s path, for good). Asking a little faster than
//!    data arrives lets the rate follow the arrivals up to the bottleneck, whose spacing of
//!    the data then sets the gap. Nothing else probes: as S1 says, SIRC reacts to the
//!    arrival rate, with no BBR-like cycle.
//! 6. **The window stays** as an upper bound on outstanding units in phase 2, and keeps
//!    adapting as in phase 1 (additive increase per unit, ×β on loss once per window): over
//!    WiFi, data arrives in A-MPDU bursts whose inner gaps are microseconds, and pacing at
//!    such a gap with nothing else in force would flood the AP's queue.
//! 7. **Loss detection** is seed 000's (fast re-request + RFC 6298 timer), as for `aimd`;
//!    re-requests go first, as ndnget's.

use core::time::Duration;

use super::spec::{Key, Keyed, Kind, key};
use super::{AckSample, Built, CcParams, CongestionEvent, Controller, ControllerSpec, RequestInfo, aggregation_count};
use crate::time::Time;

/// Cookie bit marking a re-request (the rest is the request's sequence number).
const REREQUEST: u64 = 1 << 63;

/// SIRC parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct SircConfig {
    /// Initial window in units.
    pub init_cwnd: f64,
    /// Additive increase step (AIMD).
    pub step: f64,
    /// Multiplicative decrease factor (AIMD).
    pub beta: f64,
    /// IDG samples before pacing by the gap (S1: 10).
    pub gaps: u32,
    /// EWMA weight of a new IDG sample.
    pub gap_weight: f64,
    /// Requests leave every gap / gap_gain.
    pub gap_gain: f64,
}

impl Default for SircConfig {
    fn default() -> Self {
        SircConfig { init_cwnd: 1.0, step: 1.0, beta: 0.5, gaps: 10, gap_weight: 0.125, gap_gain: 1.125 }
    }
}

impl Keyed for SircConfig {
    const KEYS: &'static [Key<Self>] = &[
        key!(init_cwnd, Kind::Float { min: 1.0, max: 1e9 }, "initial window, units"),
        key!(step, Kind::Float { min: 1e-3, max: 1e3 }, "additive increase of the AIMD window"),
        key!(beta, Kind::Float { min: 0.0, max: 1.0 }, "multiplicative decrease of the AIMD window"),
        key!(
            gaps,
            Kind::Int { min: 1, max: 1_000_000 },
            "inter-data gap samples before pacing by the gap (Hu et al.: 10)"
        ),
        key!(gap_weight, Kind::Float { min: 1e-6, max: 1.0 }, "EWMA weight of an inter-data gap sample"),
        key!(gap_gain, Kind::Float { min: 0.1, max: 10.0 }, "requests leave every gap / gap_gain"),
    ];
}

impl ControllerSpec for SircConfig {
    fn name(&self) -> &'static str {
        "sirc"
    }
    fn build(&self, params: CcParams) -> Built {
        Built::Standard(Box::new(Sirc::new(self.clone(), params)))
    }
}

/// The previous arrival, for gap samples.
#[derive(Clone, Copy, Debug)]
struct LastArrival {
    at: Time,
    /// Sequence number of the request it answered.
    request: u64,
}

/// The SIRC controller.
#[derive(Debug)]
pub struct Sirc {
    cfg: SircConfig,
    params: CcParams,
    cwnd: f64,
    ssthresh: f64,
    srtt: Option<Duration>,
    next_request: u64,
    last_arrival: Option<LastArrival>,
    /// Samples so far, and their sum until the switch.
    samples: u32,
    sum_secs: f64,
    /// The gap estimate, once pacing by it.
    gap: Option<Duration>,
    /// The last request: when, and how many units.
    last_request: Option<(Time, u64)>,
}

impl Sirc {
    pub fn new(cfg: SircConfig, params: CcParams) -> Self {
        Sirc {
            cwnd: cfg.init_cwnd.max(1.0),
            cfg,
            params,
            ssthresh: f64::INFINITY,
            srtt: None,
            next_request: 0,
            last_arrival: None,
            samples: 0,
            sum_secs: 0.0,
            gap: None,
            last_request: None,
        }
    }

    /// The inter-data gap requests are paced by (phase 2), if switched.
    pub fn gap(&self) -> Option<Duration> {
        self.gap
    }
    /// IDG samples taken.
    pub fn samples(&self) -> u32 {
        self.samples
    }

    fn on_gap(&mut self, g: Duration) {
        self.samples = self.samples.saturating_add(1);
        match self.gap {
            Some(cur) => {
                let w = self.cfg.gap_weight;
                self.gap = Some(cur.mul_f64(1.0 - w) + g.mul_f64(w));
            }
            None => {
                self.sum_secs += g.as_secs_f64();
                if self.samples >= self.cfg.gaps {
                    self.gap = Some(Duration::from_secs_f64(self.sum_secs / f64::from(self.samples)));
                }
            }
        }
    }
}

impl Controller for Sirc {
    fn name(&self) -> &'static str {
        "sirc"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd.floor().max(1.0) as u64
    }
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    fn aggregation(&self) -> u32 {
        let unit = f64::from(self.params.unit);
        let rate = match (self.gap, self.srtt) {
            (Some(g), _) if !g.is_zero() => unit * self.cfg.gap_gain / g.as_secs_f64(),
            (None, Some(s)) if !s.is_zero() => self.cwnd * unit / s.as_secs_f64(),
            _ => return 1,
        };
        aggregation_count(rate, self.params.unit, self.params.max_aggregation)
    }
    fn state(&self) -> &'static str {
        match self.gap {
            Some(_) => "idg",
            None if self.cwnd < self.ssthresh => "slow_start",
            None => "congestion_avoidance",
        }
    }
    fn on_request(&mut self, req: &RequestInfo<'_>) -> u64 {
        self.last_request = Some((req.now, req.units.len() as u64));
        let seq = self.next_request;
        self.next_request += 1;
        if req.retransmission { seq | REREQUEST } else { seq }
    }
    fn release_time(&self) -> Option<Time> {
        let gap = self.gap?;
        let (at, units) = self.last_request?;
        Some(at + (gap * u32::try_from(units).unwrap_or(u32::MAX)).div_f64(self.cfg.gap_gain))
    }
    fn on_ack(&mut self, s: &AckSample) {
        self.srtt = s.srtt;
        // An IDG sample: this unit and the previous arrival answered the same or consecutive
        // first-time requests (choice 3).
        if s.cookie & REREQUEST == 0 {
            if let Some(prev) = self.last_arrival
                && (s.cookie == prev.request || s.cookie == prev.request + 1)
            {
                self.on_gap(s.now - prev.at);
            }
            self.last_arrival = Some(LastArrival { at: s.now, request: s.cookie });
        } else {
            self.last_arrival = None;
        }
        for _ in 0..s.acked {
            if self.cwnd < self.ssthresh {
                self.cwnd += self.cfg.step;
            } else {
                self.cwnd += self.cfg.step / self.cwnd.floor().max(1.0);
            }
        }
    }
    fn on_congestion(&mut self, e: &CongestionEvent) {
        if !e.first_in_window {
            return;
        }
        self.ssthresh = (self.cwnd * self.cfg.beta).max(2.0);
        self.cwnd = self.ssthresh;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CaState, LossKind, RateSample};

    fn p() -> CcParams {
        CcParams { unit: 1000, max_aggregation: 64, seed: 0 }
    }

    fn ack(now: Time, cookie: u64) -> AckSample {
        AckSample {
            now,
            unit: 0,
            source: crate::node::ServedBy::default(),
            cookie,
            delivered: 1,
            acked: 1,
            rate: RateSample { delivered: 1, interval: None, prior_delivered: 0, is_app_limited: false },
            rtt: None,
            srtt: Some(Duration::from_millis(50)),
            losses: 0,
            lost_total: 0,
            prior_inflight: 1,
            inflight: 0,
            ca_state: CaState::Open,
        }
    }

    fn request(s: &mut Sirc, now: Time, retransmission: bool) -> u64 {
        s.on_request(&RequestInfo { now, units: &[0], retransmission })
    }

    #[test]
    fn aimd_until_ten_gaps_then_paced_by_their_mean_then_an_ewma() {
        let mut s = Sirc::new(SircConfig::default(), p());
        assert_eq!((s.cwnd(), s.state(), s.release_time()), (1, "slow_start", None));
        let cookies: Vec<u64> = (0..20).map(|i| request(&mut s, Time::from_millis(i), false)).collect();
        assert_eq!(s.release_time(), None, "unpaced before the switch");
        // Arrivals 2 ms apart: the first gives no gap, the next nine give nine.
        for (i, &c) in cookies.iter().take(10).enumerate() {
            s.on_ack(&ack(Time::from_millis(100 + 2 * i as u64), c));
        }
        assert_eq!((s.samples(), s.gap()), (9, None));
        assert_eq!(s.cwnd(), 11, "slow start: +1 per unit");
        // The tenth gap (4 ms) switches: the mean of 9 × 2 ms and 4 ms is 2.2 ms.
        s.on_ack(&ack(Time::from_millis(122), cookies[10]));
        assert_eq!(s.samples(), 10);
        assert_eq!(s.gap(), Some(Duration::from_micros(2200)));
        assert_eq!(s.state(), "idg");
        // Requests are released one gap / 1.125 apart: 2.2 ms / 1.125 = 1.955 ms.
        request(&mut s, Time::from_millis(200), false);
        assert_eq!(s.release_time(), Some(Time::from_nanos(201_955_556)));
        // Then an EWMA: a 10.2 ms gap moves it by 1/8 of the difference, to 3.2 ms.
        s.on_ack(&ack(Time::from_micros(132_200), cookies[11]));
        assert_eq!(s.gap(), Some(Duration::from_micros(3200)));
    }

    #[test]
    fn no_gap_across_losses_rerequests_or_unrelated_requests() {
        let mut s = Sirc::new(SircConfig::default(), p());
        let c: Vec<u64> = (0..10).map(|i| request(&mut s, Time::from_millis(i), false)).collect();
        let rr = request(&mut s, Time::from_millis(20), true);
        s.on_ack(&ack(Time::from_millis(100), c[0]));
        s.on_ack(&ack(Time::from_millis(101), c[2])); // c[1] was lost: not consecutive
        s.on_ack(&ack(Time::from_millis(102), rr)); // a re-request
        s.on_ack(&ack(Time::from_millis(103), c[3])); // follows the re-request: no pair
        assert_eq!(s.samples(), 0);
        s.on_ack(&ack(Time::from_millis(104), c[4]));
        assert_eq!(s.samples(), 1);
    }

    #[test]
    fn window_halves_once_per_window_in_both_phases() {
        let mut s = Sirc::new(SircConfig { init_cwnd: 20.0, ..SircConfig::default() }, p());
        let ev = |first| CongestionEvent { now: Time::ZERO, kind: LossKind::Fast, inflight: 0, first_in_window: first };
        s.on_congestion(&ev(true));
        assert_eq!(s.cwnd(), 10);
        s.on_congestion(&ev(false));
        assert_eq!(s.cwnd(), 10);
        assert_eq!(s.state(), "congestion_avoidance");
    }
}
