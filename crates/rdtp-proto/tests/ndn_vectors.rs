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

#[test]
fn every_ndn_vector_in_the_document_is_tested() {
    let named: Vec<String> = common::ndn_vectors().into_iter().map(|(n, _)| n).collect();
    let tested = ["ndn-interest-metadata", "ndn-data-segment", "ndn-lp-fragment-0", "ndn-lp-fragment-1", "ndn-lp-nack"];
    assert_eq!(named, tested, "PROTOCOL.md and this test list different NDN vectors");
}
