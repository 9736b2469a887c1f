//! `rdtp fetch -o FILE` (issue 11, "Ctrl-C leaves an unverified partial `-o` file"): the
//! object is written under a temporary name in FILE's directory and renamed to FILE only
//! once complete and verified. On failure, SIGINT or SIGTERM the temporary file is removed,
//! and FILE is left as it was: absent, or with its previous content.

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{RDTP, Server};

const NAME: &str = "big.bin";

/// A served directory with one random file of `len` bytes.
fn served(len: usize) -> (tempfile::TempDir, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let mut data = vec![0u8; len];
    rand::fill(&mut data[..]);
    std::fs::write(dir.path().join(NAME), &data).unwrap();
    (dir, data)
}

fn fetch(addr: &str, out: &Path, extra: &[&str]) -> Child {
    Command::new(RDTP)
        .args(["fetch", addr, NAME, "-o", out.to_str().unwrap(), "-q"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: signalling a child process of this test.
    unsafe {
        libc::kill(child.id() as libc::pid_t, sig);
    }
}

/// The names in `dir` (sorted).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// The size of the fetch's temporary file in `dir`, if there is one.
fn partial_size(dir: &Path) -> Option<u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .and_then(|e| e.metadata().ok())
        .map(|m| m.len())
}

/// Wait until the fetch has written at least a MiB to its temporary file.
fn wait_for_partial(dir: &Path, child: &mut Child) {
    let t0 = Instant::now();
    while partial_size(dir).is_none_or(|n| n < 1 << 20) {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the fetch ended ({status}) before writing a MiB; files: {:?}", names(dir));
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "no partial output after 60 s: {:?}", names(dir));
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn wait(child: &mut Child, within: Duration, what: &str) -> ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(t0.elapsed() < within, "{what}: the fetch still runs {:?} later", t0.elapsed());
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn stderr_of(child: &mut Child) -> String {
    let mut s = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut s);
    }
    s
}

/// Ctrl-C while the transfer waits on a server that stopped answering: the fetch ends at
/// once (not at its 10 s idle timeout) with 130, and nothing is left in the directory.
#[test]
fn sigint_mid_fetch_removes_the_partial_file() {
    let (dir, _) = served(48 << 20);
    let server = Server::start(dir.path(), &[]);
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.bin");
    let mut child = fetch(&server.addr, &out, &[]);
    wait_for_partial(out_dir.path(), &mut child);
    // The server stops answering; the fetch waits for it (idle timeout 10 s).
    signal(&server.child, libc::SIGSTOP);
    std::thread::sleep(Duration::from_millis(100));
    assert!(child.try_wait().unwrap().is_none(), "the fetch should be waiting for the server");
    signal(&child, libc::SIGINT);
    let status = wait(&mut child, Duration::from_secs(5), "SIGINT");
    signal(&server.child, libc::SIGCONT);
    let err = stderr_of(&mut child);
    assert_eq!(status.code(), Some(130), "exit on SIGINT: {status}; stderr: {err}");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert_eq!(names(out_dir.path()), Vec::<String>::new(), "nothing may be left behind");
}

/// SIGTERM while the bytes flow, over an existing FILE: either the signal wins (143, FILE
/// keeps its previous content) or the fetch had already completed (0, FILE is the whole
/// object) — never a partial or unverified FILE, never a leftover temporary file.
#[test]
fn sigterm_mid_fetch_keeps_the_previous_file() {
    let (dir, data) = served(48 << 20);
    let server = Server::start(dir.path(), &[]);
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.bin");
    std::fs::write(&out, b"the previous content").unwrap();
    let mut child = fetch(&server.addr, &out, &[]);
    wait_for_partial(out_dir.path(), &mut child);
    signal(&child, libc::SIGTERM);
    let status = wait(&mut child, Duration::from_secs(5), "SIGTERM");
    let err = stderr_of(&mut child);
    let now = std::fs::read(&out).unwrap();
    match status.code() {
        Some(143) => assert_eq!(now, b"the previous content", "FILE changed by an interrupted fetch"),
        Some(0) => assert!(now == data, "FILE is not the object ({} bytes)", now.len()),
        _ => panic!("exit on SIGTERM: {status}; stderr: {err}"),
    }
    assert_eq!(names(out_dir.path()), ["out.bin"], "leftover files; status {status}");
}

