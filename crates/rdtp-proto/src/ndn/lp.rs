//! NDNLPv2, the NDN link protocol: the LpPacket that carries an Interest or a Data (or a
//! piece of one) over a link such as a UDP face, its Nack, PitToken and CongestionMark
//! headers, and hop-by-hop fragmentation and reassembly.
//!
//! ```text
//! LpPacket = LP-PACKET-TYPE TLV-LENGTH *LpHeaderField [Fragment]
//! LpHeaderField = Sequence / FragIndex / FragCount / PitToken / Nack / CongestionMark / …
//! ```
//!
//! An unrecognised header field is skipped if its TLV-TYPE is in 800..=959 and its two
//! low bits are 0 (NDNLPv2, "Ignoring unknown header fields") and refused otherwise. A bare
//! Interest or Data (no LpPacket around it) is an LpPacket holding only its Fragment.
//!
//! Fragmentation follows NDNLPv2 "Fragmentation and Reassembly": the fragments of one packet
//! carry consecutive Sequence numbers, FragIndex and FragCount; the other headers ride on
//! fragment 0. The [`Reassembler`] keys partial packets by (peer, Sequence − FragIndex), is
//! given the time (sans-IO), and bounds the memory hostile fragments can take.

use core::time::Duration;
use std::collections::BTreeMap;

use super::Error;
use super::tlv::{self, types};
use crate::Time;

/// NackReason values (NDNLPv2, "Network NACK").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NackReason {
    /// 0: none given.
    None,
    /// 50: congestion upstream.
    Congestion,
    /// 100: a duplicate Nonce was seen.
    Duplicate,
    /// 150: no route to the name.
    NoRoute,
    /// Any other value.
    Other(u64),
}

impl NackReason {
    /// The NackReason number.
    pub fn code(self) -> u64 {
        match self {
            NackReason::None => 0,
            NackReason::Congestion => 50,
            NackReason::Duplicate => 100,
            NackReason::NoRoute => 150,
            NackReason::Other(n) => n,
        }
    }

    /// The reason of a NackReason number.
    pub fn from_code(n: u64) -> Self {
        match n {
            0 => NackReason::None,
            50 => NackReason::Congestion,
            100 => NackReason::Duplicate,
            150 => NackReason::NoRoute,
            n => NackReason::Other(n),
        }
    }
}

/// The Nack header: the Interest in the Fragment is refused for `reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Nack {
    /// NackReason, if given.
    pub reason: Option<NackReason>,
}

/// An LpPacket (or a bare network packet, as one with only a Fragment).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LpPacket {
    /// Sequence (8 bytes, fixed width).
    pub sequence: Option<u64>,
    /// FragIndex (0 when absent).
    pub frag_index: Option<u64>,
    /// FragCount (1 when absent).
    pub frag_count: Option<u64>,
    /// PitToken (1 to 32 bytes), echoed by the upstream with the Data or Nack.
    pub pit_token: Option<Vec<u8>>,
    /// Nack header.
    pub nack: Option<Nack>,
    /// CongestionMark.
    pub congestion_mark: Option<u64>,
    /// Fragment: an encoded Interest or Data, or a piece of one (`None`: an idle packet).
    pub fragment: Option<Vec<u8>>,
}

/// True if `wire` is one Interest or Data TLV, nothing more.
fn is_network_packet(wire: &[u8]) -> bool {
    let mut r = tlv::Reader::new(wire);
    matches!(r.read(), Ok(e) if e.ty == types::INTEREST || e.ty == types::DATA) && r.is_empty()
}

/// NDNLPv2: an unrecognised field in 800..=959 whose two low bits are 0 may be ignored.
pub fn can_ignore(ty: u64) -> bool {
    (800..=959).contains(&ty) && ty & 3 == 0
}

impl LpPacket {
    /// An LpPacket carrying the whole network packet `wire`.
    pub fn wrap(wire: Vec<u8>) -> Self {
        LpPacket { fragment: Some(wire), ..LpPacket::default() }
    }

    /// True if this is one piece of a fragmented packet (FragCount above 1).
    pub fn is_fragment(&self) -> bool {
        self.frag_count.is_some_and(|c| c > 1)
    }

