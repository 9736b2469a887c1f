//! Router rules, one at a time, with hand-made datagrams (the harness crate runs whole
//! fetches through routers under loss).

use std::net::SocketAddr;

use super::cs::{Admission, CsConfig, Replacement};
use super::*;
use crate::server::{Catalog, MemoryCatalog, Server, ServerConfig};
use crate::wire::{DEFAULT_HOP_LIMIT, ListResponse};

mod forwarding;

const UNIT: u16 = 100;

fn addr(n: u8) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, n], 7447))
}
const RX1: u8 = 1;
const RX2: u8 = 2;
const UP: u8 = 9;

/// A router that answers every downstream (the tests of forwarding rules; the validation
/// tests turn it on).
fn router(cfg: impl FnOnce(&mut RouterConfig)) -> Router {
    let mut c = RouterConfig {
        id: NodeId::label("r1").unwrap(),
        fib: Fib::new(Some(addr(UP))),
        validation: open(),
        ..Default::default()
    };
    cfg(&mut c);
    Router::new(c)
}

fn open() -> ValidationConfig {
    ValidationConfig { enabled: false, ..ValidationConfig::default() }
}

fn open_server() -> Server {
    Server::new(ServerConfig { validation: open(), ..ServerConfig::default() })
}

fn catalog() -> MemoryCatalog {
    MemoryCatalog::new([("obj".to_string(), (0..1050u32).map(|i| (i % 251) as u8).collect())])
}

fn eid() -> Eid {
    catalog().resolve("obj").unwrap().0
}

fn request(tag: u32, nonce: u64, ranges: &[(u64, u32)], flags: u8) -> Vec<u8> {
    request_with_token(tag, nonce, ranges, flags, None)
}

fn request_with_token(tag: u32, nonce: u64, ranges: &[(u64, u32)], flags: u8, token: Option<&[u8]>) -> Vec<u8> {
    let mut opts = [0u8; 512];
    let extra: Vec<ByteRange> = ranges[1..].iter().map(|&(o, n)| ByteRange::new(o, n * u32::from(UNIT))).collect();
    let mut n = extra_ranges_len(extra.len());
    write_extra_ranges(&mut opts[..n], &extra);
    n += write_address_token(&mut opts[n..], token);
    let r = Request {
        flags: RequestFlags(flags),
        hop_limit: DEFAULT_HOP_LIMIT,
        unit: UNIT,
        tag,
        nonce,
        eid: eid(),
        range: ByteRange::new(ranges[0].0, ranges[0].1 * u32::from(UNIT)),
        options: Options::parse(&opts[..n]).unwrap(),
    };
    let mut b = vec![0u8; r.encoded_len()];
    r.encode(&mut b).unwrap();
    b
}

/// Everything the router wants to send, in order.
fn drain(r: &mut Router) -> Vec<(SocketAddr, Vec<u8>)> {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut out = vec![];
    while let Some(t) = r.poll_transmit(Time::ZERO, &mut buf) {
        out.push((t.to, buf[..t.len].to_vec()));
    }
    out
}

/// Let the server answer every request in `out` that goes upstream; returns the answers.
fn serve(out: &[(SocketAddr, Vec<u8>)]) -> Vec<Vec<u8>> {
    serve_with(&mut open_server(), out)
}

/// The router's address, as its upstream sees it.
const ME: u8 = 50;

fn serve_with(server: &mut Server, out: &[(SocketAddr, Vec<u8>)]) -> Vec<Vec<u8>> {
    let cat = catalog();
    let mut answers = vec![];
    let mut buf = vec![0u8; 65536];
    for (to, d) in out {
        if *to == addr(UP) {
            let mut reply = server.handle(Time::ZERO, addr(ME), &cat, d);
            while let Some(n) = reply.next_datagram(&mut buf) {
                answers.push(buf[..n].to_vec());
            }
        }
    }
    answers
}

fn upstream_requests(out: &[(SocketAddr, Vec<u8>)]) -> Vec<Vec<ByteRange>> {
    out.iter()
        .filter(|(to, _)| *to == addr(UP))
        .map(|(_, d)| match Packet::decode(d).unwrap() {
            Packet::Request(r) => r.ranges().collect(),
            p => panic!("not a request: {p:?}"),
        })
        .collect()
}

fn data_to(out: &[(SocketAddr, Vec<u8>)], n: u8) -> Vec<Data<'_>> {
    out.iter()
        .filter(|(to, _)| *to == addr(n))
        .filter_map(|(_, d)| match Packet::decode(d) {
            Ok(Packet::Data(d)) => Some(d),
            _ => None,
        })
        .collect()
}

fn nacks_to(out: &[(SocketAddr, Vec<u8>)], n: u8) -> Vec<Nack<'_>> {
    out.iter()
        .filter(|(to, _)| *to == addr(n))
        .filter_map(|(_, d)| match Packet::decode(d) {
            Ok(Packet::Nack(k)) => Some(k),
            _ => None,
        })
        .collect()
}

/// Fetch units `[first, first + n)` through the router for `rx` and return what reached it.
fn fetch(r: &mut Router, now: Time, rx: u8, tag: u32, first: u64, n: u32) -> Vec<(SocketAddr, Vec<u8>)> {
    r.handle_datagram(now, addr(rx), &request(tag, u64::from(tag) * 7919, &[(first * u64::from(UNIT), n)], 0));
    let out = drain(r);
    for a in serve(&out) {
        r.handle_datagram(now, addr(UP), &a);
    }
    let mut all = out;
    all.extend(drain(r));
    all
}

#[test]
fn a_miss_is_forwarded_and_the_data_cached_then_a_hit_is_served_locally() {
    let mut r = router(|_| {});
    let t = Time::ZERO;
    let out = fetch(&mut r, t, RX1, 5, 0, 3);
    assert_eq!(upstream_requests(&out), [[ByteRange::new(0, 300)]]);
    let d = data_to(&out, RX1);
    assert_eq!(d.iter().map(|d| d.offset).collect::<Vec<_>>(), [0, 100, 200]);
    assert!(d.iter().all(|d| d.tag == 5 && d.hops == 1 && d.served_by == NodeId::ORIGIN));
    assert!(d.iter().all(|d| !d.flags.contains(DataFlags::CACHED)));
    assert_eq!(r.pit_len(), 0);
    // Verify before caching: the object's one block is not whole yet, so nothing is cached.
    assert_eq!(r.cs_len(), 0);
    assert!(r.staging_bytes() > 0);
    let out = fetch(&mut r, t, RX1, 6, 3, 8);
    assert_eq!(data_to(&out, RX1).len(), 8);
    assert_eq!(r.cs_len(), 11, "the block hashed to the EID: all its units are cached");
    assert_eq!((r.staging_bytes(), r.stats().blocks_verified, r.stats().proofs_requested), (0, 1, 0));
    // Again, from another receiver: all hits, nothing upstream.
    let out = fetch(&mut r, t, RX2, 77, 0, 3);
    assert!(upstream_requests(&out).is_empty());
    let d = data_to(&out, RX2);
    assert_eq!(d.len(), 3);
    assert!(d.iter().all(|d| d.tag == 77 && d.hops == 0 && d.flags.contains(DataFlags::CACHED)));
    assert!(d.iter().all(|d| d.served_by.to_string() == "r1"));
    assert_eq!(d[1].payload, &catalog_bytes()[100..200]);
    let s = r.stats();
    assert_eq!((s.cs_hits, s.cs_misses, s.forwarded_units, s.upstream_requests), (3, 11, 11, 2));
}

fn catalog_bytes() -> Vec<u8> {
    (0..1050u32).map(|i| (i % 251) as u8).collect()
}

#[test]
fn a_request_mixing_hits_and_misses_is_split() {
    let mut r = router(|_| {});
    fetch(&mut r, Time::ZERO, RX1, 1, 0, 11); // the whole object: cached once verified
    // The last unit of the object is short: it is matched and cached too.
    assert!(r.cs_contains(&eid(), 1000));
    for u in (0..11).filter(|u| !(2..4).contains(u)) {
        r.cs.lock().remove(&(eid(), u * 100)); // keep units 2 and 3
    }
    // Units 0..6: 2 and 3 from the store, the rest forwarded as two ranges.
    r.handle_datagram(Time::ZERO, addr(RX2), &request(9, 1, &[(0, 6)], 0));
    let out = drain(&mut r);
    let hits = data_to(&out, RX2);
    assert_eq!(hits.iter().map(|d| d.offset).collect::<Vec<_>>(), [200, 300]);
    assert_eq!(upstream_requests(&out), [[ByteRange::new(0, 200), ByteRange::new(400, 200)]]);
    // The forwarded request keeps EID, unit and nonce, with one hop less and the router's tag.
    let Ok(Packet::Request(up)) = Packet::decode(&out.iter().find(|(to, _)| *to == addr(UP)).unwrap().1) else {
        panic!()
    };
    assert_eq!((up.unit, up.nonce, up.hop_limit, up.eid), (UNIT, 1, DEFAULT_HOP_LIMIT - 1, eid()));
    assert_ne!(up.tag, 9);
}

