//! The caching router (seeds 001 §II and 003 §I: NDN-style forwarders with a content store
//! between consumers and producers).
//!
//! A [`Router`] is the receivers' first hop, as an NDN consumer's forwarder is; towards its
//! next hop (a server or another router) it behaves as a receiver does. For each unit asked
//! for it answers from its content store ([`cs`]) if it can, adds the asker to a pending
//! entry if the unit is already requested upstream (coalescing), or forwards the request
//! through its forwarding table ([`fib`]). Data coming back fills the pending entries'
//! downstreams, each with its own tag (and flag `COALESCED` for those whose request joined
//! the entry after it went upstream: no RTT sample for them), and may be kept in the store. `docs/PROTOCOL.md`
//! ("Routers") states every rule; this module implements them.
//!
//! Its only state is the content store, the pending tables, the address tokens its next
//! hops gave it and the verification state ([`verify`]: blocks waiting to be checked, tree
//! nodes known to be right), fixed-size per-source counters ([`limits`]: no source may hold
//! more than its share of the pending tables or of the forwarding rate) and the liveness of
//! its next hops ([`liveness`]: what waits on a silent one gets `NoRoute`, naming it), all
//! bounded: it keeps nothing per receiver beyond a pending entry, which lives until answered
//! or expired. A forwarded request of any kind carries a hop limit of at most
//! [`MAX_HOP_LIMIT`] − 1 and never goes back to the peer it came from.
//!
//! # Verify before caching
//!
//! Data is forwarded downstream at once, but enters the content store only after every
//! 16 KiB block it overlaps has been checked against the EID ([`verify`]); the router asks
//! its upstream for the proofs it needs (`proofs.rs`: asked again with back-off, the answer
//! to any attempt accepted) and answers receivers' proof requests from the nodes it
//! verified. No unverified byte is ever cached (issue 11).
//!
//! # Address validation
//!
//! A router validates its downstreams as a server does ([`crate::token`]): a request without
//! a valid `ADDRESS_TOKEN` it issued gets a Retry, never content, and nothing it sends toward
//! an unvalidated address is larger than three times what came from there. Tokens are
//! hop-by-hop: a downstream's token is never forwarded; upstream the router presents the
//! token its next hop issued to it, and on a Retry from upstream it keeps the new token and
//! sends the refused request again (once). Like
//! the rest of `rdtp-proto` it does no I/O: addresses are plain [`SocketAddr`]s (the ns-3
//! glue and the test harness give their nodes addresses too), time comes in as [`Time`],
//! randomness from the configured seed.
//!
//! # Call contract (sans-IO)
//!
//! ```text
//! let mut router = Router::new(config);
//! loop {
//!     wait until a datagram arrives or router.poll_timeout() passes; then
//!       datagram from `peer` → router.handle_datagram(now, peer, &bytes)
//!       deadline             → router.handle_timeout(now)
//!     while let Some(t) = router.poll_transmit(&mut buf) { send(t.to, &buf[..t.len]) }
//! }
//! ```
//!
//! `buf` must hold [`MAX_DATAGRAM`] bytes. Drain `poll_transmit` after every call: answers
//! queue up until drained. `now` must never go backwards.

mod annotate;
pub mod cs;
mod expiring;
pub mod fib;
mod limits;
mod liveness;
mod pit;
mod proofs;
mod verify;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;

use core::time::Duration;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg32;

use crate::eid::Eid;
use crate::node::NodeId;
use crate::time::Time;
use crate::token::{MAX_TOKEN_LEN, MalformedAnswer, ValidationConfig, Validator};
use crate::wire::annotation::on_return;
use crate::wire::tlv::{address_token_len, extra_ranges_len, unit_ranges, write_address_token, write_extra_ranges};
use crate::wire::{
    self, ByteRange, DATA_HEADER_LEN, DEFAULT_MAX_REPLY_BYTES, Data, DataFlags, DecodeError, ListRequest, Nack,
    NackCode, Options, Packet, PacketType, ProofRequest, Query, Request, RequestFlags, ResolveRequest, ResolveResponse,
    Retry,
};
use annotate::Anticipation;
use cs::{CsConfig, CsStats, SharedStore, Weigh};
use expiring::ExpiringMap;
use fib::Fib;
pub use limits::SourceLimits;
use limits::{Held, Limiter, SlotIx, Sourced};
use liveness::Liveness;
use pit::{PitEntry, PitKey};
use proofs::OwnProofs;
pub use verify::VerifyConfig;
use verify::{Staging, Step};

/// Buffer size [`Router::poll_transmit`] needs (the largest UDP payload).
pub const MAX_DATAGRAM: usize = 65_535;
/// Highest hop limit a router forwards with: a request, resolve, list or proof request that
/// arrives with more is treated as if it carried this (the hop limit receivers send), so a
/// sender cannot make a routing loop carry its request more than 32 times (issue 23).
pub const MAX_HOP_LIMIT: u8 = wire::DEFAULT_HOP_LIMIT;
/// Most ranges in one request the router sends upstream.
const MAX_RANGES: usize = 32;
/// Forwarded resolves and lists pending at most.
const CONTROL_CAPACITY: usize = 4096;
/// Distinct unit sizes remembered to match short last units (see [`Router::on_data`]).
const UNIT_SIZES: usize = 8;
/// Buffers kept for reuse by the transmit queue.
const POOL: usize = 1024;
/// Largest buffer kept for reuse (a Data of the default unit fits): larger ones, for units
/// of up to 64 KiB, are freed once sent, so the pool holds at most `POOL` × 4 KiB.
const POOL_BUFFER: usize = 4096;
/// Room for a resolve's query (the longest name) in a forwarded resolve.
const RESOLVE_ROOM: usize = wire::RESOLVE_MAX_NAME + 16;
/// Learned routes waiting for [`Router::poll_learned_route`] at most (beyond, the oldest go).
pub const LEARNED_EXPORT: usize = 4096;
/// Next hops whose address tokens are remembered.
const TOKENS: usize = 1024;

/// A datagram to send: to whom, and its length in the buffer given to
/// [`Router::poll_transmit`] (as quinn-proto's `Transmit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub to: SocketAddr,
    pub len: usize,
}

/// Everything that shapes a router.
#[derive(Clone, Debug)]
pub struct RouterConfig {
    /// This router's node id, named in Data served from its store and Nacks it sends.
    pub id: NodeId,
    /// Where requests go.
    pub fib: Fib,
    /// The content store: capacity, replacement and admission. By default 65 536 units or
    /// [`CsConfig::DEFAULT_CAPACITY_BYTES`] (256 MiB, each unit weighing its payload and
    /// [`CACHED_UNIT_OVERHEAD`]), whichever is reached first.
    pub cs: CsConfig,
    /// Most units pending at once; beyond, requests for new units get `Busy`.
    pub pit_capacity: usize,
    /// How long a pending entry lives after its last request (NDN's Interest lifetime).
    pub lifetime: Duration,
    /// A re-request for a pending unit is forwarded again only if the unit was last
    /// forwarded at least this long ago (NFD's retransmission suppression).
    pub retx_suppression: Duration,
    /// Most downstreams waiting for one unit.
    pub max_waiting: usize,
    /// Most units one request may ask for (as the server's limit).
    pub max_units_per_request: u32,
    /// Most bytes of Data one request may be answered with (as the server's limit).
    pub max_reply_bytes: u64,
    /// Validation of downstream addresses (tokens, the 3× limit toward unvalidated ones).
    pub validation: ValidationConfig,
    /// Seed of the router's tags and of the store's randomness.
    pub seed: u64,
    /// Bounds of verify-before-caching ([`verify`]).
    pub verify: VerifyConfig,
    /// Keep the routes learned from resolves for [`Router::poll_learned_route`] (a runtime
    /// with several cores hands them to its other routers; nobody else needs them).
    pub export_learned_routes: bool,
    /// What one source (address and port) may take of the pending tables and of the
    /// forwarding rate ([`SourceLimits`]).
    pub source_limits: SourceLimits,
    /// A next hop asked for something that sends nothing at all back for this long is
    /// presumed dead: what is pending toward it gets Nack `NoRoute` naming it ("upstream
    /// ADDR did not answer within 2 s"). `None`: pending units just expire (simulations of
    /// long outages keep that, seed 001 §IV-D). Keep it below the receivers' idle timeout
    /// (10 s) and the pending lifetime.
    pub upstream_timeout: Option<Duration>,
    /// Which tags the router picks for the requests it sends (see [`TagClass`]).
    pub tags: TagClass,
}

/// The tags a router picks for its own requests: those ≡ `residue` (mod `modulus`). A
/// runtime whose cores share one address gives core `i` of `n` the class `i` mod `n`, so
/// the kernel can hand every answer (its tag at bytes 8–11, `docs/PROTOCOL.md`) to the
/// core that asked. The default, `0 mod 1`, is every tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TagClass {
    /// At least 1 (0 counts as 1).
    pub modulus: u32,
    /// Taken mod `modulus`.
    pub residue: u32,
}

