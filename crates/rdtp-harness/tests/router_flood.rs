//! One validated source flooding a caching router (issue 23, item 4): 8000 requests a second
//! (≈ 6 Mbit/s), each for 256 units of 64 B of a made-up EID — 256 pending entries at the
//! router, one Nack from the server. Beside it, an honest `bbr` fetch through the same
//! router must keep at least half the goodput it has alone. Before per-source limits the
//! flood filled the router's pending table (2 M units/s × a 100 ms round trip to the server
//! is more than its 65 536 entries) and the fetch got only `Busy`.
//!
//! ```text
//!   honest rx ──100 Mbit/s, 1 ms──┐
//!                                 r1 ──200 Mbit/s, 50 ms── origin
//!   flooder  ──100 Mbit/s, 1 ms──┘
//! ```
//! Virtual time: the goodputs are deterministic, so the test asserts them.

use core::time::Duration;

use rdtp_harness::{FlowSpec, LinkConfig, Net};
use rdtp_proto::NodeId;
use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::router::RouterConfig;
use rdtp_proto::router::fib::Fib;
use rdtp_proto::server::{PatternCatalog, ServerConfig};
use rdtp_proto::token::ValidationConfig;
use rdtp_proto::wire::{ByteRange, DEFAULT_HOP_LIMIT, Options, Request, RequestFlags};
use rdtp_proto::{Eid, Time};

const SIZE: u64 = 10_000_000;
/// Flood requests per second, and units (of 64 B) each asks for.
const FLOOD_RATE: u64 = 8000;
const FLOOD_UNITS: u32 = 256;

/// The `n`-th flood request: 256 units of 64 B of a made-up EID (a new one each time, so
/// nothing coalesces).
fn flood_request(n: u64) -> Vec<u8> {
    let mut eid = Eid([0x5c; 32]);
    eid.0[..8].copy_from_slice(&n.to_be_bytes());
    let r = Request {
        flags: RequestFlags(0),
        hop_limit: DEFAULT_HOP_LIMIT,
        unit: 64,
        tag: n as u32 | 1,
        nonce: n,
        eid,
        range: ByteRange::new(0, FLOOD_UNITS * 64),
        options: Options::EMPTY,
    };
    let mut b = vec![0u8; r.encoded_len()];
    r.encode(&mut b).unwrap();
    b
}

struct Outcome {
    /// The honest fetch's goodput, bit/s (size over completion time), or 0 if it failed.
    goodput: f64,
    flood_sent: u64,
    flood_busy: u64,
    router: String,
}

fn run(flood: bool) -> Outcome {
    let mut net = Net::new(1, Duration::from_millis(100));
    let origin = net.add_server("origin", ServerConfig::default(), PatternCatalog::new([("obj".to_string(), SIZE, 3)]));
    let config = RouterConfig {
        id: NodeId::label("r1").unwrap(),
        fib: Fib::new(Some(net.addr(origin))),
        // Every downstream counts as validated (the flooder holds a token, as on loopback).
        validation: ValidationConfig { enabled: false, ..ValidationConfig::default() },
        ..RouterConfig::default()
    };
    let r1 = net.add_router("r1", config);
    net.link_both(r1, origin, LinkConfig::new(200e6, Duration::from_millis(50)));
    let mut spec =
        FlowSpec::new("obj", ReceiverConfig { cc: CcConfig::from_name("bbr").unwrap(), ..Default::default() });
    spec.start = Duration::from_millis(500);
    let f = net.add_flow(spec, r1);
    let rx = net.flows[f].node;
    net.link_both(rx, r1, LinkConfig::new(100e6, Duration::from_millis(1)));
    let flooder = flood.then(|| {
        let every = Duration::from_nanos(1_000_000_000 / FLOOD_RATE);
        let s = net.add_source("flooder", r1, every, (Duration::ZERO, Duration::from_secs(30)), flood_request);
        net.link_both(s, r1, LinkConfig::new(100e6, Duration::from_millis(1)));
        s
    });
    net.run(Duration::from_secs(30));
    let flow = &net.flows[f];
    let goodput = match (flow.is_byte_exact(), flow.completion_time()) {
        (true, Some(t)) => SIZE as f64 * 8.0 / t.as_secs_f64(),
        _ => 0.0,
    };
    let (flood_sent, flood_busy) = flooder.map_or((0, 0), |s| (net.source(s).sent, net.source(s).received[3]));
    eprintln!(
        "flood {flood}: honest goodput {:.1} Mbit/s ({:?}, error {:?}) at {:?}; flood sent {flood_sent}, got \
         {flood_busy} Nacks; r1 {:?}",
        goodput / 1e6,
        flow.completion_time(),
        flow.error,
        net.now().saturating_since(Time::ZERO),
        net.router(r1).stats()
    );
    Outcome { goodput, flood_sent, flood_busy, router: format!("{:?}", net.router(r1).stats()) }
}

#[test]
fn an_honest_fetch_beside_a_flooding_source_keeps_at_least_half_its_goodput() {
    let alone = run(false);
    let flooded = run(true);
    assert!(alone.goodput > 30e6, "alone: {:.1} Mbit/s", alone.goodput / 1e6);
    assert!(flooded.flood_sent >= FLOOD_RATE, "the flood ran");
    assert!(
        flooded.goodput >= 0.5 * alone.goodput,
        "beside the flood: {:.1} Mbit/s, alone {:.1} Mbit/s; router {}",
        flooded.goodput / 1e6,
        alone.goodput / 1e6,
        flooded.router
    );
    assert!(flooded.flood_busy > 0, "the flooder was answered (Nacks)");
}
