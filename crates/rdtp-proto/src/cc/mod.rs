//! Congestion controllers for the receiver.
//!
//! A controller owns the three knobs that shape requesting (seed 000 §3.5, §4.2):
//! the congestion window (units that may be outstanding), the pacing rate (bytes of
//! requested data per second) and the aggregation count (units per request, eq. 8).
//! The receiver feeds it one [`AckSample`] per arriving unit and a [`CongestionEvent`]
//! when it detects loss; it never changes the knobs itself.
//!
//! # What a controller may own besides the knobs
//!
//! * **Loss detection** — [`Controller::loss_detector`] may hand the receiver its own
//!   [`LossDetector`] (seed 001's BBR-CD: lost when not received by T + RTprop + α·δ);
//!   otherwise the receiver uses seed 000's (fast re-request + RFC 6298 timer).
//! * **Per-request data** — [`Controller::on_request`] sees the units of every request and
//!   returns a cookie the receiver keeps with them and hands back in [`AckSample::cookie`]
//!   (seed 003's CCTCP records which source it expects to serve each unit).
//! * **Per-source state** — every [`AckSample`] says who served the unit
//!   ([`AckSample::source`]: node, router hops, cached or origin), so a controller can keep a
//!   window and an RTO per source (CCTCP) or drop samples from a cache (BBR-CD).
//! * **Release times** — [`Controller::release_time`] may hold the next request until an
//!   instant of its choosing (an inter-data-gap pacer), on top of the rate pacing;
//!   [`Controller::admit`] may hold back a particular unit (CCTCP: until the window and the
//!   pacing of the source expected to serve it allow, seed 003 eq. 4).
//! * **Anticipated interests** — [`Controller::anticipation`] makes the receiver list the
//!   units it will ask for next in every request, and [`Controller::on_annotated`] hands the
//!   controller what caching routers said about them on the way (seed 003 §II-A).
//! * **Being its own loss detector** — [`Controller::own_loss_detector`]: when the windows
//!   and the timeouts are one state (CCTCP's per-source RTOs, ICP's timer), the controller
//!   implements [`LossDetector`] itself.
//!
//! * **Request order** — [`Controller::new_units_first`] lets first-time requests go before
//!   re-requests (seed 001's BBR-CD); by default lost units are asked for first.
//!
//! The controllers (`bbr`, `bbr-wifi`, `bbrp`, `bbr3`, `aimd`, `fixed`; seed 001's `bbr-orig`,
//! `bbr-cd`, `sirc`, `cubic`; seed 003's `cctcp`, `cctcp-single`, `icp`) are listed in one table,
//! [`registry::CONTROLLERS`]; a [`CcConfig`] is parsed from and written as a spec string such
//! as `bbr:probe_gain=1.5` ([`spec`]), each controller declaring its keys next to its config.

pub mod aggregation;
pub mod aimd;
pub mod bbr;
pub mod bbr3;
pub mod bbr_cd;
pub mod cctcp;
pub mod cubic;
pub mod fixed;
pub mod icp;
mod ndnget;
pub mod registry;
pub mod sirc;
pub mod spec;
pub mod windowed_filter;

use core::fmt;
use core::time::Duration;

use crate::node::{NodeId, ServedBy};
use crate::time::Time;
use crate::wire::annotation::Annotation;

pub use crate::recovery::{AckSample, CaState, CongestionEvent, LossDetector, LossKind, RateSample};
pub use aggregation::aggregation_count;

/// A request about to leave.
#[derive(Clone, Copy, Debug)]
pub struct RequestInfo<'a> {
    pub now: Time,
    /// The units it asks for, in order.
    pub units: &'a [u64],
    /// They were asked for before (lost).
    pub retransmission: bool,
}

