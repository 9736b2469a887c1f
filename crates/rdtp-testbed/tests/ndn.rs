//! Root-only end-to-end test of NDN flows in the testbed: NDNts's producer (the rig in
//! `tests/ndnts`, as `ndn_producer = "ndnts"`) and rdtp's own (`rdtp serve --ndn-listen`) in
//! the server namespace, publishing 2 MB in 8600-byte segments (NDNLPv2 fragments across the
//! 1500-byte path); NDNts's consumer and rdtp's NDN consumer (`rdtp fetch --ndn`, bbr-cd)
//! fetch it one after the other over an emulated 20 Mbit/s, 20 ms bottleneck, byte-exact,
//! and the run leaves no namespace, tap or producer behind. Skips (`SKIPPED: <reason>`) as
//! the other end-to-end tests do, and also without node or the NDNts rig (tools/setup.sh).

mod common;

use std::path::Path;
use std::process::Command;

use common::csv;

const EXPERIMENT: &str = r#"
[testbed]
name = "ndn"
duration = 8.0
warmup = 0.0
ndn_segment = 8600

[path]
kind = "dumbbell"
rate = "20Mbps"
rtt = "20ms"
queue = "1bdp"

[[flow]]
kind = "ndnts"
size = "2MB"
[flow.testbed]
save = true

[[flow]]
kind = "ndn"
cc = "bbr-cd"
size = "2MB"
start = 3.0
[flow.testbed]
save = true

[sweep]
"testbed.ndn_producer" = ["ndnts", "rdtp"]
"#;

fn producers_running() -> usize {
    let ps = Command::new("ps").args(["-eo", "args"]).output().expect("ps");
    String::from_utf8_lossy(&ps.stdout).lines().filter(|l| l.contains("producer.mjs --prefix /testbed/")).count()
}

#[test]
fn ndnts_and_rdtp_consumers_fetch_from_both_producers_byte_exact() {
    let Some(programs) = common::ready() else { return };
    let rig = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ndnts");
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !node || !rig.join("node_modules").is_dir() {
        common::skip("node or the NDNts rig (tests/ndnts/node_modules) is not installed: tools/setup.sh");
        return;
    }
    let before = producers_running();
    let run = common::run_with("ndn", EXPERIMENT, &programs, |c| {
        c.arg("--ndnts").arg(&rig);
    });
    run.assert_nothing_left_and_success();
    assert_eq!(producers_running(), before, "an NDNts producer of the run is still running");

    let rows = csv(&run.out.join("summary.csv"));
    assert_eq!(rows.len(), 4, "two flows in each of two runs: {rows:?}");
    for r in &rows {
        assert_eq!(r["completed"], "1", "{r:?}");
        assert_eq!(r["byte_exact"], "true", "{r:?}");
        assert_eq!(r["bytes"], "2000000", "{r:?}");
        let goodput: f64 = r["fetch_goodput_mbps"].parse().unwrap_or_else(|_| panic!("{r:?}"));
        assert!(goodput > 0.0, "{r:?}");
    }
    let kinds: Vec<(&str, &str)> = rows.iter().map(|r| (r["kind"].as_str(), r["cc"].as_str())).collect();
    assert_eq!(kinds, [("ndnts", "ndnts"), ("ndn", "bbr-cd"), ("ndnts", "ndnts"), ("ndn", "bbr-cd")]);
    run.clean();
}
