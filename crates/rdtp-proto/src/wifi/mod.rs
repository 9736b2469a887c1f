//! Passive WiFi rate estimation (seed 002, "Design Considerations for RINA Congestion
//! Control over WiFi Links"): a host listening to the medium counts the active stations and
//! their throughput and predicts the rate a newcomer will attain, so a transfer can start
//! at that rate instead of probing for it (*informed start*, [`crate::cc::Controller::informed_start`]).
//!
//! * [`mac`] — the 802.11 MAC header of an observed MPDU (one parser for every source);
//! * [`airtime`] — medium time of a frame exchange on 802.11g;
//! * [`estimator`] — the sliding-window estimator: per-station throughput and airtime, the
//!   number of active stations N, the N + 1 rule (S2 §III) and the model's features;
//! * [`model`] — the learned regression (S2 §II, §VI), loaded from a versioned text file.
//!
//! Sources feed [`Observation`]s: the ns-3 monitor trace of a listening node (through the C
//! ABI) and radiotap captures (`rdtp wifi estimate --pcap`, `--iface`).

pub mod airtime;
pub mod estimator;
pub mod mac;
pub mod model;

pub use estimator::{Estimator, EstimatorConfig, Features, Observation, Snapshot, StationStats};
pub use mac::Mac;
pub use model::Model;
