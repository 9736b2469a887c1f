//! The NDN producer behind `rdtp serve --ndn-listen`: it answers NDN Interests for the
//! objects of a server's catalogue the way ndnputchunks (ndn-tools) and NDNts's
//! `serveMetadata` + `serve` publish a file, so that ndncatchunks, NDNts or any NDN consumer
//! can fetch from `rdtp serve`.
//!
//! The object named `N` in the catalogue (a path such as `data/big.bin`) is published under
//! the producer's prefix `P` as `P/<N's components>`, in "NDN naming conventions" rev. 3:
//!
//! | Interest name | answer |
//! |---|---|
//! | `P/N/32=metadata` (CanBePrefix, MustBeFresh: RDR discovery) | `P/N/32=metadata/v=V/seg=0`, Content the Name TLV of `P/N/v=V` |
//! | `P/N/v=V/seg=s` | segment `s`: bytes `s·S .. (s+1)·S` of the object, FinalBlockId `seg=<last>` |
//! | `P/N` or `P/N/v=V` with CanBePrefix (version discovery by CanBePrefix, as ndncatchunks without RDR) | segment 0 |
//!
//! `S` is the segment size ([`ProducerConfig::segment_size`], 8000 bytes as ndnputchunks'
//! and NDNts's default). The version `V` is derived from the object's EID (its first six
//! bytes as a number, [`version_of`]): the same content always has the same version and
//! changed content gets a new one, with no state and no clock. Every Data is signed with
//! DigestSha256 (spec 0.3 §3.1; NDNts's consumers accept that by default); the metadata Data
//! too, with a FreshnessPeriod of [`ProducerConfig::metadata_freshness_ms`].
//!
//! ## Stateless, and bounded against reflection
//!
//! Like the rdtp server, the producer keeps no state per consumer: each Interest is answered
//! from the catalogue alone (the only state is an LpPacket sequence counter and the send
//! budget). NDN has no address validation: a 40-byte Interest with a forged source address
//! makes a producer send an 8 KB Data to the forged address (≈ 200×), and nothing in the
//! protocol lets a producer tell. The producer therefore bounds what it sends instead
//! ([`Guard`]): only sources in the allowed networks are answered
//! ([`ProducerConfig::allow`]; by default loopback, private IPv4, unique-local and link-local
//! IPv6 addresses), and all answers share one send budget ([`ProducerConfig::share`], by
//! default 1 Gbit/s), split fairly between the sources asking (the rdtp server's fair share,
//! `server/share.rs`). An Interest over budget is answered with a Nack "Congestion" (NDNLPv2),
//! which is no larger than the Interest itself. docs/SECURITY.md says what this does and
//! does not bound.
//!
//! ## Faces
//!
//! Interests arrive as bare Interest TLVs or in LpPackets (NDNLPv2). A fragmented Interest is
//! dropped (reassembly would be per-source state; Interests fit any MTU). An LpPacket's
//! PitToken is echoed on the answer (NDNts's forwarder sends one). A Data larger than
//! [`ProducerConfig::mtu`] is split into LpPacket fragments; one that fits goes as a bare
//! Data (in an LpPacket only when a PitToken must go with it).
//!
//! ## What it must not do
//!
//! No sockets, no clock reads, no randomness (it needs none), no file access except through
//! the [`Catalog`] it is given; never panic on a datagram.

use std::net::{IpAddr, SocketAddr};

use ipnet::IpNet;

use super::data::Data;
use super::interest::Interest;
use super::lp::{self, LpPacket, Nack, NackReason};
use super::name::{Component, Name};
use super::segmented;
use crate::eid::Eid;
use crate::server::{Budget, Catalog, ShareConfig};
use crate::time::Time;

/// NDN's largest packet (ndn-cxx's `MAX_NDN_PACKET_SIZE`): NFD's UDP faces send a Data up to
/// this size as one datagram.
pub const MAX_NDN_PACKET_SIZE: usize = 8800;

/// The most NDNLPv2 fragments one Data may be split into ([`lp::MAX_FRAGMENTS`]): the
/// segment size must fit in that many datagrams of the MTU.
pub const MAX_SEGMENT_FRAGMENTS: usize = lp::MAX_FRAGMENTS as usize;

