//! The receiver: everything that drives a pull-based transfer (seed 000 §3–§4).
//!
//! A [`Receiver`] fetches one object. It resolves a name or EID to the object's size if
//! needed, then requests units through a sliding window (`req_una .. req_nxt`), paced and
//! aggregated as its congestion controller dictates; it samples RTT and delivery rate from
//! every arriving unit, detects loss by timeout and by out-of-order arrivals, re-requests,
//! reorders, and hands the bytes to the application in order. It counts what each source
//! (the origin, or a router's content store) delivered.
//!
//! # Call contract (sans-IO)
//!
//! The receiver never touches a socket or a clock. Its owner moves datagrams and time:
//!
//! ```text
//! let mut rx = Receiver::new(config, peer, target, now);
//! loop {
//!     while let Some(t) = rx.poll_transmit(now, &mut buf) { send(t.to, &buf[..t.len]) } // 1
//!     while let Some(ev) = rx.poll_event() { ... }                                       // 2
//!     let deadline = rx.poll_timeout();                                                  // 3
//!     wait until a datagram arrives or `deadline` passes, then update `now`:
//!       datagram  → rx.handle_datagram(now, from, &bytes)                                // 4
//!       deadline  → rx.handle_timeout(now)
//!     let n = rx.read(&mut app_buf);  // in-order bytes, whenever convenient             // 5
//! }
//! ```
//!
//! This is the contract of every core ([`crate::node::Node`]) plus the receiver's events
//! and reads.
//!
//! 1. Call [`Receiver::poll_transmit`] until it returns `None` after every other call;
//!    requests leave only when pacing and the window allow, so it often returns `None`.
//!    `buf` must hold [`MAX_DATAGRAM`] bytes. Every datagram goes to the receiver's peer,
//!    its first hop: the server, or the router it fetches through. Datagrams from any
//!    other address are dropped (counted as invalid).
//! 2. [`Receiver::poll_event`] reports resolution, completion, failure and (with
//!    `trace`) requests, arrivals, RTT samples and controller changes. Drain it; it grows
//!    until drained.
//! 3. [`Receiver::poll_timeout`] is the next instant `handle_timeout` must be called
//!    (pacing release, loss detection, idle limit). It may already be past.
//! 4. `now` must never go backwards.
//! 5. [`Receiver::read`] frees receive-window space; call `poll_transmit` afterwards.
//!
//! The transfer is over when [`Receiver::is_finished`] (all bytes arrived and matched
//! the EID) or [`Receiver::error`] is set; bytes stay readable after the end.
//!
//! # Parts
//!
//! The receiver keeps the per-*object* state — target and resolution, the request window of
//! unit records ([`crate::recovery::window`]), reassembly and verification, the receive
//! window, tags and nonces — and one [`Path`]: the congestion state towards the network
//! (controller, RTT estimator, delivery-rate sampler, pacer, loss detector, recovery state).
//! The measuring and the loss detection are [`crate::recovery`]'s; the receiver calls them in
//! the order [`crate::recovery::loss`] documents. Controllers plug into the path through
//! [`crate::cc::Controller`]: besides the window, pacing rate and aggregation they come with
//! their loss detection ([`crate::cc::Built`]), may keep data per request (a cookie) and keep
//! state per source (every [`crate::cc::AckSample`] names the node that served the unit).
//! Per-source accounting for users is in [`sources`]. Answers that refuse a request — `Busy`
//! (back off) and the failing Nacks (confirmed from the origin before they end the fetch) —
//! are handled as [`refusals`] describes; verification, and the narrowing of a failed group
//! of blocks to its bad ones, in the private `reassembly` module.
//!
//! # The idle timeout
//!
//! A fetch fails with [`FetchError::Timeout`] once the server has been silent for
//! [`ReceiverConfig::idle_timeout`] while the receiver waits for it (units in flight or
//! lost, or a proof the verifier needs). Only the server's silence counts, not the
//! receiver's own: the silence counts from an instant that three things move later.
//!
//! 1. **A valid answer** (a Data or proof answering one of our requests, a resolve
//!    response, a Retry with a new token) moves it to its arrival. A `Busy`, a failing Nack
//!    waiting to be confirmed, a duplicate or anything with the wrong tag does not
//!    ([`refusals`]): a stream of forged ones cannot keep a dead fetch alive.
//! 2. **A request that leaves when every earlier one was answered** (no unit in flight or
//!    lost, no proof asked) moves it to when that request left: while nothing was asked
//!    of the server (an application not reading, so the receive window is full; a long
//!    pacing wait with nothing out) the server had nothing to answer. A unit leaves the
//!    in-flight and lost sets only by arriving (a Data with its request's tag); a `Busy` or
//!    failing Nack puts the units it refuses in the lost set. So no forged answer makes our
//!    requests "all answered", and a dead server, once asked, never is.
//! 3. **Time the receiver was not run** (a process stopped, or descheduled on an overloaded
//!    machine: docs/BENCHMARKS.md, 1000 fetches on 2 cores) is not counted. A call passing
//!    the time (`handle_datagram`, `handle_timeout`, `poll_transmit`) that comes more than
//!    [`OVERDUE`] after the receiver's own earliest deadline moves the instant later by
//!    the time since that deadline. Its own deadline is, with units in flight or a proof
//!    asked, its retransmission timer or the proof's re-ask; with nothing outstanding, the
//!    release of its next request (pacing, the Busy hold, the controller's admission). A
//!    deadline already past at the call before counts from that call. A receiver stopped
//!    in a Busy hold with lost units and nothing out for longer than the idle timeout
//!    failed the moment it ran again, before it asked anything; now it asks, and fails if
//!    the server stays silent for the rest of the idle timeout. (The runtime also reads
//!    what came during such a pause before it handles the deadlines:
//!    `crates/rdtp/tests/descheduled.rs`.)
//!
//! Why the idle timeout's guarantees still hold:
//!
//! - **A dead server is found** as before. A driver that keeps the call contract (calls at
//!   [`Receiver::poll_timeout`], within [`OVERDUE`]) is never excused any time by rule 3;
//!   and from the first request the dead server leaves unanswered the receiver always has
//!   a request unanswered (in flight, then lost, then asked again), so rule 2 never fires
//!   either: the fetch fails one idle timeout after the last answer. A driver later than
//!   [`OVERDUE`] is excused exactly its lateness: the fetch fails after an idle timeout of
//!   the receiver's own running.
//! - **Forged datagrams cannot delay the end.** What rule 3 excuses depends only on when
//!   the driver calls and on the receiver's own deadlines; a datagram, forged or not, only
//!   adds a call at its arrival, which makes the next call's lateness smaller, never
//!   larger, and a datagram that moves a deadline earlier makes the driver call earlier.
//!   Rule 2 needs every unit to have arrived (above). `Busy` still never counts as hearing.
//!
//! The send deadline is not used while units are in flight: [`Receiver::read`] has no
//! `now`, and may just have made new units sendable that were not before. In simulation
//! (`rdtp-harness`, ns-3) the driver calls at every deadline, so rule 3 never applies, and
//! rule 2 only moves the instant from an answer to the next request, which changes nothing
//! but the moment a fetch that ends by the idle timeout gives up.

mod config;
pub mod pacer;
mod reassembly;
pub mod refusals;
pub mod sources;
mod stats;

/// The type of [`ReceiverConfig::rto`], named where receivers are configured.
pub use crate::recovery::RtoConfig;
pub use config::ReceiverConfig;
pub use sources::{SourceStats, Sources};
pub use stats::Stats;

use std::collections::VecDeque;

use core::time::Duration;
use std::net::SocketAddr;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg32;

use crate::cc::{
    AckSample, Annotated, Built, CaState, CcParams, CongestionEvent, Controller, LossKind, OwnLoss, RequestInfo,
};
use crate::eid::Eid;
use crate::node::{NodeId, ServedBy, Transmit};
use crate::recovery::loss_window::LossWindow;
use crate::recovery::window::PREV_TAGS;
use crate::recovery::{
    LossCtx, LossDetector, LossView, RateSampler, RttEstimator, StandardLoss, UnitRecord, UnitState, Window,
};
use crate::time::Time;
use crate::wire::annotation::{Annotation, MAX_ANNOTATIONS, MAX_ANTICIPATED_UNITS};
use crate::wire::tlv::unit_ranges;
use crate::wire::{
    ByteRange, DATA_HEADER_LEN, DEFAULT_HOP_LIMIT, Data, DataFlags, Nack, NackCode, OptionsWriter, Packet, Proof,
    ProofRequest, Query, Request, RequestFlags, ResolveRequest, ResolveResponse, Retry,
};
use pacer::Pacer;
use reassembly::Reassembly;
use refusals::{BusyBackoff, Suspicion};

/// Buffer size `poll_transmit` needs.
pub const MAX_DATAGRAM: usize = 1232;

/// A call this much later than the receiver's own deadline means the receiver was not run
/// (descheduled, stopped): the time since that deadline is not the server's silence (see
/// "The idle timeout" in the module docs). Far above a timer's slack and a loaded machine's
/// scheduling delays (which are not excused), well below the RTO floor (200 ms).
pub const OVERDUE: Duration = Duration::from_millis(100);

/// What to fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A name in the server's catalogue; resolved first.
    Name(String),
    /// An EID; its size is asked for first.
    Eid(Eid),
    /// EID and size known: no resolution round trip.
    Known { eid: Eid, size: u64 },
}

