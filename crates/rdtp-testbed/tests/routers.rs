//! Root-only end-to-end test of a caching router in the testbed: a real `rdtp route` in its own
//! namespace at r1 (the clients' gateway, client side of a 20 Mbit/s, 20 ms bottleneck). Two
//! rdtp clients fetch the same 2 MB object one after the other: the first through the router
//! from the server, the second entirely from the router's content store, the server sending
//! nothing more for it; the run leaves nothing behind. Skips (`SKIPPED: <reason>`) as the
//! other end-to-end test does.

mod common;

use std::io::Write as _;

use common::csv;

const SIZE: u64 = 2_000_000;

const EXPERIMENT: &str = r#"
[testbed]
name = "routers"
duration = 6.0
warmup = 1.0

[path]
kind = "dumbbell"
rate = "20Mbps"
rtt = "20ms"
queue = "1bdp"

[[path.router]]
node = "r1"

[[flow]]            # through r1 from the server (about 1 s at 20 Mbit/s); r1 keeps the units
kind = "rdtp"
size = "2MB"
save = true

[[flow]]            # the same object once the first has it: all from r1's content store
kind = "rdtp"
size = "2MB"
start = 3.0
save = true
"#;

fn number(row: &std::collections::HashMap<String, String>, key: &str) -> f64 {
    row[key].parse().unwrap_or_else(|_| panic!("{key} = {:?} in {row:?}", row[key]))
}

#[test]
fn a_second_fetch_is_served_by_the_router_at_r1_and_nothing_is_left_behind() {
    let Some(programs) = common::ready() else { return };
    let run = common::run("routers", EXPERIMENT, &programs);
    run.assert_nothing_left_and_success();

    let rows = csv(&run.out.join("summary.csv"));
    assert_eq!(rows.len(), 2, "{rows:?}");
    for r in &rows {
        assert_eq!(r["completed"], "1", "{r:?}");
        assert_eq!(r["byte_exact"], "true", "{r:?}");
    }
    let (first, second) = (&rows[0], &rows[1]);
    assert!(
        number(first, "end_s") < number(second, "start_s"),
        "the first fetch must be over before the second starts: {rows:?}"
    );
    assert!(first["served_by"].contains("origin"), "the first fetch came from the server: {first:?}");
    assert_eq!(second["served_by"], "router r1 100.0 %", "{second:?}");
    assert_eq!(second["cache_share_pct"], "100.00", "{second:?}");

    // The router's own counters (its --stats-json, and their columns in runs.csv).
    let dir = run.out.join(&rows[0]["run_id"]);
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("router-r1.json")).expect("router-r1.json")).unwrap();
    let counter = |k: &str| stats["totals"]["router"][k].as_u64().unwrap_or_else(|| panic!("{k} in {stats}"));
    let fetch: serde_json::Value = std::fs::read_to_string(dir.join("logs/flow-1.json"))
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| serde_json::from_str(l).ok()))
        .expect("the second fetch's JSON summary");
    let second_units = fetch["units_received"].as_u64().expect("units_received");
    assert!(counter("cs_hits") >= second_units, "every unit of the second fetch is a hit: {stats}");
    // Upstream, the router received the object once (the first fetch, with its
    // re-requests): the second fetch added nothing at the server.
    let upstream = counter("bytes_in");
    assert!((SIZE..SIZE * 3 / 2).contains(&upstream), "bytes from upstream {upstream}: {stats}");
    assert!(counter("bytes_out") >= 2 * SIZE, "{stats}");
    let emulator: toml::Table = std::fs::read_to_string(dir.join("run.toml")).unwrap().parse().unwrap();
    let server_sent = emulator["tap"]["server"]["from_host_bytes"].as_integer().unwrap() as u64;
    assert!(server_sent < SIZE * 3 / 2, "the server sent {server_sent} bytes for two fetches of {SIZE}");

    let runs = csv(&run.out.join("runs.csv"));
    let hit_ratio = number(&runs[0], "router_r1_hit_ratio");
    let (hits, misses) = (counter("cs_hits") as f64, counter("cs_misses") as f64);
    assert!((hit_ratio - hits / (hits + misses)).abs() < 1e-4, "{:?}", runs[0]);
    assert_eq!(number(&runs[0], "router_r1_upstream_bytes"), upstream as f64);
    let _ = writeln!(
        std::io::stderr(),
        "second fetch: {} ({} % from the store, {second_units} units); router r1: hit ratio {hit_ratio:.4} \
         ({hits} hits, {misses} misses), {upstream} bytes from upstream, {} to the clients; the server sent {server_sent} \
         bytes in all",
        second["served_by"],
        second["cache_share_pct"],
        counter("bytes_out"),
    );
    run.clean();
}
