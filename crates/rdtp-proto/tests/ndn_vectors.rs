//! The NDN vectors of docs/PROTOCOL.md ("NDN (v0.3) packets"): each is decoded, its fields
//! checked, and re-encoded to the same bytes; the fragments are what the fragmenter makes of
//! the Data and reassemble to it. The document is the source of the bytes; this file holds
//! their meaning. (Vectors of the NDN specification and of ndn-cxx's tests are checked by
//! the module tests of `rdtp_proto::ndn`, each naming its source.)

use rdtp_proto::Time;
use rdtp_proto::ndn::lp::{self, LpPacket, Nack, NackReason, Reassembler, ReassemblerLimits};
use rdtp_proto::ndn::segmented::{self, discovery_prefix, final_segment, split_segment};
use rdtp_proto::ndn::{Component, Data, Interest, Name, Verification};

mod common;

fn vector(name: &str) -> Vec<u8> {
    common::ndn_vectors()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("NDN vector {name} missing from PROTOCOL.md"))
}

fn n(s: &str) -> Name {
    s.parse().unwrap()
}

#[test]
fn interest_metadata() {
    let wire = vector("ndn-interest-metadata");
    let i = Interest::decode(&wire).unwrap();
    assert_eq!(i.name.to_string(), "/hello/32=metadata");
    assert!(i.can_be_prefix && i.must_be_fresh);
    assert_eq!((i.nonce, i.lifetime_ms, i.hop_limit), (Some([1, 2, 3, 4]), Some(1000), None));
    assert_eq!(discovery_prefix(&i), Some(n("/hello")));
    assert_eq!(i.encode(), wire);
    let mut built = segmented::metadata_interest(&n("/hello"), [1, 2, 3, 4]);
    built.lifetime_ms = Some(1000);
    assert_eq!(built.encode(), wire);
}

#[test]
fn data_segment() {
    let wire = vector("ndn-data-segment");
    let (d, v) = Data::decode_verified(&wire).unwrap();
    assert_eq!(v, Verification::DigestValid);
    assert_eq!(split_segment(&d.name), Some((n("/hello/v=1"), 0)));
    assert_eq!((d.meta.freshness_ms, final_segment(&d), d.content()), (Some(1000), Some(0), &b"twelve bytes"[..]));
    assert_eq!(d.encode(), wire);
    // What the segmenter and DigestSha256 make of the same object.
    let mut built = segmented::segments(&n("/hello/v=1"), b"twelve bytes", 8800, 1000).remove(0);
    assert_eq!(built.encode_signed(), wire);
    let digest = Data::implicit_digest(&wire);
    assert_eq!(&digest[..4], [0x90, 0xc4, 0x38, 0x72]);
    assert_eq!(d.full_name(&wire).last(), Some(&Component::implicit_digest(digest)));
    // One bit of the content changed: decodes, reported invalid.
    let mut bad = wire.clone();
    bad[40] ^= 1;
    assert_eq!(Data::decode_verified(&bad).unwrap().1, Verification::DigestInvalid);
}

#[test]
fn lp_fragments() {
    let data = vector("ndn-data-segment");
    let f0 = vector("ndn-lp-fragment-0");
    let f1 = vector("ndn-lp-fragment-1");
    assert_eq!(lp::fragment(&LpPacket::wrap(data.clone()), 61, 1000).unwrap(), [f0.clone(), f1.clone()]);
    let p0 = LpPacket::decode(&f0).unwrap();
    let p1 = LpPacket::decode(&f1).unwrap();
    assert_eq!((p0.sequence, p0.frag_index, p0.frag_count), (Some(1000), Some(0), Some(2)));
    assert_eq!((p1.sequence, p1.frag_index, p1.frag_count), (Some(1001), Some(1), Some(2)));
    assert_eq!((p0.encode(), p1.encode()), (f0, f1));
    let mut r = Reassembler::new(ReassemblerLimits::default());
    assert_eq!(r.receive(Time::ZERO, (), p1), Ok(None));
    let whole = r.receive(Time::ZERO, (), p0).unwrap().unwrap();
    assert_eq!(whole.fragment, Some(data));
}

