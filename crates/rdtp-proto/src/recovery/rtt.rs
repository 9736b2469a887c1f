//! RTT estimation and the retransmission timeout, per RFC 6298 (seed 000 §3.3).

use core::time::Duration;

/// RTO parameters (RFC 6298 §2, with ndnget's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtoConfig {
    /// RTO before the first sample (RFC 6298: 1 s).
    pub initial: Duration,
    /// Floor (RFC 6298: 1 s; seed 000 and ndnget: 200 ms).
    pub min: Duration,
    /// Ceiling for backoff (ndnget: 60 s).
    pub max: Duration,
    /// RTTVAR multiplier K in `RTO = SRTT + max(G, K·RTTVAR)` (RFC 6298 and seed 000: 4; ndnget's
    /// `--rto-k` default: 8).
    pub k: u32,
    /// Clock granularity G of RFC 6298 §2.3, `RTO = SRTT + max(G, K·RTTVAR)`: the least
    /// margin above SRTT, so that a steady path (RTTVAR → 0) does not get RTO = SRTT.
    pub granularity: Duration,
}

impl Default for RtoConfig {
    fn default() -> Self {
        RtoConfig {
            initial: Duration::from_secs(1),
            min: Duration::from_millis(200),
            max: Duration::from_secs(60),
            k: 4,
            granularity: Duration::ZERO,
        }
    }
}

/// SRTT, RTTVAR and RTO, plus min/max/mean of all samples for the summary.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    cfg: RtoConfig,
    srtt: Option<Duration>,
    rttvar: Duration,
    /// RTO before backoff.
    base_rto: Duration,
    /// Backoff exponent since the last sample.
    backoff: u32,
    min: Option<Duration>,
    max: Duration,
    sum_secs: f64,
    count: u64,
}

impl RttEstimator {
    pub fn new(cfg: RtoConfig) -> Self {
        RttEstimator {
            cfg,
            srtt: None,
            rttvar: Duration::ZERO,
            base_rto: cfg.initial,
            backoff: 0,
            min: None,
            max: Duration::ZERO,
            sum_secs: 0.0,
            count: 0,
        }
    }