impl Default for TagClass {
    fn default() -> Self {
        TagClass { modulus: 1, residue: 0 }
    }
}

impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig {
            id: NodeId::label("router").expect("valid label"),
            fib: Fib::default(),
            cs: CsConfig { capacity_bytes: CsConfig::DEFAULT_CAPACITY_BYTES, ..CsConfig::default() },
            pit_capacity: 65_536,
            lifetime: Duration::from_secs(4),
            retx_suppression: Duration::from_millis(10),
            max_waiting: 64,
            max_units_per_request: 256,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            validation: ValidationConfig::default(),
            seed: 0,
            verify: VerifyConfig::default(),
            export_learned_routes: false,
            tags: TagClass::default(),
            source_limits: SourceLimits::default(),
            upstream_timeout: Some(Duration::from_secs(2)),
        }
    }
}

/// A unit in the content store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachedUnit {
    /// Size of the whole object.
    pub total_size: u64,
    pub payload: Box<[u8]>,
}

impl CachedUnit {
    /// Whether this is what a request with `unit` gets at `offset`.
    fn fits(&self, offset: u64, unit: u64) -> bool {
        self.payload.len() as u64 == unit.min(self.total_size.saturating_sub(offset))
    }
}

/// Bytes a cached unit costs besides its payload: the store's entry and index slot
/// ([`cs::entry_overhead`]) and the payload allocation's header and rounding (≤ 24 bytes
/// with glibc's malloc).
pub const CACHED_UNIT_OVERHEAD: usize = cs::entry_overhead::<(Eid, u64), CachedUnit>() + 24;

impl Weigh for CachedUnit {
    /// What holding the unit costs: its payload and [`CACHED_UNIT_OVERHEAD`], so that
    /// [`CsConfig::capacity_bytes`] bounds the store's memory, not only its payload.
    fn bytes(&self) -> usize {
        self.payload.len() + CACHED_UNIT_OVERHEAD
    }
}

/// The content store of a router; [`Router::with_store`] lets several share one.
pub type RouterStore = SharedStore<(Eid, u64), CachedUnit>;

/// A router's counters (all totals since it started; see also [`Router::cs_stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RouterStats {
    /// Request datagrams from downstreams.
    pub requests: u64,
    /// Units those requests asked for.
    pub units_requested: u64,
    /// Units answered from the content store.
    pub cs_hits: u64,
    /// Units the content store did not have.
    pub cs_misses: u64,
    /// Missed units that were already pending: the asker was added, nothing went upstream.
    pub coalesced: u64,
    /// Units forwarded upstream (first time).
    pub forwarded_units: u64,
    /// Units forwarded upstream again (a re-request after the suppression interval).
    pub reforwarded_units: u64,
    /// Request datagrams sent upstream.
    pub upstream_requests: u64,
    /// Data datagrams and payload bytes received from upstream.
    pub data_in: u64,
    pub bytes_in: u64,
    /// Data datagrams and payload bytes sent downstream (hits and forwarded Data).
    pub data_out: u64,
    pub bytes_out: u64,
    /// Data or responses that answered nothing pending (late, duplicate or forged).
    pub unsolicited: u64,
    /// Nacks received from upstream, and sent downstream.
    pub nacks_in: u64,
    pub nacks_out: u64,
    /// Units refused `Busy`: the pending table (or an entry's downstream list) was full, or
    /// their source had used up its share (`source_limited`).
    pub busy: u64,
    /// Requests (or units) refused: no route (a dead next hop included), loop (duplicate
    /// nonce), hop limit.
    pub no_route: u64,
    pub loops: u64,
    pub hop_limit: u64,
    /// Units (and resolves, lists, proof requests) refused `Busy` because their source had
    /// used up its share of the pending tables or of the forwarding rate (counted in `busy`
    /// too).
    pub source_limited: u64,
    /// Times a next hop was presumed dead (asked, and silent for the upstream timeout).
    pub upstream_timeouts: u64,
    /// Pending entries dropped unanswered after their lifetime.
    pub expired: u64,
    /// Resolves, lists and proof requests forwarded.
    pub resolves: u64,
    pub lists: u64,
    pub proofs: u64,
    /// Requests refused as malformed; datagrams dropped as not rdtp or not for a router.
    pub malformed: u64,
    pub dropped: u64,
    /// Requests from unvalidated downstreams answered with a Retry; Retries from upstream
    /// that made the router send a request again with a new token.
    pub retries_out: u64,
    pub retries_in: u64,
    /// Verify before caching: blocks that verified (their units went to the store), that
    /// failed (a wrong byte or proof: none of their units is cached), and that were
    /// abandoned unfinished when staging was full; proof requests this router sent itself.
    pub blocks_verified: u64,
    pub blocks_failed: u64,
    pub blocks_abandoned: u64,
    pub proofs_requested: u64,
    /// Proof requests this router answered from the tree nodes it knows.
    pub proofs_served: u64,
    /// Of `proofs_requested`, those sent again after a timeout; Proofs that came after their
    /// block's request had ended (answered by another attempt, or given up: also counted in
    /// `unsolicited`); blocks whose proof was asked for 6 times (`proofs::ATTEMPTS`) in vain.
    pub proof_retries: u64,
    pub proofs_late: u64,
    pub proofs_given_up: u64,
}

crate::impl_add!(RouterStats {
    requests,
    units_requested,
    cs_hits,
    cs_misses,
    coalesced,
    forwarded_units,
    reforwarded_units,
    upstream_requests,
    data_in,
    bytes_in,
    data_out,
    bytes_out,
    unsolicited,
    nacks_in,
    nacks_out,
    busy,
    no_route,
    loops,
    hop_limit,
    source_limited,
    upstream_timeouts,
    expired,
    resolves,
    lists,
    proofs,
    malformed,
    dropped,
    retries_out,
    retries_in,
    blocks_verified,
    blocks_failed,
    blocks_abandoned,
    proofs_requested,
    proofs_served,
    proof_retries,
    proofs_late,
    proofs_given_up,
});

/// What an upstream request carries besides its units (copied from the downstream request
/// that caused it).
#[derive(Clone, Debug)]
struct Upstream {
    flags: RequestFlags,
    hop_limit: u8,
    nonce: u64,
    eid: Eid,
    unit: u16,
    /// Anticipated interests and annotations, this router's included (S3 §II-A); raw option
    /// items, empty if the request anticipated nothing.
    annotations: Box<[u8]>,
}

/// An upstream request the router sent: what a Nack or Retry answering it refers to.
#[derive(Debug)]
struct OutRequest {
    next_hop: SocketAddr,
    up: Upstream,
    offsets: Vec<u64>,
    /// Already sent again after a Retry (a second Retry is not obeyed).
    retried: bool,
}

/// What a forwarded resolve or list asked.
#[derive(Clone, Debug)]
enum ControlQuery {
    Name(Box<str>),
    Eid(Eid),
    List { cursor: u32 },
    Proof { flags: RequestFlags, eid: Eid, block: u64, depth: u8 },
}

impl ControlQuery {
    /// The EID a Nack refusing it echoes (zero for a name or a list).
    fn eid(&self) -> Eid {
        match self {
            ControlQuery::Eid(e) | ControlQuery::Proof { eid: e, .. } => *e,
            _ => Eid::default(),
        }
    }
}

/// A forwarded resolve or list: where its answer goes, and what it was (to send it again
/// after a Retry).
#[derive(Debug)]
struct Forwarded {
    next_hop: SocketAddr,
    downstream: SocketAddr,
    tag: u32,
    hop_limit: u8,
    query: ControlQuery,
    retried: bool,
    /// The downstream's slot ([`limits`]).
    source: SlotIx,
}

impl Sourced for Forwarded {
    fn source(&self) -> SlotIx {
        self.source
    }
}