#[test]
fn concurrent_requests_for_the_same_units_are_coalesced() {
    let mut r = router(|_| {});
    let t = Time::ZERO;
    r.handle_datagram(t, addr(RX1), &request(11, 1, &[(0, 4)], 0));
    r.handle_datagram(t, addr(RX2), &request(22, 2, &[(200, 4)], 0)); // units 2..6
    let out = drain(&mut r);
    // Units 2 and 3 were pending: only 4 and 5 go upstream for RX2.
    assert_eq!(upstream_requests(&out), [vec![ByteRange::new(0, 400)], vec![ByteRange::new(400, 200)]]);
    assert_eq!(r.stats().coalesced, 2);
    for a in serve(&out) {
        r.handle_datagram(t, addr(UP), &a);
    }
    let out = drain(&mut r);
    let to1: Vec<u64> = data_to(&out, RX1).iter().map(|d| d.offset).collect();
    let to2: Vec<u64> = data_to(&out, RX2).iter().map(|d| d.offset).collect();
    assert_eq!(to1, [0, 100, 200, 300]);
    assert_eq!(to2, [200, 300, 400, 500]);
    assert!(data_to(&out, RX1).iter().all(|d| d.tag == 11));
    assert!(data_to(&out, RX2).iter().all(|d| d.tag == 22));
    assert_eq!(r.stats().data_in, 6, "each unit came from upstream once");
}

/// Issue 23 item 11: a Data that answers a request forwarded well before a downstream's own
/// arrived reaches that downstream sooner than a round trip of the path; its copy says so
/// (`COALESCED`), so the receiver takes no RTT sample from it (BBR's min RTT would). Early
/// means: less than 7/8 of the forwarded request's round trip (here 40 ms) since its own.
/// The same holds for a request that was forwarded again itself when the Data answers an
/// earlier forwarding (issue 26: any request may be forwarded again).
#[test]
fn copies_for_requests_that_joined_a_pending_entry_late_are_marked_coalesced() {
    let mut r = router(|c| c.retx_suppression = Duration::from_millis(20));
    let retx = RequestFlags::RETRANSMISSION;
    const RX3: u8 = 3;
    r.handle_datagram(Time::ZERO, addr(RX1), &request(11, 1, &[(0, 4)], 0));
    // RX3 1 ms later: joins unit 0, but its round trip is 39 of 40 ms: not early.
    r.handle_datagram(Time::from_millis(1), addr(RX3), &request(33, 5, &[(0, 1)], 0));
    // The network duplicates RX1's request: still RX1's own request, not one that joined.
    r.handle_datagram(Time::from_millis(2), addr(RX1), &request(11, 1, &[(0, 4)], 0));
    // RX2 10 ms later: units 1–3 join RX1's entries (30 of 40 ms: early), 4–5 are its own.
    r.handle_datagram(Time::from_millis(10), addr(RX2), &request(22, 2, &[(100, 5)], 0));
    // RX2 asks for unit 1 again after the suppression interval: forwarded for it this time
    // (but unit 1's Data answers RX1's request, 40 ms before, not this one: early).
    r.handle_datagram(Time::from_millis(30), addr(RX2), &request(23, 3, &[(100, 1)], retx));
    // RX1 asks for unit 1 again right after that: suppressed, so RX1 has now joined it.
    r.handle_datagram(Time::from_millis(35), addr(RX1), &request(12, 4, &[(100, 1)], retx));
    let out = drain(&mut r);
    assert_eq!(upstream_requests(&out).len(), 3);
    let mut answers = serve(&out);
    // An upstream router marked unit 4's Data already: the mark stays on every copy.
    for a in &mut answers {
        if let Ok(Packet::Data(d)) = Packet::decode(a)
            && d.offset == 400
        {
            wire::set_data_flags(a, DataFlags::COALESCED);
        }
    }
    for a in &answers {
        r.handle_datagram(Time::from_millis(40), addr(UP), a);
    }
    let out = drain(&mut r);
    let marked = |n: u8| -> Vec<(u64, bool)> {
        let mut v: Vec<(u64, bool)> =
            data_to(&out, n).iter().map(|d| (d.offset / 100, d.flags.contains(DataFlags::COALESCED))).collect();
        v.sort_unstable();
        v.dedup_by_key(|x| x.0);
        v
    };
    assert_eq!(marked(RX1), [(0, false), (1, true), (2, false), (3, false)]);
    assert_eq!(marked(RX2), [(1, true), (2, true), (3, true), (4, true), (5, false)]);
    assert_eq!(marked(RX3), [(0, false)]);
    // Nothing else about the copies changes.
    assert!(data_to(&out, RX2).iter().all(|d| !d.flags.contains(DataFlags::CACHED) && d.hops == 1));
}

#[test]
fn pending_entries_expire_and_late_data_is_neither_forwarded_nor_cached() {
    // The upstream never answers here: without a liveness timeout, entries just expire.
    let mut r = router(|c| {
        c.lifetime = Duration::from_secs(4);
        c.upstream_timeout = None;
    });
    r.handle_datagram(Time::ZERO, addr(RX1), &request(1, 1, &[(0, 2)], 0));
    let out = drain(&mut r);
    assert_eq!(r.pit_len(), 2);
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(4000)));
    r.handle_timeout(Time::from_millis(3999));
    assert_eq!(r.pit_len(), 2);
    r.handle_timeout(Time::from_millis(4000));
    assert_eq!((r.pit_len(), r.stats().expired, r.poll_timeout()), (0, 2, None));
    for a in serve(&out) {
        r.handle_datagram(Time::from_millis(4100), addr(UP), &a);
    }
    assert!(drain(&mut r).is_empty());
    assert_eq!((r.cs_len(), r.stats().unsolicited), (0, 2));
}

#[test]
fn a_request_duplicated_by_the_network_is_not_a_loop() {
    let mut r = router(|_| {});
    let req = request(1, 1, &[(0, 2)], 0);
    r.handle_datagram(Time::ZERO, addr(RX1), &req);
    r.handle_datagram(Time::ZERO, addr(RX1), &req);
    let out = drain(&mut r);
    assert_eq!(upstream_requests(&out).len(), 1);
    assert!(nacks_to(&out, RX1).is_empty());
    assert_eq!((r.stats().loops, r.stats().coalesced), (0, 0));
    // The same nonce from another peer is a loop.
    r.handle_datagram(Time::ZERO, addr(RX2), &req);
    assert_eq!(nacks_to(&drain(&mut r), RX2)[0].code, NackCode::Duplicate);
}

#[test]
fn a_new_request_extends_a_pending_entry() {
    let mut r = router(|c| c.upstream_timeout = None);
    r.handle_datagram(Time::ZERO, addr(RX1), &request(1, 1, &[(0, 1)], 0));
    r.handle_datagram(Time::from_millis(3000), addr(RX2), &request(2, 2, &[(0, 1)], 0));
    r.handle_timeout(Time::from_millis(4500));
    assert_eq!(r.pit_len(), 1, "refreshed by the second request");
}

#[test]
fn a_full_table_answers_busy_for_the_units_that_do_not_fit() {
    let mut r = router(|c| c.pit_capacity = 2);
    r.handle_datagram(Time::ZERO, addr(RX1), &request(4, 1, &[(0, 5)], 0));
    let out = drain(&mut r);
    assert_eq!(upstream_requests(&out), [[ByteRange::new(0, 200)]]);
    let n = nacks_to(&out, RX1);
    assert_eq!(n.len(), 1, "one Nack for the run of refused units");
    assert_eq!((n[0].code, n[0].tag, n[0].offset, n[0].length), (NackCode::Busy, 4, 200, 300));
    assert_eq!(n[0].from.to_string(), "r1");
    assert_eq!(r.stats().busy, 3);
}

#[test]
fn a_retransmission_is_forwarded_again_after_the_suppression_interval() {
    let mut r = router(|c| c.retx_suppression = Duration::from_millis(10));
    r.handle_datagram(Time::ZERO, addr(RX1), &request(1, 1, &[(0, 1)], 0));
    drain(&mut r);
    // Another receiver's retransmission right away: suppressed (coalesced).
    let retx = RequestFlags::RETRANSMISSION;
    r.handle_datagram(Time::from_millis(5), addr(RX2), &request(2, 2, &[(0, 1)], retx));
    assert!(upstream_requests(&drain(&mut r)).is_empty());
    // The first receiver's own re-request later: forwarded, and its new tag is used.
    r.handle_datagram(Time::from_millis(300), addr(RX1), &request(3, 3, &[(0, 1)], retx));
    let out = drain(&mut r);
    assert_eq!(upstream_requests(&out).len(), 1);
    for a in serve(&out) {
        r.handle_datagram(Time::from_millis(310), addr(UP), &a);
    }
    let out = drain(&mut r);
    assert_eq!(data_to(&out, RX1)[0].tag, 3);
    assert_eq!(data_to(&out, RX2)[0].tag, 2);
    assert_eq!(r.stats().reforwarded_units, 1);
}

/// Issue 26: a first-time request that finds a pending entry is forwarded again once the
/// suppression interval has passed, as a re-request is (NFD's best-route asks its
/// retransmission suppression about every Interest that finds a pending entry). Before, only
/// a request flagged RETRANSMISSION was: a unit whose request or Data was lost upstream
/// waited for the first asker's re-request while everybody else's first-time requests
/// joined it (Hu et al.'s Topology 2 with loss, docs/EXPERIMENTS.md §8c).
#[test]
fn a_first_time_request_is_forwarded_again_after_the_suppression_interval() {
    const RX3: u8 = 3;
    let mut r = router(|c| c.retx_suppression = Duration::from_millis(10));
    r.handle_datagram(Time::ZERO, addr(RX1), &request(1, 1, &[(0, 1)], 0));
    // Its request is lost on the way up. RX2's first-time request 5 ms later: suppressed.
    assert_eq!(upstream_requests(&drain(&mut r)).len(), 1);
    r.handle_datagram(Time::from_millis(5), addr(RX2), &request(2, 2, &[(0, 1)], 0));
    assert!(upstream_requests(&drain(&mut r)).is_empty());
    // RX3's first-time request 20 ms after the forwarding: forwarded again.
    r.handle_datagram(Time::from_millis(20), addr(RX3), &request(3, 3, &[(0, 1)], 0));
    let out = drain(&mut r);
    assert_eq!(upstream_requests(&out), [[ByteRange::new(0, u32::from(UNIT))]]);
    assert_eq!((r.stats().forwarded_units, r.stats().reforwarded_units, r.stats().coalesced), (1, 1, 1));
    for a in serve(&out) {
        r.handle_datagram(Time::from_millis(30), addr(UP), &a);
    }
    let out = drain(&mut r);
    for (rx, tag) in [(RX1, 1), (RX2, 2), (RX3, 3)] {
        let d = data_to(&out, rx);
        assert_eq!((d.len(), d[0].tag), (1, tag), "{rx}");
    }
    // RX2 asked 25 ms before the Data, which answers a request forwarded 10 ms before it:
    // its copy is no earlier than a round trip after its request (unmarked); RX3's request
    // went out itself.
    assert!(out.iter().all(|(_, d)| Data::decode(d).is_ok_and(|d| !d.flags.contains(DataFlags::COALESCED))));
}

