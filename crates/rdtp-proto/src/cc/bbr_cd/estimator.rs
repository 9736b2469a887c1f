//! BBR-CD's BDP Estimator (S1 §III-B, §III-C, Fig. 2): the *average* RTT and the *average*
//! delivery rate over a time window `W = β × (latest average RTT)`, and the standard
//! deviation of the RTTs over that window, which the Loss Detector uses.
//!
//! `RTprop = avg(RTT_t), t ∈ [T − W, T]` and `BtlBw = avg(deliveryRate_t), t ∈ [T − W, T]`:
//! every sample in the window has the same weight (S1 §III-B). Which samples are admitted
//! (no re-requested units, none served by the receiver's own cache) is decided by the
//! controller, not here.
//!
//! When the window empties (nothing arrived for a whole `W`: an outage), the last averages
//! are kept: the flow still needs an RTprop for its loss threshold and a BtlBw to resume at,
//! and S1 gives no other value to fall back to.
//!
//! **An average needs `min_samples` (4) samples** in the window, once there is one: with
//! fewer, the last averages stand (the first sample still gives the first RTprop and BtlBw,
//! two the first δ). S1 §III-C d enters ProbeRTT when "not enough RTT samples are collected
//! over the given time window" (threshold 4), to "collect multiple RTT values to compute
//! meaningful average RTT measures" (§I), but says nothing of the averages such a window
//! gives; we read it as "not an estimate". Without this, one sample in an otherwise empty window *was* the
//! model, and the samples that come into an emptied window are the late ones: a first-time
//! request answered after waiting at a caching router for another consumer's request (S1
//! §III-B's own example of an ambiguous RTT) gives an RTT of seconds and a delivery rate of a
//! few units over those seconds. At the tail of a transfer only re-requests are left, which
//! give no samples (S1 §III-B), so nothing replaced it: the flow re-requested its last units
//! at that rate — measured on ns-3 (Hu et al.'s lossy Topology 2, seed 2): after ProbeRTT
//! one 494 ms sample set the pacing rate to 0.21 Mbit/s, and 182 re-requests took 66 s
//! (`crates/rdtp-harness/tests/bbr_cd_through_a_lossy_cache.rs` reproduces it).
//!
//! **The window holds at least `2 × min_samples` units at BtlBw** (ours; S1 is silent): `W`
//! is `max(β × RTprop, 2 × min_samples ÷ max(BtlBw, k))`, `k` ProbeRTT's rate. S1's `β × RTprop`
//! holds `β × BDP` units, which S1's setting (BDP of many units) makes plenty; when the BDP is
//! below one unit — a consumer whose share of the AP is a few units per second and whose
//! units come from the AP's store in 1.4 ms — it holds less than one, so the window can
//! never hold `min_samples` arrivals: the flow falls into ProbeRTT a window after every exit
//! (11 ms), its averages never change again, and it fetches the rest at `k` units/s
//! (measured, ns-3 3.44, Hu et al.'s Topology 2 without loss, seed 4: a consumer paced at
//! 4 units/s from 35 s to 98 s for its last 294 units). With the floor, a window expects
//! `2 × min_samples` arrivals at BtlBw, so "fewer than `min_samples`" again means the
//! arrivals halved. Where `β × BDP ≥ 2 × min_samples` (a BDP of at least one unit, with
//! S1's β = 8 and `min_samples` = 4) nothing changes.

use core::time::Duration;
use std::collections::VecDeque;

use crate::time::Time;

/// Samples over a time window, with their running sum and sum of squares.
#[derive(Clone, Debug, Default)]
pub struct Windowed {
    samples: VecDeque<(Time, f64)>,
    sum: f64,
    sum_sq: f64,
}

impl Windowed {
    /// Add a sample taken at `at`.
    pub fn push(&mut self, at: Time, v: f64) {
        self.samples.push_back((at, v));
        self.sum += v;
        self.sum_sq += v * v;
    }

    /// Drop the samples taken before `from`.
    pub fn prune(&mut self, from: Time) {
        while let Some(&(t, v)) = self.samples.front() {
            if t >= from {
                break;
            }
            self.samples.pop_front();
            self.sum -= v;
            self.sum_sq -= v * v;
        }
        if self.samples.is_empty() {
            // No rounding residue survives an empty window.
            (self.sum, self.sum_sq) = (0.0, 0.0);
        }
    }