/// The producer's settings.
#[derive(Clone, Debug)]
pub struct ProducerConfig {
    /// The prefix every published name starts with (e.g. `/rdtp`).
    pub prefix: Name,
    /// Bytes of content per segment (ndnputchunks' `--size`; default 8000).
    pub segment_size: usize,
    /// FreshnessPeriod of the segments, in milliseconds (ndnputchunks' default: 10 s).
    pub freshness_ms: u64,
    /// FreshnessPeriod of the RDR metadata Data, in milliseconds (default 1 s).
    pub metadata_freshness_ms: u64,
    /// Largest datagram sent: a larger Data is split into NDNLPv2 fragments. Default
    /// [`MAX_NDN_PACKET_SIZE`] (one datagram per 8000-byte segment, as NFD's UDP faces).
    pub mtu: usize,
    /// Source networks answered; Interests from elsewhere are dropped (counted).
    pub allow: Vec<IpNet>,
    /// The send budget shared by all sources (its `rate` in bytes per second; `None`: no
    /// bound, only for tests and closed networks).
    pub share: ShareConfig,
}

impl ProducerConfig {
    /// Bytes per second the producer sends at most by default: 1 Gbit/s.
    pub const DEFAULT_RATE: f64 = 125e6;

    /// The defaults under `prefix`.
    pub fn new(prefix: Name) -> Self {
        ProducerConfig {
            prefix,
            segment_size: 8000,
            freshness_ms: 10_000,
            metadata_freshness_ms: 1_000,
            mtu: MAX_NDN_PACKET_SIZE,
            allow: default_allow(),
            share: ShareConfig { rate: Some(Self::DEFAULT_RATE), ..ShareConfig::default() },
        }
    }
}

/// The networks answered by default: loopback, RFC 1918 private IPv4, IPv4 link-local, IPv6
/// unique-local (fc00::/7) and link-local (fe80::/10). Anything reachable from the Internet
/// must be allowed explicitly (`--ndn-allow`).
pub fn default_allow() -> Vec<IpNet> {
    [
        "127.0.0.0/8",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "169.254.0.0/16",
        "::1/128",
        "fc00::/7",
        "fe80::/10",
    ]
    .iter()
    .map(|n| n.parse().expect("a valid network"))
    .collect()
}

/// The version under which content with `eid` is published: the EID's first six bytes as a
/// big-endian number (below 2⁴⁸, so JavaScript consumers read it exactly).
pub fn version_of(eid: &Eid) -> u64 {
    eid.0[..6].iter().fold(0u64, |v, &b| (v << 8) | u64::from(b))
}

/// What the producer did with one datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with segment `segment` (`datagrams` datagrams: more than 1 if fragmented).
    Segment { segment: u64, datagrams: usize },
    /// Answered an RDR discovery Interest with the metadata Data.
    Metadata,
    /// Over the send budget: answered with a Nack "Congestion".
    Congestion,
    /// Dropped, for the reason given.
    Dropped(Ignored),
}

/// Why a datagram got no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ignored {
    /// From a source outside [`ProducerConfig::allow`].
    NotAllowed,
    /// Not an Interest (a Data, a Nack, an idle LpPacket, a fragment) or not decodable.
    NotAnInterest,
    /// A name outside the prefix, or that names no object, version or segment published.
    NoSuchData,
    /// The object could not be read (removed or changed under the server).
    Unreadable,
}

/// Counters of a [`Producer`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProducerStats {
    /// Datagrams handled.
    pub datagrams: u64,
    /// Segments sent.
    pub segments: u64,
    /// Metadata Data sent.
    pub metadata: u64,
    /// Content bytes sent in segments.
    pub content_bytes: u64,
    /// Nacks "Congestion" sent (over budget).
    pub congestion: u64,
    /// Datagrams from sources not allowed.
    pub not_allowed: u64,
    /// Datagrams that were not an Interest.
    pub not_interest: u64,
    /// Interests for nothing published.
    pub no_such_data: u64,
    /// Objects that could not be read.
    pub unreadable: u64,
}

/// Who may be answered, and how much: the allowed networks and the shared send budget.
#[derive(Clone, Debug)]
pub struct Guard {
    allow: Vec<IpNet>,
    budget: Budget,
}

impl Guard {
    /// The guard of `cfg`. Clones share one budget (the producers of several threads).
    pub fn new(cfg: &ProducerConfig) -> Self {
        Guard { allow: cfg.allow.clone(), budget: Budget::new(cfg.share.clone()) }
    }