/// Issue 26's attack: many sources, each joining one pending unit with a new request every
/// 100 µs for a second (the upstream never answers). Every one of those requests may go
/// upstream again by the rule above, but the unit goes at most once per suppression
/// interval whoever asks: 1 + 1 s / 10 ms requests upstream with the fixed interval, 8 with
/// NFD's exponential one (after 10, 20, 40, 80, 160, 250 and 250 ms), not one per join.
/// Each of them is paid from the share of the source whose request went (limits.rs).
#[test]
fn a_flood_of_joins_sends_a_pending_unit_upstream_at_most_once_per_suppression_interval() {
    let source = |i: u32| SocketAddr::from(([10, 1, (i >> 8) as u8, i as u8], 7447));
    for (retx, most) in [(RetxSuppression::Fixed, 101), (RetxSuppression::EXPONENTIAL, 8)] {
        let mut r = router(|c| {
            c.retx_suppression = Duration::from_millis(10);
            c.retx = retx;
            c.upstream_timeout = None;
        });
        r.handle_datagram(Time::ZERO, addr(RX1), &request(1, 1, &[(0, 1)], 0));
        let mut upstream = upstream_requests(&drain(&mut r)).len();
        let mut joins = 0;
        for tick in 1..=10_000u32 {
            let now = Time::ZERO + Duration::from_micros(u64::from(tick) * 100);
            // 50 sources in turn (each its own share), each request a new one (new tag and
            // nonce), half of them flagged as re-requests.
            let flags = if tick % 2 == 0 { RequestFlags::RETRANSMISSION } else { 0 };
            r.handle_datagram(now, source(tick % 50), &request(tick + 10, u64::from(tick) + 10, &[(0, 1)], flags));
            let out = drain(&mut r);
            assert!(out.iter().all(|(to, _)| *to == addr(UP)), "nobody is refused");
            upstream += upstream_requests(&out).len();
            joins += 1;
        }
        assert_eq!(joins, 10_000);
        assert!(upstream <= most, "{retx}: {upstream} upstream requests for 10 000 joins in 1 s");
        assert!(upstream >= most * 9 / 10, "{retx}: {upstream}: the unit still goes up after each interval");
        assert_eq!(r.stats().reforwarded_units as usize, upstream - 1);
        assert_eq!(r.pit_len(), 1);
    }
}

#[test]
fn an_upstream_nack_reaches_everyone_waiting_with_their_tags() {
    let mut r = router(|_| {});
    let mut req = request(1, 1, &[(0, 2)], 0);
    req[20] ^= 0xff; // another EID: the server does not have it
    r.handle_datagram(Time::ZERO, addr(RX1), &req);
    let mut req2 = request(2, 2, &[(100, 1)], 0);
    req2[20] ^= 0xff;
    r.handle_datagram(Time::ZERO, addr(RX2), &req2);
    let out = drain(&mut r);
    for a in serve(&out) {
        r.handle_datagram(Time::ZERO, addr(UP), &a);
    }
    let out = drain(&mut r);
    let n1 = nacks_to(&out, RX1);
    let n2 = nacks_to(&out, RX2);
    assert_eq!(n1.len(), 1);
    assert_eq!((n1[0].code, n1[0].tag, n1[0].offset, n1[0].length), (NackCode::UnknownContent, 1, 0, 200));
    assert_eq!((n1[0].from, n1[0].hops), (NodeId::ORIGIN, 1));
    assert_eq!((n2[0].tag, n2[0].offset, n2[0].length), (2, 100, 100));
    assert_eq!(r.pit_len(), 0);
}

#[test]
fn data_that_answers_nothing_pending_is_dropped() {
    let mut r = router(|_| {});
    r.handle_datagram(Time::ZERO, addr(RX1), &request(1, 1, &[(0, 1)], 0));
    let out = drain(&mut r);
    let mut answers = serve(&out);
    // Forged: right EID and offset, wrong tag; and the real one from the wrong peer.
    let mut forged = answers[0].clone();
    forged[8] ^= 1;
    r.handle_datagram(Time::ZERO, addr(UP), &forged);
    r.handle_datagram(Time::ZERO, addr(RX2), &answers[0]);
    assert!(drain(&mut r).is_empty());
    assert_eq!((r.cs_len(), r.pit_len(), r.stats().unsolicited), (0, 1, 2));
    r.handle_datagram(Time::ZERO, addr(UP), &answers.remove(0));
    assert_eq!(data_to(&drain(&mut r), RX1).len(), 1);
}

#[test]
fn hop_limit_and_missing_routes_are_refused() {
    let mut r = router(|_| {});
    let mut req = request(1, 1, &[(0, 1)], 0);
    req[5] = 0;
    r.handle_datagram(Time::ZERO, addr(RX1), &req);
    assert_eq!(nacks_to(&drain(&mut r), RX1)[0].code, NackCode::HopLimit);
    req[5] = 1;
    r.handle_datagram(Time::ZERO, addr(RX1), &req);
    let out = drain(&mut r);
    let Ok(Packet::Request(up)) = Packet::decode(&out[0].1) else { panic!() };
    assert_eq!(up.hop_limit, 0);

    let mut r = router(|c| c.fib = Fib::new(None));
    r.handle_datagram(Time::ZERO, addr(RX1), &request(1, 1, &[(0, 1)], 0));
    assert_eq!(nacks_to(&drain(&mut r), RX1)[0].code, NackCode::NoRoute);
    // A request from the next hop itself is not sent back to it.
    let mut r = router(|_| {});
    r.handle_datagram(Time::ZERO, addr(UP), &request(1, 1, &[(0, 1)], 0));
    assert_eq!(nacks_to(&drain(&mut r), UP)[0].code, NackCode::NoRoute);
}

/// Three routers whose default routes form a cycle A → B → C → A: the request comes back to
/// A with its nonce, A refuses it, and the refusal travels back to the receiver. Every hop
/// validates its downstream, so tokens are exchanged on each hop on the way.
#[test]
fn a_routing_loop_is_found_by_the_nonce_and_reported() {
    let (a, b, c) = (addr(21), addr(22), addr(23));
    let mk = |id: &str, up: SocketAddr| {
        Router::new(RouterConfig { id: NodeId::label(id).unwrap(), fib: Fib::new(Some(up)), ..Default::default() })
    };
    let mut nodes = [(a, mk("a", b)), (b, mk("b", c)), (c, mk("c", a))];
    let mut wire: VecDeque<(SocketAddr, SocketAddr, Vec<u8>)> = VecDeque::new();
    wire.push_back((addr(RX1), a, request(5, 42, &[(0, 2)], 0)));
    let mut at_receiver = vec![];
    let mut steps = 0;
    while let Some((from, to, d)) = wire.pop_front() {
        steps += 1;
        assert!(steps < 100, "the loop circulates");
        if to == addr(RX1) {
            // Every hop validates: the receiver answers a's Retry with its token.
            if let Ok(Packet::Retry(r)) = Packet::decode(&d) {
                wire.push_back((addr(RX1), a, request_with_token(5, 42, &[(0, 2)], 0, Some(r.token))));
                continue;
            }
            at_receiver.push(d);
            continue;
        }
        let (me, r) = nodes.iter_mut().find(|(x, _)| *x == to).unwrap();
        r.handle_datagram(Time::ZERO, from, &d);
        let me = *me;
        for (dst, d) in drain(r) {
            wire.push_back((me, dst, d));
        }
    }
    assert_eq!(at_receiver.len(), 1);
    let Ok(Packet::Nack(n)) = Packet::decode(&at_receiver[0]) else { panic!() };
    assert_eq!((n.code, n.tag, n.from.to_string().as_str(), n.hops), (NackCode::Duplicate, 5, "a", 3));
    assert!(nodes.iter().all(|(_, r)| r.pit_len() == 0), "every entry answered");
    // Each router obeyed one Retry from its next hop; a also sent one to the receiver.
    let retries: Vec<_> = nodes.iter().map(|(_, r)| (r.stats().retries_in, r.stats().retries_out)).collect();
    assert_eq!(retries, [(1, 2), (1, 1), (1, 1)]);
}

