//! The test vectors of docs/PROTOCOL.md: each is decoded, its fields checked, and re-encoded
//! to the same bytes. The document is the source of the bytes; this file holds their meaning.

use rdtp_proto::tree::{self, Outboard, Verifier};
use rdtp_proto::wire::annotation::{Annotation, on_return};
use rdtp_proto::wire::{ByteRange, DEFAULT_HOP_LIMIT, Data, DataFlags, NackCode, Options, Packet, Query, RequestFlags};
use rdtp_proto::{Eid, NodeId};

mod common;
use common::vector;

fn eid() -> Eid {
    Eid(core::array::from_fn(|i| i as u8))
}

/// Decode, let `check` inspect, re-encode and compare.
fn round_trip(name: &str, check: impl FnOnce(&Packet<'_>)) {
    let bytes = vector(name);
    let p = Packet::decode(&bytes).unwrap_or_else(|e| panic!("vector {name}: {e}"));
    check(&p);
    let mut out = vec![0u8; bytes.len() + 16];
    let n = p.encode(&mut out).unwrap();
    assert_eq!(hex::encode(&out[..n]), hex::encode(&bytes), "vector {name} re-encodes differently");
}

#[test]
fn request_basic() {
    round_trip("request-basic", |p| {
        let Packet::Request(r) = p else { panic!("{p:?}") };
        assert_eq!(r.flags, RequestFlags(0));
        assert_eq!(
            (r.hop_limit, r.unit, r.tag, r.nonce, r.eid),
            (DEFAULT_HOP_LIMIT, 1402, 1, 0x0011_2233_4455_6677, eid())
        );
        assert_eq!(r.range, ByteRange::new(0, 11216));
        assert_eq!(r.ranges().count(), 1);
        assert_eq!(r.total_units(), 8);
        assert!(r.validate().is_ok());
    });
}

#[test]
fn request_ranges() {
    round_trip("request-ranges", |p| {
        let Packet::Request(r) = p else { panic!("{p:?}") };
        assert!(r.flags.contains(RequestFlags::RETRANSMISSION));
        assert_eq!((r.hop_limit, r.tag, r.nonce), (31, 0x0102_0304, 0x8899_aabb_ccdd_eeff));
        assert_eq!(
            r.ranges().collect::<Vec<_>>(),
            [ByteRange::new(14020, 1402), ByteRange::new(28040, 2804), ByteRange::new(5_608_000_000, 1402)]
        );
        assert_eq!(r.total_units(), 4);
    });
}

#[test]
fn data_cached() {
    round_trip("data-cached", |p| {
        let Packet::Data(d) = p else { panic!("{p:?}") };
        assert!(d.flags.contains(DataFlags::LAST) && d.flags.contains(DataFlags::CACHED));
        assert_eq!((d.hops, d.tag, d.eid, d.offset, d.total_size), (1, 7, eid(), 1402, 1414));
        assert_eq!(d.served_by, "ap".parse::<NodeId>().unwrap());
        assert_eq!(d.options.raw(), b"");
        assert_eq!(d.payload, b"twelve bytes");
    });
}

/// Issue 23 item 11: a router's copy for a request that joined another's pending entry.
#[test]
fn data_coalesced() {
    round_trip("data-coalesced", |p| {
        let Packet::Data(d) = p else { panic!("{p:?}") };
        assert_eq!(d.flags, DataFlags(DataFlags::COALESCED));
        assert_eq!((d.hops, d.tag, d.eid, d.offset, d.total_size), (1, 9, eid(), 0, 5000));
        assert_eq!((d.served_by, d.options.raw(), d.payload), (NodeId::ORIGIN, &b""[..], &b"twelve bytes"[..]));
    });
    // What r1 makes of the origin's Data (answering r1's own tag) for that receiver.
    let origin = Data {
        flags: DataFlags(0),
        hops: 0,
        tag: 0x5151_5151,
        eid: eid(),
        offset: 0,
        total_size: 5000,
        served_by: NodeId::ORIGIN,
        options: Options::EMPTY,
        payload: b"twelve bytes",
    };
    let mut dg = vec![0u8; origin.encoded_len()];
    origin.encode(&mut dg).unwrap();
    rdtp_proto::wire::rewrite_response(&mut dg, 9);
    rdtp_proto::wire::set_hops(&mut dg, 1);
    rdtp_proto::wire::set_data_flags(&mut dg, DataFlags::COALESCED);
    assert_eq!(hex::encode(&dg), hex::encode(vector("data-coalesced")));
}

/// Seed 003 §II-A: a request listing anticipated units, annotated by router r1.
#[test]
fn request_anticipated() {
    round_trip("request-anticipated", |p| {
        let Packet::Request(r) = p else { panic!("{p:?}") };
        assert_eq!((r.hop_limit, r.unit, r.tag, r.nonce), (31, 1000, 0x0a0b_0c0d, 0x0102_0304_0506_0708));
        assert_eq!(r.range, ByteRange::new(0, 1000));
        assert!(r.validate().is_ok());
        assert_eq!(r.options.anticipated_offsets(1000).collect::<Vec<_>>(), [1000, 2000, 3000, 4000]);
        let a: Vec<Annotation> = r.options.annotations().collect();
        assert_eq!(
            a,
            [Annotation { node: NodeId::label("r1").unwrap(), time: 100_000_000_000, held: 0b110, hops: 0, flags: 0 }]
        );
        assert_eq!(r.options.request_nonce(), None);
    });
}

/// Its answer from the origin, back through r2 and r1, and what a receiver computes from it.
#[test]
fn data_annotated() {
    round_trip("data-annotated", |p| {
        let Packet::Data(d) = p else { panic!("{p:?}") };
        assert_eq!((d.hops, d.tag, d.offset, d.total_size, d.served_by), (2, 5, 0, 5000, NodeId::ORIGIN));
        assert_eq!(d.options.request_nonce(), Some(0x0102_0304_0506_0708));
        assert_eq!(d.options.anticipated().collect::<Vec<_>>(), [ByteRange::new(1000, 4000)]);
        let a: Vec<Annotation> = d.options.annotations().collect();
        let returned = |name: &str, ms: u64, held: u64, hops: u8| Annotation {
            node: NodeId::label(name).unwrap(),
            time: ms * 1_000_000,
            held,
            hops,
            flags: Annotation::RETURNED,
        };
        assert_eq!(a, [returned("r1", 20, 0b110, 0), returned("r2", 12, 0b1000, 1)]);
        // Eq. 1 with 22 ms at the receiver.
        let rtt: Vec<u64> = a.iter().map(|x| 22 - x.time / 1_000_000).collect();
        assert_eq!(rtt, [2, 10]);
        assert_eq!(d.payload, b"twelve bytes");
    });
    // The same bytes come out of the origin's echo of the request r2 forwarded (r1's, plus
    // r2's annotation) and the rewrite on the way back (at r2 12 ms after it forwarded the
    // request, at r1 20 ms after).
    let request = vector("request-anticipated");
    let Ok(Packet::Request(req)) = Packet::decode(&request) else { panic!() };
    let r2 = Annotation { node: NodeId::label("r2").unwrap(), time: 7, held: 0b1000, hops: 0, flags: 0 };
    let mut opts = req.options.raw().to_vec();
    let mut item = [0u8; 29];
    r2.write(&mut item);
    opts.extend_from_slice(&item);
    // The origin's echo: the list and the annotations as they came, then the nonce.
    let at = opts.len();
    opts.resize(at + 11, 0);
    rdtp_proto::wire::annotation::write_request_nonce(&mut opts[at..], req.nonce);
    let d = Data {
        flags: DataFlags(0),
        hops: 0,
        tag: 5,
        eid: eid(),
        offset: 0,
        total_size: 5000,
        served_by: NodeId::ORIGIN,
        options: Options::parse(&opts).unwrap(),
        payload: b"twelve bytes",
    };
    let mut dg = vec![0u8; d.encoded_len()];
    d.encode(&mut dg).unwrap();
    // Each router rewrites the annotations, and adds one to the Data's hop count.
    on_return(&mut dg, NodeId::label("r2").unwrap(), 7 + 12_000_000);
    rdtp_proto::wire::set_hops(&mut dg, 1);
    on_return(&mut dg, NodeId::label("r1").unwrap(), 100_000_000_000 + 20_000_000);
    rdtp_proto::wire::set_hops(&mut dg, 2);
    assert_eq!(hex::encode(&dg), hex::encode(vector("data-annotated")));
}

#[test]
fn nack_unknown() {
    round_trip("nack-unknown", |p| {
        let Packet::Nack(n) = p else { panic!("{p:?}") };
        assert_eq!(
            (n.code, n.hops, n.tag, n.eid, n.offset, n.length),
            (NackCode::UnknownContent, 0, 9, eid(), 0, 1402)
        );
        assert_eq!((n.from, n.detail), (NodeId::ORIGIN, "no object with this EID"));
    });
}

#[test]
fn nack_busy() {
    round_trip("nack-busy", |p| {
        let Packet::Nack(n) = p else { panic!("{p:?}") };
        assert_eq!((n.code, n.hops, n.tag, n.offset, n.length), (NackCode::Busy, 0, 11, 14020, 1402));
        assert_eq!((n.from.to_string().as_str(), n.detail), ("ap", "pending-request table full"));
    });
}

#[test]
fn resolve_vectors() {
    round_trip("resolve-name", |p| {
        let Packet::ResolveRequest(r) = p else { panic!("{p:?}") };
        assert_eq!((r.hop_limit, r.tag, r.query), (DEFAULT_HOP_LIMIT, 3, Query::Name("videos/intro.mp4")));
        assert_eq!(r.options.address_token(), Some(&TOKEN[..]));
    });
    round_trip("resolve-eid", |p| {
        let Packet::ResolveRequest(r) = p else { panic!("{p:?}") };
        assert_eq!((r.tag, r.query), (4, Query::Eid(eid())));
        assert_eq!(r.options.address_token(), None);
    });
    round_trip("resolve-response", |p| {
        let Packet::ResolveResponse(r) = p else { panic!("{p:?}") };
        assert_eq!((r.tag, r.eid, r.size, r.name), (3, eid(), 1_000_000, "videos/intro.mp4"));
    });
}

#[test]
fn list_vectors() {
    round_trip("list-request", |p| {
        let Packet::ListRequest(r) = p else { panic!("{p:?}") };
        assert_eq!((r.hop_limit, r.tag, r.cursor), (DEFAULT_HOP_LIMIT, 5, 0));
        assert_eq!(r.options.raw(), b"");
    });
    round_trip("list-response", |p| {
        let Packet::ListResponse(r) = p else { panic!("{p:?}") };
        assert_eq!((r.more, r.tag, r.cursor, r.total, r.len()), (false, 5, 0, 2, 2));
        let e: Vec<_> = r.entries().map(|e| (e.name, e.size, e.eid)).collect();
        assert_eq!(e[0], ("a.txt", 5, eid()));
        assert_eq!(e[1], ("b/c.bin", 1 << 33, Eid(core::array::from_fn(|i| 0xa0 + i as u8))));
    });
}

/// The token in vectors `resolve-name` and `retry`: epoch 7, then the MAC.
const TOKEN: [u8; 20] =
    [0, 0, 0, 7, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff];

#[test]
fn retry_vector() {
    round_trip("retry", |p| {
        let Packet::Retry(r) = p else { panic!("{p:?}") };
        assert_eq!((r.tag, r.token), (3, &TOKEN[..]));
    });
    // Smaller than the smallest request it can answer (RFC 9000 §8's 3× holds for it).
    // (the smallest request is a ResolveRequest for a 1-byte name without options: 15 bytes).
    assert!(vector("retry").len() <= 3 * 15);
}

/// The object of the proof vectors: 32 768 bytes (two blocks), byte `i` = `i mod 251`.
fn two_blocks() -> Vec<u8> {
    (0..32_768u32).map(|i| (i % 251) as u8).collect()
}

#[test]
fn proof_request_vector() {
    let eid = Eid::of(&two_blocks());
    round_trip("proof-request", |p| {
        let Packet::ProofRequest(q) = p else { panic!("{p:?}") };
        assert!(q.flags.contains(RequestFlags::ORIGIN));
        assert_eq!((q.hop_limit, q.tag, q.eid, q.block, q.depth), (DEFAULT_HOP_LIMIT, 9, eid, 0, 1));
        assert_eq!(q.options.address_token(), Some(&TOKEN[..]));
    });
}

#[test]
fn proof_vector() {
    let content = two_blocks();
    let eid = Eid::of(&content);
    let outboard = Outboard::of(&content);
    assert_eq!(outboard.root(), eid);
    round_trip("proof", |p| {
        let Packet::Proof(pr) = p else { panic!("{p:?}") };
        assert_eq!((pr.hops, pr.tag, pr.eid, pr.block, pr.served_by), (0, 9, eid, 0, NodeId::ORIGIN));
        let cvs: Vec<_> = pr.cvs().collect();
        // The sibling of block 0 is block 1's chaining value, and it rebuilds the EID.
        assert_eq!(cvs, outboard.proof(0, 1).unwrap());
        assert_eq!(cvs, vec![tree::block_cv(1, &content[16_384..])]);
        assert_eq!(tree::proof_depth(content.len() as u64, 0), 1);
        let mut v = Verifier::new(eid, content.len() as u64);
        v.verify(0, &content[..16_384], &cvs).unwrap();
        v.verify(1, &content[16_384..], &[]).unwrap();
    });
}

#[test]
fn every_vector_in_the_document_is_tested() {
    let vectors = common::vectors();
    let named: Vec<&str> = vectors.iter().map(|(n, _)| n.as_str()).collect();
    let tested = [
        "request-basic",
        "request-ranges",
        "data-cached",
        "data-coalesced",
        "request-anticipated",
        "data-annotated",
        "nack-unknown",
        "nack-busy",
        "resolve-name",
        "resolve-eid",
        "resolve-response",
        "list-request",
        "list-response",
        "retry",
        "proof-request",
        "proof",
    ];
    assert_eq!(named, tested, "PROTOCOL.md and this test list different vectors");
}
