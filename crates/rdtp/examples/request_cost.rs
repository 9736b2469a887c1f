//! What one request costs the server's core and its directory catalogue, without sockets
//! (issue 12, target 3: seed 000 Table 1's 100 slow receivers each ask for one unit at a
//! time, at scattered offsets of the object).
//!
//! `cargo run --release -p rdtp --example request_cost [MiB]` writes a file of MiB (default
//! 256) random bytes, serves it from a `DirCatalog` view as `rdtp serve` does, and times
//! `Server::handle` plus writing every reply datagram, with a valid address token, for:
//! one-unit requests at random offsets (slow receivers scattered over the object), from
//! 100 receivers that started together (each a unit at a time in turn, spread over the
//! first 2 MiB: seed 000 Table 1's shape), one-unit requests in sequence (one slow
//! receiver), and 64-unit requests in sequence (one fast receiver).

use std::net::SocketAddr;
use std::time::Instant;

use rdtp::server::{Parallel, Served};
use rdtp::{DirCatalog, DirOptions};
use rdtp_proto::server::{Catalog, Server, ServerConfig};
use rdtp_proto::time::Time;
use rdtp_proto::wire::{ByteRange, Options, Packet, Request, RequestFlags};

const UNIT: u16 = 1402;

fn main() {
    let mib: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(256);
    let dir = tempfile::tempdir().expect("temporary directory");
    let size = mib << 20;
    let mut data = vec![0u8; size as usize];
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for b in data.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    std::fs::write(dir.path().join("obj"), &data).expect("write");
    drop(data);
    let catalog = DirCatalog::open(dir.path(), DirOptions::default()).expect("index");
    let view = catalog.worker();
    let (eid, _) = view.catalog().resolve("obj").expect("indexed");
    let mut config = ServerConfig::default();
    config.validation.secret = [7; 32];
    let mut server = Server::new(config);
    let from: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    let units = size / u64::from(UNIT);

    // A token, as a receiver gets it from its first Retry.
    let mut req = [0u8; 256];
    let mut out = vec![0u8; 65_536];
    let token = {
        let n = request(&mut req, eid, 0, 1, None);
        let mut reply = server.handle(Time::ZERO, from, view.catalog(), &req[..n]);
        let m = reply.next_datagram(&mut out).expect("a Retry");
        match Packet::decode(&out[..m]) {
            Ok(Packet::Retry(r)) => r.token.to_vec(),
            other => panic!("expected a Retry, got {other:?}"),
        }
    };

    println!("| requests | units each | offsets | ns per request | ns per unit | reply bytes per request |");
    println!("|---|---:|---|---:|---:|---:|");
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut together: Vec<u64> = (0..100u64).map(|i| (i * 7919) % ((2 << 20) / u64::from(UNIT))).collect();
    for (label, per, offsets) in [
        ("slow receivers", 1u32, "random"),
        ("100 slow receivers", 1, "started together"),
        ("one slow receiver", 1, "in sequence"),
        ("one fast receiver", 64, "in sequence"),
    ] {
        let n_requests = if per == 1 { 200_000u64 } else { 20_000 };
        let (mut next, mut bytes) = (0u64, 0u64);
        let t0 = Instant::now();
        for i in 0..n_requests {
            let unit = match offsets {
                "random" => {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng % (units - u64::from(per))
                }
                "started together" => {
                    let r = &mut together[(i % 100) as usize];
                    *r = (*r + 1) % (units - 1);
                    *r
                }
                _ => {
                    let u = next;
                    next = (next + u64::from(per)) % (units - u64::from(per));
                    u
                }
            };
            let n = request(&mut req, eid, unit * u64::from(UNIT), per, Some(&token));
            let mut reply = server.handle(Time::ZERO, from, view.catalog(), &req[..n]);
            while let Some(m) = reply.next_datagram(&mut out) {
                bytes += m as u64;
            }
        }
        let ns = t0.elapsed().as_nanos() as f64 / n_requests as f64;
        println!("| {label} | {per} | {offsets} | {ns:.0} | {:.0} | {} |", ns / f64::from(per), bytes / n_requests);
    }
    let s = server.stats();
    assert_eq!(s.nacks, 0, "every request answered with Data: {s:?}");
    drop(catalog);
}

fn request(buf: &mut [u8], eid: rdtp_proto::Eid, offset: u64, units: u32, token: Option<&[u8]>) -> usize {
    let mut opts = [0u8; 80];
    let n = rdtp_proto::wire::tlv::write_address_token(&mut opts, token);
    Request {
        flags: RequestFlags(0),
        hop_limit: 32,
        unit: UNIT,
        tag: 1,
        nonce: 1,
        eid,
        range: ByteRange::new(offset, units * u32::from(UNIT)),
        options: Options::parse(&opts[..n]).expect("valid options"),
    }
    .encode(buf)
    .expect("fits")
}
