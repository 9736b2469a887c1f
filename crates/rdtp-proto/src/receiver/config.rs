//! Receiver configuration, and its key table: every option a host may set is a key of the
//! receiver spec (`rto_k=8,idle_timeout=30s`), parsed and checked here once for every front
//! end (`rdtp fetch --receiver`/`--set`, scenario and testbed files' `config`,
//! `rdtp_receiver_new_from_spec`, the ns-3 consumer's `Config` attribute; see
//! [`crate::spec`]). The controller keeps its own spec (`cc`), whose syntax has commas.
//!
//! **Adding a receiver option**: its field and default here, one `key!` line in
//! [`ReceiverConfig::KEYS`], and the code where it acts; every front end then takes it.

use core::time::Duration;

use crate::cc::CcConfig;
use crate::recovery::RtoConfig;
use crate::spec::{self, ConfigError, Key, Keyed, Kind, key};
use crate::wire::{DEFAULT_UNIT, MAX_UNIT, MIN_UNIT};

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
    /// Give up when nothing valid has come from the server for this long while waiting (time
    /// nothing was asked of it, or the receiver was not run, does not count: "The idle
    /// timeout" in [`super`]'s docs).
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
    /// Most units requested and not yet answered, whatever the controller's window allows
    /// (`None`: no cap but the window's). A cap for hosts that must bound what one fetch
    /// puts in flight, e.g. in front of a small router queue.
    pub max_inflight: Option<u64>,
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
            max_inflight: None,
        }
    }
}

const HOUR: Duration = Duration::from_secs(3600);

impl Keyed for ReceiverConfig {
    const KEYS: &'static [Key<ReceiverConfig>] = &[
        key!(
            unit,
            Kind::Int { min: MIN_UNIT as u64, max: MAX_UNIT as u64 },
            "payload bytes per Data packet (1402 fits a 1500-byte MTU over IPv4)"
        ),
        key!(max_aggregation, Kind::Int { min: 1, max: u32::MAX as u64 }, "aggregation limit L (Liu et al. §4.2)"),
        key!(
            reorder_threshold,
            Kind::Int { min: 1, max: u32::MAX as u64 },
            "out-of-order arrivals that declare a unit lost (Liu et al. §3.4)"
        ),
        key!("rto_initial" => rto.initial, Kind::Duration { min: Duration::from_nanos(1), max: HOUR }, "RTO before the first RTT sample (RFC 6298: 1 s)"),
        key!("rto_min" => rto.min, Kind::Duration { min: Duration::ZERO, max: HOUR }, "floor of the RTO (RFC 6298: 1 s; Liu et al. and ndnget: 200 ms)"),
        key!("rto_max" => rto.max, Kind::Duration { min: Duration::from_nanos(1), max: HOUR }, "ceiling of the RTO's back-off, and of BBR-CD's per-unit back-off (ndnget: 60 s)"),
        key!("rto_k" => rto.k, Kind::Int { min: 0, max: u32::MAX as u64 }, "RTTVAR multiplier K of RTO = SRTT + max(G, K·RTTVAR) (RFC 6298: 4; ndnget: 8)"),
        key!("rto_granularity" => rto.granularity, Kind::Duration { min: Duration::ZERO, max: HOUR }, "clock granularity G of RFC 6298 §2.3: the least margin of the RTO above SRTT"),
        key!(recv_window, Kind::Size { min: 1, max: u64::MAX }, "most bytes requested but not yet read (flow control)"),
        key!(
            idle_timeout,
            Kind::Duration { min: Duration::from_millis(1), max: Duration::from_secs(86_400) },
            "give up after this long without a valid answer while waiting"
        ),
        key!(
            pacing_credit,
            Kind::Duration { min: Duration::ZERO, max: Duration::from_secs(1) },
            "how far a late caller may catch up on pacing"
        ),
        key!(max_ranges_per_request, Kind::Int { min: 1, max: u16::MAX as u64 }, "most byte ranges in one re-request"),
        key!(verify, Kind::Bool, "check the delivered object against its EID (BLAKE3)"),
        key!(trace, Kind::Bool, "emit RTT-sample and congestion trace events"),
        key!(seed, Kind::Int { min: 0, max: u64::MAX }, "seed of all randomness of the receiver and its controller"),
        key!(
            max_request_bytes,
            Kind::Size { min: 1, max: u64::MAX },
            "most Data bytes (headers included) one request asks for (a server's reply cap)"
        ),
        key!(
            max_inflight,
            Kind::Int { min: 0, max: u64::MAX },
            "most units requested and not yet answered, whatever the window (0: no cap)"
        ),
    ];
}

