//! The end-of-transfer report: ndnget's summary text, and the same numbers as JSON.

use rdtp_proto::Time;
use rdtp_proto::receiver::{Sources, Stats};
use serde::Serialize;

/// What one source (the origin, or a router's content store) delivered.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SourceSummary {
    /// Its node id (`origin`, `ap`, … or `0x…`).
    pub node: String,
    /// `origin`, or `router` for a router's content store.
    pub kind: &'static str,
    /// Routers between it and the receiver.
    pub hops: u8,
    /// Distinct units it delivered.
    pub units: u64,
    /// Distinct payload bytes it delivered.
    pub bytes: u64,
    /// Its share of the bytes, percent.
    pub share_pct: f64,
    /// RTT samples from its units.
    pub rtt_samples: u64,
    /// Smallest of them, milliseconds.
    pub rtt_min_ms: Option<f64>,
    /// Their mean, milliseconds.
    pub rtt_avg_ms: Option<f64>,
}

fn sources(s: &Sources) -> Vec<SourceSummary> {
    let total: u64 = s.iter().map(|x| x.bytes).sum();
    let ms = |d: Option<std::time::Duration>| d.map(|d| d.as_secs_f64() * 1e3);
    s.iter()
        .map(|x| SourceSummary {
            node: x.node.to_string(),
            kind: if x.cached { "router" } else { "origin" },
            hops: x.hops,
            units: x.units,
            bytes: x.bytes,
            share_pct: percent(x.bytes, total),
            rtt_samples: x.rtt_samples,
            rtt_min_ms: ms(x.rtt_min),
            rtt_avg_ms: ms(x.rtt_avg()),
        })
        .collect()
}

/// Everything a finished (or failed) fetch reports. Serialises to the `--json` object.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Server address.
    pub server: String,
    /// Object name (empty if fetched by EID and the server has no name for it).
    pub name: String,
    /// EID in hex, once known.
    pub eid: Option<String>,
    /// Object size in bytes, once known.
    pub size: Option<u64>,
    /// Congestion controller (`bbr`, `bbr-wifi`, `aimd`, `fixed`).
    pub cc: String,
    /// Payload bytes per unit.
    pub unit: u16,
    /// Every byte arrived and matched the EID.
    pub completed: bool,
    /// Seconds from the start of the fetch to the last unit.
    pub elapsed_s: f64,
    /// Payload bits per second over `elapsed_s`.
    pub goodput_bps: f64,
    /// Distinct units (segments) received.
    pub units_received: u64,
    /// Distinct payload bytes received.
    pub bytes_received: u64,
    /// Units that arrived again after they had already arrived.
    pub duplicates: u64,
    /// Datagrams that were not valid answers for this transfer.
    pub invalid: u64,
    /// Request datagrams sent (including resolves).
    pub requests_sent: u64,
    /// Units asked for, counting every re-request.
    pub units_requested: u64,
    /// ndnget's "retransmitted segments": units asked for again because they were lost or
    /// their block failed verification (not those a `Busy` refused, see `units_refused`).
    pub units_rerequested: u64,
    /// `units_rerequested / units_requested · 100`.
    pub retransmitted_pct: f64,
    /// Units declared lost (fast or timeout).
    pub units_lost: u64,
    /// Retransmission-timer expiries.
    pub timeouts: u64,
    /// Expiries after which the congestion window was smaller.
    pub timeout_window_decreases: u64,
    /// Loss-recovery episodes entered by fast re-request.
    pub fast_recoveries: u64,
    /// Nacks received (`Busy` ones included).
    pub nacks: u64,
    /// `Busy` Nacks received: a server over its send budget (`serve --max-rate`) or a router
    /// with a full table refused a request; the receiver backed off and asked again.
    pub busy: u64,
    /// Units those `Busy` Nacks refused (asked for again; counted in `units_requested`, not
    /// in `units_rerequested`).
    pub units_refused: u64,
    /// RTT samples taken.
    pub rtt_samples: u64,
    /// Smallest RTT sample, in milliseconds.
    pub rtt_min_ms: Option<f64>,
    /// Mean RTT sample, in milliseconds.
    pub rtt_avg_ms: Option<f64>,
    /// Largest RTT sample, in milliseconds.
    pub rtt_max_ms: Option<f64>,
    /// Who served the bytes, in the order they first delivered.
    pub sources: Vec<SourceSummary>,
    /// `origin 61.2 %, router ap 38.8 %`: each source's share (the text summary's "Served
    /// by" line says in addition how far each router is; `sources` has it as `hops`).
    pub served_by: String,
    /// NDN fetches only (`rdtp fetch --ndn`): how the segments were checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ndn: Option<NdnSummary>,
}

