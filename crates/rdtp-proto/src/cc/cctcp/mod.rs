//! `cctcp` and `cctcp-single`: Content Centric TCP (Saino, Cocora, Pavlou — seed 003, "S3"),
//! a receiver-driven TCP NewReno that keeps a window and a retransmission timeout **per
//! expected source** of a flow's units, learns where units are before asking for them from
//! **anticipated interests** and caching routers' annotations (S3 §II-A), updates the
//! windows jointly along the path (§II-B), paces each source (eq. 4), treats a slow
//! intermediate node as a **virtual loss** (§II-C) and handles the special cases of §II-D.
//!
//! `cctcp-single` is the paper's baseline (S3 §III): the same protocol without anticipated
//! interests, one window and one RTO per flow.
//!
//! # How it plugs into the receiver
//!
//! * Every request asks for one unit ([`Controller::aggregation`] = 1, one Interest per
//!   chunk) and lists the next [`CctcpConfig::anticipate`] units ([`Controller::anticipation`]).
//! * [`Controller::admit`] holds a unit back until the window of its expected source has
//!   room and that source's pacing clock (eq. 4: `T_send(i) = SRTT(i)/CWND(i)`) allows.
//! * It is its own [`LossDetector`]: a unit is lost when it has not arrived within the RTO
//!   of the source it was expected from when requested ([`crate::recovery::unit_timers`]); no fast
//!   re-request (out of order is no sign of loss in an ICN, S3 §I).
//! * [`Controller::on_annotated`] takes eq. 1 samples for the annotating routers, checks for
//!   virtual loss and learns locations ([`locate`]); [`Controller::on_ack`] takes the
//!   serving source's sample and grows the windows.
//!
//! # Choices the paper leaves open
//!
//! * **Which units are anticipated**: the next `anticipate` units after the request's own
//!   (64 by default, the width of an annotation's bitmap; S3 says only "a set of chunks that
//!   it intends to request closely after").
//! * **The serving cache reports what it holds** among the anticipated units (as an
//!   annotation with `T_D − T_I` = 0; `router::annotate`). S3 describes annotations only
//!   from routers that forward.
//! * **Units with no location information** (§II-D 1): S3 has them sent "as if it were the
//!   first packet of a new flow, therefore with a CWND equal to 1". Here that holds until the
//!   origin has served a unit; afterwards such a unit is expected from the origin — a unit
//!   no cache on the path announced is the origin's to serve, and the origin has the largest
//!   RTO (eq. 3) and the lowest rate (eq. 2), so this neither fires spurious timeouts nor
//!   overloads a cache. Read literally, §II-D 1 would hold every unit beyond the
//!   anticipation horizon (a window larger than `anticipate`) to one request in flight.
//!   The pseudo-source of unknown units has a window of 1 and the initial RTO.
//! * **Reduction**: on a loss (timeout), a late arrival or a virtual loss, the source and
//!   every source beyond it halve their windows (floor 1) and continue in congestion
//!   avoidance (`ssthresh` = the new window), and double their RTOs (S3 §II-B "halves the
//!   CWND and doubles the timeout"; the "half of the current flight size" of the same section
//!   is the same number when the window limits, which it does). At most once per window per
//!   source, as NewReno recovers once per window: a unit requested before a source's last
//!   reduction does not reduce it again, and does not double its RTO again (per-unit timers
//!   would otherwise halve a window once per unit of a lost burst).
//! * **Timers**: one per requested unit, as a CCN Interest's (S3: "a Data packet not received
//!   within a timeout period"), running out `RTO` after the request left, with the RTO of the
//!   expected source *as it is when the timer runs out*: RTTs that grew while the unit was out
//!   (a queue filling in slow start) move its deadline, as TCP's timer restarts with the
//!   current RTO on every acknowledgement (RFC 6298 §5.3). Fixed at the request, the
//!   deadlines fell behind every slow start and fired by the hundred on a single path.
//! * **Late arrivals** (a unit that arrives after it was declared lost, or answers a
//!   re-request) give no RTT sample (Karn) and grow no window; the loss already reduced.
//! * **Joint increase** (§II-B): after `k`'s own slow-start or avoidance step, every source
//!   nearer the receiver with an SRTT gets `CWND(j) = max(CWND(j), CWND(k)·SRTT(j)/SRTT(k))`.
//!   The paper does not say whether the raise also moves `ssthresh`; it does not.
//! * **Eq. 3** is enforced where a timeout is armed: a unit expected from `k` gets the
//!   largest RTO of `k` and every source nearer the receiver.
//! * **Virtual loss** (§II-C) compares the eq. 1 sample of every annotating router other
//!   than the serving one with that router's RTO *before* taking the sample, and only once
//!   the router has an SRTT (before, its RTO is the initial 3 s).
//! * **RTO** per source: RFC 6298 (Jacobson's algorithm, S3 §II-B), initial 3 s (S3 §III),
//!   `RTO = SRTT + max(G, 4·RTTVAR)` with a clock granularity G = 10 ms (so that a steady
//!   path, RTTVAR → 0, does not get RTO = SRTT), floor `min_rto` = 10 ms, ceiling 60 s. S3
//!   names no floor; RFC 6298's 1 s would hide every spurious timeout the paper is about
//!   on its 10–100 ms paths.
//! * **Initial window** 1 (S3 §II-D: a new flow starts "with a CWND equal to 1"), initial
//!   `ssthresh` infinite; a source first heard of mid-flow starts there too.
//! * **Busy** Nacks (a router's pending table is full) are not charged to any source (they
//!   name none); the units are requested again.
//! * **Sources** are told apart by node id, at most [`sources::MAX_SOURCES`] per flow;
//!   their order is their hop count as last seen in a Data or an annotation.
//! * `cctcp-single` paces too (eq. 4 with the flow's SRTT and window).
//! * **Recovery** is S3 §II-B's alone: the receiver's loss window after a timeout
//!   (`recovery/loss_window.rs`) limits only controllers whose one window limits requests
//!   ([`Controller::cwnd_limits`]); these windows are per source, enforced in `admit`.