    /// Decode a datagram from an NDN face: an LpPacket, or a bare Interest or Data.
    pub fn decode(datagram: &[u8]) -> Result<Self, Error> {
        let mut r = tlv::Reader::new(datagram);
        let top = r.read()?;
        if !r.is_empty() {
            return Err(Error::Trailing);
        }
        match top.ty {
            types::INTEREST | types::DATA => return Ok(LpPacket::wrap(datagram.to_vec())),
            types::LP_PACKET => {}
            t => return Err(Error::Unexpected { expected: "LpPacket, Interest or Data", found: t }),
        }
        let mut p = LpPacket::default();
        let mut seen: Vec<u64> = Vec::new();
        let mut fields = top.reader();
        while let Some(e) = fields.next_element() {
            let e = e?;
            if p.fragment.is_some() {
                return Err(Error::Invalid("Fragment must be the last field"));
            }
            let recognised = matches!(
                e.ty,
                types::LP_FRAGMENT
                    | types::LP_SEQUENCE
                    | types::LP_FRAG_INDEX
                    | types::LP_FRAG_COUNT
                    | types::LP_PIT_TOKEN
                    | types::LP_NACK
                    | types::LP_CONGESTION_MARK
            );
            if !recognised {
                if can_ignore(e.ty) {
                    continue;
                }
                return Err(Error::Critical(e.ty));
            }
            if seen.contains(&e.ty) {
                return Err(Error::Invalid("repeated LpPacket field"));
            }
            seen.push(e.ty);
            match e.ty {
                types::LP_FRAGMENT => p.fragment = Some(e.value.to_vec()),
                types::LP_SEQUENCE => {
                    let s: [u8; 8] = e.value.try_into().map_err(|_| Error::Invalid("Sequence is 8 bytes"))?;
                    p.sequence = Some(u64::from_be_bytes(s));
                }
                types::LP_FRAG_INDEX => p.frag_index = Some(e.nni()?),
                types::LP_FRAG_COUNT => p.frag_count = Some(e.nni()?),
                types::LP_PIT_TOKEN => {
                    if !(1..=32).contains(&e.value.len()) {
                        return Err(Error::Invalid("PitToken length"));
                    }
                    p.pit_token = Some(e.value.to_vec());
                }
                types::LP_NACK => {
                    let mut reason = None;
                    let mut inner = e.reader();
                    while let Some(x) = inner.next_element() {
                        let x = x?;
                        if x.ty == types::LP_NACK_REASON && reason.is_none() {
                            reason = Some(NackReason::from_code(x.nni()?));
                        }
                    }
                    p.nack = Some(Nack { reason });
                }
                _ => p.congestion_mark = Some(e.nni()?),
            }
        }
        let (index, count) = (p.frag_index.unwrap_or(0), p.frag_count.unwrap_or(1));
        if count == 0 || index >= count {
            return Err(Error::Invalid("FragIndex must be below FragCount"));
        }
        Ok(p)
    }

    /// The header fields (everything but Fragment) in TLV-TYPE order.
    fn encode_headers(&self, v: &mut Vec<u8>) {
        if let Some(s) = self.sequence {
            tlv::write_tlv(v, types::LP_SEQUENCE, &s.to_be_bytes());
        }
        if let Some(i) = self.frag_index {
            tlv::write_nni_tlv(v, types::LP_FRAG_INDEX, i);
        }
        if let Some(c) = self.frag_count {
            tlv::write_nni_tlv(v, types::LP_FRAG_COUNT, c);
        }
        if let Some(t) = &self.pit_token {
            tlv::write_tlv(v, types::LP_PIT_TOKEN, t);
        }
        if let Some(n) = &self.nack {
            tlv::write_nested(v, types::LP_NACK, |w| {
                if let Some(r) = n.reason {
                    tlv::write_nni_tlv(w, types::LP_NACK_REASON, r.code());
                }
            });
        }
        if let Some(m) = self.congestion_mark {
            tlv::write_nni_tlv(v, types::LP_CONGESTION_MARK, m);
        }
    }