    /// Take a sample (RFC 6298 §2.2–2.3, α = 1/8, β = 1/4, K from the config); clears any
    /// backoff.
    pub fn on_sample(&mut self, r: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                let diff = srtt.abs_diff(r);
                self.rttvar = self.rttvar * 3 / 4 + diff / 4;
                self.srtt = Some(srtt * 7 / 8 + r / 8);
            }
        }
        self.after_sample(r);
    }

    /// Take a sample the way ndnget does (ndn-cxx `RttEstimator::addMeasurement`, called by
    /// ndn-tools `PipelineInterestsAdaptive::handleData` for every segment): α = 1/8 and
    /// β = 1/4 divided by `expected`, the samples expected in one round trip, so that SRTT and
    /// RTTVAR move by RFC 6298's gains per round trip rather than per sample; clears any
    /// backoff. The first sample is RFC 6298's.
    pub fn on_sample_per_round(&mut self, r: Duration, expected: u64) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                let n = expected.max(1) as f64;
                let (alpha, beta) = (0.125 / n, 0.25 / n);
                let diff = srtt.abs_diff(r);
                self.rttvar = self.rttvar.mul_f64(1.0 - beta) + diff.mul_f64(beta);
                self.srtt = Some(srtt.mul_f64(1.0 - alpha) + r.mul_f64(alpha));
            }
        }
        self.after_sample(r);
    }

    /// RTO from SRTT and RTTVAR, backoff cleared, sample statistics.
    fn after_sample(&mut self, r: Duration) {
        let srtt = self.srtt.unwrap_or(r);
        // A ceiling below the floor (a misconfiguration) gives the floor.
        let rto = srtt + (self.cfg.k * self.rttvar).max(self.cfg.granularity);
        self.base_rto = rto.min(self.cfg.max).max(self.cfg.min);
        self.backoff = 0;
        self.min = Some(self.min.map_or(r, |m| m.min(r)));
        self.max = self.max.max(r);
        self.sum_secs += r.as_secs_f64();
        self.count += 1;
    }

    /// Double the RTO after an expiry (RFC 6298 §5.5), up to the ceiling.
    pub fn backoff(&mut self) {
        self.backoff = (self.backoff + 1).min(32);
    }

    /// Forget the backoff without taking a sample: an arrival answering the latest
    /// re-request of a unit (the echoed tag proves which request it answers, as TCP
    /// timestamps do, RFC 7323 §4) shows the path delivers again.
    pub fn clear_backoff(&mut self) {
        self.backoff = 0;
    }

    /// How many times the RTO has been doubled since the last sample or
    /// [`RttEstimator::clear_backoff`].
    pub fn backoffs(&self) -> u32 {
        self.backoff
    }

    /// The current RTO, backoff included.
    pub fn rto(&self) -> Duration {
        let factor = 1u32.checked_shl(self.backoff).unwrap_or(u32::MAX);
        self.base_rto.checked_mul(factor).unwrap_or(self.cfg.max).min(self.cfg.max)
    }

    /// The configuration.
    pub fn config(&self) -> RtoConfig {
        self.cfg
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    /// Smallest sample so far.
    pub fn min(&self) -> Option<Duration> {
        self.min
    }
    /// Largest sample so far.
    pub fn max(&self) -> Duration {
        self.max
    }
    /// Mean of all samples.
    pub fn mean(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration::from_secs_f64(self.sum_secs / self.count as f64))
    }
    /// Sum of all samples (with [`RttEstimator::samples`], the mean of any stretch of them).
    pub fn sum(&self) -> Duration {
        Duration::from_secs_f64(self.sum_secs)
    }
    /// Number of samples.
    pub fn samples(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn rfc6298_arithmetic() {
        let mut e = RttEstimator::new(RtoConfig { min: Duration::ZERO, ..RtoConfig::default() });
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.on_sample(100 * MS);
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 4·50 = 300.
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(100 * MS), 50 * MS, 300 * MS));
        e.on_sample(200 * MS);
        // RTTVAR = 3/4·50 + 1/4·100 = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5; RTO = 362.5.
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
        assert_eq!((e.min(), e.max(), e.mean()), (Some(100 * MS), 200 * MS, Some(150 * MS)));
    }

    #[test]
    fn floor_backoff_and_ceiling() {
        let mut e = RttEstimator::new(RtoConfig::default());
        e.on_sample(MS);
        assert_eq!(e.rto(), 200 * MS, "200 ms floor");
        e.backoff();
        e.backoff();
        assert_eq!(e.rto(), 800 * MS);
        for _ in 0..40 {
            e.backoff();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        e.on_sample(MS);
        assert_eq!(e.rto(), 200 * MS, "a new sample clears the backoff");
        e.backoff();
        e.clear_backoff();
        assert_eq!(e.rto(), 200 * MS);
        assert_eq!(e.samples(), 2, "clearing the backoff takes no sample");
    }

    #[test]
    fn granularity_keeps_a_margin_on_a_steady_path() {
        let cfg = RtoConfig { min: Duration::ZERO, granularity: 10 * MS, ..RtoConfig::default() };
        let mut e = RttEstimator::new(cfg);
        for _ in 0..50 {
            e.on_sample(60 * MS);
        }
        assert!(e.rttvar() < MS);
        assert_eq!(e.rto(), 70 * MS, "SRTT + G once 4·RTTVAR < G");
    }

    #[test]
    fn per_round_gains_divide_alpha_and_beta_by_the_expected_samples() {
        let mut e = RttEstimator::new(RtoConfig { min: Duration::ZERO, ..RtoConfig::default() });
        e.on_sample_per_round(100 * MS, 10);
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(100 * MS), 50 * MS, 300 * MS), "RFC 6298's first");
        e.on_sample_per_round(200 * MS, 10);
        // β/10 = 1/40: RTTVAR = 39/40·50 + 1/40·100 = 51.25; α/10 = 1/80: SRTT = 101.25.
        assert_eq!(e.rttvar(), Duration::from_micros(51_250));
        assert_eq!(e.srtt(), Some(Duration::from_micros(101_250)));
        assert_eq!(e.rto(), Duration::from_micros(101_250 + 4 * 51_250));
        e.backoff();
        e.on_sample_per_round(101_250 * Duration::from_micros(1), 0);
        // One expected sample (0 counts as 1) is RFC 6298's gains; the backoff is gone.
        assert_eq!(e.srtt(), Some(Duration::from_micros(101_250)));
        assert_eq!(e.rttvar(), Duration::from_nanos(38_437_500));
        assert_eq!(e.samples(), 3);
    }

    #[test]
    fn k_scales_the_variance_term() {
        // ndnget's K = 8: RTO = 100 + 8·50 = 500 ms after one 100 ms sample.
        let mut e = RttEstimator::new(RtoConfig { k: 8, min: Duration::ZERO, ..RtoConfig::default() });
        e.on_sample(100 * MS);
        assert_eq!(e.rto(), 500 * MS);
    }
}