#[test]
fn resolves_are_forwarded_by_name_and_teach_the_eid_route() {
    let (names, other) = (addr(30), addr(31));
    let mut r = router(|c| {
        c.fib = Fib::new(Some(other));
        c.fib.add(format!("obj={names}").parse().unwrap());
    });
    let mut b = [0u8; 64];
    let options = Options::EMPTY;
    let n = ResolveRequest { hop_limit: DEFAULT_HOP_LIMIT, tag: 3, query: Query::Name("obj"), options }
        .encode(&mut b)
        .unwrap();
    r.handle_datagram(Time::ZERO, addr(RX1), &b[..n]);
    let out = drain(&mut r);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, names);
    let Ok(Packet::ResolveRequest(up)) = Packet::decode(&out[0].1) else { panic!() };
    assert_eq!(up.hop_limit, DEFAULT_HOP_LIMIT - 1);
    // The server at `names` answers; the receiver gets it with its own tag.
    let mut server = open_server();
    let cat = catalog();
    let mut reply = server.handle(Time::ZERO, addr(ME), &cat, &out[0].1);
    let mut buf = vec![0u8; 2048];
    let m = reply.next_datagram(&mut buf).unwrap();
    r.handle_datagram(Time::ZERO, names, &buf[..m]);
    let back = drain(&mut r);
    let Ok(Packet::ResolveResponse(resp)) = Packet::decode(&back[0].1) else { panic!() };
    assert_eq!((back[0].0, resp.tag, resp.eid), (addr(RX1), 3, eid()));
    assert_eq!(r.fib().route_eid(&eid()), Some(names), "learned");
    assert_eq!(r.poll_learned_route(), None, "exported only when asked for");
    // Lists go to the default route; the answer comes back with the lister's tag.
    let n = ListRequest { hop_limit: 4, tag: 8, cursor: 0, options }.encode(&mut b).unwrap();
    r.handle_datagram(Time::ZERO, addr(RX2), &b[..n]);
    let out = drain(&mut r);
    assert_eq!(out[0].0, other);
    let mut reply = server.handle(Time::ZERO, addr(ME), &cat, &out[0].1);
    let m = reply.next_datagram(&mut buf).unwrap();
    r.handle_datagram(Time::ZERO, other, &buf[..m]);
    let back = drain(&mut r);
    assert_eq!(back[0].0, addr(RX2));
    assert_eq!(ListResponse::decode(&back[0].1).unwrap().tag, 8);
}

#[test]
fn the_store_evicts_by_its_policy() {
    let mut r = router(|c| c.cs = CsConfig { capacity_units: 3, replacement: Replacement::Lru, ..CsConfig::default() });
    // The verified block's units go in in order: the last three stay.
    fetch(&mut r, Time::ZERO, RX1, 1, 0, 11);
    assert!((8..11).all(|u| r.cs_contains(&eid(), u * 100)));
    assert_eq!(r.cs_stats().evictions, 8);
    fetch(&mut r, Time::ZERO, RX1, 2, 8, 1); // a hit: unit 8 is now the most recent
    fetch(&mut r, Time::ZERO, RX1, 3, 9, 1); // and then unit 9: unit 10 is the least
    r.cs.lock().offer((eid(), 0), CachedUnit { total_size: 1050, payload: catalog_bytes()[..100].into() });
    assert!(r.cs_contains(&eid(), 800) && r.cs_contains(&eid(), 900) && r.cs_contains(&eid(), 0));
    assert!(!r.cs_contains(&eid(), 1000));
    assert_eq!(r.cs_stats().evictions, 9);
}

#[test]
fn garbage_and_responses_from_strangers_change_nothing() {
    let mut r = router(|_| {});
    r.handle_datagram(Time::ZERO, addr(RX1), b"hello");
    r.handle_datagram(Time::ZERO, addr(RX1), b"RD\x01\x01");
    assert!(drain(&mut r).is_empty(), "no Nack fits three times 4 bytes");
    let mut other_version = request(1, 1, &[(0, 1)], 0);
    other_version[2] = 1;
    r.handle_datagram(Time::ZERO, addr(RX1), &other_version);
    let out = drain(&mut r);
    assert_eq!(out.len(), 1);
    assert_eq!(Nack::decode(&out[0].1).unwrap().code, NackCode::UnsupportedVersion);
    assert!(out[0].1.len() <= 3 * other_version.len());
    let truncated = &request(1, 1, &[(0, 1)], 0)[..30];
    r.handle_datagram(Time::ZERO, addr(RX1), truncated);
    assert_eq!(nacks_to(&drain(&mut r), RX1)[0].code, NackCode::Malformed);
    // Responses are never answered.
    r.handle_datagram(Time::ZERO, addr(RX1), &out[0].1);
    assert!(drain(&mut r).is_empty());
    assert_eq!(r.pit_len(), 0);
}

fn retry_token(d: &[u8]) -> Vec<u8> {
    match Packet::decode(d) {
        Ok(Packet::Retry(r)) => r.token.to_vec(),
        p => panic!("expected a Retry: {p:?}"),
    }
}

/// RFC 9000 §8: a downstream the router has not validated gets a Retry (smaller than its
/// request), never a unit from the store and never a request sent upstream on its behalf;
/// with the token, the same request is served; the token is not forwarded.
#[test]
fn downstreams_are_validated_before_anything_is_sent_for_them() {
    let mut r = router(|c| c.validation = ValidationConfig { secret: [5; 32], ..ValidationConfig::default() });
    let bare = request(1, 11, &[(0, 4)], 0);
    r.handle_datagram(Time::ZERO, addr(RX1), &bare);
    let out = drain(&mut r);
    assert_eq!(out.len(), 1, "only the Retry");
    assert_eq!(out[0].0, addr(RX1));
    assert!(out[0].1.len() <= 3 * bare.len());
    let token = retry_token(&out[0].1);
    assert_eq!(r.pit_len(), 0);
    assert_eq!(r.stats().retries_out, 1);
    // With the token: forwarded upstream, without it.
    let with = request_with_token(2, 12, &[(0, 4)], 0, Some(&token));
    r.handle_datagram(Time::ZERO, addr(RX1), &with);
    let out = drain(&mut r);
    assert_eq!(upstream_requests(&out).len(), 1);
    let Ok(Packet::Request(up)) = Packet::decode(&out[0].1) else { panic!() };
    assert_eq!(up.options.address_token(), None, "a downstream's token stays with this hop");
    for a in serve(&out) {
        r.handle_datagram(Time::ZERO, addr(UP), &a);
    }
    assert_eq!(data_to(&drain(&mut r), RX1).len(), 4);
    // The units are in the store now; another address using RX1's token (spoofing RX1's
    // token from elsewhere) still gets nothing but a Retry.
    r.handle_datagram(Time::ZERO, addr(RX2), &request_with_token(3, 13, &[(0, 4)], 0, Some(&token)));
    let out = drain(&mut r);
    assert_eq!(out.len(), 1);
    let _ = retry_token(&out[0].1);
    assert_eq!(r.stats().cs_hits, 0);
}

/// A next hop that validates: the router keeps the token from its Retry, sends the refused
/// request again with it (the receivers see nothing of this), and uses it from then on.
#[test]
fn upstream_retries_are_obeyed_and_the_token_kept() {
    let mut r = router(|_| {});
    let mut server = Server::default(); // validates
    r.handle_datagram(Time::ZERO, addr(RX1), &request(1, 11, &[(0, 3)], 0));
    let out = drain(&mut r);
    let answers = serve_with(&mut server, &out);
    assert_eq!(answers.len(), 1);
    r.handle_datagram(Time::ZERO, addr(UP), &answers[0]);
    let again = drain(&mut r);
    assert_eq!(r.stats().retries_in, 1);
    let Ok(Packet::Request(up)) = Packet::decode(&again[0].1) else { panic!() };
    assert!(up.options.address_token().is_some());
    for a in serve_with(&mut server, &again) {
        r.handle_datagram(Time::ZERO, addr(UP), &a);
    }
    assert_eq!(data_to(&drain(&mut r), RX1).len(), 3);
    // The next request carries the token at once: no Retry.
    r.handle_datagram(Time::ZERO, addr(RX1), &request(2, 12, &[(300, 2)], 0));
    let out = drain(&mut r);
    for a in serve_with(&mut server, &out) {
        r.handle_datagram(Time::ZERO, addr(UP), &a);
    }
    assert_eq!(data_to(&drain(&mut r), RX1).len(), 2);
    assert_eq!(server.stats().retries, 1);
    // Resolves too: the kept token goes with them.
    let mut b = [0u8; 64];
    let q = ResolveRequest { hop_limit: 4, tag: 3, query: Query::Name("obj"), options: Options::EMPTY };
    let n = q.encode(&mut b).unwrap();
    r.handle_datagram(Time::ZERO, addr(RX1), &b[..n]);
    let out = drain(&mut r);
    let Ok(Packet::ResolveRequest(up)) = Packet::decode(&out[0].1) else { panic!() };
    assert!(up.options.address_token().is_some());
}

/// A Retry is obeyed once per request, only from the hop the request went to, and only for
/// a tag the router used: forged ones (another source, a guessed tag, a second Retry for
/// the same request) send nothing.
#[test]
fn forged_and_repeated_retries_send_nothing() {
    let mut r = router(|_| {});
    r.handle_datagram(Time::ZERO, addr(RX1), &request(1, 11, &[(0, 3)], 0));
    let out = drain(&mut r);
    let Ok(Packet::Request(up)) = Packet::decode(&out[0].1) else { panic!() };
    let retry = |tag| {
        let mut b = vec![0u8; 64];
        let n = Retry { tag, token: &[7; 20] }.encode(&mut b).unwrap();
        b.truncate(n);
        b
    };
    r.handle_datagram(Time::ZERO, addr(RX2), &retry(up.tag)); // wrong source
    r.handle_datagram(Time::ZERO, addr(UP), &retry(up.tag ^ 1)); // wrong tag
    assert!(drain(&mut r).is_empty());
    assert_eq!(r.stats().unsolicited, 2);
    r.handle_datagram(Time::ZERO, addr(UP), &retry(up.tag));
    let again = drain(&mut r);
    assert_eq!(again.len(), 1);
    let Ok(Packet::Request(up2)) = Packet::decode(&again[0].1) else { panic!() };
    r.handle_datagram(Time::ZERO, addr(UP), &retry(up2.tag));
    assert!(drain(&mut r).is_empty(), "a request is sent again once");
    // The units still arrive if the upstream answers the second request after all.
    for a in serve(&again) {
        r.handle_datagram(Time::ZERO, addr(UP), &a);
    }
    assert_eq!(data_to(&drain(&mut r), RX1).len(), 3);
}