pub mod locate;
pub mod sources;

use core::time::Duration;

use super::spec::{Key, Keyed, Kind, key};
use super::{
    AckSample, Annotated, Built, CcParams, CongestionEvent, Controller, ControllerSpec, LossDetector, LossKind,
    PathState, RequestInfo,
};
use crate::node::NodeId;
use crate::recovery::{Arrival, LossCtx, LossView, RtoConfig, UnitState, UnitTimers};
use crate::time::Time;
use locate::Locations;
use sources::{SourceTable, UNKNOWN};

/// Parameters of `cctcp` / `cctcp-single`.
#[derive(Clone, Debug, PartialEq)]
pub struct CctcpConfig {
    /// Units listed as anticipated interests in each request (0: none).
    pub anticipate: u32,
    /// A window and an RTO per expected source (else one per flow: `cctcp-single`).
    pub per_source: bool,
    /// Virtual packet loss (S3 §II-C).
    pub virtual_loss: bool,
    /// Pace each source's requests by eq. 4.
    pub pacing: bool,
    /// Initial window of every source, units.
    pub init_cwnd: f64,
    /// RTO before a source's first sample, seconds (S3 §III: 3).
    pub initial_rto: f64,
    /// RTO floor and ceiling, seconds.
    pub min_rto: f64,
    pub max_rto: f64,
    /// RFC 6298's clock granularity G, seconds: `RTO = SRTT + max(G, 4·RTTVAR)`.
    pub granularity: f64,
}

impl Default for CctcpConfig {
    fn default() -> Self {
        CctcpConfig {
            anticipate: crate::wire::annotation::MAX_ANTICIPATED_UNITS as u32,
            per_source: true,
            virtual_loss: true,
            pacing: true,
            init_cwnd: 1.0,
            initial_rto: 3.0,
            min_rto: 0.01,
            max_rto: 60.0,
            granularity: 0.01,
        }
    }
}

impl CctcpConfig {
    /// `cctcp-single`: no anticipated interests, one window and one RTO per flow.
    pub fn single() -> Self {
        CctcpConfig { anticipate: 0, per_source: false, virtual_loss: false, ..CctcpConfig::default() }
    }

