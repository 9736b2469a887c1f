//! # The NDN consumer: rdtp's one receiver, speaking NDN
//!
//! [`Consumer`] fetches a segmented object ("NDN naming conventions" rev. 3, as ndnputchunks
//! and NDNts publish it: `/prefix/v=<version>/seg=<n>`, FinalBlockId on every segment) from
//! one NDN node — a producer's or a forwarder's UDP face — with every rdtp controller. It is a
//! translator around the one [`Receiver`]: the receiver keeps the request window, the
//! congestion control, loss detection, re-requests and reassembly exactly as for rdtp, and
//! talks rdtp to a virtual peer; this module turns its Requests into Interests and the NDN
//! Data and Nacks that come back into rdtp Data and Nacks.
//!
//! 1. **Discovery** (its own small state machine, before the receiver exists): RDR
//!    (`/prefix/32=metadata`, CanBePrefix, MustBeFresh) gives the versioned name; a name that
//!    already ends in a version is used as given, and when no metadata comes within the
//!    first retry interval (or a Nack refuses it) the name as given is asked for too
//!    (`/prefix/seg=0`, and `/prefix` with CanBePrefix, which finds `/prefix/v=<v>/seg=0` of
//!    a producer that publishes versions without metadata), whichever answers first winning. Segment 0 gives the segment size
//!    (its Content's length) and the last segment number (FinalBlockId); the last segment
//!    gives the exact size. The receiver then starts on `Target::Known` with the segment as
//!    its unit and EID verification off (the EID is BLAKE3 of the versioned name, a label:
//!    NDN has no object hash), and asks for segments 0 and the last again like any other
//!    (so no sample of the discovery skews its estimators).
//! 2. **Requests → Interests**: one Interest per unit of each rdtp Request,
//!    `/prefix/v=V/seg=u`, with a fresh Nonce (spec 0.3 "Nonce") drawn from the seeded
//!    generator and a fixed InterestLifetime, inside an NDNLPv2 LpPacket whose PitToken is
//!    the request's tag. Per segment the latest tags (and nonces) are remembered.
//! 3. **Data → rdtp Data**: LpPacket fragments are reassembled first (NDNLPv2
//!    "Fragmentation and Reassembly"); a Data must have exactly the name of a segment of the
//!    object, the segment's exact length, and a valid DigestSha256 — or another signature
//!    type, which is accepted and counted unverified — unless a trust anchor is configured
//!    ([`ConsumerConfig::trust`]): then every segment must be signed by its key; a bad
//!    digest or signature is dropped and never reaches the receiver. It is handed over for the tag its
//!    echoed PitToken names (a tag echo as rdtp's: Karn's rule keeps ambiguous samples out)
//!    or else the latest tag of its segment.
//! 4. **Nacks** (NDNLPv2 "Network NACK"), matched to our Interest by name and Nonce:
//!    Congestion → rdtp `Busy` (back off), NoRoute → rdtp `NoRoute` (the receiver's
//!    confirmation rule, then a clear failure; during discovery at once), Duplicate and
//!    others → ignored (the loss timer asks again).
//!
//! CCTCP's per-source state needs the routers' annotations, which NDN lacks: with NDN every
//! Data counts as from one source.
//!
//! ## What this module must not do
//!
//! What the whole crate must not: no sockets, no clock reads (`now` is passed in), no
//! ambient randomness (nonces come from a generator seeded by the configuration), no files.
//! It must not grow a second receiver or a second congestion control: everything a fetch
//! decides is the [`Receiver`]'s. It must never panic on bytes from the network, and never
//! hand the receiver a Data whose digest does not match. Datagrams from any address but
//! the peer are dropped.

use core::time::Duration;
use std::collections::{BTreeMap, VecDeque};
use std::net::{Ipv4Addr, SocketAddr};

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg32;

