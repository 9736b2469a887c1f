//! The consumer against a scripted in-memory NDN producer, over [`crate::testing::Pair`].

use std::collections::VecDeque;

use proptest::prelude::*;

use super::*;
use crate::Node;
use crate::ndn::data::{SignatureInfo, SignatureType};
use crate::ndn::lp;
use crate::testing::Pair;

/// Changes a Data's wire.
type Tamper = fn(Vec<u8>) -> Vec<u8>;

/// What the scripted producer does besides answering.
#[derive(Default)]
struct Script {
    /// Drop every n-th answer.
    drop_every: Option<u64>,
    /// Answer the first n segment Interests with a Nack of this reason instead.
    nack: Option<(NackReason, u64)>,
    /// Cut every Data into LpPacket fragments of at most this many bytes.
    mtu: Option<usize>,
    /// Echo the Interest's PitToken.
    echo: bool,
    /// Stop answering after this many answers.
    stop_after: Option<u64>,
    /// Change the first answer for this segment (the wire of a Data).
    tamper: Option<(u64, Tamper)>,
    /// Datagrams sent before the first answer (hostile extras).
    inject: Vec<Vec<u8>>,
    /// Answer a CanBePrefix Interest for the prefix with segment 0.
    can_be_prefix: bool,
}

struct Producer {
    prefix: Name,
    versioned: Name,
    segments: Vec<Vec<u8>>,
    metadata: Option<Vec<u8>>,
    consumer: SocketAddr,
    script: Script,
    answers: u64,
    nacked: u64,
    out: VecDeque<Vec<u8>>,
    seq: u64,
    interests: u64,
}

impl Producer {
    fn new(prefix: &str, version: Option<u64>, content: &[u8], seg: usize, script: Script) -> Self {
        let prefix: Name = prefix.parse().unwrap();
        let versioned = match version {
            Some(v) => prefix.clone().with(Component::version(v)),
            None => prefix.clone(),
        };
        let segments =
            segmented::segments(&versioned, content, seg, 10_000).into_iter().map(|mut d| d.encode_signed()).collect();
        let metadata = version.map(|_| segmented::metadata_data(&versioned, 1, 1000).encode_signed());
        Producer {
            prefix,
            versioned,
            segments,
            metadata,
            consumer: "192.0.2.1:5000".parse().unwrap(),
            script,
            answers: 0,
            nacked: 0,
            out: VecDeque::new(),
            seq: 0,
            interests: 0,
        }
    }

    fn send(&mut self, mut lp: LpPacket) {
        match self.script.mtu {
            Some(mtu) => {
                let frags = lp::fragment(&lp, mtu, self.seq).unwrap();
                self.seq += frags.len() as u64;
                self.out.extend(frags);
            }
            None => {
                if lp.pit_token.is_none() && lp.nack.is_none() {
                    lp = LpPacket::wrap(lp.fragment.take().unwrap()); // a bare Data
                    self.out.push_back(lp.fragment.unwrap());
                } else {
                    self.out.push_back(lp.encode());
                }
            }
        }
    }
}

