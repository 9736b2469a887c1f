//! The test vectors of docs/PROTOCOL.md: each is decoded, its fields checked, and re-encoded
//! to the same bytes. The document is the source of the bytes; this file holds their meaning.

use rdtp_proto::Eid;
use rdtp_proto::wire::{ByteRange, DataFlags, NackCode, Packet, Query, RequestFlags};

const PROTOCOL_MD: &str = include_str!("../../../docs/PROTOCOL.md");

/// The bytes of vector `name`: the ```hex block after the line "Vector `name`:".
fn vector(name: &str) -> Vec<u8> {
    let marker = format!("Vector `{name}`:");
    let at = PROTOCOL_MD.find(&marker).unwrap_or_else(|| panic!("vector {name} missing from PROTOCOL.md"));
    let rest = &PROTOCOL_MD[at..];
    let start = rest.find("```hex").expect("hex block") + "```hex".len();
    let end = start + rest[start..].find("```").expect("end of block");
    let hex: String = rest[start..end]
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.chars().filter(|c| !c.is_whitespace()))
        .collect();
    hex::decode(&hex).unwrap_or_else(|e| panic!("vector {name}: bad hex: {e}"))
}

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
        assert_eq!((r.unit, r.tag, r.eid), (1412, 1, eid()));
        assert_eq!(r.range, ByteRange::new(0, 11296));
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
        assert_eq!(r.tag, 0x0102_0304);
        assert_eq!(
            r.ranges().collect::<Vec<_>>(),
            [ByteRange::new(14120, 1412), ByteRange::new(28240, 2824), ByteRange::new(5_648_000_000, 1412)]
        );
        assert_eq!(r.total_units(), 4);
    });
}

#[test]
fn data_last() {
    round_trip("data-last", |p| {
        let Packet::Data(d) = p else { panic!("{p:?}") };
        assert!(d.flags.contains(DataFlags::LAST));
        assert_eq!((d.tag, d.eid, d.offset, d.total_size), (7, eid(), 1412, 1424));
        assert_eq!(d.payload, b"twelve bytes");
    });
}

#[test]
fn nack_unknown() {
    round_trip("nack-unknown", |p| {
        let Packet::Nack(n) = p else { panic!("{p:?}") };
        assert_eq!((n.code, n.tag, n.eid, n.offset, n.length), (NackCode::UnknownContent, 9, eid(), 0, 1412));
        assert_eq!(n.detail, "no object with this EID");
    });
}

#[test]
fn resolve_vectors() {
    round_trip("resolve-name", |p| {
        let Packet::ResolveRequest(r) = p else { panic!("{p:?}") };
        assert_eq!((r.tag, r.query), (3, Query::Name("videos/intro.mp4")));
    });
    round_trip("resolve-eid", |p| {
        let Packet::ResolveRequest(r) = p else { panic!("{p:?}") };
        assert_eq!((r.tag, r.query), (4, Query::Eid(eid())));
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
        assert_eq!((r.tag, r.cursor), (5, 0));
    });
    round_trip("list-response", |p| {
        let Packet::ListResponse(r) = p else { panic!("{p:?}") };
        assert_eq!((r.more, r.tag, r.cursor, r.total, r.len()), (false, 5, 0, 2, 2));
        let e: Vec<_> = r.entries().map(|e| (e.name, e.size, e.eid)).collect();
        assert_eq!(e[0], ("a.txt", 5, eid()));
        assert_eq!(e[1], ("b/c.bin", 1 << 33, Eid(core::array::from_fn(|i| 0xa0 + i as u8))));
    });
}

#[test]
fn every_vector_in_the_document_is_tested() {
    let named: Vec<&str> = PROTOCOL_MD
        .match_indices("Vector `")
        .map(|(i, _)| {
            let rest = &PROTOCOL_MD[i + 8..];
            &rest[..rest.find('`').unwrap()]
        })
        .collect();
    let tested = [
        "request-basic",
        "request-ranges",
        "data-last",
        "nack-unknown",
        "resolve-name",
        "resolve-eid",
        "resolve-response",
        "list-request",
        "list-response",
    ];
    assert_eq!(named, tested, "PROTOCOL.md and this test list different vectors");
}
