//! Steady state of every controller alone on a path; prints a Markdown table.
//!
//! `cargo run --release -p rdtp-harness --example controllers -- [RATE_MBPS] [RTT_MS] [SECONDS] [QUEUE_BDP]`

use core::time::Duration;

use rdtp_harness::{PathConfig, single_flow};
use rdtp_proto::cc::CcConfig;

fn main() {
    let args: Vec<f64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let rate = args.first().copied().unwrap_or(100.0) * 1e6;
    let rtt = Duration::from_secs_f64(args.get(1).copied().unwrap_or(20.0) / 1e3);
    let secs = args.get(2).copied().unwrap_or(30.0);
    let qbdp = args.get(3).copied().unwrap_or(1.0);
    let path = PathConfig::new(rate, rtt).with_queue_bdp(qbdp);
    println!(
        "{} Mbit/s, RTT {:?}, drop-tail buffer {:.1} BDP ({} KB), {secs} s simulated, measured after 5 s\n",
        rate / 1e6,
        rtt,
        qbdp,
        path.queue_bytes / 1000
    );
    println!(
        "| controller | utilisation | goodput Mbit/s | mean RTT ms | RTprop ms | mean queue ms | p99 queue ms | re-requested units | timeouts | queue drops |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut notes = Vec::new();
    for name in CcConfig::NAMES {
        let r = single_flow(
            path.clone(),
            CcConfig::from_name(name).unwrap(),
            Duration::from_secs_f64(secs),
            Duration::from_secs(5),
            1,
        );
        println!(
            "| {} | {:.1} % | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {} ({:.3} %) | {} | {} |{}",
            r.controller,
            r.utilisation * 100.0,
            r.goodput_bps / 1e6,
            r.mean_rtt.as_secs_f64() * 1e3,
            r.rtprop.as_secs_f64() * 1e3,
            r.mean_queue_delay.as_secs_f64() * 1e3,
            r.p99_queue_delay.as_secs_f64() * 1e3,
            r.units_rerequested,
            r.units_rerequested as f64 * 100.0 / r.units_requested.max(1) as f64,
            r.timeouts,
            r.queue_drops,
            if r.byte_exact { "" } else { " NOT BYTE-EXACT" }
        );
        // Goodput counts bytes read in order: say when arrivals are held back behind a hole.
        if r.bytes_received > 2 * r.bytes_read {
            let why = if r.new_units_first {
                format!(
                    ": of its {} lost units, those not yet asked for again wait behind every new unit it \
                     may ask for (S1 §IV-D), until the receive window is full",
                    r.units_lost
                )
            } else {
                String::new()
            };
            notes.push(format!(
                "- {}: {:.1} MB arrived, {:.1} MB of it could be read in order{why}",
                r.controller,
                r.bytes_received as f64 / 1e6,
                r.bytes_read as f64 / 1e6,
            ));
        }
    }
    if !notes.is_empty() {
        println!("\n{}", notes.join("\n"));
    }
}