#[test]
fn origin_requests_bypass_the_store_and_proofs_are_relayed() {
    let mut r = router(|_| {});
    let t = Time::ZERO;
    fetch(&mut r, t, RX1, 5, 0, 11);
    assert_eq!(r.cs_len(), 11);
    // A receiver whose block failed asks again with ORIGIN: forwarded, not a hit.
    r.handle_datagram(t, addr(RX2), &request(6, 99, &[(0, 2)], RequestFlags::ORIGIN));
    let out = drain(&mut r);
    assert_eq!(upstream_requests(&out), [[ByteRange::new(0, 200)]]);
    assert!(data_to(&out, RX2).is_empty());
    let up = Request::decode(&out.iter().find(|(to, _)| *to == addr(UP)).unwrap().1).unwrap();
    assert!(up.flags.contains(RequestFlags::ORIGIN), "the flag goes on upstream");

    // Proof requests go where the EID's requests go, and the Proof comes back re-tagged.
    let big: Vec<u8> = (0..40_000u32).map(|i| (i % 253) as u8).collect();
    let cat = MemoryCatalog::new([("big".to_string(), big.clone())]);
    let e = Eid::of(&big);
    let q = ProofRequest {
        flags: RequestFlags(0),
        hop_limit: DEFAULT_HOP_LIMIT,
        tag: 42,
        eid: e,
        block: 0,
        depth: 2,
        options: Options::EMPTY,
    };
    let mut b = vec![0u8; 256];
    let n = q.encode(&mut b).unwrap();
    r.handle_datagram(t, addr(RX1), &b[..n]);
    let out = drain(&mut r);
    let (to, fwd) = &out[0];
    assert_eq!(*to, addr(UP));
    let Ok(Packet::ProofRequest(f)) = Packet::decode(fwd) else { panic!("{out:?}") };
    assert_eq!((f.eid, f.block, f.depth, f.hop_limit), (e, 0, 2, DEFAULT_HOP_LIMIT - 1));
    let mut server = open_server();
    let mut reply = server.handle(t, addr(ME), &cat, fwd);
    let m = reply.next_datagram(&mut b).unwrap();
    r.handle_datagram(t, addr(UP), &b[..m]);
    let out = drain(&mut r);
    let Ok(Packet::Proof(p)) = Packet::decode(&out[0].1) else { panic!("{out:?}") };
    assert_eq!((out[0].0, p.tag, p.hops, p.block), (addr(RX1), 42, 1, 0));
    let expected = crate::tree::Outboard::of(&big).proof(0, 2).unwrap();
    assert_eq!(p.cvs().collect::<Vec<_>>(), expected);
    assert_eq!(r.stats().proofs, 1);
    // A second Proof with the same tag is unsolicited.
    r.handle_datagram(t, addr(UP), &b[..m]);
    assert!(drain(&mut r).is_empty());
}

/// A request for `units` (first, count) listing `anticipated` (first, count) as anticipated
/// interests (S3 §II-A), with annotations already added by routers before this one.
fn anticipating(tag: u32, nonce: u64, units: (u64, u32), anticipated: (u64, u32), before: &[Annotation]) -> Vec<u8> {
    use crate::wire::annotation::write_anticipated;
    let u = u64::from(UNIT);
    let mut opts = [0u8; 512];
    let mut n = write_anticipated(&mut opts, &[ByteRange::new(anticipated.0 * u, anticipated.1 * u32::from(UNIT))]);
    for a in before {
        n += a.write(&mut opts[n..]);
    }
    let r = Request {
        flags: RequestFlags(0),
        hop_limit: DEFAULT_HOP_LIMIT,
        unit: UNIT,
        tag,
        nonce,
        eid: eid(),
        range: ByteRange::new(units.0 * u, units.1 * u32::from(UNIT)),
        options: Options::parse(&opts[..n]).unwrap(),
    };
    let mut b = vec![0u8; r.encoded_len()];
    r.encode(&mut b).unwrap();
    b
}

/// A request for `n` units of `unit` bytes of `eid` from unit `first`.
fn request_units(eid: Eid, unit: u16, tag: u32, first: u64, n: u32) -> Vec<u8> {
    let r = Request {
        flags: RequestFlags(0),
        hop_limit: DEFAULT_HOP_LIMIT,
        unit,
        tag,
        nonce: u64::from(tag) << 8,
        eid,
        range: ByteRange::new(first * u64::from(unit), n * u32::from(unit)),
        options: Options::EMPTY,
    };
    let mut b = vec![0u8; r.encoded_len()];
    r.encode(&mut b).unwrap();
    b
}

use crate::wire::annotation::Annotation;

/// S3 §II-A at one router: a forwarded request carries the list and earlier annotations on,
/// with this router's own (T_I on its clock, the bitmap of the listed units it holds) only
/// if it holds one; a hit carries them back with the nonce and the router's own, returned;
/// the Data coming back through it gets T_D − T_I; nothing of it stays in the router.
#[test]
fn anticipated_interests_are_annotated_carried_and_returned_without_state() {
    let mut r = router(|_| {});
    // The store holds units 4 and 5 (verified: the whole object hashes to its EID).
    assert_eq!(r.preload(eid(), &catalog_bytes(), UNIT, 4..6), Some(2));
    let earlier = Annotation { node: NodeId::label("r0").unwrap(), time: 99, held: 0b1, hops: 0, flags: 0 };
    // Unit 0, listing units 1–6: r1 holds the 4th and 5th listed (bits 3 and 4).
    let t_i = Time::from_millis(10);
    r.handle_datagram(t_i, addr(RX1), &anticipating(7, 0xabc, (0, 1), (1, 6), &[earlier]));
    let out = drain(&mut r);
    let up = out.iter().find(|(to, _)| *to == addr(UP)).unwrap();
    let Ok(Packet::Request(fwd)) = Packet::decode(&up.1) else { panic!() };
    assert_eq!(fwd.options.anticipated().collect::<Vec<_>>(), [ByteRange::new(100, 600)]);
    let anns: Vec<Annotation> = fwd.options.annotations().collect();
    assert_eq!(anns[0], earlier, "earlier annotations unchanged");
    assert_eq!(anns[1], Annotation { node: r.id(), time: t_i.as_nanos(), held: 0b11000, hops: 0, flags: 0 });
    // A request listing only units it does not hold: carried on, nothing added.
    r.handle_datagram(t_i, addr(RX2), &anticipating(8, 0xdef, (1, 1), (2, 2), &[]));
    let out2 = drain(&mut r);
    let Ok(Packet::Request(fwd2)) = Packet::decode(&out2[0].1) else { panic!() };
    assert_eq!((fwd2.options.anticipated().count(), fwd2.options.annotations().count()), (1, 0));
    // The origin answers unit 0 at 30 ms; the Data reaches the receiver with r1's annotation
    // returned: 20 ms spent beyond r1, 0 hops; r0's (not r1's, not returned) untouched.
    let answers = serve(&out);
    r.handle_datagram(Time::from_millis(30), addr(UP), &answers[0]);
    let back = drain(&mut r);
    let d = data_to(&back, RX1);
    assert_eq!((d.len(), d[0].options.request_nonce()), (1, Some(0xabc)));
    let anns: Vec<Annotation> = d[0].options.annotations().collect();
    assert_eq!(anns[0], earlier);
    assert_eq!((anns[1].time, anns[1].hops, anns[1].is_returned()), (20_000_000, 0, true));
    // A hit: unit 4, listing 5–7: r1 holds the first listed; its Data carries it all back.
    r.handle_datagram(Time::from_millis(40), addr(RX2), &anticipating(9, 0x123, (4, 1), (5, 3), &[earlier]));
    let hit = drain(&mut r);
    let d = data_to(&hit, RX2);
    assert!(d[0].flags.contains(DataFlags::CACHED));
    assert_eq!(d[0].options.request_nonce(), Some(0x123));
    assert_eq!(d[0].options.anticipated().collect::<Vec<_>>(), [ByteRange::new(500, 300)]);
    let anns: Vec<Annotation> = d[0].options.annotations().collect();
    assert_eq!(anns, [earlier, Annotation { node: r.id(), time: 0, held: 0b1, hops: 0, flags: Annotation::RETURNED }]);
    // Stateless: once answered, nothing pending remains (unit 1 still waits for the origin).
    assert_eq!(r.pit_len(), 1);
}

/// Annotations are bounded: a request that already carries 8 gets no ninth, and a request
/// listing more than 64 units is refused as malformed.
#[test]
fn annotations_are_bounded() {
    let mut r = router(|_| {});
    assert_eq!(r.preload(eid(), &catalog_bytes(), UNIT, 2..3), Some(1));
    let eight: Vec<Annotation> =
        (0..8).map(|i| Annotation { node: NodeId::from_u64(1000 + i), time: i, held: 1, hops: 0, flags: 0 }).collect();
    r.handle_datagram(Time::ZERO, addr(RX1), &anticipating(3, 5, (0, 1), (1, 2), &eight));
    let out = drain(&mut r);
    let Ok(Packet::Request(fwd)) = Packet::decode(&out[0].1) else { panic!() };
    assert_eq!(fwd.options.annotations().collect::<Vec<_>>(), eight);
    r.handle_datagram(Time::ZERO, addr(RX1), &anticipating(4, 6, (0, 1), (1, 65), &[]));
    let out = drain(&mut r);
    assert_eq!(nacks_to(&out, RX1)[0].code, NackCode::Malformed);
}

