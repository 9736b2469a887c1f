//! The controller suite's harness part: the wired scenarios of the four papers that a
//! deterministic dumbbell can hold, each run with any controller and reduced to the figures
//! the default controller is judged by (goodput or completion time, RTT against RTprop,
//! spurious re-requests, Jain's index among its own flows).
//!
//! | group | what | from |
//! |---|---|---|
//! | `grid` | one flow alone, rate × base RTT × drop-tail buffer | Liu et al. §5 (wired), BBR's own evaluations |
//! | `loss` | one flow under random loss of 1–12 % | Hu et al., BBR-CD, Fig. 7 (12 %) |
//! | `flows` | four flows of the controller, staggered by 2 s | Liu et al. Fig. 9, Hu et al. Topology 2 |
//! | `fetch` | completion time of one object, with and without a rate estimate | Hiorth and Welzl |
//!
//! WiFi, routers with caches and TCP cross traffic are ns-3's and the testbed's (the suite's
//! `rdtp sim` part, `tools/suite.sh`). This module only builds paths and measures; it holds
//! no protocol logic.

use core::time::Duration;

use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::server::PatternCatalog;

use crate::metrics::jain_index;
use crate::net::FlowSpec;
use crate::path::PathConfig;
use crate::sim::Sim;

/// What a scenario runs.
#[derive(Clone, Debug)]
pub enum Kind {
    /// One long flow; goodput over `[warmup, duration)`.
    Single,
    /// `n` long flows, flow `i` starting at `i × stagger`; summed goodput over
    /// `[warmup, duration)` and Jain's index of the flows' goodputs there.
    Flows { n: usize, stagger: Duration },
    /// One fetch of `size` bytes; its completion time. With `informed`, the receiver is told
    /// the path's payload rate before its first request (Hiorth and Welzl).
    Fetch { size: u64, informed: bool },
}

/// One row of the suite.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Unique, e.g. `grid 100M 20ms 1BDP`.
    pub name: String,
    /// `grid`, `loss`, `flows` or `fetch`.
    pub group: &'static str,
    pub path: PathConfig,
    pub kind: Kind,
    pub duration: Duration,
    pub warmup: Duration,
}

/// What one controller did in one scenario.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Goodput (distinct payload bytes that arrived in the window, in any order), bit/s;
    /// summed over the flows of a `flows` scenario; for `fetch`, size over completion time.
    pub goodput_bps: f64,
    /// `fetch`: time to the last byte; `None` if it did not finish in `duration`.
    pub fct: Option<Duration>,
    /// Mean RTT sample over the window divided by RTprop (propagation + one unit's
    /// serialisation).
    pub rtt_ratio: f64,
    /// Units re-requested / units requested, %.
    pub rerequested_pct: f64,
    /// Re-requests that were not needed (the unit arrived twice, or arrived after it was
    /// declared lost) / units requested, %.
    pub spurious_pct: f64,
    /// Jain's index of the flows' goodputs (`flows` only).
    pub jain: Option<f64>,
    pub timeouts: u64,
    /// Every flow delivered exactly the catalogue's bytes (or is still going without error).
    pub exact: bool,
}

impl Outcome {
    /// The figure a row is ranked by, higher is better: goodput, or 1 / FCT for `fetch`
    /// (0 when it did not finish).
    pub fn score(&self, kind: &Kind) -> f64 {
        match kind {
            Kind::Fetch { .. } => self.fct.map_or(0.0, |t| 1.0 / t.as_secs_f64()),
            _ => self.goodput_bps,
        }
    }
}

fn path(rate_mbps: f64, rtt_ms: f64, buffer_bdp: f64) -> PathConfig {
    PathConfig::new(rate_mbps * 1e6, Duration::from_secs_f64(rtt_ms / 1e3)).with_queue_bdp(buffer_bdp)
}

fn num(x: f64) -> String {
    let s = format!("{x}");
    s.trim_end_matches(".0").to_string()
}

/// The suite's scenarios. `rates` are the grid's bottleneck rates in Mbit/s (the grid also
/// takes base RTTs 5, 20, 100 ms and buffers 0.25, 1, 2 BDP).
pub fn scenarios(rates: &[f64]) -> Vec<Scenario> {
    let s = Duration::from_secs;
    let mut out = Vec::new();
    for &rate in rates {
        for rtt in [5.0, 20.0, 100.0] {
            for buf in [0.25, 1.0, 2.0] {
                out.push(Scenario {
                    name: format!("grid {}M {}ms {}BDP", num(rate), num(rtt), num(buf)),
                    group: "grid",
                    path: path(rate, rtt, buf),
                    kind: Kind::Single,
                    duration: s(30),
                    warmup: s(5),
                });
            }
        }
    }
    for (rate, rtt, loss) in [(100.0, 20.0, 0.01), (100.0, 20.0, 0.05), (100.0, 20.0, 0.12), (20.0, 40.0, 0.12)] {
        let mut p = path(rate, rtt, 1.0);
        p.data_loss = loss;
        out.push(Scenario {
            name: format!("loss {}M {}ms {}%", num(rate), num(rtt), num(loss * 100.0)),
            group: "loss",
            path: p,
            kind: Kind::Single,
            duration: s(30),
            warmup: s(5),
        });
    }
    for (rate, rtt, buf) in [(100.0, 20.0, 1.0), (100.0, 20.0, 0.25), (20.0, 50.0, 2.0)] {
        out.push(Scenario {
            name: format!("flows 4× {}M {}ms {}BDP", num(rate), num(rtt), num(buf)),
            group: "flows",
            path: path(rate, rtt, buf),
            kind: Kind::Flows { n: 4, stagger: s(2) },
            duration: s(40),
            warmup: s(15),
        });
    }
    for (rate, rtt, size, informed) in [
        (100.0, 100.0, 10_000_000, false),
        (100.0, 100.0, 10_000_000, true),
        (10.0, 20.0, 2_000_000, false),
        (10.0, 20.0, 2_000_000, true),
    ] {
        out.push(Scenario {
            name: format!(
                "fetch {}MB {}M {}ms{}",
                size / 1_000_000,
                num(rate),
                num(rtt),
                if informed { " informed" } else { "" }
            ),
            group: "fetch",
            path: path(rate, rtt, 1.0),
            kind: Kind::Fetch { size, informed },
            duration: s(30),
            warmup: Duration::ZERO,
        });
    }
    out
}

