//! The passive estimator of seed 002: fed the 802.11 frames a listening host overhears, it
//! keeps each transmitter's throughput and airtime over a sliding window, counts the active
//! stations N, and predicts what a newcomer would attain (S2 §II: "a host can listen to
//! the medium … measure the throughput obtained by other hosts and see how many there are
//! (via their MAC addresses)").
//!
//! Sans-IO: observations carry their own time; queries take `now`. The window slides over
//! the frames themselves (kept in arrival order), so every number is exact for the window.

use core::time::Duration;
use std::collections::VecDeque;

use super::airtime;
use super::mac::{self, Mac};
use crate::time::Time;

/// One overheard MPDU: the frame (time, transmitter, receiver, bytes, PHY rate,
/// retry) plus the payload it carries above the MAC.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    pub time: Time,
    pub tx: Mac,
    pub rx: Mac,
    /// MPDU length on the air, MAC header and FCS included (what airtime is computed from).
    pub bytes: u32,
    /// Packet bytes above the MAC (without LLC/SNAP): what throughput counts.
    pub payload: u32,
    /// PHY rate the frame was sent at, bit/s.
    pub phy_rate_bps: f64,
    /// The retry bit: a retransmission. It adds airtime; its payload counts only if the
    /// first attempt was not overheard (a different sequence number from the transmitter's
    /// previous frame: the first attempt collided, as synchronised senders' often do).
    pub retry: bool,
    /// Sequence number, if the source knows it (without one a retry never counts as payload).
    pub seq: Option<u16>,
}

impl Observation {
    /// The observation of an MPDU (`bytes` may be a truncated capture of an MPDU of `len`
    /// bytes; `has_fcs` whether `len` counts the FCS), if it is a data frame carrying a
    /// packet; management, control and null frames give `None`.
    pub fn from_mpdu(time: Time, bytes: &[u8], len: usize, has_fcs: bool, phy_rate_bps: f64) -> Option<Self> {
        let h = mac::parse(bytes, len, has_fcs)?;
        if !h.carries_data() {
            return None;
        }
        let on_air = if has_fcs { len } else { len + mac::FCS };
        Some(Observation {
            time,
            tx: h.tx?,
            rx: h.rx,
            bytes: u32::try_from(on_air).unwrap_or(u32::MAX),
            payload: u32::try_from(h.payload()).unwrap_or(u32::MAX),
            phy_rate_bps,
            retry: h.retry,
            seq: h.seq,
        })
    }

    fn airtime(&self) -> Duration {
        airtime::exchange(self.bytes as usize, self.phy_rate_bps)
    }
}

/// Estimator settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EstimatorConfig {
    /// Sliding window (S2 §III: "N is the number of active hosts that were recently seen").
    pub window: Duration,
    /// A transmitter counts as active when it delivered at least this rate in the window
    /// (bit/s): stations sending only the odd ARP or TCP ACK are not contenders.
    pub min_active_bps: f64,
    /// A transmitter to leave out (the listening host itself).
    pub ignore: Option<Mac>,
}

impl Default for EstimatorConfig {
    fn default() -> Self {
        EstimatorConfig { window: Duration::from_secs(1), min_active_bps: 500e3, ignore: None }
    }
}

/// One transmitter over the window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StationStats {
    pub mac: Mac,
    pub frames: u64,
    pub retries: u64,
    pub payload_bytes: u64,
    /// Payload delivered per second of window, bit/s.
    pub throughput_bps: f64,
    /// Medium time its exchanges took ([`airtime::exchange_us`] per frame).
    pub airtime: Duration,
    /// `airtime` over the window.
    pub airtime_share: f64,
    /// Mean PHY rate of its frames, bit/s.
    pub phy_rate_bps: f64,
    /// Mean MPDU length on the air.
    pub mean_bytes: f64,
    /// Mean payload per first transmission.
    pub mean_payload: f64,
    /// At least [`EstimatorConfig::min_active_bps`].
    pub active: bool,
}

/// The medium over the window ending at `at`.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub at: Time,
    /// The window actually covered: the configured one, or less just after the first frame.
    pub span: Duration,
    /// Every transmitter seen in the window, by MAC address.
    pub stations: Vec<StationStats>,
}

