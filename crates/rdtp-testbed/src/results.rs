//! Reading what the emulator and ping wrote (CSV through the `csv` crate), and the
//! statistics over a window.

use anyhow::{Context as _, Result};
use std::path::Path;

pub fn fmt(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.decimals$}"),
        _ => String::new(),
    }
}

/// One row of the emulator's timeseries.csv (its `dst_ip` column is not read).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct Delivered {
    /// End of the interval, emulator scenario seconds.
    pub time_s: f64,
    pub client: String,
    pub mbps: f64,
    pub payload_mbps: f64,
    pub data_packets: u64,
}

pub fn read_timeseries(path: &Path) -> Result<Vec<Delivered>> {
    let mut csv = csv::Reader::from_path(path).with_context(|| path.display().to_string())?;
    let rows = csv.deserialize().collect::<Result<Vec<Delivered>, _>>();
    rows.with_context(|| path.display().to_string())
}

/// Application goodput (Mbit/s) delivered to `client` over the whole intervals inside
/// [from, to) (emulator time): TCP/UDP payload, minus `per_packet_header` bytes for every
/// data packet (the rdtp Data header; 0 for TCP). `None` if no interval fits.
pub fn goodput(
    rows: &[Delivered],
    client: &str,
    interval: f64,
    from: f64,
    to: f64,
    per_packet_header: u64,
) -> Option<f64> {
    let mut bytes = 0.0;
    let mut n = 0usize;
    for r in rows.iter().filter(|r| r.client == client) {
        let start = r.time_s - interval;
        if start >= from - 1e-6 && r.time_s <= to + 1e-6 {
            let payload = r.payload_mbps * 1e6 / 8.0 * interval;
            bytes += (payload - (per_packet_header * r.data_packets) as f64).max(0.0);
            n += 1;
        }
    }
    (n > 0).then(|| bytes * 8.0 / (n as f64 * interval) / 1e6)
}

/// RTT samples of `ping -D` output: (unix time, rtt ms), and the highest icmp_seq sent.
pub fn parse_ping(text: &str) -> (Vec<(f64, f64)>, u64) {
    let mut samples = Vec::new();
    let mut max_seq = 0u64;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix('[') else { continue };
        let Some((ts, rest)) = rest.split_once(']') else { continue };
        let Ok(ts) = ts.parse::<f64>() else { continue };
        let field =
            |name: &str| rest.split_whitespace().find_map(|w| w.strip_prefix(name)).map(|v| v.trim_end_matches(','));
        if let Some(seq) = field("icmp_seq=").and_then(|v| v.parse::<u64>().ok()) {
            max_seq = max_seq.max(seq);
        }
        if let Some(rtt) = field("time=").and_then(|v| v.parse::<f64>().ok()) {
            samples.push((ts, rtt));
        }
    }
    (samples, max_seq)
}

/// Mean, p50, p95 (nearest rank: [`rdtp_units::quantile`]), max of a set of values.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub max: Option<f64>,
}

pub fn stats(values: &[f64]) -> Stats {
    if values.is_empty() {
        return Stats::default();
    }
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return Stats::default();
    }
    Stats {
        n: v.len(),
        mean: Some(v.iter().sum::<f64>() / v.len() as f64),
        p50: rdtp_units::quantile(&v, 0.5),
        p95: rdtp_units::quantile(&v, 0.95),
        max: v.last().copied(),
    }
}

/// A value from a TOML file's table (`section.key`) as f64.
pub fn toml_f64(t: &toml::Table, section: &str, key: &str) -> Option<f64> {
    match t.get(section)?.get(key)? {
        toml::Value::Float(f) => Some(*f),
        toml::Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_lines() {
        let text = "PING 10.200.0.2 (10.200.0.2) 56(84) bytes of data.\n\
            [1700000000.100000] 64 bytes from 10.200.0.2: icmp_seq=1 ttl=62 time=20.4 ms\n\
            [1700000000.300000] 64 bytes from 10.200.0.2: icmp_seq=2 ttl=62 time=31.0 ms\n\
            [1700000000.700000] no answer yet for icmp_seq=4\n";
        let (s, max) = parse_ping(text);
        assert_eq!(s, vec![(1700000000.1, 20.4), (1700000000.3, 31.0)]);
        assert_eq!(max, 4);
    }

    #[test]
    fn goodput_over_whole_intervals() {
        let rows: Vec<Delivered> = (1..=10)
            .map(|i| Delivered {
                time_s: i as f64 * 0.1,
                client: "client0".into(),
                mbps: 0.0,
                payload_mbps: 10.0,
                data_packets: 10,
            })
            .collect();
        // [0.2, 0.6): intervals ending at 0.3 .. 0.6 → 4 intervals of 10 Mbit/s payload.
        let g = goodput(&rows, "client0", 0.1, 0.2, 0.6, 0).unwrap();
        assert!((g - 10.0).abs() < 1e-9);
        // 10 packets × 125 bytes of header per 0.1 s = 0.1 Mbit/s less.
        let g = goodput(&rows, "client0", 0.1, 0.2, 0.6, 125).unwrap();
        assert!((g - 9.9).abs() < 1e-9);
        assert!(goodput(&rows, "client1", 0.1, 0.0, 1.0, 0).is_none());
    }

    #[test]
    fn percentiles() {
        let s = stats(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!(s.n, 4);
        assert_eq!(s.p50, Some(2.0));
        assert_eq!(s.max, Some(4.0));
        assert_eq!(s.mean, Some(2.5));
        assert_eq!(stats(&[]).mean, None);
    }
}