use super::data::{Data as NdnData, Verification, content_type};
use super::interest::Interest;
use super::lp::{LpPacket, NackReason, Reassembler, ReassemblerLimits, ReassemblerStats};
use super::name::{Component, Name};
use super::segmented;
use crate::eid::Eid;
use crate::node::{NodeId, Transmit};
use crate::receiver::{CcSnapshot, Event, FetchError, MAX_DATAGRAM, Receiver, ReceiverConfig, Stats, Target};
use crate::recovery::window::PREV_TAGS;
use crate::time::Time;
use crate::wire::{self, DATA_HEADER_LEN, DataFlags, MAX_UNIT, MIN_UNIT, NackCode, Options, Packet};

#[cfg(test)]
mod tests;

/// The largest NDN packet a consumer sends or expects whole (NDN's customary MAX_NDN_PACKET_SIZE).
pub const MAX_NDN_PACKET: usize = 8800;

/// NDN's UDP port.
pub const DEFAULT_PORT: u16 = 6363;

/// The node id Data and Nacks from the NDN node are attributed to (NDN says nothing of who
/// served a Data: the producer, or a forwarder's content store).
pub const NDN_NODE: NodeId = NodeId(*b"ndn\0\0\0\0\0");

/// The address of the receiver's virtual peer (never on the network).
const VIRTUAL: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0);

/// Tags remembered per segment: the latest and as many earlier ones as the receiver accepts.
const TAGS: usize = PREV_TAGS + 1;

/// How the consumer fetches.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsumerConfig {
    /// The receiver's configuration (controller, RTO, idle timeout, seed, …); its `unit`
    /// and `verify` are set from the object (the segment size; no EID to verify).
    pub receiver: ReceiverConfig,
    /// InterestLifetime of every Interest (spec 0.3 "InterestLifetime"; ndncatchunks' and
    /// the spec's default: 4 s).
    pub lifetime: Duration,
    /// Ask for RDR metadata first (else the name as given is the versioned name).
    pub rdr: bool,
    /// Bounds of the NDNLPv2 reassembler.
    pub reassembly: ReassemblerLimits,
    /// The key every segment must be signed by (`--trust-anchor`): with one, a segment not
    /// signed by it (DigestSha256 included) is dropped, never delivered; without, segments
    /// signed otherwise than with DigestSha256 are taken and counted unverified.
    pub trust: Option<super::trust::TrustAnchor>,
}

impl Default for ConsumerConfig {
    fn default() -> Self {
        ConsumerConfig {
            receiver: ReceiverConfig::default(),
            lifetime: Duration::from_millis(super::interest::DEFAULT_LIFETIME_MS),
            rdr: true,
            reassembly: ReassemblerLimits::default(),
            trust: None,
        }
    }
}

/// What the consumer saw of NDN, counted (the receiver keeps its own [`Stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NdnStats {
    /// Interests sent (discovery included).
    pub interests: u64,
    /// Segments the receiver took whose signature is not DigestSha256 (not verified).
    pub unverified: u64,
    /// The signature type of the last of those (its NDN number).
    pub unverified_type: Option<u64>,
    /// Segments the receiver took with a valid DigestSha256.
    pub digest_verified: u64,
    /// Segments the receiver took signed by the trust anchor's key.
    pub key_verified: u64,
    /// Data dropped: not signed by the trust anchor's key (only with one).
    pub bad_signature: u64,
    /// Data dropped: DigestSha256 did not match.
    pub bad_digest: u64,
    /// Data dropped: not a segment of this object (or not asked for), or a wrong length.
    pub unexpected: u64,
    /// Datagrams that did not decode (truncated TLV, unknown critical type, …), or came
    /// from another address than the peer.
    pub malformed: u64,
    /// Nacks by reason: Congestion, NoRoute, Duplicate, other.
    pub nacks: [u64; 4],
    /// The reassembler's counters.
    pub reassembly: ReassemblerStats,
}

/// An Interest of ours: its name's segment (None: discovery), tag and nonce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sent {
    tag: u32,
    nonce: [u8; 4],
}

/// Where discovery is.
#[derive(Debug, Clone)]
enum Step {
    /// Asking for RDR metadata (while `rdr`: no Nack refused it) and, once `as_given`, for
    /// segment 0 of the name as given.
    Metadata { as_given: bool, rdr: bool },
    /// Asking for segment 0 of the versioned name.
    First,
    /// Asking for the last segment.
    Last { seg_size: usize, last: u64 },
}