    /// Encode. A packet with nothing but a Fragment holding a whole Interest or Data is
    /// sent bare (the network packet itself), as NDN forwarders do.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.encode_headers(&mut v);
        match &self.fragment {
            Some(f) if v.is_empty() && is_network_packet(f) => return f.clone(),
            Some(f) => tlv::write_tlv(&mut v, types::LP_FRAGMENT, f),
            None => {}
        }
        let mut out = Vec::with_capacity(v.len() + 4);
        tlv::write_tlv(&mut out, types::LP_PACKET, &v);
        out
    }

    /// Bytes of the header fields.
    fn headers_len(&self) -> usize {
        let mut v = Vec::new();
        self.encode_headers(&mut v);
        v.len()
    }
}

/// The most fragments [`fragment`] makes of one packet, and the default limit of the
/// [`Reassembler`].
pub const MAX_FRAGMENTS: u64 = 64;

/// Split `packet` (its Fragment, with its other headers going on fragment 0) into
/// LpPackets of at most `mtu` bytes each, numbered from Sequence `first_seq`. A packet that
/// fits is one LpPacket with only a Sequence added. The caller's next Sequence is
/// `first_seq` plus the number of datagrams returned.
pub fn fragment(packet: &LpPacket, mtu: usize, first_seq: u64) -> Result<Vec<Vec<u8>>, Error> {
    let payload = packet.fragment.as_deref().ok_or(Error::Invalid("nothing to fragment"))?;
    let whole = LpPacket { sequence: Some(first_seq), frag_index: None, frag_count: None, ..packet.clone() };
    let headers = LpPacket { fragment: None, sequence: None, ..packet.clone() }.headers_len();
    // Fixed costs of every fragment, with lengths counted at their widest for `mtu`.
    let lp_tl = 1 + tlv::varnum_len(mtu as u64);
    let frag_tl = 1 + tlv::varnum_len(mtu as u64);
    let fixed = lp_tl + 10 + frag_tl;
    if fixed + headers + 1 >= mtu {
        return Err(Error::TooLarge("MTU too small for an LpPacket"));
    }
    if lp_tl + 10 + headers + frag_tl + payload.len() <= mtu {
        return Ok(vec![whole.encode()]);
    }
    let capacity = |i: u64, n: u64| {
        let extra = if i == 0 { headers } else { 0 };
        mtu.saturating_sub(fixed + 2 + tlv::nni_len(i) + 2 + tlv::nni_len(n) + extra)
    };
    let n = (2..=MAX_FRAGMENTS)
        .find(|&n| (0..n).map(|i| capacity(i, n)).sum::<usize>() >= payload.len())
        .ok_or(Error::TooLarge("packet needs more than MAX_FRAGMENTS fragments"))?;
    let mut out = Vec::with_capacity(n as usize);
    let mut rest = payload;
    for i in 0..n {
        let take = capacity(i, n).min(rest.len());
        let (piece, tail) = rest.split_at(take);
        rest = tail;
        let mut lp = if i == 0 { packet.clone() } else { LpPacket::default() };
        lp.sequence = Some(first_seq.wrapping_add(i));
        lp.frag_index = Some(i);
        lp.frag_count = Some(n);
        lp.fragment = Some(piece.to_vec());
        let wire = lp.encode();
        debug_assert!(wire.len() <= mtu, "fragment {i} of {n}: {} > {mtu}", wire.len());
        out.push(wire);
    }
    Ok(out)
}

/// Bounds on the [`Reassembler`]'s state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReassemblerLimits {
    /// Most fragments one packet may have (FragCount above it is refused).
    pub max_fragments: u64,
    /// Most packets being reassembled at once (all peers together).
    pub max_partials: usize,
    /// Most fragment bytes held (all peers together).
    pub max_bytes: usize,
    /// A partial packet not completed this long after its first fragment is dropped.
    pub timeout: Duration,
}

