//! The sample types recovery hands upwards: what one arriving unit says ([`AckSample`], with
//! its [`RateSample`]), what a loss episode is ([`LossKind`], [`CongestionEvent`]) and the
//! receiver's loss-recovery state ([`CaState`]).
//!
//! The receiver fills them in; the controllers in `cc` read them. They are defined here, below
//! both, so that neither has to import the other's internals for them.

use core::time::Duration;

use crate::node::ServedBy;
use crate::time::Time;

/// Loss-recovery state of the receiver, as TCP's `icsk_ca_state` (Open/Recovery/Loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// No loss being repaired.
    Open,
    /// Repairing losses found by fast re-request (seed 000 §3.4).
    Recovery,
    /// Repairing after a retransmission timeout (seed 000 §3.3).
    Loss,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation; seed 000 eq. 4).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Units delivered between the send of the acked unit's request and now.
    pub delivered: u64,
    /// `max(send_elapsed, ack_elapsed)`; `None` if the sample is invalid (shorter than
    /// the minimum RTT, or no prior delivery).
    pub interval: Option<Duration>,
    /// `C.delivered` when the acked unit was requested.
    pub prior_delivered: u64,
    /// The acked unit was requested while the receiver was application-limited.
    pub is_app_limited: bool,
}

impl RateSample {
    /// Delivery rate in units per second, if valid.
    pub fn units_per_sec(&self) -> Option<f64> {
        let iv = self.interval?.as_secs_f64();
        (iv > 0.0).then(|| self.delivered as f64 / iv)
    }
}

/// Everything a controller learns from one arriving unit.
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    pub now: Time,
    /// The unit that arrived.
    pub unit: u64,
    /// Who served it.
    pub source: ServedBy,
    /// What the controller's `on_request` returned for the request this unit answers.
    pub cookie: u64,
    /// Units delivered so far (`C.delivered`), including this one.
    pub delivered: u64,
    /// Units newly delivered by this event (1: each unit is its own event).
    pub acked: u64,
    pub rate: RateSample,
    /// RTT sample, if this arrival produced one (seed 000 eq. 5; Karn's rule applies).
    pub rtt: Option<Duration>,
    /// Smoothed RTT (RFC 6298), once there is one.
    pub srtt: Option<Duration>,
    /// Units newly declared lost while processing this arrival.
    pub losses: u64,
    /// Units declared lost so far, in total.
    pub lost_total: u64,
    /// Units outstanding before and after this arrival.
    pub prior_inflight: u64,
    pub inflight: u64,
    pub ca_state: CaState,
}

/// What kind of loss was detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    /// Fast re-request after `reorder_threshold` out-of-order arrivals (seed 000 §3.4);
    /// reported once, when the receiver enters [`CaState::Recovery`].
    Fast,
    /// Retransmission timeout (seed 000 §3.3); reported at every expiry.
    Timeout,
}

/// A loss episode.
#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    pub now: Time,
    pub kind: LossKind,
    /// Units outstanding after the lost ones were taken out.
    pub inflight: u64,
    /// Data has arrived from beyond the point of the previous reduction: ndnget's
    /// "conservative window adaptation" allows one decrease per window.
    pub first_in_window: bool,
}
