//! `cubic`: ndnget's CUBIC pipeline (ndn-tools `PipelineInterestsCubic`, after RFC 8312 /
//! RFC 9438), unpaced; seed 001 compares BBR-CD with it (S1 §IV-A).
//!
//! * Slow start: `cwnd += 1` per unit while `cwnd < ssthresh`.
//! * Congestion avoidance, per unit: with `t` the time since the last decrease,
//!   `K = ∛(W_max(1 − β)/C)`, `W_cubic(t) = C(t − K)³ + W_max` (RFC 9438 eqs. 1–2) and the
//!   Reno-friendly estimate `W_est = W_max·β + 3(1 − β)/(1 + β) · t/SRTT`,
//!   `cwnd += max(0, max(W_cubic, W_est) − cwnd) / cwnd`.
//! * On loss (at most once per window unless `disable_cwa`): fast convergence (a new
//!   `W_max` below the previous one becomes `cwnd(1 + β)/2`), `ssthresh = max(init_cwnd,
//!   cwnd·β)`, `cwnd = ssthresh`.
//! * Loss detection: ndnget's per-unit retransmission timers with ndnget's RTT estimator
//!   (gains per round trip), no fast re-request ([`crate::recovery::NdngetTimers`];
//!   `rto_only=false` uses seed 000's instead). With ndnget's RTO set `--rto-k 8` (the
//!   receiver's, not a controller key).
//!
//! Defaults are ndnget's (`--init-cwnd 2`, `--cubic-beta 0.7`, C = 0.4, conservative window
//! adaptation), except that fast convergence is on: issue 8 asks for it, while ndncatchunks'
//! `--fast-conv` switch is off unless given. What it shares with `aimd` (window, threshold,
//! conservative adaptation, loss detection) is [`super::ndnget::Pipeline`].

use core::time::Duration;

use super::ndnget::Pipeline;
use super::spec::{Key, Keyed, Kind, key};
use super::{AckSample, Built, CcParams, CongestionEvent, Controller, ControllerSpec};
use crate::time::Time;

/// CUBIC parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct CubicConfig {
    /// Initial window in units (ndnget `--init-cwnd`).
    pub init_cwnd: f64,
    /// Initial slow-start threshold in units (ndnget `--init-ssthresh`; inf: until the first loss).
    pub init_ssthresh: f64,
    /// Multiplicative decrease factor β (ndnget `--cubic-beta`).
    pub beta: f64,
    /// Cubic scaling constant C (ndnget: 0.4).
    pub c: f64,
    /// Fast convergence (ndnget `--fast-conv`).
    pub fast_conv: bool,
    /// Decrease on every loss event, not once per window (ndnget `--disable-cwa`).
    pub disable_cwa: bool,
    /// Loss only by per-unit retransmission timers, as ndnget.
    pub rto_only: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            init_cwnd: 2.0,
            init_ssthresh: f64::INFINITY,
            beta: 0.7,
            c: 0.4,
            fast_conv: true,
            disable_cwa: false,
            rto_only: true,
        }
    }
}

impl Keyed for CubicConfig {
    const KEYS: &'static [Key<Self>] = &[
        key!(init_cwnd, Kind::Float { min: 1.0, max: 1e9 }, "initial window, units (ndnget --init-cwnd)"),
        key!(
            init_ssthresh,
            Kind::Float { min: 1.0, max: f64::INFINITY },
            "initial slow-start threshold, units (ndnget --init-ssthresh)"
        ),
        key!(beta, Kind::Float { min: 0.0, max: 1.0 }, "multiplicative decrease factor (ndnget --cubic-beta)"),
        key!(c, Kind::Float { min: 1e-3, max: 100.0 }, "cubic scaling constant C (RFC 9438)"),
        key!(fast_conv, Kind::Bool, "fast convergence (ndnget --fast-conv)"),
        key!(disable_cwa, Kind::Bool, "decrease on every loss event, not once per window (ndnget --disable-cwa)"),
        key!(rto_only, Kind::Bool, "loss only by per-unit RTO timers as ndnget (false: Liu et al.'s detection)"),
    ];
}

impl ControllerSpec for CubicConfig {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn build(&self, params: CcParams) -> Built {
        Pipeline::built(Box::new(Cubic::new(self.clone(), params)), self.rto_only)
    }
}

