//! `rdtp route` end to end over 127.0.0.1: receiver → r1 → (5 % loss each way) → r2 →
//! server. The fetch is byte-exact, a second fetch is served entirely from r1's store (the
//! summary's "Served by" line says so), and r1 reports its counters on SIGUSR1, at exit and
//! as JSON.

use std::net::{SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rand::RngExt;

mod common;
use common::{RDTP, Server, fetch_to as fetch, served_by};

/// A UDP relay that drops each datagram with probability `loss`, both ways, as a NAT
/// would relay: each source that sends to its front gets its own socket toward `target`,
/// and what comes back there goes to that source (a router with several workers sends
/// from one upstream socket each).
struct LossyRelay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Arc<Mutex<Vec<JoinHandle<u64>>>>,
}

impl LossyRelay {
    fn start(target: SocketAddr, loss: f64) -> LossyRelay {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        front.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let addr = front.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Arc<Mutex<Vec<JoinHandle<u64>>>> = Arc::default();
        let (stop2, threads2) = (stop.clone(), threads.clone());
        let upward = std::thread::spawn(move || {
            let mut rng = rand::rng();
            let mut buf = vec![0u8; 65536];
            let mut backs: std::collections::HashMap<SocketAddr, UdpSocket> = Default::default();
            let mut dropped = 0;
            while !stop2.load(Ordering::Relaxed) {
                let Ok((n, src)) = front.recv_from(&mut buf) else { continue };
                if rng.random::<f64>() < loss {
                    dropped += 1;
                    continue;
                }
                let back = backs.entry(src).or_insert_with(|| {
                    let back = UdpSocket::bind("127.0.0.1:0").unwrap();
                    back.connect(target).unwrap();
                    back.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
                    let (from, to, stop) = (back.try_clone().unwrap(), front.try_clone().unwrap(), stop2.clone());
                    threads2.lock().unwrap().push(std::thread::spawn(move || {
                        let mut rng = rand::rng();
                        let mut buf = vec![0u8; 65536];
                        let mut dropped = 0;
                        while !stop.load(Ordering::Relaxed) {
                            let Ok(n) = from.recv(&mut buf) else { continue };
                            if rng.random::<f64>() < loss {
                                dropped += 1;
                            } else {
                                let _ = to.send_to(&buf[..n], src);
                            }
                        }
                        dropped
                    }));
                    back
                });
                let _ = back.send(&buf[..n]);
            }
            dropped
        });
        threads.lock().unwrap().push(upward);
        LossyRelay { addr, stop, threads }
    }

    /// Stop and return how many datagrams were dropped.
    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let threads = std::mem::take(&mut *self.threads.lock().unwrap());
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    }
}

#[test]
fn fetch_through_two_routers_under_loss_then_from_the_first_routers_store() {
    let dir = tempfile::tempdir().unwrap();
    let mut content = vec![0u8; 6 << 20];
    rand::fill(&mut content[..]);
    std::fs::write(dir.path().join("obj.bin"), &content).unwrap();
    let server = Server::start(dir.path(), &[]);
    let r2 = Server::route(&["--upstream", &server.addr, "--id", "r2"]);
    let relay = LossyRelay::start(r2.addr.parse().unwrap(), 0.05);
    let relay_addr = relay.addr.to_string();
    let json = dir.path().join("r1.json");
    // Liveness (a hop silent for 2 s is presumed dead) is dead_upstream.rs's subject; here a
    // longer timeout keeps it out of a test of loss repair and the store: on a loaded CI
    // machine the in-process lossy relay once stayed silent long enough for the 2 s rule
    // (2026-11-27; not reproduced in 6 idle runs).
    let r1 = Server::route(&[
        "--upstream",
        &relay_addr,
        "--id",
        "r1",
        "--stats-json",
        json.to_str().unwrap(),
        "--router",
        "upstream_timeout=10s",
    ]);

    let out = dir.path().join("out1");
    let (code, summary) = fetch(&r1.addr, "obj.bin", &out);
    assert_eq!(code, 0, "{summary}");
    assert!(std::fs::read(&out).unwrap() == content, "first fetch not byte-exact");
    // From the origin, with the losses between r1 and r2 repaired from the origin or r2.
    let first = served_by(&summary);
    assert!(first.starts_with("origin "), "{summary}");
    assert!(first.split(", ").all(|s| s.starts_with("origin ") || s.starts_with("router r2 ")), "{summary}");
    assert!(!summary.contains("Retransmitted segments: 0 "), "5 % loss each way, yet nothing re-requested:\n{summary}");

    // r1 caches a block once its proof is back (verify before caching): give the proofs of
    // the last blocks, or their re-requests after a loss, time to arrive.
    std::thread::sleep(Duration::from_millis(300));
    let out2 = dir.path().join("out2");
    let (code, summary) = fetch(&r1.addr, "obj.bin", &out2);
    assert_eq!(code, 0, "{summary}");
    assert!(std::fs::read(&out2).unwrap() == content, "second fetch not byte-exact");
    assert_eq!(served_by(&summary), "router r1 (1 hop away) 100.0 %", "{summary}");
    let dropped = relay.stop();
    assert!(dropped > 0);

    // SIGUSR1: a report, and the JSON file; SIGTERM: exit 0 with the final report.
    let mut r1 = r1;
    let pid = r1.child.id() as libc::pid_t;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(pid, libc::SIGUSR1) };
    let t0 = Instant::now();
    while !json.exists() {
        assert!(t0.elapsed() < Duration::from_secs(5), "no JSON report after SIGUSR1");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let status = r1.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let units = (content.len() as u64).div_ceil(1402);
    let t = &v["totals"]["router"];
    assert!(t["cs_hits"].as_u64().unwrap() >= units, "{t}");
    assert!(t["forwarded_units"].as_u64().unwrap() >= units, "{t}");
    assert_eq!(v["totals"]["cs_entries"].as_u64().unwrap(), units);
    assert!(v["per_second"]["router"]["cs_hits"].as_f64().unwrap() > 0.0);
}

/// `rdtp demo --router`: two fetches through an in-process router, the first from the
/// origin, the second from the router's store; `--json` prints one summary per fetch.
#[test]
fn demo_through_a_router_shows_the_second_fetch_from_its_store() {
    let o = Command::new(RDTP)
        .args(["demo", "--router", "--size", "2MiB", "--json"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|v| v["completed"] == true && v["bytes_received"] == 2 << 20));
    assert_eq!(lines[0]["served_by"], "origin 100.0 %");
    assert_eq!(lines[1]["served_by"], "router demo 100.0 %");
    assert_eq!(lines[1]["sources"][0]["kind"], "router");
}
