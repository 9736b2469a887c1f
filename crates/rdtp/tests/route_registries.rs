//! `rdtp route --strategy` and `--cs-policy` take any name of the core's registries:
//! `help` lists them all (exit 0, no other option needed), an unknown name is a usage error
//! (exit 2) naming what is accepted.

use std::process::Command;

use rdtp_proto::router::{cs, strategy};

fn rdtp(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rdtp")).args(args).output().expect("run rdtp")
}

#[test]
fn help_lists_every_registered_strategy_and_policy() {
    let o = rdtp(&["route", "--strategy", "help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for s in strategy::STRATEGIES {
        assert!(out.contains(s.name) && out.contains(s.about), "{} missing:\n{out}", s.name);
    }
    let o = rdtp(&["route", "--cs-policy", "help"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for (name, about) in cs::policy_help() {
        assert!(out.contains(name) && out.contains(about), "{name} missing:\n{out}");
    }
}

#[test]
fn unknown_names_are_usage_errors() {
    for (flag, says) in [("--strategy", "expected one of best-route, asf"), ("--cs-policy", "expected one of lru, lfu")]
    {
        let o = rdtp(&["route", "--upstream", "127.0.0.1:1", flag, "nonesuch"]);
        assert_eq!(o.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{flag}: {err}");
    }
}