impl Snapshot {
    /// Active transmitters (N).
    pub fn n_active(&self) -> usize {
        self.active().count()
    }

    /// The active transmitters.
    pub fn active(&self) -> impl Iterator<Item = &StationStats> {
        self.stations.iter().filter(|s| s.active)
    }

    /// Throughput of the active transmitters together, bit/s.
    pub fn total_bps(&self) -> f64 {
        self.active().map(|s| s.throughput_bps).sum()
    }

    /// Fraction of the window the active transmitters' exchanges took.
    pub fn busy(&self) -> f64 {
        self.active().map(|s| s.airtime_share).sum()
    }

    /// The N + 1 rule (S2 §III, Fig. 1): a newcomer gets total / (N + 1). `None` while
    /// nobody is active (the rule has nothing to divide).
    pub fn n_plus_one(&self) -> Option<f64> {
        let n = self.n_active();
        (n > 0).then(|| self.total_bps() / (n as f64 + 1.0))
    }

    /// The inputs of the learned model for a newcomer sending at `newcomer_phy_bps`
    /// (default: the active stations' mean PHY rate) with `newcomer_payload`-byte packets
    /// (default: theirs, else 1472 + 28). `None` when neither a station nor the newcomer's
    /// rate is known.
    pub fn features(&self, newcomer_phy_bps: Option<f64>, newcomer_payload: Option<f64>) -> Option<Features> {
        let n = self.n_active();
        let active: Vec<&StationStats> = self.active().collect();
        let mean = |f: &dyn Fn(&StationStats) -> f64| -> Option<f64> {
            (n > 0).then(|| active.iter().map(|s| f(s)).sum::<f64>() / n as f64)
        };
        let phy = newcomer_phy_bps.or_else(|| mean(&|s| s.phy_rate_bps))?;
        let payload = newcomer_payload.or_else(|| mean(&|s| s.mean_payload)).unwrap_or(1500.0);
        let overhead = (mac::LLC_SNAP + 24 + mac::FCS) as f64;
        let t_new = airtime::exchange_us((payload + overhead) as usize, phy) * 1e-6;
        // Each station's cost of one exchange, as the DCF gives every backlogged station the
        // same number of transmission opportunities (the anomaly, S2 Fig. 3, ref. [13]).
        let t: Vec<f64> =
            active.iter().map(|s| airtime::exchange_us(s.mean_bytes as usize, s.phy_rate_bps) * 1e-6).collect();
        let sum_t: f64 = t.iter().sum();
        let total = self.total_bps();
        // How far the channel falls short of collision-free DCF rounds: measured / modelled.
        let efficiency = if n > 0 {
            let modelled: f64 = active.iter().map(|s| s.mean_payload * 8.0).sum::<f64>() / sum_t;
            (total / modelled).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let alone = payload * 8.0 / t_new;
        Some(Features {
            n,
            total_bps: total,
            newcomer_phy_bps: phy,
            n_plus_one_bps: if n > 0 { total / (n as f64 + 1.0) } else { 0.0 },
            anomaly_bps: efficiency * payload * 8.0 / (sum_t + t_new),
            airtime_share_bps: efficiency * alone / (n as f64 + 1.0),
        })
    }
}

/// What the newcomer-rate model reads (bit/s unless said otherwise).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Features {
    /// Active stations N.
    pub n: usize,
    pub total_bps: f64,
    pub newcomer_phy_bps: f64,
    /// total / (N + 1); 0 with N = 0.
    pub n_plus_one_bps: f64,
    /// Equal transmission opportunities (no airtime fairness): the newcomer's payload per
    /// DCF round of every active station plus itself, scaled by the measured efficiency.
    pub anomaly_bps: f64,
    /// Equal airtime (ath9k airtime fairness, S2 Fig. 2): 1/(N + 1) of what the newcomer
    /// would get alone, scaled the same way.
    pub airtime_share_bps: f64,
}

impl Features {
    /// A feature by the name model files use.
    pub fn get(&self, name: &str) -> Option<f64> {
        Some(match name {
            "n" => self.n as f64,
            "total" => self.total_bps / 1e6,
            "newcomer_phy" => self.newcomer_phy_bps / 1e6,
            "n_plus_one" => self.n_plus_one_bps / 1e6,
            "anomaly" => self.anomaly_bps / 1e6,
            "airtime_share" => self.airtime_share_bps / 1e6,
            _ => return None,
        })
    }