#[test]
fn lp_nack() {
    let wire = vector("ndn-lp-nack");
    let p = LpPacket::decode(&wire).unwrap();
    assert_eq!(p.pit_token.as_deref(), Some(&[0xaa, 0xbb, 0xcc, 0xdd][..]));
    assert_eq!(p.nack, Some(Nack { reason: Some(NackReason::NoRoute) }));
    let i = Interest::decode(p.fragment.as_deref().unwrap()).unwrap();
    assert_eq!((i.name.to_string(), i.nonce), ("/hello/v=1/seg=0".to_string(), Some([0x0a, 0x0b, 0x0c, 0x0d])));
    assert_eq!(p.encode(), wire);
}

/// Hostile versions of every vector: cut short anywhere, or with the outer TLV-LENGTH one
/// off, none decodes (as an LpPacket, nor as what it is).
#[test]
fn truncated_and_mislengthed_vectors_are_refused() {
    for (name, wire) in common::ndn_vectors() {
        let decodes = |b: &[u8]| LpPacket::decode(b).is_ok() || Interest::decode(b).is_ok() || Data::decode(b).is_ok();
        assert!(decodes(&wire), "{name}");
        for cut in 0..wire.len() {
            assert!(!decodes(&wire[..cut]), "{name} cut to {cut} bytes decodes");
        }
        for delta in [-1i16, 1] {
            let mut w = wire.clone();
            w[1] = (i16::from(w[1]) + delta) as u8;
            assert!(!decodes(&w), "{name} with length {} decodes", w[1]);
        }
        // One more byte after it.
        assert!(!decodes(&[&wire[..], &[0]].concat()), "{name} with a trailing byte decodes");
    }
}

/// Unknown elements: a critical one (TLV-TYPE 251, odd) inside the Interest or the Data is
/// refused; a non-critical one (252, even) is skipped, but stays part of the Data's signed
/// portion as received, so a digest computed without it no longer matches.
#[test]
fn unknown_critical_refused_non_critical_skipped() {
    let insert = |wire: &[u8], at: usize, el: &[u8]| {
        let mut w = [&wire[..at], el, &wire[at..]].concat();
        w[1] += el.len() as u8;
        w
    };
    let interest = vector("ndn-interest-metadata");
    let after_name = 2 + 2 + 0x11;
    assert!(Interest::decode(&insert(&interest, after_name, &[0xfb, 0])).is_err());
    let i = Interest::decode(&insert(&interest, after_name, &[0xfc, 1, 9])).unwrap();
    assert_eq!(i, Interest::decode(&interest).unwrap());
    let data = vector("ndn-data-segment");
    let after_name = 2 + 2 + 0x0d;
    assert!(Data::decode(&insert(&data, after_name, &[0xfb, 0])).is_err());
    let (d, v) = Data::decode_verified(&insert(&data, after_name, &[0xfc, 0])).unwrap();
    assert_eq!((d, v), (Data::decode(&data).unwrap(), Verification::DigestInvalid));
    // An LpPacket header the receiver cannot ignore (TLV-TYPE 802) vs one it can (804).
    let nack = vector("ndn-lp-nack");
    assert!(LpPacket::decode(&insert(&nack, 2, &[0xfd, 0x03, 0x22, 0])).is_err());
    assert_eq!(LpPacket::decode(&insert(&nack, 2, &[0xfd, 0x03, 0x24, 0])), LpPacket::decode(&nack));
}

#[test]
fn every_ndn_vector_in_the_document_is_tested() {
    let named: Vec<String> = common::ndn_vectors().into_iter().map(|(n, _)| n).collect();
    let tested = ["ndn-interest-metadata", "ndn-data-segment", "ndn-lp-fragment-0", "ndn-lp-fragment-1", "ndn-lp-nack"];
    assert_eq!(named, tested, "PROTOCOL.md and this test list different NDN vectors");
}