impl crate::Node for Producer {
    fn handle_datagram(&mut self, _now: Time, _from: SocketAddr, datagram: &[u8]) {
        let Ok(lp) = LpPacket::decode(datagram) else { return };
        let Ok(i) = Interest::decode(lp.fragment.as_deref().unwrap_or(&[])) else { return };
        self.interests += 1;
        let token = if self.script.echo { lp.pit_token.clone() } else { None };
        if self.answers == 0 {
            self.out.extend(std::mem::take(&mut self.script.inject));
        }
        if self.script.stop_after.is_some_and(|n| self.answers >= n) {
            return;
        }
        let segment = segmented::split_segment(&i.name).filter(|(p, _)| *p == self.versioned).map(|(_, u)| u);
        if let (Some((reason, n)), Some(_)) = (self.script.nack, segment)
            && self.nacked < n
        {
            self.nacked += 1;
            let nack = LpPacket {
                nack: Some(lp::Nack { reason: Some(reason) }),
                pit_token: token,
                ..LpPacket::wrap(datagram_interest(datagram))
            };
            self.send(nack);
            return;
        }
        let wire = if segmented::discovery_prefix(&i) == Some(self.prefix.clone()) {
            self.metadata.clone()
        } else if i.can_be_prefix && i.name == self.prefix && self.script.can_be_prefix {
            self.segments.first().cloned() // version discovery by CanBePrefix
        } else {
            segment.and_then(|u| self.segments.get(u as usize).cloned().map(|w| (u, w))).map(|(u, w)| {
                match self.script.tamper.take() {
                    Some((t, f)) if t == u => f(w),
                    other => {
                        self.script.tamper = other;
                        w
                    }
                }
            })
        };
        let Some(wire) = wire else { return };
        self.answers += 1;
        if self.script.drop_every.is_some_and(|n| self.answers.is_multiple_of(n)) {
            return;
        }
        self.send(LpPacket { pit_token: token, ..LpPacket::wrap(wire) });
    }
    fn poll_transmit(&mut self, _now: Time, buf: &mut [u8]) -> Option<Transmit> {
        let d = self.out.pop_front()?;
        buf[..d.len()].copy_from_slice(&d);
        Some(Transmit { to: self.consumer, len: d.len() })
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn max_datagram(&self) -> usize {
        65_536
    }
}

/// The Interest inside an LpPacket datagram.
fn datagram_interest(datagram: &[u8]) -> Vec<u8> {
    LpPacket::decode(datagram).unwrap().fragment.unwrap()
}

fn content(n: usize) -> Vec<u8> {
    (0..n as u64).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect()
}

fn config(cc: &str) -> ConsumerConfig {
    let mut c = ConsumerConfig::default();
    c.receiver.cc = cc.parse().unwrap();
    c.receiver.seed = 7;
    c.receiver.idle_timeout = Duration::from_secs(5);
    c
}

fn consumer(cfg: ConsumerConfig, name: &str) -> Consumer {
    Consumer::new(cfg, "192.0.2.2:6000".parse().unwrap(), name.parse().unwrap(), Time::ZERO)
}

/// Run to the end; the bytes read (None: failed, with the error).
fn run(pair: &mut Pair<Consumer, Producer>) -> Result<Vec<u8>, FetchError> {
    let mut got = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let done = pair.drive(Duration::from_secs(120), |p| p.a.is_finished() || p.a.error().is_some());
    assert!(done, "neither finished nor failed");
    loop {
        let n = pair.a.read(&mut buf);
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    match pair.a.error() {
        Some(e) => Err(e.clone()),
        None => Ok(got),
    }
}

/// The fetch gave exactly `data` (without printing megabytes when not).
#[track_caller]
fn assert_same(got: &Result<Vec<u8>, FetchError>, data: &[u8]) {
    match got {
        Ok(g) => assert!(g == data, "{} bytes, not the {} served (or other bytes)", g.len(), data.len()),
        Err(e) => panic!("failed: {e}"),
    }
}

fn fetch(cc: &str, name: &str, producer: Producer) -> (Result<Vec<u8>, FetchError>, Pair<Consumer, Producer>) {
    let mut pair = Pair::new(consumer(config(cc), name), producer);
    (run(&mut pair), pair)
}

#[test]
fn byte_exact_with_rdr_discovery_and_every_kind_of_controller() {
    let data = content(300_000);
    for cc in ["bbr", "bbr-cd", "cubic", "aimd"] {
        let p = Producer::new(
            "/files/a.bin",
            Some(1_700_000_000_000),
            &data,
            8000,
            Script { echo: true, ..Script::default() },
        );
        let (got, pair) = fetch(cc, "/files/a.bin", p);
        assert_same(&got, &data);
        assert_eq!(pair.a.name().to_string(), "/files/a.bin/v=1700000000000");
        assert_eq!((pair.a.size(), pair.a.segment_size()), (Some(300_000), Some(8000)));
        let s = pair.a.ndn_stats();
        assert_eq!((s.digest_verified, s.unverified, s.bad_digest), (38, 0, 0), "{cc}: {s:?}");
        assert_eq!(pair.a.stats().units_received, 38);
    }
}

#[test]
fn versioned_names_are_fetched_as_given_and_unversioned_ones_without_metadata_too() {
    let data = content(50_000);
    // A version in the name: no RDR.
    let p = Producer::new("/o", Some(7), &data, 4000, Script::default());
    let (got, pair) = fetch("bbr", "/o/v=7", p);
    assert_same(&got, &data);
    assert_eq!(pair.b.interests, 13 + 2, "segments, and segments 0 and 12 once more in discovery");
    // No version, no metadata: after the first interval the name as given is asked for.
    let p = Producer::new("/plain", None, &data, 4000, Script::default());
    let (got, pair) = fetch("cubic", "/plain", p);
    assert_same(&got, &data);
    assert_eq!(pair.a.name().to_string(), "/plain");
}

#[test]
fn tiny_and_empty_objects() {
    for n in [0usize, 1, 63, 64, 4000] {
        let data = content(n);
        let p = Producer::new("/t", Some(1), &data, 4000, Script::default());
        let (got, _) = fetch("bbr", "/t", p);
        assert_same(&got, &data);
    }
}

#[test]
fn losses_are_recovered_by_the_receiver() {
    let data = content(400_000);
    for (cc, echo) in [("cubic", true), ("bbr-cd", false), ("bbr", true)] {
        let script = Script { drop_every: Some(9), echo, ..Script::default() };
        let p = Producer::new("/lossy", Some(3), &data, 8000, script);
        let (got, pair) = fetch(cc, "/lossy", p);
        assert_same(&got, &data);
        assert!(pair.a.stats().units_rerequested > 0, "{cc}");
    }
}

#[test]
fn fragmented_data_are_reassembled() {
    let data = content(200_000);
    let script = Script { mtu: Some(1472), echo: true, ..Script::default() };
    let p = Producer::new("/frag", Some(3), &data, 8600, script);
    let (got, pair) = fetch("bbr-cd", "/frag", p);
    assert_same(&got, &data);
    assert!(pair.a.ndn_stats().reassembly.completed >= 24);
}

#[test]
fn congestion_nacks_back_off_and_no_route_fails_clearly() {
    let data = content(100_000);
    let p = Producer::new("/busy", Some(3), &data, 8000, Script { echo: true, ..Script::default() });
    let mut pair = Pair::new(consumer(config("cubic"), "/busy"), p);
    assert!(pair.drive(Duration::from_secs(10), |p| p.a.receiver().is_some()));
    pair.b.script.nack = Some((NackReason::Congestion, 5));
    let got = run(&mut pair);
    assert_same(&got, &data);
    assert!(pair.a.stats().busy > 0 && pair.a.ndn_stats().nacks[0] == 5, "{:?}", pair.a.ndn_stats());
    // Duplicate: ignored, the loss timer asks again.
    let script = Script { nack: Some((NackReason::Duplicate, 3)), ..Script::default() };
    let p = Producer::new("/dup", Some(3), &data, 8000, script);
    assert_same(&fetch("bbr", "/dup", p).0, &data);
    // NoRoute for every segment (discovery's too): a clear failure.
    let script = Script { nack: Some((NackReason::NoRoute, u64::MAX)), ..Script::default() };
    let p = Producer::new("/gone", Some(3), &data, 8000, script);
    let (got, _) = fetch("bbr", "/gone", p);
    let e = got.unwrap_err();
    assert!(matches!(e, FetchError::Refused { code: NackCode::NoRoute, .. }), "{e}");
    assert!(e.to_string().contains("Nack NoRoute for /gone/v=3/seg=0"), "{e}");
    // NoRoute once the transfer runs: the receiver's confirmations, then the failure.
    let p = Producer::new("/gone", Some(3), &data, 8000, Script::default());
    let mut pair = Pair::new(consumer(config("bbr"), "/gone/v=3"), p);
    // Let discovery through: segments 0 and 12 answered, then Nacks.
    assert!(pair.drive(Duration::from_secs(10), |p| p.a.receiver().is_some()));
    pair.b.script.nack = Some((NackReason::NoRoute, u64::MAX));
    let e = run(&mut pair).unwrap_err();
    assert!(matches!(e, FetchError::Refused { code: NackCode::NoRoute, .. }), "{e}");
    assert!(e.to_string().contains("NDN Nack NoRoute for /gone/v=3/seg="), "{e}");
}

#[test]
fn a_bad_digest_never_reaches_the_application() {
    let data = content(100_000);
    fn flip_content(mut w: Vec<u8>) -> Vec<u8> {
        let n = w.len();
        w[n / 2] ^= 0x55; // inside the Content: the digest no longer matches
        w
    }
    let script = Script { tamper: Some((4, flip_content)), echo: true, ..Script::default() };
    let p = Producer::new("/bad", Some(3), &data, 8000, script);
    let (got, pair) = fetch("bbr", "/bad", p);
    assert_same(&got, &data);
    assert_eq!(pair.a.ndn_stats().bad_digest, 1);
}

#[test]
fn wrong_lengths_wrong_names_truncated_tlvs_and_strangers_are_dropped() {
    let data = content(100_000);
    fn short(w: Vec<u8>) -> Vec<u8> {
        // A well-signed segment 5 one byte short.
        let mut d = NdnData::decode(&w).unwrap();
        let mut c = d.content().to_vec();
        c.pop();
        d.content = Some(c);
        d.encode_signed()
    }
    let mut wrong_name = NdnData::new("/bad/v=3/seg=900".parse().unwrap(), vec![1u8; 8000]);
    let mut other_version = NdnData::new("/bad/v=4/seg=1".parse().unwrap(), vec![1u8; 8000]);
    let seg1 = {
        let p = Producer::new("/bad", Some(3), &data, 8000, Script::default());
        p.segments[1].clone()
    };
    let inject = vec![
        wrong_name.encode_signed(),
        other_version.encode_signed(),
        seg1[..seg1.len() - 3].to_vec(), // truncated TLV
        vec![0x64, 0x05, 0x50, 0x03, 0x06],
        vec![0xff; 40],
        Vec::new(),
    ];
    let script = Script { tamper: Some((5, short)), inject, ..Script::default() };
    let p = Producer::new("/bad", Some(3), &data, 8000, script);
    let mut pair = Pair::new(consumer(config("cubic"), "/bad"), p);
    // A stranger's well-formed segment, before anything: dropped for its address.
    pair.a.handle_datagram(Time::ZERO, "192.0.2.9:6000".parse().unwrap(), &seg1);
    let got = run(&mut pair);
    assert_same(&got, &data);
    let s = pair.a.ndn_stats();
    assert!(s.malformed >= 4, "{s:?}");
    assert!(s.unexpected >= 1, "{s:?}");
}

#[test]
fn signed_data_are_accepted_and_counted_unverified() {
    let data = content(60_000);
    let mut p = Producer::new("/signed", Some(3), &data, 8000, Script::default());
    for w in &mut p.segments {
        let mut d = NdnData::decode(w).unwrap();
        d.signature_info =
            SignatureInfo { sig_type: SignatureType::Ed25519, key_locator: None, extensions: Vec::new() };
        d.signature_value = vec![7; 64];
        *w = d.encode();
    }
    let (got, pair) = fetch("bbr", "/signed", p);
    assert_same(&got, &data);
    let s = pair.a.ndn_stats();
    assert_eq!((s.unverified, s.digest_verified, s.unverified_type), (8, 0, Some(5)));
}

#[test]
fn a_producer_that_stops_ends_the_fetch_with_a_timeout() {
    let data = content(400_000);
    let p = Producer::new("/stop", Some(3), &data, 8000, Script { stop_after: Some(20), ..Script::default() });
    let (got, pair) = fetch("bbr", "/stop", p);
    assert_eq!(got.unwrap_err(), FetchError::Timeout(Duration::from_secs(5)));
    assert!(!pair.a.is_finished());
    // Silent from the start: discovery times out.
    let p = Producer::new("/stop", Some(3), &data, 8000, Script { stop_after: Some(0), ..Script::default() });
    assert_eq!(fetch("bbr", "/stop", p).0.unwrap_err(), FetchError::Timeout(Duration::from_secs(5)));
}

#[test]
fn interests_carry_fresh_nonces_a_lifetime_and_the_tag_as_pit_token() {
    let data = content(40_000);
    let p = Producer::new("/n", Some(3), &data, 8000, Script::default());
    let mut pair = Pair::new(consumer(config("bbr"), "/n"), p);
    let mut nonces = std::collections::BTreeSet::new();
    let mut buf = vec![0u8; MAX_NDN_PACKET];
    let mut seen = 0;
    while !pair.a.is_finished() && pair.a.error().is_none() && pair.now < Time::from_millis(10_000) {
        while let Some(t) = pair.a.poll_transmit(pair.now, &mut buf) {
            let lp = LpPacket::decode(&buf[..t.len]).unwrap();
            assert_eq!(lp.pit_token.as_ref().map(Vec::len), Some(4));
            let i = Interest::decode(lp.fragment.as_deref().unwrap()).unwrap();
            assert_eq!(i.lifetime_ms, Some(4000));
            assert!(nonces.insert(i.nonce.unwrap()), "a nonce used twice");
            pair.b.handle_datagram(pair.now, pair.a_addr, &buf[..t.len]);
            seen += 1;
        }
        let mut answered = false;
        while let Some(t) = pair.b.poll_transmit(pair.now, &mut buf) {
            let d = buf[..t.len].to_vec();
            pair.now += Duration::from_millis(1);
            pair.a.handle_datagram(pair.now, pair.b_addr, &d);
            answered = true;
        }
        if !answered && let Some(t) = pair.a.poll_timeout() {
            pair.now = pair.now.max(t);
            pair.a.handle_timeout(pair.now);
        }
    }
    assert!(pair.a.is_finished());
    assert_eq!(seen, 1 + 2 + 5, "metadata, segments 0 and 4, then the 5 segments");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// No datagram panics the consumer, in discovery or during the transfer; valid packets
    /// with bytes changed included.
    #[test]
    fn no_datagram_panics_the_consumer(
        junk in proptest::collection::vec(any::<u8>(), 0..600),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        cut in any::<usize>(),
        which in 0usize..4,
    ) {
        let data = content(30_000);
        let p = Producer::new("/f", Some(3), &data, 8000, Script { echo: true, ..Script::default() });
        let samples = [p.segments[1].clone(), p.metadata.clone().unwrap(), LpPacket {
            nack: Some(lp::Nack { reason: Some(NackReason::Congestion) }),
            ..LpPacket::wrap(Interest::new("/f/v=3/seg=1".parse().unwrap()).encode())
        }.encode(), junk.clone()];
        let mut pair = Pair::new(consumer(config("bbr"), "/f"), p);
        let mut mutated = samples[which].clone();
        for (at, x) in &flips {
            if !mutated.is_empty() {
                let n = mutated.len();
                mutated[at % n] ^= x;
            }
        }
        mutated.truncate(cut % (mutated.len() + 1));
        let from = pair.b_addr;
        for step in 0..3 {
            pair.a.handle_datagram(pair.now, from, &junk);
            pair.a.handle_datagram(pair.now, from, &mutated);
            if step == 1 {
                pair.drive(Duration::from_secs(2), |p| p.a.receiver().is_some());
            }
            pair.step();
        }
        let r = run(&mut pair);
        prop_assert!(r.is_err() || r.as_deref() == Ok(&data[..]));
    }
}

/// Sign every segment of `p` with Ed25519 `key`, KeyLocator `/signed/KEY/%01`; return the
/// trust anchor for `anchor_key` (an NDN certificate of ContentType KEY).
fn sign_with(
    p: &mut Producer,
    key: &ed25519_dalek::SigningKey,
    anchor_key: &ed25519_dalek::SigningKey,
) -> crate::ndn::trust::TrustAnchor {
    use ed25519_dalek::Signer as _;
    use ed25519_dalek::pkcs8::EncodePublicKey as _;
    let key_name: Name = "/signed/KEY/%01".parse().unwrap();
    for w in &mut p.segments {
        let mut d = NdnData::decode(w).unwrap();
        d.signature_info = SignatureInfo {
            sig_type: SignatureType::Ed25519,
            key_locator: Some(crate::ndn::data::KeyLocator::Name(key_name.clone())),
            extensions: Vec::new(),
        };
        let unsigned = d.encode();
        let (_, signed) = NdnData::decode_with_signed(&unsigned).unwrap();
        d.signature_value = key.sign(signed).to_bytes().to_vec();
        *w = d.encode();
    }
    let spki = anchor_key.verifying_key().to_public_key_der().unwrap();
    let mut cert =
        NdnData::new(key_name.with(Component::generic(*b"self")).with(Component::version(1)), spki.as_bytes().to_vec());
    cert.meta.content_type = Some(content_type::KEY);
    crate::ndn::trust::TrustAnchor::from_certificate(&cert.encode_signed()).unwrap()
}

#[test]
fn with_a_trust_anchor_only_segments_signed_by_its_key_are_delivered() {
    let data = content(60_000);
    let producer_key = ed25519_dalek::SigningKey::from_bytes(&[3; 32]);
    // Signed by the anchor's key: every segment verified, byte-exact.
    let mut p = Producer::new("/signed", Some(3), &data, 8000, Script::default());
    let anchor = sign_with(&mut p, &producer_key, &producer_key);
    let mut cfg = config("bbr");
    cfg.trust = Some(anchor);
    let mut pair = Pair::new(consumer(cfg.clone(), "/signed"), p);
    assert_same(&run(&mut pair), &data);
    let s = pair.a.ndn_stats();
    assert_eq!((s.key_verified, s.unverified, s.digest_verified, s.bad_signature), (8, 0, 0, 0), "{s:?}");

    // Signed by another key (or only with DigestSha256): nothing is delivered, the fetch
    // times out, and every segment that came was dropped as badly signed.
    let mut p = Producer::new("/signed", Some(3), &data, 8000, Script::default());
    let forger = ed25519_dalek::SigningKey::from_bytes(&[4; 32]);
    let anchor = sign_with(&mut p, &forger, &producer_key);
    cfg.trust = Some(anchor.clone());
    let mut pair = Pair::new(consumer(cfg.clone(), "/signed"), p);
    assert_eq!(run(&mut pair).unwrap_err(), FetchError::Timeout(Duration::from_secs(5)));
    assert!(pair.a.ndn_stats().bad_signature >= 1 && pair.a.stats().units_received == 0);
    let digest_only = Producer::new("/signed", Some(3), &data, 8000, Script::default());
    let mut pair = Pair::new(consumer(cfg, "/signed"), digest_only);
    assert!(run(&mut pair).is_err());
    assert_eq!(pair.a.stats().units_received, 0, "a DigestSha256 segment is not signed by the anchor");
}

/// A producer that publishes versions but no RDR metadata (python-ndn's and ndnputchunks'
/// `--no-metadata` habit): the name as given is found by CanBePrefix, `NAME/v=<v>/seg=0`.
#[test]
fn a_versioned_object_without_metadata_is_found_by_can_be_prefix() {
    let data = content(50_000);
    let mut p = Producer::new("/nometa", Some(9), &data, 8000, Script { can_be_prefix: true, ..Script::default() });
    p.metadata = None;
    let (got, pair) = fetch("bbr", "/nometa", p);
    assert_same(&got, &data);
    assert_eq!(pair.a.name().to_string(), "/nometa/v=9");
    // Without the CanBePrefix answer, nothing is found (the fetch times out).
    let mut p = Producer::new("/nometa", Some(9), &data, 8000, Script::default());
    p.metadata = None;
    assert!(fetch("bbr", "/nometa", p).0.is_err());
}