    /// The registry name this configuration reports.
    pub fn name(&self) -> &'static str {
        if self.per_source { "cctcp" } else { "cctcp-single" }
    }

    fn rto(&self) -> RtoConfig {
        let secs = |s: f64| Duration::from_secs_f64(s.clamp(0.0, 3600.0));
        RtoConfig {
            initial: secs(self.initial_rto),
            min: secs(self.min_rto),
            max: secs(self.max_rto),
            // RFC 6298's K = 4 (S3 §II-B: Jacobson's estimator per source).
            k: 4,
            granularity: secs(self.granularity),
        }
    }
}

impl Keyed for CctcpConfig {
    const KEYS: &'static [Key<Self>] = &[
        key!(
            anticipate,
            Kind::Int { min: 0, max: crate::wire::annotation::MAX_ANTICIPATED_UNITS },
            "units listed as anticipated interests in each request (Saino et al. §II-A; 0: none)"
        ),
        key!(per_source, Kind::Bool, "a window and an RTO per expected source (false: one per flow)"),
        key!(virtual_loss, Kind::Bool, "virtual packet loss (Saino et al. §II-C)"),
        key!(pacing, Kind::Bool, "pace each source's requests by SRTT/CWND (Saino et al. eq. 4)"),
        key!(init_cwnd, Kind::Float { min: 1.0, max: 1e6 }, "initial window of every source, units"),
        key!(
            initial_rto,
            Kind::Float { min: 0.001, max: 3600.0 },
            "RTO before the first sample, s (Saino et al. §III: 3)"
        ),
        key!(min_rto, Kind::Float { min: 0.0, max: 3600.0 }, "RTO floor, s"),
        key!(max_rto, Kind::Float { min: 0.001, max: 3600.0 }, "RTO ceiling, s"),
        key!(granularity, Kind::Float { min: 0.0, max: 10.0 }, "RFC 6298 clock granularity G, s: RTO ≥ SRTT + G"),
    ];
}

impl ControllerSpec for CctcpConfig {
    fn name(&self) -> &'static str {
        CctcpConfig::name(self)
    }
    /// CCTCP is its own loss detector: the windows and the timeouts are per source, one state.
    fn build(&self, params: CcParams) -> Built {
        Built::Own(Box::new(Cctcp::new(self.clone(), params)))
    }
    /// Data answering requests that list anticipated units carry the routers' annotations.
    fn data_options_room(&self) -> u16 {
        if self.per_source && self.anticipate > 0 { crate::wire::annotation::ANNOTATION_ROOM } else { 0 }
    }
}

/// What the loss detector saw of the arrival the controller is about to hear of.
#[derive(Clone, Copy, Debug)]
struct Pending {
    unit: u64,
    /// Declared lost before, or answering a re-request: no sample, no growth.
    late: bool,
    /// The source it was expected from.
    expected: usize,
}

/// The controller. See the module docs.
#[derive(Debug)]
pub struct Cctcp {
    cfg: CctcpConfig,
    sources: SourceTable,
    locations: Locations,
    timers: UnitTimers,
    /// The source that served a unit without `CACHED`.
    origin: Option<usize>,
    pending: Option<Pending>,
    /// Virtual losses declared (S3 §II-C), and the sources they reduced.
    pub virtual_losses: u64,
}

impl Cctcp {
    pub fn new(cfg: CctcpConfig, _params: CcParams) -> Self {
        // The unknown pseudo-source is beyond every node; one window per flow is at 0 hops.
        let unknown_hops = if cfg.per_source { u8::MAX } else { 0 };
        let sources = SourceTable::new(cfg.rto(), cfg.init_cwnd, unknown_hops);
        Cctcp {
            cfg,
            sources,
            locations: Locations::default(),
            timers: UnitTimers::default(),
            origin: None,
            pending: None,
            virtual_losses: 0,
        }
    }

    /// The source `unit` is expected from now (S3 §II-A, §II-D).
    pub fn expected(&self, unit: u64) -> usize {
        if !self.cfg.per_source {
            return UNKNOWN;
        }
        self.locations.get(unit).or(self.origin).unwrap_or(UNKNOWN)
    }

    /// The window source `ix` is allowed: the unknown pseudo-source's is 1 (S3 §II-D 1).
    fn window(&self, ix: usize) -> u64 {
        if self.cfg.per_source && ix == UNKNOWN { 1 } else { self.sources.get(ix).cwnd.max(1.0) as u64 }
    }