/// A caching router. See the module docs for the call contract.
#[derive(Debug)]
pub struct Router {
    id: NodeId,
    fib: Fib,
    cs: RouterStore,
    pit: Held<PitKey, PitEntry>,
    upstream: ExpiringMap<u32, OutRequest>,
    control: Held<u32, Forwarded>,
    /// Per-source shares of the pending tables and of the forwarding rate.
    limiter: Limiter,
    /// Which next hops answer at all.
    liveness: Liveness,
    /// Scratch: next hops just presumed dead.
    silent: Vec<SocketAddr>,
    /// Verify before caching: unverified blocks, known tree nodes, own proof requests
    /// (with their back-off timer, [`proofs`]).
    staging: Staging,
    own_proofs: OwnProofs,
    steps: Vec<Step>,
    lifetime: Duration,
    retx_suppression: Duration,
    max_waiting: usize,
    max_units_per_request: u32,
    max_reply_bytes: u64,
    validator: Validator,
    /// The address token each next hop issued to this router.
    tokens: HashMap<SocketAddr, Box<[u8]>>,
    /// Unit sizes seen in requests, most recent first.
    unit_sizes: Vec<u16>,
    rng: Pcg32,
    /// The tags this router picks ([`RouterConfig::tags`]).
    tags: TagClass,
    queue: VecDeque<(SocketAddr, Vec<u8>)>,
    pool: Vec<Vec<u8>>,
    stats: RouterStats,
    /// Routes learned since the last [`Router::poll_learned_route`] (when exported).
    learned: Option<VecDeque<(Eid, SocketAddr)>>,
    /// Experiments only ([`Router::cache_unverified_for_experiments`]).
    #[cfg(feature = "unverified-cache")]
    cache_unverified: bool,
    /// The store caches nothing (switched off): units are not staged, no proof is asked.
    stores_nothing: bool,
    /// Scratch lists for one request: units to forward, and to refuse.
    forward: Vec<u64>,
    refused: Vec<(Refusal, u64)>,
}

impl Router {
    pub fn new(cfg: RouterConfig) -> Self {
        let store = RouterStore::new(cfg.cs.clone());
        Router::with_store(cfg, store)
    }

    /// A router whose content store is `store` (its own configuration applies; `cfg.cs` is
    /// not used): the cores of one runtime share one store ([`Router::store`]).
    pub fn with_store(cfg: RouterConfig, store: RouterStore) -> Self {
        let stores_nothing = {
            let c = store.lock();
            c.config().admission == cs::Admission::Never || c.config().capacity_units == 0
        };
        Router {
            id: cfg.id,
            fib: cfg.fib,
            cs: store,
            stores_nothing,
            pit: Held::new(cfg.pit_capacity, &cfg.source_limits),
            upstream: ExpiringMap::new(cfg.pit_capacity.max(1)),
            control: Held::new(CONTROL_CAPACITY, &cfg.source_limits),
            limiter: Limiter::new(cfg.source_limits.clone(), &cfg.validation.secret),
            liveness: Liveness::new(cfg.upstream_timeout.unwrap_or(Duration::ZERO)),
            silent: Vec::new(),
            staging: Staging::new(cfg.verify),
            own_proofs: OwnProofs::new(CONTROL_CAPACITY, cfg.lifetime),
            steps: Vec::new(),
            lifetime: cfg.lifetime,
            retx_suppression: cfg.retx_suppression,
            max_waiting: cfg.max_waiting.max(1),
            max_units_per_request: cfg.max_units_per_request,
            max_reply_bytes: cfg.max_reply_bytes,
            validator: Validator::new(cfg.validation),
            tokens: HashMap::new(),
            unit_sizes: Vec::new(),
            rng: Pcg32::seed_from_u64(cfg.seed ^ 0x726f_7574_6572),
            tags: cfg.tags,
            queue: VecDeque::new(),
            pool: Vec::new(),
            stats: RouterStats::default(),
            learned: cfg.export_learned_routes.then(VecDeque::new),
            #[cfg(feature = "unverified-cache")]
            cache_unverified: false,
            forward: Vec::new(),
            refused: Vec::new(),
        }
    }

    pub fn id(&self) -> NodeId {
        self.id
    }
    pub fn stats(&self) -> &RouterStats {
        &self.stats
    }
    /// The content store's own counters (insertions, evictions, admission refusals); a
    /// shared store's count every router's use of it.
    pub fn cs_stats(&self) -> CsStats {
        *self.cs.lock().stats()
    }
    /// Units in the content store, and the bytes they count against its byte capacity
    /// (payload and [`CACHED_UNIT_OVERHEAD`] each).
    pub fn cs_len(&self) -> usize {
        self.cs.lock().len()
    }
    pub fn cs_bytes(&self) -> u64 {
        self.cs.lock().bytes()
    }
    /// A handle on this router's content store, to give another router
    /// ([`Router::with_store`]).
    pub fn store(&self) -> RouterStore {
        self.cs.clone()
    }
    /// Bytes of unverified blocks and units waiting on them ([`verify`]).
    pub fn staging_bytes(&self) -> usize {
        self.staging.bytes()
    }
    /// Tree nodes (chaining values) this router knows to be right.
    pub fn known_nodes(&self) -> usize {
        self.staging.known_len()
    }
    /// Units pending.
    pub fn pit_len(&self) -> usize {
        self.pit.len()
    }
    /// Whether the content store holds the unit of `eid` at `offset` (no counters change).
    pub fn cs_contains(&self, eid: &Eid, offset: u64) -> bool {
        self.cs.lock().contains(&(*eid, offset))
    }
    /// Offer units `units` (indexes, of `unit` bytes) of an object the caller holds whole to
    /// the content store, as if they had come from upstream and verified (admission and
    /// replacement apply): warming a cache before a test or an experiment. The object must
    /// hash to `eid` — checked here, so that no unverified byte is ever cached, as for Data
    /// from upstream ([`verify`]); `None` if it does not. Returns how many of the units the
    /// store holds afterwards.
    pub fn preload(&mut self, eid: Eid, object: &[u8], unit: u16, units: core::ops::Range<u64>) -> Option<u64> {
        if Eid::of(object) != eid || unit == 0 {
            return None;
        }
        let (unit, total_size) = (u64::from(unit), object.len() as u64);
        let mut held = 0;
        for u in units {
            let offset = u.saturating_mul(unit);
            if offset >= total_size {
                break;
            }
            let end = (offset + unit).min(total_size);
            let value = CachedUnit { total_size, payload: object[offset as usize..end as usize].into() };
            let mut cs = self.cs.lock();
            cs.offer((eid, offset), value);
            held += u64::from(cs.contains(&(eid, offset)));
        }
        Some(held)
    }
    /// Warm a path of caching routers without packets (seed 003 §III: caches warmed before
    /// measuring, as Icarus does): one fetch of the whole `object` (which must hash to `eid`;
    /// `None` if it does not) along `path`, nearest the receiver first, unit by unit in order,
    /// as its requests and Data would pass: each router looks the unit up as it does for a
    /// request (the replacement policy sees the access; the store's own statistics count it,
    /// the router's counters, which traces report, do not), the
    /// first that holds it answers, and every router before it is offered the unit as Data
    /// from upstream (admission and replacement apply). Units nobody holds come from the
    /// origin. Returns how many units each router answered.
    pub fn warm_fetch(path: &mut [&mut Router], eid: Eid, object: &[u8], unit: u16) -> Option<Vec<u64>> {
        if Eid::of(object) != eid || unit == 0 {
            return None;
        }
        let (unit, total_size) = (u64::from(unit), object.len() as u64);
        let mut answered = vec![0; path.len()];
        for offset in (0..total_size).step_by(unit as usize) {
            let end = (offset + unit).min(total_size);
            let key = (eid, offset);
            let hit = path.iter_mut().position(|r| r.cs.lock().get(&key).is_some_and(|c| c.fits(offset, unit)));
            if let Some(i) = hit {
                answered[i] += 1;
            }
            let missed = hit.unwrap_or(path.len());
            for r in path[..missed].iter_mut().rev() {
                let value = CachedUnit { total_size, payload: object[offset as usize..end as usize].into() };
                r.cs.lock().offer(key, value);
            }
        }
        Some(answered)
    }
    pub fn fib(&self) -> &Fib {
        &self.fib
    }
    /// The forwarding table, to add routes to a running router.
    pub fn fib_mut(&mut self) -> &mut Fib {
        &mut self.fib
    }

    /// A route to `eid` through `next_hop` that another router learned from a resolve (the
    /// same node's other cores, [`RouterConfig::export_learned_routes`]): kept as this
    /// router's own learned routes are, and not exported again.
    pub fn learn_route(&mut self, eid: Eid, next_hop: SocketAddr) {
        self.fib.learn(eid, next_hop);
    }

    /// The next route this router learned from a resolve answer, oldest first (only with
    /// [`RouterConfig::export_learned_routes`]; at most [`LEARNED_EXPORT`] wait).
    pub fn poll_learned_route(&mut self) -> Option<(Eid, SocketAddr)> {
        self.learned.as_mut()?.pop_front()
    }

    // ----- the sans-IO interface -------------------------------------------------------

