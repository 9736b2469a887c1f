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
//! let mut rx = Receiver::new(config, target, now);
//! loop {
//!     while let Some(n) = rx.poll_transmit(now, &mut buf) { send(&buf[..n]) }   // 1
//!     while let Some(ev) = rx.poll_event() { ... }                               // 2
//!     let deadline = rx.poll_timeout();                                          // 3
//!     wait until a datagram arrives or `deadline` passes, then update `now`:
//!       datagram  → rx.handle_datagram(now, &bytes)                              // 4
//!       deadline  → rx.handle_timeout(now)
//!     let n = rx.read(&mut app_buf);  // in-order bytes, whenever convenient     // 5
//! }
//! ```
//!
//! 1. Call [`Receiver::poll_transmit`] until it returns `None` after every other call;
//!    requests leave only when pacing and the window allow, so it often returns `None`.
//!    `buf` must hold [`MAX_DATAGRAM`] bytes. Every datagram goes to the receiver's first
//!    hop: the server, or the router it fetches through.
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
//! The receiver keeps the per-*object* state — target and resolution, the [`window`] of unit
//! records, reassembly and verification, the receive window, tags and nonces — and one
//! [`Path`]: the congestion state towards the network (controller, RTT estimator, delivery
//! rate sampler, pacer, [`loss`] detector, recovery state). Controllers plug into the path
//! through [`crate::cc::Controller`]: besides the window, pacing rate and aggregation they
//! may own the loss detector, keep data per request (a cookie) and keep state per source
//! (every [`crate::cc::AckSample`] names the node that served the unit). Per-source
//! accounting for users is in [`sources`].

mod config;
pub mod loss;
pub mod pacer;
pub mod rate;
mod reassembly;
pub mod rtt;
pub mod sources;
mod stats;
pub mod unit_timers;
pub mod window;

pub use config::ReceiverConfig;
pub use loss::{LossCtx, LossDetector, StandardLoss};
pub use rtt::{RtoConfig, RttEstimator};
pub use sources::{SourceStats, Sources};
pub use stats::Stats;
pub use unit_timers::UnitTimers;

use std::collections::VecDeque;

use core::time::Duration;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg32;

use crate::cc::{AckSample, CaState, CcParams, CongestionEvent, Controller, LossKind, RequestInfo};
use crate::eid::Eid;
use crate::node::{NodeId, ServedBy};
use crate::time::Time;
use crate::wire::tlv::{extra_ranges_len, unit_ranges, write_extra_ranges};
use crate::wire::{
    DEFAULT_HOP_LIMIT, Data, DataFlags, Nack, NackCode, Options, Packet, Query, Request, RequestFlags, ResolveRequest,
    ResolveResponse,
};
use pacer::Pacer;
use rate::RateSampler;
use reassembly::Reassembly;
use window::{UnitRecord, UnitState, Window};

/// Buffer size `poll_transmit` needs.
pub const MAX_DATAGRAM: usize = 1232;

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
    /// Nothing valid came from the server for the idle limit.
    #[error("no answer from the server for {0:?}")]
    Timeout(Duration),
    /// The delivered bytes do not hash to the EID.
    #[error("data validation failed: content hashes to {actual}, expected {expected}")]
    Integrity { expected: Eid, actual: Eid },
    /// The server or a router refused a request for another reason.
    #[error("{by} refused the request ({code:?}): {detail}")]
    Refused { code: NackCode, by: NodeId, detail: String },
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

#[derive(Debug)]
enum Phase {
    Resolving { tag: u32, next_try: Time, interval: Duration },
    Transferring,
    Finished,
    Failed(FetchError),
}

/// Per-transfer state that exists once the size is known.
#[derive(Debug)]
struct Transfer {
    eid: Eid,
    size: u64,
    units: u64,
    window: Window,
    reasm: Reassembly,
}

