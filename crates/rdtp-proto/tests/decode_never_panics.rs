//! Property tests: no byte string makes the decoder, the server, a router or a receiver
//! panic; and well-formed requests with real EIDs get exactly the object's bytes.

use proptest::prelude::*;
use rdtp_proto::Time;
use rdtp_proto::receiver::{Receiver, ReceiverConfig, Target};
use rdtp_proto::server::{MemoryCatalog, Server, ServerConfig};
use rdtp_proto::token::ValidationConfig;
use rdtp_proto::wire::{Packet, REQUEST_HEADER_LEN};
/// The receivers' peer: every hostile datagram here comes from it (an attacker spoofs it).
const PEER: &str = "192.0.2.2:6000";

fn catalog() -> MemoryCatalog {
    MemoryCatalog::new([("x".to_string(), vec![7u8; 10_000])])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = Packet::decode(&bytes);
    }

    /// Bytes behind a valid prefix reach the per-type decoders; whatever decodes
    /// re-encodes to a datagram that decodes to the same packet (reserved bytes are
    /// ignored on receipt and sent as zero, so the bytes themselves may differ there).
    #[test]
    fn arbitrary_bodies(ty in 0u8..10, body in proptest::collection::vec(any::<u8>(), 0..256)) {
        let mut d = vec![b'R', b'D', rdtp_proto::wire::VERSION, ty];
        d.extend_from_slice(&body);
        if let Ok(p) = Packet::decode(&d) {
            let mut out = vec![0u8; d.len() + 16];
            let n = p.encode(&mut out).unwrap();
            prop_assert_eq!(n, d.len());
            prop_assert_eq!(Packet::decode(&out[..n]).unwrap(), p);
        }
    }

    /// Requests with arbitrary header fields and option areas never panic the server, and
    /// every reply datagram decodes.
    #[test]
    fn server_answers_anything(fields in proptest::collection::vec(any::<u8>(), REQUEST_HEADER_LEN - 4..REQUEST_HEADER_LEN + 64)) {
        let mut d = vec![b'R', b'D', rdtp_proto::wire::VERSION, 1];
        d.extend_from_slice(&fields);
        let cat = catalog();
        let from: std::net::SocketAddr = "192.0.2.1:9".parse().unwrap();
        let open = ValidationConfig { enabled: false, ..ValidationConfig::default() };
        for validating in [true, false] {
            let mut server = match validating {
                true => Server::default(),
                false => Server::new(ServerConfig { validation: open.clone(), ..ServerConfig::default() }),
            };
            let mut reply = server.handle(Time::ZERO, from, &cat, &d);
            let mut buf = vec![0u8; 65536];
            let (mut count, mut bytes) = (0, 0);
            while let Some(n) = reply.next_datagram(&mut buf) {
                prop_assert!(Packet::decode(&buf[..n]).is_ok());
                count += 1;
                bytes += n;
                prop_assert!(count <= 300);
            }
            // Toward an address it has not validated, at most 3× what came from there.
            if validating {
                prop_assert!(bytes <= 3 * d.len(), "{} bytes answered {}", bytes, d.len());
            }
        }
    }

    /// A receiver in the middle of a transfer survives arbitrary datagrams, including
    /// well-formed Data for its own EID with arbitrary offsets, sizes and payloads.
    #[test]
    fn receiver_survives_anything(
        datagrams in proptest::collection::vec(
            (any::<bool>(), any::<u64>(), any::<u64>(), proptest::collection::vec(any::<u8>(), 0..1500)),
            1..40,
        )
    ) {
        let cat = catalog();
        let (eid, size) = rdtp_proto::server::Catalog::resolve(&cat, "x").unwrap();
        let mut rx = Receiver::new(ReceiverConfig::default(), PEER.parse().unwrap(), Target::Known { eid, size }, Time::ZERO);
        let mut buf = vec![0u8; 2048];
        let mut t = Time::ZERO;
        for (as_data, offset, total, bytes) in datagrams {
            while rx.poll_transmit(t, &mut buf).is_some() {}
            if as_data {
                let d = rdtp_proto::wire::Data {
                    flags: rdtp_proto::wire::DataFlags(0),
                    hops: 0,
                    tag: 1,
                    eid,
                    offset: offset % (size + 10),
                    total_size: if total % 2 == 0 { size } else { total },
                    served_by: rdtp_proto::NodeId::ORIGIN,
                    options: rdtp_proto::wire::Options::EMPTY,
                    payload: &bytes[..bytes.len().min(1412)],
                };
                let mut out = vec![0u8; 2048];
                if let Ok(n) = d.encode(&mut out) {
                    rx.handle_datagram(t, PEER.parse().unwrap(), &out[..n]);
                }
            } else {
                rx.handle_datagram(t, PEER.parse().unwrap(), &bytes);
            }
            t += core::time::Duration::from_millis(1);
            rx.handle_timeout(t);
            let _ = rx.read(&mut buf);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5_000))]

    /// Any sequence of datagrams from any of three peers (one of them the router's upstream)
    /// never panics a router, whatever it queues decodes, and its tables stay bounded.
    #[test]
    fn router_takes_anything(
        datagrams in proptest::collection::vec(
            (0u8..3, 0u8..8, proptest::collection::vec(any::<u8>(), 0..160)),
            1..30,
        )
    ) {
        use std::net::SocketAddr;
        use rdtp_proto::router::{Router, RouterConfig, fib::Fib, MAX_DATAGRAM};
        let peer = |i: u8| SocketAddr::from(([10, 0, 0, i + 1], 7447));
        let cfg = RouterConfig { fib: Fib::new(Some(peer(2))), pit_capacity: 64, ..RouterConfig::default() };
        let mut router = Router::new(cfg);
        let mut buf = vec![0u8; MAX_DATAGRAM];
        for (i, (p, ty, body)) in datagrams.into_iter().enumerate() {
            let mut d = vec![b'R', b'D', rdtp_proto::wire::VERSION, ty];
            d.extend_from_slice(&body);
            let now = Time::from_millis(i as u64 * 700);
            router.handle_datagram(now, peer(p), &d);
            router.handle_timeout(now);
            while let Some(t) = router.poll_transmit(now, &mut buf) {
                prop_assert!(Packet::decode(&buf[..t.len]).is_ok());
            }
            prop_assert!(router.pit_len() <= 64);
        }
    }
}

