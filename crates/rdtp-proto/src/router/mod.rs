//! The caching router (seeds 001 §II and 003 §I: NDN-style forwarders with a content store
//! between consumers and producers).
//!
//! A [`Router`] is the receivers' first hop, as an NDN consumer's forwarder is; towards its
//! next hop (a server or another router) it behaves as a receiver does. For each unit asked
//! for it answers from its content store ([`cs`]) if it can, adds the asker to a pending
//! entry if the unit is already requested upstream (coalescing), or forwards the request
//! through its forwarding table ([`fib`]) to the next hops its forwarding strategy
//! ([`strategy`]) chooses. Data coming back fills the pending entries'
//! downstreams, each with its own tag (and flag `COALESCED` for those whose request reached
//! the entry well after the request it answers went upstream: no RTT sample for them), and may be kept in the store. `docs/PROTOCOL.md`
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
//! # How the pieces fit
//!
//! The layout follows NFD's forwarder (`daemon/fw/`, `daemon/table/`):
//!
//! | file | holds | must not |
//! | --- | --- | --- |
//! | `mod.rs` | [`RouterStats`], [`Router`], the sans-IO calls; `handle_datagram` dispatches to the pipelines | decide anything per packet type itself |
//! | `config.rs` | [`RouterConfig`] and its key table (the router spec, `cs_policy=lfu,strategy=asf`) | parse a spec itself ([`crate::spec`] does) |
//! | `forwarder.rs` | the pipelines, named as NFD's: incoming request, content-store hit and miss, outgoing request, incoming data, unsolicited data, incoming Nack, a silent next hop | choose next hops (the strategy does) or build upstream requests |
//! | [`strategy`] | the [`strategy::Strategy`] trait, its registry ([`strategy::STRATEGIES`]) and retransmission suppression; one file per strategy (`strategy/best_route.rs`, `strategy/asf.rs`) | keep state per request or per receiver |
//! | `upstream.rs` | requests to next hops, resolve/list/proof forwarding, the per-hop token jar | answer from the store |
//! | `verify.rs`, `proofs.rs` | verify before caching: staging, the router's own proof requests | cache an unverified byte |
//! | [`cs`] | the content store, its [`cs::Policy`] trait and registry ([`cs::policies`]); one file per replacement policy (`cs/{lru,lfu,fifo,random,clock}.rs`) | know about packets |
//! | [`fib`], `pit.rs`, `expiring.rs` | the tables (FIB with several next hops per route, PIT, expiring maps) | decide |
//! | `limits.rs`, `liveness.rs`, `annotate.rs`, `output.rs` | per-source shares, next-hop liveness, CCTCP's annotations, the transmit queue and Nacks | |
//! | `hashing.rs` | the keyed hash of every table above (foldhash, keyed from the token secret and the seed) | draw randomness of its own |
//!
//! **Adding a forwarding strategy**: a file `strategy/NAME.rs` implementing
//! [`strategy::Strategy`] with a `build` function, its `mod` line and one row in
//! [`strategy::STRATEGIES`]; `rdtp route --strategy NAME` and `--strategy help` find it
//! (`asf.rs` was added so: one new file, three lines in `strategy.rs`). **Adding a cache
//! replacement policy**: a file `cs/NAME.rs` implementing [`cs::Policy`], its `mod` line and
//! one row in [`cs::policies`]; `--cs-policy NAME` finds it (`clock.rs` was added so).
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
//!     while let Some(t) = router.poll_transmit(now, &mut buf) { send(t.to, &buf[..t.len]) }
//! }
//! ```
//!
//! `buf` must hold [`MAX_DATAGRAM`] bytes. Drain `poll_transmit` after every call: answers
//! queue up until drained. `now` must never go backwards.

mod annotate;
mod config;
pub mod cs;
mod expiring;
pub mod fib;
mod forwarder;
mod hashing;
mod limits;
mod liveness;
mod output;
mod pit;
mod proofs;
pub mod strategy;
mod upstream;
mod verify;

use std::collections::VecDeque;
use std::net::SocketAddr;

