//! One flow's loss episodes, step by step: prints a line every `EVERY_MS` of virtual time and
//! at every retransmission timeout, with the controller's state, window, in-flight, losses,
//! re-requests, the RTO, the bottleneck's drops and queueing delay and the proofs asked for
//! and received (verified streaming); then, per controller
//! state, the share of time spent in it after 5 s and the mean of the RTT samples taken in it.
//!
//! `cargo run --release -p rdtp-harness --example trace -- CC RATE_MBPS RTT_MS SECONDS BUFFER_BDP [EVERY_MS]`
//!
//! Environment: `TRACE_DELIVERED=1` adds the bytes delivered in order to each line;
//! `TRACE_RTO_K=K` sets the RTO's RTTVAR multiplier (ndnget's `--rto-k`).
//! `TRACE_LOSS=P` drops a fraction P of data datagrams at random on the bottleneck.

use core::time::Duration;

use rdtp_harness::{FlowSpec, PathConfig, Sim};
use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::server::PatternCatalog;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cc: CcConfig = args.first().map_or("bbr", String::as_str).parse().expect("a controller spec");
    let num = |i: usize, d: f64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (rate, rtt_ms, secs, qbdp, every_ms) =
        (num(1, 10.0) * 1e6, num(2, 100.0), num(3, 10.0), num(4, 1.0), num(5, 100.0));
    let mut path = PathConfig::new(rate, Duration::from_secs_f64(rtt_ms / 1e3)).with_queue_bdp(qbdp);
    // Random loss of data datagrams on the bottleneck, a fraction.
    if let Some(p) = std::env::var("TRACE_LOSS").ok().and_then(|p| p.parse().ok()) {
        path.data_loss = p;
    }
    let duration = Duration::from_secs_f64(secs);
    let size = (rate / 8.0 * secs * 1.2) as u64;
    let mut cfg = ReceiverConfig { cc, seed: 1, ..ReceiverConfig::default() };
    // The RTO's RTTVAR multiplier (ndnget's `--rto-k`, 8 there; RFC 6298's 4 by default).
    if let Some(k) = std::env::var("TRACE_RTO_K").ok().and_then(|k| k.parse().ok()) {
        cfg.rto.k = k;
    }
    let unit = u64::from(cfg.unit);
    let mut sim =
        Sim::new(path.clone(), PatternCatalog::new([("object".to_string(), size, 1)]), Duration::from_millis(10));
    let id = sim.add_flow(FlowSpec::new("object", cfg));
    println!(
        "{} Mbit/s, RTT {rtt_ms} ms, buffer {qbdp} BDP = {} units, BDP = {} units",
        rate / 1e6,
        path.queue_bytes / unit,
        path.bdp_bytes() / unit
    );
    println!(
        "{:>8} {:>10} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "t ms",
        "state",
        "cwnd",
        "pace Mb",
        "inflight",
        "lost",
        "rereq",
        "recvd",
        "tmo",
        "rto ms",
        "srtt ms",
        "q drops",
        "qdelay",
        "proofs?",
        "proofs"
    );
    let end = rdtp_proto::Time::ZERO + duration;
    let mut next_line = rdtp_proto::Time::ZERO;
    let mut last_timeouts = 0;
    let mut last_lost = 0;
    let warmup = rdtp_proto::Time::ZERO + Duration::from_secs(5);
    // Per state: (time in it after the warm-up, RTT samples taken in it, their sum).
    let mut per_state: Vec<(&'static str, Duration, u64, f64)> = Vec::new();
    let (mut last_t, mut seen_samples) = (rdtp_proto::Time::ZERO, 0);
    while sim.now() < end && sim.step() {
        let now = sim.now();
        let Some(rx) = sim.flows[id].rx.as_ref() else { continue };
        let state = rx.controller().state();
        let i = per_state.iter().position(|e| e.0 == state).unwrap_or_else(|| {
            per_state.push((state, Duration::ZERO, 0, 0.0));
            per_state.len() - 1
        });
        if now > warmup {
            per_state[i].1 += now - last_t.max(warmup);
            for (_, r) in &sim.flows[id].rtt.samples()[seen_samples..] {
                per_state[i].2 += 1;
                per_state[i].3 += r.as_secs_f64() * 1e3;
            }
        }
        seen_samples = sim.flows[id].rtt.len();
        last_t = now;
        let s = rx.stats();
        let new_timeout = s.timeouts != last_timeouts;
        let burst = s.units_lost >= last_lost + 50;
        if now < next_line && !new_timeout && !burst {
            continue;
        }
        last_timeouts = s.timeouts;
        last_lost = s.units_lost;
        if now >= next_line {
            next_line = now + Duration::from_secs_f64(every_ms / 1e3);
        }
        let c = rx.cc_snapshot(now);
        let qd = sim.bottleneck().queue_delay.samples().last().map_or(0.0, |(_, d)| d.as_secs_f64() * 1e3);
        println!(
            "{:>8.1} {:>10} {:>6} {:>8.2} {:>8} {:>8} {:>8} {:>8} {:>6} {:>8.0} {:>8.1} {:>8} {:>8.1} {:>8} {:>8}{}",
            (now - rdtp_proto::Time::ZERO).as_secs_f64() * 1e3,
            c.state,
            c.cwnd,
            c.pacing_rate.unwrap_or(0.0) * 8.0 / 1e6,
            c.inflight,
            s.units_lost,
            s.units_rerequested,
            s.units_received,
            s.timeouts,
            rx.path().rto().unwrap_or_default().as_secs_f64() * 1e3,
            rx.rtt().srtt().unwrap_or_default().as_secs_f64() * 1e3,
            sim.bottleneck().queue_drops,
            qd,
            s.proof_requests,
            s.proofs_received,
            if new_timeout { "  <- timeout" } else { "" }
        );
        if std::env::var_os("TRACE_DELIVERED").is_some() {
            println!("   delivered {} readable {}", rx.delivered_bytes(), rx.readable());
        }
    }
    let total: Duration = per_state.iter().map(|e| e.1).sum();
    println!("\nafter 5 s: state, share of time, RTT samples, their mean (ms)");
    for (state, t, n, sum) in &per_state {
        println!(
            "{state:>16} {:>6.1} % {n:>8} {:>8.2}",
            t.as_secs_f64() * 100.0 / total.as_secs_f64().max(1e-9),
            if *n > 0 { sum / *n as f64 } else { 0.0 }
        );
    }
    let n: u64 = per_state.iter().map(|e| e.2).sum();
    let sum: f64 = per_state.iter().map(|e| e.3).sum();
    println!("{:>16} {:>8} {n:>8} {:>8.2}", "all", "", sum / n.max(1) as f64);
}