/// Annotations and verify before caching together: units still in staging are neither
/// announced in an annotation nor served; once their block verified, a hit carries the
/// request's anticipated interests, its nonce and this router's annotation back in front of
/// the verified payload. A store cannot be warmed with bytes that are not the EID's.
#[test]
fn only_verified_units_are_announced_and_served_with_their_annotations() {
    let mut r = router(|_| {});
    let bytes = catalog_bytes();
    let mut wrong = bytes.clone();
    wrong[150] ^= 1;
    assert_eq!(r.preload(eid(), &wrong, UNIT, 0..11), None);
    assert_eq!(r.cs_len(), 0);
    // Units 4 and 5 came from upstream but the block is not whole: staging only.
    fetch(&mut r, Time::ZERO, RX1, 1, 4, 2);
    assert!(r.cs_len() == 0 && r.staging_bytes() > 0);
    r.handle_datagram(Time::ZERO, addr(RX2), &anticipating(2, 0x77, (0, 1), (1, 6), &[]));
    let out = drain(&mut r);
    let up = upstream(&out);
    let Ok(Packet::Request(fwd)) = Packet::decode(&up[0]) else { panic!() };
    assert_eq!(fwd.options.annotations().count(), 0, "nothing announced from staging");
    for a in serve(&out) {
        r.handle_datagram(Time::ZERO, addr(UP), &a);
    }
    drain(&mut r);
    // The rest of the block: it hashes to the EID and all 11 units are cached.
    fetch(&mut r, Time::ZERO, RX1, 3, 1, 3);
    fetch(&mut r, Time::ZERO, RX1, 4, 6, 5);
    assert_eq!((r.cs_len(), r.staging_bytes(), r.stats().blocks_verified), (11, 0, 1));
    r.handle_datagram(Time::from_millis(1), addr(RX2), &anticipating(5, 0x99, (0, 1), (1, 6), &[]));
    let hit = drain(&mut r);
    assert!(upstream(&hit).is_empty());
    let d = data_to(&hit, RX2);
    assert!(d[0].flags.contains(DataFlags::CACHED));
    assert_eq!(d[0].payload, &bytes[..100]);
    assert_eq!(d[0].options.request_nonce(), Some(0x99));
    let anns: Vec<Annotation> = d[0].options.annotations().collect();
    assert_eq!(anns, [Annotation { node: r.id(), time: 0, held: 0b111111, hops: 0, flags: Annotation::RETURNED }]);
}

/// The datagrams in `out` that go upstream.
fn upstream(out: &[(SocketAddr, Vec<u8>)]) -> Vec<Vec<u8>> {
    out.iter().filter(|(to, _)| *to == addr(UP)).map(|(_, d)| d.clone()).collect()
}

/// What a server holding `cat` answers to everything in `out` that goes upstream.
fn answers(server: &mut Server, cat: &MemoryCatalog, out: &[(SocketAddr, Vec<u8>)]) -> Vec<Vec<u8>> {
    let mut all = vec![];
    let mut buf = vec![0u8; 65536];
    for (_, d) in out.iter().filter(|(to, _)| *to == addr(UP)) {
        let mut reply = server.handle(Time::ZERO, addr(ME), cat, d);
        while let Some(n) = reply.next_datagram(&mut buf) {
            all.push(buf[..n].to_vec());
        }
    }
    all
}

/// An object of three blocks (16 KiB, 16 KiB, 7232 bytes; 16 units of 1 KiB per block) with
/// bytes `i % m`, its EID and catalogue, a server and a router in front of it.
fn three_blocks(m: u32) -> (Vec<u8>, Eid, MemoryCatalog, Server, Router) {
    let data: Vec<u8> = (0..40_000u32).map(|i| (i % m) as u8).collect();
    let e = Eid::of(&data);
    let cat = MemoryCatalog::new([("big".to_string(), data.clone())]);
    (data, e, cat, open_server(), router(|_| {}))
}

#[test]
fn blocks_are_cached_only_once_verified_and_a_forged_block_never() {
    let (data, e, cat, mut server, mut r) = three_blocks(253);
    let t = Time::ZERO;
    let unit = 1024u16;

    // Block 0: forwarded at once, then the router asks for its proof (the whole path,
    // two siblings) and caches nothing until it comes.
    r.handle_datagram(t, addr(RX1), &request_units(e, unit, 1, 0, 16));
    let out = drain(&mut r);
    for a in answers(&mut server, &cat, &out) {
        r.handle_datagram(t, addr(UP), &a);
    }
    let out = drain(&mut r);
    assert_eq!(data_to(&out, RX1).len(), 16, "Data goes downstream before verification");
    let proofs: Vec<_> = out
        .iter()
        .filter_map(|(to, d)| match Packet::decode(d) {
            Ok(Packet::ProofRequest(p)) if *to == addr(UP) => Some((p.block, p.depth)),
            _ => None,
        })
        .collect();
    assert_eq!(proofs, [(0, 2)]);
    assert_eq!((r.cs_len(), r.stats().proofs_requested), (0, 1));
    for a in answers(&mut server, &cat, &out) {
        r.handle_datagram(t, addr(UP), &a);
    }
    assert!(drain(&mut r).is_empty(), "the router's own proof goes to no receiver");
    assert_eq!((r.cs_len(), r.stats().blocks_verified), (16, 1));

    // Block 1 with one byte changed on the way: still forwarded (the receiver checks it
    // and asks again), but its node is known from block 0's proof, the check fails without
    // a round trip, and none of its units is cached.
    r.handle_datagram(t, addr(RX1), &request_units(e, unit, 2, 16, 16));
    let out = drain(&mut r);
    let mut replies = answers(&mut server, &cat, &out);
    let last = replies[5].len() - 1;
    replies[5][last] ^= 0x40;
    for a in &replies {
        r.handle_datagram(t, addr(UP), a);
    }
    let out = drain(&mut r);
    assert_eq!(data_to(&out, RX1).len(), 16);
    assert!(out.iter().all(|(to, _)| *to == addr(RX1)), "no proof needed: {}", out.len());
    assert_eq!((r.cs_len(), r.stats().blocks_failed, r.staging_bytes()), (16, 1, 0));

    // Block 2 (the short last one): its node is known too, verified on arrival.
    r.handle_datagram(t, addr(RX1), &request_units(e, unit, 3, 32, 8));
    let out = drain(&mut r);
    for a in answers(&mut server, &cat, &out) {
        r.handle_datagram(t, addr(UP), &a);
    }
    drain(&mut r);
    assert_eq!((r.cs_len(), r.stats().blocks_verified, r.stats().proofs_requested), (24, 2, 1));

    // Another receiver: blocks 0 and 2 from the store, block 1 from upstream, all right.
    r.handle_datagram(t, addr(RX2), &request_units(e, unit, 4, 0, 40));
    let out = drain(&mut r);
    let hits = data_to(&out, RX2);
    assert_eq!(hits.len(), 24);
    for d in &hits {
        assert_eq!(d.payload, &data[d.offset as usize..d.offset as usize + d.payload.len()]);
    }
    let up = upstream_requests(&out);
    assert_eq!(up, [[ByteRange::new(16 * 1024, 16 * 1024)]]);

    // Proofs of verified blocks are answered here (the origin may be unreachable);
    // with ORIGIN, or for a block whose nodes the router does not know, they go upstream.
    let outboard = crate::tree::Outboard::of(&data);
    let ask = |r: &mut Router, tag: u32, block: u64, depth: u8, flags: u8| {
        let q = ProofRequest {
            flags: RequestFlags(flags),
            hop_limit: DEFAULT_HOP_LIMIT,
            tag,
            eid: e,
            block,
            depth,
            options: Options::EMPTY,
        };
        let mut b = vec![0u8; 256];
        let n = q.encode(&mut b).unwrap();
        r.handle_datagram(t, addr(RX2), &b[..n]);
        drain(r)
    };
    // Block 1 failed here, but its siblings are nodes block 0's proof taught.
    for (block, depth) in [(0, 2), (0, 1), (2, 1), (1, 2)] {
        let out = ask(&mut r, 7, block, depth, 0);
        let Ok(Packet::Proof(p)) = Packet::decode(&out[0].1) else { panic!("{out:?}") };
        assert_eq!(
            (out.len(), out[0].0, p.tag, p.block, p.served_by.to_string()),
            (1, addr(RX2), 7, block, "r1".into())
        );
        assert_eq!(p.cvs().collect::<Vec<_>>(), outboard.proof(block, depth.into()).unwrap());
    }
    assert_eq!(r.stats().proofs_served, 4);
    let out = ask(&mut r, 8, 0, 2, RequestFlags::ORIGIN);
    assert!(matches!(Packet::decode(&out[0].1), Ok(Packet::ProofRequest(_))) && out[0].0 == addr(UP));
    assert_eq!(r.stats().proofs_served, 4);
}

