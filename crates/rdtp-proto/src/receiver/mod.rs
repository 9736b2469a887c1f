//! The receiver: everything that drives a pull-based transfer (seed 000 §3–§4).
//!
//! A [`Receiver`] fetches one object. It resolves a name or EID to the object's size if
//! needed, then requests units through a sliding window (`req_una .. req_nxt`), paced and
//! aggregated as its congestion controller dictates; it samples RTT and delivery rate from
//! every arriving unit, detects loss by timeout and by out-of-order arrivals, re-requests,
//! reorders, and hands the bytes to the application in order.
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
//!    `buf` must hold [`MAX_DATAGRAM`] bytes.
//! 2. [`Receiver::poll_event`] reports resolution, completion, failure and (with
//!    `trace`) RTT samples and controller changes. Drain it; it grows until drained.
//! 3. [`Receiver::poll_timeout`] is the next instant `handle_timeout` must be called
//!    (pacing release, retransmission timer, idle limit). It may already be past.
//! 4. `now` must never go backwards.
//! 5. [`Receiver::read`] frees receive-window space; call `poll_transmit` afterwards.
//!
//! The transfer is over when [`Receiver::is_finished`] (all bytes arrived and matched
//! the EID) or [`Receiver::error`] is set; bytes stay readable after the end.

mod config;
pub mod pacer;
pub mod rate;
mod reassembly;
pub mod rtt;
mod stats;
mod window;

pub use config::ReceiverConfig;
pub use rtt::{RtoConfig, RttEstimator};
pub use stats::Stats;

use std::collections::VecDeque;

use core::time::Duration;

use crate::cc::{AckSample, CaState, CcParams, CongestionEvent, Controller, LossKind};
use crate::eid::Eid;
use crate::time::Time;
use crate::wire::tlv::{extra_ranges_len, write_extra_ranges};
use crate::wire::{
    ByteRange, Data, Nack, NackCode, Options, Packet, Query, Request, RequestFlags, ResolveRequest, ResolveResponse,
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
    /// The server refused a request for another reason.
    #[error("server refused the request ({code:?}): {detail}")]
    Refused { code: NackCode, detail: String },
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

/// A receiver fetching one object. See the module docs for the call contract.
#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    target: Target,
    name: String,
    phase: Phase,
    transfer: Option<Transfer>,
    cc: Box<dyn Controller>,
    rtt: RttEstimator,
    rate: RateSampler,
    pacer: Pacer,
    /// Retransmission timer (seed 000 §3.3); `None` = not running.
    rto_deadline: Option<Time>,
    ca_state: CaState,
    /// Recovery ends when `req_una` reaches this unit.
    recovery_point: u64,
    /// `req_nxt` at the last window reduction (conservative window adaptation).
    last_reduction_point: Option<u64>,
    next_tag: u32,
    next_req_id: u64,
    next_seq: u64,
    /// Request id of the last RTT sample: one sample per request (see `on_data`).
    last_rtt_req: Option<u64>,
    lost_total: u64,
    /// Last time something valid came from the server.
    last_heard: Time,
    events: VecDeque<Event>,
    last_snapshot: Option<CcSnapshot>,
    stats: Stats,
    scratch: Vec<u64>,
}

