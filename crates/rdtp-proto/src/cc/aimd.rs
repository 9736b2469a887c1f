//! `aimd`: ndnget's AIMD pipeline (ndn-tools `PipelineInterestsAimd`), unpaced.
//!
//! Slow start `cwnd += step` per unit while `cwnd < ssthresh`; congestion avoidance
//! `cwnd += step / ⌊cwnd⌋`; on loss `ssthresh = max(2, cwnd·β)`, `cwnd = ssthresh` (or the
//! initial window with `reset_to_init`), at most once per window unless `disable_cwa`.
//! Loss detection is seed 000's (fast re-request + RFC 6298 timer) unless `rto_only`, which
//! gives ndnget's own per-unit retransmission timers ([`crate::recovery::NdngetTimers`]). What
//! it shares with `cubic` (window, threshold, conservative adaptation, loss detection) is
//! [`super::ndnget::Pipeline`].

use super::ndnget::Pipeline;
use super::spec::{Key, Keyed, Kind, key};
use super::{AckSample, Built, CcParams, CongestionEvent, Controller, ControllerSpec};

#[derive(Clone, Debug, PartialEq)]
pub struct AimdConfig {
    /// Initial window in units.
    pub init_cwnd: f64,
    /// Initial slow-start threshold in units (infinite: slow start until the first loss).
    pub init_ssthresh: f64,
    /// Additive increase step (ndnget `--aimd-step`).
    pub step: f64,
    /// Multiplicative decrease factor (ndnget `--aimd-beta`).
    pub beta: f64,
    /// After a loss, restart from `init_cwnd` (ndnget `--reset-cwnd-to-init`).
    pub reset_to_init: bool,
    /// Decrease on every loss event, not once per window (ndnget `--disable-cwa`).
    pub disable_cwa: bool,
    /// Loss only by per-unit retransmission timers, as ndnget (default: seed 000's detection).
    pub rto_only: bool,
}

impl Default for AimdConfig {
    fn default() -> Self {
        // ndnget's defaults.
        AimdConfig {
            init_cwnd: 2.0,
            // ndnget's numeric max; any threshold above every reachable window is the same.
            init_ssthresh: f64::INFINITY,
            step: 1.0,
            beta: 0.5,
            reset_to_init: false,
            disable_cwa: false,
            rto_only: false,
        }
    }
}

impl Keyed for AimdConfig {
    const KEYS: &'static [Key<Self>] = &[
        key!(init_cwnd, Kind::Float { min: 1.0, max: 1e9 }, "initial window, units"),
        key!(
            init_ssthresh,
            Kind::Float { min: 1.0, max: f64::INFINITY },
            "initial slow-start threshold, units (inf: slow start until the first loss)"
        ),
        key!(
            step,
            Kind::Float { min: 1e-3, max: 1e3 },
            "additive increase: per unit in slow start, per window after (ndnget --aimd-step)"
        ),
        key!(beta, Kind::Float { min: 0.0, max: 1.0 }, "multiplicative decrease factor (ndnget --aimd-beta)"),
        key!(reset_to_init, Kind::Bool, "after a loss restart from init_cwnd (ndnget --reset-cwnd-to-init)"),
        key!(disable_cwa, Kind::Bool, "decrease on every loss event, not once per window (ndnget --disable-cwa)"),
        key!(rto_only, Kind::Bool, "loss only by per-unit RTO timers as ndnget (false: Liu et al.'s detection)"),
    ];
}

impl ControllerSpec for AimdConfig {
    fn name(&self) -> &'static str {
        "aimd"
    }
    fn build(&self, params: CcParams) -> Built {
        Pipeline::built(Box::new(Aimd::new(self.clone(), params)), self.rto_only)
    }
}

#[derive(Debug)]
pub struct Aimd {
    cfg: AimdConfig,
    params: CcParams,
    pipe: Pipeline,
    /// Informed start (seed 002): the rate to turn into a window at the first RTT.
    informed_rate: Option<f64>,
}

impl Aimd {
    pub fn new(cfg: AimdConfig, params: CcParams) -> Self {
        let pipe = Pipeline::new(cfg.init_cwnd, cfg.init_ssthresh, params);
        Aimd { cfg, params, pipe, informed_rate: None }
    }
}