/// The congestion state towards the network: what a controller and a loss detector need.
/// One per receiver today; a receiver keeping several (one per source, as seed 003's CCTCP
/// does) would hold one per expected source.
#[derive(Debug)]
pub struct Path {
    cc: Box<dyn Controller>,
    loss: Box<dyn LossDetector>,
    rtt: RttEstimator,
    rate: RateSampler,
    pacer: Pacer,
    ca_state: CaState,
    /// Recovery ends when `req_una` reaches this unit.
    recovery_point: u64,
    /// `req_nxt` at the last window reduction (conservative window adaptation).
    last_reduction_point: Option<u64>,
    /// Request id of the last RTT sample: one sample per request (see `on_data`).
    last_rtt_req: Option<u64>,
    lost_total: u64,
}

impl Path {
    fn new(cfg: &ReceiverConfig) -> Self {
        let mut cc = cfg.cc.build(CcParams { unit: cfg.unit, max_aggregation: cfg.max_aggregation, seed: cfg.seed });
        let loss = cc.loss_detector().unwrap_or_else(|| Box::new(StandardLoss::new(cfg.reorder_threshold)));
        Path {
            cc,
            loss,
            rtt: RttEstimator::new(cfg.rto),
            rate: RateSampler::default(),
            pacer: Pacer::new(cfg.pacing_credit),
            ca_state: CaState::Open,
            recovery_point: 0,
            last_reduction_point: None,
            last_rtt_req: None,
            lost_total: 0,
        }
    }

    /// The controller.
    pub fn controller(&self) -> &dyn Controller {
        self.cc.as_ref()
    }
    /// The loss detector.
    pub fn loss_detector(&self) -> &dyn LossDetector {
        self.loss.as_ref()
    }
    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Whether a request may leave at `now` as far as pacing goes.
    fn release_ready(&self, now: Time) -> bool {
        self.pacer.ready(now) && self.cc.release_time().is_none_or(|t| now >= t)
    }

    /// The earliest instant pacing lets the next request leave.
    fn next_release(&self) -> Time {
        let p = self.pacer.next_send();
        self.cc.release_time().map_or(p, |t| t.max(p))
    }
}

/// A receiver fetching one object. See the module docs for the call contract.
#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    target: Target,
    name: String,
    phase: Phase,
    transfer: Option<Transfer>,
    path: Path,
    sources: Sources,
    /// Draws request nonces.
    rng: Pcg32,
    next_tag: u32,
    next_req_id: u64,
    next_seq: u64,
    /// Last time something valid came from the network.
    last_heard: Time,
    events: VecDeque<Event>,
    last_snapshot: Option<CcSnapshot>,
    stats: Stats,
    scratch: Vec<u64>,
    lost_scratch: Vec<u64>,
}

impl Receiver {
    /// A receiver for `target`, created at `now`.
    pub fn new(cfg: ReceiverConfig, target: Target, now: Time) -> Self {
        let mut rx = Receiver {
            path: Path::new(&cfg),
            sources: Sources::default(),
            // A stream of its own, so nonces do not repeat the controller's draws.
            rng: Pcg32::seed_from_u64(cfg.seed ^ 0x6e6f_6e63_6573_0001),
            name: String::new(),
            phase: Phase::Resolving { tag: 0, next_try: now, interval: cfg.rto.initial },
            transfer: None,
            next_tag: 1,
            next_req_id: 0,
            next_seq: 0,
            last_heard: now,
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
            Target::Name(n) => rx.name = n,
            Target::Eid(_) => {}
        }
        rx
    }

    // ----- accessors -------------------------------------------------------------------

