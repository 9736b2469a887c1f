//! `rdtp fetch` options that select or bound the congestion controller (issue 23 item 15):
//! `--window N` is short for `--cc fixed:window=N` (0036bef refused it without `--cc
//! fixed`), and a fixed window no fetch can use is cut to what the receive window and the
//! receiver's socket buffer allow, with a warning saying why (0036bef ran `--cc fixed
//! --window 4294967295` at 74 % re-requests without a word).

use std::process::{Command, Output, Stdio};

mod common;
use common::{RDTP, Server, content};

fn rdtp(args: &[&str]) -> Output {
    Command::new(RDTP).args(args).stdin(Stdio::null()).output().expect("run rdtp")
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)))
}

#[test]
fn window_alone_selects_fixed_and_absurd_windows_are_cut_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let data = content(2 << 20, 7);
    std::fs::write(dir.path().join("f.bin"), &data).unwrap();
    let server = Server::start(dir.path(), &[]);
    let out = dir.path().join("got.bin");
    let fetch = |extra: &[&str]| {
        let mut args = vec!["fetch", &server.addr, "f.bin", "-o", out.to_str().unwrap(), "--json"];
        args.extend_from_slice(extra);
        rdtp(&args)
    };

    let o = fetch(&["--window", "32"]);
    assert!(o.status.success(), "--window alone: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json(&o)["cc"], "fixed");
    assert!(std::fs::read(&out).unwrap() == data);

    let o = fetch(&["--aimd-step", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json(&o)["cc"], "aimd");

    let o = fetch(&["--cc", "fixed", "--window", "4294967295"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("warning: --window 4294967295 cut to 5698 units"), "{err}");
    assert!(err.contains("no congestion control") && err.contains("socket buffer"), "{err}");
    assert!(std::fs::read(&out).unwrap() == data);

    // Options of two controllers, and --window with another controller named: usage errors.
    for bad in [&["--window", "3", "--cubic-beta", "0.8"][..], &["--cc", "bbr", "--window", "3"][..]] {
        let o = fetch(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
}