#[derive(Debug)]
enum Phase {
    Discovering { step: Step, next_try: Time, interval: Duration },
    Transferring(Box<Receiver>),
    Failed(FetchError),
}

/// The object as discovery found it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Object {
    seg_size: usize,
    last: u64,
    last_len: usize,
    size: u64,
    eid: Eid,
}

/// An NDN consumer around rdtp's receiver (see the module docs). Implements
/// [`crate::Node`]; besides the contract it has the receiver's reads and events.
#[derive(Debug)]
pub struct Consumer {
    cfg: ConsumerConfig,
    peer: SocketAddr,
    /// The name as given.
    name: Name,
    /// The versioned name (`/prefix/v=V`, or the name as given), once known.
    versioned: Option<Name>,
    object: Option<Object>,
    phase: Phase,
    /// Discovery Interests sent in this step: (name, nonce).
    asked: Vec<(Name, [u8; 4])>,
    /// Per segment: the tags and nonces of its latest Interests, latest first.
    segs: BTreeMap<u64, VecDeque<Sent>>,
    rng: Pcg32,
    reasm: Reassembler<()>,
    /// NDN datagrams waiting to be sent.
    out: VecDeque<Vec<u8>>,
    /// Scratch for the receiver's datagrams.
    scratch: Vec<u8>,
    events: VecDeque<Event>,
    stats: NdnStats,
    started: Time,
    last_heard: Time,
}

crate::node::impl_node!(Consumer, MAX_NDN_PACKET);

impl Consumer {
    /// A consumer of the segmented object `name` from the NDN node at `peer`, created at `now`.
    pub fn new(cfg: ConsumerConfig, peer: SocketAddr, name: Name, now: Time) -> Self {
        let as_given = name.last().and_then(Component::as_version).is_some() || !cfg.rdr;
        let step = if as_given { Step::First } else { Step::Metadata { as_given: false, rdr: true } };
        let mut c = Consumer {
            // A stream of its own, apart from the receiver's and the controller's.
            rng: Pcg32::seed_from_u64(cfg.receiver.seed ^ 0x6e64_6e5f_6e6f_6e63),
            reasm: Reassembler::new(cfg.reassembly),
            versioned: as_given.then(|| name.clone()),
            phase: Phase::Discovering { step, next_try: now, interval: cfg.receiver.rto.initial },
            cfg,
            peer,
            name,
            object: None,
            asked: Vec::new(),
            segs: BTreeMap::new(),
            out: VecDeque::new(),
            scratch: vec![0u8; MAX_DATAGRAM.max(DATA_HEADER_LEN + MAX_UNIT as usize)],
            events: VecDeque::new(),
            stats: NdnStats::default(),
            started: now,
            last_heard: now,
        };
        if c.name.is_empty() {
            c.fail(FetchError::BadName { name: "/".into(), why: "an NDN name has at least one component" });
        }
        c
    }

    // ----- accessors (the receiver's, once it runs) --------------------------------------