    pub fn config(&self) -> &ReceiverConfig {
        &self.cfg
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
    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.path.rtt
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
            sources: self.sources.clone(),
            ..self.stats.clone()
        }
    }

    /// The controller's current knobs.
    pub fn cc_snapshot(&self, now: Time) -> CcSnapshot {
        let cc = &self.path.cc;
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

    /// When [`Receiver::handle_timeout`] must next be called, if at all.
    pub fn poll_timeout(&self) -> Option<Time> {
        match &self.phase {
            Phase::Finished | Phase::Failed(_) => None,
            Phase::Resolving { next_try, .. } => Some((*next_try).min(self.idle_deadline())),
            Phase::Transferring => {
                let mut t = self.path.loss.deadline();
                if self.waiting_for_server() {
                    t = Some(t.map_or(self.idle_deadline(), |x| x.min(self.idle_deadline())));
                }
                if self.has_sendable() && self.window_quota() > 0 {
                    let p = self.path.next_release();
                    t = Some(t.map_or(p, |x| x.min(p)));
                }
                t
            }
        }
    }

    /// Handle the passing of time: idle limit, loss detection (seed 000 §3.3).
    pub fn handle_timeout(&mut self, now: Time) {
        if matches!(self.phase, Phase::Finished | Phase::Failed(_)) {
            return;
        }
        let waiting = matches!(self.phase, Phase::Resolving { .. }) || self.waiting_for_server();
        if waiting && now >= self.idle_deadline() {
            self.fail(FetchError::Timeout(self.cfg.idle_timeout));
            return;
        }
        if self.path.loss.deadline().is_some_and(|d| now >= d) {
            self.on_loss_timer(now);
        }
    }

    /// Write the next datagram to send into `buf` (≥ [`MAX_DATAGRAM`] bytes), if one is due.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut [u8]) -> Option<usize> {
        match self.phase {
            Phase::Resolving { next_try, interval, .. } if now >= next_try => {
                let tag = self.take_tag();
                let query = match &self.target {
                    Target::Name(n) => Query::Name(n),
                    Target::Eid(e) => Query::Eid(*e),
                    Target::Known { .. } => return None,
                };
                let n = ResolveRequest { hop_limit: DEFAULT_HOP_LIMIT, tag, query }.encode(buf).ok()?;
                self.phase =
                    Phase::Resolving { tag, next_try: now + interval, interval: (interval * 2).min(self.cfg.rto.max) };
                self.stats.requests_sent += 1;
                Some(n)
            }
            Phase::Transferring => self.transmit_request(now, buf),
            _ => None,
        }
    }

    /// Take one datagram from the network (the first hop).
    pub fn handle_datagram(&mut self, now: Time, datagram: &[u8]) {
        match Packet::decode(datagram) {
            Ok(Packet::Data(d)) if matches!(self.phase, Phase::Transferring) => self.on_data(now, &d),
            Ok(Packet::Nack(n)) => self.on_nack(now, &n),
            Ok(Packet::ResolveResponse(r)) => self.on_resolved(now, &r),
            Ok(Packet::Data(_)) => {} // late data after the end, or before resolution
            _ => self.stats.invalid += 1,
        }
        self.emit_snapshot(now);
    }

    // ----- internals -------------------------------------------------------------------

    fn take_tag(&mut self) -> u32 {
        let t = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1).max(1);
        t
    }

    fn idle_deadline(&self) -> Time {
        self.last_heard + self.cfg.idle_timeout
    }

    /// Requests are outstanding or lost units wait: silence from the network means trouble.
    fn waiting_for_server(&self) -> bool {
        self.transfer.as_ref().is_some_and(|t| t.window.inflight() > 0 || t.window.has_lost())
    }

    fn window_quota(&self) -> u64 {
        let cc = &self.path.cc;
        if cc.cwnd_limits() { cc.cwnd().saturating_sub(self.inflight()) } else { u64::MAX }
    }

    /// Units that could be requested now, ignoring pacing and the congestion window.
    fn new_units_allowed(&self) -> u64 {
        let Some(t) = &self.transfer else { return 0 };
        let unit = u64::from(self.cfg.unit);
        let outstanding = (t.window.next() - t.window.una()) * unit + t.reasm.readable() as u64;
        let room = self.cfg.recv_window.saturating_sub(outstanding) / unit;
        room.min(t.units - t.window.next())
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
            reasm: Reassembly::new(self.cfg.unit, size, self.cfg.verify),
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

    fn on_resolved(&mut self, now: Time, r: &ResolveResponse<'_>) {
        let Phase::Resolving { tag, .. } = self.phase else { return };
        let matches = match &self.target {
            Target::Name(n) => r.name == n.as_str(),
            Target::Eid(e) => r.eid == *e,
            Target::Known { .. } => false,
        };
        if !matches || r.tag == 0 || r.tag > tag {
            self.stats.invalid += 1;
            return;
        }
        self.last_heard = now;
        self.start_transfer(now, r.eid, r.size, r.name.to_string());
    }

    fn on_nack(&mut self, now: Time, n: &Nack<'_>) {
        let ours = match (&self.phase, &self.transfer) {
            (Phase::Resolving { .. }, _) => true,
            (Phase::Transferring, Some(t)) => n.eid == t.eid || n.eid == Eid::default(),
            _ => false,
        };
        if !ours {
            self.stats.invalid += 1;
            return;
        }
        self.stats.nacks += 1;
        self.last_heard = now;
        match n.code {
            NackCode::UnknownContent => {
                let what = match &self.target {
                    Target::Name(s) => s.clone(),
                    Target::Eid(e) | Target::Known { eid: e, .. } => e.to_hex(),
                };
                self.fail(FetchError::NotFound(what));
            }
            NackCode::Busy => self.on_busy(now, n),
            code => self.fail(FetchError::Refused { code, by: n.from, detail: n.detail.to_string() }),
        }
    }

    /// The server or a router is overloaded: the refused units are lost, and that is
    /// congestion.
    fn on_busy(&mut self, now: Time, n: &Nack<'_>) {
        let Some(t) = self.transfer.as_mut() else { return };
        let unit = u64::from(self.cfg.unit);
        let first = n.offset / unit;
        let end = first.saturating_add(u64::from(n.length).div_ceil(unit)).min(t.window.next());
        let mut refused = 0;
        for u in first..end {
            if t.window.declare_lost(u) {
                refused += 1;
            }
        }
        if refused > 0 {
            self.path.lost_total += refused;
            self.stats.units_lost += refused;
            self.congestion(now, LossKind::Fast);
        }
    }

    fn fail(&mut self, e: FetchError) {
        self.phase = Phase::Failed(e.clone());
        self.path.loss.reset();
        if let Some(t) = self.transfer.as_mut() {
            t.window.clear();
        }
        self.events.push_back(Event::Failed(e));
    }

    fn finish(&mut self, now: Time) {
        self.stats.finished = Some(now);
        self.path.loss.reset();
        let Some(t) = self.transfer.as_mut() else { return };
        t.window.clear();
        if let Some(actual) = t.reasm.content_eid()
            && actual != t.eid
        {
            let expected = t.eid;
            self.fail(FetchError::Integrity { expected, actual });
            return;
        }
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
        let before = p.cc.cwnd();
        p.cc.on_congestion(&CongestionEvent { now, kind, inflight, first_in_window });
        if p.cc.retime_pacing() {
            p.pacer.retime(p.cc.pacing_rate());
        }
        if kind == LossKind::Timeout && p.cc.cwnd() < before {
            self.stats.timeout_window_decreases += 1;
        }
    }

    /// The loss detector's timer fired (seed 000 §3.3 by default).
    fn on_loss_timer(&mut self, now: Time) {
        let Some(t) = self.transfer.as_mut() else { return };
        self.lost_scratch.clear();
        let p = &mut self.path;
        let mut ctx = LossCtx { now, window: &mut t.window, rtt: &mut p.rtt, lost: &mut self.lost_scratch };
        let Some(kind) = p.loss.on_timeout(&mut ctx) else { return };
        if kind == LossKind::Timeout {
            self.stats.timeouts += 1;
        }
        let n = self.lost_scratch.len() as u64;
        p.lost_total += n;
        self.stats.units_lost += n;
        self.congestion(now, kind);
    }

    fn on_data(&mut self, now: Time, d: &Data<'_>) {
        let unit = u64::from(self.cfg.unit);
        let Some(t) = self.transfer.as_mut() else { return };
        let u = d.offset / unit;
        let valid = d.eid == t.eid
            && d.total_size == t.size
            && d.offset.is_multiple_of(unit)
            && u < t.units
            && d.payload.len() as u64 == t.reasm.unit_len(u);
        if !valid {
            self.stats.invalid += 1;
            return;
        }
        self.last_heard = now;
        if u < t.window.una() || u >= t.window.next() {
            self.stats.duplicates += 1;
            return;
        }
        let prior_inflight = t.window.inflight();
        let Some(arrival) = t.window.mark_received(u) else {
            self.stats.duplicates += 1;
            return;
        };
        let rec = arrival.before;
        let in_order = u == t.window.una();
        let source = ServedBy { node: d.served_by, hops: d.hops, cached: d.flags.contains(DataFlags::CACHED) };
        self.stats.units_received += 1;
        self.stats.bytes_received += d.payload.len() as u64;
        let p = &mut self.path;

        // RTT (seed 000 eq. 5), one sample per request, from its first unit to arrive:
        // later units of an aggregated request also carry the time the burst took to
        // cross the bottleneck (seed 000's code sampled every unit and was biased by it).
        // Karn's rule: never from a unit requested more than once.
        let mut rtt_sample = None;
        if rec.tx == 1 && d.tag == rec.tag && p.last_rtt_req.is_none_or(|r| rec.req_id > r) {
            let r = now - rec.sent_at;
            p.rtt.on_sample(r);
            p.last_rtt_req = Some(rec.req_id);
            rtt_sample = Some(r);
            if self.cfg.trace {
                self.events.push_back(Event::RttSample(RttSampleEvent {
                    time: now,
                    unit: u,
                    rtt: r,
                    srtt: p.rtt.srtt().unwrap_or(r),
                    rttvar: p.rtt.rttvar(),
                    rto: p.loss.rto(&p.rtt).unwrap_or_default(),
                }));
            }
        }
        if rec.tx > 1 && d.tag == rec.tag {
            // Answers the latest re-request, unambiguously (tag echo): the path works
            // again, so the backed-off RTO can go. Karn's rule still keeps this
            // measurement out of SRTT/RTTVAR.
            p.rtt.clear_backoff();
        }
        self.sources.on_unit(source, d.payload.len() as u64, rtt_sample);
        if self.cfg.trace {
            self.events.push_back(Event::Received { time: now, unit: u, source, rtt: rtt_sample });
        }
        // Delivery rate (eq. 4).
        let rate = p.rate.on_delivered(now, rec.sent_at, &rec.snap, p.rtt.min());

        // Loss detection: fast re-request (§3.4) and the timer restart (§3.3) by default.
        self.lost_scratch.clear();
        let mut ctx = LossCtx { now, window: &mut t.window, rtt: &mut p.rtt, lost: &mut self.lost_scratch };
        p.loss.on_arrival(&mut ctx, &arrival, in_order);
        let losses = self.lost_scratch.len() as u64;
        if losses > 0 {
            p.lost_total += losses;
            self.stats.units_lost += losses;
            self.congestion(now, LossKind::Fast);
        }

        let t = self.transfer.as_mut().expect("transfer exists");
        let p = &mut self.path;
        if t.reasm.insert(u, d.payload) {
            // In-order arrival: slide the window.
            t.window.advance_to(t.reasm.una());
            if p.ca_state != CaState::Open && t.window.una() >= p.recovery_point {
                p.ca_state = CaState::Open;
            }
        }
        let inflight = t.window.inflight();
        let complete = t.reasm.is_complete();

        p.cc.on_ack(&AckSample {
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
        if p.cc.retime_pacing() {
            p.pacer.retime(p.cc.pacing_rate());
        }
        if p.cc.wants_app_limited() {
            p.rate.mark_app_limited(inflight);
        }
        if complete {
            self.finish(now);
        }
    }

    fn transmit_request(&mut self, now: Time, buf: &mut [u8]) -> Option<usize> {
        // Check everything that could stop the request before any unit is taken.
        if buf.len() < MAX_DATAGRAM || !self.path.release_ready(now) {
            return None;
        }
        let quota = self.window_quota();
        if quota == 0 {
            return None;
        }
        let n = u64::from(self.path.cc.aggregation().max(1)).min(quota);
        let unit = u64::from(self.cfg.unit);
        let inflight_before = self.inflight();
        let was_app_limited = self.path.rate.is_app_limited();

        // Lost units first, as one request with discrete ranges (seed 000 §3.1); else the
        // next new units (one contiguous range). A controller that schedules re-requests
        // after first-time requests (S1 §IV-D) gets the new units first, and lost units only
        // when no new unit may be asked for.
        let mut units = std::mem::take(&mut self.scratch);
        units.clear();
        let new_first = self.path.cc.new_units_first();
        let new_allowed = self.new_units_allowed();
        let t = self.transfer.as_mut()?;
        if !new_first || new_allowed == 0 {
            t.window.take_lost(n as usize, &mut units);
        }
        let retransmission = !units.is_empty();
        if !retransmission {
            let count = n.min(new_allowed);
            if count == 0 {
                // Allowed to ask for more, but there is nothing to ask for.
                self.path.rate.mark_app_limited(inflight_before);
                self.scratch = units;
                return None;
            }
            let next = t.window.next();
            units.extend(next..next + count);
        }
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

        let mut opts = [0u8; MAX_DATAGRAM];
        let opt_len = extra_ranges_len(ranges.len() - 1);
        write_extra_ranges(&mut opts[..opt_len], &ranges[1..]);
        let req = Request {
            flags: RequestFlags(0)
                .with(RequestFlags::APP_LIMITED, was_app_limited)
                .with(RequestFlags::RETRANSMISSION, retransmission),
            hop_limit: DEFAULT_HOP_LIMIT,
            unit: self.cfg.unit,
            tag,
            nonce,
            eid: t.eid,
            range: ranges[0],
            options: Options::parse(&opts[..opt_len]).expect("options this function wrote"),
        };
        let len = req.encode(buf).expect("a request with at most 32 ranges fits MAX_DATAGRAM");

        // Record the request in the window.
        let p = &mut self.path;
        p.cc.on_send(now, units_sent.len() as u64, inflight_before, was_app_limited);
        let cookie = p.cc.on_request(&RequestInfo { now, units: units_sent, retransmission });
        let req_id = self.next_req_id;
        self.next_req_id += 1;
        for &u in units_sent {
            let snap = p.rate.on_send(now, t.window.inflight());
            let seq = self.next_seq;
            self.next_seq += 1;
            if retransmission {
                t.window.mark_rerequested(u, |r| {
                    r.sent_at = now;
                    r.tx = r.tx.saturating_add(1);
                    r.tag = tag;
                    r.req_id = req_id;
                    r.seq = seq;
                    r.snap = snap;
                    r.cookie = cookie;
                });
            } else {
                t.window.push_requested(UnitRecord {
                    state: UnitState::Requested,
                    sent_at: now,
                    tx: 1,
                    tag,
                    req_id,
                    seq,
                    snap,
                    cookie,
                });
            }
        }
        self.lost_scratch.clear();
        let mut ctx = LossCtx { now, window: &mut t.window, rtt: &mut p.rtt, lost: &mut self.lost_scratch };
        p.loss.on_request(&mut ctx, units_sent, retransmission);
        if self.cfg.trace {
            self.events.push_back(Event::Requested { time: now, units: units_sent.to_vec(), retransmission });
        }
        let count = used as u64;
        self.scratch = units;
        self.stats.requests_sent += 1;
        self.stats.units_requested += count;
        if retransmission {
            self.stats.units_rerequested += count;
        }
        p.pacer.on_send(now, count * unit, p.cc.pacing_rate());
        self.emit_snapshot(now);
        Some(len)
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

#[cfg(test)]
mod tests;
