//! What a simulation measures: per-bin series for the bottleneck and each flow.

use core::time::Duration;

use rdtp_proto::Time;

/// Per-bin sums over fixed time bins.
#[derive(Clone, Debug)]
pub struct Series {
    bin: Duration,
    bytes: Vec<u64>,
}

impl Series {
    pub fn new(bin: Duration) -> Self {
        Series { bin, bytes: Vec::new() }
    }

    pub fn add(&mut self, at: Time, bytes: u64) {
        let i = (at.as_nanos() / self.bin.as_nanos() as u64) as usize;
        if self.bytes.len() <= i {
            self.bytes.resize(i + 1, 0);
        }
        self.bytes[i] += bytes;
    }

    pub fn bin(&self) -> Duration {
        self.bin
    }

    /// Bytes in `[from, to)` (whole bins).
    pub fn bytes_between(&self, from: Duration, to: Duration) -> u64 {
        let a = (from.as_nanos() / self.bin.as_nanos()) as usize;
        let b = (to.as_nanos() / self.bin.as_nanos()) as usize;
        self.bytes.iter().skip(a).take(b.saturating_sub(a)).sum()
    }

    /// Rate in bit/s per bin.
    pub fn rates_bps(&self) -> Vec<f64> {
        let s = self.bin.as_secs_f64();
        self.bytes.iter().map(|b| *b as f64 * 8.0 / s).collect()
    }
}

/// Sum, count and maximum of duration samples within a time window.
#[derive(Clone, Debug, Default)]
pub struct DelayStats {
    samples: Vec<(Time, Duration)>,
}

impl DelayStats {
    pub fn push(&mut self, at: Time, d: Duration) {
        self.samples.push((at, d));
    }

    fn within(&self, from: Duration, to: Duration) -> impl Iterator<Item = Duration> + '_ {
        let (a, b) = (Time::ZERO + from, Time::ZERO + to);
        self.samples.iter().filter(move |(t, _)| *t >= a && *t < b).map(|(_, d)| *d)
    }

    /// Mean of the samples taken in `[from, to)`.
    pub fn mean_between(&self, from: Duration, to: Duration) -> Option<Duration> {
        let (mut sum, mut n) = (0f64, 0u32);
        for d in self.within(from, to) {
            sum += d.as_secs_f64();
            n += 1;
        }
        (n > 0).then(|| Duration::from_secs_f64(sum / f64::from(n)))
    }

    /// Largest sample in `[from, to)`.
    pub fn max_between(&self, from: Duration, to: Duration) -> Option<Duration> {
        self.within(from, to).max()
    }

    /// The `q`-quantile (0..=1) of the samples in `[from, to)`: nearest rank
    /// ([`rdtp_units::quantile`], the definition the testbed and the emulator use too).
    pub fn quantile_between(&self, from: Duration, to: Duration, q: f64) -> Option<Duration> {
        let mut v: Vec<Duration> = self.within(from, to).collect();
        v.sort();
        rdtp_units::quantile(&v, q)
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }
    pub fn samples(&self) -> &[(Time, Duration)] {
        &self.samples
    }
}

/// Jain's fairness index of `xs`: (Σx)² / (n·Σx²); 1 = perfectly fair.
pub fn jain_index(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if sq == 0.0 { 1.0 } else { sum * sum / (xs.len() as f64 * sq) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_and_jain() {
        let mut s = Series::new(Duration::from_millis(100));
        s.add(Time::from_millis(50), 1000);
        s.add(Time::from_millis(150), 500);
        assert_eq!(s.bytes_between(Duration::ZERO, Duration::from_millis(200)), 1500);
        assert_eq!(s.bytes_between(Duration::from_millis(100), Duration::from_millis(200)), 500);
        assert!((s.rates_bps()[0] - 80_000.0).abs() < 1e-6);
        assert!((jain_index(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn delay_quantiles_are_nearest_rank() {
        let mut d = DelayStats::default();
        for ms in [4, 1, 3, 2] {
            d.push(Time::from_millis(ms), Duration::from_millis(ms));
        }
        let all = (Duration::ZERO, Duration::from_secs(1));
        // The testbed's and the emulator's definition: the 2nd of 4, not the rounded 1.5th.
        assert_eq!(d.quantile_between(all.0, all.1, 0.5), Some(Duration::from_millis(2)));
        assert_eq!(d.quantile_between(all.0, all.1, 0.99), Some(Duration::from_millis(4)));
        assert_eq!(d.quantile_between(Duration::from_secs(5), Duration::from_secs(6), 0.5), None);
    }
}
