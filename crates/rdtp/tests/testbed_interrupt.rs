//! Ctrl-C on `rdtp testbed`: the terminal sends SIGINT to the whole foreground group, so
//! `rdtp-testbed` starts tearing down what it made (namespaces, taps, processes) — and
//! `rdtp testbed` must wait for it, saying so, instead of dying at once and returning the
//! prompt while the teardown still runs.
//!
//! The companion programs are found next to the `rdtp` executable, so the test runs a hard
//! link of `rdtp` in a directory of its own beside a stand-in `rdtp-testbed` (a shell script
//! whose teardown takes a second) and `rdtp-sim`. Needs no root and no ns-3.

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::RDTP;

/// A stand-in `rdtp-testbed`: says it started, and on SIGINT or SIGTERM takes a second to
/// "tear down" before writing `$TEARDOWN_DONE` and exiting 130, as the real one does.
const FAKE_TESTBED: &str = r#"#!/bin/sh
trap 'sleep 1; echo done > "$TEARDOWN_DONE"; exit 130' INT TERM
echo started > "$STARTED"
while :; do sleep 0.05; done
"#;

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn ctrl_c_on_rdtp_testbed_waits_for_the_teardown_and_says_so() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let rdtp = dir.path().join("rdtp");
    if std::fs::hard_link(RDTP, &rdtp).is_err() {
        std::fs::copy(RDTP, &rdtp).unwrap();
    }
    script(&dir.path().join("rdtp-testbed"), FAKE_TESTBED);
    script(&dir.path().join("rdtp-sim"), "#!/bin/sh\nexit 0\n");
    let (started, done) = (dir.path().join("started"), dir.path().join("done"));

    // Its own process group, as a shell's foreground job, so SIGINT goes to both as Ctrl-C would.
    let child = Command::new(&rdtp)
        .args(["testbed", "experiment.toml"])
        .env("STARTED", &started)
        .env("TEARDOWN_DONE", &done)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !started.exists() {
        assert!(t0.elapsed() < Duration::from_secs(20), "the stand-in rdtp-testbed never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the process group of our own child, which is still running.
    assert_eq!(unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGINT) }, 0);

    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(done.exists(), "rdtp testbed returned before rdtp-testbed's teardown ended ({:?}): {stderr}", out.status);
    assert_eq!(out.status.code(), Some(130), "rdtp-testbed's exit code, passed on: {stderr}");
    assert!(stderr.contains("cleaning up"), "{stderr}");
}