/// The CUBIC controller.
#[derive(Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    pipe: Pipeline,
    /// Window before the last decrease.
    w_max: f64,
    /// `w_max` before that (fast convergence).
    last_w_max: f64,
    /// When the window was last decreased (ndnget: when the pipeline was created, before any).
    last_decrease: Option<Time>,
}

impl Cubic {
    pub fn new(cfg: CubicConfig, params: CcParams) -> Self {
        let pipe = Pipeline::new(cfg.init_cwnd, cfg.init_ssthresh, params);
        Cubic { cfg, pipe, w_max: 0.0, last_w_max: 0.0, last_decrease: None }
    }

    /// The window as a real number.
    pub fn window(&self) -> f64 {
        self.pipe.cwnd
    }

    /// `W_cubic(t)` (RFC 9438 eq. 1) for the current `W_max`, `t` after the last decrease.
    pub fn w_cubic(&self, t: Duration) -> f64 {
        let k = (self.w_max * (1.0 - self.cfg.beta) / self.cfg.c).cbrt(); // eq. 2
        self.cfg.c * (t.as_secs_f64() - k).powi(3) + self.w_max
    }

    fn increase(&mut self, now: Time) {
        if self.pipe.in_slow_start() {
            self.pipe.cwnd += 1.0;
            return;
        }
        if self.w_max < self.cfg.init_cwnd {
            self.w_max = self.pipe.cwnd;
        }
        let t = now - *self.last_decrease.get_or_insert(now);
        let mut target = self.w_cubic(t);
        if let Some(srtt) = self.pipe.srtt.filter(|s| !s.is_zero()) {
            let b = self.cfg.beta;
            let w_est = self.w_max * b + 3.0 * (1.0 - b) / (1.0 + b) * (t.as_secs_f64() / srtt.as_secs_f64());
            target = target.max(w_est);
        }
        let cwnd = &mut self.pipe.cwnd;
        *cwnd += (target - *cwnd).max(0.0) / *cwnd;
    }
}

