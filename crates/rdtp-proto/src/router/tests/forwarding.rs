//! Issue 23's forwarding rules: per-source limits (item 4), the hop-limit clamp and "never
//! back where it came from" for every kind (item 8), and a silent next hop named in a
//! `NoRoute` (item 14).

use std::collections::VecDeque;

use super::*;

fn ms(n: u64) -> Time {
    Time::from_millis(n)
}

// ----- item 8: hop limits and loops between two routers --------------------------------

/// The four kinds a router forwards, each with hop limit 255 (the most a sender can set).
fn every_kind() -> Vec<(&'static str, Vec<u8>)> {
    let mut b = [0u8; 512];
    let options = Options::EMPTY;
    let n = ResolveRequest { hop_limit: 255, tag: 3, query: Query::Name("obj"), options }.encode(&mut b).unwrap();
    let resolve = b[..n].to_vec();
    let n = ListRequest { hop_limit: 255, tag: 4, cursor: 0, options }.encode(&mut b).unwrap();
    let list = b[..n].to_vec();
    let proof =
        ProofRequest { flags: RequestFlags(0), hop_limit: 255, tag: 5, eid: eid(), block: 0, depth: 1, options };
    let n = proof.encode(&mut b).unwrap();
    let proof = b[..n].to_vec();
    let mut request = request(6, 77, &[(0, 2)], 0);
    request[5] = 255; // the hop limit
    assert_eq!(Request::decode(&request).unwrap().hop_limit, 255);
    vec![("resolve", resolve), ("list", list), ("proof request", proof), ("request", request)]
}

/// Routers `a` and `b` whose default routes point at each other (a misconfiguration), and a
/// receiver sending `first` to `a`. Each router listens on its address and sends its
/// answers from there; with `other_socket` it sends its requests from another address, as
/// `rdtp route` did from an upstream socket of its own before issue 23. Runs the exchange
/// to its end: what reached the receiver, and how many requests went between the routers.
fn between_two_routers(first: &[u8], other_socket: bool) -> (Vec<Vec<u8>>, usize) {
    let (a, b) = (addr(21), addr(22));
    let upstream_socket = |x: SocketAddr| SocketAddr::new(x.ip(), x.port() + 1);
    let mk = |id: &str, up: SocketAddr| {
        Router::new(RouterConfig {
            id: NodeId::label(id).unwrap(),
            fib: Fib::new(Some(up)),
            validation: open(),
            ..Default::default()
        })
    };
    let mut nodes = [(a, mk("a", b)), (b, mk("b", a))];
    let mut wire: VecDeque<(SocketAddr, SocketAddr, Vec<u8>)> = VecDeque::from([(addr(RX1), a, first.to_vec())]);
    let (mut at_receiver, mut between) = (vec![], 0);
    while let Some((from, to, d)) = wire.pop_front() {
        assert!(between < 1000, "circulates");
        if to == addr(RX1) {
            at_receiver.push(d);
            continue;
        }
        let (me, r) = nodes.iter_mut().find(|(x, _)| *x == to || upstream_socket(*x) == to).unwrap();
        r.handle_datagram(Time::ZERO, from, &d);
        let me = *me;
        for (dst, out) in drain(r) {
            let request = PacketType::is_request_byte(out[3]);
            if request {
                between += 1;
            }
            let src = if request && other_socket { upstream_socket(me) } else { me };
            wire.push_back((src, dst, out));
        }
    }
    (at_receiver, between)
}

/// Item 8: a router never sends a request of any kind back to the peer it came from, so two
/// routers routing to each other refuse at once; and however high a sender sets the hop
/// limit, a loop the rule cannot see (peers known under other addresses) carries a resolve,
/// list or proof request at most `MAX_HOP_LIMIT` times (a request's nonce stops it sooner).
#[test]
fn two_routers_routing_to_each_other_refuse_at_once_and_hop_limits_are_clamped() {
    for (kind, first) in every_kind() {
        let (back, between) = between_two_routers(&first, false);
        assert_eq!((back.len(), between), (1, 1), "{kind}: one forward, one answer");
        let Ok(Packet::Nack(n)) = Packet::decode(&back[0]) else { panic!("{kind}: {back:?}") };
        assert_eq!((n.code, n.from.to_string().as_str(), n.hops), (NackCode::NoRoute, "b", 1), "{kind}");
        assert!(n.detail.contains("leads back where the request came from"), "{kind}: {}", n.detail);

        let (back, between) = between_two_routers(&first, true);
        assert_eq!(back.len(), 1, "{kind}");
        let Ok(Packet::Nack(n)) = Packet::decode(&back[0]) else { panic!("{kind}: {back:?}") };
        if kind == "request" {
            assert_eq!((n.code, between), (NackCode::Duplicate, 2), "{kind}: the nonce came back");
        } else {
            assert_eq!(n.code, NackCode::HopLimit, "{kind}");
            assert_eq!(between, 32, "{kind}: hop limit 255 clamped to the 32 receivers send");
            assert_eq!(MAX_HOP_LIMIT, DEFAULT_HOP_LIMIT);
        }
    }
}