/// What a Data said about anticipated interests (seed 003 §II-A): it answered a request
/// that listed units, and routers on the way annotated which of them they hold. Given to
/// [`Controller::on_annotated`] only when the Data carries the nonce of the very request it
/// answers (so the times are this request's), before [`Controller::on_ack`] for the unit.
#[derive(Clone, Copy, Debug)]
pub struct Annotated<'a> {
    /// `T_D`: when the Data arrived (receiver's clock).
    pub now: Time,
    /// The unit that arrived.
    pub unit: u64,
    /// `T_I`: when its request left (receiver's clock).
    pub sent_at: Time,
    /// Who served it.
    pub source: ServedBy,
    /// The units the request listed, in order (bit `i` of an annotation's bitmap is
    /// `anticipated[i]`).
    pub anticipated: &'a [u64],
    /// The returned annotations (`time` = `T_D(k) − T_I(k)`, `hops` = routers between `k`
    /// and the receiver), in the order routers added them.
    pub annotations: &'a [Annotation],
}

/// One source's congestion state, for traces and tests ([`Controller::path_states`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathState {
    /// The node (origin or router); [`NodeId::UNKNOWN`] for units whose source is unknown.
    pub node: NodeId,
    /// Routers between it and the receiver, as last seen.
    pub hops: u8,
    /// Window, units.
    pub cwnd: f64,
    pub ssthresh: f64,
    pub srtt: Option<Duration>,
    /// The retransmission timeout units expected from it get.
    pub rto: Duration,
    /// Units requested from it and outstanding.
    pub inflight: u64,
    /// RTT samples it took (from its own Data and, by seed 003 eq. 1, from annotations).
    pub samples: u64,
}

