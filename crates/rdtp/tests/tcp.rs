//! The kernel-TCP baseline end to end over 127.0.0.1: `rdtp serve DIR --tcp --tcp-cc …`
//! and `rdtp fetch ADDR NAME --tcp` (content, `-o`, `--json`, exit codes).

use std::process::{Command, Output, Stdio};

mod common;
use common::{RDTP, Server};

fn rdtp(args: &[&str]) -> Output {
    Command::new(RDTP).args(args).stdin(Stdio::null()).output().expect("run rdtp")
}

#[test]
fn tcp_fetch_is_byte_exact_and_reports_like_the_udp_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let mut big = vec![0u8; 5_000_000];
    rand::fill(&mut big[..]);
    std::fs::write(dir.path().join("big.bin"), &big).unwrap();
    // reno is built into every kernel; bbr/cubic are the experiments' choices.
    let server = Server::start(dir.path(), &["--tcp", "--tcp-cc", "reno"]);
    assert!(server.line.contains("over TCP (cc reno)"), "{}", server.line);

    let out = dir.path().join("got.bin");
    let o = rdtp(&["fetch", &server.addr, "big.bin", "--tcp", "-o", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&out).unwrap(), big);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["completed"], true);
    assert_eq!(json["size"], big.len() as u64);
    assert_eq!(json["cc"], "tcp");
    let eid = json["eid"].as_str().unwrap().to_string();
    assert_eq!(eid, blake3::hash(&big).to_hex().to_string());

    // By EID, content to stdout, summary text on stderr.
    let o = rdtp(&["fetch", &server.addr, &eid, "--tcp"]);
    assert!(o.status.success());
    assert_eq!(o.stdout, big);
    assert!(String::from_utf8_lossy(&o.stderr).contains("Goodput:"));

    // Not found: exit 3 and no output file left behind.
    let missing = dir.path().join("missing.bin");
    let o = rdtp(&["fetch", &server.addr, "nope", "--tcp", "-o", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!missing.exists());

    // rdtp-only options are usage errors with --tcp.
    let o = rdtp(&["fetch", &server.addr, "big.bin", "--tcp", "--unit", "1000"]);
    assert_eq!(o.status.code(), Some(2));

    // Nothing listening: exit 6.
    let addr = server.addr.clone();
    drop(server);
    let o = rdtp(&["fetch", &addr, "big.bin", "--tcp", "--timeout", "2", "-o", "/dev/null"]);
    assert_eq!(o.status.code(), Some(6), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn unknown_congestion_control_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let o =
        rdtp(&["serve", "--listen", "127.0.0.1:0", "--tcp", "--tcp-cc", "no-such-cc", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("congestion control"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