/// An option area of seed 003's items with arbitrary contents and counts (within and beyond
/// the bounds): an `ANTICIPATED` list, a nonce, annotations, in a shuffled order.
fn annotation_area() -> impl Strategy<Value = Vec<u8>> {
    use rdtp_proto::wire::annotation::Annotation;
    (
        proptest::collection::vec((any::<u64>(), any::<u32>()), 0..10),
        proptest::option::of(any::<u64>()),
        proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u64>(), any::<u8>(), any::<u8>()), 0..10),
        any::<bool>(),
    )
        .prop_map(|(ranges, nonce, anns, small)| {
            let mut v = Vec::new();
            if !ranges.is_empty() {
                v.push(0x02);
                v.extend_from_slice(&((ranges.len() * 12) as u16).to_be_bytes());
                for (o, l) in ranges {
                    // Small values too, so that some lists are valid for a 1000-byte unit.
                    let (o, l) = if small { (o % 50_000 * 1000, l % 80 * 1000) } else { (o, l) };
                    v.extend_from_slice(&o.to_be_bytes());
                    v.extend_from_slice(&l.to_be_bytes());
                }
            }
            if let Some(n) = nonce {
                let at = v.len();
                v.resize(at + 11, 0);
                rdtp_proto::wire::annotation::write_request_nonce(&mut v[at..], n);
            }
            for (node, time, held, hops, flags) in anns {
                let a = Annotation { node: rdtp_proto::NodeId::from_u64(node % 4), time, held, hops, flags };
                let at = v.len();
                v.resize(at + 29, 0);
                a.write(&mut v[at..]);
            }
            v
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    /// Seed 003's options in Requests and Data: decoding never panics and round-trips; the
    /// routers' in-place rewrite on the way back never panics, keeps the length and leaves a
    /// decodable Data decodable; a router and a server answer such requests with datagrams
    /// that decode, and the router keeps nothing once they are answered.
    #[test]
    fn anticipated_interests_and_annotations(opts in annotation_area(), unit in 64u16..2000, now in any::<u64>()) {
        use rdtp_proto::wire::{ByteRange, Data, DataFlags, Options, Request, RequestFlags};
        use rdtp_proto::wire::annotation::on_return;
        let Ok(options) = Options::parse(&opts) else { return Ok(()) };
        let cat = catalog();
        let (eid, size) = rdtp_proto::server::Catalog::resolve(&cat, "x").unwrap();
        let req = Request {
            flags: RequestFlags(0),
            hop_limit: 8,
            unit,
            tag: 1,
            nonce: 2,
            eid,
            range: ByteRange::new(0, u32::from(unit)),
            options,
        };
        let mut rbuf = vec![0u8; req.encoded_len()];
        req.encode(&mut rbuf).unwrap();
        prop_assert_eq!(Packet::decode(&rbuf).unwrap(), Packet::Request(req));
        let d = Data {
            flags: DataFlags(0),
            hops: 0,
            tag: 1,
            eid,
            offset: 0,
            total_size: size,
            served_by: rdtp_proto::NodeId::ORIGIN,
            options,
            payload: &[1, 2, 3],
        };
        let mut dbuf = vec![0u8; d.encoded_len()];
        d.encode(&mut dbuf).unwrap();
        for me in 0..4 {
            on_return(&mut dbuf, rdtp_proto::NodeId::from_u64(me), now);
            prop_assert_eq!(dbuf.len(), d.encoded_len());
            prop_assert!(Packet::decode(&dbuf).is_ok());
        }
        // Through a router to a server and back.
        use std::net::SocketAddr;
        use rdtp_proto::router::{Router, RouterConfig, fib::Fib, MAX_DATAGRAM};
        let (rx, up): (SocketAddr, SocketAddr) = ("10.0.0.1:1".parse().unwrap(), "10.0.0.2:2".parse().unwrap());
        let open = ValidationConfig { enabled: false, ..ValidationConfig::default() };
        let mut router = Router::new(RouterConfig { fib: Fib::new(Some(up)), validation: open.clone(), ..RouterConfig::default() });
        let mut server = Server::new(ServerConfig { validation: open, ..ServerConfig::default() });
        router.handle_datagram(Time::ZERO, rx, &rbuf);
        let mut buf = vec![0u8; MAX_DATAGRAM];
        let mut upstream = vec![];
        while let Some(t) = router.poll_transmit(Time::ZERO, &mut buf) {
            prop_assert!(Packet::decode(&buf[..t.len]).is_ok());
            if t.to == up {
                upstream.push(buf[..t.len].to_vec());
            }
        }
        for u in upstream {
            let mut reply = server.handle(Time::ZERO, "10.0.0.3:3".parse().unwrap(), &cat, &u);
            let mut answers = vec![];
            while let Some(n) = reply.next_datagram(&mut buf) {
                answers.push(buf[..n].to_vec());
            }
            for a in answers {
                prop_assert!(Packet::decode(&a).is_ok());
                router.handle_datagram(Time::from_millis(1), up, &a);
            }
        }
        while let Some(t) = router.poll_transmit(Time::ZERO, &mut buf) {
            prop_assert!(Packet::decode(&buf[..t.len]).is_ok());
        }
        prop_assert_eq!(router.pit_len(), 0);
    }

    /// A `cctcp` receiver mid-transfer survives Data that answer its own requests (their
    /// tags and nonces right, as a forger on the path could make them) with arbitrary
    /// anticipated lists and annotations, and from arbitrary sources.
    #[test]
    fn cctcp_receiver_survives_forged_annotations(
        datagrams in proptest::collection::vec((any::<u64>(), annotation_area()), 1..30)
    ) {
        use rdtp_proto::wire::{Data, DataFlags, Options};
        let cat = catalog();
        let (eid, size) = rdtp_proto::server::Catalog::resolve(&cat, "x").unwrap();
        let cfg = ReceiverConfig { cc: "cctcp".parse().unwrap(), unit: 1000, ..ReceiverConfig::default() };
        let mut rx = Receiver::new(cfg, PEER.parse().unwrap(), Target::Known { eid, size }, Time::ZERO);
        let mut buf = vec![0u8; 2048];
        let mut asked: Vec<(u32, u64, u64)> = vec![];
        let mut t = Time::ZERO;
        for (pick, mut opts) in datagrams {
            while let Some(tx) = rx.poll_transmit(t, &mut buf) {
                if let Ok(Packet::Request(r)) = Packet::decode(&buf[..tx.len]) {
                    asked.push((r.tag, r.nonce, r.range.offset));
                }
            }
            if asked.is_empty() {
                break;
            }
            let (tag, nonce, offset) = asked[(pick % asked.len() as u64) as usize];
            let Ok(o) = Options::parse(&opts) else { continue };
            if o.request_nonce().is_some() {
                continue;
            }
            let at = opts.len();
            opts.resize(at + 11, 0);
            rdtp_proto::wire::annotation::write_request_nonce(&mut opts[at..], nonce);
            let Ok(options) = Options::parse(&opts) else { continue };
            let len = (size - offset).min(1000) as usize;
            let payload = vec![7u8; len];
            let d = Data {
                flags: DataFlags(if pick % 2 == 0 { DataFlags::CACHED } else { 0 }),
                hops: (pick % 5) as u8,
                tag,
                eid,
                offset,
                total_size: size,
                served_by: rdtp_proto::NodeId::from_u64(pick % 3),
                options,
                payload: &payload,
            };
            let mut out = vec![0u8; 4096];
            if let Ok(n) = d.encode(&mut out) {
                rx.handle_datagram(t, PEER.parse().unwrap(), &out[..n]);
            }
            t += core::time::Duration::from_millis(1 + pick % 50);
            rx.handle_timeout(t);
            let _ = rx.read(&mut buf);
            prop_assert!(rx.controller().path_states().len() <= 32);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    /// Well-formed requests for an object the server has (its real EID), with arbitrary
    /// units, ranges, extra ranges and flags, reach the Data-sending path: every reply
    /// decodes, every Data carries exactly the object's bytes at its offset, nothing past the
    /// end, and no reply is larger than the per-request byte cap.
    #[test]
    fn server_data_path_with_valid_eids(
        unit in 64u16..=4096,
        offset in 0u64..40_000,
        units in 1u32..300,
        extra in proptest::collection::vec((0u64..40_000, 1u32..8), 0..6),
        flags in any::<u8>(),
    ) {
        use rdtp_proto::server::Catalog;
        use rdtp_proto::wire::tlv::{extra_ranges_len, write_extra_ranges};
        use rdtp_proto::wire::{ByteRange, DEFAULT_HOP_LIMIT, Options, Request, RequestFlags};
        let content: Vec<u8> = (0..33_333u32).map(|i| (i * 31 % 251) as u8).collect();
        let cat = MemoryCatalog::new([("obj".to_string(), content.clone())]);
        let (eid, _) = cat.resolve("obj").unwrap();
        let ranges: Vec<ByteRange> =
            extra.iter().map(|&(o, n)| ByteRange::new(o, n * u32::from(unit))).collect();
        let mut opts = vec![0u8; extra_ranges_len(ranges.len())];
        write_extra_ranges(&mut opts, &ranges);
        let req = Request {
            flags: RequestFlags(flags),
            hop_limit: DEFAULT_HOP_LIMIT,
            unit,
            tag: 77,
            nonce: 1,
            eid,
            range: ByteRange::new(offset, units.saturating_mul(u32::from(unit))),
            options: Options::parse(&opts).unwrap(),
        };
        let mut d = vec![0u8; req.encoded_len()];
        req.encode(&mut d).unwrap();
        let open = ValidationConfig { enabled: false, ..ValidationConfig::default() };
        let config = ServerConfig { validation: open, ..ServerConfig::default() };
        let cap = config.max_reply_bytes as usize;
        let mut server = Server::new(config);
        let from: std::net::SocketAddr = "192.0.2.1:9".parse().unwrap();
        let mut reply = server.handle(Time::ZERO, from, &cat, &d);
        let mut buf = vec![0u8; 65536];
        let (mut bytes, mut data) = (0usize, 0usize);
        while let Some(n) = reply.next_datagram(&mut buf) {
            bytes += n;
            match Packet::decode(&buf[..n]) {
                Ok(Packet::Data(x)) => {
                    data += 1;
                    let o = x.offset as usize;
                    prop_assert_eq!(x.tag, 77);
                    prop_assert!(o + x.payload.len() <= content.len());
                    prop_assert!(x.payload.len() <= usize::from(unit));
                    prop_assert_eq!(x.payload, &content[o..o + x.payload.len()]);
                }
                Ok(Packet::Nack(_)) => {}
                other => prop_assert!(false, "unexpected reply {:?}", other),
            }
        }
        prop_assert!(bytes <= cap, "{} bytes for one request", bytes);
        // Within the server's limits, a primary range starting inside the object gets Data.
        let total = u64::from(units) + extra.iter().map(|&(_, n)| u64::from(n)).sum::<u64>();
        let within = total <= 256 && total * (u64::from(unit) + 70) <= cap as u64;
        if within && offset < content.len() as u64 {
            prop_assert!(data > 0, "no Data for an acceptable request");
        }
    }
}
