//! Seed 002 in ns-3: the staggered-start scenario of S2 §III (Fig. 1) in miniature, with the
//! sniffer feeding the core's WiFi estimator, and an rdtp fetch that starts informed by it.
//! Skipped (with the reason) when this build has no ns-3.

mod common;

use std::collections::HashMap;

use common::{TempDir, csv, num, run_scenario};

/// Three 802.11g stations at a fixed 54 Mbit/s, each sending saturating UDP uplink, joining
/// 1.5 s apart (S2 §III and Appendix A, with 1.5 s instead of 10 s between starts).
const STAGGERED: &str = r#"
[scenario]
name = "staggered"
duration = 4.5
seed = 1

[topology]
kind = "wifi"
standard = "80211g"
rate_control = "constant"
phy_rates = [54]
sniffer = true
wired_rate = "300Mbps"
wired_delay = "10ms"

[[flow]]
kind = "udp"
direction = "up"
rate = "40Mbps"
start = 0.0

[[flow]]
kind = "udp"
direction = "up"
rate = "40Mbps"
start = 1.5

[[flow]]
kind = "udp"
direction = "up"
rate = "40Mbps"
start = 3.0
"#;

/// Mean goodput of `flow` over (a, b], Mbit/s of IP packets (the estimator's unit: UDP
/// payload × 1500/1472).
fn mean_goodput(ts: &[HashMap<String, String>], flow: usize, a: f64, b: f64) -> f64 {
    let pts: Vec<f64> = ts
        .iter()
        .filter(|r| r["flow"] == flow.to_string())
        .filter(|r| (a..=b).contains(&num(r, "time_s")) && num(r, "time_s") > a)
        .map(|r| num(r, "goodput_mbps"))
        .collect();
    assert!(!pts.is_empty(), "flow {flow} has samples in ({a}, {b}]");
    pts.iter().sum::<f64>() / pts.len() as f64 * 1500.0 / 1472.0
}

#[test]
fn staggered_udp_stations_and_the_n_plus_one_rule() {
    let dir = TempDir::new("s2-staggered");
    let Some(out) = run_scenario(&dir, STAGGERED) else { return };
    let run = out.join("000");
    let joins = csv(&run.join("joins.csv"));
    assert_eq!(joins.len(), 3, "{joins:?}");
    // Each newcomer found the stations that had joined before it active (N = 0, 1, 2).
    let n: Vec<&str> = joins.iter().map(|j| j["n_active"].as_str()).collect();
    assert_eq!(n, ["0", "1", "2"], "{joins:?}");
    assert!(joins[0]["n_plus_one_mbps"].is_empty(), "no N + 1 prediction with nobody to divide");

    // Alone, a 54 Mbit/s 802.11g station carries ≈ 29 Mbit/s (S2 Fig. 1: almost 30).
    let ts = csv(&run.join("timeseries.csv"));
    let alone = mean_goodput(&ts, 0, 0.5, 1.5);
    assert!((26.0..32.0).contains(&alone), "one station alone: {alone} Mbit/s");

    // The N + 1 rule (S2 §III): what a newcomer attains once it has joined.
    for (k, j) in joins.iter().enumerate().skip(1) {
        let start = num(j, "start_s");
        let attained = mean_goodput(&ts, k, start + 0.5, start + 1.5);
        let predicted = num(j, "n_plus_one_mbps");
        let err = (predicted - attained).abs() / attained;
        assert!(err < 0.15, "flow {k}: N+1 predicted {predicted}, attained {attained}");
        // The learned model sees equal PHY rates: its prediction stays near the rule's.
        let model = num(j, "model_mbps");
        assert!((model - attained).abs() / attained < 0.15, "flow {k}: model {model}, attained {attained}");
    }

    // At the end three stations share the medium, about equally (the DCF is fair to equal
    // PHY rates), and the sniffer's estimator counts all three.
    let shares: Vec<f64> = (0..3).map(|k| mean_goodput(&ts, k, 3.5, 4.5)).collect();
    let total: f64 = shares.iter().sum();
    assert!((24.0..32.0).contains(&total), "total {total} Mbit/s ({shares:?})");
    for s in &shares {
        assert!((s - total / 3.0).abs() < 0.15 * total / 3.0, "unequal shares {shares:?}");
    }
    let wifi = csv(&run.join("wifi.csv"));
    let last = wifi.last().unwrap();
    assert_eq!(last["n_active"], "3", "{last:?}");
    assert!((num(last, "total_mbps") - total).abs() < 0.1 * total, "{last:?} vs sinks {total}");
}

/// Two saturating stations, then an rdtp BBR fetch to a third station (the AP sends it: a
/// newcomer on the medium), informed by the station's own listening (S2 §II) or with BBR's
/// normal Startup.
const INFORMED: &str = r#"
[scenario]
name = "informed"
duration = 3.5
seed = 1

[topology]
kind = "wifi"
standard = "80211g"
rate_control = "constant"
phy_rates = [54]
sniffer = true
wired_rate = "300Mbps"
wired_delay = "10ms"

[[flow]]
kind = "udp"
direction = "up"
rate = "40Mbps"
count = 2

[[flow]]
kind = "rdtp"
cc = "bbr"
start = 1.0
size = 1000000

[sweep]
"flow.1" = [
    { kind = "rdtp", cc = "bbr", start = 1.0, size = 1000000, initial_rate = "auto", label = "informed" },
    { kind = "rdtp", cc = "bbr", start = 1.0, size = 1000000, label = "startup" },
]
"#;

#[test]
fn rdtp_fetch_starts_informed_by_its_station() {
    let dir = TempDir::new("s2-informed");
    let Some(out) = run_scenario(&dir, INFORMED) else { return };
    let runs: Vec<_> = {
        let mut v: Vec<_> =
            std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
        v.sort();
        v
    };
    assert_eq!(runs.len(), 2, "{runs:?}");
    for (run, informed) in runs.iter().zip([true, false]) {
        let flows = csv(&run.join("flows.csv"));
        let f = &flows[2];
        assert_eq!((f["kind"].as_str(), f["completed"].as_str()), ("rdtp", "1"), "{f:?}");
        assert_eq!(f["bytes"], "1000000");
        let joins = csv(&run.join("joins.csv"));
        let j = &joins[2];
        assert_eq!(j["n_active"], "2", "the fetch joined two active stations: {j:?}");
        let states: Vec<String> = csv(&run.join("timeseries.csv"))
            .into_iter()
            .filter(|r| r["flow"] == "2" && !r["state"].is_empty())
            .map(|r| r["state"].clone())
            .collect();
        assert!(!states.is_empty());
        if informed {
            // The rate it started from is the station's own prediction at that instant
            // (the client's monitor, not the sniffer's: close to it, not equal).
            let used = num(j, "informed_mbps");
            let predicted = num(j, "model_mbps");
            assert!((used - predicted).abs() < 0.1 * predicted, "started at {used}, sniffer predicted {predicted}");
            assert!((5.0..15.0).contains(&used), "a third of ≈ 29 Mbit/s: {used}");
            // Straight to ProbeBW: BBR never ran its Startup.
            assert!(states.iter().all(|s| s != "startup"), "{states:?}");
        } else {
            assert!(j["informed_mbps"].is_empty(), "{j:?}");
            assert_eq!(states[0], "startup", "{states:?}");
        }
    }
}