    /// Every feature name [`Features::get`] knows (model files may use any of them; values
    /// in Mbit/s, `n` a count).
    pub const NAMES: &'static [&'static str] =
        &["n", "total", "newcomer_phy", "n_plus_one", "anomaly", "airtime_share"];
}

/// The estimator: the frames of the last window, in arrival order.
#[derive(Clone, Debug)]
pub struct Estimator {
    cfg: EstimatorConfig,
    frames: VecDeque<Observation>,
    first: Option<Time>,
    latest: Time,
    observed: u64,
}

impl Estimator {
    pub fn new(cfg: EstimatorConfig) -> Self {
        Estimator { cfg, frames: VecDeque::new(), first: None, latest: Time::ZERO, observed: 0 }
    }

    pub fn config(&self) -> &EstimatorConfig {
        &self.cfg
    }

    /// Frames observed in total (kept or expired).
    pub fn observed(&self) -> u64 {
        self.observed
    }

    /// Take one overheard frame. Frames from the ignored transmitter are dropped; frames
    /// older than the window before the latest one are never kept.
    pub fn observe(&mut self, o: Observation) {
        if self.cfg.ignore == Some(o.tx) {
            return;
        }
        self.observed += 1;
        self.first.get_or_insert(o.time);
        self.latest = self.latest.max(o.time);
        self.frames.push_back(o);
        self.expire(self.latest);
    }

    /// Drop the frames at or before `now − window`.
    fn expire(&mut self, now: Time) {
        let Some(cut) = now.as_nanos().checked_sub(crate::time::duration_nanos(self.cfg.window)) else { return };
        while self.frames.front().is_some_and(|f| f.time.as_nanos() <= cut) {
            self.frames.pop_front();
        }
    }