    /// The NDN node every Interest goes to.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }
    /// The receiver, once discovery is over.
    pub fn receiver(&self) -> Option<&Receiver> {
        match &self.phase {
            Phase::Transferring(rx) => Some(rx),
            _ => None,
        }
    }
    fn receiver_mut(&mut self) -> Option<&mut Receiver> {
        match &mut self.phase {
            Phase::Transferring(rx) => Some(rx),
            _ => None,
        }
    }
    /// The versioned name fetched (`/prefix/v=V/…`), or the name as given until discovery
    /// found it.
    pub fn name(&self) -> &Name {
        self.versioned.as_ref().unwrap_or(&self.name)
    }
    /// The object's label (BLAKE3 of the versioned name's TLV), once known.
    pub fn eid(&self) -> Option<Eid> {
        self.object.as_ref().map(|o| o.eid)
    }
    /// The object's size, once known.
    pub fn size(&self) -> Option<u64> {
        self.object.as_ref().map(|o| o.size)
    }
    /// The segment size, once known.
    pub fn segment_size(&self) -> Option<usize> {
        self.object.as_ref().map(|o| o.seg_size)
    }
    /// Every byte arrived.
    pub fn is_finished(&self) -> bool {
        self.receiver().is_some_and(Receiver::is_finished)
    }
    /// Why the fetch failed, if it did.
    pub fn error(&self) -> Option<&FetchError> {
        match &self.phase {
            Phase::Failed(e) => Some(e),
            Phase::Transferring(rx) => rx.error(),
            Phase::Discovering { .. } => None,
        }
    }
    /// Bytes delivered in order so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.receiver().map_or(0, Receiver::delivered_bytes)
    }
    /// Bytes ready to read.
    pub fn readable(&self) -> usize {
        self.receiver().map_or(0, Receiver::readable)
    }
    /// [`Receiver::read`].
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        self.receiver_mut().map_or(0, |rx| rx.read(buf))
    }
    /// [`Receiver::read_buffers`].
    pub fn read_buffers(&mut self, max: usize, out: &mut Vec<Vec<u8>>) -> usize {
        self.receiver_mut().map_or(0, |rx| rx.read_buffers(max, out))
    }
    /// The receiver's statistics, timed from the consumer's start (discovery included, as an
    /// rdtp fetch's include its resolution; before the receiver starts: nothing else).
    pub fn stats(&self) -> Stats {
        let rx = self.receiver().map(Receiver::stats).unwrap_or_default();
        Stats { started: self.started, ..rx }
    }
    /// What the consumer saw of NDN.
    pub fn ndn_stats(&self) -> NdnStats {
        NdnStats { reassembly: self.reasm.stats(), ..self.stats }
    }
    /// The controller's knobs (before the receiver starts: none yet).
    pub fn cc_snapshot(&self, now: Time) -> Option<CcSnapshot> {
        self.receiver().map(|rx| rx.cc_snapshot(now))
    }
    /// Next event: the receiver's, and a failure during discovery.
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        self.receiver_mut().and_then(Receiver::poll_event)
    }

    // ----- the sans-IO contract ------------------------------------------------------------

    /// When [`Consumer::handle_timeout`] is next due.
    pub fn poll_timeout(&self) -> Option<Time> {
        let own = match &self.phase {
            Phase::Failed(_) => return None,
            Phase::Discovering { next_try, .. } => {
                Some((*next_try).min(self.last_heard + self.cfg.receiver.idle_timeout))
            }
            Phase::Transferring(rx) => rx.poll_timeout(),
        };
        match (own, self.reasm.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Handle the passing of time: discovery's retries and idle limit, the receiver's timers.
    pub fn handle_timeout(&mut self, now: Time) {
        self.reasm.handle_timeout(now);
        let idle = self.cfg.receiver.idle_timeout;
        let (rto_max, asked) = (self.cfg.receiver.rto.max, !self.asked.is_empty());
        match &mut self.phase {
            Phase::Failed(_) => {}
            Phase::Transferring(rx) => rx.handle_timeout(now),
            Phase::Discovering { .. } if now >= self.last_heard + idle => self.fail(FetchError::Timeout(idle)),
            Phase::Discovering { step, next_try, interval } => {
                if now < *next_try {
                    return;
                }
                // No metadata within the first interval: the name as given may be the object.
                if let Step::Metadata { as_given, .. } = step
                    && asked
                {
                    *as_given = true;
                }
                *next_try = now + *interval;
                *interval = (*interval * 2).min(rto_max);
                self.send_discovery();
            }
        }
    }

    /// Write the next datagram to send into `buf` (≥ [`MAX_NDN_PACKET`] bytes).
    pub fn poll_transmit(&mut self, now: Time, buf: &mut [u8]) -> Option<Transmit> {
        loop {
            if let Some(d) = self.out.pop_front() {
                if d.len() > buf.len() {
                    continue; // a name too long for the buffer: the loss timer will say
                }
                buf[..d.len()].copy_from_slice(&d);
                return Some(Transmit { to: self.peer, len: d.len() });
            }
            let Phase::Transferring(rx) = &mut self.phase else { return None };
            let t = rx.poll_transmit(now, &mut self.scratch)?;
            let datagram = self.scratch[..t.len].to_vec();
            self.translate_request(&datagram);
        }
    }

    /// Take one datagram from `from`; only the peer's are read.
    pub fn handle_datagram(&mut self, now: Time, from: SocketAddr, datagram: &[u8]) {
        if from != self.peer || matches!(self.phase, Phase::Failed(_)) {
            self.stats.malformed += 1;
            return;
        }
        let lp = match LpPacket::decode(datagram).and_then(|lp| self.reasm.receive(now, (), lp)) {
            Ok(Some(lp)) => lp,
            Ok(None) => return, // a fragment held, or an idle packet
            Err(_) => {
                self.stats.malformed += 1;
                return;
            }
        };
        let Some(wire) = lp.fragment.as_deref() else { return }; // IDLE
        if let Some(nack) = lp.nack {
            match Interest::decode(wire) {
                Ok(i) => self.on_nack(now, &i, nack.reason.unwrap_or(NackReason::None)),
                Err(_) => self.stats.malformed += 1,
            }
            return;
        }
        match NdnData::decode_with_signed(wire) {
            Ok((d, signed)) => {
                let v = super::trust::check(&d, signed, self.cfg.trust.as_ref());
                self.on_data(now, &d, v, lp.pit_token.as_deref())
            }
            // An Interest (we produce nothing) or bytes that do not decode.
            Err(_) => self.stats.malformed += 1,
        }
    }

    // ----- discovery ------------------------------------------------------------------------

    fn fail(&mut self, e: FetchError) {
        self.phase = Phase::Failed(e.clone());
        self.out.clear();
        self.events.push_back(Event::Failed(e));
    }

    fn nonce(&mut self) -> [u8; 4] {
        self.rng.next_u32().to_be_bytes()
    }

    fn push_interest(&mut self, mut i: Interest, token: Option<[u8; 4]>) {
        i.lifetime_ms = Some(self.cfg.lifetime.as_millis().min(u128::from(u64::MAX)) as u64);
        let lp = LpPacket { pit_token: token.map(|t| t.to_vec()), ..LpPacket::wrap(i.encode()) };
        self.out.push_back(lp.encode());
        self.stats.interests += 1;
    }

    /// Send this step's Interests (again, each with a fresh nonce).
    fn send_discovery(&mut self) {
        let Phase::Discovering { step, .. } = &self.phase else { return };
        let mut interests = Vec::new();
        match step {
            Step::Metadata { as_given, rdr } => {
                if *rdr {
                    interests.push(segmented::metadata_interest(&self.name, [0; 4]));
                }
                if *as_given {
                    interests.push(Interest::new(self.name.clone().with(Component::segment(0))));
                    // Version discovery by CanBePrefix (ndncatchunks' without RDR): any Data
                    // under NAME, of which `NAME/v=<v>/seg=0` is taken.
                    interests.push(Interest {
                        can_be_prefix: true,
                        must_be_fresh: true,
                        ..Interest::new(self.name.clone())
                    });
                }
            }
            Step::First => interests.push(Interest::new(self.versioned_name().with(Component::segment(0)))),
            Step::Last { last, .. } => {
                interests.push(Interest::new(self.versioned_name().with(Component::segment(*last))))
            }
        }
        for mut i in interests {
            let nonce = self.nonce();
            i.nonce = Some(nonce);
            self.asked.push((i.name.clone(), nonce));
            self.push_interest(i, Some(nonce));
        }
    }

    fn versioned_name(&self) -> Name {
        self.versioned.clone().unwrap_or_else(|| self.name.clone())
    }

    /// Go to discovery step `step`, asking at once.
    fn enter(&mut self, now: Time, step: Step) {
        self.asked.clear();
        self.phase = Phase::Discovering { step, next_try: now, interval: self.cfg.receiver.rto.initial };
        self.handle_timeout(now);
    }

    /// Whether `name` is one of this step's discovery Interests (any nonce).
    fn asked_for(&self, name: &Name, can_be_prefix: bool) -> bool {
        self.asked.iter().any(|(n, _)| n == name || (can_be_prefix && n.is_prefix_of(name)))
    }

    /// Whether `name` is `NAME/v=<v>/seg=0`, NAME the name as given: what a CanBePrefix
    /// Interest for NAME finds when the producer publishes versions without RDR metadata.
    fn is_versioned_first_segment(&self, name: &Name) -> bool {
        let c = name.components();
        c.len() == self.name.len() + 2
            && self.name.is_prefix_of(name)
            && c[self.name.len()].as_version().is_some()
            && c[self.name.len() + 1].as_segment() == Some(0)
    }

    fn on_discovery_data(&mut self, now: Time, d: &NdnData) {
        let Phase::Discovering { step, .. } = &self.phase else { return };
        let step = step.clone();
        if d.meta.content_type == Some(content_type::NACK) && self.asked_for(&d.name, true) {
            self.fail(FetchError::NotFound(format!("{} (the producer answered with an application Nack)", self.name)));
            return;
        }
        match step {
            Step::Metadata { .. }
                if segmented::metadata_prefix(&d.name.prefix(d.name.len().saturating_sub(2))).is_some() =>
            {
                if !self.asked_for(&d.name, true) {
                    self.stats.unexpected += 1;
                    return;
                }
                match segmented::parse_metadata(d) {
                    Ok(v)
                        if v.len() == self.name.len() + 1
                            && self.name.is_prefix_of(&v)
                            && segmented::version_of(&v).is_some() =>
                    {
                        self.last_heard = now;
                        self.versioned = Some(v);
                        self.enter(now, Step::First);
                    }
                    _ => self.stats.unexpected += 1,
                }
            }
            Step::Metadata { .. } | Step::First => {
                let versioned = match step {
                    Step::First => self.versioned_name(),
                    // Segment 0 of the name as given, or of a version of it (CanBePrefix).
                    _ if self.is_versioned_first_segment(&d.name) => d.name.prefix(d.name.len() - 1),
                    _ => self.name.clone(),
                };
                let can_be_prefix = versioned != self.name && matches!(step, Step::Metadata { .. });
                if d.name != versioned.clone().with(Component::segment(0)) || !self.asked_for(&d.name, can_be_prefix) {
                    self.stats.unexpected += 1;
                    return;
                }
                self.last_heard = now;
                self.versioned = Some(versioned);
                let Some(last) = segmented::final_segment(d) else {
                    self.fail(malformed(
                        &d.name,
                        "has no FinalBlockId (rdtp needs the object's size before it starts)",
                    ));
                    return;
                };
                let len = d.content().len();
                if last == 0 {
                    self.start(
                        now,
                        Object { seg_size: len, last: 0, last_len: len, size: len as u64, eid: Eid([0; 32]) },
                    );
                } else if !(usize::from(MIN_UNIT)..=usize::from(MAX_UNIT)).contains(&len) {
                    self.fail(malformed(
                        &d.name,
                        &format!("holds {len} bytes: segments of {MIN_UNIT} to {MAX_UNIT} bytes are supported"),
                    ));
                } else {
                    self.enter(now, Step::Last { seg_size: len, last });
                }
            }
            Step::Last { seg_size, last } => {
                if d.name != self.versioned_name().with(Component::segment(last)) || !self.asked_for(&d.name, false) {
                    self.stats.unexpected += 1;
                    return;
                }
                self.last_heard = now;
                let len = d.content().len();
                if len == 0 || len > seg_size || segmented::final_segment(d) != Some(last) {
                    self.fail(malformed(
                        &d.name,
                        &format!(
                            "(the last segment) holds {len} bytes, or another FinalBlockId, with segments of {seg_size}"
                        ),
                    ));
                    return;
                }
                let size = (last.checked_mul(seg_size as u64)).and_then(|s| s.checked_add(len as u64));
                match size {
                    Some(size) => self.start(now, Object { seg_size, last, last_len: len, size, eid: Eid([0; 32]) }),
                    None => self.fail(malformed(&d.name, "names an object larger than 2^64 bytes")),
                }
            }
        }
    }

    /// Discovery is over: start the receiver on the object.
    fn start(&mut self, now: Time, mut o: Object) {
        o.eid = Eid::of(&self.versioned_name().to_bytes());
        let mut cfg = self.cfg.receiver.clone();
        cfg.unit = o.seg_size.clamp(usize::from(MIN_UNIT), usize::from(MAX_UNIT)) as u16;
        cfg.verify = false;
        cfg.address_token = None;
        let rx = Receiver::new(cfg, VIRTUAL, Target::Known { eid: o.eid, size: o.size }, now);
        self.object = Some(o);
        self.asked.clear();
        self.phase = Phase::Transferring(Box::new(rx));
    }

    // ----- the transfer -----------------------------------------------------------------

    /// One rdtp Request of the receiver → one Interest per unit.
    fn translate_request(&mut self, datagram: &[u8]) {
        let (Ok(Packet::Request(r)), Some(o)) = (Packet::decode(datagram), self.object.clone()) else { return };
        let unit = u64::from(r.unit.max(1));
        let prefix = self.versioned_name();
        for range in r.ranges() {
            let first = range.offset / unit;
            let end = range.offset.saturating_add(u64::from(range.length)).div_ceil(unit).min(o.last + 1);
            for u in first..end {
                let nonce = self.nonce();
                let sent = self.segs.entry(u).or_default();
                sent.push_front(Sent { tag: r.tag, nonce });
                sent.truncate(TAGS);
                let mut i = Interest::new(prefix.clone().with(Component::segment(u)));
                i.nonce = Some(nonce);
                self.push_interest(i, Some(r.tag.to_be_bytes()));
            }
        }
    }

    fn on_data(&mut self, now: Time, d: &NdnData, v: Verification, token: Option<&[u8]>) {
        if v == Verification::DigestInvalid {
            self.stats.bad_digest += 1; // altered or forged: never delivered
            return;
        }
        // With a trust anchor, every segment (those discovery reads too: they give the size)
        // must be signed by its key; RDR metadata only points at a version, whose segments
        // are then checked.
        let metadata = d.name.components().contains(&segmented::metadata_component());
        if self.cfg.trust.is_some() && !metadata && !matches!(v, Verification::KeyValid(_)) {
            self.stats.bad_signature += 1;
            return;
        }
        if matches!(self.phase, Phase::Discovering { .. }) {
            return self.on_discovery_data(now, d);
        }
        let Some(o) = self.object.clone() else { return };
        let seg = segmented::split_segment(&d.name)
            .filter(|(prefix, u)| *u <= o.last && Some(prefix) == self.versioned.as_ref())
            .map(|(_, u)| u);
        let Some(u) = seg else {
            self.stats.unexpected += 1;
            return;
        };
        let expected = if u == o.last { o.last_len } else { o.seg_size };
        if d.content().len() != expected || d.meta.content_type.is_some_and(|t| t != content_type::BLOB) {
            self.stats.unexpected += 1;
            return;
        }
        // The tag the echoed PitToken names, if it is one of this segment's; else the latest.
        let sent = self.segs.get(&u);
        let echoed = token.and_then(|t| <[u8; 4]>::try_from(t).ok()).map(u32::from_be_bytes);
        let tag = match (sent, echoed) {
            (Some(s), Some(t)) if s.iter().any(|x| x.tag == t) => t,
            (Some(s), _) => s.front().map_or(0, |x| x.tag),
            (None, _) => 0, // never asked for: the receiver counts it (duplicate or invalid)
        };
        let unit = o.seg_size.clamp(usize::from(MIN_UNIT), usize::from(MAX_UNIT)) as u64;
        let flags = DataFlags::default().with(DataFlags::LAST, u == o.last);
        let data = wire::Data {
            flags,
            hops: 0,
            tag,
            eid: o.eid,
            offset: u * unit,
            total_size: o.size,
            served_by: NDN_NODE,
            options: Options::EMPTY,
            payload: d.content(),
        };
        let Ok(n) = data.encode(&mut self.scratch) else { return };
        let Phase::Transferring(rx) = &mut self.phase else { return };
        let before = rx.stats().units_received;
        rx.handle_datagram(now, VIRTUAL, &self.scratch[..n]);
        if rx.stats().units_received > before {
            match v {
                Verification::Unverified(t) => {
                    self.stats.unverified += 1;
                    self.stats.unverified_type = Some(t.code());
                }
                Verification::KeyValid(_) => self.stats.key_verified += 1,
                _ => self.stats.digest_verified += 1,
            }
            self.segs.remove(&u);
        }
    }

    fn on_nack(&mut self, now: Time, i: &Interest, reason: NackReason) {
        let slot = match reason {
            NackReason::Congestion => 0,
            NackReason::NoRoute => 1,
            NackReason::Duplicate => 2,
            _ => 3,
        };
        let Some(nonce) = i.nonce else {
            self.stats.unexpected += 1;
            return;
        };
        if let Phase::Discovering { step, next_try, .. } = &mut self.phase {
            if !self.asked.iter().any(|(n, x)| *n == i.name && *x == nonce) {
                self.stats.unexpected += 1;
                return;
            }
            self.stats.nacks[slot] += 1;
            if let Step::Metadata { as_given, rdr } = step
                && segmented::metadata_prefix(&i.name).is_some()
            {
                // No metadata here: ask for the name as given at once.
                *rdr = false;
                if !*as_given {
                    *as_given = true;
                    *next_try = now;
                }
            } else if reason == NackReason::NoRoute {
                let e = FetchError::Refused {
                    code: NackCode::NoRoute,
                    by: NDN_NODE,
                    who: format!("the NDN node at {}", self.peer),
                    detail: format!("Nack NoRoute for {}", i.name),
                };
                self.fail(e);
            } else if reason == NackReason::Duplicate {
                // Our nonce looked looped (NDNLPv2 "Duplicate"): ask again at once, with a
                // fresh one. One retry per Nack matching a nonce of ours.
                *next_try = now;
            }
            // Congestion and the rest: asked again at the next try.
            return;
        }
        let Some(o) = self.object.clone() else { return };
        let seg = segmented::split_segment(&i.name).filter(|(p, u)| *u <= o.last && Some(p) == self.versioned.as_ref());
        let Some(sent) = seg
            .and_then(|(_, u)| self.segs.get(&u).map(|s| (u, s)))
            .and_then(|(u, s)| s.iter().find(|x| x.nonce == nonce).map(|x| (u, x.tag)))
        else {
            self.stats.unexpected += 1;
            return;
        };
        self.stats.nacks[slot] += 1;
        let (u, tag) = sent;
        let code = match reason {
            NackReason::Congestion => NackCode::Busy,
            NackReason::NoRoute => NackCode::NoRoute,
            _ => return, // Duplicate and the rest: the loss timer asks again
        };
        let unit = o.seg_size.clamp(usize::from(MIN_UNIT), usize::from(MAX_UNIT)) as u64;
        let detail = format!("NDN Nack {reason:?} for {}", i.name);
        let nack = wire::Nack {
            code,
            hops: 0,
            tag,
            eid: o.eid,
            offset: u * unit,
            length: unit as u32,
            from: NDN_NODE,
            detail: wire::cut_detail(&detail, wire::NACK_MAX_DETAIL),
        };
        let Ok(n) = nack.encode(&mut self.scratch) else { return };
        if let Phase::Transferring(rx) = &mut self.phase {
            rx.handle_datagram(now, VIRTUAL, &self.scratch[..n]);
        }
    }
}

/// A producer's answer that breaks the conventions rdtp relies on.
fn malformed(name: &Name, what: &str) -> FetchError {
    FetchError::Refused {
        code: NackCode::Malformed,
        by: NDN_NODE,
        who: "the NDN producer".into(),
        detail: format!("{name} {what}"),
    }
}