/// How an NDN fetch's segments were checked, and what of NDN it saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct NdnSummary {
    /// The versioned name fetched (`/prefix/v=<version>`).
    pub name: String,
    /// `trust-anchor` when every segment was signed by the `--trust-anchor`'s key;
    /// `DigestSha256` when every segment carried a valid one; `unverified` when some were
    /// signed otherwise (Ed25519, ECDSA, …) and no trust anchor could check them.
    pub integrity: &'static str,
    /// Segments taken with a valid DigestSha256.
    pub digest_verified: u64,
    /// Segments taken signed with another type, unchecked.
    pub unverified_segments: u64,
    /// Segments taken signed by the trust anchor's key.
    pub key_verified: u64,
    /// Data dropped because the trust anchor's key did not sign them (never delivered).
    pub bad_signature: u64,
    /// Data dropped because their DigestSha256 did not match (never delivered).
    pub bad_digest: u64,
    /// Interests sent (discovery included).
    pub interests: u64,
    /// Network Nacks received (NDNLPv2).
    pub nacks: u64,
}

impl NdnSummary {
    /// The summary's integrity line.
    pub fn to_text(&self) -> String {
        let mut s = if self.unverified_segments > 0 {
            format!("Unverified: {} segments (signed, no --trust-anchor)\n", self.unverified_segments)
        } else if self.key_verified > 0 {
            "Integrity: signed by the --trust-anchor's key (every segment)\n".to_string()
        } else {
            "Integrity: DigestSha256 (every segment)\n".to_string()
        };
        if self.bad_signature > 0 {
            s.push_str(&format!(
                "Dropped: {} Data not signed by the --trust-anchor's key (never delivered)\n",
                self.bad_signature
            ));
        }
        if self.bad_digest > 0 {
            s.push_str(&format!("Dropped: {} Data with a bad DigestSha256 (never delivered)\n", self.bad_digest));
        }
        s
    }
}

impl Summary {
    /// Fill the counters from a receiver's [`Stats`] at `now`.
    pub fn from_stats(stats: &Stats, now: Time) -> Self {
        let ms = |d: Option<std::time::Duration>| d.map(|d| d.as_secs_f64() * 1e3);
        Summary {
            elapsed_s: stats.elapsed(now).as_secs_f64(),
            goodput_bps: stats.goodput_bps(now),
            units_received: stats.units_received,
            bytes_received: stats.bytes_received,
            duplicates: stats.duplicates,
            invalid: stats.invalid,
            requests_sent: stats.requests_sent,
            units_requested: stats.units_requested,
            units_rerequested: stats.units_rerequested,
            retransmitted_pct: percent(stats.units_rerequested, stats.units_requested),
            units_lost: stats.units_lost,
            timeouts: stats.timeouts,
            timeout_window_decreases: stats.timeout_window_decreases,
            fast_recoveries: stats.fast_recoveries,
            nacks: stats.nacks,
            busy: stats.busy,
            units_refused: stats.units_refused,
            rtt_samples: stats.rtt_samples,
            rtt_min_ms: ms(stats.rtt_min),
            rtt_avg_ms: ms(stats.rtt_avg),
            rtt_max_ms: ms(stats.rtt_max),
            sources: sources(&stats.sources),
            served_by: stats.sources.summary(),
            ..Summary::default()
        }
    }