/// Why a fetch failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The server does not have the name or EID.
    #[error("content not found: {0}")]
    NotFound(String),
    /// The server was silent for the idle limit while the receiver waited for it (as the
    /// module docs count it: "The idle timeout").
    #[error("no answer from the server for {0:?}")]
    Timeout(Duration),
    /// The delivered bytes do not hash to the EID.
    #[error("data validation failed: content hashes to {actual}, expected {expected}")]
    Integrity { expected: Eid, actual: Eid },
    /// A 16 KiB block kept failing verification ([`MAX_BAD_BLOCK_TRIES`] times, checked alone
    /// against a proof of its own), also when fetched again from the origin (bypassing
    /// caches): the server's content does not hash to the EID.
    #[error(
        "data validation failed: block {block} (16 KiB at byte {offset}) never matched the EID, from the origin either"
    )]
    BadBlock { block: u64, offset: u64 },
    /// The server or a router refused a request for another reason (during the transfer:
    /// [`refusals::CONFIRMATIONS`] times in a row, the later requests asked of the origin).
    #[error("{who} refused the request ({code:?}): {detail}")]
    Refused {
        code: NackCode,
        /// The node that refused.
        by: NodeId,
        /// Who it is and how far, for people ([`refusals::describe_node`]): `the origin (1
        /// hop away)`, `router r1 (1 hop away)`.
        who: String,
        detail: String,
    },
    /// The first hop kept answering with Retry: it never accepted the address tokens it
    /// gave us (our source address changes between datagrams, or several servers with
    /// different secrets share its address).
    #[error("the first hop never accepted our address token (does our source address change between datagrams?)")]
    AddressNotValidated,
    /// The name cannot be asked for ([`crate::wire::check_name`]: 1 to 1024 bytes of
    /// UTF-8): the fetch fails at once, before anything is sent (issue 23).
    #[error("name {name:?} cannot be fetched: {why} (a name is 1 to 1024 bytes of UTF-8)")]
    BadName { name: String, why: &'static str },
}

/// One RTT sample (ndnget's `--log-rtt` line).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttSampleEvent {
    pub time: Time,
    /// Unit index the sample came from.
    pub unit: u64,
    pub rtt: Duration,
    pub srtt: Duration,
    pub rttvar: Duration,
    pub rto: Duration,
}

/// The controller's knobs after a change (ndnget's `--log-cwnd`, and more).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcSnapshot {
    pub time: Time,
    /// Window in units.
    pub cwnd: u64,
    /// Bytes/s; `None` if unpaced.
    pub pacing_rate: Option<f64>,
    /// Units per request.
    pub aggregation: u32,
    pub inflight: u64,
    pub state: &'static str,
}

/// Something the owner of a receiver should know.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The object's EID and size are known; requesting starts.
    Resolved { eid: Eid, size: u64, name: String },
    /// A request left (only with `trace`): the units it asks for, and whether they are
    /// asked for again (ndnget's "Requesting/Retransmitting segment #N").
    Requested { time: Time, units: Vec<u64>, retransmission: bool },
    /// A unit arrived for the first time (only with `trace`): who served it, and the RTT
    /// sample it gave, if any (after the [`Event::RttSample`] carrying the details).
    Received { time: Time, unit: u64, source: ServedBy, rtt: Option<Duration> },
    /// An RTT sample (only with `trace`).
    RttSample(RttSampleEvent),
    /// The window, pacing rate or state changed (only with `trace`).
    Congestion(CcSnapshot),
    /// Every byte arrived (and matched the EID if verifying).
    Finished,
    /// The fetch failed.
    Failed(FetchError),
}

/// Resolve requests remembered, so an answer to any of them is accepted (and nothing else).
const RESOLVE_TAGS: usize = 8;
/// Retries refusing our token, with no content in between, before the receiver gives up.
pub const MAX_RETRIES_IN_A_ROW: u32 = 4;

#[derive(Debug)]
enum Phase {
    Resolving { tags: [u32; RESOLVE_TAGS], next_try: Time, interval: Duration },
    Transferring,
    Finished,
    Failed(FetchError),
}

/// Times a 16 KiB block may fail verification with the same bytes (its source serves
/// them) before the fetch fails; the tries after the first come from the origin, bypassing
/// caches. Failures with other bytes each time (corruption on the way, which
/// `reassembly` repairs from the copies when it can) end the fetch after
/// [`MAX_BLOCK_FETCHES`].
pub const MAX_BAD_BLOCK_TRIES: u32 = 3;
/// Times a 16 KiB block may fail verification in all before the fetch fails.
pub const MAX_BLOCK_FETCHES: u32 = 8;

/// A proof request in flight (verified streaming, `crate::tree`).
#[derive(Clone, Copy, Debug)]
struct ProofAsk {
    tag: u32,
    /// The tag of the request before (its answer is still accepted, as a unit's).
    prev_tag: u32,
    sent_at: Time,
    /// Proofs asked for later that arrived before this one (3 → presumed lost, as a unit
    /// passed by three later ones is, seed 000 §3.4).
    passed: u8,
    /// Requests for this proof so far after the first: a re-ask for want of an answer within
    /// an RTO waits twice as long per try (proofs come from the origin, which may be farther
    /// than the sources the data RTO follows, as with CCTCP's per-source RTOs).
    tries: u32,
    /// Units requested after this proof that arrived before it (it left first and travels
    /// the same path: 3 → presumed lost). Groups make proofs rare (one per 512 KiB), so
    /// later proofs come too late to tell; this rule fires once per block, as a router
    /// that serves units from its store but forwards the proof can make it look lost.
    passed_by_data: u8,
    /// Whether `passed_by_data` already made this block's proof be asked again.
    early_used: bool,
    /// Siblings asked for (an answer must carry exactly these).
    depth: u8,
}

/// Later proofs that must arrive before an earlier unanswered one is asked for again.
const PROOF_REORDER: u8 = 3;

/// Requests remembered as sampled (one RTT sample per request): a request's later units
/// arrive within a few requests of its first, far fewer than this many.
const SAMPLED_REQS: usize = 1024;

/// How long a proof request waits for its answer before it is asked again: an RTO, doubled
/// per earlier try (at most 64 RTOs).
fn proof_wait(rto: Duration, a: &ProofAsk) -> Duration {
    rto * (1u32 << a.tries.min(6))
}

/// Per-transfer state that exists once the size is known.
#[derive(Debug)]
struct Transfer {
    eid: Eid,
    size: u64,
    units: u64,
    window: Window,
    reasm: Reassembly,
    /// Blocks whose proof is to be requested (again), in order.
    proofs_due: std::collections::BTreeSet<u64>,
    /// Proof requests sent and not answered, by block.
    proofs_asked: std::collections::BTreeMap<u64, ProofAsk>,
    /// Units and blocks to fetch from the origin, bypassing caches (a block failed).
    origin_units: std::collections::BTreeSet<u64>,
    origin_blocks: std::collections::BTreeSet<u64>,
    /// Each 16 KiB block not yet verified that failed: 1 + its failures with the bytes of
    /// an earlier failed copy, and all its failures.
    bad_counts: std::collections::BTreeMap<u64, (u32, u32)>,
}

/// The controller and the loss detector of a path: separate, or one object.
#[derive(Debug)]
enum Control {
    Split { cc: Box<dyn Controller>, loss: Box<dyn LossDetector> },
    Own(Box<dyn OwnLoss>),
}

impl Control {
    /// The controller and its loss detection as built, the default detector filled in.
    fn new(built: Built, reorder_threshold: u32) -> Self {
        match built {
            Built::Standard(cc) => Control::Split { cc, loss: Box::new(StandardLoss::new(reorder_threshold)) },
            Built::Detector(cc, loss) => Control::Split { cc, loss },
            Built::Own(cc) => Control::Own(cc),
        }
    }
    fn cc(&self) -> &dyn Controller {
        match self {
            Control::Split { cc, .. } => cc.as_ref(),
            Control::Own(cc) => cc.as_ref(),
        }
    }
    fn cc_mut(&mut self) -> &mut dyn Controller {
        match self {
            Control::Split { cc, .. } => cc.as_mut(),
            Control::Own(cc) => cc.as_mut(),
        }
    }
    fn loss(&self) -> &dyn LossDetector {
        match self {
            Control::Split { loss, .. } => loss.as_ref(),
            Control::Own(cc) => cc.as_ref(),
        }
    }
    fn loss_mut(&mut self) -> &mut dyn LossDetector {
        match self {
            Control::Split { loss, .. } => loss.as_mut(),
            Control::Own(cc) => cc.as_mut(),
        }
    }
}

/// The congestion state towards the network: what a controller and a loss detector need.
/// One per receiver today; a receiver keeping several (one per source, as seed 003's CCTCP
/// does) would hold one per expected source.
#[derive(Debug)]
pub struct Path {
    /// The controller and its loss detector (as its spec built them, [`Built`]).
    control: Control,
    rtt: RttEstimator,
    rate: RateSampler,
    pacer: Pacer,
    ca_state: CaState,
    /// The loss window after a timeout, for controllers that do not set their own.
    loss_window: LossWindow,
    /// Recovery ends when `req_una` reaches this unit.
    recovery_point: u64,
    /// `req_nxt` at the last window reduction (conservative window adaptation).
    last_reduction_point: Option<u64>,
    /// Requests that gave an RTT sample, by request id modulo [`SAMPLED_REQS`] (the id + 1;
    /// 0: none): one sample per request (see `on_data`).
    sampled_reqs: Vec<u64>,
    lost_total: u64,
}