impl Default for ReassemblerLimits {
    /// 64 fragments, 256 partial packets, 4 MiB, 500 ms (NFD's reassembly timeout).
    fn default() -> Self {
        ReassemblerLimits {
            max_fragments: MAX_FRAGMENTS,
            max_partials: 256,
            max_bytes: 4 << 20,
            timeout: Duration::from_millis(500),
        }
    }
}

/// What the reassembler did, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReassemblerStats {
    /// Packets completed.
    pub completed: u64,
    /// Partial packets dropped at their timeout.
    pub timed_out: u64,
    /// Partial packets dropped to make room (memory or count limits).
    pub evicted: u64,
    /// Fragments received twice (ignored).
    pub duplicates: u64,
    /// Fragments refused (inconsistent FragCount, too many fragments, no Sequence…).
    pub refused: u64,
}

#[derive(Debug)]
struct Partial {
    /// Fragment 0's headers (no Fragment), once it has arrived.
    headers: Option<LpPacket>,
    pieces: Vec<Option<Vec<u8>>>,
    received: u64,
    bytes: usize,
    deadline: Time,
    /// Arrival order of the first fragment (the oldest is evicted first).
    serial: u64,
}

/// Reassembles fragmented LpPackets from any number of peers (`K`: their addresses).
/// Sans-IO: `now` is passed in; call [`Reassembler::handle_timeout`] at
/// [`Reassembler::poll_timeout`]. Memory: at most `max_bytes` of fragments and
/// `max_partials` partial packets; past either, the oldest partial packet is dropped.
#[derive(Debug)]
pub struct Reassembler<K> {
    limits: ReassemblerLimits,
    partials: BTreeMap<(K, u64), Partial>,
    bytes: usize,
    serial: u64,
    stats: ReassemblerStats,
}

impl<K: Ord + Clone> Reassembler<K> {
    /// An empty reassembler.
    pub fn new(limits: ReassemblerLimits) -> Self {
        Reassembler { limits, partials: BTreeMap::new(), bytes: 0, serial: 0, stats: ReassemblerStats::default() }
    }

    /// Bytes of fragments held.
    pub fn bytes_held(&self) -> usize {
        self.bytes
    }

    /// Packets being reassembled.
    pub fn partials(&self) -> usize {
        self.partials.len()
    }

    /// Counters.
    pub fn stats(&self) -> ReassemblerStats {
        self.stats
    }