impl ReceiverConfig {
    /// Set the keys of `spec` (`key=value,...`; `receiver_help()` lists them), in order.
    pub fn apply_spec(&mut self, spec: &str) -> Result<(), ConfigError> {
        spec::apply(self, "receiver", spec)
    }

    /// The default configuration with `spec` applied.
    pub fn from_spec(spec: &str) -> Result<ReceiverConfig, ConfigError> {
        let mut c = ReceiverConfig::default();
        c.apply_spec(spec)?;
        Ok(c)
    }

    /// The keys whose values differ from `base`'s (`rto_k=8,idle_timeout=30s`; empty if
    /// none): applied to `base` they give this configuration back, but for the controller
    /// and the address token, which are not keys.
    pub fn to_spec_from(&self, base: &ReceiverConfig) -> String {
        spec::changed(self, base)
    }

    /// [`ReceiverConfig::to_spec_from`] the default.
    pub fn to_spec(&self) -> String {
        self.to_spec_from(&ReceiverConfig::default())
    }

    /// Every key with its default, meaning and accepted values (`rdtp fetch --receiver help`,
    /// `rdtp_receiver_help()`).
    pub fn help() -> String {
        spec::help(
            "Receiver specs: KEY=VALUE[,...], e.g. rto_k=8,idle_timeout=30s,recv_window=16MiB.\n\
             Keys not given keep the defaults shown (the controller has its own spec, --cc).\n",
            &ReceiverConfig::default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keys_set_fields_and_print_back() {
        let c = ReceiverConfig::from_spec("rto_k=8, idle_timeout=30s,recv_window=16MiB,rto_min=1s,max_inflight=100")
            .unwrap();
        assert_eq!(c.rto.k, 8);
        assert_eq!(c.idle_timeout, Duration::from_secs(30));
        assert_eq!(c.recv_window, 16 << 20);
        assert_eq!(c.rto.min, Duration::from_secs(1));
        assert_eq!(c.max_inflight, Some(100));
        assert_eq!(c.to_spec(), "rto_min=1s,rto_k=8,recv_window=16MiB,idle_timeout=30s,max_inflight=100");
        assert_eq!(ReceiverConfig::from_spec(&c.to_spec()).unwrap(), c);
        assert_eq!(ReceiverConfig::default().to_spec(), "");
        assert_eq!(ReceiverConfig::from_spec("").unwrap(), ReceiverConfig::default());
    }

    #[test]
    fn bad_specs_say_what_is_accepted() {
        let e = |s: &str| ReceiverConfig::from_spec(s).unwrap_err().to_string();
        assert_eq!(e("unit=10"), "receiver: unit=10: the value must be an integer in 64..=65437");
        assert!(
            e("rto_kk=1").starts_with("receiver has no key 'rto_kk' (its keys: unit, max_aggregation,"),
            "{}",
            e("rto_kk=1")
        );
        assert_eq!(
            e("idle_timeout=30"),
            "receiver: idle_timeout=30: the value must be a duration in 1ms..=86400s (with its unit: s, ms, us, ns)"
        );
        assert_eq!(e("verify=yes"), "receiver: verify=yes: the value must be true or false");
    }

    #[test]
    fn help_lists_every_key() {
        let h = ReceiverConfig::help();
        for k in ReceiverConfig::KEYS {
            assert!(h.contains(&format!("  {}=", k.name)), "{} missing:\n{h}", k.name);
        }
        assert!(h.contains("rto_min=200ms"), "{h}");
        assert!(h.contains("recv_window=64MiB"), "{h}");
    }

    proptest! {
        /// Any values of any keys, in range, survive `to_spec` and `from_spec`.
        #[test]
        fn specs_round_trip(unit in MIN_UNIT..=MAX_UNIT, agg in 1u32.., k in 0u32.., rto_ms in 1u64..3_600_000,
                            window in 1u64.., idle_us in 1_000u64..86_400_000_000, verify: bool, seed: u64,
                            inflight: u64, granularity_ns in 0u64..3_600_000_000_000) {
            let c = ReceiverConfig {
                unit,
                max_aggregation: agg,
                rto: RtoConfig { min: Duration::from_millis(rto_ms), k, granularity: Duration::from_nanos(granularity_ns), ..RtoConfig::default() },
                recv_window: window,
                idle_timeout: Duration::from_micros(idle_us),
                verify,
                seed,
                max_inflight: Some(inflight).filter(|&n| n != 0),
                ..ReceiverConfig::default()
            };
            prop_assert_eq!(ReceiverConfig::from_spec(&c.to_spec()).unwrap(), c);
        }
    }
}