    /// The source a Data's server is (the flow, without per-source state).
    fn source_of(&mut self, node: NodeId, hops: u8, cached: bool) -> usize {
        if !self.cfg.per_source {
            return UNKNOWN;
        }
        let ix = self.sources.index(node, hops);
        if !cached && ix != UNKNOWN {
            self.origin = Some(ix);
        }
        ix
    }

    /// A loss charged to `e` (timeout, late arrival, virtual loss).
    fn loss(&mut self, e: usize, sent_at: Time, now: Time) {
        self.sources.on_loss(e, sent_at, now, self.cfg.per_source);
    }

    /// Every source, for tests and traces (index, node, window).
    pub fn sources(&self) -> &SourceTable {
        &self.sources
    }
}

impl Controller for Cctcp {
    fn name(&self) -> &'static str {
        self.cfg.name()
    }
    fn cwnd(&self) -> u64 {
        // For traces: the windows of the sources units are expected from.
        (0..self.sources.len())
            .filter(|&i| i != UNKNOWN || !self.cfg.per_source)
            .map(|i| self.window(i))
            .sum::<u64>()
            .max(1)
    }
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    fn aggregation(&self) -> u32 {
        1
    }
    fn cwnd_limits(&self) -> bool {
        false // per source, in `admit`
    }
    fn state(&self) -> &'static str {
        let s = self.sources.get(self.origin.unwrap_or(UNKNOWN));
        if s.cwnd < s.ssthresh { "slow_start" } else { "congestion_avoidance" }
    }
    fn anticipation(&self) -> u32 {
        if self.cfg.per_source { self.cfg.anticipate } else { 0 }
    }

    fn admit(&self, unit: u64) -> Option<Time> {
        let ix = self.expected(unit);
        // A unit asked for again: its earlier request no longer counts against the window.
        let own = u64::from(self.timers.get(unit).is_some_and(|a| a.source == ix));
        if self.timers.outstanding(ix).saturating_sub(own) >= self.window(ix) {
            return Some(Time::MAX);
        }
        self.cfg.pacing.then_some(self.sources.get(ix).next_send)
    }

    fn on_request(&mut self, req: &RequestInfo<'_>) -> u64 {
        let Some(&unit) = req.units.first() else { return 0 };
        let ix = self.expected(unit);
        // S3 eq. 4: the next request to this source leaves SRTT/CWND later.
        let s = self.sources.get_mut(ix);
        let gap = s.rtt.srtt().map_or(Duration::ZERO, |r| r.div_f64(s.cwnd.max(1.0)));
        s.next_send = req.now + gap * req.units.len() as u32;
        ix as u64
    }

    fn on_annotated(&mut self, a: &Annotated<'_>) {
        if !self.cfg.per_source {
            return;
        }
        let served = self.source_of(a.source.node, a.source.hops, a.source.cached);
        let elapsed = a.now - a.sent_at;
        for ann in a.annotations {
            if ann.node == a.source.node {
                continue; // the serving cache's own: its RTT is the Data's
            }
            let k = self.sources.index(ann.node, ann.hops);
            if k == UNKNOWN {
                continue;
            }
            // S3 eq. 1: RTT(k) = (T_D − T_I) − (T_D(k) − T_I(k)); no clocks compared.
            let Some(rtt) = elapsed.checked_sub(Duration::from_nanos(ann.time)) else { continue };
            // S3 §II-C: slower than its timeout → a loss at k and beyond, data kept.
            if self.cfg.virtual_loss && self.sources.get(k).rtt.srtt().is_some() && rtt > self.sources.rto(k) {
                self.virtual_losses += 1;
                self.loss(k, a.sent_at, a.now);
            }
            let s = self.sources.get_mut(k);
            s.rtt.on_sample(rtt);
            s.samples += 1;
        }
        // Where the anticipated units are (locate.rs).
        for (i, &unit) in a.anticipated.iter().enumerate().take(64) {
            let holder = a
                .annotations
                .iter()
                .filter(|x| x.held >> i & 1 == 1)
                .min_by_key(|x| x.hops)
                .and_then(|x| self.sources.find(x.node));
            let at = holder.or((!a.source.cached && served != UNKNOWN).then_some(served));
            self.locations.set(unit, at);
        }
    }

    fn on_ack(&mut self, s: &AckSample) {
        let pending = self.pending.take().filter(|p| p.unit == s.unit);
        let late = pending.is_some_and(|p| p.late);
        self.locations.arrived(s.unit);
        if let Some(p) = pending.filter(|p| !p.late) {
            // The source it was expected from answers (through whichever node): its backed-off
            // RTO can go (RFC 6298 §5.7 keeps it until a new sample; the unknown
            // pseudo-source never gets one).
            self.sources.get_mut(p.expected).rtt.clear_backoff();
        }
        // S3 §II-D 2: accounted to the node that actually served it.
        let k = self.source_of(s.source.node, s.source.hops, s.source.cached);
        if late {
            return;
        }
        if let Some(r) = s.rtt {
            let src = self.sources.get_mut(k);
            src.rtt.on_sample(r);
            src.samples += 1;
        }
        if self.cfg.per_source && k == UNKNOWN {
            return; // no table room: nothing to grow
        }
        self.sources.on_delivered(k, self.cfg.per_source);
    }

    fn on_congestion(&mut self, _e: &CongestionEvent) {
        // Timeouts were charged per source in `on_timeout`; Busy names no source.
    }

    fn path_states(&self) -> Vec<PathState> {
        self.sources.iter().map(|(i, _)| self.sources.state(i, self.timers.outstanding(i))).collect()
    }
}