#[test]
fn forwarded_hop_limits_are_one_less_and_never_above_the_clamp() {
    for (sent, forwarded) in [(1u8, 0u8), (2, 1), (32, 31), (33, 31), (255, 31)] {
        let mut r = router(|_| {});
        let mut req = request(1, 1, &[(0, 1)], 0);
        req[5] = sent;
        r.handle_datagram(Time::ZERO, addr(RX1), &req);
        let out = drain(&mut r);
        let Ok(Packet::Request(up)) = Packet::decode(&out[0].1) else { panic!() };
        assert_eq!(up.hop_limit, forwarded, "sent with {sent}");
    }
}

// ----- item 14: a silent next hop --------------------------------------------------------

fn resolve(tag: u32) -> Vec<u8> {
    let mut b = [0u8; 64];
    let n = ResolveRequest { hop_limit: DEFAULT_HOP_LIMIT, tag, query: Query::Name("obj"), options: Options::EMPTY }
        .encode(&mut b)
        .unwrap();
    b[..n].to_vec()
}

/// Item 14: a next hop that answers nothing at all for the upstream timeout (2 s), asked
/// three times, is named
/// in a `NoRoute` from the router to everyone waiting on it — units and resolves — and not
/// a moment before. Then the hop is presumed dead: one request at a time goes to it as a
/// probe, the others are refused at once (the store still answers what it holds), and the
/// hop is used again as soon as it answers.
#[test]
fn a_silent_upstream_is_named_in_a_no_route_after_the_timeout_and_not_before() {
    let mut r = router(|c| {
        c.upstream_timeout = Some(Duration::from_secs(2));
        c.lifetime = Duration::from_secs(4);
    });
    r.handle_datagram(ms(0), addr(RX1), &request(5, 1, &[(0, 3)], 0));
    r.handle_datagram(ms(500), addr(RX2), &resolve(8));
    // A third attempt (the hop must leave three unanswered: liveness.rs).
    r.handle_datagram(ms(1000), addr(RX2), &resolve(11));
    assert_eq!(drain(&mut r).len(), 3, "all forwarded");
    assert_eq!(r.poll_timeout(), Some(ms(2000)), "the upstream's deadline, before the lifetime");
    r.handle_timeout(ms(1999));
    assert!(drain(&mut r).is_empty());
    r.handle_timeout(ms(2000));
    let out = drain(&mut r);
    let expected = "upstream 10.0.0.9:7447 did not answer within 2 s";
    let n = nacks_to(&out, RX1);
    assert_eq!(n.len(), 1);
    assert_eq!((n[0].code, n[0].tag, n[0].offset, n[0].length), (NackCode::NoRoute, 5, 0, 300));
    assert_eq!((n[0].from.to_string().as_str(), n[0].hops, n[0].detail), ("r1", 0, expected));
    let n = nacks_to(&out, RX2);
    assert_eq!(n.len(), 2);
    let mut tags: Vec<u32> = n.iter().map(|n| n.tag).collect();
    tags.sort_unstable();
    assert_eq!(tags, [8, 11]);
    assert!(n.iter().all(|n| n.code == NackCode::NoRoute && n.detail == expected));
    assert_eq!((r.pit_len(), r.stats().upstream_timeouts, r.stats().no_route), (0, 1, 5));

    // Presumed dead. The next request is a probe: forwarded, and it waits.
    r.handle_datagram(ms(2100), addr(RX1), &request(6, 2, &[(0, 3)], 0));
    let probe = drain(&mut r);
    assert_eq!(upstream_requests(&probe).len(), 1);
    // Meanwhile new units are refused at once; units the store holds are still served.
    assert_eq!(r.preload(eid(), &catalog_bytes(), UNIT, 8..11), Some(3));
    r.handle_datagram(ms(2200), addr(RX2), &request(7, 3, &[(300, 2), (800, 3)], 0));
    let out = drain(&mut r);
    assert!(upstream_requests(&out).is_empty());
    let n = nacks_to(&out, RX2);
    assert_eq!((n.len(), n[0].code, n[0].offset, n[0].length, n[0].detail), (1, NackCode::NoRoute, 300, 200, expected));
    assert_eq!(data_to(&out, RX2).len(), 3, "hits");
    // A request joining the probe's units waits with it.
    r.handle_datagram(ms(2300), addr(RX2), &request(9, 4, &[(0, 1)], 0));
    assert!(drain(&mut r).is_empty());
    // The hop comes back: the probe is answered, and the hop is used again.
    for a in serve(&probe) {
        r.handle_datagram(ms(2400), addr(UP), &a);
    }
    let out = drain(&mut r);
    assert_eq!((data_to(&out, RX1).len(), data_to(&out, RX2).len()), (3, 1));
    r.handle_datagram(ms(2500), addr(RX2), &request(10, 5, &[(300, 2)], 0));
    assert_eq!(upstream_requests(&drain(&mut r)).len(), 1);
    r.handle_timeout(ms(4499));
    assert!(drain(&mut r).is_empty());
}

