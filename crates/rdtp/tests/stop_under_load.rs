//! `rdtp serve` and `rdtp route` stop promptly on SIGTERM and SIGINT while busy (issue 11:
//! "SIGTERM is ignored while the server is busy"). A loop that never finds its socket empty
//! never waits, and the stop signals, blocked outside the wait, stayed pending for as long
//! as the load lasted.
//!
//! The load: a flood of valid requests (with the address token the node gave, a MiB each)
//! from one socket as fast as it can send, plus `rdtp fetch` processes in a loop. The bound
//! on the exit is generous (the machine may be shared); before the fix the nodes did not
//! exit at all while the flood lasted.

use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rdtp_proto::Eid;
use rdtp_proto::wire::ByteRange;

mod common;
use common::{RDTP, Server, raw};

const SIZE: usize = 16 << 20;
const UNIT: u16 = 1402;
/// Units per flood request: 740 × 1402 B ≈ 1 MiB, the most a node answers one request with.
const UNITS: u32 = 740;
/// How long the node has to exit once signalled (it took well under a second when idle).
const EXIT_BOUND: Duration = Duration::from_secs(5);

struct Load {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    threads: Vec<JoinHandle<()>>,
}

impl Load {
    /// A request flood and `fetches` looping `rdtp fetch` processes against `addr`.
    fn start(addr: &str, name: &str, eid: Eid, fetches: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let mut threads = vec![flood(addr, eid, stop.clone(), sent.clone())];
        for _ in 0..fetches {
            let (addr, name, stop) = (addr.to_string(), name.to_string(), stop.clone());
            threads.push(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let status = Command::new(RDTP)
                        .args(["fetch", &addr, &name, "-o", "/dev/null", "-q", "--timeout", "2"])
                        .stdin(Stdio::null())
                        .stderr(Stdio::null())
                        .status();
                    if !status.is_ok_and(|s| s.success()) {
                        break; // the node is gone
                    }
                }
            }));
        }
        Load { stop, sent, threads }
    }

    /// Wait until the flood has sent `n` requests (the node is busy by then).
    fn wait_for(&self, n: u64) {
        let t0 = Instant::now();
        while self.sent.load(Ordering::Relaxed) < n {
            assert!(t0.elapsed() < Duration::from_secs(30), "the flood does not get going");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Send requests for ~1 MiB at random offsets of `eid` to `to` until `stop`, with the
/// address token the node hands out (so each is answered in full).
fn flood(to: &str, eid: Eid, stop: Arc<AtomicBool>, sent: Arc<AtomicU64>) -> JoinHandle<()> {
    let to: std::net::SocketAddr = to.parse().unwrap();
    std::thread::spawn(move || {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let request = |tag: u32, offset: u64, token: Option<&[u8]>| {
            raw::request(eid, tag, ByteRange::new(offset, UNITS * u32::from(UNIT)), UNIT, token)
        };
        // The token: ask without one until a Retry brings it.
        let Some(token) = raw::fetch_token(&sock, to, &request(1, 0, None), || stop.load(Ordering::Relaxed)) else {
            assert!(stop.load(Ordering::Relaxed), "no address token from {to} in 5 s");
            return;
        };
        // Whatever comes back is left to overflow the socket's buffer.
        let mut x = 0x2545_f491u32;
        for tag in 2u32.. {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let offset = u64::from(x) % (SIZE as u64 / u64::from(UNIT)) * u64::from(UNIT);
            if sock.send_to(&request(tag, offset, Some(&token)), to).is_ok() {
                sent.fetch_add(1, Ordering::Relaxed);
            }
        }
    })
}

/// A temp directory with one random file of `SIZE` bytes: `(dir, name, eid)`.
fn fixture() -> (tempfile::TempDir, &'static str, Eid) {
    let dir = tempfile::tempdir().unwrap();
    let mut data = vec![0u8; SIZE];
    rand::fill(&mut data[..]);
    std::fs::write(dir.path().join("big.bin"), &data).unwrap();
    (dir, "big.bin", Eid::of(&data))
}

/// Send `signal` to `node` and wait (at most [`EXIT_BOUND`]) for it to exit 0.
fn signal_and_wait(node: &mut Server, signal: libc::c_int, what: &str, load: &Load) {
    let sent = load.sent.load(Ordering::Relaxed);
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(node.child.id() as libc::pid_t, signal);
    }
    let t0 = Instant::now();
    loop {
        if let Some(status) = node.child.try_wait().unwrap() {
            eprintln!("{what} exited {:?} after the signal ({sent} flood requests by then)", t0.elapsed());
            assert_eq!(status.code(), Some(0), "{what} did not exit cleanly: {status}");
            return;
        }
        assert!(
            t0.elapsed() < EXIT_BOUND,
            "{what} still running {:?} after the signal, under a flood ({sent} requests sent before it) and \
             looping fetches: a busy loop must still see its stop signals",
            t0.elapsed()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serve_stops_promptly_on_sigterm_under_load() {
    let (dir, name, eid) = fixture();
    let mut server = Server::start(dir.path(), &[]);
    let load = Load::start(&server.addr, name, eid, 3);
    load.wait_for(20_000);
    signal_and_wait(&mut server, libc::SIGTERM, "rdtp serve", &load);
    load.stop();
}

#[test]
fn route_stops_promptly_on_sigint_under_load() {
    let (dir, name, eid) = fixture();
    let server = Server::start(dir.path(), &[]);
    let mut router = Server::route(&["--upstream", &server.addr]);
    let load = Load::start(&router.addr, name, eid, 3);
    load.wait_for(20_000);
    signal_and_wait(&mut router, libc::SIGINT, "rdtp route", &load);
    load.stop();
}