    /// ndnget's end-of-transfer summary (several lines, each ending in `\n`).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        if self.completed {
            s.push_str("All segments have been received.\n");
        }
        s.push_str(&format!("Time elapsed: {:.3} seconds\n", self.elapsed_s));
        s.push_str(&format!("Segments received: {}\n", self.units_received));
        s.push_str(&format!("Transferred size: {:.1} kB\n", self.bytes_received as f64 / 1000.0));
        s.push_str(&format!("Goodput: {}\n", format_goodput(self.goodput_bps)));
        s.push_str(&format!(
            "Timeouts: {} (caused {} window decreases)\n",
            self.timeouts, self.timeout_window_decreases
        ));
        s.push_str(&format!("Retransmitted segments: {} ({:.2}%)\n", self.units_rerequested, self.retransmitted_pct));
        if self.busy > 0 {
            s.push_str(&format!(
                "Busy answers: {} ({} segments refused, asked for again after backing off; not retransmissions)\n",
                self.busy, self.units_refused
            ));
        }
        let f = |v: Option<f64>| v.unwrap_or(0.0);
        s.push_str(&format!(
            "RTT min/avg/max = {:.3}/{:.3}/{:.3} ms\n",
            f(self.rtt_min_ms),
            f(self.rtt_avg_ms),
            f(self.rtt_max_ms)
        ));
        if !self.sources.is_empty() {
            s.push_str(&format!("Served by: {}\n", served_by_with_distances(&self.sources)));
        } else if !self.served_by.is_empty() {
            s.push_str(&format!("Served by: {}\n", self.served_by));
        }
        if let Some(n) = &self.ndn {
            s.push_str(&n.to_text());
        }
        s
    }

    /// One-line JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// `origin 98.4 %, router :7449 (2 hops away) 1.6 %`: every source's share of the bytes,
/// largest first, each router with its distance — routers one hop from the receiver are
/// `1 hop away`, one more per router between — so two routers, even with the same id,
/// are told apart.
fn served_by_with_distances(sources: &[SourceSummary]) -> String {
    let mut v: Vec<&SourceSummary> = sources.iter().collect();
    v.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.kind.cmp(b.kind)).then(a.node.cmp(&b.node)));
    v.iter()
        .map(|s| {
            let who = match (s.kind, s.node.as_str()) {
                ("router", node) => {
                    let away = u32::from(s.hops) + 1;
                    format!("router {node} ({away} hop{} away)", if away == 1 { "" } else { "s" })
                }
                (_, "origin") => "origin".to_string(),
                (_, node) => format!("origin {node}"),
            };
            format!("{who} {:.1} %", s.share_pct)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `part / whole · 100`, 0 when `whole` is 0.
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 * 100.0 / whole as f64 }
}

