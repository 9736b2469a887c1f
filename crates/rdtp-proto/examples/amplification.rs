//! Worst-case reflection amplification of the server and router cores: the bytes each
//! sends back to a request's source address, over the bytes of the request — what a spoofed
//! datagram makes a node send to a victim (RFC 9000 §8's limit is 3× toward an address not
//! yet validated).
//!
//! `cargo run --release -p rdtp-proto --example amplification`
//!
//! Each case is one crafted datagram from an address the node has never heard from; the
//! reply is drained completely (no network in between, so nothing is lost or paced).

use std::net::SocketAddr;

use rdtp_proto::router::fib::Fib;
use rdtp_proto::router::{Router, RouterConfig};
use rdtp_proto::server::{Catalog, PatternCatalog, Server};
use rdtp_proto::wire::tlv::{extra_ranges_len, write_address_token, write_extra_ranges};
use rdtp_proto::wire::{
    ByteRange, DATA_HEADER_LEN, DEFAULT_HOP_LIMIT, DEFAULT_MAX_REPLY_BYTES, ListRequest, MAX_UNIT, Options, Packet,
    Query, Request, RequestFlags, ResolveRequest,
};
use rdtp_proto::{Eid, Time};

const VICTIM: &str = "192.0.2.7:4444";
const ATTACKER: &str = "198.51.100.3:5555";
/// Another port of the victim's host (behind the same NAT, or another user of it).
const NEIGHBOUR: &str = "192.0.2.7:5555";
const UPSTREAM: &str = "10.0.0.9:7447";
const ROUTER: &str = "10.0.0.2:7448";

fn request(eid: Eid, unit: u16, units: u32, token: Option<&[u8]>) -> Vec<u8> {
    // All units in one range (the server's per-request cap decides how many it sends).
    let mut opts = [0u8; 80];
    let n = write_address_token(&mut opts, token);
    let r = Request {
        flags: RequestFlags(0),
        hop_limit: DEFAULT_HOP_LIMIT,
        unit,
        tag: 1,
        nonce: 2,
        eid,
        range: ByteRange::new(0, units * u32::from(unit)),
        options: Options::parse(&opts[..n]).unwrap(),
    };
    let mut b = vec![0u8; r.encoded_len()];
    r.encode(&mut b).unwrap();
    b
}

/// The datagrams an attacker sends with the victim's address as source; `stolen` is a
/// token the node issued to the attacker's own address, `neighbour` one it issued to
/// another port of the victim's IP address.
fn cases(eid: Eid, stolen: &[u8], neighbour: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let mut v = vec![("request, max unit, 256 units", request(eid, MAX_UNIT, 256, None))];
    v.push(("request, 1402-byte units, 256", request(eid, 1402, 256, None)));
    v.push(("request, 1402-byte units, 16, attacker's own token", request(eid, 1402, 16, Some(stolen))));
    // Issue 23: as many max units as a reply may carry, with the token of the victim's IP
    // at another port (0036bef: tokens named the IP only).
    let most = (DEFAULT_MAX_REPLY_BYTES / (u64::from(MAX_UNIT) + DATA_HEADER_LEN as u64)) as u32;
    v.push((
        "request, max unit, 16, token of the victim's IP at another port",
        request(eid, MAX_UNIT, most, Some(neighbour)),
    ));
    // Many ranges of one max unit each (the cap counts every range).
    let mut opts = vec![0u8; extra_ranges_len(255)];
    let ranges: Vec<ByteRange> =
        (1..256u64).map(|i| ByteRange::new(i * u64::from(MAX_UNIT), u32::from(MAX_UNIT))).collect();
    write_extra_ranges(&mut opts, &ranges);
    let r = Request {
        flags: RequestFlags(0),
        hop_limit: DEFAULT_HOP_LIMIT,
        unit: MAX_UNIT,
        tag: 1,
        nonce: 2,
        eid,
        range: ByteRange::new(0, u32::from(MAX_UNIT)),
        options: Options::parse(&opts).unwrap(),
    };
    let mut b = vec![0u8; r.encoded_len()];
    r.encode(&mut b).unwrap();
    v.push(("request, 256 ranges of one max unit", b));
    let mut b = vec![0u8; 64];
    let resolve =
        ResolveRequest { hop_limit: DEFAULT_HOP_LIMIT, tag: 1, query: Query::Name("o"), options: Options::EMPTY };
    let n = resolve.encode(&mut b).unwrap();
    v.push(("resolve by a 1-byte name", b[..n].to_vec()));
    let n = ListRequest { hop_limit: DEFAULT_HOP_LIMIT, tag: 1, cursor: 0, options: Options::EMPTY }
        .encode(&mut b)
        .unwrap();
    v.push(("list", b[..n].to_vec()));
    v.push(("other version (4 bytes)", b"RD\x01\x01".to_vec()));
    v.push(("truncated request (5 bytes)", vec![b'R', b'D', rdtp_proto::wire::VERSION, 1, 0]));
    // A whole request but for one byte: decoding fails late, a Malformed Nack may follow.
    let mut cut = request(eid, 1402, 1, None);
    cut.pop();
    v.push(("request missing its last byte", cut));
    v
}

