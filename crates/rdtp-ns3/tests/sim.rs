//! End-to-end tests of `rdtp-sim`: the real rdtp core inside ns-3.
//!
//! Every test runs the built binary. If this build has no ns-3 (see build.rs), the binary
//! says so and exits 3; the tests then print that reason and skip.

mod common;

use std::fs;
use std::process::Command;

use common::{SIM, TempDir, csv, num, result, sim};

#[test]
fn wired_rdtp_bbr_fetches_the_exact_object_and_fills_the_bottleneck() {
    let dir = TempDir::new("wired");
    let out = dir.0.join("run");
    let size = 20_000_000u64;
    let Some(o) = sim(&[
        "--run-one",
        "--Topology=dumbbell",
        "--Rate=50Mbps",
        "--Rtt=20ms",
        "--QueueBdp=1",
        "--Duration=5",
        "--Warmup=1",
        &format!("--Flows=kind=rdtp,cc=bbr,size={size}"),
        &format!("--Out={}", out.display()),
    ]) else {
        return;
    };
    eprintln!("{}", String::from_utf8_lossy(&o.stdout));
    let flows = csv(&out.join("flows.csv"));
    assert_eq!(flows.len(), 1);
    let f = &flows[0];
    // completed = 1 only after the core's FINISHED event: every byte arrived and the
    // object's BLAKE3 matched its EID.
    assert_eq!(f["completed"], "1", "{f:?}");
    assert_eq!(f["bytes"], size.to_string(), "{f:?}");
    let finish = num(f, "finish_s");
    assert!(finish > 1.0 && finish < 5.0, "finished at {finish}");
    let util = result(&out.join("run.toml"), "utilisation");
    assert!(util >= 0.90, "bottleneck utilisation {util} over [warmup, finish)");
    let goodput = num(f, "goodput_mbps");
    assert!(goodput > 0.85 * 50.0, "goodput {goodput} Mbit/s");
    let min_rtt = num(f, "min_rtt_ms");
    assert!((20.0..22.0).contains(&min_rtt), "min RTT {min_rtt} ms on a 20 ms path");
    let ts = csv(&out.join("timeseries.csv"));
    assert!(ts.len() >= 30, "one row per 100 ms while active");
    assert!(ts.iter().any(|r| r["state"] == "probe_bw"), "BBR reached ProbeBW");
    // received_mbps: payload arrivals before verification, which delivers in groups (the
    // first groups ramp up from one 16 KiB block): over the fetch the same bytes, and the
    // first arrivals come no later than the first bytes read.
    let sum = |col: &str| ts.iter().map(|r| r[col].parse::<f64>().unwrap()).sum::<f64>();
    let (received, delivered) = (sum("received_mbps"), sum("goodput_mbps"));
    assert!(received >= delivered && received < 1.05 * delivered, "received {received}, delivered {delivered}");
    let first = |col: &str| ts.iter().position(|r| r[col].parse::<f64>().unwrap() > 0.0).unwrap();
    assert!(first("received_mbps") <= first("goodput_mbps"));
    let q = csv(&out.join("queue.csv"));
    assert!(q.len() >= 500, "queue sampled every 10 ms");
}

/// `Hops=3`: a chain of four routers; rdtp and TCP cross all three bottleneck-rate links.
#[test]
fn chain_of_routers_carries_rdtp_and_tcp() {
    let dir = TempDir::new("chain");
    let out = dir.0.join("run");
    let Some(o) = sim(&[
        "--run-one",
        "--Topology=dumbbell",
        "--Hops=3",
        "--Rate=40Mbps",
        "--Rtt=20ms",
        "--Duration=4",
        "--Warmup=1",
        "--Flows=kind=rdtp,cc=bbr,size=6000000;kind=tcp-cubic,size=6000000,start=0.5",
        &format!("--Out={}", out.display()),
    ]) else {
        return;
    };
    eprintln!("{}", String::from_utf8_lossy(&o.stdout));
    let run: toml::Table = fs::read_to_string(out.join("run.toml")).unwrap().parse().unwrap();
    assert_eq!(run["derived"]["hops"].as_str(), Some("3"));
    let flows = csv(&out.join("flows.csv"));
    assert_eq!(flows.len(), 2);
    for f in &flows {
        assert_eq!(f["completed"], "1", "{f:?}");
        assert_eq!(f["bytes"], "6000000", "{f:?}");
    }
    // The delay is split over the hops, not multiplied: base RTT stays 20 ms (plus
    // store-and-forward of one packet per extra hop).
    let min_rtt = num(&flows[0], "min_rtt_ms");
    assert!((20.0..23.0).contains(&min_rtt), "min RTT {min_rtt} ms on a 20 ms chain");
}