/// Slow Data is not silence: a hop that answers anything within the timeout is alive, and a
/// request it answers late is delivered, not refused.
#[test]
fn a_slow_upstream_is_not_a_silent_one() {
    let mut r = router(|c| c.upstream_timeout = Some(Duration::from_secs(2)));
    r.handle_datagram(ms(0), addr(RX1), &request(5, 1, &[(0, 3)], 0));
    let first = drain(&mut r);
    r.handle_datagram(ms(1500), addr(RX2), &request(6, 2, &[(300, 2)], 0));
    let second = drain(&mut r);
    for a in serve(&first) {
        r.handle_datagram(ms(1900), addr(UP), &a);
    }
    assert_eq!(data_to(&drain(&mut r), RX1).len(), 3);
    r.handle_timeout(ms(3600));
    assert!(drain(&mut r).is_empty(), "heard from at 1.9 s: nothing refused");
    for a in serve(&second) {
        r.handle_datagram(ms(3700), addr(UP), &a);
    }
    assert_eq!(data_to(&drain(&mut r), RX2).len(), 2);
    assert_eq!((r.stats().upstream_timeouts, r.stats().no_route), (0, 0));
    // Without a timeout configured, nothing is refused: entries just expire.
    let mut r = router(|c| c.upstream_timeout = None);
    r.handle_datagram(ms(0), addr(RX1), &request(5, 1, &[(0, 3)], 0));
    drain(&mut r);
    assert_eq!(r.poll_timeout(), Some(ms(4000)));
}

// ----- item 4: per-source limits ---------------------------------------------------------

const FLOODER: u8 = 3;

/// A request for `units` units of 64 B of a made-up EID (number `i`).
fn flood_request(i: u64, units: u32) -> Vec<u8> {
    let mut e = Eid([0xf1; 32]);
    e.0[..8].copy_from_slice(&i.to_be_bytes());
    request_units(e, 64, i as u32 + 1000, 0, units)
}

/// Item 4: a source alone may use the whole pending table, but once another source asks, it
/// gets no new entries beyond its share (half, with two) unless more than a third of the
/// table is free: the other always finds that much room.
#[test]
fn a_source_holds_at_most_its_share_of_the_pending_table() {
    let mut r = router(|c| {
        c.pit_capacity = 1000;
        c.source_limits.rate = None;
    });
    r.handle_datagram(ms(0), addr(RX1), &request(1, 1, &[(0, 8)], 0));
    assert_eq!(upstream_requests(&drain(&mut r)).len(), 1);
    for i in 0..4 {
        r.handle_datagram(ms(1), addr(FLOODER), &flood_request(i, 256));
    }
    let out = drain(&mut r);
    assert_eq!(r.pit_len(), 8 + 659, "the flooder stops where a third of the table is left");
    let busy = nacks_to(&out, FLOODER);
    assert!(busy.iter().all(|n| n.code == NackCode::Busy && n.detail == SOURCE_SHARE_DETAIL), "{busy:?}");
    let refused: u64 = busy.iter().map(|n| u64::from(n.length) / 64).sum();
    assert_eq!((refused, r.stats().source_limited), (1024 - 659, 1024 - 659));
    // The first source finds room for all it asks, up to its share.
    r.handle_datagram(ms(2), addr(RX1), &request(2, 2, &[(800, 3)], 0));
    let out = drain(&mut r);
    assert!(nacks_to(&out, RX1).is_empty());
    assert_eq!(upstream_requests(&out).len(), 1);
    r.handle_datagram(ms(3), addr(RX1), &request_units(eid(), 64, 3, 100, 256));
    r.handle_datagram(ms(3), addr(RX1), &request_units(eid(), 64, 4, 356, 74));
    let out = drain(&mut r);
    assert!(nacks_to(&out, RX1).is_empty(), "{:?}", nacks_to(&out, RX1));
    assert_eq!(r.pit_len(), 8 + 659 + 3 + 256 + 74, "the table is full: the flooder held 659, not 992");
    // Alone (the first source idle for longer than the active window), a source may use it all.
    let mut r = router(|c| {
        c.pit_capacity = 1000;
        c.source_limits.rate = None;
    });
    for i in 0..4 {
        r.handle_datagram(ms(1), addr(FLOODER), &flood_request(i, 256));
    }
    assert_eq!(r.pit_len(), 1000);
}

