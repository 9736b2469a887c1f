//! Heap allocations a router core makes per forwarded unit in steady state (issue 29,
//! item 3): none for a router that forwards without caching; for one that caches, the
//! store's own copy of each unit (verified, then held: a `Box<[u8]>` per unit, which is the
//! store's memory, not a per-datagram cost) and about two per 16 KiB block (12 units), for
//! its proof (the tree nodes learned, the proof's siblings, the attempt's record), however
//! long the fetch. Before issue 29: 4.26 and 6.02 per unit. A counting global allocator counts the allocations made on this test's
//! thread while it is inside a router call (`handle_datagram`, `poll_transmit`,
//! `handle_timeout`); the server core, which answers the router's requests and proof
//! requests, is not counted.
//!
//! The fetch: one receiver asking for an object in order, 16 units of 1402 bytes per
//! request (with a valid address token), the server core answering at once. The first
//! requests fill the router's pools and grow its tables; the counted ones follow.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::net::SocketAddr;
use std::time::Duration;

use rdtp_proto::router::fib::Fib;
use rdtp_proto::router::{MAX_DATAGRAM, Router, RouterConfig};
use rdtp_proto::server::{Catalog, PatternCatalog, Server, ServerConfig};
use rdtp_proto::token::ValidationConfig;
use rdtp_proto::wire::tlv::write_address_token;
use rdtp_proto::wire::{ByteRange, DEFAULT_HOP_LIMIT, Options, Packet, Request, RequestFlags};
use rdtp_proto::{Eid, Time};

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