impl Receiver {
    /// A receiver for `target`, created at `now`.
    pub fn new(cfg: ReceiverConfig, target: Target, now: Time) -> Self {
        let cc = cfg.cc.build(CcParams { unit: cfg.unit, max_aggregation: cfg.max_aggregation, seed: cfg.seed });
        let mut rx = Receiver {
            rtt: RttEstimator::new(cfg.rto),
            pacer: Pacer::new(cfg.pacing_credit),
            cc,
            name: String::new(),
            phase: Phase::Resolving { tag: 0, next_try: now, interval: cfg.rto.initial },
            transfer: None,
            rate: RateSampler::default(),
            rto_deadline: None,
            ca_state: CaState::Open,
            recovery_point: 0,
            last_reduction_point: None,
            next_tag: 1,
            next_req_id: 0,
            next_seq: 0,
            last_rtt_req: None,
            lost_total: 0,
            last_heard: now,
            events: VecDeque::new(),
            last_snapshot: None,
            stats: Stats { started: now, ..Stats::default() },
            scratch: Vec::new(),
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
    /// The controller.
    pub fn controller(&self) -> &dyn Controller {
        self.cc.as_ref()
    }
    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// Units outstanding.
    pub fn inflight(&self) -> u64 {
        self.transfer.as_ref().map_or(0, |t| t.window.inflight())
    }
    /// Statistics so far.
    pub fn stats(&self) -> Stats {
        Stats {
            rtt_samples: self.rtt.samples(),
            rtt_min: self.rtt.min(),
            rtt_avg: self.rtt.mean(),
            rtt_max: (self.rtt.samples() > 0).then(|| self.rtt.max()),
            ..self.stats.clone()
        }
    }

    /// The controller's current knobs.
    pub fn cc_snapshot(&self, now: Time) -> CcSnapshot {
        CcSnapshot {
            time: now,
            cwnd: self.cc.cwnd(),
            pacing_rate: self.cc.pacing_rate(),
            aggregation: self.cc.aggregation(),
            inflight: self.inflight(),
            state: self.cc.state(),
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
                let mut t = self.rto_deadline;
                if self.waiting_for_server() {
                    t = Some(t.map_or(self.idle_deadline(), |x| x.min(self.idle_deadline())));
                }
                if self.has_sendable() && self.window_quota() > 0 {
                    let p = self.pacer.next_send();
                    t = Some(t.map_or(p, |x| x.min(p)));
                }
                t
            }
        }
    }

    /// Handle the passing of time: idle limit, retransmission timer (seed 000 §3.3).
    pub fn handle_timeout(&mut self, now: Time) {
        if matches!(self.phase, Phase::Finished | Phase::Failed(_)) {
            return;
        }
        let waiting = matches!(self.phase, Phase::Resolving { .. }) || self.waiting_for_server();
        if waiting && now >= self.idle_deadline() {
            self.fail(FetchError::Timeout(self.cfg.idle_timeout));
            return;
        }
        if self.rto_deadline.is_some_and(|d| now >= d) {
            self.on_rto(now);
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
                let n = ResolveRequest { tag, query }.encode(buf).ok()?;
                self.phase =
                    Phase::Resolving { tag, next_try: now + interval, interval: (interval * 2).min(self.cfg.rto.max) };
                self.stats.requests_sent += 1;
                Some(n)
            }
            Phase::Transferring => self.transmit_request(now, buf),
            _ => None,
        }
    }

    /// Take one datagram from the server.
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

    /// Requests are outstanding or lost units wait: silence from the server means trouble.
    fn waiting_for_server(&self) -> bool {
        self.transfer.as_ref().is_some_and(|t| t.window.inflight() > 0 || t.window.has_lost())
    }