fn catalog() -> PatternCatalog {
    // Large enough for 256 max units; many names so a list page is full.
    let mut objects = vec![("o".to_string(), 256 * u64::from(MAX_UNIT), 1)];
    objects.extend((0..64).map(|i| (format!("some/longer/name/number/{i:04}"), 1000, i)));
    PatternCatalog::new(objects)
}

/// The token in a Retry.
fn token_from(retry: &[u8]) -> Vec<u8> {
    match Packet::decode(retry) {
        Ok(Packet::Retry(r)) => r.token.to_vec(),
        other => panic!("expected a Retry, got {other:?}"),
    }
}

fn main() {
    let cat = catalog();
    let eid = cat.resolve("o").unwrap().0;
    let victim: SocketAddr = VICTIM.parse().unwrap();
    let attacker: SocketAddr = ATTACKER.parse().unwrap();
    let neighbour: SocketAddr = NEIGHBOUR.parse().unwrap();
    println!("| node | datagram | request bytes | reply bytes | amplification |");
    println!("|---|---|---:|---:|---:|");
    let mut worst = 0.0f64;
    let mut server = Server::default();
    let mut out = vec![0u8; 70_000];
    let probe = request(eid, 1402, 1, None);
    let n = server.handle(Time::ZERO, attacker, &cat, &probe).next_datagram(&mut out).unwrap();
    let stolen = token_from(&out[..n]);
    let n = server.handle(Time::ZERO, neighbour, &cat, &probe).next_datagram(&mut out).unwrap();
    let near = token_from(&out[..n]);
    for (label, d) in cases(eid, &stolen, &near) {
        let mut reply = server.handle(Time::ZERO, victim, &cat, &d);
        let mut bytes = 0usize;
        while let Some(n) = reply.next_datagram(&mut out) {
            bytes += n;
        }
        let ratio = bytes as f64 / d.len() as f64;
        worst = worst.max(ratio);
        println!("| server | {label} | {} | {bytes} | {ratio:.1}× |", d.len());
    }
    // Router with the object in its store: answered from the store, to the victim.
    let mut cfg = RouterConfig { fib: Fib::new(Some(UPSTREAM.parse().unwrap())), ..RouterConfig::default() };
    cfg.cs.capacity_units = 1 << 20;
    let mut router = Router::new(cfg);
    warm(&mut router, &cat, eid);
    router.handle_datagram(Time::from_millis(1000), attacker, &probe);
    let t = router.poll_transmit(Time::from_millis(1000), &mut out).unwrap();
    let stolen = token_from(&out[..t.len]);
    router.handle_datagram(Time::from_millis(1000), neighbour, &probe);
    let t = router.poll_transmit(Time::from_millis(1000), &mut out).unwrap();
    let near = token_from(&out[..t.len]);
    for (label, d) in cases(eid, &stolen, &near) {
        router.handle_datagram(Time::from_millis(1000), victim, &d);
        let mut out = vec![0u8; 70_000];
        let mut bytes = 0usize;
        while let Some(t) = router.poll_transmit(Time::from_millis(1000), &mut out) {
            if t.to == victim {
                bytes += t.len;
            }
        }
        let ratio = bytes as f64 / d.len() as f64;
        worst = worst.max(ratio);
        println!("| router (object in its store) | {label} | {} | {bytes} | {ratio:.1}× |", d.len());
    }
    println!("\nworst single datagram: {worst:.1}×");

    // A flood: every case again and again, and random corruptions of them, all with the
    // victim's address as source, through fresh nodes (so nothing was validated before).
    let flood = flood_datagrams(&cases(eid, &stolen, &near), 200_000);
    let sent: usize = flood.iter().map(Vec::len).sum();
    let mut server = Server::default();
    let mut back = 0usize;
    for (i, d) in flood.iter().enumerate() {
        let mut reply = server.handle(Time::from_micros(i as u64), victim, &cat, d);
        while let Some(n) = reply.next_datagram(&mut out) {
            back += n;
        }
    }
    let server_ratio = back as f64 / sent as f64;
    let mut cfg = RouterConfig { fib: Fib::new(Some(UPSTREAM.parse().unwrap())), ..RouterConfig::default() };
    cfg.cs.capacity_units = 1 << 20;
    let mut router = Router::new(cfg);
    warm(&mut router, &cat, eid);
    let mut router_back = 0usize;
    for (i, d) in flood.iter().enumerate() {
        router.handle_datagram(Time::from_millis(1000) + core::time::Duration::from_micros(i as u64), victim, d);
        while let Some(t) = router.poll_transmit(Time::from_millis(1000), &mut out) {
            if t.to == victim {
                router_back += t.len;
            }
        }
    }
    let router_ratio = router_back as f64 / sent as f64;
    println!(
        "flood of {} datagrams ({sent} bytes): server sent {back} bytes ({server_ratio:.2}×), router {router_back} bytes ({router_ratio:.2}×)",
        flood.len()
    );
    // RFC 9000 §8: at most 3× toward an address not validated.
    if worst > 3.0 || server_ratio > 3.0 || router_ratio > 3.0 {
        eprintln!("amplification above 3×");
        std::process::exit(1);
    }
}