    /// Whether `ip` (an IPv4-mapped IPv6 address counts as IPv4) is in an allowed network.
    pub fn allows(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        self.allow.iter().any(|n| n.contains(&ip))
    }
}

/// The NDN producer: see the module docs.
#[derive(Debug)]
pub struct Producer {
    cfg: ProducerConfig,
    guard: Guard,
    next_seq: u64,
    stats: ProducerStats,
}

/// A request the producer understood: which object, and what of it.
enum Ask {
    Metadata,
    /// A segment; `version` is `None` when the Interest named no version (CanBePrefix).
    Segment {
        version: Option<u64>,
        segment: u64,
    },
}

impl Producer {
    /// A producer with its own send budget.
    pub fn new(cfg: ProducerConfig) -> Self {
        let guard = Guard::new(&cfg);
        Producer::with_guard(cfg, guard)
    }

    /// A producer sharing `guard`'s budget with others (one per serving thread).
    pub fn with_guard(cfg: ProducerConfig, guard: Guard) -> Self {
        Producer { cfg, guard, next_seq: 0, stats: ProducerStats::default() }
    }

    /// Its settings.
    pub fn config(&self) -> &ProducerConfig {
        &self.cfg
    }

    /// Its counters.
    pub fn stats(&self) -> &ProducerStats {
        &self.stats
    }

    /// Answer one datagram from `from`: the datagrams to send back to `from` are appended
    /// to `out` (nothing if it is dropped).
    pub fn handle<C: Catalog + ?Sized>(
        &mut self,
        now: Time,
        from: SocketAddr,
        catalog: &C,
        datagram: &[u8],
        out: &mut Vec<Vec<u8>>,
    ) -> Outcome {
        self.stats.datagrams += 1;
        let outcome = self.answer(now, from, catalog, datagram, out);
        let s = &mut self.stats;
        match outcome {
            Outcome::Segment { .. } => s.segments += 1,
            Outcome::Metadata => s.metadata += 1,
            Outcome::Congestion => s.congestion += 1,
            Outcome::Dropped(Ignored::NotAllowed) => s.not_allowed += 1,
            Outcome::Dropped(Ignored::NotAnInterest) => s.not_interest += 1,
            Outcome::Dropped(Ignored::NoSuchData) => s.no_such_data += 1,
            Outcome::Dropped(Ignored::Unreadable) => s.unreadable += 1,
        }
        outcome
    }

    fn answer<C: Catalog + ?Sized>(
        &mut self,
        now: Time,
        from: SocketAddr,
        catalog: &C,
        datagram: &[u8],
        out: &mut Vec<Vec<u8>>,
    ) -> Outcome {
        if !self.guard.allows(from.ip()) {
            return Outcome::Dropped(Ignored::NotAllowed);
        }
        let Some((lp, interest)) = decode_interest(datagram) else {
            return Outcome::Dropped(Ignored::NotAnInterest);
        };
        let Some((object, ask)) = self.parse_name(&interest) else {
            return Outcome::Dropped(Ignored::NoSuchData);
        };
        let Some((eid, size)) = catalog.resolve(&object) else {
            return Outcome::Dropped(Ignored::NoSuchData);
        };
        let version = version_of(&eid);
        let versioned = self.cfg.prefix.clone().with_path(&object).with(Component::version(version));
        let data = match ask {
            Ask::Metadata => {
                let mut d = segmented::metadata_data(&versioned, version, self.cfg.metadata_freshness_ms);
                (d.encode_signed(), None)
            }
            Ask::Segment { version: Some(v), .. } if v != version => return Outcome::Dropped(Ignored::NoSuchData),
            Ask::Segment { segment, .. } => {
                let seg = self.cfg.segment_size as u64;
                let count = size.div_ceil(seg).max(1);
                if segment >= count {
                    return Outcome::Dropped(Ignored::NoSuchData);
                }
                let offset = segment * seg;
                let len = seg.min(size - offset);
                // A segment costs the budget its content and ≈ 100 bytes of name and headers.
                if !self.guard.budget.admit(now, from, len + 100) {
                    out.push(congestion_nack(lp, datagram));
                    return Outcome::Congestion;
                }
                let mut content = vec![0u8; len as usize];
                if catalog.read_at(&eid, offset, &mut content).is_err() {
                    return Outcome::Dropped(Ignored::Unreadable);
                }
                self.stats.content_bytes += len;
                let mut d = Data::new(versioned.with(Component::segment(segment)), content);
                d.meta.freshness_ms = Some(self.cfg.freshness_ms);
                d.meta.final_block = Some(Component::segment(count - 1));
                (d.encode_signed(), Some(segment))
            }
        };
        let (wire, segment) = data;
        let before = out.len();
        self.send(lp.pit_token, wire, out);
        match segment {
            Some(segment) => Outcome::Segment { segment, datagrams: out.len() - before },
            None => Outcome::Metadata,
        }
    }