use core::time::Duration;

use rand_core::SeedableRng;
use rand_pcg::Pcg32;

use crate::eid::Eid;
use crate::node::NodeId;
use crate::time::Time;
use crate::token::Validator;
use crate::wire::{self, DecodeError, NackCode, Packet, PacketType, Retry};
pub use config::{RouterConfig, TagClass};
use cs::{CsStats, SharedStore, Weigh};
use expiring::ExpiringMap;
use fib::Fib;
use forwarder::Refusal;
use hashing::TableHasher;
#[cfg(test)]
use limits::SOURCE_SHARE_DETAIL;
pub use limits::SourceLimits;
use limits::{Held, Limiter};
use liveness::Liveness;
use pit::{PitEntry, PitKey, SpareLists};
use proofs::OwnProofs;
use strategy::{Strategy, StrategyParams};
use upstream::{Forwarded, OutRequest, TokenJar};
pub use verify::VerifyConfig;
use verify::{Staging, Step};
/// What the router's tests (`use super::*`) took from this module before the pipelines moved
/// to their own files.
#[cfg(test)]
#[allow(unused_imports)]
use {
    crate::token::{MAX_TOKEN_LEN, ValidationConfig},
    crate::wire::DEFAULT_MAX_REPLY_BYTES,
    crate::wire::tlv::{address_token_len, extra_ranges_len, unit_ranges, write_address_token, write_extra_ranges},
    crate::wire::{
        ByteRange, DATA_HEADER_LEN, Data, DataFlags, ListRequest, Nack, Options, ProofRequest, Query, Request,
        RequestFlags, ResolveRequest, ResolveResponse,
    },
    annotate::Anticipation,
    cs::CsConfig,
    limits::{SlotIx, Sourced},
    rand_core::Rng,
    strategy::{RetxSuppression, StrategyName},
    upstream::{ControlQuery, Upstream, forwarded_hop_limit},
};

/// Buffer size [`Router::poll_transmit`] needs (the largest UDP payload).
pub const MAX_DATAGRAM: usize = 65_535;
/// Highest hop limit a router forwards with: a request, resolve, list or proof request that
/// arrives with more is treated as if it carried this (the hop limit receivers send), so a
/// sender cannot make a routing loop carry its request more than 32 times (issue 23).
pub const MAX_HOP_LIMIT: u8 = wire::DEFAULT_HOP_LIMIT;
/// Most ranges in one request the router sends upstream.
const MAX_RANGES: usize = 32;
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

/// A datagram to send (the contract's, [`crate::node::Transmit`]).
pub use crate::node::Transmit;

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

/// A unit bound that lets a byte budget of `bytes` bound the store: as many units of the
/// default size ([`crate::wire::DEFAULT_UNIT`]) and their bookkeeping as it holds, at least
/// NFD's 65 536 (`rdtp route`'s default when no unit bound is given).
pub fn units_for_budget(bytes: u64) -> usize {
    let unit = (usize::from(crate::wire::DEFAULT_UNIT) + CACHED_UNIT_OVERHEAD) as u64;
    usize::try_from(bytes / unit).unwrap_or(usize::MAX).max(cs::CsConfig::DEFAULT_CAPACITY_UNITS)
}