/// A fetch that fails (the server stops answering: idle timeout) leaves nothing, and an
/// existing FILE untouched.
#[test]
fn a_failed_fetch_leaves_nothing_and_keeps_the_previous_file() {
    let (dir, _) = served(48 << 20);
    let server = Server::start(dir.path(), &[]);
    let out_dir = tempfile::tempdir().unwrap();
    for previous in [None, Some(&b"keep me"[..])] {
        let out = out_dir.path().join("out.bin");
        if let Some(p) = previous {
            std::fs::write(&out, p).unwrap();
        }
        let mut child = fetch(&server.addr, &out, &["--timeout", "1"]);
        wait_for_partial(out_dir.path(), &mut child);
        signal(&server.child, libc::SIGSTOP);
        let status = wait(&mut child, Duration::from_secs(30), "idle timeout");
        signal(&server.child, libc::SIGCONT);
        let err = stderr_of(&mut child);
        assert_eq!(status.code(), Some(6), "{status}: {err}");
        match previous {
            None => assert_eq!(names(out_dir.path()), Vec::<String>::new()),
            Some(p) => {
                assert_eq!(names(out_dir.path()), ["out.bin"]);
                assert_eq!(std::fs::read(&out).unwrap(), p);
            }
        }
    }
}

/// Success replaces an existing FILE with the whole object, leaving nothing else.
#[test]
fn success_replaces_the_file_atomically() {
    let (dir, data) = served(3 << 20);
    let server = Server::start(dir.path(), &[]);
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.bin");
    std::fs::write(&out, b"old").unwrap();
    let mut child = fetch(&server.addr, &out, &[]);
    let status = wait(&mut child, Duration::from_secs(60), "a 3 MiB fetch");
    assert!(status.success(), "{status}: {}", stderr_of(&mut child));
    assert!(std::fs::read(&out).unwrap() == data);
    assert_eq!(names(out_dir.path()), ["out.bin"]);
}

/// Issue 23 item 15: a SIGKILLed fetch cannot clean up and leaves its `.part` file; the
/// next fetch to the same FILE removes it (its process is gone), while a running fetch's
/// temporary file is never touched by another.
#[test]
fn a_killed_fetchs_partial_file_is_removed_by_the_next_fetch_of_that_file() {
    let (dir, data) = served(48 << 20);
    let server = Server::start(dir.path(), &[]);
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.bin");
    let parts = || -> Vec<String> { names(out_dir.path()).into_iter().filter(|n| n.ends_with(".part")).collect() };
    let mut killed = fetch(&server.addr, &out, &[]);
    wait_for_partial(out_dir.path(), &mut killed);
    // Hold the server still so the partial file is surely there when the fetch dies.
    signal(&server.child, libc::SIGSTOP);
    signal(&killed, libc::SIGKILL);
    wait(&mut killed, Duration::from_secs(5), "SIGKILL");
    let stale = parts();
    assert_eq!(stale.len(), 1, "the killed fetch left its partial file: {stale:?}");
    assert!(stale[0].starts_with(".out.bin.rdtp-"), "{stale:?}");
    // The next fetch of the same file removes it as it opens its own (the server is still
    // stopped: this fetch waits, its own temporary file in place).
    let mut running = fetch(&server.addr, &out, &["--timeout", "30"]);
    let t0 = Instant::now();
    let mine = loop {
        let now = parts();
        if now.len() == 1 && now != stale {
            break now[0].clone();
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "no new temporary file, or the stale one stays: {now:?}");
        std::thread::sleep(Duration::from_millis(5));
    };
    // A third fetch of the same file while that one runs (stopped) leaves its file alone.
    signal(&running, libc::SIGSTOP);
    signal(&server.child, libc::SIGCONT);
    let o = fetch(&server.addr, &out, &[]).wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read(&out).unwrap() == data);
    assert_eq!(parts(), [mine], "a running fetch's file was removed, or another was left");
    signal(&running, libc::SIGCONT);
    signal(&running, libc::SIGTERM);
    wait(&mut running, Duration::from_secs(10), "SIGTERM");
    assert_eq!(names(out_dir.path()), ["out.bin"]);
}
