//! The report of one run: what the testbed measured ([`crate::run`]) and what the emulator
//! wrote (run.toml, timeseries.csv) and the routers' `--stats-json`, turned into the validity
//! verdict, `clients.csv`, `flows.csv`, `testbed.toml` and the columns of runs.csv / summary.csv.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use anyhow::{Context as _, Result};
use serde::Serialize;

use crate::experiment::{Kind, Layout, Run};
use crate::netns::TapStats;
use crate::results::{self, Delivered, Stats, fmt};
use crate::run::{Bed, Clock, Context, Daemon, During, End, FlowRun, Router, RunResult, Server, ns_name};

/// Write the run's report files into `dir` and return its runs.csv / summary.csv columns.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write(
    ctx: &Context,
    run: &Run,
    layout: &Layout,
    bed: &Bed,
    clock: &Clock,
    during: &During,
    end: &End,
    dir: &Path,
) -> Result<RunResult> {
    let g = &run.experiment.testbed;
    let logs = dir.join("logs");
    let emu_toml: toml::Table = fs::read_to_string(dir.join("run.toml"))
        .map_err(|err| anyhow::anyhow!("the emulator wrote no run.toml ({err}); see logs/emulator.err"))?
        .parse()
        .context("emulator run.toml")?;
    let series = results::read_timeseries(&dir.join("timeseries.csv")).unwrap_or_default();
    let taps = (bed.tap_labels.as_slice(), clock.taps_before.as_slice(), end.tap_delta.as_slice());
    let verdict = Verdict::of(g.lag_threshold_ms, &emu_toml, taps, end.emulator);
    let ping_stats = ping_stats(&logs, layout.namespaces.len(), clock.t0_unix, g.warmup, end.at);
    let window = Window { from: g.warmup, to: end.at, offset: clock.offset, interval: g.interval };
    let ns_goodput = write_clients_csv(dir, &ctx.prefix, layout, &series, &window, &ping_stats, &end.tap_delta)?;
    let routers = !bed.routers.is_empty();
    let flow_rows = write_flows_csv(dir, ctx, layout, &bed.flows, &series, &window, &ping_stats, routers)?;
    let (mut server_lines, mut server_cols) = server_report(&bed.servers, end.at - g.warmup);
    let (router_lines, router_cols) = router_report(&bed.routers, end.at - g.warmup);
    server_lines.push_str(&router_lines);
    server_cols.extend(router_cols);

    let cores_busy =
        during.server_cores_warmup.zip(end.server_cores).and_then(|(a, b)| busy_pct(a, b, end.server_cpus as f64));
    let sys_busy = during.sys_warmup.zip(end.sys).and_then(|(a, b)| busy_pct(a, b, 1.0));
    let total_gp: Option<f64> = {
        let v: Vec<f64> = ns_goodput.iter().flatten().copied().collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    let ping0 = ping_stats.first().map(|p| p.0).unwrap_or_default();
    let mean_sockets = mean(during.socket_samples.iter().map(|m| m.sockets as f64));
    let mean_skmem = mean(during.socket_samples.iter().map(|m| (m.wmem_queued + m.rmem_alloc) as f64));
    let mut run_cols: Vec<(String, String)> = verdict.columns();
    run_cols.extend([
        ("utilisation".into(), fmt(results::toml_f64(&emu_toml, "results", "utilisation"), 4)),
        ("mean_queue_delay_ms".into(), fmt(results::toml_f64(&emu_toml, "results", "mean_queue_delay_ms"), 3)),
        ("queue_drops".into(), fmt(results::toml_f64(&emu_toml, "results", "queue_drops"), 0)),
        ("total_goodput_mbps".into(), fmt(total_gp, 3)),
        ("flows".into(), bed.flows.len().to_string()),
        (
            "completed".into(),
            flow_rows.iter().filter(|r| r.iter().any(|(k, v)| k == "completed" && v == "1")).count().to_string(),
        ),
        ("ping_rtt_mean_ms".into(), fmt(ping0.mean, 3)),
        ("ping_rtt_p95_ms".into(), fmt(ping0.p95, 3)),
        (
            "clients_run_queue_wait_pct".into(),
            fmt(
                mean(flow_rows.iter().filter_map(|r| {
                    r.iter().find(|(k, _)| k == "run_queue_wait_pct").and_then(|(_, v)| v.parse::<f64>().ok())
                })),
                2,
            ),
        ),
    ]);
    run_cols.extend(server_cols);
    let skmem_per_conn = match (mean_skmem, mean_sockets) {
        (Some(m), Some(n)) if n > 0.0 => Some(m / n / 1024.0),
        _ => None,
    };
    run_cols.extend([
        ("tcp_sockets_mean".into(), fmt(mean_sockets, 1)),
        ("tcp_skmem_per_conn_kib".into(), fmt(skmem_per_conn, 1)),
        ("server_cpus_busy_pct".into(), fmt(cores_busy.map(|c| c.0), 2)),
        ("server_cpus_softirq_pct".into(), fmt(cores_busy.map(|c| c.1), 2)),
        ("emulator_cpu_s".into(), fmt(end.emulator.map(|u| u.cpu_s), 2)),
        ("system_cpu_busy_pct".into(), fmt(sys_busy.map(|s| s.0), 1)),
        ("system_softirq_pct".into(), fmt(sys_busy.map(|s| s.1), 1)),
        ("t0_offset_s".into(), fmt(Some(clock.offset), 3)),
    ]);
    let socket_memory = (during.socket_samples.len(), mean_sockets.zip(mean_skmem));
    write_testbed_toml(dir, run, end.at, clock.offset, &run_cols, socket_memory, &server_lines)?;
    Ok(RunResult { run: run_cols, flows: flow_rows, valid: verdict.valid() })
}

/// Busy and softirq percent between two `/proc/stat` samples (busy, softirq, total jiffies),
/// scaled by `cpus` (the number of CPUs summed, to give % of one CPU).
fn busy_pct(a: (u64, u64, u64), b: (u64, u64, u64), cpus: f64) -> Option<(f64, f64)> {
    (b.2 > a.2).then(|| {
        (100.0 * (b.0 - a.0) as f64 / (b.2 - a.2) as f64 * cpus, 100.0 * (b.1 - a.1) as f64 / (b.2 - a.2) as f64 * cpus)
    })
}

fn mean(it: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = it.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Whether the emulation was faithful over [warmup, end): lag p99 within the threshold, no
/// packet lost outside the emulated network, the emulator exited cleanly.
struct Verdict {
    reasons: Vec<String>,
    lag_p99: Option<f64>,
    lag_max: Option<f64>,
    lag_over: Option<f64>,
    fd_drops: u64,
    /// Tap ring drops (tx_dropped: the emulator's reader fell behind) and host receive drops.
    tap_drops: u64,
    host_rx_drops: u64,
}

impl Verdict {
    /// `taps`: every namespace's tap label, counters at time 0 and since time 0.
    fn of(
        threshold_ms: f64,
        emu: &toml::Table,
        (labels, taps_before, tap_delta): (&[String], &[TapStats], &[TapStats]),
        emulator: Option<crate::procs::Usage>,
    ) -> Verdict {
        // Drops outside the emulated network: the taps' rings (tx_dropped: the emulator's
        // reader fell behind; rx_dropped: a host did not take what the emulator wrote) and the
        // FdNetDevice read queue.
        let tap_drops: u64 = tap_delta.iter().map(|d| d.tx_dropped).sum();
        let host_rx_drops: u64 = tap_delta.iter().map(|d| d.rx_dropped).sum();
        let fd_drops = fd_queue_drops(emu, labels, taps_before, tap_delta);
        let lag_p99 = results::toml_f64(emu, "results", "window_lag_p99_ms");
        let lag_max = results::toml_f64(emu, "results", "window_lag_max_ms");
        let lag_over = results::toml_f64(emu, "results", "window_lag_over_threshold");
        let mut reasons = Vec::new();
        let emulator_ok = emulator.is_some_and(|u| u.exit_code() == Some(0));
        if !emulator_ok {
            reasons.push(format!("emulator {}", emulator.map_or("not reaped".into(), |u| u.describe())));
        }
        match lag_p99 {
            Some(p) if p <= threshold_ms => {}
            Some(p) => reasons.push(format!("lag p99 {p:.3} ms > {threshold_ms} ms")),
            None => reasons.push("no lag samples".into()),
        }
        if fd_drops > 0 {
            reasons.push(format!("{fd_drops} FdNetDevice read-queue drops"));
        }
        if tap_drops > 0 {
            reasons.push(format!("{tap_drops} tap ring drops (emulator reader too slow)"));
        }
        if host_rx_drops > 0 {
            reasons.push(format!("{host_rx_drops} packets dropped by the hosts' taps on receive"));
        }
        Verdict { reasons, lag_p99, lag_max, lag_over, fd_drops, tap_drops, host_rx_drops }
    }

    fn valid(&self) -> bool {
        self.reasons.is_empty()
    }

    fn columns(&self) -> Vec<(String, String)> {
        vec![
            ("valid".into(), self.valid().to_string()),
            ("invalid_reason".into(), self.reasons.join("; ")),
            ("lag_p99_ms".into(), fmt(self.lag_p99, 3)),
            ("lag_max_ms".into(), fmt(self.lag_max, 3)),
            ("lag_over_threshold".into(), fmt(self.lag_over, 0)),
            ("fd_queue_drops".into(), self.fd_drops.to_string()),
            ("tap_drops".into(), (self.tap_drops + self.host_rx_drops).to_string()),
        ]
    }
}

/// FdNetDevice read-queue drops: what the kernel handed to the emulator's reader (tap
/// tx_packets over the whole life of the tap) minus what the emulator received.
fn fd_queue_drops(emu: &toml::Table, labels: &[String], before: &[TapStats], delta: &[TapStats]) -> u64 {
    let mut drops = 0u64;
    for (label, (b, d)) in labels.iter().zip(before.iter().zip(delta)) {
        let Some(received) = results::toml_f64(emu, &format!("tap.{label}"), "from_host_packets") else { continue };
        let read = b.tx_packets + d.tx_packets;
        drops += read.saturating_sub(received as u64);
    }
    drops
}

/// Ping RTT statistics and loss per client namespace, over [from, to) in testbed time.
fn ping_stats(logs: &Path, namespaces: usize, t0_unix: f64, from: f64, to: f64) -> Vec<(Stats, f64)> {
    let mut out = Vec::new();
    for i in 0..namespaces {
        let text = fs::read_to_string(logs.join(format!("ping-c{i}.txt"))).unwrap_or_default();
        let (samples, max_seq) = results::parse_ping(&text);
        let in_window: Vec<f64> = samples
            .iter()
            .filter(|(t, _)| {
                let rel = t - t0_unix;
                rel >= from && rel < to
            })
            .map(|(_, r)| *r)
            .collect();
        let loss = if max_seq > 0 { 1.0 - samples.len() as f64 / max_seq as f64 } else { f64::NAN };
        out.push((results::stats(&in_window), loss));
    }
    out
}

/// The measurement window in testbed time, and how to read the emulator's series.
struct Window {
    from: f64,
    to: f64,
    /// Emulator time = testbed time + offset.
    offset: f64,
    interval: f64,
}

/// Goodput a client namespace received over [from, to) (testbed time): the header of rdtp
/// Data packets removed when `kind` is rdtp (for NDN flows the Data's TLV name, MetaInfo,
/// signature and NDNLPv2 headers still count: their own `fetch_goodput_mbps` excludes them).
fn goodput(series: &[Delivered], ns: usize, w: &Window, from: f64, to: f64, kind: Option<Kind>) -> Option<f64> {
    let header = if kind == Some(Kind::Rdtp) { rdtp_proto::wire::DATA_HEADER_LEN as u64 } else { 0 };
    results::goodput(series, &format!("client{ns}"), w.interval, from + w.offset, to + w.offset, header)
}

/// A client's JSON summary in `rdtp fetch --json`'s terms. NDNts's consumer names its fields
/// otherwise, prints a summary only for a whole object, and reports its final smoothed RTT
/// (RFC 6298 SRTT) where rdtp reports the mean of its samples.
fn fetch_summary(kind: Kind, size: u64, json: serde_json::Value) -> serde_json::Value {
    if kind != Kind::Ndnts {
        return json;
    }
    serde_json::json!({
        "completed": json["bytes"].as_u64() == Some(size),
        "goodput_bps": json["goodput_mbps"].as_f64().map(|m| m * 1e6),
        "elapsed_s": json["seconds"],
        "bytes_received": json["bytes"],
        "rtt_avg_ms": json["srtt_ms"],
        "units_rerequested": json["retransmissions"],
    })
}

/// One row of clients.csv.
#[derive(Serialize)]
struct ClientRow {
    namespace: String,
    client: String,
    flows: usize,
    goodput_mbps: String,
    ping_rtt_mean_ms: String,
    ping_rtt_p50_ms: String,
    ping_rtt_p95_ms: String,
    ping_rtt_max_ms: String,
    ping_samples: usize,
    ping_loss: String,
    tap_tx_dropped: u64,
    tap_rx_dropped: u64,
}

/// clients.csv (one row per client namespace); returns each namespace's goodput.
fn write_clients_csv(
    dir: &Path,
    prefix: &str,
    layout: &Layout,
    series: &[Delivered],
    w: &Window,
    ping_stats: &[(Stats, f64)],
    tap_delta: &[TapStats],
) -> Result<Vec<Option<f64>>> {
    // The kind of a namespace's flows, if they are all of one kind.
    let ns_kind = |i: usize| -> Option<Kind> {
        let kinds: HashSet<Kind> = layout.namespaces[i].iter().map(|&f| layout.flows[f].kind).collect();
        (kinds.len() == 1).then(|| kinds.into_iter().next()).flatten()
    };
    let mut csv = csv::Writer::from_path(dir.join("clients.csv"))?;
    let mut ns_goodput = Vec::new();
    for (i, &(ps, loss)) in ping_stats.iter().enumerate() {
        let gp = goodput(series, i, w, w.from, w.to, ns_kind(i));
        ns_goodput.push(gp);
        let d = tap_delta.get(i + 1).copied().unwrap_or_default();
        csv.serialize(ClientRow {
            namespace: ns_name(prefix, Some(i)),
            client: format!("client{i}"),
            flows: layout.namespaces[i].len(),
            goodput_mbps: fmt(gp, 3),
            ping_rtt_mean_ms: fmt(ps.mean, 3),
            ping_rtt_p50_ms: fmt(ps.p50, 3),
            ping_rtt_p95_ms: fmt(ps.p95, 3),
            ping_rtt_max_ms: fmt(ps.max, 3),
            ping_samples: ps.n,
            ping_loss: fmt(Some(loss), 4),
            tap_tx_dropped: d.tx_dropped,
            tap_rx_dropped: d.rx_dropped,
        })?;
    }
    if ping_stats.is_empty() {
        csv.write_record(ClientRow::HEADER)?;
    }
    csv.flush()?;
    Ok(ns_goodput)
}

impl ClientRow {
    const HEADER: [&'static str; 12] = [
        "namespace",
        "client",
        "flows",
        "goodput_mbps",
        "ping_rtt_mean_ms",
        "ping_rtt_p50_ms",
        "ping_rtt_p95_ms",
        "ping_rtt_max_ms",
        "ping_samples",
        "ping_loss",
        "tap_tx_dropped",
        "tap_rx_dropped",
    ];
}

/// flows.csv (one row per client process); returns the rows (column, value) for summary.csv.
/// With `routers`, also who served each fetch (`served_by`, `cache_share_pct`).
#[allow(clippy::too_many_arguments)]
fn write_flows_csv(
    dir: &Path,
    ctx: &Context,
    layout: &Layout,
    flows: &[FlowRun],
    series: &[Delivered],
    w: &Window,
    ping_stats: &[(Stats, f64)],
    routers: bool,
) -> Result<Vec<Vec<(String, String)>>> {
    let logs = dir.join("logs");
    let mut rows = Vec::new();
    for f in flows {
        let json: Option<serde_json::Value> = fs::read_to_string(logs.join(format!("flow-{}.json", f.inst.index)))
            .ok()
            .and_then(|t| t.lines().last().and_then(|l| serde_json::from_str(l).ok()))
            .map(|j| fetch_summary(f.inst.kind, f.inst.size, j));
        let completed = json.as_ref().and_then(|j| j["completed"].as_bool()).unwrap_or(false)
            && f.usage.is_some_and(|u| u.exit_code() == Some(0));
        let started = f.started.unwrap_or(f.inst.start);
        let active_end = f.ended.unwrap_or(w.to).min(w.to);
        let alone = layout.namespaces[f.inst.ns].len() == 1;
        let win_from = started.max(w.from);
        let gp = if alone && active_end > win_from {
            goodput(series, f.inst.ns, w, win_from, active_end, Some(f.inst.kind))
        } else {
            None
        };
        // Only a completed fetch can be compared (a stopped one has a partial file).
        let byte_exact = f
            .output
            .as_ref()
            .filter(|_| completed)
            .map(|p| files_equal(p, &ctx.content.path(f.inst.size)).unwrap_or(false));
        if let Some(p) = &f.output {
            let _ = fs::remove_file(p);
        }
        let status = flow_status(f.usage);
        let j = |k: &str| json.as_ref().and_then(|v| v[k].as_f64());
        let count = |k: &str| json.as_ref().and_then(|v| v[k].as_u64()).map_or(String::new(), |b| b.to_string());
        let (ps, _) = ping_stats[f.inst.ns];
        rows.push(vec![
            ("flow".into(), f.inst.index.to_string()),
            ("def".into(), f.inst.def.to_string()),
            ("kind".into(), f.inst.kind.name().into()),
            ("cc".into(), f.inst.cc.clone()),
            ("client".into(), f.inst.ns.to_string()),
            ("start_s".into(), fmt(Some(started), 3)),
            ("end_s".into(), fmt(Some(active_end), 3)),
            ("status".into(), status),
            ("completed".into(), (completed as u8).to_string()),
            ("goodput_mbps".into(), fmt(gp, 3)),
            ("fetch_goodput_mbps".into(), fmt(j("goodput_bps").map(|b| b / 1e6), 3)),
            ("fetch_elapsed_s".into(), fmt(j("elapsed_s"), 3)),
            ("bytes".into(), count("bytes_received")),
            ("fetch_rtt_avg_ms".into(), fmt(j("rtt_avg_ms"), 3)),
            ("ping_rtt_mean_ms".into(), fmt(ps.mean, 3)),
            ("ping_rtt_p95_ms".into(), fmt(ps.p95, 3)),
            ("retransmitted".into(), count("units_rerequested")),
            ("cpu_s".into(), fmt(f.usage.map(|u| u.cpu_s), 3)),
            // Waiting for a CPU while runnable, as a share of its time alive: a client whose
            // requests wait here is starved by what shares its CPU (the emulator above all).
            (
                "run_queue_wait_pct".into(),
                fmt(f.sched.filter(|_| active_end > started).map(|(_, wait)| wait / (active_end - started) * 100.0), 2),
            ),
            ("max_rss_mib".into(), fmt(f.usage.map(|u| u.max_rss_mib), 1)),
            ("byte_exact".into(), byte_exact.map_or(String::new(), |b| b.to_string())),
        ]);
        if routers {
            let row = rows.last_mut().expect("just pushed");
            let served_by = json.as_ref().and_then(|v| v["served_by"].as_str()).unwrap_or_default();
            row.push(("served_by".into(), served_by.to_string()));
            row.push(("cache_share_pct".into(), fmt(json.as_ref().and_then(cache_share_pct), 2)));
        }
    }
    let mut csv = csv::Writer::from_path(dir.join("flows.csv"))?;
    if let Some(first) = rows.first() {
        csv.write_record(first.iter().map(|(k, _)| k))?;
    }
    for row in &rows {
        csv.write_record(row.iter().map(|(_, v)| v))?;
    }
    csv.flush()?;
    Ok(rows)
}

/// Percent of a fetch's bytes that routers' content stores served (its JSON's `sources`).
fn cache_share_pct(fetch: &serde_json::Value) -> Option<f64> {
    let sources = fetch["sources"].as_array()?;
    let bytes = |router: bool| -> u64 {
        sources.iter().filter(|s| (s["kind"] == "router") == router).filter_map(|s| s["bytes"].as_u64()).sum()
    };
    let (cached, origin) = (bytes(true), bytes(false));
    (cached + origin > 0).then(|| 100.0 * cached as f64 / (cached + origin) as f64)
}

fn files_equal(a: &Path, b: &Path) -> Result<bool> {
    use std::io::Read;
    if fs::metadata(a)?.len() != fs::metadata(b)?.len() {
        return Ok(false);
    }
    let mut fa = std::io::BufReader::new(fs::File::open(a)?);
    let mut fb = std::io::BufReader::new(fs::File::open(b)?);
    let (mut x, mut y) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = fa.read(&mut x)?;
        if n == 0 {
            return Ok(true);
        }
        fb.read_exact(&mut y[..n])?;
        if x[..n] != y[..n] {
            return Ok(false);
        }
    }
}

/// The `[server.*]` sections of testbed.toml and the servers' run columns.
fn server_report(servers: &[Server], window: f64) -> (String, Vec<(String, String)>) {
    let mut lines = String::new();
    let mut cols: Vec<(String, String)> = Vec::new();
    for s in servers {
        let mut kv = vec![("port", s.port.to_string()), ("flows", s.flows.to_string())];
        kv.extend(usage_report(&s.d, window, &mut cols));
        write_section(&mut lines, &format!("server.{}", s.d.label), kv, &s.d);
    }
    (lines, cols)
}

/// The `[router.*]` sections of testbed.toml (placement, CPU and memory, the counters of its
/// `--stats-json`) and the routers' run columns: `router_<node>_hit_ratio`, `_cs_hits`,
/// `_cs_misses`, `_coalesced`, `_upstream_bytes`, `_downstream_bytes`, then CPU and memory.
fn router_report(routers: &[Router], window: f64) -> (String, Vec<(String, String)>) {
    let mut lines = String::new();
    let mut cols: Vec<(String, String)> = Vec::new();
    for r in routers {
        let stats: Option<serde_json::Value> =
            fs::read_to_string(&r.stats_json).ok().and_then(|t| serde_json::from_str(&t).ok());
        let counter = |k: &str| stats.as_ref().and_then(|v| v["totals"]["router"][k].as_u64());
        let (hits, misses) = (counter("cs_hits"), counter("cs_misses"));
        let ratio = hits.zip(misses).filter(|(h, m)| h + m > 0).map(|(h, m)| h as f64 / (h + m) as f64);
        let show = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        let p = &r.d.label;
        let stat_cols = [
            ("hit_ratio", fmt(ratio, 4)),
            ("cs_hits", show(hits)),
            ("cs_misses", show(misses)),
            ("coalesced", show(counter("coalesced"))),
            ("upstream_bytes", show(counter("bytes_in"))),
            ("downstream_bytes", show(counter("bytes_out"))),
        ];
        cols.extend(stat_cols.iter().map(|(k, v)| (format!("{p}_{k}"), v.clone())));
        let mut kv = vec![
            ("node", format!("{:?}", r.plan.node)),
            ("address", format!("\"{}\"", r.plan.addr)),
            ("upstream", format!("\"{}\"", r.plan.upstream)),
            ("requests", show(counter("requests"))),
            ("units_requested", show(counter("units_requested"))),
        ];
        kv.extend(stat_cols);
        kv.extend([
            ("forwarded_units", show(counter("forwarded_units"))),
            ("reforwarded_units", show(counter("reforwarded_units"))),
            ("upstream_requests", show(counter("upstream_requests"))),
        ]);
        kv.extend(usage_report(&r.d, window, &mut cols));
        write_section(&mut lines, &format!("router.{}", r.plan.node), kv, &r.d);
    }
    (lines, cols)
}

/// CPU and memory of a server or router over the window: its testbed.toml lines; its run
/// columns (`<label>_cpu_pct`, `_rss_hwm_mib`, `_rss_idle_mib`, `_rss_growth_kib`) go to `cols`.
fn usage_report(d: &Daemon, window: f64, cols: &mut Vec<(String, String)>) -> Vec<(&'static str, String)> {
    let window = window.max(1e-9);
    let u = &d.usage;
    let cpu_win = match (d.cpu_warmup, d.cpu_end) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let rss_mean = mean(d.rss_samples.iter().map(|&r| r as f64));
    // Growth over idle, not divided by receivers: a server whose growth does not
    // scale with receivers (buffers touched once) must not look like per-receiver state.
    let growth = match (rss_mean, d.idle_rss_kib) {
        (Some(m), Some(i)) => Some(m - i as f64),
        _ => None,
    };
    let p = &d.label;
    cols.push((format!("{p}_cpu_pct"), fmt(cpu_win.map(|c| 100.0 * c / window), 2)));
    cols.push((format!("{p}_rss_hwm_mib"), fmt(d.hwm_kib.map(|k| k as f64 / 1024.0), 2)));
    cols.push((format!("{p}_rss_idle_mib"), fmt(d.idle_rss_kib.map(|k| k as f64 / 1024.0), 2)));
    cols.push((format!("{p}_rss_growth_kib"), fmt(growth, 0)));
    vec![
        ("cpu_s_total", format!("{:.3}", u.cpu_s)),
        ("cpu_s_window", fmt(cpu_win, 3)),
        ("cpu_pct_window", fmt(cpu_win.map(|c| 100.0 * c / window), 2)),
        ("rss_idle_kib", d.idle_rss_kib.map_or(String::new(), |v| v.to_string())),
        ("rss_mean_window_kib", fmt(rss_mean, 0)),
        ("rss_hwm_kib", d.hwm_kib.map_or(String::new(), |v| v.to_string())),
        ("rss_growth_kib", fmt(growth, 0)),
        ("max_rss_mib_rusage", format!("{:.2}", u.max_rss_mib)),
    ]
}

/// One `[name]` section of testbed.toml: the non-empty `kv` lines, then how it exited.
fn write_section(lines: &mut String, name: &str, kv: Vec<(&str, String)>, d: &Daemon) {
    let _ = writeln!(lines, "\n[{name}]");
    for (k, v) in kv.into_iter().filter(|(_, v)| !v.is_empty()) {
        let _ = writeln!(lines, "{k} = {v}");
    }
    let _ = writeln!(lines, "exit = {:?}", d.usage.describe());
}

/// testbed.toml: the run, its results columns, socket memory (samples, and the means of
/// sockets and wmem_queued + rmem_alloc) and the servers.
fn write_testbed_toml(
    dir: &Path,
    run: &Run,
    end: f64,
    offset: f64,
    run_cols: &[(String, String)],
    socket_memory: (usize, Option<(f64, f64)>),
    server_lines: &str,
) -> Result<()> {
    let g = &run.experiment.testbed;
    let mut tb = String::from(
        "# rdtp-testbed run: what the testbed measured (the emulator's own numbers are in run.toml)\n[run]\n",
    );
    let _ = writeln!(
        tb,
        "id = {:?}\nlabel = {:?}\nduration_s = {:.3}\nwarmup_s = {}\nt0_offset_s = {:.6}",
        run.id, run.label, end, g.warmup, offset
    );
    let _ = writeln!(
        tb,
        "# emulator time = testbed time + t0_offset_s (timeseries.csv, queue.csv, lag.csv are in emulator time)"
    );
    let _ = writeln!(tb, "\n[results]");
    for (k, v) in run_cols {
        if v.is_empty() {
            continue;
        }
        match v.parse::<f64>() {
            _ if v == "true" || v == "false" => {
                let _ = writeln!(tb, "{k} = {v}");
            }
            Ok(_) if k != "invalid_reason" => {
                let _ = writeln!(tb, "{k} = {v}");
            }
            _ => {
                let _ = writeln!(tb, "{k} = {v:?}");
            }
        }
    }
    let _ = writeln!(
        tb,
        "\n[socket_memory]\n# the server namespace's established TCP sockets (ss -tmn skmem), mean over samples\nsamples = {}",
        socket_memory.0
    );
    if let Some((n, m)) = socket_memory.1 {
        let _ = writeln!(tb, "sockets_mean = {n:.1}\nwmem_queued_plus_rmem_alloc_mean_bytes = {m:.0}");
    }
    tb.push_str(server_lines);
    tb.push('\n');
    fs::write(dir.join("testbed.toml"), tb)?;
    Ok(())
}

/// A flow's `status` column from how its process ended.
fn flow_status(usage: Option<crate::procs::Usage>) -> String {
    match usage {
        Some(u) if u.exit_code() == Some(0) => "completed".to_string(),
        // Stopped by the testbed's SIGTERM: a process may die of it, or (as `rdtp fetch`
        // does) exit with 128 + SIGTERM after cleaning up.
        Some(u) if u.signal() == Some(libc::SIGTERM) || u.exit_code() == Some(128 + libc::SIGTERM) => {
            "stopped".to_string()
        }
        Some(u) => format!("failed ({})", u.describe()),
        None => "not started".to_string(),
    }
}

#[cfg(test)]
mod status_tests {
    use super::flow_status;
    use crate::procs::Usage;

    #[test]
    fn a_fetch_that_exits_143_after_sigterm_was_stopped_not_failed() {
        let exited = |code: i32| Some(Usage { status: code << 8, ..Usage::default() });
        let killed = |sig: i32| Some(Usage { status: sig, ..Usage::default() });
        assert_eq!(flow_status(exited(0)), "completed");
        assert_eq!(flow_status(exited(143)), "stopped");
        assert_eq!(flow_status(killed(libc::SIGTERM)), "stopped");
        assert_eq!(flow_status(exited(1)), "failed (exit 1)");
        assert_eq!(flow_status(killed(libc::SIGKILL)), "failed (signal 9)");
        assert_eq!(flow_status(None), "not started");
    }
}
