//! `rdtp route --stats-json FILE` (issue 23, item 13): a FILE that cannot be written is
//! refused at start with exit code 4 (I/O error), as `fetch --log-rtt` refuses its file,
//! instead of routing, warning at every report and losing the statistics (0036bef ran on
//! and exited 0). A writable FILE holds a report from the start.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{RDTP, Server};

#[test]
fn an_unwritable_stats_json_is_refused_at_start_with_exit_4() {
    let mut child = Command::new(RDTP)
        .args(["route", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:9"])
        .args(["--stats-json", "/nonexistent/rdtp-dir/x.json"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rdtp route with an unwritable --stats-json still running after 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(4), "{err}");
    assert!(err.contains("/nonexistent/rdtp-dir/x.json"), "{err}");
    assert!(!err.contains("routing on"), "refused before routing: {err}");
}

#[test]
fn a_writable_stats_json_holds_a_report_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let r = Server::route(&["--upstream", "127.0.0.1:9", "--stats-json", json.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["totals"]["router"]["requests"], 0);
    drop(r);
}
