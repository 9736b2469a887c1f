//! Property tests of the NDN codec (`rdtp_proto::ndn`): names, Interests, Data and
//! LpPackets survive encode → decode; fragmentation and reassembly give back the packet
//! whatever the MTU and arrival order; and no byte string makes a decoder (or the
//! reassembler) panic or grow past its limits.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rdtp_proto::Time;
use rdtp_proto::ndn::lp::{self, ReassemblerLimits};
use rdtp_proto::ndn::{
    Component, Data, Interest, KeyLocator, LpPacket, MetaInfo, Nack, NackReason, Name, Reassembler, SignatureInfo,
    SignatureType, Verification,
};

/// Component types: the usual ones more often than the rest.
fn component_type(digests: bool) -> impl Strategy<Value = u64> {
    let common = prop_oneof![Just(8u64), Just(32), Just(50), Just(52), Just(54), Just(56), Just(58)];
    let digest = if digests { prop_oneof![Just(1u64), Just(2)].boxed() } else { Just(8u64).boxed() };
    prop_oneof![4 => common, 1 => digest, 1 => (3u64..=0xffff).prop_filter("not a digest", |t| *t != 1 && *t != 2)]
}

fn component(digests: bool) -> impl Strategy<Value = Component> {
    (component_type(digests), proptest::collection::vec(any::<u8>(), 0..12), any::<[u8; 32]>(), any::<u64>()).prop_map(
        |(ty, value, digest, n)| match ty {
            1 | 2 => Component::new(ty, digest.to_vec()).unwrap(),
            50 | 54 if n % 2 == 0 => Component::number(ty, n >> 1),
            _ => Component::new(ty, value).unwrap(),
        },
    )
}

fn name(digests: bool, min: usize) -> impl Strategy<Value = Name> {
    proptest::collection::vec(component(digests), min..6).prop_map(Name::from)
}

fn interest() -> impl Strategy<Value = Interest> {
    let params = proptest::option::of((
        proptest::collection::vec(any::<u8>(), 0..40),
        proptest::option::of((
            proptest::collection::vec(any::<u8>(), 0..8),
            proptest::collection::vec(any::<u8>(), 0..8),
        )),
    ));
    (
        name(false, 1),
        any::<(bool, bool)>(),
        proptest::collection::vec(name(false, 0), 0..3),
        proptest::option::of(any::<[u8; 4]>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u8>()),
        params,
    )
        .prop_map(
            |(name, (can_be_prefix, must_be_fresh), forwarding_hint, nonce, lifetime_ms, hop_limit, params)| {
                let mut i = Interest {
                    name,
                    can_be_prefix,
                    must_be_fresh,
                    forwarding_hint,
                    nonce,
                    lifetime_ms,
                    hop_limit,
                    app_parameters: params.as_ref().map(|p| p.0.clone()),
                    signature: params.and_then(|p| p.1),
                };
                i.update_parameters_digest();
                i
            },
        )
}

fn data() -> impl Strategy<Value = Data> {
    let meta =
        (proptest::option::of(0u64..5), proptest::option::of(any::<u64>()), proptest::option::of(component(true)))
            .prop_map(|(content_type, freshness_ms, final_block)| MetaInfo { content_type, freshness_ms, final_block });
    let locator = proptest::option::of(prop_oneof![
        name(true, 0).prop_map(KeyLocator::Name),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(KeyLocator::KeyDigest),
    ]);
    (
        name(true, 0),
        meta,
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..300)),
        prop_oneof![Just(0u64), Just(1), Just(3), Just(5), Just(200), 6u64..1000],
        locator,
        proptest::collection::vec(any::<u8>(), 0..80),
    )
        .prop_map(|(name, meta, content, sig, key_locator, signature_value)| Data {
            name,
            meta,
            content,
            signature_info: SignatureInfo {
                sig_type: SignatureType::from_code(sig),
                key_locator,
                extensions: Vec::new(),
            },
            signature_value,
        })
}

fn lp_packet() -> impl Strategy<Value = LpPacket> {
    (
        any::<u64>(),
        proptest::option::of((1u64..100).prop_flat_map(|c| (0..c, Just(c)))),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 1..33)),
        proptest::option::of(proptest::option::of(prop_oneof![
            Just(0u64),
            Just(50),
            Just(100),
            Just(150),
            any::<u64>()
        ])),
        proptest::option::of(any::<u64>()),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..200)),
    )
        .prop_map(|(seq, frag, pit_token, nack, congestion_mark, fragment)| LpPacket {
            sequence: Some(seq),
            frag_index: frag.map(|f| f.0),
            frag_count: frag.map(|f| f.1),
            pit_token,
            nack: nack.map(|r| Nack { reason: r.map(NackReason::from_code) }),
            congestion_mark,
            fragment,
        })
}