/// `n` datagrams: the cases in turn, every other one with a few random bytes changed.
fn flood_datagrams(cases: &[(&'static str, Vec<u8>)], n: usize) -> Vec<Vec<u8>> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|i| {
            let mut d = cases[i % cases.len()].1.clone();
            if i % 2 == 1 && !d.is_empty() {
                for _ in 0..3 {
                    let at = (next() as usize) % d.len();
                    d[at] = next() as u8;
                }
            }
            d
        })
        .collect()
}

/// Fill the router's store with every unit of `eid` at both unit sizes the cases use, as a
/// validated receiver at another address asking through it (the router and the server both
/// validate with their default configuration, so this exchanges tokens on both hops).
fn warm(router: &mut Router, cat: &PatternCatalog, eid: Eid) {
    let up: SocketAddr = UPSTREAM.parse().unwrap();
    let me: SocketAddr = "10.0.0.1:5000".parse().unwrap();
    let mut server = Server::default();
    let mut out = vec![0u8; 70_000];
    router.handle_datagram(Time::ZERO, me, &request(eid, 1402, 1, None));
    let t = router.poll_transmit(Time::ZERO, &mut out).unwrap();
    let token = token_from(&out[..t.len]);
    let size = 256 * u64::from(MAX_UNIT);
    for unit in [MAX_UNIT, 1402] {
        // As many units per request as the router's reply limit allows.
        let per = (DEFAULT_MAX_REPLY_BYTES / (u64::from(unit) + DATA_HEADER_LEN as u64)).min(256);
        let mut offset = 0;
        while offset < size {
            let mut opts = [0u8; 80];
            let n = write_address_token(&mut opts, Some(&token));
            let req = Request {
                flags: RequestFlags(0),
                hop_limit: DEFAULT_HOP_LIMIT,
                unit,
                tag: 9,
                nonce: offset + 100,
                eid,
                range: ByteRange::new(offset, (per * u64::from(unit)) as u32),
                options: Options::parse(&opts[..n]).unwrap(),
            };
            offset += per * u64::from(unit);
            let mut b = vec![0u8; req.encoded_len()];
            req.encode(&mut b).unwrap();
            router.handle_datagram(Time::ZERO, me, &b);
            // Relay between router and server until the router sends nothing more upstream.
            loop {
                let mut fwd = Vec::new();
                while let Some(t) = router.poll_transmit(Time::ZERO, &mut out) {
                    if t.to == up {
                        fwd.push(out[..t.len].to_vec());
                    }
                }
                if fwd.is_empty() {
                    break;
                }
                for f in fwd {
                    let mut reply = server.handle(Time::ZERO, ROUTER.parse().unwrap(), cat, &f);
                    let mut answers = Vec::new();
                    while let Some(n) = reply.next_datagram(&mut out) {
                        answers.push(out[..n].to_vec());
                    }
                    for a in answers {
                        router.handle_datagram(Time::ZERO, up, &a);
                    }
                }
            }
        }
    }
    assert!(router.cs_contains(&eid, size - u64::from(MAX_UNIT)), "store warmed");
}
