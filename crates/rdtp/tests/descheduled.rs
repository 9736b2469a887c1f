//! A fetch whose process is not scheduled for longer than its idle timeout while its
//! answers arrive (a loaded machine: 1000 fetches on two cores, docs/BENCHMARKS.md) must not
//! take the answers waiting in its socket for silence: the driver reads them before it
//! handles its deadlines. Here `rdtp fetch --timeout 1` is stopped (SIGSTOP) for 2.5 s twice
//! in the middle of a large transfer, then continued; it must finish. (Before the driver
//! read first, such a fetch failed with "no answer from the server for 1s" in 2 of 3 tries.)

use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

mod common;
use common::{RDTP, Server};

#[test]
fn a_fetch_stopped_past_its_idle_timeout_reads_what_came_and_finishes() {
    // A generated 2 GB object: long enough on loopback to be stopped twice mid-transfer.
    let server = Server::spawn_args(&["serve", "--listen", "127.0.0.1:0", "--workers", "1", "--pattern", "2GB"]);
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
