//! What a router core spends per request, without sockets (issue 23, item 4): a flood of
//! requests for 256 units of 64 B of made-up EIDs (each answered by the upstream server
//! core with one Nack), and an honest fetch's requests (16 units of 1402 B each, answered
//! with Data that the router forwards), alone and interleaved 1:1 with the flood.
//!
//! `cargo run --release -p rdtp-proto --example router_cost`
//!
//! Prints nanoseconds of router work (the server core's time is not counted) per request
//! and per unit asked for, and what the router sent the flooder. The router runs with
//! address validation on (both sources hold a token), as `rdtp route` does by default.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use rdtp_proto::router::fib::Fib;
use rdtp_proto::router::{MAX_DATAGRAM, Router, RouterConfig};
use rdtp_proto::server::{Catalog, PatternCatalog, Server, ServerConfig};
use rdtp_proto::token::ValidationConfig;
use rdtp_proto::wire::tlv::write_address_token;
use rdtp_proto::wire::{ByteRange, DEFAULT_HOP_LIMIT, Options, Packet, Request, RequestFlags};
use rdtp_proto::{Eid, Time};

const UPSTREAM: &str = "10.0.0.9:7447";
const FLOODER: &str = "10.0.1.1:5000";
const HONEST: &str = "10.0.1.2:5000";
/// The honest fetch's object (its requests wrap around).
const SIZE: u64 = 64 << 20;

fn request(buf: &mut [u8], eid: Eid, unit: u16, first: u64, units: u32, seq: u64, token: Option<&[u8]>) -> usize {
    let mut opts = [0u8; 64];
    let n = write_address_token(&mut opts, token);
    let r = Request {
        flags: RequestFlags(0),
        hop_limit: DEFAULT_HOP_LIMIT,
        unit,
        tag: seq as u32 | 1,
        nonce: seq,
        eid,
        range: ByteRange::new(first * u64::from(unit), units * u32::from(unit)),
        options: Options::parse(&opts[..n]).expect("options"),
    };
    r.encode(buf).expect("encode")
}

struct Bench {
    router: Router,
    server: Server,
    catalog: PatternCatalog,
    out: Vec<u8>,
    answers: Vec<Vec<u8>>,
    /// Router time, and datagrams the router sent to the flooder (by kind).
    spent: Duration,
    to_flooder: [u64; 2],
}

impl Bench {
    fn new() -> Self {
        let validation = ValidationConfig { secret: [3; 32], ..ValidationConfig::default() };
        let config = RouterConfig {
            fib: Fib::new(Some(UPSTREAM.parse().unwrap())),
            validation: validation.clone(),
            ..RouterConfig::default()
        };
        let server = Server::new(ServerConfig {
            validation: ValidationConfig { enabled: false, ..validation },
            ..Default::default()
        });
        let catalog = PatternCatalog::new([("obj".to_string(), SIZE, 7)]);
        Bench {
            router: Router::new(config),
            server,
            catalog,
            out: vec![0u8; MAX_DATAGRAM],
            answers: Vec::new(),
            spent: Duration::ZERO,
            to_flooder: [0; 2],
        }
    }

    fn token(&mut self, from: SocketAddr) -> Vec<u8> {
        let mut b = [0u8; 256];
        let n = request(&mut b, Eid::default(), 64, 0, 1, 0, None);
        self.router.handle_datagram(Time::ZERO, from, &b[..n]);
        let t = self.router.poll_transmit(Time::ZERO, &mut self.out).expect("a Retry");
        match Packet::decode(&self.out[..t.len]) {
            Ok(Packet::Retry(r)) => r.token.to_vec(),
            p => panic!("expected a Retry: {p:?}"),
        }
    }

    /// The router handles `d` from `from` at `now`; its upstream requests go to the server
    /// core, whose answers go back to the router. Only router time is counted.
    fn exchange(&mut self, now: Time, from: SocketAddr, d: &[u8]) {
        let up: SocketAddr = UPSTREAM.parse().unwrap();
        let t0 = Instant::now();
        self.router.handle_datagram(now, from, d);
        let mut upstream = Vec::new();
        while let Some(t) = self.router.poll_transmit(now, &mut self.out) {
            if t.to == up {
                upstream.push(self.out[..t.len].to_vec());
            } else if t.to == FLOODER.parse().unwrap() {
                self.to_flooder[usize::from(self.out[3] != 3)] += 1;
            }
        }
        self.spent += t0.elapsed();
        self.answers.clear();
        let me: SocketAddr = "10.0.0.2:7448".parse().unwrap();
        for u in &upstream {
            let mut reply = self.server.handle(now, me, &self.catalog, u);
            let mut b = vec![0u8; 65_536];
            while let Some(n) = reply.next_datagram(&mut b) {
                self.answers.push(b[..n].to_vec());
            }
        }
        let t0 = Instant::now();
        for a in std::mem::take(&mut self.answers) {
            self.router.handle_datagram(now, up, &a);
        }
        while let Some(t) = self.router.poll_transmit(now, &mut self.out) {
            if t.to == FLOODER.parse().unwrap() {
                self.to_flooder[usize::from(self.out[3] != 3)] += 1;
            }
        }
        if self.router.poll_timeout().is_some_and(|t| t <= now) {
            self.router.handle_timeout(now);
        }
        self.spent += t0.elapsed();
    }
}

fn main() {
    let (flooder, honest): (SocketAddr, SocketAddr) = (FLOODER.parse().unwrap(), HONEST.parse().unwrap());
    let obj = PatternCatalog::new([("obj".to_string(), SIZE, 7)]).resolve("obj").unwrap().0;
    println!("| load | requests | units | ns per request | ns per unit | flooder got Nack / other |");
    println!("|---|---:|---:|---:|---:|---|");
    let only = std::env::args().nth(1);
    for (label, flood, fetch) in [("flood alone", true, false), ("fetch alone", false, true), ("both, 1:1", true, true)]
    {
        if only.as_deref().is_some_and(|o| !label.starts_with(o)) {
            continue;
        }
        let mut b = Bench::new();
        let (tf, th) = (b.token(flooder), b.token(honest));
        let mut buf = [0u8; 256];
        let (mut requests, mut units) = (0u64, 0u64);
        let n_requests = 40_000u64;
        for i in 0..n_requests {
            // 8000 flood requests per second of virtual time.
            let now = Time::ZERO + Duration::from_micros(i * 125);
            if flood {
                let mut eid = obj;
                eid.0[4..12].copy_from_slice(&(i + 1).to_be_bytes());
                let n = request(&mut buf, eid, 64, 0, 256, i + 1, Some(&tf));
                b.exchange(now, flooder, &buf[..n]);
                requests += 1;
                units += 256;
            }
            if fetch {
                let n = request(&mut buf, obj, 1402, i * 16 % (SIZE / 1402 - 16), 16, i + 1, Some(&th));
                b.exchange(now, honest, &buf[..n]);
                requests += 1;
                units += 16;
            }
        }
        let ns = b.spent.as_nanos() as f64;
        println!(
            "| {label} | {requests} | {units} | {:.0} | {:.1} | {} / {} |",
            ns / requests as f64,
            ns / units as f64,
            b.to_flooder[0],
            b.to_flooder[1]
        );
    }
}