    /// When [`Router::handle_timeout`] must next be called (the earliest expiry).
    pub fn poll_timeout(&self) -> Option<Time> {
        [
            self.pit.next_expiry(),
            self.upstream.next_expiry(),
            self.control.next_expiry(),
            self.own_proofs.next_expiry(),
            self.liveness.next_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Drop what expired by `now`; refuse what waits for a next hop silent for too long.
    pub fn handle_timeout(&mut self, now: Time) {
        let mut silent = std::mem::take(&mut self.silent);
        self.liveness.expire(now, &mut silent);
        for hop in silent.drain(..) {
            self.upstream_silent(hop);
        }
        self.silent = silent;
        while self.pit.pop_expired(now).is_some() {
            self.stats.expired += 1;
        }
        while self.upstream.pop_expired(now).is_some() {}
        while self.control.pop_expired(now).is_some() {}
        while let Some(((eid, block), a)) = self.own_proofs.pop_expired(now) {
            if !self.staging.is_proving(eid, block) {
                self.own_proofs.give_up(a);
            } else if a.attempts() >= proofs::ATTEMPTS {
                self.own_proofs.give_up(a);
                self.staging.proof_refused(eid, block);
                self.stats.proofs_given_up += 1;
            } else {
                self.stats.proof_retries += 1;
                self.send_proof_request(now, (eid, block), a);
            }
        }
    }

    /// The next datagram to send, written into `buf` (≥ [`MAX_DATAGRAM`] bytes).
    pub fn poll_transmit(&mut self, buf: &mut [u8]) -> Option<Transmit> {
        loop {
            let (to, d) = self.queue.pop_front()?;
            let fits = d.len() <= buf.len();
            if fits {
                buf[..d.len()].copy_from_slice(&d);
            }
            let len = d.len();
            self.recycle(d);
            if fits {
                return Some(Transmit { to, len });
            }
            self.stats.dropped += 1;
        }
    }

    /// Take one datagram from `from`.
    pub fn handle_datagram(&mut self, now: Time, from: SocketAddr, datagram: &[u8]) {
        let ty = match wire::check_prefix(datagram) {
            Ok(ty) => ty,
            Err(DecodeError::UnsupportedVersion(_))
                if datagram.get(3).is_some_and(|&t| PacketType::is_request_byte(t)) =>
            {
                self.nack_blank(from, datagram.len(), NackCode::UnsupportedVersion, wire::UNSUPPORTED_VERSION_DETAIL);
                return;
            }
            Err(_) => {
                self.stats.dropped += 1;
                return;
            }
        };
        if !ty.is_request() {
            // Whatever a next hop sends shows it alive (liveness.rs).
            self.liveness.heard(from);
        }
        let packet = Packet::decode(datagram);
        let downstream = match &packet {
            Ok(Packet::Request(r)) => Some((r.tag, r.options.address_token())),
            Ok(Packet::ResolveRequest(r)) => Some((r.tag, r.options.address_token())),
            Ok(Packet::ListRequest(l)) => Some((l.tag, l.options.address_token())),
            Ok(Packet::ProofRequest(p)) => Some((p.tag, p.options.address_token())),
            _ => None,
        };
        if let Some((tag, token)) = downstream
            && !self.validator.is_valid(now, from, token)
        {
            // RFC 9000 §8.1: a token instead of an answer (32 bytes, smaller than any request).
            let token = self.validator.issue(now, from);
            let r = Retry { tag, token: &token };
            self.enqueue(from, r.encoded_len(), |b| r.encode(b).ok());
            self.stats.retries_out += 1;
            return;
        }
        match packet {
            Ok(Packet::Request(r)) => self.on_request(now, from, &r),
            Ok(Packet::Data(d)) => self.on_data(now, from, &d, datagram),
            Ok(Packet::Nack(n)) => self.on_nack(from, &n, datagram),
            Ok(Packet::ResolveRequest(r)) => self.on_resolve(now, from, &r),
            Ok(Packet::ListRequest(l)) => self.on_list(now, from, &l),
            Ok(Packet::ResolveResponse(r)) => self.on_control_response(from, r.tag, Some(&r), datagram),
            Ok(Packet::ListResponse(l)) => self.on_control_response(from, l.tag, None, datagram),
            Ok(Packet::ProofRequest(p)) => self.on_proof_request(now, from, &p),
            Ok(Packet::Proof(p)) if self.own_proofs.asked(p.tag, from).is_some() => self.on_own_proof(now, from, &p),
            Ok(Packet::Proof(p)) if self.control.get(&p.tag).is_none_or(|c| c.next_hop != from) => {
                // Answers nothing pending: an attempt whose block's request ended.
                self.stats.unsolicited += 1;
                self.stats.proofs_late += 1;
            }
            Ok(Packet::Proof(p)) => self.on_control_response(from, p.tag, None, datagram),
            Ok(Packet::Retry(r)) => self.on_retry(now, from, &r),
            Err(e) if ty.is_request() => {
                self.stats.malformed += 1;
                let detail = match e {
                    DecodeError::Truncated(w) | DecodeError::Invalid(w) => w,
                    _ => "undecodable request",
                };
                match wire::attribute(datagram) {
                    Some(a) => self.nack_malformed(now, from, datagram.len(), &a, detail),
                    None => self.nack_blank(from, datagram.len(), NackCode::Malformed, detail),
                }
            }
            Err(_) => self.stats.dropped += 1,
        }
    }

    // ----- requests from downstream ----------------------------------------------------

    fn on_request(&mut self, now: Time, from: SocketAddr, req: &Request<'_>) {
        self.stats.requests += 1;
        let refuse = |this: &mut Self, code, detail| {
            this.send_nack(from, code, req.tag, req.eid, req.range, this.id, 0, detail);
        };
        if let Err(why) = req.validate() {
            self.stats.malformed += 1;
            return refuse(self, NackCode::Malformed, why);
        }
        let reply_bytes = req.total_units().saturating_mul(u64::from(req.unit) + DATA_HEADER_LEN as u64);
        if req.total_units() > u64::from(self.max_units_per_request) || reply_bytes > self.max_reply_bytes {
            return refuse(self, NackCode::TooLarge, "request asks for more than this router serves per request");
        }
        if req.hop_limit == 0 {
            self.stats.hop_limit += 1;
            return refuse(self, NackCode::HopLimit, "hop limit reached (a routing loop, or a path too long)");
        }
        let next_hop = match self.fib.route_eid(&req.eid) {
            Some(a) if a != from => a,
            Some(_) => {
                self.stats.no_route += 1;
                return refuse(
                    self,
                    NackCode::NoRoute,
                    "the route for this EID leads back where the request came from",
                );
            }
            None => {
                self.stats.no_route += 1;
                return refuse(self, NackCode::NoRoute, "no route for this EID");
            }
        };
        self.note_unit_size(req.unit);
        let unit = u64::from(req.unit);
        // A source beyond its share of the forwarding rate, or holding all the pending
        // entries it may, is refused outright, as the server's fair share refuses (limits.rs):
        // one Busy per range, so that the receiver knows all its units lost.
        let standing = self.limiter.ask(now, from);
        if !standing.may_forward || !self.limiter.may_hold_more(&self.pit, standing.slot, standing.active) {
            self.stats.units_requested += req.total_units();
            self.stats.busy += req.total_units();
            self.stats.source_limited += req.total_units();
            for r in req.ranges() {
                self.send_nack(from, NackCode::Busy, req.tag, req.eid, r, self.id, 0, SOURCE_SHARE_DETAIL);
            }
            return;
        }
        let admit = Admit {
            slot: standing.slot,
            active: standing.active,
            hop_dead: self.liveness.refuses(next_hop),
            retransmission: req.flags.contains(RequestFlags::RETRANSMISSION),
        };
        // S3 §II-A: which anticipated units this store holds (looked at, not counted as lookups).
        let cs = self.cs.lock();
        let anticipation = Anticipation::of(req, self.id, now, |o| {
            cs.peek(&(req.eid, o)).is_some_and(|c: &CachedUnit| c.fits(o, unit))
        });
        drop(cs);
        let mut echo = anticipation.as_ref().map(Anticipation::echo);
        let mut forward = std::mem::take(&mut self.forward);
        let mut refused = std::mem::take(&mut self.refused);
        forward.clear();
        refused.clear();
        for r in req.ranges() {
            let mut offset = r.offset;
            while offset < r.end() {
                self.stats.units_requested += 1;
                match self.unit_requested(now, from, req, offset, &admit, &mut echo) {
                    Verdict::Served => {}
                    Verdict::Waiting => {}
                    Verdict::Forward => forward.push(offset),
                    Verdict::Refused(why) => refused.push((why, offset)),
                }
                offset += unit;
            }
        }
        self.limiter.charge(admit.slot, forward.len() as u64);
        let up = Upstream {
            flags: req.flags,
            hop_limit: forwarded_hop_limit(req.hop_limit),
            nonce: req.nonce,
            eid: req.eid,
            unit: req.unit,
            annotations: anticipation.as_ref().map(Anticipation::upstream).unwrap_or_default(),
        };
        self.forward_upstream(now, next_hop, &up, &forward, false);
        // One Nack per run of consecutive refused units with the same reason.
        let mut i = 0;
        while i < refused.len() {
            let (why, first) = refused[i];
            let mut n = 1;
            while refused.get(i + n).is_some_and(|&(w, o)| w == why && o == first + n as u64 * unit) {
                n += 1;
            }
            let range = ByteRange::new(first, u32::try_from(n as u64 * unit).unwrap_or(u32::MAX));
            let silent;
            let detail = match why {
                Refusal::Loop => "the request came back: routing loop",
                Refusal::TableFull => "pending-request table full",
                Refusal::SourceShare => SOURCE_SHARE_DETAIL,
                Refusal::HopDead => {
                    silent = self.silent_detail(next_hop);
                    &silent
                }
            };
            self.send_nack(from, why.code(), req.tag, req.eid, range, self.id, 0, detail);
            i += n;
        }
        self.forward = forward;
        self.refused = refused;
    }

    /// One unit of a downstream's request: answer it, join it to a pending entry, or mark
    /// it for forwarding (within the source's share, [`limits`], and unless the next hop is
    /// presumed dead, [`liveness`]). The first unit answered from the store carries `echo`
    /// (the request's anticipated interests and annotations, S3 §II-A), which is then used
    /// up.
    fn unit_requested(
        &mut self,
        now: Time,
        from: SocketAddr,
        req: &Request<'_>,
        offset: u64,
        admit: &Admit,
        echo: &mut Option<Vec<u8>>,
    ) -> Verdict {
        let unit = u64::from(req.unit);
        // ORIGIN: the receiver found a block it got wrong; the store may be what is wrong.
        if !req.flags.contains(RequestFlags::ORIGIN)
            && let Some(c) = self.cs.lock().get(&(req.eid, offset))
            && c.fits(offset, unit)
        {
            // Encode straight from the store into a queued buffer (no copy of the payload
            // besides the one into the datagram).
            let options = echo.take().unwrap_or_default();
            let d = Data {
                flags: DataFlags(DataFlags::CACHED)
                    .with(DataFlags::LAST, offset + c.payload.len() as u64 == c.total_size),
                hops: 0,
                tag: req.tag,
                eid: req.eid,
                offset,
                total_size: c.total_size,
                served_by: self.id,
                options: Options::parse(&options).unwrap_or(Options::EMPTY),
                payload: &c.payload,
            };
            let mut b = self.pool.pop().unwrap_or_default();
            b.clear();
            b.resize(d.encoded_len(), 0);
            if d.encode(&mut b).is_ok() {
                self.queue.push_back((from, b));
                self.stats.cs_hits += 1;
                self.stats.data_out += 1;
                self.stats.bytes_out += d.payload.len() as u64;
                return Verdict::Served;
            }
        }
        self.stats.cs_misses += 1;
        let key = PitKey { eid: req.eid, offset, unit: req.unit };
        // Further downstreams of all entries together are bounded too (as many as the table
        // has entries), so that the table's memory is bounded whatever the pattern: 65 536
        // entries of 64 downstreams each would be ≈ 200 MB (issue 23, item 2).
        let room_to_join = self.pit.joined() < self.pit.capacity();
        if let Some(e) = self.pit.get_mut(&key) {
            if e.is_loop(req.nonce, from) {
                self.stats.loops += 1;
                return Verdict::Refused(Refusal::Loop);
            }
            let max_waiting = if room_to_join { self.max_waiting } else { e.downstream.len() };
            let Some(new) = e.add_downstream(from, req.tag, max_waiting, now) else {
                self.stats.busy += 1;
                return Verdict::Refused(Refusal::TableFull);
            };
            e.note_nonce(req.nonce, from);
            // Forwarded again (upstream work, paid from the source's share).
            let refire = admit.retransmission && now - e.last_forwarded >= self.retx_suppression && !admit.hop_dead;
            if refire {
                e.forwarded_for(from);
            }
            self.pit.set_expiry(&key, now + self.lifetime);
            if new {
                self.pit.note_joined();
            }
            if refire {
                self.stats.reforwarded_units += 1;
                return Verdict::Forward;
            }
            if new {
                self.stats.coalesced += 1;
            }
            return Verdict::Waiting;
        }
        if admit.hop_dead {
            self.stats.no_route += 1;
            return Verdict::Refused(Refusal::HopDead);
        }
        let slot = admit.slot;
        if !self.limiter.may_hold_more(&self.pit, slot, admit.active) {
            self.stats.busy += 1;
            self.stats.source_limited += 1;
            return Verdict::Refused(Refusal::SourceShare);
        }
        match self.pit.insert(key, PitEntry::new(from, req.tag, req.nonce, now, slot), now + self.lifetime) {
            Ok(_) => {
                self.stats.forwarded_units += 1;
                Verdict::Forward
            }
            Err(_) => {
                self.stats.busy += 1;
                Verdict::Refused(Refusal::TableFull)
            }
        }
    }

    /// Send the units at `offsets` (of `up`'s EID and unit) to `next_hop`, as few requests
    /// as the range and unit limits allow, with the token `next_hop` issued (if any).
    fn forward_upstream(&mut self, now: Time, next_hop: SocketAddr, up: &Upstream, offsets: &[u64], retried: bool) {
        let max_units = (self.max_units_per_request as usize).max(1);
        // Most ranges that fit the reply limit as well (a full request of unit-sized ranges).
        let by_bytes = self.max_reply_bytes / (u64::from(up.unit) + DATA_HEADER_LEN as u64);
        let max_units = max_units.min(by_bytes.max(1) as usize);
        let mut rest = offsets;
        while !rest.is_empty() {
            let (ranges, used) = unit_ranges(rest.iter().copied(), u32::from(up.unit), MAX_RANGES, max_units);
            let (sent, later) = rest.split_at(used);
            rest = later;
            let tag = self.new_tag();
            let mut opts = [0u8; extra_ranges_len(MAX_RANGES)
                + address_token_len(Some(&[0; MAX_TOKEN_LEN]))
                + crate::wire::annotation::MAX_AREA];
            let mut opt_len = extra_ranges_len(ranges.len() - 1);
            write_extra_ranges(&mut opts[..opt_len], &ranges[1..]);
            opt_len += write_address_token(&mut opts[opt_len..], self.tokens.get(&next_hop).map(|t| &t[..]));
            opts[opt_len..opt_len + up.annotations.len()].copy_from_slice(&up.annotations);
            opt_len += up.annotations.len();
            let req = Request {
                flags: up.flags,
                hop_limit: up.hop_limit,
                unit: up.unit,
                tag,
                nonce: up.nonce,
                eid: up.eid,
                range: ranges[0],
                options: Options::parse(&opts[..opt_len]).expect("options this function wrote"),
            };
            self.enqueue(next_hop, req.encoded_len(), |b| req.encode(b).ok());
            self.stats.upstream_requests += 1;
            self.liveness.sent(now, next_hop);
            for &o in sent {
                if let Some(e) = self.pit.get_mut(&PitKey { eid: up.eid, offset: o, unit: up.unit }) {
                    e.note_forwarded(tag, next_hop, now);
                }
            }
            let record = OutRequest { next_hop, up: up.clone(), offsets: sent.to_vec(), retried };
            if self.upstream.is_full() {
                // Forget the oldest: a Nack answering it will find nothing (its units expire).
                self.upstream.pop_expired(Time::MAX);
            }
            let _ = self.upstream.insert(tag, record, now + self.lifetime);
        }
    }

    fn on_resolve(&mut self, now: Time, from: SocketAddr, r: &ResolveRequest<'_>) {
        self.stats.resolves += 1;
        let (eid, next_hop) = match r.query {
            Query::Name(n) => (Eid::default(), self.fib.route_name(n)),
            Query::Eid(e) => (e, self.fib.route_eid(&e)),
        };
        let Some((next_hop, source)) = self.control_next_hop(now, from, r.hop_limit, r.tag, eid, next_hop) else {
            return;
        };
        let query = match r.query {
            Query::Name(n) => ControlQuery::Name(n.into()),
            Query::Eid(e) => ControlQuery::Eid(e),
        };
        let hop_limit = forwarded_hop_limit(r.hop_limit);
        let pending = Forwarded { next_hop, downstream: from, tag: r.tag, hop_limit, query, retried: false, source };
        self.forward_control(now, eid, pending);
    }

    /// A proof request (verified streaming): answered here if this router knows every
    /// sibling asked for (nodes of blocks it verified, [`verify`]) and the request does not
    /// say ORIGIN; otherwise it goes where the EID's requests go.
    fn on_proof_request(&mut self, now: Time, from: SocketAddr, p: &ProofRequest<'_>) {
        self.stats.proofs += 1;
        if !p.flags.contains(RequestFlags::ORIGIN)
            && let Some(siblings) = self.staging.siblings(p.eid, p.block, p.depth)
        {
            let proof = wire::Proof {
                hops: 0,
                tag: p.tag,
                eid: p.eid,
                block: p.block,
                served_by: self.id,
                siblings: &siblings,
            };
            self.enqueue(from, proof.encoded_len(), |b| proof.encode(b).ok());
            self.stats.proofs_served += 1;
            return;
        }
        let route = self.fib.route_eid(&p.eid);
        let Some((next_hop, source)) = self.control_next_hop(now, from, p.hop_limit, p.tag, p.eid, route) else {
            return;
        };
        let query = ControlQuery::Proof { flags: p.flags, eid: p.eid, block: p.block, depth: p.depth };
        let hop_limit = forwarded_hop_limit(p.hop_limit);
        let pending = Forwarded { next_hop, downstream: from, tag: p.tag, hop_limit, query, retried: false, source };
        self.forward_control(now, p.eid, pending);
    }

    fn on_list(&mut self, now: Time, from: SocketAddr, l: &ListRequest) {
        self.stats.lists += 1;
        let route = self.fib.default_route();
        let Some((next_hop, source)) = self.control_next_hop(now, from, l.hop_limit, l.tag, Eid::default(), route)
        else {
            return;
        };
        let query = ControlQuery::List { cursor: l.cursor };
        let hop_limit = forwarded_hop_limit(l.hop_limit);
        let pending = Forwarded { next_hop, downstream: from, tag: l.tag, hop_limit, query, retried: false, source };
        self.forward_control(now, Eid::default(), pending);
    }

    /// The next hop of a resolve, list or proof request (and the slot of the source it is
    /// charged to), or `None` after refusing it: hop limit, no route, a route back to `from`
    /// (never forwarded back where it came from), a next hop presumed dead, a full table or
    /// the source's share used up ([`limits`]).
    fn control_next_hop(
        &mut self,
        now: Time,
        from: SocketAddr,
        hop_limit: u8,
        tag: u32,
        eid: Eid,
        route: Option<SocketAddr>,
    ) -> Option<(SocketAddr, SlotIx)> {
        let range = ByteRange::new(0, 0);
        let silent;
        let refusal = match route {
            _ if hop_limit == 0 => {
                self.stats.hop_limit += 1;
                (NackCode::HopLimit, "hop limit reached (a routing loop, or a path too long)")
            }
            None => {
                self.stats.no_route += 1;
                (NackCode::NoRoute, "no route for this name")
            }
            Some(a) if a == from => {
                self.stats.no_route += 1;
                (NackCode::NoRoute, "the route leads back where the request came from")
            }
            Some(a) if self.liveness.refuses(a) => {
                self.stats.no_route += 1;
                silent = self.silent_detail(a);
                (NackCode::NoRoute, silent.as_str())
            }
            Some(_) if self.control.is_full() => {
                self.stats.busy += 1;
                (NackCode::Busy, "too many forwarded requests pending")
            }
            Some(a) => {
                let s = self.limiter.ask(now, from);
                if s.may_forward && self.limiter.may_hold_more(&self.control, s.slot, s.active) {
                    self.limiter.charge(s.slot, 1);
                    return Some((a, s.slot));
                }
                self.stats.busy += 1;
                self.stats.source_limited += 1;
                (NackCode::Busy, SOURCE_SHARE_DETAIL)
            }
        };
        self.send_nack(from, refusal.0, tag, eid, range, self.id, 0, refusal.1);
        None
    }

    /// Send a resolve or list upstream under a new tag (with the next hop's token) and
    /// remember where its answer goes.
    fn forward_control(&mut self, now: Time, eid: Eid, pending: Forwarded) {
        let tag = self.new_tag();
        let mut opts = [0u8; address_token_len(Some(&[0; MAX_TOKEN_LEN]))];
        let opt_len = write_address_token(&mut opts, self.tokens.get(&pending.next_hop).map(|t| &t[..]));
        let options = Options::parse(&opts[..opt_len]).expect("options this function wrote");
        let hop_limit = pending.hop_limit;
        let next_hop = pending.next_hop;
        let mut b = self.pool.pop().unwrap_or_default();
        b.clear();
        b.resize(wire::LIST_REQUEST_LEN + RESOLVE_ROOM + opts.len(), 0);
        let len = match &pending.query {
            ControlQuery::Name(n) => ResolveRequest { hop_limit, tag, query: Query::Name(n), options }.encode(&mut b),
            ControlQuery::Eid(e) => ResolveRequest { hop_limit, tag, query: Query::Eid(*e), options }.encode(&mut b),
            ControlQuery::List { cursor } => ListRequest { hop_limit, tag, cursor: *cursor, options }.encode(&mut b),
            ControlQuery::Proof { flags, eid, block, depth } => {
                ProofRequest { flags: *flags, hop_limit, tag, eid: *eid, block: *block, depth: *depth, options }
                    .encode(&mut b)
            }
        };
        let (downstream, their_tag) = (pending.downstream, pending.tag);
        match len {
            Ok(n) if self.control.insert(tag, pending, now + self.lifetime).is_ok() => {
                b.truncate(n);
                self.queue.push_back((next_hop, b));
                self.liveness.sent(now, next_hop);
            }
            _ => {
                self.recycle(b);
                self.send_nack(downstream, NackCode::Busy, their_tag, eid, ByteRange::new(0, 0), self.id, 0, "busy");
            }
        }
    }

    // ----- answers from upstream -------------------------------------------------------

    /// A Data from upstream: satisfy the pending entries it answers (see PROTOCOL.md). Its
    /// annotations are updated on the way (S3 §II-A: `T_D − T_I` for this router's own,
    /// one more hop for the others).
    fn on_data(&mut self, now: Time, from: SocketAddr, d: &Data<'_>, datagram: &[u8]) {
        self.stats.data_in += 1;
        self.stats.bytes_in += d.payload.len() as u64;
        let len = d.payload.len();
        let last = d.offset + len as u64 == d.total_size;
        let mut candidates = [0u16; UNIT_SIZES + 1];
        let mut n = 0;
        if let Ok(u) = u16::try_from(len) {
            candidates[0] = u;
            n = 1;
        }
        if last {
            for &u in &self.unit_sizes {
                if usize::from(u) > len {
                    candidates[n] = u;
                    n += 1;
                }
            }
        }
        let mut matched = false;
        for &unit in &candidates[..n] {
            let key = PitKey { eid: d.eid, offset: d.offset, unit };
            if !self.pit.get(&key).is_some_and(|e| e.answered_by(d.tag, from)) {
                continue;
            }
            let Some(entry) = self.pit.remove(&key) else { continue };
            if !matched {
                // Verify before caching: the unit waits in staging for its blocks.
                let value = CachedUnit { total_size: d.total_size, payload: d.payload.into() };
                self.stage(now, from, d.eid, d.offset, value);
                matched = true;
            }
            let hops = d.hops.saturating_add(1);
            let (id, has_annotations) = (self.id, d.options.annotations().next().is_some());
            for w in &entry.downstream {
                let early = entry.early(w, now);
                self.enqueue(w.peer, datagram.len(), |b| {
                    b.copy_from_slice(datagram);
                    wire::rewrite_response(b, w.tag);
                    wire::set_hops(b, hops);
                    if early {
                        // It joined a request that had gone upstream well before its own.
                        wire::set_data_flags(b, DataFlags::COALESCED);
                    }
                    if has_annotations {
                        on_return(b, id, now.as_nanos());
                    }
                    Some(datagram.len())
                });
                self.stats.data_out += 1;
                self.stats.bytes_out += len as u64;
            }
        }
        if !matched {
            self.stats.unsolicited += 1;
        }
    }

    /// A Nack from upstream: pass it to everyone waiting for a unit it refuses.
    fn on_nack(&mut self, from: SocketAddr, n: &Nack<'_>, datagram: &[u8]) {
        self.stats.nacks_in += 1;
        if self.own_proofs.asked(n.tag, from).is_some() {
            if let Some((eid, block)) = self.own_proofs.refused(n.tag) {
                self.staging.proof_refused(eid, block);
            }
            return;
        }
        if self.control.get(&n.tag).is_some_and(|c| c.next_hop == from) {
            self.on_control_response(from, n.tag, None, datagram);
            return;
        }
        let Some(out) = self.upstream.get(&n.tag).filter(|o| o.next_hop == from) else {
            self.stats.unsolicited += 1;
            return;
        };
        // Range-specific refusals cover the range; the others the whole request.
        let ranged = matches!(n.code, NackCode::RangeBeyondEnd | NackCode::Internal);
        let refused = ByteRange::new(n.offset, n.length);
        let (eid, unit) = (out.up.eid, out.up.unit);
        let offsets: Vec<u64> =
            out.offsets.iter().copied().filter(|&o| !ranged || (o >= refused.offset && o < refused.end())).collect();
        if !ranged {
            self.upstream.remove(&n.tag);
        }
        // Units the upstream refused were wasted work: their sources pay for them again
        // (limits.rs), except for Busy, which is congestion, not the asker's doing.
        let recharge = n.code != NackCode::Busy;
        let refusal = Refused { code: n.code, by: n.from, hops: n.hops.saturating_add(1), detail: n.detail, recharge };
        self.refuse_pending((n.tag, from), eid, unit, &offsets, false, &refusal);
    }

    /// Refuse the pending units at `offsets` (of `eid` and `unit`) that went out in the
    /// upstream request `sent` (its tag and next hop; with `latest`, only units whose latest
    /// request that was) to everyone waiting for them, one Nack per run of consecutive units
    /// per downstream and tag; the entries are removed. Returns the units refused.
    fn refuse_pending(
        &mut self,
        sent: (u32, SocketAddr),
        eid: Eid,
        unit: u16,
        offsets: &[u64],
        latest: bool,
        why: &Refused<'_>,
    ) -> u64 {
        let (tag, hop) = sent;
        let mut waiting: Vec<(SocketAddr, u32, u64)> = Vec::new();
        let mut units = 0;
        for &o in offsets {
            let key = PitKey { eid, offset: o, unit };
            if let Some(e) =
                self.pit.remove_if(&key, |e| e.answered_by(tag, hop) && (!latest || e.last_next_hop() == Some(hop)))
            {
                waiting.extend(e.downstream.iter().map(|w| (w.peer, w.tag, o)));
                units += 1;
                if why.recharge {
                    self.limiter.charge(e.source, limits::REFUSED_UNIT_CHARGE);
                }
            }
        }
        waiting.sort_unstable();
        let step = u64::from(unit);
        let mut i = 0;
        while i < waiting.len() {
            let (peer, tag, first) = waiting[i];
            let mut k = 1;
            while waiting.get(i + k).is_some_and(|&(p, t, o)| p == peer && t == tag && o == first + k as u64 * step) {
                k += 1;
            }
            let range = ByteRange::new(first, u32::try_from(k as u64 * step).unwrap_or(u32::MAX));
            self.send_nack(peer, why.code, tag, eid, range, why.by, why.hops, why.detail);
            i += k;
        }
        units
    }

    /// `hop` was asked for something and sent nothing back for the upstream timeout
    /// ([`liveness`]): everything pending toward it — units, resolves, lists, proof requests
    /// — is refused with `NoRoute`, from this router, naming the hop.
    fn upstream_silent(&mut self, hop: SocketAddr) {
        self.stats.upstream_timeouts += 1;
        let detail = self.silent_detail(hop);
        let why = Refused { code: NackCode::NoRoute, by: self.id, hops: 0, detail: &detail, recharge: false };
        let mut tags = self.upstream.keys_where(|_, o| o.next_hop == hop);
        tags.sort_unstable();
        for tag in tags {
            let Some(o) = self.upstream.remove(&tag) else { continue };
            self.stats.no_route += self.refuse_pending((tag, hop), o.up.eid, o.up.unit, &o.offsets, true, &why);
        }
        let mut tags = self.control.keys_where(|_, c| c.next_hop == hop);
        tags.sort_unstable();
        for tag in tags {
            let Some(c) = self.control.remove(&tag) else { continue };
            self.stats.no_route += 1;
            let range = ByteRange::new(0, 0);
            self.send_nack(c.downstream, NackCode::NoRoute, c.tag, c.query.eid(), range, self.id, 0, &detail);
        }
    }

    /// What a Nack for units waiting on a silent `hop` says.
    fn silent_detail(&self, hop: SocketAddr) -> String {
        format!("upstream {hop} did not answer within {}", liveness::human(self.liveness.timeout()))
    }

    /// A Retry from upstream: the next hop wants its token. Keep it and send the refused
    /// request again with it, once; its pending units keep their downstreams.
    fn on_retry(&mut self, now: Time, from: SocketAddr, r: &Retry<'_>) {
        if let Some((key, a)) = self.own_proofs.take_for_retry(r.tag, from) {
            self.stats.retries_in += 1;
            self.keep_token(from, r.token);
            self.send_proof_request(now, key, a);
            return;
        }
        let out = self.upstream.get(&r.tag).is_some_and(|o| o.next_hop == from && !o.retried);
        let control = self.control.get(&r.tag).is_some_and(|c| c.next_hop == from && !c.retried);
        if !out && !control {
            self.stats.unsolicited += 1;
            return;
        }
        self.stats.retries_in += 1;
        self.keep_token(from, r.token);
        if out {
            let Some(o) = self.upstream.remove(&r.tag) else { return };
            let up = o.up;
            // Only units still waiting for this request go again (with the annotations they
            // went with the first time).
            let offsets: Vec<u64> = o
                .offsets
                .into_iter()
                .filter(|&off| {
                    self.pit
                        .get(&PitKey { eid: up.eid, offset: off, unit: up.unit })
                        .is_some_and(|e| e.answered_by(r.tag, from))
                })
                .collect();
            self.forward_upstream(now, from, &up, &offsets, true);
        } else if let Some(mut c) = self.control.remove(&r.tag) {
            c.retried = true;
            let eid = c.query.eid();
            self.forward_control(now, eid, c);
        }
    }

    /// The answer to a forwarded resolve or list (or a Nack refusing one).
    fn on_control_response(&mut self, from: SocketAddr, tag: u32, resolved: Option<&ResolveResponse<'_>>, d: &[u8]) {
        if self.control.get(&tag).is_none_or(|c| c.next_hop != from) {
            self.stats.unsolicited += 1;
            return;
        }
        let Some(c) = self.control.remove(&tag) else { return };
        if let Some(r) = resolved {
            self.fib.learn(r.eid, from);
            if let Some(out) = self.learned.as_mut() {
                if out.len() >= LEARNED_EXPORT {
                    out.pop_front();
                }
                out.push_back((r.eid, from));
            }
        }
        let ty = wire::check_prefix(d);
        let is_nack = matches!(ty, Ok(PacketType::Nack));
        if is_nack {
            self.stats.nacks_out += 1;
        }
        let counts_hops = is_nack || matches!(ty, Ok(PacketType::Proof));
        self.enqueue(c.downstream, d.len(), |b| {
            b.copy_from_slice(d);
            wire::rewrite_response(b, c.tag);
            if counts_hops {
                wire::set_hops(b, d[wire::HOPS_AT].saturating_add(1));
            }
            Some(d.len())
        });
    }

    /// The token `from` issued to this router, kept for later requests.
    fn keep_token(&mut self, from: SocketAddr, token: &[u8]) {
        if self.tokens.len() >= TOKENS && !self.tokens.contains_key(&from) {
            // Forget one: the next request to that hop pays a Retry again.
            let victim = *self.tokens.keys().next().expect("non-empty");
            self.tokens.remove(&victim);
        }
        self.tokens.insert(from, token.into());
    }

    // ----- verify before caching (verify.rs) --------------------------------------------

    /// **Experiments only** (feature `unverified-cache`, which only the ns-3 build turns on,
    /// through `rdtp-ffi`'s `experiments`): cache every unit that answers a pending entry as
    /// it arrives, unchecked and without proof requests — the baseline that measures what
    /// verify-before-caching costs (docs/EXPERIMENTS.md §8). A router that does this can be
    /// made to serve forged bytes from its store; `rdtp route` cannot be built to call it
    /// (its crate does not enable the feature, so the method does not exist for it).
    #[cfg(feature = "unverified-cache")]
    pub fn cache_unverified_for_experiments(&mut self, on: bool) {
        self.cache_unverified = on;
    }

    /// A unit that answered a pending entry: to staging, which caches it once its blocks
    /// verified — unless the store caches nothing (switched off: no unit would ever be
    /// cached, so no proof is worth asking for).
    fn stage(&mut self, now: Time, from: SocketAddr, eid: Eid, offset: u64, value: CachedUnit) {
        #[cfg(feature = "unverified-cache")]
        if self.cache_unverified {
            self.cs.lock().offer((eid, offset), value);
            return;
        }
        if self.stores_nothing {
            return;
        }
        let mut steps = std::mem::take(&mut self.steps);
        self.staging.add(eid, offset, value, &mut steps);
        self.run_steps(now, from, &mut steps);
        self.steps = steps;
    }

    /// Do what staging asked: cache verified units, ask `from` (where the Data came from)
    /// for the proofs of whole blocks.
    fn run_steps(&mut self, now: Time, from: SocketAddr, steps: &mut Vec<Step>) {
        for step in steps.drain(..) {
            match step {
                Step::Cache(eid, offset, unit) => {
                    self.cs.lock().offer((eid, offset), unit);
                }
                Step::Prove { eid, block, depth } => self.request_proof(now, from, eid, block, depth),
            }
        }
        let v = self.staging.stats;
        (self.stats.blocks_verified, self.stats.blocks_failed, self.stats.blocks_abandoned) =
            (v.verified, v.failed, v.abandoned);
    }

    /// Ask `to` (where the block's Data came from) for the proof of `block` of `eid`:
    /// `depth` siblings (the first attempt; [`proofs`] times it and asks again).
    fn request_proof(&mut self, now: Time, to: SocketAddr, eid: Eid, block: u64, depth: u8) {
        if self.own_proofs.is_asking(eid, block) {
            return;
        }
        if let Some((eid, block)) = self.own_proofs.make_room() {
            // Forget the request with the earliest timeout: its block waits in staging
            // until abandoned.
            self.staging.proof_refused(eid, block);
        }
        let tag = self.send_proof(to, eid, block, depth);
        self.own_proofs.first(now, eid, block, to, depth, tag);
    }

    /// Send another attempt of a request [`proofs`] gave back (after a timeout or a Retry).
    fn send_proof_request(&mut self, now: Time, key: (Eid, u64), a: proofs::Asking) {
        let tag = self.send_proof(a.next_hop, key.0, key.1, a.depth);
        self.own_proofs.again(now, key, a, tag);
    }

    /// One ProofRequest to `to`, under a new tag (returned), with the token `to` issued.
    fn send_proof(&mut self, to: SocketAddr, eid: Eid, block: u64, depth: u8) -> u32 {
        let mut tag = self.new_tag();
        while self.own_proofs.uses_tag(tag) {
            tag = self.new_tag();
        }
        let mut opts = [0u8; address_token_len(Some(&[0; MAX_TOKEN_LEN]))];
        let opt_len = write_address_token(&mut opts, self.tokens.get(&to).map(|t| &t[..]));
        let p = ProofRequest {
            flags: RequestFlags(0),
            hop_limit: wire::DEFAULT_HOP_LIMIT,
            tag,
            eid,
            block,
            depth,
            options: Options::parse(&opts[..opt_len]).expect("options this function wrote"),
        };
        self.enqueue(to, p.encoded_len(), |b| p.encode(b).ok());
        self.stats.proofs_requested += 1;
        tag
    }

    /// The answer to one of this router's own proof requests (any attempt of it).
    fn on_own_proof(&mut self, now: Time, from: SocketAddr, p: &wire::Proof<'_>) {
        let Some(((eid, block), _)) = self.own_proofs.answered(now, p.tag) else { return };
        if p.eid != eid || p.block != block {
            self.stats.unsolicited += 1;
            self.staging.proof_refused(eid, block);
            return;
        }
        let siblings: Vec<crate::tree::Cv> =
            p.siblings.chunks_exact(32).map(|c| c.try_into().expect("32-byte chunks")).collect();
        let mut steps = std::mem::take(&mut self.steps);
        self.staging.proof(eid, block, &siblings, &mut steps);
        self.run_steps(now, from, &mut steps);
        self.steps = steps;
    }

    // ----- output ----------------------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    fn send_nack(
        &mut self,
        to: SocketAddr,
        code: NackCode,
        tag: u32,
        eid: Eid,
        range: ByteRange,
        by: NodeId,
        hops: u8,
        detail: &str,
    ) {
        let n = Nack { code, hops, tag, eid, offset: range.offset, length: range.length, from: by, detail };
        self.enqueue(to, n.encoded_len(), |b| n.encode(b).ok());
        self.stats.nacks_out += 1;
    }

    /// A Nack echoing nothing of a datagram of `received` bytes that could not be decoded,
    /// so its sender is unvalidated: cut to the amplification budget, or not sent.
    fn nack_blank(&mut self, to: SocketAddr, received: usize, code: NackCode, detail: &str) {
        let n = Nack { code, hops: 0, tag: 0, eid: Eid::default(), offset: 0, length: 0, from: self.id, detail };
        match n.fitting(self.validator.budget(received)) {
            Some(n) => {
                self.enqueue(to, n.encoded_len(), |b| n.encode(b).ok());
                self.stats.nacks_out += 1;
            }
            None => self.stats.dropped += 1,
        }
    }

    /// A request that does not decode but names its tag (issue 23, item 12): a Nack
    /// `Malformed` its sender can attribute, or a Retry, or nothing, as a server answers
    /// ([`Validator::answer_malformed`]: within 3× toward an unvalidated address).
    fn nack_malformed(
        &mut self,
        now: Time,
        from: SocketAddr,
        received: usize,
        a: &wire::Attribution<'_>,
        detail: &str,
    ) {
        let n = Nack {
            code: NackCode::Malformed,
            hops: 0,
            tag: a.tag,
            eid: a.eid,
            offset: a.range.offset,
            length: a.range.length,
            from: self.id,
            detail,
        };
        match self.validator.answer_malformed(now, from, a.token, received, n.encoded_len()) {
            MalformedAnswer::Nack => {
                self.enqueue(from, n.encoded_len(), |b| n.encode(b).ok());
                self.stats.nacks_out += 1;
            }
            MalformedAnswer::Retry(token) => {
                let r = Retry { tag: a.tag, token: &token };
                self.enqueue(from, r.encoded_len(), |b| r.encode(b).ok());
                self.stats.retries_out += 1;
            }
            MalformedAnswer::Nothing => self.stats.dropped += 1,
        }
    }

    /// Queue a datagram of `len` bytes written by `write` (which returns the length written).
    fn enqueue(&mut self, to: SocketAddr, len: usize, write: impl FnOnce(&mut [u8]) -> Option<usize>) {
        let mut b = self.pool.pop().unwrap_or_default();
        b.clear();
        b.resize(len, 0);
        match write(&mut b) {
            Some(n) => {
                b.truncate(n);
                self.queue.push_back((to, b));
            }
            None => self.recycle(b),
        }
    }

    fn recycle(&mut self, b: Vec<u8>) {
        if self.pool.len() < POOL && b.capacity() <= POOL_BUFFER {
            self.pool.push(b);
        }
    }

    /// A fresh tag of this router's class ([`RouterConfig::tags`]), not 0, not pending.
    fn new_tag(&mut self) -> u32 {
        let m = self.tags.modulus.max(1);
        let r = self.tags.residue % m;
        loop {
            let t = self.rng.next_u32();
            let Some(t) = (t - t % m).checked_add(r) else { continue };
            if t != 0 && self.upstream.get(&t).is_none() && self.control.get(&t).is_none() {
                return t;
            }
        }
    }

    fn note_unit_size(&mut self, unit: u16) {
        if self.unit_sizes.first() == Some(&unit) {
            return;
        }
        self.unit_sizes.retain(|&u| u != unit);
        self.unit_sizes.insert(0, unit);
        self.unit_sizes.truncate(UNIT_SIZES);
    }
}

/// What happened to one requested unit.
enum Verdict {
    /// Answered from the content store.
    Served,
    /// Joined a pending entry.
    Waiting,
    /// To be sent upstream.
    Forward,
    Refused(Refusal),
}

/// Why a unit was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// Its nonce came back from another peer.
    Loop,
    /// The pending table, or the entry's list of downstreams, is full.
    TableFull,
    /// Its source used up its share ([`limits`]).
    SourceShare,
    /// Its next hop is presumed dead and already probed ([`liveness`]).
    HopDead,
}