    /// Samples in the window.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether the window holds no sample.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Unweighted mean, if there is a sample.
    pub fn mean(&self) -> Option<f64> {
        (!self.is_empty()).then(|| self.sum / self.len() as f64)
    }

    /// Standard deviation of the samples in the window (all of them: the window is the
    /// population), if there are at least two.
    pub fn std_dev(&self) -> Option<f64> {
        let n = self.len() as f64;
        (self.len() >= 2).then(|| (self.sum_sq / n - (self.sum / n).powi(2)).max(0.0).sqrt())
    }
}

/// The BDP Estimator of one flow.
#[derive(Clone, Debug)]
pub struct BdpEstimator {
    /// β: the window is β average RTTs long (S1: 8 for 802.11n).
    beta: f64,
    /// Samples a window needs to replace an average (module docs; S1 §III-C d: 4).
    min_samples: usize,
    /// ProbeRTT's rate `k`, units/s: the slowest rate the window's floor allows for (module
    /// docs).
    slowest: f64,
    /// RTT samples, seconds.
    rtt: Windowed,
    /// Delivery-rate samples, units per second.
    bw: Windowed,
    /// Arrivals of any unit (re-requested ones too), for ProbeRTT ([`super::probe_rtt`]).
    arrivals: Windowed,
    rtprop: Option<Duration>,
    btlbw: Option<f64>,
    delta: Option<Duration>,
    first_rtt_at: Option<Time>,
}

impl BdpEstimator {
    /// An estimator with window `beta` average RTTs — and at least `2 × min_samples` units at
    /// BtlBw, taken as no slower than `slowest` units/s — whose averages change only from
    /// windows of at least `min_samples` samples (module docs).
    pub fn new(beta: f64, min_samples: usize, slowest: f64) -> Self {
        BdpEstimator {
            beta,
            min_samples: min_samples.max(1),
            slowest: slowest.max(f64::MIN_POSITIVE),
            rtt: Windowed::default(),
            bw: Windowed::default(),
            arrivals: Windowed::default(),
            rtprop: None,
            btlbw: None,
            delta: None,
            first_rtt_at: None,
        }
    }

    /// An admitted RTT sample.
    pub fn on_rtt(&mut self, now: Time, rtt: Duration) {
        self.first_rtt_at.get_or_insert(now);
        self.rtt.push(now, rtt.as_secs_f64());
        if self.rtprop.is_none() {
            // The window's length needs an average: the first sample is it.
            self.rtprop = Some(rtt);
        }
    }

    /// A unit arrived, admitted or not.
    pub fn on_arrival(&mut self, now: Time) {
        self.arrivals.push(now, 0.0);
    }

    /// An admitted delivery-rate sample, units per second.
    pub fn on_rate(&mut self, now: Time, units_per_sec: f64) {
        self.bw.push(now, units_per_sec);
    }

    /// Slide the window to end at `now` (its length from the latest average RTT, S1 §III-B)
    /// and recompute the averages.
    pub fn update(&mut self, now: Time) {
        let Some(w) = self.window() else { return };
        let from = now.saturating_sub(w);
        self.rtt.prune(from);
        self.bw.prune(from);
        self.arrivals.prune(from);
        // Fewer than `min_samples` in the window: the last averages stand, once there are any.
        let rtt_enough = self.rtt.len() >= self.min_samples;
        if let Some(m) = self.rtt.mean()
            && rtt_enough
        {
            self.rtprop = Some(Duration::from_secs_f64(m));
        }
        if let Some(m) = self.bw.mean()
            && (self.bw.len() >= self.min_samples || self.btlbw.is_none())
        {
            self.btlbw = Some(m);
        }
        if let Some(s) = self.rtt.std_dev()
            && (rtt_enough || self.delta.is_none())
        {
            self.delta = Some(Duration::from_secs_f64(s));
        }
    }