impl Weigh for CachedUnit {
    /// What holding the unit costs: its payload and [`CACHED_UNIT_OVERHEAD`], so that
    /// [`cs::CsConfig::capacity_bytes`] bounds the store's memory, not only its payload.
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
    /// Units forwarded upstream again (a request for a pending unit after the suppression
    /// interval).
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

/// A caching router. See the module docs for the call contract.
#[derive(Debug)]
pub struct Router {
    id: NodeId,
    fib: Fib,
    cs: RouterStore,
    pit: Held<PitKey, PitEntry>,
    /// Lists of answered pending entries, for new ones (no allocation per unit).
    spare_lists: SpareLists,
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
    /// The forwarding strategy ([`strategy`]) and its scratch list of next hops.
    strategy: Box<dyn Strategy>,
    hops: Vec<SocketAddr>,
    retx_suppression: Duration,
    max_waiting: usize,
    max_units_per_request: u32,
    max_reply_bytes: u64,
    validator: Validator,
    /// The address token each next hop issued to this router.
    tokens: TokenJar,
    /// Unit sizes seen in requests, most recent first.
    unit_sizes: Vec<u16>,
    rng: Pcg32,
    /// The tags this router picks ([`RouterConfig::tags`]).
    tags: TagClass,
    queue: VecDeque<(SocketAddr, Vec<u8>)>,
    /// Offset lists of forgotten upstream requests, for new ones (`upstream.rs`).
    spare_offsets: Vec<Vec<u64>>,
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
    /// Scratch list of the ranges of one upstream request (`upstream.rs`).
    ranges: Vec<wire::ByteRange>,
}

crate::node::impl_node!(Router, MAX_DATAGRAM);

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
        // Every table's keyed hash (hashing.rs): from the token secret and the seed.
        let h = TableHasher::for_router(&cfg.validation.secret, cfg.seed);
        let mut fib = cfg.fib;
        fib.rekey(&h);
        Router {
            id: cfg.id,
            fib,
            cs: store,
            stores_nothing,
            pit: Held::new(cfg.pit_capacity, &cfg.source_limits, &h),
            spare_lists: SpareLists::default(),
            upstream: ExpiringMap::new(cfg.pit_capacity.max(1), &h),
            control: Held::new(cfg.control_capacity, &cfg.source_limits, &h),
            limiter: Limiter::new(cfg.source_limits.clone(), &cfg.validation.secret),
            liveness: Liveness::new(cfg.upstream_timeout.unwrap_or(Duration::ZERO), &h),
            silent: Vec::new(),
            staging: Staging::new(cfg.verify, &h),
            own_proofs: OwnProofs::new(cfg.control_capacity, cfg.lifetime, &h),
            steps: Vec::new(),
            lifetime: cfg.lifetime,
            strategy: cfg.strategy.build(&StrategyParams { retx: cfg.retx }),
            hops: Vec::new(),
            retx_suppression: cfg.retx_suppression,
            max_waiting: cfg.max_waiting.max(1),
            max_units_per_request: cfg.max_units_per_request,
            max_reply_bytes: cfg.max_reply_bytes,
            validator: Validator::new(cfg.validation),
            tokens: TokenJar::new(&h),
            unit_sizes: Vec::new(),
            rng: Pcg32::seed_from_u64(cfg.seed ^ 0x726f_7574_6572),
            tags: cfg.tags,
            queue: VecDeque::new(),
            spare_offsets: Vec::new(),
            pool: Vec::new(),
            stats: RouterStats::default(),
            learned: cfg.export_learned_routes.then(VecDeque::new),
            #[cfg(feature = "unverified-cache")]
            cache_unverified: false,
            forward: Vec::new(),
            refused: Vec::new(),
            ranges: Vec::new(),
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
    /// The name of its forwarding strategy.
    pub fn strategy(&self) -> &'static str {
        self.strategy.name()
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
        while let Some((_, o)) = self.upstream.pop_expired(now) {
            self.recycle_offsets(o.offsets);
        }
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

    /// The next datagram to send, written into `buf` (≥ [`MAX_DATAGRAM`] bytes). `now` is
    /// the contract's ([`crate::node::Node`]): the router's sends are not paced.
    pub fn poll_transmit(&mut self, _now: Time, buf: &mut [u8]) -> Option<Transmit> {
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

    /// Where the datagram the next [`Router::poll_transmit`] returns goes, if one is queued
    /// (a runtime that batches sends per destination picks the batch before writing it).
    pub fn next_transmit_to(&self) -> Option<SocketAddr> {
        self.queue.front().map(|&(to, _)| to)
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
            Ok(Packet::Request(r)) => self.on_incoming_request(now, from, &r),
            Ok(Packet::Data(d)) => self.on_incoming_data(now, from, &d, datagram),
            Ok(Packet::Nack(n)) => self.on_incoming_nack(now, from, &n, datagram),
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
}

#[cfg(test)]
mod tests;