/// Fragments an attacker would send: plausible counts, sequence numbers close together (so
/// partial packets collect several pieces), large pieces.
fn fragment_flood() -> impl Strategy<Value = LpPacket> {
    (0u64..64, (2u64..20).prop_flat_map(|c| (0..c, Just(c))), 0usize..400).prop_map(|(seq, (i, c), len)| LpPacket {
        sequence: Some(seq),
        frag_index: Some(i),
        frag_count: Some(c),
        fragment: Some(vec![0xee; len]),
        ..LpPacket::default()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn names_round_trip_as_tlv_and_uri(n in name(true, 0)) {
        prop_assert_eq!(Name::decode(&n.to_bytes()), Ok(n.clone()));
        let uri = n.to_string();
        prop_assert_eq!(uri.parse::<Name>(), Ok(n), "{}", uri);
    }

    #[test]
    fn canonical_order_is_the_order_of_type_length_value(a in component(true), b in component(true)) {
        let key = |c: &Component| (c.ty(), c.value().len(), c.value().to_vec());
        prop_assert_eq!(a.cmp(&b), key(&a).cmp(&key(&b)));
    }

    #[test]
    fn interests_round_trip(i in interest()) {
        let wire = i.encode();
        prop_assert_eq!(Interest::decode(&wire), Ok(i.clone()));
        prop_assert_eq!(LpPacket::decode(&wire), Ok(LpPacket::wrap(wire)));
    }

    #[test]
    fn data_round_trip_and_digest_signing(mut d in data(), flip in any::<prop::sample::Index>()) {
        let wire = d.encode();
        prop_assert_eq!(Data::decode(&wire), Ok(d.clone()));
        let signed = d.encode_signed();
        prop_assert_eq!(Data::decode_verified(&signed), Ok((d.clone(), Verification::DigestValid)));
        // A bit flipped anywhere before the SignatureValue: refused, or not valid.
        let signed_end = signed.len() - 34;
        let at = 2 + flip.index(signed_end - 2);
        let mut bad = signed.clone();
        bad[at] ^= 1;
        if let Ok((_, v)) = Data::decode_verified(&bad) {
            prop_assert_ne!(v, Verification::DigestValid);
        }
    }

    #[test]
    fn lp_packets_round_trip(p in lp_packet()) {
        prop_assert_eq!(LpPacket::decode(&p.encode()), Ok(p));
    }

    #[test]
    fn fragmentation_and_reassembly_in_any_order(
        len in 1usize..20_000,
        mtu in 100usize..9000,
        seq in any::<u64>(),
        order in any::<u64>(),
    ) {
        let content: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
        let wire = Data::new("/o/v=1/seg=0".parse().unwrap(), content).encode_signed();
        let Ok(frags) = lp::fragment(&LpPacket::wrap(wire.clone()), mtu, seq) else {
            // Only a packet needing more than MAX_FRAGMENTS fragments is refused.
            prop_assert!(wire.len() > (mtu - 40) * lp::MAX_FRAGMENTS as usize);
            return Ok(());
        };
        prop_assert!(frags.iter().all(|f| f.len() <= mtu));
        let mut idx: Vec<usize> = (0..frags.len()).collect();
        let mut x = order;
        for i in (1..idx.len()).rev() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            idx.swap(i, (x >> 33) as usize % (i + 1));
        }
        let mut r = Reassembler::new(ReassemblerLimits::default());
        let mut out = Vec::new();
        for i in idx {
            if let Some(p) = r.receive(Time::ZERO, (), LpPacket::decode(&frags[i]).unwrap()).unwrap() {
                out.push(p);
            }
        }
        prop_assert_eq!(out.len(), 1);
        prop_assert_eq!(out[0].fragment.as_deref(), Some(&wire[..]));
        prop_assert_eq!(r.bytes_held(), 0);
    }
}

/// Whatever of `bytes` decodes (as an LpPacket, an Interest, a Data, a Name) re-encodes to
/// something that decodes to the same (skipped non-critical elements and longer-than-needed
/// numbers are not kept, so the bytes may differ).
fn decodes_consistently(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(p) = LpPacket::decode(bytes) {
        prop_assert_eq!(LpPacket::decode(&p.encode()), Ok(p));
    }
    if let Ok(i) = Interest::decode(bytes) {
        prop_assert_eq!(Interest::decode(&i.encode()), Ok(i));
    }
    if let Ok((d, _)) = Data::decode_verified(bytes) {
        prop_assert_eq!(Data::decode(&d.encode()), Ok(d));
    }
    if let Ok(n) = Name::decode(bytes) {
        prop_assert_eq!(Name::decode(&n.to_bytes()), Ok(n));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    /// No panic on any bytes (nor on any string as a URI); what decodes is consistent.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        decodes_consistently(&bytes)?;
        let _ = String::from_utf8_lossy(&bytes).parse::<Name>();
    }

    /// The same behind the outer TLV of each packet type, to reach the inner decoders.
    #[test]
    fn arbitrary_bodies_never_panic(ty in prop_oneof![Just(5u8), Just(6), Just(0x64)], body in proptest::collection::vec(any::<u8>(), 0..250)) {
        decodes_consistently(&[&[ty, body.len() as u8][..], &body].concat())?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Hostile fragments from several peers: the reassembler never holds more than its
    /// limits, whatever they claim.
    #[test]
    fn reassembler_memory_is_bounded(
        frags in proptest::collection::vec((0u8..4, prop_oneof![lp_packet(), fragment_flood()], 0u64..2000), 0..300),
    ) {
        let limits = ReassemblerLimits { max_fragments: 16, max_partials: 8, max_bytes: 1000, timeout: core::time::Duration::from_millis(100) };
        let mut r = Reassembler::new(limits);
        let mut now = Time::ZERO;
        for (peer, p, dt) in frags {
            now += core::time::Duration::from_micros(dt * 100);
            let _ = r.receive(now, peer, p);
            prop_assert!(r.bytes_held() <= 1000 && r.partials() <= 8);
        }
    }
}