    fn window_quota(&self) -> u64 {
        if self.cc.cwnd_limits() { self.cc.cwnd().saturating_sub(self.inflight()) } else { u64::MAX }
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
            code => self.fail(FetchError::Refused { code, detail: n.detail.to_string() }),
        }
    }

    /// The server is overloaded: the refused units are lost, and that is congestion.
    fn on_busy(&mut self, now: Time, n: &Nack<'_>) {
        let Some(t) = self.transfer.as_ref() else { return };
        let unit = u64::from(self.cfg.unit);
        let first = n.offset / unit;
        let end = first.saturating_add(u64::from(n.length).div_ceil(unit)).min(t.window.next());
        let refused: Vec<u64> =
            (first..end).filter(|&u| t.window.get(u).is_some_and(|r| r.state == UnitState::Requested)).collect();
        if !refused.is_empty() {
            self.mark_lost_units(&refused);
            self.congestion(now, LossKind::Fast);
        }
    }

    fn mark_lost_units(&mut self, units: &[u64]) {
        let Some(t) = self.transfer.as_mut() else { return };
        let mut n = 0;
        for &u in units {
            if t.window.force_lost(u) {
                n += 1;
            }
        }
        self.lost_total += n;
        self.stats.units_lost += n;
    }

    fn fail(&mut self, e: FetchError) {
        self.phase = Phase::Failed(e.clone());
        self.rto_deadline = None;
        if let Some(t) = self.transfer.as_mut() {
            t.window.clear();
        }
        self.events.push_back(Event::Failed(e));
    }

    fn finish(&mut self, now: Time) {
        self.stats.finished = Some(now);
        self.rto_deadline = None;
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
        let next = t.window.next();
        let first_in_window = self.last_reduction_point.is_none_or(|p| t.window.high() > p);
        let inflight = t.window.inflight();
        match kind {
            LossKind::Fast if self.ca_state != CaState::Open => return,
            LossKind::Fast => {
                self.ca_state = CaState::Recovery;
                self.stats.fast_recoveries += 1;
            }
            LossKind::Timeout => self.ca_state = CaState::Loss,
        }
        self.recovery_point = next;
        if first_in_window {
            self.last_reduction_point = Some(next);
        }
        let before = self.cc.cwnd();
        self.cc.on_congestion(&CongestionEvent { now, kind, inflight, first_in_window });
        if kind == LossKind::Timeout && self.cc.cwnd() < before {
            self.stats.timeout_window_decreases += 1;
        }
    }

    /// Seed 000 §3.3: re-request everything outstanding for longer than an RTO, back off.
    fn on_rto(&mut self, now: Time) {
        self.rto_deadline = None;
        let Some(t) = self.transfer.as_mut() else { return };
        self.scratch.clear();
        t.window.expire(now, self.rtt.rto(), &mut self.scratch);
        self.stats.timeouts += 1;
        let n = self.scratch.len() as u64;
        self.lost_total += n;
        self.stats.units_lost += n;
        self.rtt.backoff();
        self.congestion(now, LossKind::Timeout);
        // RFC 6298 §5.6: restart with the backed-off RTO. If the window is still full of
        // recent requests nothing may leave now, yet those requests need the timer too.
        // Otherwise it starts when the re-requests leave (§3.3 rule 1).
        if self.inflight() > 0 {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    fn on_data(&mut self, now: Time, d: &Data<'_>) {
        let unit = u64::from(self.cfg.unit);
        let threshold = self.cfg.reorder_threshold;
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
        self.scratch.clear();
        let Some(rec) = t.window.on_arrival(u, threshold, &mut self.scratch) else {
            self.stats.duplicates += 1;
            return;
        };
        self.stats.units_received += 1;
        self.stats.bytes_received += d.payload.len() as u64;

        // RTT (seed 000 eq. 5), one sample per request, from its first unit to arrive:
        // later units of an aggregated request also carry the time the burst took to
        // cross the bottleneck (seed 000's code sampled every unit and was biased by it).
        // Karn's rule: never from a unit requested more than once.
        let mut rtt_sample = None;
        if rec.tx == 1 && d.tag == rec.tag && self.last_rtt_req.is_none_or(|r| rec.req_id > r) {
            let r = now - rec.sent_at;
            self.rtt.on_sample(r);
            self.last_rtt_req = Some(rec.req_id);
            rtt_sample = Some(r);
            if self.cfg.trace {
                self.events.push_back(Event::RttSample(RttSampleEvent {
                    time: now,
                    unit: u,
                    rtt: r,
                    srtt: self.rtt.srtt().unwrap_or(r),
                    rttvar: self.rtt.rttvar(),
                    rto: self.rtt.rto(),
                }));
            }
        }
        if rec.tx > 1 && d.tag == rec.tag {
            // Answers the latest re-request, unambiguously (tag echo): the path works
            // again, so the backed-off RTO can go. Karn's rule still keeps this
            // measurement out of SRTT/RTTVAR.
            self.rtt.clear_backoff();
        }
        // Delivery rate (eq. 4).
        let rate = self.rate.on_delivered(now, rec.sent_at, &rec.snap, self.rtt.min());

        // Fast re-request (§3.4).
        let losses = self.scratch.len() as u64;
        if losses > 0 {
            self.lost_total += losses;
            self.stats.units_lost += losses;
            self.congestion(now, LossKind::Fast);
        }

        let t = self.transfer.as_mut().expect("transfer exists");
        if t.reasm.insert(u, d.payload) {
            // In-order arrival: restart the timer (§3.3 rule 2) and slide the window.
            t.window.advance_to(t.reasm.una());
            self.rto_deadline = Some(now + self.rtt.rto());
            if self.ca_state != CaState::Open && t.window.una() >= self.recovery_point {
                self.ca_state = CaState::Open;
            }
        }
        let inflight = t.window.inflight();
        let complete = t.reasm.is_complete();
        if inflight == 0 {
            self.rto_deadline = None; // §3.3 rule 1: nothing outstanding
        }

        self.cc.on_ack(&AckSample {
            now,
            delivered: self.rate.delivered(),
            acked: 1,
            rate,
            rtt: rtt_sample,
            srtt: self.rtt.srtt(),
            losses,
            lost_total: self.lost_total,
            prior_inflight,
            inflight,
            ca_state: self.ca_state,
        });
        if self.cc.wants_app_limited() {
            self.rate.mark_app_limited(inflight);
        }
        if complete {
            self.finish(now);
        }
    }

    fn transmit_request(&mut self, now: Time, buf: &mut [u8]) -> Option<usize> {
        // Check everything that could stop the request before any unit is taken.
        if buf.len() < MAX_DATAGRAM || !self.pacer.ready(now) {
            return None;
        }
        let quota = self.window_quota();
        if quota == 0 {
            return None;
        }
        let n = u64::from(self.cc.aggregation().max(1)).min(quota);
        let unit = u64::from(self.cfg.unit);
        let inflight_before = self.inflight();
        let was_app_limited = self.rate.is_app_limited();

        // Lost units first, as one request with discrete ranges (seed 000 §3.1); else the
        // next new units (one contiguous range).
        let mut units = std::mem::take(&mut self.scratch);
        units.clear();
        let t = self.transfer.as_mut()?;
        t.window.take_lost(n as usize, &mut units);
        let retransmission = !units.is_empty();
        if !retransmission {
            let count = n.min(self.new_units_allowed());
            if count == 0 {
                // Allowed to ask for more, but there is nothing to ask for.
                self.rate.mark_app_limited(inflight_before);
                self.scratch = units;
                return None;
            }
            let next = self.transfer.as_ref()?.window.next();
            units.extend(next..next + count);
        }
        let (ranges, used) = ranges_of(&units, unit, self.cfg.max_ranges_per_request);
        let tag = self.take_tag();
        let t = self.transfer.as_mut()?;
        // Lost units that did not fit go back to the lost set.
        for &u in &units[used..] {
            t.window.force_lost(u);
        }
        let units_sent = &units[..used];

        let mut opts = [0u8; MAX_DATAGRAM];
        let opt_len = extra_ranges_len(ranges.len() - 1);
        write_extra_ranges(&mut opts[..opt_len], &ranges[1..]);
        let req = Request {
            flags: RequestFlags(0)
                .with(RequestFlags::APP_LIMITED, was_app_limited)
                .with(RequestFlags::RETRANSMISSION, retransmission),
            unit: self.cfg.unit,
            tag,
            eid: t.eid,
            range: ranges[0],
            options: Options::parse(&opts[..opt_len]).expect("options this function wrote"),
        };
        let len = req.encode(buf).expect("a request with at most 32 ranges fits MAX_DATAGRAM");

        // Record the request in the window.
        self.cc.on_send(now, units_sent.len() as u64, inflight_before, was_app_limited);
        let req_id = self.next_req_id;
        self.next_req_id += 1;
        for &u in units_sent {
            let snap = self.rate.on_send(now, t.window.inflight());
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
                    later_arrivals: 0,
                });
            }
        }
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
        self.pacer.on_send(now, count * unit, self.cc.pacing_rate());
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto()); // §3.3 rule 1
        }
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

