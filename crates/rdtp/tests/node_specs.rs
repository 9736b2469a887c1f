//! Receiver and router options as spec strings, parsed by the core (`rdtp-proto`'s key
//! tables): `rdtp fetch --receiver SPEC`/`--set KEY=VALUE`, `rdtp route --router SPEC`/
//! `--cs SPEC`/`--set KEY=VALUE`. `help` lists every key (exit 0); a bad key or value is a
//! usage error (exit 2) naming the key and what it accepts; a key given reaches the core.

use std::process::{Command, Output, Stdio};

use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::router::RouterConfig;
use rdtp_proto::spec::Keyed;

mod common;
use common::{RDTP, Server, content};

fn rdtp(args: &[&str]) -> Output {
    Command::new(RDTP).args(args).stdin(Stdio::null()).output().expect("run rdtp")
}

#[test]
fn help_lists_every_key() {
    let o = rdtp(&["fetch", "--receiver", "help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for k in ReceiverConfig::KEYS {
        assert!(out.contains(&format!("  {}=", k.name)), "{} missing:\n{out}", k.name);
    }
    let o = rdtp(&["route", "--router", "help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for k in RouterConfig::KEYS {
        assert!(out.contains(&format!("  {}=", k.name)), "{} missing:\n{out}", k.name);
    }
    let o = rdtp(&["route", "--cs", "help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for says in ["lru", "lfu", "clock", "units=65536", "bytes=256MiB", "insert=always"] {
        assert!(out.contains(says), "{says} missing:\n{out}");
    }
}

#[test]
fn bad_specs_are_usage_errors_naming_the_key() {
    for (args, says) in [
        (
            &["fetch", "127.0.0.1:1", "x", "--receiver", "rto_k=-1"][..],
            "receiver: rto_k=-1: the value must be an integer",
        ),
        (&["fetch", "127.0.0.1:1", "x", "--set", "idle_timeout=3"], "--set idle_timeout=3: receiver: idle_timeout=3"),
        (&["fetch", "127.0.0.1:1", "x", "--set", "nope=1"], "receiver has no key 'nope'"),
        (&["fetch", "127.0.0.1:1", "x", "--set", "a=1,b=2"], "is not KEY=VALUE"),
        (&["route", "--upstream", "127.0.0.1:1", "--router", "pit_size=0"], "router: pit_size=0: the value must be"),
        (&["route", "--upstream", "127.0.0.1:1", "--set", "strategy=fastest"], "one of best-route, asf"),
        (&["route", "--upstream", "127.0.0.1:1", "--cs", "lifo"], "content store: policy=lifo"),
        (&["route", "--upstream", "127.0.0.1:1", "--cs", "lru:insert=sometimes"], "insert=sometimes"),
        (&["route", "--upstream", "127.0.0.1:1", "--lifetime", "0"], "router: lifetime=0ms"),
        // Caching without verification exists in simulation only.
        (&["route", "--upstream", "127.0.0.1:1", "--router", "cs_units=9,verify=false"], "always verifies blocks"),
        (
            &["route", "--upstream", "127.0.0.1:1", "--set", "verify=false"],
            "--set verify=false: verify: rdtp route always",
        ),
    ] {
        let o = rdtp(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn router_keys_reach_the_core_after_the_options_they_override() {
    let r = Server::route(&[
        "--upstream",
        "127.0.0.1:9",
        "--cs-size",
        "10",
        "--cs",
        "fifo:units=20",
        "--router",
        "strategy=asf,cs_insert=none",
        "--set",
        "cs_bytes=1MiB",
        "--workers",
        "1",
    ]);
    for says in ["1.0 MiB or 20 units, fifo, insert none", "strategy asf"] {
        assert!(r.line.contains(says), "{says}: {}", r.line);
    }
}

#[test]
fn receiver_keys_reach_the_core() {
    let dir = tempfile::tempdir().unwrap();
    let data = content(300_000, 3);
    std::fs::write(dir.path().join("f.bin"), &data).unwrap();
    let server = Server::start(dir.path(), &[]);
    let out = dir.path().join("got.bin");
    let o = rdtp(&[
        "fetch",
        &server.addr,
        "f.bin",
        "-o",
        out.to_str().unwrap(),
        "--json",
        "--receiver",
        "max_inflight=4,unit=1000",
        "--set",
        "rto_k=8",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&out).unwrap(), data);
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["unit"], 1000, "{summary}");
}

#[test]
fn the_options_that_predate_controller_specs_warn_naming_the_spec() {
    let o = rdtp(&["fetch", "127.0.0.1:1", "x", "--window", "8", "--timeout", "1"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("rdtp: warning: --window is deprecated and will be removed in the next release: give the controller spec fixed:window=8 instead"),
        "{err}"
    );
    let o = rdtp(&["fetch", "127.0.0.1:1", "x", "--cc", "bbr", "-q", "--probe-gain", "2", "--timeout", "1"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"), "-q says nothing");
}

/// Without a unit bound given, `rdtp route` derives it from the byte budget, whichever option
/// or spec set the budget; a unit bound given anywhere is kept.
#[test]
fn the_routers_default_unit_bound_follows_its_byte_budget() {
    let per_unit = u64::from(rdtp_proto::wire::DEFAULT_UNIT) + rdtp_proto::router::CACHED_UNIT_OVERHEAD as u64;
    for (extra, says) in [
        (&[][..], format!("256.0 MiB or {} units", (256u64 << 20) / per_unit)),
        (&["--set", "cs_bytes=1GiB"][..], format!("1.0 GiB or {} units", (1u64 << 30) / per_unit)),
        (&["--cs", "bytes=512MiB"][..], format!("512.0 MiB or {} units", (512u64 << 20) / per_unit)),
        (&["--cs-bytes", "8MiB"][..], "8.0 MiB or 65536 units".to_string()),
        (&["--cs", "units=500"][..], "256.0 MiB or 500 units".to_string()),
        (&["--router", "cs_units=700"][..], "256.0 MiB or 700 units".to_string()),
    ] {
        let mut args = vec!["--upstream", "127.0.0.1:9", "--workers", "1"];
        args.extend_from_slice(extra);
        let r = Server::route(&args);
        assert!(r.line.contains(&says), "{extra:?}: {says}: {}", r.line);
    }
}
