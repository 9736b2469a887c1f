//! A fetch whose process is not scheduled for longer than its idle timeout (a loaded
//! machine: 1000 fetches on two cores, docs/BENCHMARKS.md) must not take that pause for the
//! server's silence. Two cases, each `rdtp fetch --timeout 1` stopped (SIGSTOP) for 2.5 s
//! twice in the middle of a transfer, then continued; it must finish:
//!
//! - answers arrive while it is stopped: the driver reads them before it handles its
//!   deadlines (before it did, such a fetch failed with "no answer from the server for 1s"
//!   in 2 of 3 tries);
//! - it was holding back after Busy, nothing of its own out (a server over its send
//!   budget): the receiver does not count the time it was not run as silence
//!   (`rdtp-proto` `receiver` module docs, "The idle timeout"). Before, such a fetch failed
//!   on waking, before it asked again, in 3 of 3 tries (7504e92's `rdtp`; 3 of 3 finish now).

use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

mod common;
use common::{RDTP, Server};

/// `rdtp fetch SERVER pattern --timeout 1`, stopped for 2.5 s at 250 ms and 700 ms after the
/// first stop ended (unless it finished before): it must succeed.
fn stop_twice_and_finish(server: &Server) {
    let mut fetch = Command::new(RDTP)
        .args(["fetch", &server.addr, "pattern", "--timeout", "1", "-q", "-o", "/dev/null"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = Pid::from_raw(fetch.id() as i32);
    for at in [250, 700] {
        std::thread::sleep(Duration::from_millis(at));
        if fetch.try_wait().unwrap().is_some() {
            break; // finished already (a very fast machine): nothing left to stop
        }
        kill(pid, Signal::SIGSTOP).unwrap();
        std::thread::sleep(Duration::from_millis(2500));
        kill(pid, Signal::SIGCONT).unwrap();
    }
    let done = fetch.wait_with_output().unwrap();
    assert!(done.status.success(), "the fetch gave up after being stopped: {}", String::from_utf8_lossy(&done.stderr));
}

#[test]
fn a_fetch_stopped_past_its_idle_timeout_reads_what_came_and_finishes() {
    // A generated 2 GB object: long enough on loopback to be stopped twice mid-transfer.
    let server = Server::spawn_args(&["serve", "--listen", "127.0.0.1:0", "--workers", "1", "--pattern", "2GB"]);
    stop_twice_and_finish(&server);
}

#[test]
fn a_fetch_stopped_while_it_holds_back_after_busy_asks_again_and_finishes() {
    // 3 MB at a send budget of 8 Mbit/s (≈ 3 s): most of the time the receiver waits out a
    // Busy hold with nothing out (120 Busy for 162 requests in a run without stops).
    let server = Server::spawn_args(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--workers",
        "1",
        "--max-rate",
        "8Mbps",
        "--pattern",
        "3MB",
    ]);
    stop_twice_and_finish(&server);
}