impl Path {
    fn new(cfg: &ReceiverConfig) -> Self {
        let built = cfg.cc.build(CcParams { unit: cfg.unit, max_aggregation: cfg.max_aggregation, seed: cfg.seed });
        Path {
            control: Control::new(built, cfg.reorder_threshold),
            rtt: RttEstimator::new(cfg.rto),
            rate: RateSampler::default(),
            pacer: Pacer::new(cfg.pacing_credit),
            ca_state: CaState::Open,
            loss_window: LossWindow::default(),
            recovery_point: 0,
            last_reduction_point: None,
            sampled_reqs: vec![0; SAMPLED_REQS],
            lost_total: 0,
        }
    }

    /// The controller.
    pub fn controller(&self) -> &dyn Controller {
        self.control.cc()
    }
    fn cc(&self) -> &dyn Controller {
        self.control.cc()
    }
    fn cc_mut(&mut self) -> &mut dyn Controller {
        self.control.cc_mut()
    }
    /// The loss detector.
    pub fn loss_detector(&self) -> &dyn LossDetector {
        self.control.loss()
    }
    /// What the loss detector may read when asked: the estimator and the controller's
    /// threshold as they are now.
    fn loss_view(&self) -> LossView<'_> {
        LossView { rtt: &self.rtt, threshold: self.cc().loss_threshold() }
    }
    /// When the loss detector must next run ([`LossDetector::deadline`]).
    pub fn loss_deadline(&self) -> Option<Time> {
        self.control.loss().deadline(&self.loss_view())
    }
    /// The loss detector's retransmission timeout, if it has one ([`LossDetector::rto`]).
    pub fn rto(&self) -> Option<Duration> {
        self.control.loss().rto(&self.loss_view())
    }
    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Whether a request may leave at `now` as far as pacing goes.
    fn release_ready(&self, now: Time) -> bool {
        self.pacer.ready(now) && self.cc().release_time().is_none_or(|t| now >= t)
    }

    /// The earliest instant pacing lets the next request leave.
    fn next_release(&self) -> Time {
        let p = self.pacer.next_send();
        self.cc().release_time().map_or(p, |t| t.max(p))
    }
}

/// A receiver fetching one object. See the module docs for the call contract.
#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    /// The first hop: where every request goes, and the only address answers come from.
    peer: SocketAddr,
    target: Target,
    name: String,
    phase: Phase,
    transfer: Option<Transfer>,
    path: Path,
    sources: Sources,
    /// Draws request tags and nonces: unpredictable to anyone off the path, so a forged
    /// answer must guess a 32-bit tag.
    rng: Pcg32,
    /// The address token of the first hop, sent in every request once known.
    token: Option<Vec<u8>>,
    /// A blank Nack `UnsupportedVersion` arrived (reported if the fetch times out).
    version_mismatch: bool,
    /// Retries since the last answer with content (a Data or resolve response).
    retries_in_a_row: u32,
    /// Back-off after `Busy` answers ([`refusals`]).
    busy: BusyBackoff,
    /// A terminal Nack waiting to be confirmed ([`refusals`]).
    suspicion: Option<Suspicion>,
    next_req_id: u64,
    next_seq: u64,
    /// Since when the server's silence counts (see "The idle timeout" in the module docs):
    /// the last valid answer, or later.
    silence_from: Time,
    /// The `now` of the latest call that passed the time (to tell how late the next one is).
    last_call: Time,
    events: VecDeque<Event>,
    last_snapshot: Option<CcSnapshot>,
    stats: Stats,
    scratch: Vec<u64>,
    lost_scratch: Vec<u64>,
}

crate::node::impl_node!(Receiver, MAX_DATAGRAM);

impl Receiver {
    /// A receiver for `target` fetched through `peer` (the server, or the router it fetches
    /// through), created at `now`.
    pub fn new(cfg: ReceiverConfig, peer: SocketAddr, target: Target, now: Time) -> Self {
        let mut rx = Receiver {
            peer,
            path: Path::new(&cfg),
            sources: Sources::default(),
            // A stream of its own, so nonces do not repeat the controller's draws.
            rng: Pcg32::seed_from_u64(cfg.seed ^ 0x6e6f_6e63_6573_0001),
            name: String::new(),
            phase: Phase::Resolving { tags: [0; RESOLVE_TAGS], next_try: now, interval: cfg.rto.initial },
            transfer: None,
            token: cfg.address_token.clone(),
            version_mismatch: false,
            retries_in_a_row: 0,
            busy: BusyBackoff::default(),
            suspicion: None,
            next_req_id: 0,
            next_seq: 0,
            silence_from: now,
            last_call: now,
            events: VecDeque::new(),
            last_snapshot: None,
            stats: Stats { started: now, ..Stats::default() },
            scratch: Vec::new(),
            lost_scratch: Vec::new(),
            target: target.clone(),
            cfg,
        };
        match target {
            Target::Known { eid, size } => rx.start_transfer(now, eid, size, String::new()),
            Target::Name(n) => {
                if let Err(why) = crate::wire::check_name(&n) {
                    // Shown whole would flood a terminal: the first 64 characters.
                    let shown: String = n.chars().take(64).collect();
                    let name = if shown.len() < n.len() { format!("{shown}…") } else { shown };
                    rx.fail(FetchError::BadName { name, why });
                }
                rx.name = n;
            }
            Target::Eid(_) => {}
        }
        rx
    }

    // ----- accessors -------------------------------------------------------------------