/// Run `cc` in `sc` (seed `seed`).
pub fn run(sc: &Scenario, cc: &CcConfig, seed: u64) -> Outcome {
    let mut p = sc.path.clone();
    p.seed = seed;
    let (n, stagger) = match sc.kind {
        Kind::Flows { n, stagger } => (n, stagger),
        _ => (1, Duration::ZERO),
    };
    let size = match sc.kind {
        Kind::Fetch { size, .. } => size,
        // 20 % more than the path can carry in the run: it never runs out.
        _ => (p.rate_bps / 8.0 * sc.duration.as_secs_f64() * 1.2) as u64,
    };
    let unit = ReceiverConfig::default().unit;
    let names: Vec<String> = (0..n).map(|i| format!("object{i}")).collect();
    let catalog = PatternCatalog::new(names.iter().enumerate().map(|(i, name)| (name.clone(), size, seed + i as u64)));
    let mut sim = Sim::new(p.clone(), catalog, Duration::from_millis(10));
    let ids: Vec<usize> = (0..n)
        .map(|i| {
            let cfg = ReceiverConfig { cc: cc.clone(), seed: seed + i as u64, ..ReceiverConfig::default() };
            let mut spec = FlowSpec::new(&names[i], cfg);
            spec.start = stagger * i as u32;
            if let Kind::Fetch { informed: true, .. } = sc.kind {
                spec.informed_rate = Some(p.payload_rate(unit));
            }
            sim.add_flow(spec)
        })
        .collect();
    // Goodput counts distinct payload that arrived in the window, whatever its order: a
    // controller that asks for new units before lost ones (BBR-CD) holds in-order delivery
    // back and then releases it in bursts (`fetch` rows measure what that costs).
    sim.run(sc.warmup);
    let at_warmup: Vec<u64> = ids.iter().map(|&id| sim.flows[id].stats().map_or(0, |st| st.bytes_received)).collect();
    sim.run(sc.duration);
    let (from, to) = (sc.warmup, sc.duration);
    let rtprop = p.rtprop(unit).as_secs_f64();
    let mut out = Outcome { exact: true, ..Outcome::default() };
    let (mut requested, mut rereq, mut spurious, mut rtt_sum, mut rtt_n) = (0u64, 0u64, 0u64, 0.0, 0usize);
    let mut goodputs = Vec::new();
    for &id in &ids {
        let f = &sim.flows[id];
        let st = f.stats().unwrap_or_default();
        requested += st.units_requested;
        rereq += st.units_rerequested;
        spurious += st.duplicates + st.late_arrivals;
        out.timeouts += st.timeouts;
        out.exact &= f.mismatch_at.is_none() && f.error.is_none();
        let in_window =
            |t: &rdtp_proto::time::Time| (from..to).contains(&t.saturating_since(rdtp_proto::time::Time::ZERO));
        let samples = f.rtt.samples().iter().filter(|(t, _)| in_window(t));
        for (_, d) in samples {
            rtt_sum += d.as_secs_f64();
            rtt_n += 1;
        }
        let window = (to - from).as_secs_f64();
        goodputs.push((st.bytes_received - at_warmup[goodputs.len()]) as f64 * 8.0 / window);
        if let Kind::Fetch { .. } = sc.kind {
            out.fct = f.is_byte_exact().then(|| f.completion_time()).flatten();
        }
    }
    out.goodput_bps = match (&sc.kind, out.fct) {
        (Kind::Fetch { size, .. }, Some(t)) => *size as f64 * 8.0 / t.as_secs_f64(),
        (Kind::Fetch { .. }, None) => 0.0,
        _ => goodputs.iter().sum(),
    };
    if let Kind::Fetch { .. } = sc.kind {
        out.exact &= out.fct.is_some();
    }
    out.jain = (n > 1).then(|| jain_index(&goodputs));
    out.rtt_ratio = if rtt_n > 0 { rtt_sum / rtt_n as f64 / rtprop } else { 0.0 };
    out.rerequested_pct = 100.0 * rereq as f64 / requested.max(1) as f64;
    out.spurious_pct = 100.0 * spurious as f64 / requested.max(1) as f64;
    out
}