/// Item 4: a source asking for far more than the forwarding rate (a flood of 256-unit
/// requests for made-up EIDs, each answered by the server with one Nack) is held to what the
/// others leave of it — and pays 4 for each unit the server refuses — while a source within
/// its share gets everything it asks for.
#[test]
fn a_flooder_gets_what_the_forwarding_rate_leaves_and_a_modest_source_all_it_asks() {
    let mut r = router(|c| c.source_limits.rate = Some(100_000.0));
    let mut server = open_server();
    let (mut honest, mut flood_forwarded) = (0u64, 0u64);
    let mut shared_busy = 0;
    // One second: the flooder every 0.125 ms (2 M units/s asked), the receiver 11 units
    // every ms (11 000 units/s, with ORIGIN so that each is forwarded).
    for tick in 0..8000u64 {
        let now = Time::ZERO + Duration::from_micros(tick * 125);
        r.handle_datagram(now, addr(FLOODER), &flood_request(tick, 256));
        if tick % 8 == 0 {
            let tag = tick as u32 / 8 + 1;
            r.handle_datagram(now, addr(RX1), &request(tag, u64::from(tag), &[(0, 11)], RequestFlags::ORIGIN));
        }
        let out = drain(&mut r);
        flood_forwarded += upstream_requests_from(&out)
            .iter()
            .filter(|q| q.eid != eid())
            .map(|q| q.ranges().map(|g| u64::from(g.length) / 64).sum::<u64>())
            .sum::<u64>();
        shared_busy += nacks_to(&out, FLOODER).iter().filter(|n| n.detail == SOURCE_SHARE_DETAIL).count();
        for a in serve_with(&mut server, &out) {
            r.handle_datagram(now, addr(UP), &a);
        }
        let back = drain(&mut r);
        honest += data_to(&back, RX1).len() as u64;
        assert!(nacks_to(&back, RX1).is_empty() && nacks_to(&out, RX1).is_empty());
    }
    assert_eq!(honest, 1000 * 11, "the modest source got every unit");
    // What the modest source leaves of the rate (100 000 − 11 000 units/s), a unit refused
    // upstream (made-up EID) costing the flooder 4, plus a burst (100 ms) and a request.
    assert!((20_000..=30_000).contains(&flood_forwarded), "flood forwarded {flood_forwarded}");
    assert!(shared_busy > 7000, "{shared_busy} requests refused");
    assert_eq!(r.stats().source_limited, 8000 * 256 - flood_forwarded);
}

fn upstream_requests_from(out: &[(SocketAddr, Vec<u8>)]) -> Vec<Request<'_>> {
    out.iter().filter(|(to, _)| *to == addr(UP)).filter_map(|(_, d)| Request::decode(d).ok()).collect()
}

/// The downstreams waiting on pending units are bounded in all, not only per entry: a
/// table of N entries holds at most N further downstreams (one per entry on average), so
/// its memory stays bounded whatever the pattern — 65 536 entries of 64 downstreams each
/// would be ≈ 200 MB (issue 23, item 2). Beyond, a new downstream gets `Busy`; one already
/// waiting may still ask again (its tag is updated), and the room comes back as entries go.
#[test]
fn downstreams_waiting_on_pending_units_are_bounded_in_all() {
    let mut r = router(|c| {
        c.pit_capacity = 100;
        c.max_waiting = 64;
        c.source_limits.rate = None;
    });
    // 100 entries, no upstream answer.
    r.handle_datagram(ms(0), addr(RX1), &request(1, 1, &[(0, 100)], 0));
    assert_eq!(upstream_requests(&drain(&mut r)).len(), 1);
    assert_eq!(r.pit_len(), 100);
    // 10 more receivers each ask for all of it: 1000 joins wanted, 100 allowed.
    let mut busy = 0;
    for rx in 0..10u8 {
        r.handle_datagram(ms(1), addr(100 + rx), &request(10 + u32::from(rx), 10 + u64::from(rx), &[(0, 100)], 0));
        busy += nacks_to(&drain(&mut r), 100 + rx)
            .iter()
            .filter(|n| n.code == NackCode::Busy)
            .map(|n| u64::from(n.length) / u64::from(UNIT))
            .sum::<u64>();
    }
    assert_eq!(r.pit.joined(), 100);
    assert_eq!((r.stats().coalesced, busy), (100, 900));
    // A receiver already waiting asks again: allowed, nothing more is held.
    r.handle_datagram(ms(2), addr(100), &request(99, 99, &[(0, 100)], 0));
    assert!(nacks_to(&drain(&mut r), 100).is_empty());
    assert_eq!(r.pit.joined(), 100);
    // The entries expire: the room comes back.
    r.handle_timeout(ms(2) + Duration::from_secs(60));
    assert_eq!((r.pit_len(), r.pit.joined()), (0, 0));
}
