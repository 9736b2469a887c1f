//! `--cc` takes controller specs, checked by the core: `--cc help` lists every controller
//! with its keys, a bad spec is a usage error (exit 2) that says what is accepted.

use std::process::Command;

fn rdtp(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rdtp")).args(args).output().expect("run rdtp")
}

#[test]
fn cc_help_lists_controllers_and_keys() {
    // No ADDR/NAME needed, as with --help.
    let o = rdtp(&["fetch", "--cc", "help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for word in [
        "bbr-wifi",
        "bbrp",
        "aimd",
        "fixed",
        "bbr-orig",
        "bbr-cd",
        "sirc",
        "cubic",
        "probe_gain=1.25",
        "window=64",
        "disable_cwa=false",
        "alpha=10",
        "gaps=10",
    ] {
        assert!(out.contains(word), "{word} missing:\n{out}");
    }
    assert_eq!(rdtp(&["demo", "--cc", "help"]).status.code(), Some(0));
}

#[test]
fn bad_specs_are_usage_errors_saying_what_is_accepted() {
    for (spec, says) in [
        ("reno", "controllers: bbr, bbr-wifi, bbrp, bbr3, bbr3-rdtp, aimd, fixed, bbr-orig, bbr-cd, sirc, cubic"),
        ("bbr:window=3", "its keys: init_cwnd, probe_rtt, lt_bw, wifi, probe_gain"),
        ("bbrp:probe_gain=9", "a number in 1.0..=4.0"),
    ] {
        let o = rdtp(&["fetch", "127.0.0.1:1", "x", "--cc", spec]);
        assert_eq!(o.status.code(), Some(2), "{spec}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{spec}: {err}");
    }
    // The pre-spec options are keys: --window on bbr is bbr's missing key `window`.
    let o = rdtp(&["fetch", "127.0.0.1:1", "x", "--cc", "bbr", "--window", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("has no key 'window'"));
}