    /// The earliest time a partial packet expires.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.partials.values().map(|p| p.deadline).min()
    }

    /// Drop the partial packets whose time is up.
    pub fn handle_timeout(&mut self, now: Time) {
        let expired: Vec<(K, u64)> =
            self.partials.iter().filter(|(_, p)| p.deadline <= now).map(|(k, _)| k.clone()).collect();
        for k in expired {
            self.remove(&k);
            self.stats.timed_out += 1;
        }
    }

    fn remove(&mut self, key: &(K, u64)) -> Option<Partial> {
        let p = self.partials.remove(key)?;
        self.bytes -= p.bytes;
        Some(p)
    }

    fn evict_oldest(&mut self) -> bool {
        let Some(k) = self.partials.iter().min_by_key(|(_, p)| p.serial).map(|(k, _)| k.clone()) else { return false };
        self.remove(&k);
        self.stats.evicted += 1;
        true
    }

    /// Take one received LpPacket from `from`. A packet that is not a fragment comes back
    /// at once; a fragment is held until its packet is complete, which then comes back as
    /// one LpPacket (fragment 0's headers, no Sequence/FragIndex/FragCount, the whole
    /// network packet as its Fragment). Errors are fragments refused (nothing else changes
    /// but that an inconsistent partial packet is dropped).
    pub fn receive(&mut self, now: Time, from: K, lp: LpPacket) -> Result<Option<LpPacket>, Error> {
        self.handle_timeout(now);
        if !lp.is_fragment() {
            return Ok(Some(lp));
        }
        let refuse = |s: &mut Self, e| {
            s.stats.refused += 1;
            Err(e)
        };
        let count = lp.frag_count.unwrap_or(1);
        let index = lp.frag_index.unwrap_or(0);
        let (Some(seq), Some(piece)) = (lp.sequence, lp.fragment.as_ref()) else {
            return refuse(self, Error::Missing("Sequence or Fragment of a fragment"));
        };
        if count > self.limits.max_fragments || index >= count {
            return refuse(self, Error::Invalid("FragCount above the reassembler's limit"));
        }
        if piece.len() > self.limits.max_bytes {
            return refuse(self, Error::TooLarge("fragment above the reassembler's memory"));
        }
        let key = (from, seq.wrapping_sub(index));
        if let Some(p) = self.partials.get(&key) {
            if p.pieces.len() as u64 != count {
                self.remove(&key);
                return refuse(self, Error::Invalid("FragCount differs between fragments"));
            }
            if p.pieces[index as usize].is_some() {
                self.stats.duplicates += 1;
                return Ok(None);
            }
        } else {
            while self.partials.len() >= self.limits.max_partials && self.evict_oldest() {}
        }
        while self.bytes + piece.len() > self.limits.max_bytes && self.evict_oldest() {}
        let serial = self.serial;
        let deadline = now + self.limits.timeout;
        let p = self.partials.entry(key.clone()).or_insert_with(|| Partial {
            headers: None,
            pieces: vec![None; count as usize],
            received: 0,
            bytes: 0,
            deadline,
            serial,
        });
        if p.received == 0 {
            self.serial += 1;
        }
        let len = piece.len();
        if index == 0 {
            p.headers =
                Some(LpPacket { fragment: None, sequence: None, frag_index: None, frag_count: None, ..lp.clone() });
        }
        p.pieces[index as usize] = lp.fragment;
        p.received += 1;
        p.bytes += len;
        self.bytes += len;
        if p.received < count {
            return Ok(None);
        }
        let p = self.remove(&key).expect("present");
        let mut whole = p.headers.unwrap_or_default();
        whole.fragment = Some(p.pieces.into_iter().flatten().flatten().collect());
        self.stats.completed += 1;
        Ok(Some(whole))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::ndn::unhex;

    // Vectors from ndn-cxx tests/unit/lp/packet.t.cpp (named-data/ndn-cxx).

    #[test]
    fn ndn_cxx_encode_vectors() {
        let p = LpPacket { sequence: Some(1000), fragment: Some(vec![0x03, 0xe8]), ..LpPacket::default() };
        assert_eq!(p.encode(), unhex("640e 5108 00000000000003e8 5002 03e8")); // EncodeFragment
        let p = LpPacket { nack: Some(Nack { reason: Some(NackReason::Duplicate) }), ..LpPacket::default() };
        assert_eq!(p.encode(), unhex("6409 fd032005 fd03210164")); // EncodeSubTlv
    }

    #[test]
    fn ndn_cxx_decode_vectors() {
        // DecodeNormal: FragIndex, FragCount, three Acks (836: ignorable), Fragment.
        let p = LpPacket::decode(&unhex(
            "642e 520100 530101 fd034408 0000000000000001 fd034408 0000000000000003 fd034408 0000000000000002 5002 03e8",
        ))
        .unwrap();
        assert_eq!((p.frag_index, p.frag_count, p.fragment), (Some(0), Some(1), Some(vec![0x03, 0xe8])));
        // DecodeFragment: only a Fragment, not a network packet: stays an LpPacket.
        let p = LpPacket::decode(&unhex("6404 5002 03e8")).unwrap();
        assert_eq!((p.fragment.as_deref(), p.encode()), (Some(&[0x03, 0xe8][..]), unhex("6404 5002 03e8")));
        // DecodeIdle, DecodeEmpty, DecodeNonDiscoveryHeader (844, ignorable).
        assert_eq!(LpPacket::decode(&unhex("6406 520100 530101")).unwrap().fragment, None);
        assert_eq!(LpPacket::decode(&unhex("6400")), Ok(LpPacket::default()));
        assert_eq!(LpPacket::decode(&unhex("6404 fd034c00")), Ok(LpPacket::default()));
        // DecodeIgnoredHeader: 804 is ignorable; DecodeUnrecognizedHeader: 802 is not.
        assert!(LpPacket::decode(&unhex("640c 520100 fd03240102 5002 03e8")).is_ok());
        assert_eq!(LpPacket::decode(&unhex("640c 520100 fd03220102 5002 03e8")), Err(Error::Critical(802)));
        // DecodeSeqNum: Sequence is fixed-width.
        assert!(LpPacket::decode(&unhex("640a 5104a4a5a6a7 5002ffff")).is_err());
        assert_eq!(
            LpPacket::decode(&unhex("640e 5108a0a1a2a3a4a5a6a7 5002ffff")).unwrap().sequence,
            Some(0xa0a1a2a3a4a5a6a7)
        );
        for (bad, why) in [
            ("6406 520100 520101", "repeated FragIndex"),
            ("6408 5002 03e8 5002 03e9", "repeated Fragment"),
            ("640a 520100 5002 03e8 530101", "Fragment not last"),
            ("0700", "a Name (DecodeUnrecognizedTlvType)"),
            ("6406 520102 530102", "FragIndex beyond FragCount"),
        ] {
            assert!(LpPacket::decode(&unhex(bad)).is_err(), "{why}");
        }
        // DecodeBareNetworkLayerPacket.
        let bare = unhex("050a 070203e8 0a0401020304");
        assert_eq!(LpPacket::decode(&bare), Ok(LpPacket::wrap(bare.clone())));
        assert_eq!(LpPacket::wrap(bare.clone()).encode(), bare);
    }

    #[test]
    fn nack_with_pit_token() {
        let interest = unhex("050a 070203e8 0a0401020304");
        let p = LpPacket {
            pit_token: Some(vec![0xaa; 8]),
            nack: Some(Nack { reason: Some(NackReason::NoRoute) }),
            fragment: Some(interest),
            ..LpPacket::default()
        };
        assert_eq!(LpPacket::decode(&p.encode()), Ok(p));
        assert!(LpPacket::decode(&unhex("6402 6200")).is_err(), "empty PitToken");
    }

    fn data_of(n: usize) -> Vec<u8> {
        let mut d = super::super::Data::new("/big/seg=0".parse().unwrap(), (0..n).map(|i| i as u8).collect::<Vec<_>>());
        d.encode_signed()
    }

    #[test]
    fn fragments_an_8800_byte_data_over_1500_bytes_and_reassembles() {
        let data = data_of(8800);
        assert!(data.len() > 8800);
        let packet = LpPacket { pit_token: Some(vec![1, 2, 3, 4]), ..LpPacket::wrap(data.clone()) };
        let frags = fragment(&packet, 1500, 77).unwrap();
        // 8,850-odd bytes in pieces of 1,470-odd: 7 datagrams, none above the MTU.
        assert_eq!(frags.len(), 7);
        assert!(frags.iter().all(|f| f.len() <= 1500));
        let mut r = Reassembler::new(ReassemblerLimits::default());
        let peer = 1u8;
        // Out of order, with a duplicate.
        let mut order: Vec<usize> = (0..frags.len()).rev().collect();
        order.insert(2, 5);
        let mut done = None;
        for i in order {
            let lp = LpPacket::decode(&frags[i]).unwrap();
            assert_eq!(lp.sequence, Some(77 + i as u64));
            if let Some(p) = r.receive(Time::ZERO, peer, lp).unwrap() {
                done = Some(p);
            }
        }
        let done = done.expect("reassembled");
        assert_eq!(done.fragment.as_deref(), Some(&data[..]));
        assert_eq!(done.pit_token, Some(vec![1, 2, 3, 4]));
        assert_eq!((r.bytes_held(), r.partials(), r.stats().duplicates, r.stats().completed), (0, 0, 1, 1));
        // Small enough: one LpPacket with a Sequence only.
        let one = fragment(&LpPacket::wrap(data_of(100)), 1500, 5).unwrap();
        assert_eq!(one.len(), 1);
        let lp = LpPacket::decode(&one[0]).unwrap();
        assert_eq!((lp.sequence, lp.frag_count), (Some(5), None));
        assert_eq!(r.receive(Time::ZERO, peer, lp.clone()).unwrap(), Some(lp));
        assert!(fragment(&LpPacket::wrap(data_of(100)), 20, 0).is_err());
        assert!(fragment(&LpPacket::wrap(data_of(200_000)), 1500, 0).is_err());
    }

    #[test]
    fn every_mtu_splits_within_bounds() {
        let data = data_of(3000);
        for mtu in [40, 41, 100, 253, 254, 255, 256, 300, 1000, 1499, 3000, 3100] {
            let Ok(frags) = fragment(&LpPacket::wrap(data.clone()), mtu, u64::MAX - 1) else { continue };
            assert!(frags.iter().all(|f| f.len() <= mtu), "mtu {mtu}");
            let mut r = Reassembler::new(ReassemblerLimits::default());
            let out: Vec<LpPacket> = frags
                .iter()
                .filter_map(|f| r.receive(Time::ZERO, 0u8, LpPacket::decode(f).unwrap()).unwrap())
                .collect();
            assert_eq!(out.len(), 1, "mtu {mtu}");
            assert_eq!(out[0].fragment.as_deref(), Some(&data[..]), "mtu {mtu}");
        }
    }

    #[test]
    fn timeouts_and_inconsistent_fragments() {
        let frags = fragment(&LpPacket::wrap(data_of(4000)), 1500, 0).unwrap();
        let mut r = Reassembler::new(ReassemblerLimits::default());
        r.receive(Time::ZERO, 0u8, LpPacket::decode(&frags[0]).unwrap()).unwrap();
        assert_eq!(r.poll_timeout(), Some(Time::from_millis(500)));
        r.handle_timeout(Time::from_millis(499));
        assert_eq!(r.partials(), 1);
        r.handle_timeout(Time::from_millis(500));
        assert_eq!((r.partials(), r.bytes_held(), r.stats().timed_out), (0, 0, 1));
        // Another peer's fragments do not mix with these.
        let t = Time::from_millis(1000);
        assert_eq!(r.receive(t, 0u8, LpPacket::decode(&frags[0]).unwrap()), Ok(None));
        assert_eq!(r.receive(t, 1u8, LpPacket::decode(&frags[1]).unwrap()), Ok(None));
        assert_eq!(r.partials(), 2);
        // The same key with another FragCount: refused and the partial dropped.
        let mut odd = LpPacket::decode(&frags[1]).unwrap();
        odd.frag_count = Some(9);
        assert!(r.receive(t, 0u8, odd).is_err());
        assert_eq!(r.partials(), 1);
        let mut huge = LpPacket::decode(&frags[1]).unwrap();
        huge.frag_count = Some(MAX_FRAGMENTS + 1);
        assert!(r.receive(t, 0u8, huge).is_err());
        assert_eq!(r.stats().refused, 2);
    }

    #[test]
    fn a_fragment_flood_stays_within_the_limits() {
        let limits = ReassemblerLimits {
            max_fragments: 64,
            max_partials: 16,
            max_bytes: 20_000,
            timeout: Duration::from_secs(60),
        };
        let mut r = Reassembler::new(limits);
        // 10 000 first fragments of packets that never complete, 1400 bytes each, from many
        // peers and sequence numbers.
        for i in 0..10_000u64 {
            let lp = LpPacket {
                sequence: Some(i * 1000),
                frag_index: Some(0),
                frag_count: Some(64),
                fragment: Some(vec![0; 1400]),
                ..LpPacket::default()
            };
            assert_eq!(r.receive(Time::ZERO, (i % 7) as u8, lp), Ok(None));
            assert!(r.bytes_held() <= 20_000 && r.partials() <= 16, "after {i}");
        }
        assert_eq!(r.stats().evicted, 10_000 - r.partials() as u64);
        // A genuine packet still gets through afterwards.
        let data = data_of(5000);
        let frags = fragment(&LpPacket::wrap(data.clone()), 1500, 5).unwrap();
        let out: Vec<LpPacket> =
            frags.iter().filter_map(|f| r.receive(Time::ZERO, 9u8, LpPacket::decode(f).unwrap()).unwrap()).collect();
        assert_eq!(out[0].fragment.as_deref(), Some(&data[..]));
    }
}