impl Controller for Aimd {
    fn name(&self) -> &'static str {
        "aimd"
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
    fn on_ack(&mut self, s: &AckSample) {
        let p = &mut self.pipe;
        p.srtt = s.srtt;
        if let (Some(rate), Some(srtt)) = (self.informed_rate, p.srtt) {
            // The equivalent window: rate × RTT, then congestion avoidance from there.
            self.informed_rate = None;
            p.cwnd = p.cwnd.max(rate * srtt.as_secs_f64() / f64::from(self.params.unit));
            p.ssthresh = p.cwnd;
        }
        for _ in 0..s.acked {
            if p.in_slow_start() {
                p.cwnd += self.cfg.step;
            } else {
                p.cwnd += self.cfg.step / p.cwnd.floor().max(1.0);
            }
        }
    }
    fn informed_start(&mut self, _now: crate::time::Time, bytes_per_sec: f64) -> bool {
        if self.pipe.srtt.is_some() || !(bytes_per_sec.is_finite() && bytes_per_sec > 0.0) {
            return false;
        }
        self.informed_rate = Some(bytes_per_sec);
        true
    }
    fn on_congestion(&mut self, e: &CongestionEvent) {
        if !Pipeline::decreases_on(e, self.cfg.disable_cwa) {
            return;
        }
        let p = &mut self.pipe;
        p.ssthresh = (p.cwnd * self.cfg.beta).max(2.0);
        p.cwnd = if self.cfg.reset_to_init { self.cfg.init_cwnd.max(1.0) } else { p.ssthresh };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CaState, LossKind, RateSample};
    use crate::time::Time;

    fn ack() -> AckSample {
        AckSample {
            now: Time::ZERO,
            unit: 0,
            source: crate::node::ServedBy::default(),
            cookie: 0,
            delivered: 1,
            acked: 1,
            rate: RateSample { delivered: 1, interval: None, prior_delivered: 0, is_app_limited: false },
            rtt: None,
            srtt: None,
            losses: 0,
            lost_total: 0,
            prior_inflight: 1,
            inflight: 0,
            ca_state: CaState::Open,
        }
    }

    #[test]
    fn slow_start_avoidance_and_decrease() {
        let p = CcParams { unit: 1000, max_aggregation: 64, seed: 0 };
        let mut a = Aimd::new(AimdConfig { init_ssthresh: 8.0, ..AimdConfig::default() }, p);
        assert_eq!(a.cwnd(), 2);
        for _ in 0..6 {
            a.on_ack(&ack());
        }
        assert_eq!(a.cwnd(), 8);
        assert_eq!(a.state(), "congestion_avoidance");
        for _ in 0..8 {
            a.on_ack(&ack());
        }
        assert_eq!(a.cwnd(), 9);
        let ev = |first| CongestionEvent { now: Time::ZERO, kind: LossKind::Fast, inflight: 0, first_in_window: first };
        a.on_congestion(&ev(true));
        assert_eq!(a.cwnd(), 4);
        a.on_congestion(&ev(false)); // same window: conservative adaptation ignores it
        assert_eq!(a.cwnd(), 4);
        a.on_congestion(&ev(true));
        assert_eq!(a.cwnd(), 2);
        a.on_congestion(&ev(true));
        assert_eq!(a.cwnd(), 2); // floor at 2
    }

    #[test]
    fn informed_start_becomes_the_equivalent_window_at_the_first_rtt() {
        let p = CcParams { unit: 1000, max_aggregation: 64, seed: 0 };
        let mut a = Aimd::new(AimdConfig::default(), p);
        assert!(a.informed_start(Time::ZERO, 5e6)); // 5 MB/s
        a.on_ack(&ack()); // no RTT yet: slow start as usual
        assert_eq!(a.cwnd(), 3);
        a.on_ack(&AckSample { srtt: Some(core::time::Duration::from_millis(40)), ..ack() });
        // 5 MB/s × 40 ms / 1000 B = 200 units, then congestion avoidance.
        assert_eq!(a.cwnd(), 200);
        assert_eq!(a.state(), "congestion_avoidance");
        assert!(!a.informed_start(Time::ZERO, 5e6), "too late once an RTT is known");
    }
}