    pub fn config(&self) -> &ReceiverConfig {
        &self.cfg
    }
    /// The first hop every request goes to.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }
    /// The object's EID, once known.
    pub fn eid(&self) -> Option<Eid> {
        self.transfer.as_ref().map(|t| t.eid)
    }
    /// The object's size, once known.
    pub fn size(&self) -> Option<u64> {
        self.transfer.as_ref().map(|t| t.size)
    }
    /// The object's name, if it has one.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Payload bytes of the units that arrived so far, verified or not (`Stats::bytes_received`
    /// without building the whole [`Stats`]): what the path delivered, before reordering and
    /// verification hold it back.
    pub fn bytes_received(&self) -> u64 {
        self.stats.bytes_received
    }
    /// Bytes delivered in order so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.transfer.as_ref().map_or(0, |t| t.reasm.delivered())
    }
    /// Bytes ready to [`Receiver::read`].
    pub fn readable(&self) -> usize {
        self.transfer.as_ref().map_or(0, |t| t.reasm.readable())
    }
    /// All bytes arrived (and matched the EID).
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Finished)
    }
    /// Why the fetch failed, if it did.
    pub fn error(&self) -> Option<&FetchError> {
        match &self.phase {
            Phase::Failed(e) => Some(e),
            _ => None,
        }
    }
    /// The path's congestion state.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// The controller.
    pub fn controller(&self) -> &dyn Controller {
        self.path.controller()
    }
    /// Informed start (seed 002): tell the controller, before the first request, that about
    /// `bytes_per_sec` of payload is attainable ([`Controller::informed_start`]). Returns
    /// whether it starts from that rate; false leaves its normal start (also once
    /// requesting has begun).
    pub fn informed_start(&mut self, now: Time, bytes_per_sec: f64) -> bool {
        self.path.cc_mut().informed_start(now, bytes_per_sec)
    }
    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.path.rtt
    }
    /// The address token the first hop issued us, once it did (keep it: a later fetch
    /// through the same first hop that starts with it pays no extra round trip).
    pub fn address_token(&self) -> Option<&[u8]> {
        self.token.as_deref()
    }
    /// What each source delivered so far.
    pub fn sources(&self) -> &Sources {
        &self.sources
    }
    /// Units outstanding.
    pub fn inflight(&self) -> u64 {
        self.transfer.as_ref().map_or(0, |t| t.window.inflight())
    }
    /// Statistics so far.
    pub fn stats(&self) -> Stats {
        let rtt = &self.path.rtt;
        Stats {
            rtt_samples: rtt.samples(),
            rtt_min: rtt.min(),
            rtt_avg: rtt.mean(),
            rtt_max: (rtt.samples() > 0).then(|| rtt.max()),
            rtt_sum: rtt.sum(),
            sources: self.sources.clone(),
            blocks_repaired: self.transfer.as_ref().map_or(0, |t| t.reasm.repaired()),
            ..self.stats.clone()
        }
    }

    /// The controller's current knobs.
    pub fn cc_snapshot(&self, now: Time) -> CcSnapshot {
        let cc = self.path.control.cc();
        CcSnapshot {
            time: now,
            cwnd: cc.cwnd(),
            pacing_rate: cc.pacing_rate(),
            aggregation: cc.aggregation(),
            inflight: self.inflight(),
            state: cc.state(),
        }
    }

    // ----- the sans-IO interface -------------------------------------------------------

    /// Next event, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Copy in-order bytes into `buf`; returns how many (0 if none are ready).
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        self.transfer.as_mut().map_or(0, |t| t.reasm.read(buf))
    }

    /// Move in-order bytes into `out` as whole buffers, without copying them (what
    /// [`Receiver::read`] gives, in the receiver's own ≤ 16 KiB block buffers): at least one
    /// buffer if any bytes are ready, more while the total stays within `max`. Returns the
    /// bytes moved (0 if none are ready). `out` is emptied first and its buffers kept for
    /// reuse, so passing the same `Vec` each time recycles them.
    pub fn read_buffers(&mut self, max: usize, out: &mut Vec<Vec<u8>>) -> usize {
        self.transfer.as_mut().map_or(0, |t| t.reasm.take(max, out))
    }

    /// When [`Receiver::handle_timeout`] must next be called, if at all.
    pub fn poll_timeout(&self) -> Option<Time> {
        match &self.phase {
            Phase::Finished | Phase::Failed(_) => None,
            Phase::Resolving { next_try, .. } => Some((*next_try).min(self.idle_deadline())),
            Phase::Transferring => {
                let mut t = self.path.loss_deadline();
                if self.waiting_for_server() {
                    t = Some(t.map_or(self.idle_deadline(), |x| x.min(self.idle_deadline())));
                }
                if let Some(p) = self.send_deadline() {
                    t = Some(t.map_or(p, |x| x.min(p)));
                }
                // A confirmed refusal ends the fetch when its last wait is over (its earlier
                // waits only hold requests back, which the release time above covers).
                if let Some(s) = self.suspicion.as_ref().filter(|s| s.count >= refusals::CONFIRMATIONS) {
                    t = Some(t.map_or(s.until, |x| x.min(s.until)));
                }
                if let Some(p) = self.proof_deadline() {
                    t = Some(t.map_or(p, |x| x.min(p)));
                }
                t
            }
        }
    }

    /// Handle the passing of time: idle limit, loss detection (seed 000 §3.3).
    pub fn handle_timeout(&mut self, now: Time) {
        self.on_call(now);
        if matches!(self.phase, Phase::Finished | Phase::Failed(_)) {
            return;
        }
        let waiting = matches!(self.phase, Phase::Resolving { .. }) || self.waiting_for_server();
        if waiting && now >= self.idle_deadline() {
            let e = if self.version_mismatch {
                FetchError::Refused {
                    code: NackCode::UnsupportedVersion,
                    by: NodeId::UNKNOWN,
                    who: "the first hop".into(),
                    detail: "the other end speaks another rdtp version (and nothing else answered)".into(),
                }
            } else if self.retries_in_a_row > MAX_RETRIES_IN_A_ROW {
                FetchError::AddressNotValidated
            } else {
                FetchError::Timeout(self.cfg.idle_timeout)
            };
            self.fail(e);
            return;
        }
        if self.suspicion.as_ref().is_some_and(|s| s.is_final(now)) {
            self.fail_refused();
            return;
        }
        if self.path.loss_deadline().is_some_and(|d| now >= d) {
            self.on_loss_timer(now);
        }
    }

    /// Write the next datagram to send into `buf` (≥ [`MAX_DATAGRAM`] bytes), if one is due;
    /// it goes to the peer.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut [u8]) -> Option<Transmit> {
        self.on_call(now);
        let len = self.next_datagram(now, buf)?;
        Some(Transmit { to: self.peer, len })
    }

    fn next_datagram(&mut self, now: Time, buf: &mut [u8]) -> Option<usize> {
        match self.phase {
            Phase::Resolving { mut tags, next_try, interval } if now >= next_try => {
                let tag = self.take_tag();
                let query = match &self.target {
                    Target::Name(n) => Query::Name(n),
                    Target::Eid(e) => Query::Eid(*e),
                    Target::Known { .. } => return None,
                };
                let mut opts = [0u8; 3 + crate::token::MAX_TOKEN_LEN];
                let options = OptionsWriter::new(&mut opts).address_token(self.token.as_deref()).finish();
                let n = ResolveRequest { hop_limit: DEFAULT_HOP_LIMIT, tag, query, options }.encode(buf).ok()?;
                tags.rotate_right(1);
                tags[0] = tag;
                self.phase =
                    Phase::Resolving { tags, next_try: now + interval, interval: (interval * 2).min(self.cfg.rto.max) };
                self.stats.requests_sent += 1;
                Some(n)
            }
            Phase::Transferring => {
                // Every request of ours was answered: the server's silence counts from this one.
                let fresh = !self.unanswered();
                let n = self.transmit_proof(now, buf).or_else(|| self.transmit_request(now, buf))?;
                if fresh {
                    self.silence_from = now;
                }
                Some(n)
            }
            _ => None,
        }
    }

    /// Take one datagram that came from `from`; only the peer's are read.
    pub fn handle_datagram(&mut self, now: Time, from: SocketAddr, datagram: &[u8]) {
        self.on_call(now);
        if from != self.peer {
            self.stats.invalid += 1;
            return;
        }
        match Packet::decode(datagram) {
            Ok(Packet::Data(d)) if matches!(self.phase, Phase::Transferring) => self.on_data(now, &d),
            Ok(Packet::Nack(n)) => self.on_nack(now, &n),
            Ok(Packet::ResolveResponse(r)) => self.on_resolved(now, &r),
            Ok(Packet::Retry(r)) => self.on_retry(now, &r),
            Ok(Packet::Proof(p)) if matches!(self.phase, Phase::Transferring) => self.on_proof(now, &p),
            Ok(Packet::Data(_)) => {} // late data after the end, or before resolution
            _ => self.stats.invalid += 1,
        }
        self.emit_snapshot(now);
    }

    // ----- internals -------------------------------------------------------------------

    fn take_tag(&mut self) -> u32 {
        loop {
            let t = self.rng.next_u32();
            if t != 0 {
                return t;
            }
        }
    }

    fn idle_deadline(&self) -> Time {
        self.silence_from + self.cfg.idle_timeout
    }

    /// The receiver is called at `now`: if it comes more than [`OVERDUE`] after the receiver's
    /// own deadline ([`Receiver::own_deadline`]), the receiver was not run, and the time since
    /// that deadline is not the server's silence (see "The idle timeout" in the module docs).
    fn on_call(&mut self, now: Time) {
        if now > self.last_call + OVERDUE
            && let Some(due) = self.own_deadline()
        {
            // A deadline already past at the latest call was due from then.
            let due = due.max(self.last_call);
            if now > due + OVERDUE {
                self.silence_from = (self.silence_from + (now - due)).min(now);
            }
        }
        self.last_call = self.last_call.max(now);
    }

    /// The earliest deadline of the receiver's own making, during the transfer: with units
    /// in flight or a proof asked, its retransmission timer or a proof's re-ask; with nothing
    /// outstanding, when its next request may leave (pacing, the Busy hold, the controller's
    /// admission). Not the send deadline while units are in flight: reading (which has no
    /// `now`) may have just made new units sendable.
    fn own_deadline(&self) -> Option<Time> {
        if !matches!(self.phase, Phase::Transferring) {
            return None; // resolving: the resolve request is outstanding
        }
        let t = self.transfer.as_ref()?;
        let timer = if t.window.inflight() > 0 || !t.proofs_asked.is_empty() {
            self.path.loss_deadline()
        } else {
            self.send_deadline()
        };
        [timer, self.proof_deadline()].into_iter().flatten().min()
    }

    /// When the next request may leave, if one may (lost units or new ones to ask for, room in
    /// the window, the controller admitting it): pacing, the Busy hold and admission allow it.
    fn send_deadline(&self) -> Option<Time> {
        if !self.has_sendable() || self.window_quota() == 0 {
            return None;
        }
        let admit = self.admit_time().unwrap_or(Time::ZERO);
        (admit < Time::MAX).then(|| self.path.next_release().max(admit).max(self.hold_until()))
    }

    /// A request of ours is unanswered: units in flight or lost (refused ones too), or a
    /// proof asked for.
    fn unanswered(&self) -> bool {
        self.transfer
            .as_ref()
            .is_some_and(|t| t.window.inflight() > 0 || t.window.has_lost() || !t.proofs_asked.is_empty())
    }

    /// Requests are outstanding or lost units wait: silence from the network means trouble.
    fn waiting_for_server(&self) -> bool {
        self.transfer
            .as_ref()
            .is_some_and(|t| t.window.inflight() > 0 || t.window.has_lost() || t.reasm.waiting_for_proof().is_some())
    }

    fn window_quota(&self) -> u64 {
        let p = &self.path;
        let room = if p.cc().cwnd_limits() {
            p.loss_window.limit(p.cc().cwnd()).saturating_sub(self.inflight())
        } else {
            u64::MAX
        };
        match self.cfg.max_inflight {
            Some(cap) => room.min(cap.saturating_sub(self.inflight())),
            None => room,
        }
    }

    /// Units that could be requested now, ignoring pacing and the congestion window.
    fn new_units_allowed(&self) -> u64 {
        let Some(t) = &self.transfer else { return 0 };
        let unit = u64::from(self.cfg.unit);
        // Bytes requested and not yet verified, plus bytes verified and not yet read. A
        // block verifies only once all its bytes are here, so the window is at least two.
        let requested = (t.window.next() * unit).min(t.size);
        let outstanding = requested - t.reasm.delivered() + t.reasm.readable() as u64;
        let window = self.cfg.recv_window.max(2 * crate::tree::BLOCK_LEN);
        let room = window.saturating_sub(outstanding) / unit;
        room.min(t.units - t.window.next())
    }

    /// When the controller lets the unit that would be requested next go ([`Controller::admit`]).
    fn admit_time(&self) -> Option<Time> {
        let t = self.transfer.as_ref()?;
        let next = t.window.first_lost().or_else(|| (self.new_units_allowed() > 0).then(|| t.window.next()))?;
        self.path.cc().admit(next)
    }

    fn has_sendable(&self) -> bool {
        self.transfer.as_ref().is_some_and(|t| t.window.has_lost()) || self.new_units_allowed() > 0
    }

    fn start_transfer(&mut self, now: Time, eid: Eid, size: u64, name: String) {
        let units = size.div_ceil(u64::from(self.cfg.unit));
        self.transfer = Some(Transfer {
            eid,
            size,
            units,
            window: Window::default(),
            reasm: Reassembly::new(self.cfg.unit, eid, size, self.cfg.verify, self.cfg.recv_window),
            proofs_due: Default::default(),
            proofs_asked: Default::default(),
            origin_units: Default::default(),
            origin_blocks: Default::default(),
            bad_counts: Default::default(),
        });
        if !name.is_empty() {
            self.name = name.clone();
        }
        self.phase = Phase::Transferring;
        self.stats.transfer_started = Some(now);
        self.events.push_back(Event::Resolved { eid, size, name: self.name.clone() });
        if units == 0 {
            self.finish(now);
        }
    }

    /// Whether `tag` is one of the resolve requests this receiver sent.
    fn is_resolve_tag(&self, tag: u32) -> bool {
        matches!(&self.phase, Phase::Resolving { tags, .. } if tag != 0 && tags.contains(&tag))
    }

    /// Whether `tag` names a request this receiver has outstanding for the object `eid`
    /// (one of the latest requests of a unit still in flight, [`UnitRecord::answers`]).
    fn is_request_tag(&self, eid: &Eid, tag: u32) -> bool {
        let Some(t) = &self.transfer else { return false };
        tag != 0 && *eid == t.eid && t.window.iter().any(|(_, r)| r.state == UnitState::Requested && r.answers(tag))
    }

    fn on_resolved(&mut self, now: Time, r: &ResolveResponse<'_>) {
        let matches = match &self.target {
            Target::Name(n) => r.name == n.as_str(),
            Target::Eid(e) => r.eid == *e,
            Target::Known { .. } => false,
        };
        // Only an answer to one of our own resolve requests (random tags) counts.
        if !matches || !self.is_resolve_tag(r.tag) {
            self.stats.invalid += 1;
            return;
        }
        self.silence_from = now;
        self.retries_in_a_row = 0;
        self.start_transfer(now, r.eid, r.size, r.name.to_string());
    }

    /// The first hop has not validated our address: keep its token and send the refused
    /// request again at once (RFC 9000 §8.1). Not congestion, and not a loss.
    ///
    /// A node issues the same token to the same address for a whole key period, so a Retry
    /// with the token we hold answers a request sent before we had it; one with another
    /// token means ours was refused. After [`MAX_RETRIES_IN_A_ROW`] refusals without any
    /// content in between the receiver stops (the idle timeout reports
    /// [`FetchError::AddressNotValidated`]).
    fn on_retry(&mut self, now: Time, r: &Retry<'_>) {
        if self.retries_in_a_row >= MAX_RETRIES_IN_A_ROW {
            self.retries_in_a_row = MAX_RETRIES_IN_A_ROW + 1;
            self.stats.invalid += 1;
            return;
        }
        if matches!(self.phase, Phase::Resolving { .. }) {
            if !self.is_resolve_tag(r.tag) {
                self.stats.invalid += 1;
                return;
            }
            if let Phase::Resolving { next_try, interval, .. } = &mut self.phase {
                *next_try = now;
                *interval = self.cfg.rto.initial;
            }
        } else {
            let Some(t) = self.transfer.as_mut() else { return };
            let refused: Vec<u64> = t
                .window
                .iter()
                .filter(|(_, rec)| rec.state == UnitState::Requested && rec.tag == r.tag && r.tag != 0)
                .map(|(u, _)| u)
                .collect();
            if refused.is_empty() {
                self.stats.invalid += 1;
                return;
            }
            for u in refused {
                t.window.refuse(u);
            }
            if t.window.inflight() == 0 {
                self.path.control.loss_mut().reset(); // nothing outstanding: no timer
            }
        }
        self.stats.retries += 1;
        match self.token.as_deref() {
            // Stale: not news of the server being alive either (a replay looks the same).
            Some(t) if t == r.token => return,
            Some(_) => self.retries_in_a_row += 1,
            None => {}
        }
        self.token = Some(r.token.to_vec());
        self.silence_from = now;
    }

    fn on_nack(&mut self, now: Time, n: &Nack<'_>) {
        let ours = match &self.phase {
            Phase::Resolving { .. } => self.is_resolve_tag(n.tag),
            Phase::Transferring => self.is_request_tag(&n.eid, n.tag),
            _ => false,
        };
        if !ours {
            // A blank Nack (tag 0) answers a request its sender could not read: anyone can
            // forge one, so it cannot end the fetch; an `UnsupportedVersion` is remembered
            // to explain a timeout.
            if n.tag == 0 && n.code == NackCode::UnsupportedVersion {
                self.version_mismatch = true;
            }
            self.stats.invalid += 1;
            return;
        }
        self.stats.nacks += 1;
        match n.code {
            // Busy does not count as hearing from the server: a forged stream of Busy must
            // not keep a dead fetch alive.
            NackCode::Busy => self.on_busy(now, n),
            // During the transfer a refusal is a hint until confirmed (`refusals`).
            _ if matches!(self.phase, Phase::Transferring) => self.on_refusal(now, n),
            // A resolve is refused at once (a mistyped name must fail promptly).
            NackCode::UnknownContent => {
                let who = self.describe(n.from, n.hops);
                self.fail(FetchError::NotFound(format!("{}, says {who}", self.target_text())));
            }
            code => {
                self.silence_from = now;
                let who = self.describe(n.from, n.hops);
                self.fail(FetchError::Refused { code, by: n.from, who, detail: n.detail.to_string() })
            }
        }
    }

    /// The name or EID fetched, for messages.
    fn target_text(&self) -> String {
        match &self.target {
            Target::Name(n) => n.clone(),
            Target::Eid(e) | Target::Known { eid: e, .. } => e.to_hex(),
        }
    }

    /// Who `from` is, `hops` routers away ([`refusals::describe_node`]): the origin or a router
    /// if it served us Data (uncached or from its store).
    fn describe(&self, from: NodeId, hops: u8) -> String {
        let served = |cached: bool| self.sources.iter().any(|s| s.node == from && s.cached == cached);
        refusals::describe_node(from, hops, served(false), served(true))
    }

    /// The units of ours `n` refused: those whose latest request carries its tag, with when
    /// that request left (`None` if it answers an older request of units asked for again
    /// since, which are still in flight).
    fn refused_units(&self, n: &Nack<'_>) -> (Vec<u64>, Option<Time>) {
        let Some(t) = self.transfer.as_ref() else { return (Vec::new(), None) };
        let unit = u64::from(self.cfg.unit);
        let first = n.offset / unit;
        let end = first.saturating_add(u64::from(n.length).div_ceil(unit)).min(t.window.next());
        let mut sent_at = None;
        let units = (first..end)
            .filter(|&u| {
                t.window.get(u).is_some_and(|r| {
                    let hit = r.state == UnitState::Requested && r.tag == n.tag;
                    if hit {
                        sent_at = Some(r.sent_at);
                    }
                    hit
                })
            })
            .collect();
        (units, sent_at)
    }

    /// Put refused units back to be asked for again: answered, so neither lost nor (when
    /// asked again) re-requested.
    fn refuse(&mut self, units: &[u64]) {
        let Some(t) = self.transfer.as_mut() else { return };
        for &u in units {
            t.window.refuse(u);
        }
        if t.window.inflight() == 0 {
            self.path.control.loss_mut().reset(); // nothing outstanding: no timer
        }
    }

    /// The server or a router is overloaded (its send budget, its table): the refused units
    /// are asked for again after a back-off ([`refusals`]), and that is congestion, once per
    /// round.
    fn on_busy(&mut self, now: Time, n: &Nack<'_>) {
        let (units, sent_at) = self.refused_units(n);
        let Some(sent_at) = sent_at else { return };
        self.stats.busy += 1;
        self.stats.units_refused += units.len() as u64;
        self.refuse(&units);
        // The refused request crossed no bottleneck: its pacing slot is given back (the hold
        // spaces requests now). Kept, a slot charged at a rate that collapsed for want of
        // samples (BBR-CD's ProbeRTT: 64 units at 4 units/s) held every request for 16 s.
        self.path.pacer.retime(None);
        let refused = (units.first().copied().unwrap_or(0), units.last().copied().unwrap_or(0));
        if self.busy.on_busy(now, sent_at, n.tag, refused) {
            self.congestion(now, LossKind::Fast);
        }
    }

    /// A terminal Nack during the transfer (`UnknownContent`, `Malformed`, `TooLarge`,
    /// `Internal`, `NoRoute`, …): suspected until confirmed ([`refusals`]). The refused units
    /// wait to be asked for again, from the origin, after an RTO.
    fn on_refusal(&mut self, now: Time, n: &Nack<'_>) {
        let (units, sent_at) = self.refused_units(n);
        // A Nack for an older request of units asked for again since: their latest request
        // is in flight, and the refusal counts as of when that left.
        let sent_at = sent_at.unwrap_or_else(|| {
            let t = self.transfer.as_ref();
            t.and_then(|t| t.window.iter().find(|(_, r)| r.answers(n.tag)).map(|(_, r)| r.sent_at)).unwrap_or(now)
        });
        self.refuse(&units);
        let wait = self.proof_rto();
        match self.suspicion.as_mut() {
            None => self.suspicion = Some(Suspicion::new(now, n, sent_at, wait)),
            Some(s) => {
                s.on_nack(now, n, sent_at, wait);
            }
        }
    }

    /// The refusal was confirmed ([`refusals::CONFIRMATIONS`] in a row, an RTO apart): fail,
    /// naming the node that refused.
    fn fail_refused(&mut self) {
        let Some(s) = self.suspicion.take() else { return };
        let who = self.describe(s.from, s.hops);
        let times = format!("{} requests in a row", s.count);
        let e = match s.code {
            // Known when the transfer began: it changed or went away since (a server's file
            // rewritten).
            NackCode::UnknownContent => FetchError::NotFound(format!(
                "{} (gone during the transfer: {who} refused {times}: {})",
                self.target_text(),
                s.detail
            )),
            code => FetchError::Refused { code, by: s.from, who, detail: format!("{} ({times})", s.detail) },
        };
        self.fail(e);
    }

    /// No request may leave before this (after `Busy`, or while a refusal is confirmed).
    fn hold_until(&self) -> Time {
        let busy = self.busy.until();
        self.suspicion.as_ref().map_or(busy, |s| s.until.max(busy))
    }

    fn fail(&mut self, e: FetchError) {
        self.phase = Phase::Failed(e.clone());
        self.path.control.loss_mut().reset();
        if let Some(t) = self.transfer.as_mut() {
            t.window.clear();
        }
        self.events.push_back(Event::Failed(e));
    }

    fn finish(&mut self, now: Time) {
        self.stats.finished = Some(now);
        self.path.control.loss_mut().reset();
        let Some(t) = self.transfer.as_mut() else { return };
        t.window.clear();
        self.phase = Phase::Finished;
        self.events.push_back(Event::Finished);
    }

    /// Enter a loss episode (fast: only from Open; timeout: always).
    fn congestion(&mut self, now: Time, kind: LossKind) {
        let Some(t) = self.transfer.as_ref() else { return };
        let p = &mut self.path;
        let next = t.window.next();
        let first_in_window = p.last_reduction_point.is_none_or(|r| t.window.high() > r);
        let inflight = t.window.inflight();
        match kind {
            LossKind::Fast if p.ca_state != CaState::Open => return,
            LossKind::Fast => {
                p.ca_state = CaState::Recovery;
                self.stats.fast_recoveries += 1;
            }
            LossKind::Timeout => p.ca_state = CaState::Loss,
        }
        p.recovery_point = next;
        if first_in_window {
            p.last_reduction_point = Some(next);
        }
        let before = p.cc().cwnd();
        p.cc_mut().on_congestion(&CongestionEvent { now, kind, inflight, first_in_window });
        if kind == LossKind::Timeout && !p.cc().controls_recovery() {
            p.loss_window.on_timeout(inflight);
        }
        if p.cc().retime_pacing() {
            p.pacer.retime(p.cc().pacing_rate());
        }
        if kind == LossKind::Timeout && p.cc().cwnd() < before {
            self.stats.timeout_window_decreases += 1;
        }
    }

    /// The loss detector's timer fired (seed 000 §3.3 by default).
    fn on_loss_timer(&mut self, now: Time) {
        let Some(t) = self.transfer.as_mut() else { return };
        self.lost_scratch.clear();
        let p = &mut self.path;
        let threshold = p.cc().loss_threshold();
        let mut ctx = LossCtx { now, window: &mut t.window, rtt: &mut p.rtt, lost: &mut self.lost_scratch, threshold };
        let Some(kind) = p.control.loss_mut().on_timeout(&mut ctx) else { return };
        if kind == LossKind::Timeout {
            self.stats.timeouts += 1;
        }
        let n = self.lost_scratch.len() as u64;
        p.lost_total += n;
        self.stats.units_lost += n;
        self.congestion(now, kind);
    }

    /// Whether `d` answers one of our outstanding requests (the object's EID and size, a
    /// whole unit, inside the window, a tag we sent for it): if so the unit is marked
    /// received and its arrival returned with its index and the units in flight before it;
    /// otherwise it is counted as invalid or a duplicate.
    fn accept(&mut self, now: Time, d: &Data<'_>) -> Option<(u64, crate::recovery::window::Arrival, u64)> {
        let unit = u64::from(self.cfg.unit);
        let t = self.transfer.as_mut()?;
        let u = d.offset / unit;
        let valid = d.eid == t.eid
            && d.total_size == t.size
            && d.offset.is_multiple_of(unit)
            && u < t.units
            && d.payload.len() as u64 == t.reasm.unit_len(u);
        if !valid {
            self.stats.invalid += 1;
            return None;
        }
        if u < t.window.una() || u >= t.window.next() {
            // Not proof the server lives: anyone can replay (or forge) a unit already had.
            self.stats.duplicates += 1;
            return None;
        }
        // Only an answer to one of our requests for this unit (its latest or one of the
        // seven before): a forger off the path must guess a random 32-bit tag.
        if t.window.get(u).is_some_and(|r| !r.answers(d.tag)) {
            self.stats.invalid += 1;
            return None;
        }
        self.silence_from = now;
        self.retries_in_a_row = 0;
        let prior_inflight = t.window.inflight();
        let Some(arrival) = t.window.mark_received(u) else {
            self.stats.duplicates += 1;
            return None;
        };
        Some((u, arrival, prior_inflight))
    }

    fn on_data(&mut self, now: Time, d: &Data<'_>) {
        let unit = u64::from(self.cfg.unit);
        let Some((u, arrival, prior_inflight)) = self.accept(now, d) else { return };
        // (Reads and writes only the RTT state and the trace, which nothing below before
        // its use touches.)
        let rtt_sample = self.sample_rtt(now, u, d, &arrival.before);
        let t = self.transfer.as_mut().expect("accepted: a transfer exists");
        let rec = arrival.before;
        // A Data answering a request refused by Busy proves that Busy forged; one answering a
        // request sent after a back-off ends it (`refusals`). Likewise a refusal waiting to be
        // confirmed is contradicted by a Data answering a request sent since (or the refused one).
        let latest = d.tag == rec.tag;
        self.busy.on_served(now, if latest { rec.sent_at } else { Time::ZERO }, d.tag, u);
        if self
            .suspicion
            .as_ref()
            .is_some_and(|s| s.contradicted_by(if latest { rec.sent_at } else { Time::ZERO }, d.tag))
        {
            self.suspicion = None;
        }
        for (&b, a) in t.proofs_asked.iter_mut() {
            if rec.sent_at > a.sent_at && !a.early_used {
                a.passed_by_data = a.passed_by_data.saturating_add(1);
                if a.passed_by_data == PROOF_REORDER {
                    a.early_used = true;
                    t.proofs_due.insert(b);
                }
            }
        }
        if rec.state == UnitState::Lost {
            // Declared lost, and here before it was asked for again: the loss was not one.
            self.stats.late_arrivals += 1;
        }
        let in_order = u == t.reasm.una();
        let source = ServedBy { node: d.served_by, hops: d.hops, cached: d.flags.contains(DataFlags::CACHED) };
        self.stats.units_received += 1;
        self.stats.bytes_received += d.payload.len() as u64;
        let p = &mut self.path;
        self.sources.on_unit(source, d.payload.len() as u64, rtt_sample);
        if self.cfg.trace {
            self.events.push_back(Event::Received { time: now, unit: u, source, rtt: rtt_sample });
        }
        // Delivery rate (eq. 4).
        let rate = p.rate.on_delivered(now, rec.sent_at, &rec.snap, p.rtt.min());

        // Loss detection: fast re-request (§3.4) and the timer restart (§3.3) by default.
        self.lost_scratch.clear();
        let threshold = p.cc().loss_threshold();
        let mut ctx = LossCtx { now, window: &mut t.window, rtt: &mut p.rtt, lost: &mut self.lost_scratch, threshold };
        p.control.loss_mut().on_arrival(&mut ctx, &arrival, in_order);
        // Seed 003 §II-A: what the caches on the way said about the units the request
        // anticipated — only if this Data carries that very request's annotations.
        if p.cc().anticipation() > 0 && d.tag == rec.tag && d.options.request_nonce() == Some(rec.nonce) {
            report_annotations(p.cc_mut(), now, u, rec.sent_at, source, d, unit);
        }
        let losses = self.lost_scratch.len() as u64;
        if losses > 0 {
            p.lost_total += losses;
            self.stats.units_lost += losses;
            self.congestion(now, LossKind::Fast);
        }

        let t = self.transfer.as_mut().expect("transfer exists");
        let p = &mut self.path;
        let (in_order, verdict) = t.reasm.insert(u, d.payload);
        if in_order {
            // In-order arrival: slide the window over what verified.
            t.window.advance_to(t.reasm.verified_una());
            if p.ca_state != CaState::Open && t.reasm.una() >= p.recovery_point {
                p.ca_state = CaState::Open;
            }
        }
        let inflight = t.window.inflight();
        let complete = t.reasm.is_complete();

        p.control.cc_mut().on_ack(&AckSample {
            now,
            unit: u,
            source,
            cookie: rec.cookie,
            delivered: p.rate.delivered(),
            acked: 1,
            rate,
            rtt: rtt_sample,
            srtt: p.rtt.srtt(),
            losses,
            lost_total: p.lost_total,
            prior_inflight,
            inflight,
            ca_state: p.ca_state,
        });
        p.loss_window.on_arrival(p.cc().cwnd());
        if p.cc().retime_pacing() {
            p.pacer.retime(p.cc().pacing_rate());
        }
        if p.cc().wants_app_limited() {
            p.rate.mark_app_limited(inflight);
        }
        self.on_verdict(verdict);
        if complete {
            self.finish(now);
        }
    }

    /// The RTT sample this arrival gives, if any (and the RTO's back-off cleared when it
    /// answers the latest re-request).
    fn sample_rtt(&mut self, now: Time, u: u64, d: &Data<'_>, rec: &UnitRecord) -> Option<Duration> {
        // RTT (seed 000 eq. 5), one sample per request, from its first unit to arrive:
        // later units of an aggregated request also carry the time the burst took to
        // cross the bottleneck (seed 000's code sampled every unit and was biased by it).
        // Karn's rule: never from a unit requested more than once. A request answered after
        // a later one still gives its sample: with units served by several caches, the far
        // sources' Data are always overtaken by the near ones' (seed 003), and sampling only
        // requests newer than the last sampled one left the far sources without samples.
        // Nor from a Data marked `COALESCED`: a router sent it for a request forwarded well
        // before this one joined it, so the time is shorter than this request's round trip
        // (BBR's min RTT would take it and size its window for a path a fraction as long,
        // then crawl once nobody else's request is ahead: issue 23 item 11).
        let p = &mut self.path;
        let mut rtt_sample = None;
        let slot = (rec.req_id % SAMPLED_REQS as u64) as usize;
        let coalesced = d.flags.contains(DataFlags::COALESCED);
        if rec.tx == 1 && d.tag == rec.tag && !coalesced && p.sampled_reqs[slot] != rec.req_id + 1 {
            let r = now - rec.sent_at;
            p.rtt.on_sample(r);
            p.sampled_reqs[slot] = rec.req_id + 1;
            rtt_sample = Some(r);
            if self.cfg.trace {
                self.events.push_back(Event::RttSample(RttSampleEvent {
                    time: now,
                    unit: u,
                    rtt: r,
                    srtt: p.rtt.srtt().unwrap_or(r),
                    rttvar: p.rtt.rttvar(),
                    rto: p.rto().unwrap_or_default(),
                }));
            }
        }
        if rec.tx > 1 && d.tag == rec.tag {
            // Answers the latest re-request, unambiguously (tag echo): the path works
            // again, so the backed-off RTO can go. Karn's rule still keeps this
            // measurement out of SRTT/RTTVAR.
            p.rtt.clear_backoff();
        }
        rtt_sample
    }

    // ----- verified streaming (issue 11, `crate::tree`) --------------------------------

    /// A proof answering one of our proof requests.
    fn on_proof(&mut self, now: Time, p: &Proof<'_>) {
        let Some(t) = self.transfer.as_mut() else { return };
        let asked = t.proofs_asked.get(&p.block).is_some_and(|a| {
            (a.tag == p.tag || a.prev_tag == p.tag) && p.tag != 0 && p.cvs().count() == usize::from(a.depth)
        });
        if !asked || p.eid != t.eid {
            self.stats.invalid += 1;
            return;
        }
        let answered = t.proofs_asked.remove(&p.block).map(|a| a.sent_at);
        // Proofs asked before this one and still missing were probably lost (they travel
        // the data's path, in order): after PROOF_REORDER later ones, ask again at once
        // rather than one RTO per block when the verifier reaches them.
        if let Some(at) = answered {
            for (&b, a) in t.proofs_asked.iter_mut() {
                if a.sent_at < at {
                    a.passed = a.passed.saturating_add(1);
                    if a.passed == PROOF_REORDER {
                        t.proofs_due.insert(b);
                    }
                }
            }
        }
        self.silence_from = now;
        self.stats.proofs_received += 1;
        let verdict = t.reasm.add_proof(p.block, p.cvs().collect());
        t.window.advance_to(t.reasm.verified_una());
        let complete = t.reasm.is_complete();
        self.on_verdict(verdict);
        if complete && matches!(self.phase, Phase::Transferring) {
            self.finish(now);
        }
    }

    /// What verification found (issue 23 item 7). A group of blocks that failed as a whole
    /// is narrowed: each of its blocks' proofs is asked of the origin, to check each alone.
    /// A 16 KiB block that failed (its bytes or its proof are wrong: a corrupt cache, a
    /// forger on the path, a server serving a changed file) is fetched again, bytes and
    /// proof, from the origin; the fetch fails once one block failed
    /// [`MAX_BAD_BLOCK_TRIES`] times.
    fn on_verdict(&mut self, v: reassembly::Verdict) {
        if v.is_empty() {
            return;
        }
        let Some(t) = self.transfer.as_mut() else { return };
        if !v.narrow.is_empty() {
            self.stats.bad_groups += 1;
        }
        for b in v.narrow {
            if t.reasm.wanted_proof_depth(b) > 0 {
                t.proofs_asked.remove(&b);
                t.proofs_due.insert(b);
                t.origin_blocks.insert(b);
            }
        }
        let verified = t.reasm.verified_una() * u64::from(self.cfg.unit) / crate::tree::BLOCK_LEN;
        t.bad_counts.retain(|&b, _| b >= verified);
        for (b, repeat) in v.bad {
            self.stats.bad_blocks += 1;
            // (failures with the bytes of an earlier failed copy + 1, all failures)
            let (same, all) = t.bad_counts.entry(b).or_insert((1, 0));
            *same += u32::from(repeat);
            *all += 1;
            if *same >= MAX_BAD_BLOCK_TRIES || *all >= MAX_BLOCK_FETCHES {
                let offset = b * crate::tree::BLOCK_LEN;
                self.fail(FetchError::BadBlock { block: b, offset });
                return;
            }
            for u in t.reasm.units_of_block(b) {
                if t.window.reopen(u) {
                    t.origin_units.insert(u);
                }
            }
            if t.reasm.wanted_proof_depth(b) > 0 {
                t.proofs_asked.remove(&b);
                t.proofs_due.insert(b);
                t.origin_blocks.insert(b);
            }
        }
    }

    /// When a proof should be asked for (again): at once for one due, or for the block the
    /// verifier waits on if it was never asked; an RTO after the oldest unanswered request.
    fn proof_deadline(&self) -> Option<Time> {
        let t = self.transfer.as_ref()?;
        if !t.proofs_due.is_empty() {
            return Some(Time::ZERO);
        }
        if let Some(b) = t.reasm.waiting_for_proof()
            && !t.proofs_asked.contains_key(&b)
        {
            return Some(Time::ZERO);
        }
        let rto = self.proof_rto();
        t.proofs_asked.values().map(|a| a.sent_at + proof_wait(rto, a)).min()
    }

    fn proof_rto(&self) -> Duration {
        self.path.rto().unwrap_or(self.cfg.rto.initial)
    }

    /// Send the next due proof request, if any (not paced or window-limited: it is small
    /// and answered by one small datagram).
    fn transmit_proof(&mut self, now: Time, buf: &mut [u8]) -> Option<usize> {
        if buf.len() < MAX_DATAGRAM {
            return None; // the call contract's buffer, as for requests
        }
        if self.proof_deadline().is_some_and(|d| now >= d) {
            let rto = self.proof_rto();
            let t = self.transfer.as_mut()?;
            if let Some(b) = t.reasm.waiting_for_proof()
                && !t.proofs_asked.contains_key(&b)
            {
                t.proofs_due.insert(b);
            }
            // Every request unanswered for an RTO (backed off per try) goes again (not only
            // the next block's).
            for (&b, a) in &t.proofs_asked {
                if a.sent_at + proof_wait(rto, a) <= now {
                    t.proofs_due.insert(b);
                }
            }
        }
        if self.transfer.as_ref()?.proofs_due.is_empty() {
            return None;
        }
        let tag = self.take_tag();
        let t = self.transfer.as_mut()?;
        // The next proof still wanted (a group may have verified since it was due).
        let (b, depth) = loop {
            let b = t.proofs_due.pop_first()?;
            match t.reasm.wanted_proof_depth(b) {
                0 => {
                    t.proofs_asked.remove(&b);
                }
                d => break (b, d),
            }
        };
        let mut opts = [0u8; 3 + crate::token::MAX_TOKEN_LEN];
        let options = OptionsWriter::new(&mut opts).address_token(self.token.as_deref()).finish();
        let q = ProofRequest {
            flags: RequestFlags(0).with(RequestFlags::ORIGIN, t.origin_blocks.remove(&b)),
            hop_limit: DEFAULT_HOP_LIMIT,
            tag,
            eid: t.eid,
            block: b,
            depth: depth as u8,
            options,
        };
        let n = q.encode(buf).ok()?;
        // A re-ask keeps the previous request's tag acceptable (as a unit's): its answer
        // may still be on the way.
        let (prev_tag, tries, early_used) =
            t.proofs_asked.get(&b).map_or((tag, 0, false), |a| (a.tag, a.tries.saturating_add(1), a.early_used));
        t.proofs_asked.insert(
            b,
            ProofAsk {
                tag,
                prev_tag,
                sent_at: now,
                passed: 0,
                tries,
                passed_by_data: 0,
                early_used,
                depth: depth as u8,
            },
        );
        self.stats.proof_requests += 1;
        Some(n)
    }

    fn transmit_request(&mut self, now: Time, buf: &mut [u8]) -> Option<usize> {
        if buf.len() < MAX_DATAGRAM {
            return None;
        }
        let n = self.request_size(now)?;
        let inflight_before = self.inflight();
        let was_app_limited = self.path.rate.is_app_limited();
        let mut units = std::mem::take(&mut self.scratch);
        units.clear();
        let Some(retransmission) = self.schedule_units(n, inflight_before, &mut units) else {
            self.scratch = units;
            return None;
        };
        let sent = self.encode_request(buf, &units, retransmission, was_app_limited);
        if let Some((_, used, tag, nonce)) = sent {
            self.record_sent(now, &units[..used], tag, nonce, retransmission, inflight_before, was_app_limited);
        }
        self.scratch = units;
        sent.map(|(len, ..)| len)
    }

    /// How many units the next request may carry, if one may leave now: pacing, the
    /// Busy hold, the window and the controller's admission allow it (checked before any
    /// unit is taken).
    fn request_size(&self, now: Time) -> Option<u64> {
        if !self.path.release_ready(now) || now < self.hold_until() {
            return None;
        }
        let quota = self.window_quota();
        if quota == 0 {
            return None;
        }
        // The controller may hold back the unit that would go next (CCTCP: until the window
        // and the pacing of the source expected to serve it allow, seed 003 eq. 4).
        if self.admit_time().is_some_and(|t| now < t) {
            return None;
        }
        let unit = u64::from(self.cfg.unit);
        // Never more units than a server answers one request with (its reply-byte cap).
        let per_request = (self.cfg.max_request_bytes / (unit + DATA_HEADER_LEN as u64)).max(1);
        // While backing off after Busy, requests are spaced (`refusals`): each carries as
        // many units as the window and the server allow, or the spacing would cap the rate
        // at one aggregation's worth per hold.
        let aggregation = u64::from(
            if self.busy.backing_off() { self.cfg.max_aggregation } else { self.path.cc().aggregation() }.max(1),
        );
        Some(aggregation.min(quota).min(per_request))
    }

    /// Up to `n` units for the next request into `units`: lost units first, as one request
    /// with discrete ranges (seed 000 §3.1); else the next new units (one contiguous range),
    /// whose blocks' proofs are then due. A controller that schedules re-requests after
    /// first-time requests (S1 §IV-D) gets the new units first, and lost units only when no
    /// new unit may be asked for. Returns whether they are re-requests, or `None` if there
    /// is nothing to ask for (the path is then application-limited).
    fn schedule_units(&mut self, n: u64, inflight_before: u64, units: &mut Vec<u64>) -> Option<bool> {
        let new_first = self.path.cc().new_units_first();
        let new_allowed = self.new_units_allowed();
        let unit = u64::from(self.cfg.unit);
        let t = self.transfer.as_mut()?;
        if !new_first || new_allowed == 0 {
            t.window.take_lost(n as usize, units);
        }
        if !units.is_empty() {
            return Some(true);
        }
        let count = n.min(new_allowed);
        if count == 0 {
            // Allowed to ask for more, but there is nothing to ask for.
            self.path.rate.mark_app_limited(inflight_before);
            return None;
        }
        let next = t.window.next();
        units.extend(next..next + count);
        // The proofs of blocks starting in these units go out first.
        let first_block = (next * unit).div_ceil(crate::tree::BLOCK_LEN);
        let end = ((next + count) * unit).min(t.size);
        let mut b = first_block;
        while b * crate::tree::BLOCK_LEN < end {
            if t.reasm.proof_depth(b) > 0 {
                t.proofs_due.insert(b);
            }
            b += 1;
        }
        Some(false)
    }

    /// Write the request for (a prefix of) `units` into `buf`: as many as fit its ranges;
    /// lost units that do not fit go back to the lost set. Returns its length, how many of
    /// `units` it carries, and its tag and nonce.
    fn encode_request(
        &mut self,
        buf: &mut [u8],
        units: &[u64],
        retransmission: bool,
        was_app_limited: bool,
    ) -> Option<(usize, usize, u32, u64)> {
        let unit = u64::from(self.cfg.unit);
        let (ranges, used) = unit_ranges(
            units.iter().map(|u| u * unit),
            u32::from(self.cfg.unit),
            self.cfg.max_ranges_per_request,
            usize::MAX,
        );
        let tag = self.take_tag();
        let nonce = self.rng.next_u64();
        let t = self.transfer.as_mut()?;
        // Lost units that did not fit go back to the lost set.
        for &u in &units[used..] {
            t.window.return_lost(u);
        }
        let units_sent = &units[..used];
        // A refusal waiting for confirmation is confirmed by the origin, past any cache.
        let mut origin = self.suspicion.is_some();
        for u in units_sent {
            origin |= t.origin_units.remove(u);
        }

        // Seed 003 §II-A: the units this receiver will ask for next, for caches to annotate.
        let after = t.window.next().max(units_sent.last().map_or(0, |u| u + 1));
        let ahead =
            u64::from(self.path.cc().anticipation()).min(MAX_ANTICIPATED_UNITS).min(t.units.saturating_sub(after));
        let anticipated = ByteRange::new(after * unit, (ahead * unit) as u32);
        let mut opts = [0u8; MAX_DATAGRAM];
        let options = OptionsWriter::new(&mut opts)
            .extra_ranges(&ranges[1..])
            .address_token(self.token.as_deref())
            .anticipated(if ahead > 0 { core::slice::from_ref(&anticipated) } else { &[] })
            .finish();
        let req = Request {
            flags: RequestFlags(0)
                .with(RequestFlags::APP_LIMITED, was_app_limited)
                .with(RequestFlags::RETRANSMISSION, retransmission)
                .with(RequestFlags::ORIGIN, origin),
            hop_limit: DEFAULT_HOP_LIMIT,
            unit: self.cfg.unit,
            tag,
            nonce,
            eid: t.eid,
            range: ranges[0],
            options,
        };
        let len = req.encode(buf).expect("a request with at most 32 ranges fits MAX_DATAGRAM");
        Some((len, used, tag, nonce))
    }

    /// Record a request that left: the controller, the rate sampler and the loss detector
    /// see it, its units' records take its tag, the pacer and the statistics count it.
    #[allow(clippy::too_many_arguments)]
    fn record_sent(
        &mut self,
        now: Time,
        units_sent: &[u64],
        tag: u32,
        nonce: u64,
        retransmission: bool,
        inflight_before: u64,
        was_app_limited: bool,
    ) {
        let unit = u64::from(self.cfg.unit);
        let Some(t) = self.transfer.as_mut() else { return };
        let p = &mut self.path;
        p.cc_mut().on_send(now, units_sent.len() as u64, inflight_before, was_app_limited);
        let cookie = p.cc_mut().on_request(&RequestInfo { now, units: units_sent, retransmission });
        let req_id = self.next_req_id;
        self.next_req_id += 1;
        let mut first_sends = 0;
        for &u in units_sent {
            let snap = p.rate.on_send(now, t.window.inflight());
            let seq = self.next_seq;
            self.next_seq += 1;
            if retransmission {
                t.window.mark_rerequested(u, |r| {
                    if r.tx == 0 {
                        first_sends += 1; // its only request so far was refused by a Retry
                    }
                    r.sent_at = now;
                    r.tx = r.tx.saturating_add(1);
                    r.retag(tag);
                    r.req_id = req_id;
                    r.seq = seq;
                    r.snap = snap;
                    r.cookie = cookie;
                    r.nonce = nonce;
                });
            } else {
                t.window.push_requested(UnitRecord {
                    state: UnitState::Requested,
                    sent_at: now,
                    tx: 1,
                    tag,
                    prev_tags: [tag; PREV_TAGS],
                    req_id,
                    seq,
                    snap,
                    cookie,
                    nonce,
                });
            }
        }
        self.lost_scratch.clear();
        let threshold = p.cc().loss_threshold();
        let mut ctx = LossCtx { now, window: &mut t.window, rtt: &mut p.rtt, lost: &mut self.lost_scratch, threshold };
        p.control.loss_mut().on_request(&mut ctx, units_sent, retransmission);
        if self.cfg.trace {
            self.events.push_back(Event::Requested { time: now, units: units_sent.to_vec(), retransmission });
        }
        let count = units_sent.len() as u64;
        self.stats.requests_sent += 1;
        self.stats.units_requested += count;
        if retransmission {
            self.stats.units_rerequested += count - first_sends;
        }
        p.pacer.on_send(now, count * unit, p.cc().pacing_rate());
        self.busy.on_sent(now);
        self.emit_snapshot(now);
    }

    /// With `trace`, report the controller's knobs when the window or state changed or the
    /// pacing rate moved by more than 1 %.
    fn emit_snapshot(&mut self, now: Time) {
        if !self.cfg.trace || !matches!(self.phase, Phase::Transferring | Phase::Finished) {
            return;
        }
        let s = self.cc_snapshot(now);
        let changed = match &self.last_snapshot {
            None => true,
            Some(p) => {
                p.cwnd != s.cwnd
                    || p.state != s.state
                    || match (p.pacing_rate, s.pacing_rate) {
                        (Some(a), Some(b)) => (a - b).abs() > 0.01 * a.max(b),
                        (a, b) => a.is_some() != b.is_some(),
                    }
            }
        };
        if changed {
            self.last_snapshot = Some(s);
            self.events.push_back(Event::Congestion(s));
        }
    }
}

