//! Loss recovery: what the receiver measures about the network and how it decides that a unit
//! is lost, as one layer below both the congestion controllers (`cc`) and the
//! receiver (`receiver`), in the way s2n-quic's `recovery/` sits below its connection.
//!
//! * [`window`] — the request window `req_una .. req_nxt`: one record per requested unit
//!   ([`UnitRecord`], [`UnitState`]) and the units waiting to be asked for again;
//! * [`rtt`] — RTT estimation and the retransmission timeout (RFC 6298, [`RttEstimator`]);
//! * [`rate`] — delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation);
//! * [`samples`] — what recovery hands upwards: [`AckSample`], [`RateSample`], [`LossKind`],
//!   [`CongestionEvent`], [`CaState`];
//! * [`loss`] — the [`LossDetector`] trait and its context, and the default detector,
//!   [`StandardLoss`] (Liu et al.'s fast re-request and the RFC 6298 timer);
//! * the other detectors a controller may choose: [`ndnget`] (ndnget's per-unit timers,
//!   [`NdngetTimers`]) and [`bbr_cd`] (BBR-CD's `T + RTprop + α·δ`, Hu et al.); ICP and CCTCP
//!   are their own detectors, in `cc/icp.rs` and `cc/cctcp/`, because their windows and timers
//!   are one state;
//! * [`unit_timers`] — the per-unit timer container those detectors share ([`UnitTimers`]);
//! * [`loss_window`] — the loss window after a retransmission timeout (RFC 5681 §3.1).
//!
//! # Layer rule
//!
//! Inside the core: `wire` < `recovery` < `cc` < `receiver` / `router` / `server`. This module
//! imports only the leaves (`time`, `node`); it must not import `cc`, `receiver` or anything
//! above them, so that a controller can be written against it without knowing the receiver,
//! and a detector without knowing any controller. A controller's own parameters reach a
//! detector only as values in [`LossCtx`] (e.g. BBR-CD's loss threshold). Like the whole
//! core it does no I/O: time comes in as arguments.

pub mod bbr_cd;
pub mod loss;
pub(crate) mod loss_window;
pub mod ndnget;
pub mod rate;
pub mod rtt;
pub mod samples;
pub mod unit_timers;
pub mod window;

pub use bbr_cd::BbrCdLoss;
pub use loss::{LossCtx, LossDetector, LossView, StandardLoss};
pub use ndnget::NdngetTimers;
pub use rate::{RateSampler, SendSnapshot};
pub use rtt::{RtoConfig, RttEstimator};
pub use samples::{AckSample, CaState, CongestionEvent, LossKind, RateSample};
pub use unit_timers::UnitTimers;
pub use window::{Arrival, UnitRecord, UnitState, Window};