    /// The object and what of it an Interest asks for, if it is under the prefix.
    fn parse_name(&self, interest: &Interest) -> Option<(String, Ask)> {
        let name = &interest.name;
        if !self.cfg.prefix.is_prefix_of(name) {
            return None;
        }
        let rest = &name.components()[self.cfg.prefix.len()..];
        if segmented::discovery_prefix(interest).is_some() {
            return Some((object_name(&rest[..rest.len() - 1])?, Ask::Metadata));
        }
        match rest {
            [obj @ .., v, s] if v.as_version().is_some() && s.as_segment().is_some() => {
                Some((object_name(obj)?, Ask::Segment { version: v.as_version(), segment: s.as_segment()? }))
            }
            [obj @ .., v] if interest.can_be_prefix && v.as_version().is_some() => {
                Some((object_name(obj)?, Ask::Segment { version: v.as_version(), segment: 0 }))
            }
            obj if interest.can_be_prefix => Some((object_name(obj)?, Ask::Segment { version: None, segment: 0 })),
            _ => None,
        }
    }

    /// Send `wire` (an encoded Data) to the asker: bare if it fits and needs no header, else
    /// in LpPackets (fragmented to the MTU), with the Interest's PitToken.
    fn send(&mut self, pit_token: Option<Vec<u8>>, wire: Vec<u8>, out: &mut Vec<Vec<u8>>) {
        if pit_token.is_none() && wire.len() <= self.cfg.mtu {
            out.push(wire);
            return;
        }
        let packet = LpPacket { pit_token, ..LpPacket::wrap(wire) };
        // Only a segment size far above the MTU (more than 64 fragments) fails; the front end
        // refuses such settings, so a failure drops the answer rather than panics.
        if let Ok(fragments) = lp::fragment(&packet, self.cfg.mtu, self.next_seq) {
            self.next_seq = self.next_seq.wrapping_add(fragments.len() as u64);
            out.extend(fragments);
        }
    }
}

/// The LpPacket (for its PitToken) and the Interest in a datagram, if it holds one whole.
fn decode_interest(datagram: &[u8]) -> Option<(LpPacket, Interest)> {
    let mut lp = LpPacket::decode(datagram).ok()?;
    if lp.nack.is_some() || lp.is_fragment() {
        return None;
    }
    let interest = Interest::decode(lp.fragment.as_deref()?).ok()?;
    lp.fragment = None;
    Some((lp, interest))
}

/// A catalogue name from generic name components: their UTF-8 values joined by `/`.
fn object_name(components: &[Component]) -> Option<String> {
    if components.is_empty() {
        return None;
    }
    let parts: Option<Vec<&str>> = components
        .iter()
        .map(|c| (c.ty() == super::tlv::types::GENERIC).then(|| std::str::from_utf8(c.value()).ok()).flatten())
        .collect();
    Some(parts?.join("/"))
}

