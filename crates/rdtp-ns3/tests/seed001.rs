//! Seed 001's setting in ns-3 (S1 §IV-A): consumers —802.11n— a caching AP —a second
//! 802.11n network— the producer; receive losses by node role (§IV-C) and an outage of the
//! producer's link (§IV-D); runs that end when every fetch is done; requests.csv.

mod common;

use std::fs;

use common::{TempDir, csv, num, sim};

/// Topology 1 or 2 (`clients`), S1's 8600-byte units, a small object; `extra` arguments.
fn topology(out: &std::path::Path, cc: &str, clients: u32, size: u64, extra: &[&str]) -> Option<std::process::Output> {
    let flows: Vec<String> =
        (0..clients).map(|c| format!("kind=rdtp,client={c},cc={cc},size={size},unit=8600,via=ap,idle=60")).collect();
    let mut args = vec![
        "--run-one".to_string(),
        "--Topology=wifi".into(),
        "--Standard=80211n".into(),
        "--Band=5GHz".into(),
        "--ChannelWidth=20".into(),
        "--RateControl=constant".into(),
        "--Mcs=6".into(),
        "--ServerLink=wifi".into(),
        "--Duration=120".into(),
        "--StopWhenDone=1".into(),
        "--Requests=1".into(),
        format!("--Clients={clients}"),
        format!("--Flows={}", flows.join(";")),
        "--Routers=node=ap,id=7021111819070603264,cs_size=65536,up=server".into(),
        format!("--Out={}", out.display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    sim(&refs)
}

#[test]
fn topology_1_fetches_over_two_wifi_hops_and_stops_when_done() {
    let dir = TempDir::new("s1-t1");
    let out = dir.0.join("run");
    let Some(o) = topology(&out, "bbr-cd", 1, 2_000_000, &[]) else { return };
    let stdout = String::from_utf8_lossy(&o.stdout);
    let f = &csv(&out.join("flows.csv"))[0];
    assert_eq!((f["completed"].as_str(), f["bytes"].as_str(), f["cc"].as_str()), ("1", "2000000", "bbr-cd"), "{f:?}");
    // Two 802.11n HtMcs6 hops (58.5 Mbit/s PHY each): 2 MB take more than 0.27 s, and the
    // run ends with the fetch, not at Duration = 120 s.
    let finish = num(f, "finish_s");
    assert!(finish > 0.27 && finish < 5.0, "finished at {finish}");
    let simulated: f64 = stdout.split(", ").nth(1).and_then(|s| s.split(' ').next()).unwrap().parse().unwrap();
    assert!(simulated < 10.0, "simulated {simulated} s: {stdout}");
    assert_eq!(f["sources"], "origin:100.0%");
    let run = fs::read_to_string(out.join("run.toml")).unwrap();
    assert!(run.contains("server_link = \"802.11 (own channel, AP second radio)\""), "{run}");
    assert!(run.contains("unassociated_at_start = 0"), "{run}");
    // requests.csv: every unit of the object asked for at least once, one unit per request at
    // 8600-byte units, times increasing.
    let reqs = csv(&out.join("requests.csv"));
    let units = 2_000_000u64.div_ceil(8600);
    let mut asked = vec![false; units as usize];
    let mut last = 0.0;
    for r in &reqs {
        let (t, u, n) = (num(r, "time_s"), num(r, "unit") as usize, num(r, "units") as usize);
        assert!(t >= last, "requests out of order at {t}");
        last = t;
        asked[u..u + n].iter_mut().for_each(|a| *a = true);
    }
    assert!(asked.iter().all(|&a| a), "some unit never requested");
}

#[test]
fn receive_loss_is_per_datagram_and_by_role() {
    let dir = TempDir::new("s1-loss");
    let out = dir.0.join("run");
    // 10 % at the client only: a Data of 8600 bytes is 6 IP fragments, lost with 10 %, not
    // with 1 − 0.9⁶ = 47 % as it would be were each fragment drawn on its own.
    let Some(_) = topology(&out, "aimd:rto_only=true", 1, 3_000_000, &["--RxLossClient=0.1"]) else { return };
    let f = &csv(&out.join("flows.csv"))[0];
    assert_eq!(f["completed"], "1", "{f:?}");
    let units = 3_000_000f64 / 8600.0;
    let lost = num(f, "retransmissions") / units;
    assert!(lost > 0.04 && lost < 0.2, "re-requested {:.1} % of the units", lost * 100.0);
    let run: toml::Table = fs::read_to_string(out.join("run.toml")).unwrap().parse().unwrap();
    let imp = &run["impairments"];
    assert!(imp["dropped_rx_loss_client"].as_integer().unwrap() > 0, "{imp:?}");
    for role in ["router", "server"] {
        assert_eq!(imp[&format!("dropped_rx_loss_{role}")].as_integer(), Some(0), "{role}: {imp:?}");
    }
}

#[test]
fn fetches_survive_an_outage_of_the_producer_link() {
    let dir = TempDir::new("s1-outage");
    let out = dir.0.join("run");
    // Two consumers; the producer is unreachable from 0.2 s to 3.2 s of scenario time.
    let Some(_) = topology(&out, "bbr-cd", 2, 4_000_000, &["--Outage=0.2:3.2"]) else { return };
    let flows = csv(&out.join("flows.csv"));
    for f in &flows {
        assert_eq!(f["completed"], "1", "{f:?}");
        // 4 MB need ≈ 1.5 s over the two hops: the outage delays both.
        assert!(num(f, "finish_s") > 3.2, "{f:?}");
    }
    let run: toml::Table = fs::read_to_string(out.join("run.toml")).unwrap().parse().unwrap();
    assert!(run["impairments"]["dropped_outage"].as_integer().unwrap() > 0);
}