#[test]
fn wifi_80211n_rdtp_fetch_completes() {
    let dir = TempDir::new("wifi");
    let out = dir.0.join("run");
    let Some(o) = sim(&[
        "--run-one",
        "--Topology=wifi",
        "--Standard=80211n",
        "--ChannelWidth=20",
        "--Mcs=7",
        "--Duration=3",
        "--Flows=kind=rdtp,cc=bbr-wifi,size=4000000",
        &format!("--Out={}", out.display()),
    ]) else {
        return;
    };
    eprintln!("{}", String::from_utf8_lossy(&o.stdout));
    let f = &csv(&out.join("flows.csv"))[0];
    assert_eq!(f["completed"], "1", "{f:?}");
    assert_eq!(f["bytes"], "4000000");
    // 802.11n 20 MHz MCS 7 carries at most 65 Mbit/s; 4 MB need well over 0.5 s.
    let finish = num(f, "finish_s");
    assert!(finish > 0.5 && finish < 3.0, "finished at {finish}");
    let run = fs::read_to_string(out.join("run.toml")).unwrap();
    assert!(run.contains("unassociated_at_start = 0"), "{run}");
    assert!(run.contains("data_mode = \"HtMcs7\""), "{run}");
}

const MIXED: &str = r#"
[scenario]
name = "det"
duration = 2.0
warmup = 0.5
seed = 7

[topology]
kind = "dumbbell"
rate = "40Mbps"
rtt = "10ms"
queue = "1bdp"
loss = 0.002          # random loss drawn from ns-3's RNG: the seed matters

[[flow]]
kind = "rdtp"
cc = "bbr"

[[flow]]
kind = "tcp"
cc = "cubic"
start = 0.3
"#;

