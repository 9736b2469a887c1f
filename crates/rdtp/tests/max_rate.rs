//! `rdtp serve --max-rate`: the server's send budget (issue 11, fair share). Bad values are
//! usage errors; with a budget a fetch is byte-exact and no faster than the budget allows.

use std::process::{Command, Output, Stdio};

mod common;
use common::{RDTP, Server};

fn rdtp(args: &[&str]) -> Output {
    Command::new(RDTP).args(args).stdin(Stdio::null()).output().expect("run rdtp")
}

#[test]
fn bad_rates_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["0Mbps", "fast", "100", "-5Mbps"] {
        let o = rdtp(&["serve", dir.path().to_str().unwrap(), &format!("--max-rate={bad}")]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stderr).contains("--max-rate"), "{bad}");
    }
}

#[test]
fn a_fetch_from_a_budgeted_server_is_byte_exact_and_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut content = vec![0u8; 3_000_000];
    rand::fill(&mut content[..]);
    std::fs::write(dir.path().join("f.bin"), &content).unwrap();
    let server = Server::start(dir.path(), &["--max-rate", "16Mbps"]);
    let out = dir.path().join("got.bin");
    let o = rdtp(&["fetch", &server.addr, "f.bin", "-o", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read(&out).unwrap() == content);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let goodput = json["goodput_bps"].as_f64().unwrap();
    // An upper bound only (a loaded machine can only make it slower): the budget plus its
    // 20 ms burst and one request of debt over a transfer of ≈ 1.5 s.
    assert!(goodput < 16e6 * 1.3, "{goodput} bit/s from a 16 Mbit/s budget");
}
