//! A router's content store as a user sees it (issue 23, items 1 and 2): one store whatever
//! the number of workers, bounded in bytes by default, and the store flood (units of 64 KiB
//! at unaligned offsets) kept within the budget — in the store's own accounting and in the
//! resident set of an `rdtp route` process.

use std::io::Read;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use rdtp::Fetch;
use rdtp::server::{ServeOptions, spawn};
use rdtp_proto::Eid;
use rdtp_proto::router::cs::CsConfig;
use rdtp_proto::router::fib::Fib;
use rdtp_proto::router::{CACHED_UNIT_OVERHEAD, RouterConfig};
use rdtp_proto::server::MemoryCatalog;
use rdtp_proto::wire::MAX_UNIT;

mod common;
use common::{RDTP, Server, content, raw};
#[path = "common/store_flood.rs"]
mod store_flood;

const MIB: u64 = 1 << 20;

fn serve(objects: Vec<(String, Vec<u8>)>) -> rdtp::server::ServerHandle {
    let opts = ServeOptions { listen: Some("127.0.0.1:0".parse().unwrap()), workers: 1, ..Default::default() };
    spawn(Arc::new(MemoryCatalog::new(objects)), opts).unwrap()
}

fn router(upstream: std::net::SocketAddr, cs: CsConfig, workers: usize) -> rdtp::router::RouterHandle {
    let config = RouterConfig {
        id: rdtp_proto::NodeId::label("r1").unwrap(),
        fib: Fib::new(Some(upstream)),
        cs,
        ..RouterConfig::default()
    };
    let opts = rdtp::router::RouteOptions { listen: Some("127.0.0.1:0".parse().unwrap()), config, workers };
    rdtp::router::spawn(opts).unwrap()
}

/// Fetch `name` from `addr`: the bytes and who served them (e.g. `router r1 100.0 %`).
fn fetch(addr: std::net::SocketAddr, name: &str) -> (Vec<u8>, String) {
    let mut reader = Fetch::by_name(addr, name).start().unwrap();
    let mut got = Vec::new();
    reader.read_to_end(&mut got).unwrap();
    (got, reader.finish().unwrap().served_by)
}

/// Item 1: on 0036bef each of W workers had 1/W of the store, and every request for one
/// object reached the same worker, so an object larger than 1/W of the store was never a
/// hit. The workers now share one store.
#[test]
fn an_object_larger_than_half_the_store_is_cached_whole_on_two_and_three_workers() {
    let data = content(3 << 20, 11);
    let units = data.len().div_ceil(1402);
    let server = serve(vec![("obj".into(), data.clone())]);
    for workers in [2, 3] {
        // The object fills three quarters of the store's units.
        let cs = CsConfig { capacity_units: units * 4 / 3, ..RouterConfig::default().cs };
        let r1 = router(server.local_addr(), cs, workers);
        let (got, by) = fetch(r1.local_addr(), "obj");
        assert!(got == data);
        assert_eq!(by, "origin 100.0 %");
        // Blocks enter the store once their proofs are back (verify before caching).
        std::thread::sleep(Duration::from_millis(300));
        for _ in 0..2 {
            let (got, by) = fetch(r1.local_addr(), "obj");
            assert!(got == data);
            assert_eq!(by, "router r1 100.0 %", "{workers} workers");
        }
        let s = r1.stop().unwrap();
        assert_eq!(s.cs_entries, units, "{workers} workers: the object, once");
        assert_eq!(s.cs.evictions, 0);
        assert_eq!(s.cs_bytes, data.len() as u64 + (units * CACHED_UNIT_OVERHEAD) as u64);
        assert_eq!(s.socket.datagrams_per_worker.len(), workers);
    }
    server.stop().unwrap();
}

/// `len` bytes whose EID's first word is ≡ `worker` (mod `workers`): an object the router's
/// steering gives to that worker.
fn object_for_worker(len: usize, worker: u32, workers: u32) -> (Vec<u8>, Eid) {
    (0u8..=255)
        .map(|seed| content(len, seed))
        .map(|d| {
            let eid = Eid::of(&d);
            (d, eid)
        })
        .find(|(_, eid)| u32::from_be_bytes(eid.0[..4].try_into().unwrap()) % workers == worker)
        .expect("one in `workers` seeds fits")
}

/// Item 2, in the store's own accounting: the flood through an in-process router with two
/// workers to a real server fills the store and churns it, and the bytes it counts (payload
/// and bookkeeping of every unit) never pass the budget. One object's flood, all on one
/// worker, can use the whole budget: one store (on 0036bef that worker had half of a budget
/// that counted payload only).
#[test]
fn the_store_flood_keeps_the_stores_bytes_within_the_budget() {
    let budget = 24 * MIB;
    let (a, ea) = object_for_worker(4 << 20, 0, 2);
    let server = serve(vec![("a".into(), a.clone())]);
    let cs = CsConfig { capacity_bytes: budget, ..RouterConfig::default().cs };
    let r1 = router(server.local_addr(), cs, 2);
    assert_eq!(store_flood::store_flood(r1.local_addr(), ea, a.len() as u64, 200, 300).requests, 200);
    std::thread::sleep(Duration::from_millis(500));
    let s = r1.stop().unwrap();
    server.stop().unwrap();
    let unit_cost = u64::from(MAX_UNIT) + CACHED_UNIT_OVERHEAD as u64;
    assert!(s.cs_bytes <= budget, "{} bytes counted for a budget of {budget}", s.cs_bytes);
    assert_eq!(s.cs_bytes, s.cs_entries as u64 * unit_cost, "every unit counts its payload and bookkeeping");
    // The flood filled the whole store and made it evict: the budget was what held it.
    assert!(s.cs.evictions > 0 && s.cs_bytes + unit_cost > budget, "{} of {budget}: {:?}", s.cs_bytes, s.cs);
    const { assert!(CACHED_UNIT_OVERHEAD >= 100, "an entry's bookkeeping is counted") };
}