fn note() {
    // `try_with`: the allocator may run while the thread's locals are torn down.
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every call is passed to the system allocator unchanged; counting touches only
// `const`-initialised thread locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations `f` makes on this thread.
fn counted(f: impl FnOnce()) -> u64 {
    let before = COUNT.with(Cell::get);
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    COUNT.with(Cell::get) - before
}

const UPSTREAM: &str = "10.0.0.9:7447";
const RECEIVER: &str = "10.0.1.2:5000";
const UNIT: u16 = 1402;
const UNITS_PER_REQUEST: u32 = 16;
/// Virtual time between two requests: the router's upstream requests (remembered for its
/// pending lifetime, 4 s) expire during the warm-up.
const STEP: Duration = Duration::from_millis(1);
/// Large enough that the counted requests never reach its end.
const SIZE: u64 = 256 << 20;

struct Fetch {
    router: Router,
    server: Server,
    catalog: PatternCatalog,
    eid: Eid,
    token: Vec<u8>,
    out: Vec<u8>,
    to_server: Vec<Vec<u8>>,
    to_router: Vec<Vec<u8>>,
    now: Time,
    next_unit: u64,
    seq: u64,
    /// Allocations inside router calls, and Data the router sent the receiver.
    allocations: u64,
    delivered: u64,
}

impl Fetch {
    fn new(cs_units: usize) -> Fetch {
        let validation = ValidationConfig { secret: [3; 32], ..ValidationConfig::default() };
        let mut config = RouterConfig {
            fib: Fib::new(Some(UPSTREAM.parse().unwrap())),
            validation: validation.clone(),
            ..RouterConfig::default()
        };
        config.cs.capacity_units = cs_units;
        let server = Server::new(ServerConfig {
            validation: ValidationConfig { enabled: false, ..validation },
            ..Default::default()
        });
        let catalog = PatternCatalog::new([("obj".to_string(), SIZE, 7)]);
        let eid = catalog.resolve("obj").unwrap().0;
        let mut f = Fetch {
            router: Router::new(config),
            server,
            catalog,
            eid,
            token: Vec::new(),
            out: vec![0u8; MAX_DATAGRAM],
            to_server: Vec::new(),
            to_router: Vec::new(),
            now: Time::ZERO,
            next_unit: 0,
            seq: 0,
            allocations: 0,
            delivered: 0,
        };
        // A first request without a token: the router answers with a Retry and its token.
        let mut b = [0u8; 256];
        let n = f.request(&mut b, None);
        f.router.handle_datagram(f.now, RECEIVER.parse().unwrap(), &b[..n]);
        let t = f.router.poll_transmit(f.now, &mut f.out).expect("a Retry");
        f.token = match Packet::decode(&f.out[..t.len]) {
            Ok(Packet::Retry(r)) => r.token.to_vec(),
            p => panic!("expected a Retry: {p:?}"),
        };
        f
    }

    fn request(&mut self, buf: &mut [u8], token: Option<&[u8]>) -> usize {
        let mut opts = [0u8; 64];
        let n = write_address_token(&mut opts, token);
        self.seq += 1;
        let r = Request {
            flags: RequestFlags(0),
            hop_limit: DEFAULT_HOP_LIMIT,
            unit: UNIT,
            tag: self.seq as u32,
            nonce: self.seq,
            eid: self.eid,
            range: ByteRange::new(self.next_unit * u64::from(UNIT), UNITS_PER_REQUEST * u32::from(UNIT)),
            options: Options::parse(&opts[..n]).expect("options"),
        };
        r.encode(buf).expect("encode")
    }

    /// One request of the receiver, and everything it causes until the router is idle.
    fn step(&mut self) {
        let receiver: SocketAddr = RECEIVER.parse().unwrap();
        let mut b = [0u8; 256];
        let token = self.token.clone();
        let n = self.request(&mut b, Some(&token));
        self.next_unit += u64::from(UNITS_PER_REQUEST);
        let (router, now) = (&mut self.router, self.now);
        self.allocations += counted(|| router.handle_datagram(now, receiver, &b[..n]));
        self.pump();
        self.now += STEP;
        let (router, now) = (&mut self.router, self.now);
        if router.poll_timeout().is_some_and(|t| t <= now) {
            self.allocations += counted(|| router.handle_timeout(now));
        }
        self.pump();
    }

    /// Until the router is idle: what it sends upstream goes to the server core, whose
    /// answers come back to it; Data to the receiver is counted.
    fn pump(&mut self) {
        let (up, receiver): (SocketAddr, SocketAddr) = (UPSTREAM.parse().unwrap(), RECEIVER.parse().unwrap());
        let me: SocketAddr = "10.0.0.2:7448".parse().unwrap();
        let now = self.now;
        loop {
            self.to_server.clear();
            loop {
                let (router, out) = (&mut self.router, &mut self.out);
                let mut got = None;
                self.allocations += counted(|| got = router.poll_transmit(now, out));
                let Some(t) = got else { break };
                if t.to == up {
                    self.to_server.push(self.out[..t.len].to_vec());
                } else {
                    assert_eq!(t.to, receiver);
                    self.delivered += u64::from(matches!(Packet::decode(&self.out[..t.len]), Ok(Packet::Data(_))));
                }
            }
            if self.to_server.is_empty() {
                return;
            }
            self.to_router.clear();
            for d in &self.to_server {
                let mut reply = self.server.handle(now, me, &self.catalog, d);
                let mut b = vec![0u8; 65_536];
                while let Some(n) = reply.next_datagram(&mut b) {
                    self.to_router.push(b[..n].to_vec());
                }
            }
            for d in std::mem::take(&mut self.to_router) {
                let router = &mut self.router;
                self.allocations += counted(|| router.handle_datagram(now, up, &d));
            }
        }
    }

    /// Allocations per unit delivered over `requests` requests after `warm_up` others.
    fn per_unit(&mut self, warm_up: usize, requests: usize) -> f64 {
        for _ in 0..warm_up {
            self.step();
        }
        let (a0, d0) = (self.allocations, self.delivered);
        for _ in 0..requests {
            self.step();
        }
        let (a, d) = (self.allocations - a0, self.delivered - d0);
        assert_eq!(d, requests as u64 * u64::from(UNITS_PER_REQUEST), "every unit delivered");
        a as f64 / d as f64
    }
}

#[test]
fn a_router_that_does_not_cache_allocates_nothing_per_forwarded_unit() {
    let mut f = Fetch::new(0);
    let per_unit = f.per_unit(5000, 2000);
    println!("store off: {per_unit:.3} allocations per forwarded unit");
    assert_eq!(f.router.stats().forwarded_units, 7000 * u64::from(UNITS_PER_REQUEST));
    assert_eq!(per_unit, 0.0);
}

#[test]
fn a_caching_router_allocates_the_stores_copy_and_a_little_per_block_per_forwarded_unit() {
    // A store smaller than the fetch: full after the warm-up, so every unit cached later
    // evicts one (the store's memory stays the same; its own tables stop growing).
    let mut f = Fetch::new(20_000);
    let per_unit = f.per_unit(5000, 2000);
    println!("caching: {per_unit:.3} allocations per forwarded unit");
    assert!(f.router.stats().blocks_verified > 0);
    assert!(per_unit < 1.2, "{per_unit} allocations per unit");
}