#[test]
fn a_forged_proof_caches_nothing_and_proofs_from_strangers_are_ignored() {
    let (_, e, cat, mut server, mut r) = three_blocks(251);
    let t = Time::ZERO;
    r.handle_datagram(t, addr(RX1), &request_units(e, 1024, 1, 0, 16));
    let out = drain(&mut r);
    for a in answers(&mut server, &cat, &out) {
        r.handle_datagram(t, addr(UP), &a);
    }
    let out = drain(&mut r);
    let mut proof = answers(&mut server, &cat, &out).pop().unwrap();
    // The same Proof from another address: not the one asked, ignored.
    r.handle_datagram(t, addr(RX2), &proof);
    assert_eq!((r.cs_len(), r.stats().blocks_failed), (0, 0));
    // A sibling changed: the block fails, nothing is cached, staging is empty.
    let last = proof.len() - 1;
    proof[last] ^= 1;
    r.handle_datagram(t, addr(UP), &proof);
    assert_eq!((r.cs_len(), r.stats().blocks_failed, r.staging_bytes()), (0, 1, 0));
    // The real one, late: its request is answered already, nothing happens.
    proof[last] ^= 1;
    r.handle_datagram(t, addr(UP), &proof);
    assert_eq!((r.cs_len(), r.stats().blocks_verified), (0, 0));

    // A proof lost on the way is asked for again (soon: 3 smoothed proof round trips, at
    // least 20 ms; up to 8 times in all).
    r.handle_datagram(t, addr(RX1), &request_units(e, 1024, 2, 0, 16));
    let out = drain(&mut r);
    for a in answers(&mut server, &cat, &out) {
        r.handle_datagram(t, addr(UP), &a);
    }
    drain(&mut r); // the proof request, lost
    let mut now = t;
    let mut asked = 1;
    while let Some(at) = r.poll_timeout() {
        now = at;
        r.handle_timeout(now);
        let out = drain(&mut r);
        asked += out.iter().filter(|(_, d)| matches!(Packet::decode(d), Ok(Packet::ProofRequest(_)))).count();
        if asked == 3 {
            // The third gets through.
            for a in answers(&mut server, &cat, &out) {
                r.handle_datagram(now, addr(UP), &a);
            }
            break;
        }
    }
    assert_eq!((asked, r.cs_len(), r.stats().blocks_verified), (3, 16, 1));
    assert!(now - t < Duration::from_millis(100), "asked again within tens of ms: {:?}", now - t);
}

#[test]
fn learned_routes_are_exported_once_and_taught_to_another_core() {
    let names = addr(30);
    let mut a = router(|c| {
        c.fib = Fib::new(None);
        c.fib.add(format!("obj={names}").parse().unwrap());
        c.export_learned_routes = true;
    });
    let mut b = router(|c| {
        c.fib = Fib::new(None);
        c.export_learned_routes = true;
    });
    let mut d = [0u8; 64];
    let n = ResolveRequest { hop_limit: 4, tag: 3, query: Query::Name("obj"), options: Options::EMPTY }
        .encode(&mut d)
        .unwrap();
    a.handle_datagram(Time::ZERO, addr(RX1), &d[..n]);
    let out = drain(&mut a);
    let (mut server, cat, mut buf) = (open_server(), catalog(), vec![0u8; 2048]);
    let mut reply = server.handle(Time::ZERO, addr(ME), &cat, &out[0].1);
    let m = reply.next_datagram(&mut buf).unwrap();
    a.handle_datagram(Time::ZERO, names, &buf[..m]);
    assert_eq!(a.poll_learned_route(), Some((eid(), names)));
    assert_eq!(a.poll_learned_route(), None);
    // Without the route, the other core cannot forward a request for the EID; with it, it can.
    let req = request(5, 1, &[(0, 1)], 0);
    b.handle_datagram(Time::ZERO, addr(RX1), &req);
    assert_eq!(b.stats().no_route, 1);
    drain(&mut b);
    b.learn_route(eid(), names);
    b.handle_datagram(Time::ZERO, addr(RX1), &request(6, 2, &[(0, 1)], 0));
    let out = drain(&mut b);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, names);
    assert_eq!(b.poll_learned_route(), None, "a taught route is not exported again");
}

/// Warming a path without packets (seed 003's warm-up): the first fetch leaves every unit in
/// every store on the way (indiscriminate caching), the second is answered by the nearest;
/// a store too small for the object loses each unit before the next fetch reaches it (LRU
/// evicts the oldest: the head goes first), so the second fetch comes from further away.
#[test]
fn warm_fetches_fill_the_path_as_requests_and_data_would() {
    let mut near = router(|c| c.cs = CsConfig { capacity_units: 4, ..CsConfig::default() });
    let mut far = router(|_| {});
    let mut path = [&mut near, &mut far];
    assert_eq!(Router::warm_fetch(&mut path, eid(), &catalog_bytes(), UNIT), Some(vec![0, 0]));
    assert_eq!((near.cs_len(), far.cs_len()), (4, 11));
    // The near store holds the last four units, 7–10.
    assert!((7..11).all(|u| near.cs_contains(&eid(), u * u64::from(UNIT))));
    let mut path = [&mut near, &mut far];
    assert_eq!(Router::warm_fetch(&mut path, eid(), &catalog_bytes(), UNIT), Some(vec![0, 11]));
    // A store large enough answers everything the second time.
    let mut big = router(|_| {});
    let mut path = [&mut big, &mut far];
    assert_eq!(Router::warm_fetch(&mut path, eid(), &catalog_bytes(), UNIT), Some(vec![0, 11]));
    let mut path = [&mut big, &mut far];
    assert_eq!(Router::warm_fetch(&mut path, eid(), &catalog_bytes(), UNIT), Some(vec![11, 0]));
    // What is offered goes through admission; bytes that do not hash to the EID never.
    let mut never = router(|c| c.cs = CsConfig { admission: Admission::Never, ..CsConfig::default() });
    assert_eq!(Router::warm_fetch(&mut [&mut never], eid(), &catalog_bytes(), UNIT), Some(vec![0]));
    assert_eq!(never.cs_len(), 0);
    let mut wrong = catalog_bytes();
    wrong[5] ^= 1;
    assert_eq!(Router::warm_fetch(&mut [&mut never], eid(), &wrong, UNIT), None);
}

/// The cores of one runtime (issue 23): they share one store (`Router::with_store`), so a
/// unit one caches is a hit at the other, and each picks its tags in its own class
/// (`RouterConfig::tags`), so the runtime can hand every answer to the core that asked.
#[test]
fn routers_sharing_a_store_hit_each_others_units_and_pick_tags_of_their_class() {
    let tags_to_upstream = |out: &[(SocketAddr, Vec<u8>)]| -> Vec<u32> {
        out.iter()
            .filter(|(to, _)| *to == addr(UP))
            .map(|(_, d)| match Packet::decode(d).unwrap() {
                Packet::Request(r) => r.tag,
                p => panic!("not a request: {p:?}"),
            })
            .collect()
    };
    let mut a = router(|c| c.tags = TagClass { modulus: 3, residue: 2 });
    let mut config_b = RouterConfig {
        id: NodeId::label("r1").unwrap(),
        fib: Fib::new(Some(addr(UP))),
        validation: open(),
        tags: TagClass { modulus: 3, residue: 1 },
        ..Default::default()
    };
    config_b.cs.capacity_units = 1; // not used: the store is a's
    let mut b = Router::with_store(config_b, a.store());
    assert!(a.store().same(&b.store()));
    // Units one at a time, so that a sends many requests upstream.
    for u in 0..11 {
        let out = fetch(&mut a, Time::ZERO, RX1, 100 + u as u32, u, 1);
        let tags = tags_to_upstream(&out);
        assert_eq!(tags.len(), 1);
        assert!(tags.iter().all(|t| t % 3 == 2), "{tags:?}");
    }
    assert_eq!((a.cs_len(), b.cs_len()), (11, 11), "one store");
    // b answers the whole object from what a cached, sends nothing upstream.
    b.handle_datagram(Time::ZERO, addr(RX2), &request(7, 77, &[(0, 11)], 0));
    let out = drain(&mut b);
    assert_eq!(data_to(&out, RX2).len(), 11);
    assert!(tags_to_upstream(&out).is_empty());
    assert_eq!((b.stats().cs_hits, a.stats().cs_hits), (11, 0));
    assert_eq!(a.cs_stats(), b.cs_stats(), "one store, one set of counters");
    // A re-request from the origin goes upstream under b's class of tags.
    b.handle_datagram(Time::ZERO, addr(RX2), &request(8, 88, &[(0, 11)], RequestFlags::ORIGIN));
    let tags = tags_to_upstream(&drain(&mut b));
    assert!(!tags.is_empty() && tags.iter().all(|t| t % 3 == 1), "{tags:?}");
}

// ----- issue 23 item 10: the router's own proof requests under a growing queue ------------

/// The proof requests (block, tag) among `out`, going upstream.
fn proof_requests(out: &[(SocketAddr, Vec<u8>)]) -> Vec<(u64, u32)> {
    out.iter()
        .filter(|(to, _)| *to == addr(UP))
        .filter_map(|(_, d)| match Packet::decode(d) {
            Ok(Packet::ProofRequest(p)) => Some((p.block, p.tag)),
            _ => None,
        })
        .collect()
}

/// Block 0 of a three-block object fetched through `r` at `t`; returns the router's proof
/// request for it (lost: not answered).
fn block0_and_its_proof_request(
    r: &mut Router,
    server: &mut Server,
    cat: &MemoryCatalog,
    e: Eid,
    t: Time,
) -> Vec<(SocketAddr, Vec<u8>)> {
    r.handle_datagram(t, addr(RX1), &request_units(e, 1024, 1, 0, 16));
    let out = drain(r);
    for a in answers(server, cat, &out) {
        r.handle_datagram(t, addr(UP), &a);
    }
    let out = drain(r);
    assert_eq!(proof_requests(&out).len(), 1);
    out
}