/// Item 2, in memory: `rdtp route` on its defaults (256 MiB store, 32 MiB staging, two
/// workers) under the flood on both workers stays within the printed budget + 64 MiB of
/// resident memory, and its store within its 256 MiB (on 0036bef a default router had no
/// byte bound: the same flood grew it past 2 GB).
#[test]
fn a_default_rdtp_route_under_the_store_flood_stays_within_its_budget() {
    rss_under_flood(&[], 256 * MIB, 300);
}

/// The same with a small budget: RSS ≤ 64 MiB store + 32 MiB staging + 64 MiB.
#[test]
fn a_64_mib_rdtp_route_under_the_store_flood_stays_within_its_budget() {
    rss_under_flood(&["--cs-bytes", "64MiB"], 64 * MIB, 200);
}

/// The router's report, asked for with SIGUSR1 (`--stats-json` rewritten).
fn report(pid: u32, json: &std::path::Path) -> serde_json::Value {
    let read = || -> Option<serde_json::Value> { serde_json::from_slice(&std::fs::read(json).ok()?).ok() };
    let before = read().map(|v| v["totals"]["elapsed_s"].clone());
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGUSR1) };
    let t0 = std::time::Instant::now();
    loop {
        if let Some(v) = read()
            && Some(&v["totals"]["elapsed_s"]) != before.as_ref()
        {
            return v;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "no report after SIGUSR1");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Flood an `rdtp route` (two workers, `args`) on both workers, in rounds, until its store
/// (`store` bytes) is full and has replaced all it held — however fast this machine lets
/// the flood through — and check its store and its peak resident set.
fn rss_under_flood(args: &[&str], store: u64, round: u64) {
    let dir = tempfile::tempdir().unwrap();
    let (a, ea) = object_for_worker(6 << 20, 0, 2);
    let (b, eb) = object_for_worker(6 << 20, 1, 2);
    std::fs::write(dir.path().join("a"), &a).unwrap();
    std::fs::write(dir.path().join("b"), &b).unwrap();
    let server = Server::start(dir.path(), &["--workers", "1"]);
    let json = dir.path().join("r1.json");
    let mut route_args = vec!["--upstream", &server.addr, "--workers", "2", "--stats-json", json.to_str().unwrap()];
    route_args.extend_from_slice(args);
    let mut r1 = Server::route(&route_args);
    let staging = 32 * MIB;
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / MIB as f64);
    assert!(r1.line.contains(&format!("content store {}", mib(store))), "{}", r1.line);
    assert!(r1.line.contains(&format!("verification staging {}", mib(staging))), "{}", r1.line);
    let to = r1.addr.parse().unwrap();
    let pid = r1.child.id();
    let mut rounds = 0;
    loop {
        let floods: Vec<_> = [(ea, a.len()), (eb, b.len())]
            .into_iter()
            .map(|(eid, len)| std::thread::spawn(move || store_flood::store_flood(to, eid, len as u64, round, 400)))
            .collect();
        for f in floods {
            assert_eq!(f.join().unwrap().requests, round);
        }
        rounds += 1;
        std::thread::sleep(Duration::from_millis(300));
        let v = report(pid, &json);
        let t = &v["totals"];
        // Until every unit the full store held has been replaced once.
        if t["cs"]["evictions"].as_u64().unwrap() >= t["cs_entries"].as_u64().unwrap().max(1) {
            break;
        }
        assert!(rounds < 40, "40 rounds and the store was not replaced once: {t}");
    }
    let (_, peak) = store_flood::rss(pid);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    assert_eq!(r1.child.wait().unwrap().code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let t = &v["totals"];
    let (cs_bytes, evictions) = (t["cs_bytes"].as_u64().unwrap(), t["cs"]["evictions"].as_u64().unwrap());
    eprintln!("{rounds} rounds: peak RSS {}, store {} ({} evictions)", mib(peak), mib(cs_bytes), evictions);
    assert!(cs_bytes <= store, "store {} > {}", mib(cs_bytes), mib(store));
    assert!(peak <= store + staging + 64 * MIB, "peak RSS {} > {} + {} + 64 MiB", mib(peak), mib(store), mib(staging));
}

/// `rdtp bench router` at 1 MiB on two and three router workers: the warm fetch is all hits
/// (on 0036bef, "the warm fetch was not all hits" on any machine with ≥ 2 cores).
#[test]
fn bench_router_passes_on_several_workers() {
    for workers in ["2", "3"] {
        let out =
            Command::new(RDTP).args(["bench", "router", "--size", "1MiB", "--workers", workers]).output().unwrap();
        assert!(out.status.success(), "{workers} workers: {}", String::from_utf8_lossy(&out.stderr));
        let table = String::from_utf8_lossy(&out.stdout);
        assert!(table.contains("router bench 100.0 %"), "{table}");
    }
}