impl Controller for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn cwnd(&self) -> u64 {
        self.pipe.cwnd()
    }
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    fn aggregation(&self) -> u32 {
        self.pipe.aggregation()
    }
    fn state(&self) -> &'static str {
        self.pipe.state()
    }
    fn on_send(&mut self, now: Time, _units: u64, _inflight: u64, _app_limited: bool) {
        self.last_decrease.get_or_insert(now);
    }
    fn on_ack(&mut self, s: &AckSample) {
        self.pipe.srtt = s.srtt;
        for _ in 0..s.acked {
            self.increase(s.now);
        }
    }
    fn on_congestion(&mut self, e: &CongestionEvent) {
        if !Pipeline::decreases_on(e, self.cfg.disable_cwa) {
            return;
        }
        let cwnd = self.pipe.cwnd;
        if self.cfg.fast_conv && cwnd < self.last_w_max {
            self.last_w_max = cwnd;
            self.w_max = cwnd * (1.0 + self.cfg.beta) / 2.0;
        } else {
            self.last_w_max = cwnd;
            self.w_max = cwnd;
        }
        self.pipe.ssthresh = (cwnd * self.cfg.beta).max(self.cfg.init_cwnd);
        self.pipe.cwnd = self.pipe.ssthresh;
        self.last_decrease = Some(e.now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CaState, LossKind, RateSample};

    fn p() -> CcParams {
        CcParams { unit: 1000, max_aggregation: 64, seed: 0 }
    }

    fn ack(now: Time, srtt: Option<Duration>) -> AckSample {
        AckSample {
            now,
            unit: 0,
            source: crate::node::ServedBy::default(),
            cookie: 0,
            delivered: 1,
            acked: 1,
            rate: RateSample { delivered: 1, interval: None, prior_delivered: 0, is_app_limited: false },
            rtt: None,
            srtt,
            losses: 0,
            lost_total: 0,
            prior_inflight: 1,
            inflight: 0,
            ca_state: CaState::Open,
        }
    }

    fn loss(now: Time) -> CongestionEvent {
        CongestionEvent { now, kind: LossKind::Timeout, inflight: 0, first_in_window: true }
    }

    /// RFC 9438 eq. 1 and 2 for W_max, β = 0.7, C = 0.4.
    fn rfc9438(w_max: f64, t: f64) -> f64 {
        let k = (w_max * (1.0 - 0.7) / 0.4).cbrt();
        0.4 * (t - k).powi(3) + w_max
    }

    #[test]
    fn window_follows_the_rfc9438_curve_after_a_loss() {
        let mut c = Cubic::new(CubicConfig::default(), p());
        assert_eq!((c.cwnd(), c.state()), (2, "slow_start"));
        let t0 = Time::from_millis(1000);
        c.on_send(Time::ZERO, 1, 0, false);
        for _ in 0..98 {
            c.on_ack(&ack(Time::from_millis(500), None));
        }
        assert_eq!(c.cwnd(), 100);
        c.on_congestion(&loss(t0));
        // W_max = 100, cwnd = ssthresh = 70; K = ∛(100 · 0.3 / 0.4) = 4.217 s.
        assert_eq!((c.cwnd(), c.state()), (70, "congestion_avoidance"));
        assert!((c.w_cubic(Duration::ZERO) - 70.0).abs() < 1e-9, "W_cubic(0) = β·W_max");
        let k = (100.0f64 * 0.3 / 0.4).cbrt();
        assert!((c.w_cubic(Duration::from_secs_f64(k)) - 100.0).abs() < 1e-9, "W_cubic(K) = W_max");
        // Each ack closes (W_cubic(t) − cwnd)/cwnd of the gap: with many acks at time t the
        // window reaches the curve (no SRTT: the Reno estimate plays no part).
        for t in [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] {
            let now = t0 + Duration::from_secs_f64(t);
            for _ in 0..20_000 {
                c.on_ack(&ack(now, None));
            }
            let want = rfc9438(100.0, t);
            assert!((c.window() - want).abs() < 0.05, "t = {t}: {} vs {want}", c.window());
        }
    }

    #[test]
    fn reno_friendly_estimate_takes_over_when_higher() {
        let mut c = Cubic::new(CubicConfig { init_ssthresh: 10.0, ..CubicConfig::default() }, p());
        c.on_send(Time::ZERO, 1, 0, false);
        for _ in 0..8 {
            c.on_ack(&ack(Time::ZERO, None));
        }
        c.on_congestion(&loss(Time::ZERO)); // W_max 10, cwnd 7
        // At t = 1 s with SRTT 10 ms: W_est = 7 + 3·0.3/1.7 · 100 = 59.9 ≫ W_cubic(1) ≈ 9.1.
        let now = Time::from_millis(1000);
        for _ in 0..20_000 {
            c.on_ack(&ack(now, Some(Duration::from_millis(10))));
        }
        let w_est = 7.0 + 3.0 * 0.3 / 1.7 * 100.0;
        assert!((c.window() - w_est).abs() < 0.05, "{}", c.window());
    }

    #[test]
    fn fast_convergence_and_conservative_adaptation() {
        let mut c = Cubic::new(CubicConfig::default(), p());
        for _ in 0..98 {
            c.on_ack(&ack(Time::ZERO, None));
        }
        c.on_congestion(&loss(Time::ZERO)); // last_w_max = 100
        c.on_congestion(&CongestionEvent { first_in_window: false, ..loss(Time::ZERO) });
        assert_eq!(c.cwnd(), 70, "one decrease per window");
        c.on_congestion(&loss(Time::ZERO)); // 70 < 100: W_max = 70 · 1.7 / 2
        assert!((c.w_max - 59.5).abs() < 1e-9);
        assert_eq!(c.cwnd(), 49);
        let mut off = Cubic::new(CubicConfig { fast_conv: false, ..CubicConfig::default() }, p());
        for _ in 0..98 {
            off.on_ack(&ack(Time::ZERO, None));
        }
        off.on_congestion(&loss(Time::ZERO));
        off.on_congestion(&loss(Time::ZERO));
        assert!((off.w_max - 70.0).abs() < 1e-9);
        // The floor is the initial window.
        for _ in 0..30 {
            off.on_congestion(&loss(Time::ZERO));
        }
        assert_eq!(off.cwnd(), 2);
    }

    #[test]
    fn ndngets_timers_unless_told_otherwise() {
        assert_eq!(CubicConfig::default().build(p()).loss_detector_name(), "unit-timers");
        let c = CubicConfig { rto_only: false, ..CubicConfig::default() };
        assert!(matches!(c.build(p()), Built::Standard(_)));
    }
}