/// Byte ranges covering `units` (sorted), merging consecutive units, at most `max_ranges`
/// of them. Returns the ranges and how many of `units` they cover.
fn ranges_of(units: &[u64], unit: u64, max_ranges: usize) -> (Vec<ByteRange>, usize) {
    let mut ranges: Vec<ByteRange> = Vec::with_capacity(4);
    let mut used = 0;
    for &u in units {
        let full = ranges.len() >= max_ranges.max(1);
        match ranges.last_mut() {
            Some(r) if r.offset + u64::from(r.length) == u * unit => r.length += unit as u32,
            _ if full => break,
            _ => ranges.push(ByteRange::new(u * unit, unit as u32)),
        }
        used += 1;
    }
    (ranges, used)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod range_tests {
    use super::*;

    #[test]
    fn consecutive_units_merge_and_the_range_limit_holds() {
        let (r, used) = ranges_of(&[3, 4, 5, 9, 11, 12], 100, 32);
        assert_eq!(r, [ByteRange::new(300, 300), ByteRange::new(900, 100), ByteRange::new(1100, 200)]);
        assert_eq!(used, 6);
        let (r, used) = ranges_of(&[3, 4, 5, 9, 11, 12], 100, 2);
        assert_eq!(r, [ByteRange::new(300, 300), ByteRange::new(900, 100)]);
        assert_eq!(used, 4);
    }
}