#[test]
fn same_scenario_and_seed_give_identical_csvs() {
    let dir = TempDir::new("det");
    let scenario = dir.0.join("det.toml");
    fs::write(&scenario, MIXED).unwrap();
    let mut outs = Vec::new();
    for name in ["a", "b"] {
        let out = dir.0.join(name);
        if sim(&[scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--jobs", "1"]).is_none() {
            return;
        }
        outs.push(out.join("000"));
    }
    for file in ["timeseries.csv", "flows.csv", "queue.csv"] {
        let a = fs::read(outs[0].join(file)).unwrap();
        let b = fs::read(outs[1].join(file)).unwrap();
        assert!(!a.is_empty());
        assert!(a == b, "{file} differs between two runs with the same seed");
    }
    // A different seed changes the run (ns-3's loss model and the rdtp receiver draw from it).
    let out = dir.0.join("c");
    sim(&[scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--set", "scenario.seed=8"]).unwrap();
    let a = fs::read(outs[0].join("timeseries.csv")).unwrap();
    let c = fs::read(out.join("000").join("timeseries.csv")).unwrap();
    assert!(a != c, "seed 8 reproduced seed 7 exactly");
}

/// Hu et al.'s Topology 1 in miniature: the producer behind a second 802.11n network, a
/// caching AP, one consumer fetching 2 MB in 8600-byte units.
const TWO_HOPS: &str = r#"
[scenario]
name = "drops"
duration = 20.0
stop_when_done = true
settle = 2.0

[topology]
kind = "wifi"
standard = "80211n"
channel_width = 20
mcs = 6
server_link = "wifi"

[[topology.router]]
node = "ap"
cs_size = 65536

[[flow]]
kind = "rdtp"
cc = "bbr-orig"
size = "2MB"
unit = 8600
"#;

#[test]
fn drop_trace_counts_each_hop_and_changes_no_other_output() {
    let dir = TempDir::new("drops");
    let scenario = dir.0.join("drops.toml");
    fs::write(&scenario, TWO_HOPS).unwrap();
    let (plain, traced) = (dir.0.join("plain"), dir.0.join("traced"));
    if sim(&[scenario.to_str().unwrap(), "--out", plain.to_str().unwrap(), "--jobs", "1"]).is_none() {
        return;
    }
    let s = scenario.to_str().unwrap();
    sim(&[s, "--out", traced.to_str().unwrap(), "--jobs", "1", "--set", "scenario.drop_trace=true"]).unwrap();
    let (plain, traced) = (plain.join("000"), traced.join("000"));
    assert!(!plain.join("drops.csv").exists(), "drops.csv written without drop_trace");
    for file in ["timeseries.csv", "flows.csv", "queue.csv", "cs.csv"] {
        let a = fs::read(plain.join(file)).unwrap();
        assert!(a == fs::read(traced.join(file)).unwrap(), "{file} changed with drop_trace");
    }
    let f = &csv(&traced.join("flows.csv"))[0];
    assert_eq!(f["completed"], "1", "{f:?}");
    let rows = csv(&traced.join("drops.csv"));
    let count = |node: &str, device: &str, event: &str, detail: &str| -> u64 {
        let r = rows
            .iter()
            .find(|r| r["node"] == node && r["device"] == device && r["event"] == event && r["detail"] == detail);
        r.map(|r| r["count"].parse().unwrap()).unwrap_or_else(|| panic!("no {node} {device} {event} {detail}"))
    };
    // Every unit reached the consumer as one datagram (2 MB / 8600 B = 233 units), through the
    // AP, and the producer sent each once more per re-request.
    let units = 2_000_000u64.div_ceil(8600);
    let delivered = count("client0", "if1", "LocalDeliver", "large");
    assert!(delivered >= units, "consumer got {delivered} Data datagrams of {units}");
    assert_eq!(count("ap", "if2", "SendOutgoing", "large"), delivered);
    let resent = num(f, "retransmissions") as u64;
    assert_eq!(count("server", "if1", "SendOutgoing", "large"), count("ap", "if1", "LocalDeliver", "large") + resent);
    // Both radios of the AP are named by their network.
    assert!(rows.iter().any(|r| r["node"] == "ap" && r["device"].ends_with(":wifi-ap:rdtp-up")), "{rows:?}");
    assert!(rows.iter().all(|r| r["detail"] != "unavailable"), "a trace source is missing");
}

#[test]
fn tcp_bbr_and_cubic_baselines_carry_traffic() {
    let dir = TempDir::new("tcp");
    let scenario = dir.0.join("tcp.toml");
    fs::write(
        &scenario,
        r#"
[scenario]
name = "tcp"
duration = 3.0
warmup = 1.0

[topology]
kind = "dumbbell"
rate = "50Mbps"
rtt = "20ms"
queue = "1bdp"

[[flow]]
kind = "tcp-bbr"

[sweep]
"flow.0.kind" = ["tcp-bbr", "tcp-cubic"]
"#,
    )
    .unwrap();
    let out = dir.0.join("out");
    let Some(o) = sim(&[scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--jobs", "2"]) else {
        return;
    };
    let progress = String::from_utf8_lossy(&o.stderr);
    eprintln!("{progress}");
    assert!(progress.contains("[2/2]"), "progress lines on stderr");
    let summary = csv(&out.join("summary.csv"));
    assert_eq!(summary.len(), 2, "{summary:?}");
    for row in &summary {
        let goodput = num(row, "goodput_mbps");
        let cc = &row["cc"];
        assert!(goodput > 20.0, "{cc}: goodput {goodput} Mbit/s on a 50 Mbit/s link");
        assert!(num(row, "mean_rtt_ms") >= 20.0, "{cc}: RTT samples from the socket trace");
        assert!(num(row, "utilisation") > 0.5, "{cc}: utilisation");
        assert_eq!(row["flow.0.kind"], row["kind"]);
    }
    let ts = csv(&out.join("000_flow.0.kind=tcp-bbr").join("timeseries.csv"));
    assert!(ts.iter().any(|r| !r["cwnd"].is_empty() && num(r, "cwnd") > 0.0), "cwnd from the socket trace");
    assert!(ts.iter().any(|r| !r["pacing_mbps"].is_empty()), "BBR paces");
}

#[test]
fn bad_scenarios_are_usage_errors() {
    let dir = TempDir::new("bad");
    let scenario = dir.0.join("bad.toml");
    fs::write(&scenario, MIXED.replace("queue = \"1bdp\"", "queue = \"1bdp\"\nquee = 3")).unwrap();
    let out = Command::new(SIM).arg(&scenario).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("quee"));
}

/// A tiny sweep with repetitions: 2 rates × 3 runs of 1 simulated second, random loss so
/// repetitions differ.
const SWEEP: &str = r#"
[scenario]
name = "shards"
duration = 1.0
warmup = 0.2
repeat = 3

[topology]
kind = "dumbbell"
rate = "20Mbps"
rtt = "10ms"
queue = "1bdp"
loss = 0.01

[[flow]]
kind = "rdtp"
cc = "bbr"

[sweep]
"topology.rate" = ["10Mbps", "20Mbps"]
"#;

/// A temporary directory holding SWEEP as `sweep.toml`, and that file's path.
fn sweep_in(name: &str) -> (TempDir, String) {
    let dir = TempDir::new(name);
    let scenario = dir.0.join("sweep.toml");
    fs::write(&scenario, SWEEP).unwrap();
    let path = scenario.to_str().unwrap().to_string();
    (dir, path)
}

#[test]
fn sharded_then_merged_equals_unsharded() {
    let (dir, scenario) = sweep_in("shards");
    let s = scenario.as_str();
    let path = |name: &str| dir.0.join(name).to_str().unwrap().to_string();

    // --list: the expanded runs, and a shard's share of them.
    let list = |extra: &[&str]| {
        let mut args = vec![s, "--list"];
        args.extend_from_slice(extra);
        let o = Command::new(SIM).args(&args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let all = list(&[]);
    assert_eq!(all.lines().count(), 6, "{all}");
    assert!(all.starts_with("0\t000_rate=10Mbps_rep=0\trate=10Mbps rep=0\n"), "{all}");
    assert_eq!(list(&["--shard", "1/2"]), all.lines().skip(1).step_by(2).map(|l| format!("{l}\n")).collect::<String>());

    let Some(o) = sim(&[s, "--out", &path("whole"), "--jobs", "2"]) else { return };
    let banner = String::from_utf8_lossy(&o.stderr);
    assert!(banner.lines().next().is_some_and(|l| l.contains(", ns-3 3.")), "the banner names ns-3: {banner}");
    for i in 0..3 {
        sim(&[s, "--out", &path(&format!("part{i}")), "--jobs", "1", "--shard", &format!("{i}/3")]).unwrap();
        let part = csv(&dir.0.join(format!("part{i}")).join("summary.csv"));
        assert_eq!(part.len(), 2, "shard {i}/3 runs two of six");
    }
    let merged = path("merged");
    sim(&["--merge", &path("part2"), &path("part0"), &path("part1"), "--out", &merged]).unwrap();
    let (whole, merged) = (dir.0.join("whole"), dir.0.join("merged"));
    for file in ["summary.csv", "summary-mean.csv"] {
        let a = fs::read_to_string(whole.join(file)).unwrap();
        let b = fs::read_to_string(merged.join(file)).unwrap();
        assert_eq!(a, b, "{file}");
    }
    for row in csv(&whole.join("summary.csv")) {
        let id = &row["run_id"];
        for file in ["flows.csv", "timeseries.csv"] {
            assert_eq!(fs::read(whole.join(id).join(file)).unwrap(), fs::read(merged.join(id).join(file)).unwrap());
        }
    }

    // The repetitions are runs 1, 2, 3 of each point: different, and averaged with a t interval.
    let rows = csv(&whole.join("summary.csv"));
    assert_eq!(rows.iter().map(|r| r["run"].as_str()).collect::<Vec<_>>(), ["1", "2", "3", "1", "2", "3"]);
    // (Goodput counts verified 16 KiB blocks, so in one second it can coincide; the RTT not.)
    let rtts: Vec<f64> = rows[..3].iter().map(|r| num(r, "mean_rtt_ms")).collect();
    assert!(rtts[0] != rtts[1] || rtts[1] != rtts[2], "repetitions identical: {rtts:?}");
    let means = csv(&whole.join("summary-mean.csv"));
    assert_eq!(means.len(), 2);
    let m = &means[0];
    assert_eq!(
        (m["run_id"].as_str(), m["topology.rate"].as_str(), m["runs"].as_str()),
        ("000_rate=10Mbps_rep=0", "10Mbps", "3")
    );
    let mean = rtts.iter().sum::<f64>() / 3.0;
    let sd = (rtts.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
    assert!((num(m, "mean_rtt_ms") - mean).abs() < 1e-5, "{m:?}");
    assert!((num(m, "mean_rtt_ms_ci95") - 4.302_653 * sd / 3f64.sqrt()).abs() < 1e-5, "{m:?}");
    assert_eq!(num(m, "mean_rtt_ms_min"), rtts.iter().copied().fold(f64::INFINITY, f64::min));
    assert_eq!(num(m, "mean_rtt_ms_max"), rtts.iter().copied().fold(f64::NEG_INFINITY, f64::max));

    // Parts of another sweep are refused; a missing shard is reported (exit 1).
    sim(&[s, "--out", &path("other"), "--jobs", "1", "--shard", "0/3", "--set", "scenario.repeat=2"]).unwrap();
    let o =
        Command::new(SIM).args(["--merge", &path("part0"), &path("other"), "--out", &path("bad")]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("different sweeps"));
    // sweep.toml names the ns-3 the runs used; a part simulated with another one is refused.
    let manifest = fs::read_to_string(dir.0.join("part2").join("sweep.toml")).unwrap();
    let version = manifest.lines().find_map(|l| l.strip_prefix("ns3 = ")).expect("sweep.toml names ns-3").to_string();
    fs::write(dir.0.join("part2").join("sweep.toml"), manifest.replace(&version, "\"3.0\"")).unwrap();
    let o = Command::new(SIM)
        .args(["--merge", &path("part0"), &path("part1"), &path("part2"), "--out", &path("mixed")])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("different ns-3 versions"));
    let o = Command::new(SIM)
        .args(["--merge", &path("part0"), &path("part1"), "--out", &path("partial")])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("2 run(s) missing") && err.contains("002_rate=10Mbps_rep=2"), "{err}");
    assert_eq!(csv(&dir.0.join("partial").join("summary.csv")).len(), 4, "what is there is still summarised");
}

#[test]
fn an_interrupted_sweep_resumes_with_only_its_missing_runs() {
    let (dir, scenario) = sweep_in("resume");
    let s = scenario.as_str();
    let out = dir.0.join("out");
    let o = out.to_str().unwrap();
    let Some(_) = sim(&[s, "--out", o, "--jobs", "2"]) else { return };
    let whole = fs::read_to_string(out.join("summary.csv")).unwrap();
    let means = fs::read_to_string(out.join("summary-mean.csv")).unwrap();

    // An interruption: two runs never finished (one has no directory, one no results), and
    // a third's directory is marked so that running it again would show.
    fs::remove_dir_all(out.join("001_rate=10Mbps_rep=1")).unwrap();
    fs::remove_file(out.join("004_rate=20Mbps_rep=1").join("run.toml")).unwrap();
    fs::write(out.join("000_rate=10Mbps_rep=0").join("kept"), "").unwrap();
    fs::remove_file(out.join("summary.csv")).unwrap();
    let r = Command::new(SIM).args([s, "--out", o, "--jobs", "1", "--resume"]).output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{err}");
    assert!(err.contains("4 kept from the interrupted invocation"), "{err}");
    assert_eq!(err.matches("… done in").count(), 2, "only the two missing runs ran: {err}");
    assert!(out.join("000_rate=10Mbps_rep=0").join("kept").exists(), "a finished run is not run again");
    assert_eq!(fs::read_to_string(out.join("summary.csv")).unwrap(), whole, "the same sweep, the same summary");
    assert_eq!(fs::read_to_string(out.join("summary-mean.csv")).unwrap(), means);

    // Another scenario text or other --set values in the same --out are refused (exit 2).
    let r = Command::new(SIM).args([s, "--out", o, "--resume", "--set", "scenario.repeat=2"]).output().unwrap();
    assert_eq!(r.status.code(), Some(2), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(String::from_utf8_lossy(&r.stderr).contains("another scenario text or other --set values"));
}
