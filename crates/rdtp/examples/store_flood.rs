//! The content-store flood of issue 23 (item 2) against a running `rdtp route`, and what it
//! does to the router's memory: the before/after figures of `docs/SECURITY.md`.
//!
//! ```text
//! rdtp serve --listen 127.0.0.1:7447 DIR &                 # DIR holds FILE (≥ 2 MiB)
//! rdtp route --listen 127.0.0.1:7448 --upstream 127.0.0.1:7447 & ROUTER_PID=$!
//! cargo run --release -p rdtp --example store_flood -- 127.0.0.1:7448 DIR/FILE 4000 1000 $ROUTER_PID
//! ```
//!
//! Sends REQUESTS requests (68 bytes each, 16 units of 65 437 bytes at unaligned offsets:
//! `tests/common/store_flood.rs`) at PER_SECOND, then waits 2 s, sampling the router's
//! resident set every 50 ms; prints the request bytes sent and the largest RSS seen, and the
//! router's own peak (`VmHWM`).

#[path = "../tests/common/raw.rs"]
mod raw;
#[path = "../tests/common/store_flood.rs"]
mod store_flood;

use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [router, file, requests, per_second, pid] = &args[..] else {
        eprintln!("usage: store_flood ROUTER_ADDR FILE REQUESTS PER_SECOND ROUTER_PID");
        std::process::exit(2);
    };
    let to = router.parse().expect("ROUTER_ADDR");
    let data = std::fs::read(file).expect("FILE");
    let eid = rdtp_proto::Eid::of(&data);
    let (requests, per_second, pid): (u64, u64, u32) =
        (requests.parse().expect("REQUESTS"), per_second.parse().expect("PER_SECOND"), pid.parse().expect("PID"));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let (t0, mut max, mut series) = (Instant::now(), 0u64, Vec::new());
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let (now, _) = store_flood::rss(pid);
                max = max.max(now);
                series.push((t0.elapsed().as_secs_f64(), now));
                std::thread::sleep(Duration::from_millis(50));
            }
            (max, series)
        })
    };
    let sent = store_flood::store_flood(to, eid, data.len() as u64, requests, per_second);
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (max, series) = sampler.join().expect("sampler");
    let (_, hwm) = store_flood::rss(pid);
    for (t, r) in series.iter().step_by(10) {
        println!("t {t:6.2} s  RSS {:8.1} MiB", *r as f64 / (1 << 20) as f64);
    }
    println!(
        "{} requests ({} bytes) in {:.2} s; router RSS at most {:.1} MiB while sampled, peak (VmHWM) {:.1} MiB",
        sent.requests,
        sent.bytes,
        sent.elapsed.as_secs_f64(),
        max as f64 / (1 << 20) as f64,
        hwm as f64 / (1 << 20) as f64
    );
}