/// A congestion controller. See the module docs; `cwnd` is in units.
pub trait Controller: fmt::Debug + Send {
    /// Algorithm name (`bbr`, `bbr-wifi`, `aimd`, `bbr-cd`, …; a registry name).
    fn name(&self) -> &'static str;
    /// Congestion window, in units.
    fn cwnd(&self) -> u64;
    /// Request pacing rate in bytes per second; `None` = not paced (window-clocked).
    fn pacing_rate(&self) -> Option<f64>;
    /// Units to ask for in one request (seed 000 eq. 8).
    fn aggregation(&self) -> u32;
    /// Whether the window currently limits requesting (`bbr-wifi` lifts it in ProbeBW,
    /// seed 000 §4.3).
    fn cwnd_limits(&self) -> bool {
        true
    }
    /// Current state for traces (e.g. `startup`, `probe_bw`, `slow_start`).
    fn state(&self) -> &'static str;
    /// A request for `units` units is about to go out; `inflight` was outstanding before
    /// it and `app_limited` tells whether the receiver had been application-limited.
    fn on_send(&mut self, now: Time, units: u64, inflight: u64, app_limited: bool) {
        let _ = (now, units, inflight, app_limited);
    }
    /// One unit arrived.
    fn on_ack(&mut self, sample: &AckSample);
    /// Loss was detected.
    fn on_congestion(&mut self, event: &CongestionEvent);
    /// A request for `req.units` is about to go out (after [`Controller::on_send`]). The
    /// returned cookie is kept with those units and comes back in [`AckSample::cookie`].
    fn on_request(&mut self, req: &RequestInfo<'_>) -> u64 {
        let _ = req;
        0
    }
    /// The earliest instant the next request may leave, if the controller paces by release
    /// time (besides [`Controller::pacing_rate`]). `None`: no constraint.
    fn release_time(&self) -> Option<Time> {
        None
    }
    /// A loss detector to use instead of the receiver's default (seed 000's fast re-request
    /// and RFC 6298 timer). Called once, when the receiver is created.
    fn loss_detector(&mut self) -> Option<Box<dyn LossDetector>> {
        None
    }
    /// Whether the controller sets its window during loss recovery itself, as Linux congestion
    /// controls with their own `cong_control` do (`bbr`: packet conservation, `cwnd = inflight
    /// + 1` on a timeout). Otherwise the receiver limits the window after a timeout: a loss
    /// window of in-flight + 1 that grows by one per arriving unit (RFC 5681 §3.1, Linux
    /// `tcp_enter_loss`) until it reaches the controller's window.
    fn controls_recovery(&self) -> bool {
        false
    }
    /// Whether new units go before re-requests of lost ones. `false` (seed 000 §3.1, ndnget):
    /// lost units are asked for first. `true` (seed 001's BBR-CD, §IV-D: it "prioritizes the
    /// transmission of the initial interests over retransmissions"): lost units wait until no
    /// new unit may be asked for (the end of the object, or the receive window is full).
    /// Everything after a lost unit then waits for it: on an object longer than the receive
    /// window's worth of the transfer, nothing can be read in order until the window fills
    /// (64 MiB by default: 54 s at 10 Mbit/s; `rdtp-harness` tests `head_of_line.rs`).
    fn new_units_first(&self) -> bool {
        false
    }
    /// Whether the pacer recomputes the next request's slot from the current pacing rate
    /// after every arrival and loss event (seed 001's BBR-CD, S1 §III-B: "calculates the next
    /// interest sending time after a data arrival or an interest timeout event"); the slot
    /// only ever moves earlier. `false`: the slot is fixed when a request leaves (seed 000).
    fn retime_pacing(&self) -> bool {
        false
    }
    /// Whether the receiver should mark itself application-limited now (BBR does during
    /// ProbeRTT so that its low-rate samples do not lower the bandwidth estimate).
    fn wants_app_limited(&self) -> bool {
        false
    }
    /// Informed start (seed 002 §II: "an *informed* [answer], instead of having to define a
    /// constant"): before the first request, the receiver learned that about
    /// `bytes_per_sec` of payload is attainable (e.g. [`crate::wifi`]'s prediction). A
    /// controller that can use it starts from it and returns true (BBR: bottleneck bandwidth
    /// seeded, straight to ProbeBW; window-based ones: the equivalent window once an RTT is
    /// known); the default ignores it and keeps its normal start.
    fn informed_start(&mut self, now: Time, bytes_per_sec: f64) -> bool {
        let _ = (now, bytes_per_sec);
        false
    }
    /// Anticipated interests (seed 003 §II-A): list this many units after each request's own
    /// (the next ones not yet requested) in the request, so caching routers can say which
    /// they hold. 0 (the default): none.
    fn anticipation(&self) -> u32 {
        0
    }
    /// A Data carried its request's anticipated interests and the routers' annotations back
    /// (see [`Annotated`]).
    fn on_annotated(&mut self, report: &Annotated<'_>) {
        let _ = report;
    }
    /// Whether `unit` may be requested now as far as this controller's own per-unit rules go:
    /// `None` yes, `Some(t)` not before `t` (`Time::MAX`: not until a unit arrives or is
    /// declared lost). The default never holds a unit back.
    fn admit(&self, unit: u64) -> Option<Time> {
        let _ = unit;
        None
    }
    /// The controller as its own loss detector, if it is one (then the receiver uses it
    /// instead of [`Controller::loss_detector`]'s or the default; see [`LossDetector`]).
    fn own_loss_detector(&mut self) -> Option<&mut dyn LossDetector> {
        None
    }
    /// The same, to read.
    fn own_loss_detector_ref(&self) -> Option<&dyn LossDetector> {
        None
    }
    /// Per-source state, if the controller keeps state per source (for traces and tests).
    fn path_states(&self) -> Vec<PathState> {
        Vec::new()
    }
}

/// Which controller to build, with its parameters: `"bbr:probe_gain=1.5".parse()`, and
/// `Display` writes the canonical spec back ([`spec`]).
#[derive(Clone, Debug, PartialEq)]
pub enum CcConfig {
    Bbr(bbr::BbrConfig),
    Bbr3(bbr3::Bbr3Config),
    Aimd(aimd::AimdConfig),
    Fixed(fixed::FixedConfig),
    BbrCd(bbr_cd::BbrCdConfig),
    Sirc(sirc::SircConfig),
    Cubic(cubic::CubicConfig),
    Cctcp(cctcp::CctcpConfig),
    Icp(icp::IcpConfig),
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig::Bbr(bbr::BbrConfig::default())
    }
}

/// Parameters every controller shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcParams {
    /// Payload bytes per unit.
    pub unit: u16,
    /// Aggregation limit L (seed 000 §4.2: 64).
    pub max_aggregation: u32,
    /// Seed for the controller's randomness (BBR's ProbeBW start phase).
    pub seed: u64,
}