/// The upstream answers the first attempt only after the router asked again: that answer
/// is accepted (the block verifies and is cached at once), it teaches the router the long
/// round trip (an unambiguous sample: its tag names the attempt), and the second attempt's
/// answer is late. Before: dropped as unsolicited, the block waited for attempt 2's answer,
/// and the round trip was never learned.
#[test]
fn the_answer_to_an_earlier_proof_attempt_is_accepted_and_sampled() {
    let (_, e, cat, mut server, mut r) = three_blocks(251);
    let t = Time::ZERO;
    let first = block0_and_its_proof_request(&mut r, &mut server, &cat, e, t);
    // No sample yet: asked again after 1 s (a quarter of the 4 s pending lifetime).
    let again = r.poll_timeout().unwrap();
    assert_eq!(again, t + Duration::from_secs(1));
    r.handle_timeout(again);
    let second = drain(&mut r);
    let (a1, a2) = (proof_requests(&first)[0], proof_requests(&second)[0]);
    assert_eq!((a1.0, a2.0), (0, 0));
    assert_ne!(a1.1, a2.1, "each attempt has its own tag");
    // The first attempt's answer, 1.2 s after it left.
    let late = t + Duration::from_millis(1200);
    for a in answers(&mut server, &cat, &first) {
        r.handle_datagram(late, addr(UP), &a);
    }
    assert_eq!((r.cs_len(), r.stats().blocks_verified, r.stats().proofs_late), (16, 1, 0));
    assert_eq!(r.own_proofs.rtt().srtt(), Some(Duration::from_millis(1200)), "sampled from attempt 1's send time");
    // The second attempt's answer: late, changes nothing.
    for a in answers(&mut server, &cat, &second) {
        r.handle_datagram(late, addr(UP), &a);
    }
    assert_eq!((r.cs_len(), r.stats().blocks_verified, r.stats().proofs_late), (16, 1, 1));
    assert_eq!(r.stats().proofs_requested, 2);
}

/// A proof that is never answered is asked for again after 1, 2, 4, 4, 4 s (doubling up to
/// the pending lifetime), 6 times in all, then the block is given up (not cached). Before:
/// every 1 s (3 × no sample: a quarter of the lifetime), 8 times.
#[test]
fn unanswered_proof_requests_back_off_and_give_up() {
    let (_, e, cat, mut server, mut r) = three_blocks(251);
    let t = Time::ZERO;
    block0_and_its_proof_request(&mut r, &mut server, &cat, e, t);
    let mut sent = vec![t];
    while let Some(at) = r.poll_timeout().filter(|&at| at < t + Duration::from_secs(60)) {
        r.handle_timeout(at);
        sent.extend(proof_requests(&drain(&mut r)).iter().map(|_| at));
    }
    let gaps: Vec<u64> = sent.windows(2).map(|w| (w[1] - w[0]).as_secs()).collect();
    assert_eq!(gaps, [1, 2, 4, 4, 4]);
    let s = r.stats();
    assert_eq!((s.proofs_requested, s.proof_retries, s.proofs_given_up, r.cs_len()), (6, 5, 1, 0));
}

/// A slow upstream whose queue grows the whole time (each proof waits behind more Data than
/// the one before, as in seed 001's Topology 1 behind a standing queue): 200 blocks, one
/// every 5 ms, each proof answered `10 ms + growth × t` after it was asked (at t = 1 s: 260
/// ms with growth 0.25, 1 s with growth 1), and in one case every 20th answer lost. Every
/// block verifies, and the proof requests stay within the blocks, the lost answers and a few
/// retries. Before: once the round trip outgrew 3 early ones, no answer was ever in time,
/// each block was asked 8 times and almost none verified.
#[test]
fn proof_requests_stay_near_one_per_block_under_a_growing_queue() {
    let data: Vec<u8> = (0..200 * 16_384u32).map(|i| (i % 241) as u8).collect();
    let e = Eid::of(&data);
    let cat = MemoryCatalog::new([("big".to_string(), data)]);
    for (growth, lose_every) in [(0.25, 0), (1.0, 0), (0.25, 20)] {
        let mut answered = 0;
        let mut server = open_server();
        let mut r = router(|_| {});
        // Proof answers due at a time, in order of arrival.
        let mut due: Vec<(Time, Vec<u8>)> = vec![];
        let mut now = Time::ZERO;
        // Whatever the router sends: Data requests answered at once, proof requests after
        // the queue's delay.
        let mut step = |r: &mut Router, server: &mut Server, due: &mut Vec<(Time, Vec<u8>)>, now: Time| loop {
            let out = drain(r);
            if out.is_empty() {
                break;
            }
            let delay = Duration::from_millis(10) + Duration::from_secs_f64(now.as_secs_f64() * growth);
            for a in answers(server, &cat, &out) {
                match Packet::decode(&a) {
                    Ok(Packet::Proof(_)) => {
                        answered += 1;
                        if lose_every == 0 || answered % lose_every != 0 {
                            due.push((now + delay, a));
                        }
                    }
                    _ => r.handle_datagram(now, addr(UP), &a),
                }
            }
        };
        for k in 0..200u64 {
            let at = Time::from_millis(5 * k);
            // Everything due before the next block's Data: answers and timeouts, in time order.
            loop {
                let next_due = due.iter().map(|d| d.0).min();
                let next = [next_due, r.poll_timeout()].into_iter().flatten().min();
                let Some(next) = next.filter(|&n| n <= at) else { break };
                now = now.max(next);
                if let Some(i) = due.iter().position(|d| d.0 <= now) {
                    let (_, a) = due.remove(i);
                    r.handle_datagram(now, addr(UP), &a);
                } else {
                    r.handle_timeout(now);
                }
                step(&mut r, &mut server, &mut due, now);
            }
            now = at;
            r.handle_datagram(now, addr(RX1), &request_units(e, 16_384, 1 + k as u32, k, 1));
            step(&mut r, &mut server, &mut due, now);
        }
        // The rest of the answers and timeouts.
        loop {
            let next = [due.iter().map(|d| d.0).min(), r.poll_timeout()].into_iter().flatten().min();
            let Some(next) = next else { break };
            now = now.max(next);
            if let Some(i) = due.iter().position(|d| d.0 <= now) {
                let (_, a) = due.remove(i);
                r.handle_datagram(now, addr(UP), &a);
            } else {
                r.handle_timeout(now);
            }
            step(&mut r, &mut server, &mut due, now);
        }
        let s = r.stats().clone();
        eprintln!(
            "growth {growth}, every {lose_every}th answer lost (0: none): {} proof requests ({} retries, {} late, {} given up), {} blocks verified",
            s.proofs_requested, s.proof_retries, s.proofs_late, s.proofs_given_up, s.blocks_verified,
        );
        assert_eq!(s.blocks_verified, 200, "growth {growth}: {s:?}");
        let lost = 200u64.checked_div(lose_every).map_or(0, |n| n + 1);
        assert!(s.proofs_requested <= 200 + lost + 16, "growth {growth}: {s:?}");
    }
}

/// The experiment-only baseline (feature `unverified-cache`, ns-3 only): units are cached as
/// they arrive, without a proof request — a forged one too, which is why `rdtp route`
/// cannot do this.
#[cfg(feature = "unverified-cache")]
#[test]
fn the_unverified_baseline_caches_at_once_and_asks_no_proof() {
    let (data, e, cat, mut server, mut r) = three_blocks(251);
    r.cache_unverified_for_experiments(true);
    let t = Time::ZERO;
    r.handle_datagram(t, addr(RX1), &request_units(e, 1024, 1, 0, 16));
    let out = drain(&mut r);
    let mut replies = answers(&mut server, &cat, &out);
    let last = replies[3].len() - 1;
    replies[3][last] ^= 1;
    for a in &replies {
        r.handle_datagram(t, addr(UP), a);
    }
    let out = drain(&mut r);
    assert!(proof_requests(&out).is_empty());
    assert_eq!((r.cs_len(), r.stats().proofs_requested, r.stats().blocks_verified), (16, 0, 0));
    // The forged unit is served from the store.
    r.handle_datagram(t, addr(RX2), &request_units(e, 1024, 2, 3, 1));
    let hit = drain(&mut r);
    let d = &data_to(&hit, RX2)[0];
    assert_ne!(d.payload, &data[3 * 1024..4 * 1024]);
}

/// A router whose store caches nothing (switched off) verifies nothing either: no proof
/// request for a unit that could never be cached (before issue 23 it asked for them all).
#[test]
fn a_router_with_its_store_off_asks_for_no_proof() {
    let (_, e, cat, mut server, _) = three_blocks(251);
    for cs in [
        CsConfig { admission: Admission::Never, ..CsConfig::default() },
        CsConfig { capacity_units: 0, ..CsConfig::default() },
    ] {
        let mut r = router(|c| c.cs = cs.clone());
        r.handle_datagram(Time::ZERO, addr(RX1), &request_units(e, 1024, 1, 0, 16));
        let out = drain(&mut r);
        for a in answers(&mut server, &cat, &out) {
            r.handle_datagram(Time::ZERO, addr(UP), &a);
        }
        let out = drain(&mut r);
        assert_eq!(data_to(&out, RX1).len(), 16, "{cs:?}");
        assert!(proof_requests(&out).is_empty(), "{cs:?}");
        assert_eq!((r.stats().proofs_requested, r.staging_bytes(), r.cs_len()), (0, 0, 0), "{cs:?}");
    }
}

#[test]
fn control_capacity_bounds_the_resolves_pending_upstream() {
    let mut b = [0u8; 64];
    let resolve = |tag: u32, b: &mut [u8]| {
        let n =
            ResolveRequest { hop_limit: 8, tag, query: Query::Name("obj"), options: Options::EMPTY }.encode(b).unwrap();
        b[..n].to_vec()
    };
    for (spec, forwarded) in [("control_capacity=2", 2), ("", 3)] {
        let mut r = router(|c| c.apply_spec(spec).unwrap());
        for (i, rx) in [RX1, RX2, 3].into_iter().enumerate() {
            r.handle_datagram(Time::ZERO, addr(rx), &resolve(i as u32, &mut b));
        }
        let up = drain(&mut r).into_iter().filter(|(to, _)| *to == addr(UP)).count();
        assert_eq!(up, forwarded, "{spec:?}");
    }
}
