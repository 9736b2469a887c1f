//! What sharing one content store between a runtime's router cores costs on the hit path
//! (issue 23, item 1): every unit looked up takes the store's lock.
//!
//! `cargo run --release -p rdtp-proto --example shared_store_cost [THREADS] [SECONDS]`
//!
//! Each of THREADS (default 2) threads runs a router core whose store holds a 4 MiB object
//! of its own, and asks it for 64 units at a time (all hits) for SECONDS (default 3),
//! draining every Data it answers with: once with a store per core (no other core ever
//! takes its lock), once with one store shared by all (`Router::with_store`), in 7
//! alternated rounds. It prints the nanoseconds of CPU per unit served, the least of each
//! kind and their ratio. No sockets: the core's work only, so the lock is as large a share
//! of it as it can be.

use std::net::SocketAddr;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use rdtp_proto::router::fib::Fib;
use rdtp_proto::router::{MAX_DATAGRAM, Router, RouterConfig};
use rdtp_proto::token::ValidationConfig;
use rdtp_proto::wire::{ByteRange, DEFAULT_HOP_LIMIT, DEFAULT_UNIT, Options, Request, RequestFlags};
use rdtp_proto::{Eid, Time};

const SIZE: usize = 4 << 20;
const UNITS: u32 = 64;

fn object(seed: u64) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ seed;
    (0..SIZE)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn config() -> RouterConfig {
    RouterConfig {
        fib: Fib::new(Some("10.0.0.9:7447".parse().unwrap())),
        validation: ValidationConfig { enabled: false, ..ValidationConfig::default() },
        ..RouterConfig::default()
    }
}

/// Serve `object` from `core` for `secs`: units served and CPU seconds of this thread.
fn serve(mut core: Router, object: &[u8], secs: f64, start: &Barrier) -> (u64, f64) {
    let eid = Eid::of(object);
    let units = (object.len() as u64).div_ceil(u64::from(DEFAULT_UNIT));
    assert_eq!(core.preload(eid, object, DEFAULT_UNIT, 0..units), Some(units));
    let from: SocketAddr = "10.0.0.1:5000".parse().unwrap();
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut req = vec![0u8; 256];
    start.wait();
    let (t0, cpu0) = (Instant::now(), cpu_now());
    let (mut served, mut k) = (0u64, 0u64);
    while t0.elapsed() < Duration::from_secs_f64(secs) {
        let first = k * u64::from(UNITS) % (units - u64::from(UNITS));
        let r = Request {
            flags: RequestFlags(0),
            hop_limit: DEFAULT_HOP_LIMIT,
            unit: DEFAULT_UNIT,
            tag: k as u32 + 1,
            nonce: k,
            eid,
            range: ByteRange::new(first * u64::from(DEFAULT_UNIT), UNITS * u32::from(DEFAULT_UNIT)),
            options: Options::EMPTY,
        };
        let n = r.encode(&mut req).unwrap();
        core.handle_datagram(Time::ZERO, from, &req[..n]);
        while core.poll_transmit(Time::ZERO, &mut buf).is_some() {
            served += 1;
        }
        k += 1;
    }
    assert_eq!(core.stats().cs_misses, 0);
    (served, cpu_now() - cpu0)
}

/// This thread's CPU seconds.
fn cpu_now() -> f64 {
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe {
        clock_gettime(3 /* CLOCK_THREAD_CPUTIME_ID */, &mut ts)
    };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

unsafe extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

fn run(threads: usize, secs: f64, shared: bool) -> f64 {
    let objects: Vec<Arc<Vec<u8>>> = (0..threads).map(|i| Arc::new(object(i as u64))).collect();
    let first = Router::new(config());
    let store = first.store();
    let mut cores = vec![first];
    for _ in 1..threads {
        cores.push(if shared { Router::with_store(config(), store.clone()) } else { Router::new(config()) });
    }
    let start = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = cores
        .into_iter()
        .zip(objects)
        .map(|(core, obj)| {
            let start = start.clone();
            std::thread::spawn(move || serve(core, &obj, secs, &start))
        })
        .collect();
    let (mut units, mut cpu) = (0u64, 0.0);
    for h in handles {
        let (u, c) = h.join().unwrap();
        units += u;
        cpu += c;
    }
    cpu / units as f64 * 1e9
}

fn main() {
    let mut args = std::env::args().skip(1);
    let threads: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let secs: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(3.0);
    // Alternated rounds; the least of each (the machine may be shared: interference only
    // ever adds CPU time).
    let (mut own, mut shared) = (f64::MAX, f64::MAX);
    for round in 1..=7 {
        let (o, s) = (run(threads, secs, false), run(threads, secs, true));
        println!("round {round}: a store each {o:.0} ns of CPU per unit served, one shared store {s:.0} ns");
        (own, shared) = (own.min(o), shared.min(s));
    }
    println!(
        "{threads} threads, least of 7 rounds: a store each {own:.0} ns per unit, one shared store {shared:.0} ns \
         ({:.3}×)",
        shared / own
    );
}
