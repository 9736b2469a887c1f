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
//! * **Loss detection** — a controller is built together with the way its losses are found
//!   ([`Built`], from its [`ControllerSpec::build`]; the detectors are in [`crate::recovery`]):
//!   the receiver's default (Liu et al.'s fast re-request and the RFC 6298 timer), a detector
//!   the controller comes with (BBR-CD's `T + RTprop + α·δ`, Hu et al.; ndnget's per-unit
//!   timers), or the controller itself ([`OwnLoss`]: when the windows and the timeouts are
//!   one state, as CCTCP's per-source RTOs and ICP's timer). What a detector needs of the
//!   controller it reads from [`Controller::loss_threshold`], copied into every
//!   [`crate::recovery::LossCtx`].
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
//! * **Request order** — [`Controller::new_units_first`] lets first-time requests go before
//!   re-requests (seed 001's BBR-CD); by default lost units are asked for first.
//!
//! The controllers are listed in one table, [`registry::CONTROLLERS`] (`rdtp fetch --cc help`
//! prints it). A [`CcConfig`] holds any controller's configuration as a [`ControllerSpec`]
//! trait object; it is parsed from and written as a spec string such as `bbr:probe_gain=1.5`
//! ([`spec`]), each controller declaring its keys next to its config.
//!
//! # Adding a controller
//!
//! One folder (or file) here and one row in [`registry::CONTROLLERS`]: the folder holds the
//! config struct with its keys ([`spec::Keyed`]), its `impl ControllerSpec` (name, how to
//! build it and with which loss detection) and the `impl Controller`. Nothing else names
//! controllers: the receiver, the C ABI, the front ends and the tests that run every
//! controller all go through the registry. Controllers import [`crate::recovery`] and never
//! `receiver`.

pub mod aggregation;
pub mod aimd;
pub mod bbr;
pub mod bbr3;
pub mod bbr_cd;
pub mod bbr_common;
pub mod cbr;
pub mod cctcp;
mod config;
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
pub use config::{CcConfig, ControllerSpec};

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
    /// The loss threshold this controller publishes for its loss detector, if it has one now
    /// (BBR-CD's `RTprop + α·δ`, Hu et al. §III-B). The receiver copies it into every call
    /// of the detector ([`crate::recovery::LossCtx::threshold`]); `None` (the default): none.
    fn loss_threshold(&self) -> Option<Duration> {
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
    /// Per-source state, if the controller keeps state per source (for traces and tests).
    fn path_states(&self) -> Vec<PathState> {
        Vec::new()
    }
}

/// A controller that is its own loss detector (its windows and timeouts are one state: ICP,
/// CCTCP). Implemented by every type that is both.
pub trait OwnLoss: Controller + LossDetector {}

impl<T: Controller + LossDetector> OwnLoss for T {}

/// A controller with the loss detection it uses: what [`ControllerSpec::build`] gives, the one
/// place a controller chooses how its losses are found.
#[derive(Debug)]
pub enum Built {
    /// The receiver's default detector ([`crate::recovery::StandardLoss`]: Liu et al.'s fast
    /// re-request and the RFC 6298 timer).
    Standard(Box<dyn Controller>),
    /// A detector the controller comes with (BBR-CD's, ndnget's per-unit timers).
    Detector(Box<dyn Controller>, Box<dyn LossDetector>),
    /// The controller is its own detector.
    Own(Box<dyn OwnLoss>),
}

impl Built {
    /// The controller.
    pub fn controller(&self) -> &dyn Controller {
        match self {
            Built::Standard(cc) | Built::Detector(cc, _) => cc.as_ref(),
            Built::Own(cc) => cc.as_ref(),
        }
    }
    /// The controller, to drive it.
    pub fn controller_mut(&mut self) -> &mut dyn Controller {
        match self {
            Built::Standard(cc) | Built::Detector(cc, _) => cc.as_mut(),
            Built::Own(cc) => cc.as_mut(),
        }
    }
    /// The name of the detector (`standard` for the receiver's default).
    pub fn loss_detector_name(&self) -> &'static str {
        match self {
            Built::Standard(_) => crate::recovery::StandardLoss::NAME,
            Built::Detector(_, d) => d.name(),
            Built::Own(cc) => LossDetector::name(cc.as_ref()),
        }
    }
    /// Whether the controller is its own loss detector.
    pub fn owns_loss_detection(&self) -> bool {
        matches!(self, Built::Own(_))
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
