//! Seed 003's workload in ns-3 (`RdtpWorkload` on the §III network of eight caching
//! routers, `experiments/seed003-smoke.toml`): Poisson arrivals on every receiver, Zipf
//! popularity over a tiny catalogue, every fetch byte-complete in fetches.csv with its
//! completion time, warm-up fetches marked, caches hit, sources named, and the same run
//! twice gives the same bytes. Without ns-3 every test prints why and skips.

mod common;

use std::collections::HashMap;
use std::fs;

use common::{TempDir, csv, num, run_scenario};

const SMOKE: &str = include_str!("../../../experiments/seed003-smoke.toml");

#[test]
fn the_workload_fetches_a_zipf_catalogue_through_eight_caches() {
    let dir = TempDir::new("workload");
    let Some(out) = run_scenario(&dir, SMOKE) else { return };
    let run = out.join("000");
    let rows = csv(&run.join("fetches.csv"));
    // 5 receivers × 2 fetches/s × 4.5 s: about 45 (a Poisson count).
    assert!((20..=80).contains(&rows.len()), "{} fetches", rows.len());
    let mut per_client: HashMap<String, usize> = HashMap::new();
    let mut ranks: HashMap<u32, usize> = HashMap::new();
    let (mut from_caches, mut multi) = (0, 0);
    for f in &rows {
        *per_client.entry(f["client"].clone()).or_default() += 1;
        *ranks.entry(num(f, "rank") as u32).or_default() += 1;
        let (start, rank) = (num(f, "start_s"), num(f, "rank") as u32);
        assert!((1..=10).contains(&rank), "{f:?}");
        assert_eq!(f["measured"], if start >= 2.0 { "1" } else { "0" }, "{f:?}");
        // Objects are spread over s1 … s5 by rank, named after their server.
        let server = format!("s{}", (rank - 1) % 5 + 1);
        assert_eq!(f["server"], server);
        assert_eq!(f["object"], format!("{server}/cat-50000-{rank}"));
        if f["completed"] == "1" {
            assert_eq!(num(f, "bytes"), 50_000.0, "{f:?}");
            let fct = num(f, "fct_s");
            assert!(fct > 0.09 && (num(f, "finish_s") - start - fct).abs() < 1e-5, "{f:?}");
            // Every source is the object's server or one of the routers.
            let mut bytes = 0.0;
            for s in f["sources"].split(';') {
                let (who, b) = s.split_once(':').unwrap();
                assert!(who == server || who == "h1" || who == "h2" || who.starts_with('p'), "{f:?}");
                bytes += b.parse::<f64>().unwrap();
            }
            assert_eq!(bytes, 50_000.0);
            if num(f, "cached_bytes") > 0.0 {
                from_caches += 1;
            }
            if num(f, "n_sources") > 1.0 {
                multi += 1;
            }
        } else {
            panic!("a fetch never finished: {f:?}");
        }
        // None starts after last_start (4.5 s), so every one finishes before the end (6 s).
        assert!(start <= 4.5, "{f:?}");
    }
    assert_eq!(per_client.len(), 5, "{per_client:?}");
    assert!(from_caches > 0 && multi > 0, "{from_caches} fetches used a cache, {multi} several sources");
    // Zipf(0.8) over 10: the most popular object is asked for more than the least.
    assert!(ranks.get(&1).copied().unwrap_or(0) > ranks.get(&10).copied().unwrap_or(0), "{ranks:?}");
    // The caches are hit, the nearest the most (cs.csv, after warm-up as fetches.csv).
    let mut hits: HashMap<String, f64> = HashMap::new();
    for r in csv(&run.join("cs.csv")) {
        *hits.entry(r["node"].clone()).or_default() += num(&r, "cs_hits");
    }
    assert_eq!(hits.len(), 8, "{hits:?}");
    assert!(hits["h1"] > 0.0 && hits["h1"] >= hits["h2"], "{hits:?}");
    // The same run again: the same fetches, to the byte.
    let again = TempDir::new("workload-again");
    let Some(out2) = run_scenario(&again, SMOKE) else { return };
    assert_eq!(fs::read(run.join("fetches.csv")).unwrap(), fs::read(out2.join("000/fetches.csv")).unwrap());
}

/// `prewarm`: before the run, fetches replayed through the routers without packets fill
/// every store (the first cs.csv sample already shows them full, and the log says how many
/// units each answered); the measured arrivals — when each fetch starts and what it fetches —
/// are the same as without, the warm-up drawing on a random stream of its own.
#[test]
fn prewarm_fills_the_stores_before_the_first_fetch_and_keeps_the_arrivals() {
    let with = SMOKE
        .replace("count = 5                # on c1 … c5\n", "count = 5                # on c1 … c5\nprewarm = 40\n");
    assert_ne!(with, SMOKE);
    let (a, b) = (TempDir::new("prewarm"), TempDir::new("prewarm-none"));
    let Some(warm) = run_scenario(&a, &with) else { return };
    let Some(cold) = run_scenario(&b, SMOKE) else { return };
    let first = |out: &std::path::Path| -> HashMap<String, f64> {
        let rows = csv(&out.join("000/cs.csv"));
        let t0 = num(&rows[0], "time_s");
        rows.iter().filter(|r| num(r, "time_s") == t0).map(|r| (r["node"].clone(), num(r, "cs_entries"))).collect()
    };
    let (w, c) = (first(&warm), first(&cold));
    assert_eq!(w.len(), 8);
    assert!(w.values().all(|&n| n == 200.0), "every store full (200 units) at once: {w:?}");
    assert!(c.values().all(|&n| n < 200.0), "{c:?}");
    let log = fs::read_to_string(warm.join("000/log.txt")).unwrap();
    assert!(log.contains("prewarm: 200 fetches; units answered: h1 "), "{log}");
    let arrivals = |out: &std::path::Path| -> Vec<(String, String, String)> {
        let mut v: Vec<_> = csv(&out.join("000/fetches.csv"))
            .iter()
            .map(|f| (f["client"].clone(), f["start_s"].clone(), f["rank"].clone()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(arrivals(&warm), arrivals(&cold));
}