/// A bit rate the way ndnget prints it: base-1000 units, 6 decimals
/// (`bit/s`, `kbit/s`, `Mbit/s`, `Gbit/s`).
pub fn format_goodput(bps: f64) -> String {
    const UNITS: [&str; 4] = ["bit/s", "kbit/s", "Mbit/s", "Gbit/s"];
    let mut v = if bps.is_finite() && bps > 0.0 { bps } else { 0.0 };
    let mut i = 0;
    while v >= 1000.0 && i < UNITS.len() - 1 {
        v /= 1000.0;
        i += 1;
    }
    format!("{v:.6} {}", UNITS[i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn goodput_units() {
        assert_eq!(format_goodput(0.0), "0.000000 bit/s");
        assert_eq!(format_goodput(999.0), "999.000000 bit/s");
        assert_eq!(format_goodput(1000.0), "1.000000 kbit/s");
        assert_eq!(format_goodput(33_801_234.0), "33.801234 Mbit/s");
        assert_eq!(format_goodput(2.5e9), "2.500000 Gbit/s");
        assert_eq!(format_goodput(4.2e12), "4200.000000 Gbit/s");
        assert_eq!(format_goodput(f64::NAN), "0.000000 bit/s");
    }

    #[test]
    fn ndnget_summary_text() {
        let stats = Stats {
            started: Time::ZERO,
            finished: Some(Time::from_millis(2481)),
            units_received: 7490,
            bytes_received: 10_485_760,
            units_requested: 7493,
            units_rerequested: 3,
            timeouts: 3,
            timeout_window_decreases: 1,
            rtt_samples: 10,
            rtt_min: Some(Duration::from_micros(1204)),
            rtt_avg: Some(Duration::from_micros(5671)),
            rtt_max: Some(Duration::from_micros(20_113)),
            ..Stats::default()
        };
        let mut s = Summary::from_stats(&stats, Time::from_millis(9000));
        s.completed = true;
        assert_eq!(
            s.to_text(),
            "All segments have been received.\n\
             Time elapsed: 2.481 seconds\n\
             Segments received: 7490\n\
             Transferred size: 10485.8 kB\n\
             Goodput: 33.811399 Mbit/s\n\
             Timeouts: 3 (caused 1 window decreases)\n\
             Retransmitted segments: 3 (0.04%)\n\
             RTT min/avg/max = 1.204/5.671/20.113 ms\n"
        );
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(json["units_received"], 7490);
        assert_eq!(json["rtt_min_ms"], 1.204);
        assert_eq!(json["busy"], 0);
    }

    /// NDN fetches end with how their segments were checked; rdtp fetches have no such line
    /// and no `ndn` key in their JSON.
    #[test]
    fn ndn_integrity_lines() {
        let plain = Summary::default();
        assert!(!plain.to_text().contains("Integrity") && !plain.to_json().contains("\"ndn\""));
        let n = NdnSummary { integrity: "DigestSha256", digest_verified: 263, ..NdnSummary::default() };
        let s = Summary { ndn: Some(n.clone()), ..Summary::default() };
        assert!(s.to_text().ends_with("Integrity: DigestSha256 (every segment)\n"), "{}", s.to_text());
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!(json["ndn"]["integrity"], "DigestSha256");
        let n = NdnSummary { integrity: "unverified", unverified_segments: 244, bad_digest: 2, ..n };
        let s = Summary { ndn: Some(n), ..Summary::default() };
        assert!(
            s.to_text().ends_with(
                "Unverified: 244 segments (signed, no --trust-anchor)\n\
                 Dropped: 2 Data with a bad DigestSha256 (never delivered)\n"
            ),
            "{}",
            s.to_text()
        );
    }

    /// Issue 23 item 3: units a `Busy` refused are reported apart, not as retransmissions.
    #[test]
    fn busy_answers_are_reported_apart_from_retransmissions() {
        let stats = Stats {
            started: Time::ZERO,
            finished: Some(Time::from_millis(1000)),
            units_received: 2140,
            bytes_received: 3_000_280,
            units_requested: 2982,
            units_rerequested: 0,
            nacks: 18,
            busy: 18,
            units_refused: 842,
            ..Stats::default()
        };
        let s = Summary::from_stats(&stats, Time::from_millis(1000));
        let text = s.to_text();
        assert!(text.contains("Retransmitted segments: 0 (0.00%)\n"), "{text}");
        assert!(
            text.contains(
                "Busy answers: 18 (842 segments refused, asked for again after backing off; not retransmissions)\n"
            ),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        assert_eq!((json["busy"].as_u64(), json["units_refused"].as_u64()), (Some(18), Some(842)));
    }

    /// The text's "Served by" says how far each router is, so two routers with the same id
    /// (two `rdtp route` without `--id` before they were named by their ports) are told
    /// apart; the JSON's `served_by` keeps the shares alone (`sources` has the hops).
    #[test]
    fn served_by_says_how_far_each_router_is() {
        let source = |node: &str, kind, hops, bytes| SourceSummary {
            node: node.into(),
            kind,
            hops,
            bytes,
            share_pct: bytes as f64 / 10.0,
            ..SourceSummary::default()
        };
        let s = Summary {
            sources: vec![
                source("origin", "origin", 2, 984),
                source(":7448", "router", 0, 6),
                source(":7449", "router", 1, 10),
            ],
            served_by: "origin 98.4 %, router :7449 1.0 %, router :7448 0.6 %".into(),
            ..Summary::default()
        };
        assert!(
            s.to_text().ends_with(
                "Served by: origin 98.4 %, router :7449 (2 hops away) 1.0 %, router :7448 (1 hop away) 0.6 %\n"
            ),
            "{}",
            s.to_text()
        );
        let s = Summary { sources: vec![source("s2", "origin", 0, 1000)], ..Summary::default() };
        assert!(s.to_text().ends_with("Served by: origin s2 100.0 %\n"), "{}", s.to_text());
        assert!(!Summary::default().to_text().contains("Served by"));
    }

    #[test]
    fn percentages() {
        assert_eq!(percent(0, 0), 0.0);
        assert_eq!(percent(1, 4), 25.0);
        assert!((percent(3, 7493) - 0.040037).abs() < 1e-6);
    }
}