    /// `W = max(β × RTprop, 2 × min_samples ÷ max(BtlBw, k))`, once there is an RTT sample
    /// (module docs).
    pub fn window(&self) -> Option<Duration> {
        let w = self.rtprop?.mul_f64(self.beta);
        let Some(bw) = self.btlbw else { return Some(w) };
        let hold = 2.0 * self.min_samples as f64 / bw.max(self.slowest);
        Some(w.max(Duration::from_secs_f64(hold)))
    }
    /// Average RTT over the window (the last one if the window is empty).
    pub fn rtprop(&self) -> Option<Duration> {
        self.rtprop
    }
    /// Average delivery rate over the window, units/s (the last one if the window is empty).
    pub fn btlbw(&self) -> Option<f64> {
        self.btlbw
    }
    /// Standard deviation δ of the RTTs over the window (the last one with ≥ 2 samples).
    pub fn delta(&self) -> Option<Duration> {
        self.delta
    }
    /// RTT samples in the window (as of the last [`BdpEstimator::update`]).
    pub fn rtt_samples(&self) -> usize {
        self.rtt.len()
    }
    /// Units that arrived in the window, admitted as samples or not (as of the last
    /// [`BdpEstimator::update`]).
    pub fn arrivals(&self) -> usize {
        self.arrivals.len()
    }
    /// When the first RTT sample was admitted.
    pub fn first_rtt_at(&self) -> Option<Time> {
        self.first_rtt_at
    }
    /// `RTprop × BtlBw`, in units.
    pub fn bdp(&self) -> Option<f64> {
        Some(self.rtprop?.as_secs_f64() * self.btlbw?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn averages_and_deviation_over_a_window_of_beta_average_rtts() {
        let mut e = BdpEstimator::new(8.0, 4, 4.0);
        assert_eq!((e.window(), e.rtprop(), e.btlbw(), e.bdp()), (None, None, None, None));
        // 10 ms and 30 ms alternating, 1 ms apart: mean 20 ms, δ 10 ms, W = 160 ms.
        for i in 0..100u64 {
            let t = Time::from_millis(i);
            e.on_rtt(t, if i % 2 == 0 { 10 * MS } else { 30 * MS });
            e.on_rate(t, 1000.0 + i as f64);
            e.update(t);
        }
        assert_eq!(e.rtt_samples(), 100);
        let close = |a: Duration, b: Duration| a.abs_diff(b) < Duration::from_micros(1);
        assert!(close(e.rtprop().unwrap(), 20 * MS), "{:?}", e.rtprop());
        assert!(close(e.delta().unwrap(), 10 * MS), "{:?}", e.delta());
        assert!(close(e.window().unwrap(), 160 * MS));
        assert!((e.btlbw().unwrap() - 1049.5).abs() < 1e-9);
        assert!((e.bdp().unwrap() - 20.99).abs() < 1e-6);
        // At 200 ms only the samples of the last 160 ms are left: t = 40 … 99 ms → 60.
        e.update(Time::from_millis(200));
        assert_eq!(e.rtt_samples(), 60);
        assert!((e.btlbw().unwrap() - 1069.5).abs() < 1e-9, "{:?}", e.btlbw());
        // A whole window without samples: empty, the last averages stay.
        e.update(Time::from_millis(1000));
        assert_eq!(e.rtt_samples(), 0);
        assert!(close(e.rtprop().unwrap(), 20 * MS));
        assert!(close(e.delta().unwrap(), 10 * MS));
        // One, two, three new samples (a late one and two more): not an average yet, the
        // last ones stand; the fourth makes one.
        for (i, ms) in [(1, 900), (2, 50), (3, 50), (4, 50)] {
            e.on_rtt(Time::from_millis(1000 + i), ms * MS);
            e.on_rate(Time::from_millis(1000 + i), if i == 1 { 2.0 } else { 1000.0 });
            e.update(Time::from_millis(1000 + i));
            if i < 4 {
                assert!(close(e.rtprop().unwrap(), 20 * MS), "{i}: {:?}", e.rtprop());
                assert!(close(e.delta().unwrap(), 10 * MS), "{i}: {:?}", e.delta());
                assert!((e.btlbw().unwrap() - 1069.5).abs() < 1e-9, "{i}: {:?}", e.btlbw());
            }
        }
        assert!(close(e.rtprop().unwrap(), 262500 * Duration::from_nanos(1000)), "{:?}", e.rtprop());
        assert!((e.btlbw().unwrap() - 750.5).abs() < 1e-9, "{:?}", e.btlbw());
        assert_eq!(e.first_rtt_at(), Some(Time::ZERO));
    }
}