impl LossDetector for Cctcp {
    fn name(&self) -> &'static str {
        "cctcp"
    }

    fn on_request(&mut self, ctx: &mut LossCtx<'_>, units: &[u64], _retransmission: bool) {
        for &u in units {
            let Some(rec) = ctx.window.get(u) else { continue };
            let ix = (rec.cookie as usize).min(self.sources.len() - 1);
            self.timers.arm(u, ctx.now, self.sources.rto(ix), ix);
        }
    }

    fn on_arrival(&mut self, ctx: &mut LossCtx<'_>, a: &Arrival, _in_order: bool) {
        let armed = self.timers.disarm(a.unit);
        let late = a.before.state == UnitState::Lost || a.before.tx > 1;
        let expected = armed.map_or(a.before.cookie as usize, |x| x.source).min(self.sources.len() - 1);
        self.pending = Some(Pending { unit: a.unit, late, expected });
        // A unit that arrives after its timeout fired but before the loss was noticed: the
        // expected source was too slow (S3 §II-B "received after the timeout expiration").
        if let Some(armed) = armed
            && ctx.now > armed.deadline
        {
            self.loss(armed.source, armed.sent_at, ctx.now);
        }
    }

    fn deadline(&self, _view: &LossView<'_>) -> Option<Time> {
        self.timers.next_deadline()
    }

    fn on_timeout(&mut self, ctx: &mut LossCtx<'_>) -> Option<LossKind> {
        let mut any = false;
        while let Some((unit, armed)) = self.timers.pop_expired(ctx.now) {
            // The timeout is the source's as it is now: RTTs grew while the unit was out
            // (a queue filling in slow start) move its deadline too.
            let rto = self.sources.rto(armed.source);
            if ctx.now < armed.sent_at + rto {
                self.timers.arm(unit, armed.sent_at, rto, armed.source);
                continue;
            }
            if ctx.window.declare_lost(unit) {
                ctx.lost.push(unit);
                self.loss(armed.source, armed.sent_at, ctx.now);
                any = true;
            }
        }
        any.then_some(LossKind::Timeout)
    }

    /// The largest RTO of a source with an RTT estimate (the origin's, by eq. 3): what a proof
    /// request (answered by the origin) waits before it is sent again.
    fn rto(&self, _view: &LossView<'_>) -> Option<Duration> {
        let measured = (0..self.sources.len()).filter(|&i| self.sources.get(i).rtt.srtt().is_some());
        measured.map(|i| self.sources.rto(i)).max().or(Some(self.sources.rto(UNKNOWN)))
    }

    fn reset(&mut self) {
        self.timers.clear();
        self.locations.clear();
    }
}

#[cfg(test)]
mod tests;