/// Hand the controller what a Data says about its request's anticipated interests
/// ([`Controller::on_annotated`]): the listed units and the returned annotations. A list that
/// does not name whole units of ours is not our request's: nothing is reported.
fn report_annotations(
    cc: &mut dyn Controller,
    now: Time,
    unit_index: u64,
    sent_at: Time,
    source: ServedBy,
    d: &Data<'_>,
    unit: u64,
) {
    let mut anticipated = [0u64; MAX_ANTICIPATED_UNITS as usize];
    let mut n = 0;
    for o in d.options.anticipated_offsets(unit) {
        if o % unit != 0 {
            return;
        }
        anticipated[n] = o / unit;
        n += 1;
    }
    let none = Annotation { node: NodeId::UNKNOWN, time: 0, held: 0, hops: 0, flags: 0 };
    let mut annotations = [none; MAX_ANNOTATIONS];
    let mut m = 0;
    for a in d.options.annotations().filter(Annotation::is_returned).take(MAX_ANNOTATIONS) {
        annotations[m] = a;
        m += 1;
    }
    cc.on_annotated(&Annotated {
        now,
        unit: unit_index,
        sent_at,
        source,
        anticipated: &anticipated[..n],
        annotations: &annotations[..m],
    });
}

#[cfg(test)]
mod tests;