    /// The medium over `(now − window, now]`.
    pub fn snapshot(&self, now: Time) -> Snapshot {
        // Frames after `cut` count; with less than a window since the origin, all of them.
        let cut = now.as_nanos().checked_sub(crate::time::duration_nanos(self.cfg.window)).map(Time::from_nanos);
        let span = match (self.first, cut) {
            (Some(f), Some(c)) if f <= c => self.cfg.window,
            (Some(f), _) => now - f,
            (None, _) => Duration::ZERO,
        };
        let secs = span.as_secs_f64();
        let mut stations: Vec<StationStats> = Vec::new();
        let mut rate_sum: Vec<f64> = Vec::new();
        let mut bytes_sum: Vec<f64> = Vec::new();
        let mut first_tx: Vec<u64> = Vec::new();
        let mut last_seq: Vec<Option<u16>> = Vec::new();
        for f in self.frames.iter().filter(|f| cut.is_none_or(|c| f.time > c) && f.time <= now) {
            let i = match stations.binary_search_by(|s| s.mac.cmp(&f.tx)) {
                Ok(i) => i,
                Err(i) => {
                    stations.insert(
                        i,
                        StationStats {
                            mac: f.tx,
                            frames: 0,
                            retries: 0,
                            payload_bytes: 0,
                            throughput_bps: 0.0,
                            airtime: Duration::ZERO,
                            airtime_share: 0.0,
                            phy_rate_bps: 0.0,
                            mean_bytes: 0.0,
                            mean_payload: 0.0,
                            active: false,
                        },
                    );
                    rate_sum.insert(i, 0.0);
                    bytes_sum.insert(i, 0.0);
                    first_tx.insert(i, 0);
                    last_seq.insert(i, None);
                    i
                }
            };
            let s = &mut stations[i];
            s.frames += 1;
            s.airtime += f.airtime();
            rate_sum[i] += f.phy_rate_bps;
            bytes_sum[i] += f64::from(f.bytes);
            if f.retry {
                s.retries += 1;
            }
            // A retry of an MPDU already counted adds no payload.
            let repeat = f.retry && (f.seq.is_none() || f.seq == last_seq[i]);
            if !repeat {
                s.payload_bytes += u64::from(f.payload);
                first_tx[i] += 1;
            }
            last_seq[i] = f.seq;
        }
        for (i, s) in stations.iter_mut().enumerate() {
            s.phy_rate_bps = rate_sum[i] / s.frames as f64;
            s.mean_bytes = bytes_sum[i] / s.frames as f64;
            s.mean_payload = if first_tx[i] > 0 { s.payload_bytes as f64 / first_tx[i] as f64 } else { 0.0 };
            if secs > 0.0 {
                s.throughput_bps = s.payload_bytes as f64 * 8.0 / secs;
                s.airtime_share = s.airtime.as_secs_f64() / secs;
            }
            s.active = secs > 0.0 && s.throughput_bps >= self.cfg.min_active_bps;
        }
        Snapshot { at: now, span, stations }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sta(i: u8) -> Mac {
        Mac([2, 0, 0, 0, 0, i])
    }
    const AP: Mac = Mac([2, 0, 0, 0, 0, 0xff]);

    /// `n` frames of 1500-byte packets from station `i` at `rate` Mbit/s, one every `gap_us`
    /// from `start_ms`.
    fn stream(i: u8, rate: f64, start_ms: u64, n: u64, gap_us: u64) -> impl Iterator<Item = Observation> {
        (0..n).map(move |k| Observation {
            time: Time::from_micros(start_ms * 1000 + k * gap_us),
            tx: sta(i),
            rx: AP,
            bytes: 1536,
            payload: 1500,
            phy_rate_bps: rate * 1e6,
            retry: false,
            seq: Some((k % 4096) as u16),
        })
    }

    fn merged(mut streams: Vec<Vec<Observation>>) -> Vec<Observation> {
        let mut all: Vec<Observation> = streams.drain(..).flatten().collect();
        all.sort_by_key(|o| o.time);
        all
    }

    #[test]
    fn counts_stations_and_lets_idle_ones_go() {
        let mut e = Estimator::new(EstimatorConfig::default());
        // Station 1 from 0 to 3 s, station 2 from 1 s to 2 s, station 3 from 1.5 s: 1 frame
        // per ms each (12 Mbit/s of payload).
        let frames = merged(vec![
            stream(1, 54.0, 0, 3000, 1000).collect(),
            stream(2, 54.0, 1000, 1000, 1000).collect(),
            stream(3, 54.0, 1500, 1500, 1000).collect(),
        ]);
        let mut n_at = Vec::new();
        for o in frames {
            e.observe(o);
            let t = o.time.as_nanos();
            if t % 500_000_000 == 0 && n_at.last().is_none_or(|&(at, _)| at != t / 1_000_000) {
                n_at.push((t / 1_000_000, e.snapshot(o.time).n_active()));
            }
        }
        // At 0 no time has passed (nothing is a rate yet); at 1.0 s station 2 has sent one
        // frame (not active yet), by 1.5 s it is; it stops at 2.0 s and drops out once its
        // last frame is older than the window (3.0 s).
        assert_eq!(n_at, vec![(0, 0), (500, 1), (1000, 1), (1500, 2), (2000, 3), (2500, 3)]);
        let s = e.snapshot(Time::from_millis(3000));
        assert_eq!(s.n_active(), 2, "{s:?}");
        assert!(s.stations.iter().all(|x| x.mac != sta(2)), "its frames left the window");
        assert_eq!(e.snapshot(Time::from_millis(3500)).n_active(), 2);
        assert_eq!(e.snapshot(Time::from_millis(4000)).n_active(), 0);
    }

    #[test]
    fn window_expiry_keeps_only_the_last_window() {
        let mut e = Estimator::new(EstimatorConfig { window: Duration::from_millis(100), ..Default::default() });
        for o in stream(1, 54.0, 0, 1000, 1000) {
            e.observe(o);
        }
        assert_eq!(e.observed(), 1000);
        assert_eq!(e.frames.len(), 100, "only (0.899, 0.999] is kept");
        let s = e.snapshot(Time::from_micros(999_000));
        assert_eq!(s.stations[0].frames, 100);
        assert!((s.stations[0].throughput_bps - 12e6).abs() < 1.0, "{}", s.stations[0].throughput_bps);
        // Just after the first frame the covered span is shorter than the window.
        let mut e = Estimator::new(EstimatorConfig::default());
        for o in stream(1, 54.0, 0, 11, 1000) {
            e.observe(o);
        }
        let s = e.snapshot(Time::from_millis(10));
        assert_eq!(s.span, Duration::from_millis(10));
        assert!((s.stations[0].throughput_bps - 13.2e6).abs() < 1.0, "11 frames in 10 ms");
    }

    #[test]
    fn n_plus_one_prediction() {
        let mut e = Estimator::new(EstimatorConfig::default());
        assert_eq!(e.snapshot(Time::ZERO).n_plus_one(), None);
        // Two stations at 12 Mbit/s each: a third gets 24/3 = 8 Mbit/s.
        for o in merged(vec![stream(1, 54.0, 0, 2000, 1000).collect(), stream(2, 54.0, 0, 2000, 1000).collect()]) {
            e.observe(o);
        }
        let s = e.snapshot(Time::from_micros(1_999_000));
        assert_eq!(s.n_active(), 2);
        assert!((s.total_bps() - 24e6).abs() < 1.0);
        assert!((s.n_plus_one().unwrap() - 8e6).abs() < 1.0);
        // Equal PHY rates: the anomaly feature is the N + 1 rule.
        let f = s.features(None, None).unwrap();
        assert!((f.anomaly_bps - f.n_plus_one_bps).abs() < 1e-6 * f.n_plus_one_bps, "{f:?}");
        assert!((f.airtime_share_bps - f.n_plus_one_bps).abs() < 1e-6 * f.n_plus_one_bps, "{f:?}");
        // A slow newcomer gets less under the anomaly model than the rule says.
        let slow = s.features(Some(12e6), None).unwrap();
        assert!(slow.anomaly_bps < 0.8 * f.n_plus_one_bps, "{slow:?}");
        assert!(slow.airtime_share_bps < slow.anomaly_bps, "{slow:?}");
    }

    #[test]
    fn retries_cost_airtime_not_throughput_and_ignored_station() {
        let me = sta(7);
        let mut e = Estimator::new(EstimatorConfig { ignore: Some(me), ..Default::default() });
        // Every frame sent twice (same sequence number, the second with the retry bit).
        for (k, o) in stream(1, 24.0, 0, 100, 1000).enumerate() {
            e.observe(Observation { retry: k % 2 == 1, seq: Some((k / 2) as u16), ..o });
        }
        for o in stream(7, 54.0, 0, 100, 1000) {
            e.observe(o);
        }
        let s = e.snapshot(Time::from_millis(99));
        assert_eq!(s.stations.len(), 1);
        let st = s.stations[0];
        assert_eq!((st.frames, st.retries, st.payload_bytes), (100, 50, 50 * 1500));
        assert_eq!(st.airtime, airtime::exchange(1536, 24e6) * 100);
        assert_eq!(st.phy_rate_bps, 24e6);

        // First attempts lost (collisions): only retries overheard, each a new MPDU.
        let mut e = Estimator::new(EstimatorConfig::default());
        for o in stream(1, 24.0, 0, 100, 1000) {
            e.observe(Observation { retry: true, ..o });
        }
        let st = e.snapshot(Time::from_millis(99)).stations[0];
        assert_eq!((st.retries, st.payload_bytes), (100, 100 * 1500));
        // Without sequence numbers a retry is taken for a repeat.
        let mut e = Estimator::new(EstimatorConfig::default());
        for o in stream(1, 24.0, 0, 10, 1000) {
            e.observe(Observation { retry: true, seq: None, ..o });
        }
        assert_eq!(e.snapshot(Time::from_millis(9)).stations[0].payload_bytes, 0);
    }

    #[test]
    fn observations_from_mpdus() {
        let f = super::super::mac::tests_support::data_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 9], 1508, true);
        let o = Observation::from_mpdu(Time::from_millis(5), &f, f.len(), true, 54e6).unwrap();
        assert_eq!((o.bytes, o.payload, o.retry, o.tx, o.rx), (1536, 1500, true, sta(1), Mac([2, 0, 0, 0, 0, 9])));
        let ack = [0xd4, 0x00, 0, 0, 1, 2, 3, 4, 5, 6];
        assert!(Observation::from_mpdu(Time::ZERO, &ack, 14, true, 24e6).is_none());
    }
}
