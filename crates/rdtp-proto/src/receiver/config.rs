//! Receiver configuration.

use core::time::Duration;

use crate::cc::CcConfig;
use crate::recovery::RtoConfig;
use crate::wire::DEFAULT_UNIT;

/// Everything that shapes a receiver. `Default` gives seed 000's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceiverConfig {
    /// The congestion controller.
    pub cc: CcConfig,
    /// Payload bytes per Data packet (`UNIT_MSS`); see [`crate::wire::unit_for_mtu`].
    pub unit: u16,
    /// Aggregation limit L (seed 000 §4.2).
    pub max_aggregation: u32,
    /// Out-of-order arrivals that declare a unit lost (seed 000 §3.4: 6).
    pub reorder_threshold: u32,
    /// RTO bounds (RFC 6298; seed 000 §3.3).
    pub rto: RtoConfig,
    /// Most bytes requested but not yet read by the application (flow control).
    pub recv_window: u64,
    /// Give up when nothing valid has come from the server for this long while waiting.
    pub idle_timeout: Duration,
    /// How far a late caller may catch up on pacing (see [`super::pacer`]).
    pub pacing_credit: Duration,
    /// Most byte ranges in one re-request.
    pub max_ranges_per_request: usize,
    /// Check the delivered object against its EID (BLAKE3).
    pub verify: bool,
    /// Emit [`super::Event::RttSample`] and [`super::Event::Congestion`] trace events.
    pub trace: bool,
    /// Seed for all randomness the receiver and its controller use.
    pub seed: u64,
    /// An address token the first hop issued earlier (see [`super::Receiver::address_token`]):
    /// with it the first requests are answered at once, without a Retry round trip.
    pub address_token: Option<Vec<u8>>,
    /// Most Data bytes (headers included) one request may ask for: a server answers larger
    /// requests with `TooLarge` ([`crate::wire::DEFAULT_MAX_REPLY_BYTES`]).
    pub max_request_bytes: u64,
}

impl Default for ReceiverConfig {
    fn default() -> Self {
        ReceiverConfig {
            cc: CcConfig::default(),
            unit: DEFAULT_UNIT,
            max_aggregation: 64,
            reorder_threshold: 6,
            rto: RtoConfig::default(),
            recv_window: 64 << 20,
            idle_timeout: Duration::from_secs(10),
            pacing_credit: Duration::from_millis(1),
            max_ranges_per_request: 32,
            verify: true,
            trace: false,
            seed: 0,
            address_token: None,
            max_request_bytes: crate::wire::DEFAULT_MAX_REPLY_BYTES,
        }
    }
}