/// A Nack "Congestion" for the Interest in `datagram` (NDNLPv2 §Nack: the Interest goes back
/// in the Fragment; no larger than what came, plus the Nack header's few bytes).
fn congestion_nack(mut lp: LpPacket, datagram: &[u8]) -> Vec<u8> {
    let interest = LpPacket::decode(datagram).ok().and_then(|p| p.fragment).unwrap_or_default();
    lp.nack = Some(Nack { reason: Some(NackReason::Congestion) });
    lp.sequence = None;
    lp.fragment = Some(interest);
    lp.encode()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ndn::Verification;
    use crate::ndn::lp::{Reassembler, ReassemblerLimits};
    use crate::server::MemoryCatalog;
    use proptest::prelude::*;

    const OBJECT: &str = "data/a.bin";

    fn content() -> Vec<u8> {
        (0..20_500u32).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    fn catalog() -> MemoryCatalog {
        MemoryCatalog::new([(OBJECT.to_string(), content())])
    }

    fn producer() -> Producer {
        Producer::new(ProducerConfig::new("/rdtp".parse().unwrap()))
    }

    fn local() -> SocketAddr {
        "127.0.0.1:40000".parse().unwrap()
    }

    fn interest(uri: &str, can_be_prefix: bool, must_be_fresh: bool) -> Vec<u8> {
        Interest { can_be_prefix, must_be_fresh, nonce: Some([1, 2, 3, 4]), ..Interest::new(uri.parse().unwrap()) }
            .encode()
    }

    /// The one datagram `p` answers `dgram` from `from` with, decoded and checked as Data.
    fn ask(p: &mut Producer, from: SocketAddr, dgram: &[u8]) -> (Outcome, Option<Data>) {
        let mut out = Vec::new();
        // A second in: the send budget's buckets have filled.
        let outcome = p.handle(Time::ZERO + core::time::Duration::from_secs(1), from, &catalog(), dgram, &mut out);
        let data = match out.as_slice() {
            [] => None,
            [one] => {
                let (d, v) = Data::decode_verified(one).expect("a Data");
                assert_eq!(v, Verification::DigestValid);
                Some(d)
            }
            more => panic!("{} datagrams", more.len()),
        };
        (outcome, data)
    }

    #[test]
    fn a_consumer_discovers_the_version_by_rdr_and_fetches_every_segment() {
        let mut p = producer();
        let (outcome, meta) = ask(&mut p, local(), &interest("/rdtp/data/a.bin/32=metadata", true, true));
        assert_eq!(outcome, Outcome::Metadata);
        let meta = meta.unwrap();
        let versioned = segmented::parse_metadata(&meta).unwrap();
        let eid = catalog().resolve(OBJECT).unwrap().0;
        assert_eq!(versioned.to_string(), format!("/rdtp/data/a.bin/v={}", version_of(&eid)));
        assert!(meta.name.to_string().starts_with("/rdtp/data/a.bin/32=metadata/v="), "{}", meta.name);
        assert_eq!(meta.meta.freshness_ms, Some(1_000));

        let mut got = Vec::new();
        for s in 0..3 {
            let name = versioned.clone().with(Component::segment(s)).to_string();
            let (outcome, d) = ask(&mut p, local(), &interest(&name, false, false));
            assert_eq!(outcome, Outcome::Segment { segment: s, datagrams: 1 });
            let d = d.unwrap();
            assert_eq!(d.name.to_string(), name);
            assert_eq!(segmented::final_segment(&d), Some(2), "20 500 bytes in 8000-byte segments");
            got.extend_from_slice(d.content());
        }
        assert_eq!(got, content());
        // Past the last segment, another version, another object, another prefix: nothing.
        for (uri, cbp) in [
            (versioned.clone().with(Component::segment(3)).to_string(), false),
            ("/rdtp/data/a.bin/v=1/seg=0".to_string(), false),
            ("/rdtp/data/b.bin/32=metadata".to_string(), true),
            ("/other/data/a.bin".to_string(), true),
            ("/rdtp/data/a.bin".to_string(), false),
        ] {
            let (outcome, d) = ask(&mut p, local(), &interest(&uri, cbp, true));
            assert_eq!((outcome, d), (Outcome::Dropped(Ignored::NoSuchData), None), "{uri}");
        }
        assert_eq!(p.stats().segments, 3);
        assert_eq!(p.stats().content_bytes, 20_500);
    }

    #[test]
    fn can_be_prefix_discovery_answers_with_segment_zero_of_the_version() {
        let mut p = producer();
        for uri in
            ["/rdtp/data/a.bin", &format!("/rdtp/data/a.bin/v={}", version_of(&catalog().resolve(OBJECT).unwrap().0))]
        {
            let (outcome, d) = ask(&mut p, local(), &interest(uri, true, false));
            assert_eq!(outcome, Outcome::Segment { segment: 0, datagrams: 1 }, "{uri}");
            let name = d.unwrap().name;
            assert_eq!(name.last().and_then(Component::as_segment), Some(0));
            assert!(name.components()[name.len() - 2].as_version().is_some());
        }
    }

    #[test]
    fn sources_outside_the_allowed_networks_get_nothing() {
        let mut p = producer();
        let dgram = interest("/rdtp/data/a.bin/32=metadata", true, true);
        // TEST-NET-1 (RFC 5737) and 2001:db8:: (RFC 3849): documentation addresses.
        for from in ["192.0.2.1:6363", "[2001:db8::1]:6363"] {
            let (outcome, d) = ask(&mut p, from.parse().unwrap(), &dgram);
            assert_eq!((outcome, d), (Outcome::Dropped(Ignored::NotAllowed), None), "{from}");
        }
        for from in ["10.1.2.3:6363", "[::ffff:127.0.0.1]:6363", "[fd00::1]:6363", "192.168.1.2:1"] {
            assert_eq!(ask(&mut p, from.parse().unwrap(), &dgram).0, Outcome::Metadata, "{from}");
        }
        let mut open =
            Producer::new(ProducerConfig { allow: vec!["0.0.0.0/0".parse().unwrap()], ..p.config().clone() });
        assert_eq!(ask(&mut open, "192.0.2.1:6363".parse().unwrap(), &dgram).0, Outcome::Metadata);
    }

    #[test]
    fn the_pit_token_is_echoed_and_a_large_data_is_fragmented_to_the_mtu() {
        let mut p = Producer::new(ProducerConfig { mtu: 1400, ..producer().config().clone() });
        let v = version_of(&catalog().resolve(OBJECT).unwrap().0);
        let i = interest(&format!("/rdtp/data/a.bin/v={v}/seg=1"), false, false);
        let lp = LpPacket { pit_token: Some(vec![9, 8, 7, 6]), ..LpPacket::wrap(i) };
        let mut out = Vec::new();
        let outcome = p.handle(Time::ZERO, local(), &catalog(), &lp.encode(), &mut out);
        assert!(
            matches!(outcome, Outcome::Segment { segment: 1, datagrams } if datagrams == out.len() && datagrams > 5)
        );
        assert!(out.iter().all(|d| d.len() <= 1400));
        let mut r = Reassembler::new(ReassemblerLimits::default());
        let mut whole = None;
        for d in &out {
            let f = LpPacket::decode(d).unwrap();
            if f.frag_index == Some(0) {
                assert_eq!(f.pit_token.as_deref(), Some(&[9, 8, 7, 6][..]));
            }
            whole = r.receive(Time::ZERO, 1u8, f).unwrap().or(whole);
        }
        let (d, verified) = Data::decode_verified(whole.unwrap().fragment.as_deref().unwrap()).unwrap();
        assert_eq!(verified, Verification::DigestValid);
        assert_eq!(d.content(), &content()[8000..16_000]);
    }

    #[test]
    fn over_budget_a_source_gets_a_congestion_nack_no_larger_than_its_interest() {
        let cfg = producer().config().clone();
        let mut p =
            Producer::new(ProducerConfig { share: ShareConfig { rate: Some(8_000.0), ..cfg.share.clone() }, ..cfg });
        let v = version_of(&catalog().resolve(OBJECT).unwrap().0);
        let i = interest(&format!("/rdtp/data/a.bin/v={v}/seg=0"), false, false);
        let mut out = Vec::new();
        assert!(matches!(p.handle(Time::ZERO, local(), &catalog(), &i, &mut out), Outcome::Segment { .. }));
        out.clear();
        assert_eq!(p.handle(Time::ZERO, local(), &catalog(), &i, &mut out), Outcome::Congestion);
        let [nack] = out.as_slice() else { panic!("{} datagrams", out.len()) };
        assert!(nack.len() <= i.len() + 16, "{} bytes for a {}-byte Interest", nack.len(), i.len());
        let lp = LpPacket::decode(nack).unwrap();
        assert_eq!(lp.nack, Some(Nack { reason: Some(NackReason::Congestion) }));
        assert_eq!(lp.fragment.as_deref(), Some(&i[..]));
    }

    proptest! {
        /// No datagram panics the producer, and nothing but a well-formed Interest for
        /// published data is answered.
        #[test]
        fn hostile_datagrams_never_panic_and_get_no_answer(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut p = producer();
            let mut out = Vec::new();
            let outcome = p.handle(Time::ZERO, local(), &catalog(), &bytes, &mut out);
            if out.is_empty() {
                prop_assert!(matches!(outcome, Outcome::Dropped(_)));
            } else {
                // Random bytes that happen to be an Interest for a published name.
                prop_assert!(Interest::decode(&bytes).is_ok() || LpPacket::decode(&bytes).is_ok());
            }
        }
    }
}