impl Refusal {
    fn code(self) -> NackCode {
        match self {
            Refusal::Loop => NackCode::Duplicate,
            Refusal::TableFull | Refusal::SourceShare => NackCode::Busy,
            Refusal::HopDead => NackCode::NoRoute,
        }
    }
}

/// What the Busy refusing a unit beyond its source's share says.
const SOURCE_SHARE_DETAIL: &str = "this source's share of the router is in use (too many units pending or asked for)";

/// A request's standing with the per-source limits and the next hop's liveness, for each
/// of its units.
struct Admit {
    /// Its source's slot.
    slot: SlotIx,
    /// Sources asking now (its share of the pending table is 1 / active).
    active: usize,
    /// Its next hop is presumed dead and already probed: new units are refused.
    hop_dead: bool,
    retransmission: bool,
}

/// A refusal passed to the downstreams of pending units.
struct Refused<'a> {
    code: NackCode,
    by: NodeId,
    hops: u8,
    detail: &'a str,
    /// Charge each refused unit to the source of its entry again ([`limits`]).
    recharge: bool,
}

/// The hop limit a request (resolve, list, proof request) that arrived with `h` ≥ 1 is
/// forwarded with: one less, and never more than [`MAX_HOP_LIMIT`] − 1.
fn forwarded_hop_limit(h: u8) -> u8 {
    h.min(MAX_HOP_LIMIT).saturating_sub(1)
}

#[cfg(test)]
mod tests;
