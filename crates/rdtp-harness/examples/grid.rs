//! Every controller over a grid of paths: bottleneck rate × base RTT × drop-tail buffer, one
//! flow alone for `--seconds` (measured after `--warmup`). Prints one Markdown table per
//! controller and writes every number to a CSV (`experiments/plot.py grid DIR` draws the heat
//! maps from it).
//!
//! ```text
//! cargo run --release -p rdtp-harness --example grid -- [--cc bbr,bbr3,…] [--rates 10,100,1000]
//!     [--rtts 5,20,100] [--buffers 0.25,1,2] [--seconds 30] [--warmup 5] [--jobs 1] [--csv FILE]
//!     [--rto-k K]
//! ```
//!
//! Defaults: every registry controller, the grid above, 30 s, 5 s warm-up, one job, no CSV,
//! the receiver's default configuration. `--rto-k K` sets the RTTVAR multiplier of the
//! receiver's RTO for every controller (ndnget's `--rto-k`, 8 there; RFC 6298's 4 by
//! default); the controller column then reads `NAME rto_k=K`. Runs are deterministic, so
//! `--jobs` changes only the wall time.

use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use core::time::Duration;

use rdtp_harness::{PathConfig, SingleFlowReport, single_flow_with};
use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::ReceiverConfig;

struct Args {
    ccs: Vec<String>,
    rates: Vec<f64>,
    rtts: Vec<f64>,
    buffers: Vec<f64>,
    seconds: f64,
    warmup: f64,
    jobs: usize,
    csv: Option<String>,
    rto_k: Option<u32>,
}

fn parse_args() -> Args {
    let mut a = Args {
        ccs: CcConfig::NAMES.iter().map(|s| s.to_string()).collect(),
        rates: vec![10.0, 100.0, 1000.0],
        rtts: vec![5.0, 20.0, 100.0],
        buffers: vec![0.25, 1.0, 2.0],
        seconds: 30.0,
        warmup: 5.0,
        jobs: 1,
        csv: None,
        rto_k: None,
    };
    let mut it = std::env::args().skip(1);
    let list = |v: Option<String>| -> Vec<f64> {
        v.expect("a value").split(',').map(|x| x.trim().parse().expect("a number")).collect()
    };
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--cc" => a.ccs = it.next().expect("a list").split(',').map(|s| s.trim().to_string()).collect(),
            "--rates" => a.rates = list(it.next()),
            "--rtts" => a.rtts = list(it.next()),
            "--buffers" => a.buffers = list(it.next()),
            "--seconds" => a.seconds = list(it.next())[0],
            "--warmup" => a.warmup = list(it.next())[0],
            "--jobs" => a.jobs = list(it.next())[0].max(1.0) as usize,
            "--csv" => a.csv = it.next(),
            "--rto-k" => a.rto_k = Some(it.next().expect("a number").parse().expect("a whole number")),
            other => panic!("unknown argument {other} (see the doc comment of examples/grid.rs)"),
        }
    }
    a
}

/// One run of the grid.
#[derive(Clone, Copy)]
struct Point {
    cc: usize,
    rate: f64,
    rtt: f64,
    buffer: f64,
}

fn main() {
    let a = parse_args();
    let specs: Vec<CcConfig> = a.ccs.iter().map(|s| s.parse().expect("a controller spec")).collect();
    let labels: Vec<String> = match a.rto_k {
        Some(k) => a.ccs.iter().map(|s| format!("{s} rto_k={k}")).collect(),
        None => a.ccs.clone(),
    };
    let mut points = Vec::new();
    for cc in 0..specs.len() {
        for &rate in &a.rates {
            for &rtt in &a.rtts {
                for &buffer in &a.buffers {
                    points.push(Point { cc, rate, rtt, buffer });
                }
            }
        }
    }
    let results: Vec<Mutex<Option<SingleFlowReport>>> = points.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..a.jobs {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(p) = points.get(i) else { break };
                    let path =
                        PathConfig::new(p.rate * 1e6, Duration::from_secs_f64(p.rtt / 1e3)).with_queue_bdp(p.buffer);
                    let mut cfg = ReceiverConfig { cc: specs[p.cc].clone(), seed: 1, ..ReceiverConfig::default() };
                    if let Some(k) = a.rto_k {
                        cfg.rto.k = k;
                    }
                    let r = single_flow_with(
                        path,
                        cfg,
                        Duration::from_secs_f64(a.seconds),
                        Duration::from_secs_f64(a.warmup),
                    );
                    eprintln!("{} {} Mbit/s {} ms {} BDP done", labels[p.cc], p.rate, p.rtt, p.buffer);
                    *results[i].lock().expect("not poisoned") = Some(r);
                }
            });
        }
    });
    let results: Vec<SingleFlowReport> =
        results.into_iter().map(|m| m.into_inner().expect("not poisoned").expect("every point ran")).collect();

    let mut csv = String::from(
        "controller,rate_mbps,rtt_ms,buffer_bdp,utilisation,goodput_mbps,mean_rtt_ms,rtprop_ms,rtt_ratio,\
         mean_queue_ms,p99_queue_ms,units_requested,units_rerequested,rerequest_pct,timeouts,queue_drops,byte_exact\n",
    );
    for (p, r) in points.iter().zip(&results) {
        let _ = writeln!(
            csv,
            "{},{},{},{},{:.4},{:.3},{:.3},{:.3},{:.4},{:.3},{:.3},{},{},{:.4},{},{},{}",
            labels[p.cc],
            p.rate,
            p.rtt,
            p.buffer,
            r.utilisation,
            r.goodput_bps / 1e6,
            ms(r.mean_rtt),
            ms(r.rtprop),
            ratio(r),
            ms(r.mean_queue_delay),
            ms(r.p99_queue_delay),
            r.units_requested,
            r.units_rerequested,
            rerequest_pct(r),
            r.timeouts,
            r.queue_drops,
            r.byte_exact
        );
    }
    if let Some(path) = &a.csv {
        std::fs::write(path, &csv).expect("CSV written");
    }

    println!(
        "{} s simulated per run, measured after {} s; cell: utilisation · mean RTT / RTprop · re-requested units · timeouts\n",
        a.seconds, a.warmup
    );
    for (c, name) in labels.iter().enumerate() {
        println!("**{name}**\n");
        let head: Vec<String> = a.buffers.iter().map(|b| format!("buffer {b} BDP")).collect();
        println!("| rate | RTT | {} |", head.join(" | "));
        println!("|---:|---:|{}", "---|".repeat(a.buffers.len()));
        for &rate in &a.rates {
            for &rtt in &a.rtts {
                let cells: Vec<String> = points
                    .iter()
                    .zip(&results)
                    .filter(|(p, _)| p.cc == c && p.rate == rate && p.rtt == rtt)
                    .map(|(_, r)| {
                        format!(
                            "{:.1} % · {:.2}× · {:.2} % · {}{}",
                            r.utilisation * 100.0,
                            ratio(r),
                            rerequest_pct(r),
                            r.timeouts,
                            if r.byte_exact { "" } else { " NOT BYTE-EXACT" }
                        )
                    })
                    .collect();
                println!("| {rate} Mbit/s | {rtt} ms | {} |", cells.join(" | "));
            }
        }
        println!();
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn ratio(r: &SingleFlowReport) -> f64 {
    r.mean_rtt.as_secs_f64() / r.rtprop.as_secs_f64()
}

fn rerequest_pct(r: &SingleFlowReport) -> f64 {
    r.units_rerequested as f64 * 100.0 / r.units_requested.max(1) as f64
}
