//! The router's configuration, and its key table: every option a host may set is a key of
//! the router spec (`cs_policy=lfu,cs_units=1000,pit_size=4096,strategy=asf`), parsed and
//! checked here once for every front end (`rdtp route --router`/`--set`, scenario and
//! testbed files' `config`, `rdtp_router_new_from_spec`, the ns-3 router's `Config`
//! attribute; see [`crate::spec`]). Routes (the FIB) are not keys: hosts add them by address.
//!
//! **Adding a router option**: its field and default here, one `key!` line in
//! [`RouterConfig::KEYS`], and the code where it acts; every front end then takes it.

use core::time::Duration;

use super::cs::{self, CsConfig};
use super::fib::Fib;
use super::limits::SourceLimits;
use super::strategy::{RetxSuppression, StrategyName};
use super::verify::VerifyConfig;
use crate::node::NodeId;
use crate::spec::{self, ConfigError, Key, Keyed, Kind, key};
use crate::token::ValidationConfig;
use crate::wire::DEFAULT_MAX_REPLY_BYTES;

/// Everything that shapes a router.
#[derive(Clone, Debug)]
pub struct RouterConfig {
    /// This router's node id, named in Data served from its store and Nacks it sends.
    pub id: NodeId,
    /// Where requests go.
    pub fib: Fib,
    /// The content store: capacity, replacement and admission. By default 65 536 units or
    /// [`CsConfig::DEFAULT_CAPACITY_BYTES`] (256 MiB, each unit weighing its payload and
    /// [`super::CACHED_UNIT_OVERHEAD`]), whichever is reached first, `lru`, admission
    /// `always`: the simulations' routers (the papers' LRU caches). `rdtp route` starts from
    /// a different store: as many default-size units as its byte budget holds, and
    /// admission `full:0.125`, so that an object larger than the store is still mostly
    /// served from it on a second fetch ([`super::cs::Admission::WhenFull`]).
    pub cs: CsConfig,
    /// Most units pending at once; beyond, requests for new units get `Busy`.
    pub pit_capacity: usize,
    /// How long a pending entry lives after its last request (NDN's Interest lifetime).
    pub lifetime: Duration,
    /// A request for a pending unit (from anyone, re-request or not) is forwarded again
    /// only if the unit was last forwarded at least this long ago (NFD's retransmission
    /// suppression): the interval, or the first interval of an exponential
    /// [`RouterConfig::retx`].
    pub retx_suppression: Duration,
    /// Whether the suppression interval stays fixed or grows with each re-forwarding.
    pub retx: RetxSuppression,
    /// The forwarding strategy, by name ([`super::strategy`]): which of a route's next hops a
    /// request goes to.
    pub strategy: StrategyName,
    /// Most downstreams waiting for one unit.
    pub max_waiting: usize,
    /// Most units one request may ask for (as the server's limit).
    pub max_units_per_request: u32,
    /// Most bytes of Data one request may be answered with (as the server's limit).
    pub max_reply_bytes: u64,
    /// Validation of downstream addresses (tokens, the 3× limit toward unvalidated ones).
    pub validation: ValidationConfig,
    /// Seed of the router's tags and of the store's randomness.
    pub seed: u64,
    /// Bounds of verify-before-caching ([`super::verify`]).
    pub verify: VerifyConfig,
    /// Keep the routes learned from resolves for [`super::Router::poll_learned_route`] (a runtime
    /// with several cores hands them to its other routers; nobody else needs them).
    pub export_learned_routes: bool,
    /// What one source (address and port) may take of the pending tables and of the
    /// forwarding rate ([`SourceLimits`]).
    pub source_limits: SourceLimits,
    /// A next hop asked for something that sends nothing at all back for this long is
    /// presumed dead: what is pending toward it gets Nack `NoRoute` naming it ("upstream
    /// ADDR did not answer within 2 s"). `None`: pending units just expire (simulations of
    /// long outages keep that, seed 001 §IV-D). Keep it below the receivers' idle timeout
    /// (10 s) and the pending lifetime.
    pub upstream_timeout: Option<Duration>,
    /// Which tags the router picks for the requests it sends (see [`TagClass`]).
    pub tags: TagClass,
    /// Most resolves, lists and proof requests forwarded upstream and pending at once
    /// (beyond, new ones get `Busy`): a router in front of many receivers that resolve
    /// names may need more.
    pub control_capacity: usize,
}

/// The tags a router picks for its own requests: those ≡ `residue` (mod `modulus`). A
/// runtime whose cores share one address gives core `i` of `n` the class `i` mod `n`, so
/// the kernel can hand every answer (its tag at bytes 8–11, `docs/PROTOCOL.md`) to the
/// core that asked. The default, `0 mod 1`, is every tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TagClass {
    /// At least 1 (0 counts as 1).
    pub modulus: u32,
    /// Taken mod `modulus`.
    pub residue: u32,
}

impl Default for TagClass {
    fn default() -> Self {
        TagClass { modulus: 1, residue: 0 }
    }
}

impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig {
            id: NodeId::label("router").expect("valid label"),
            fib: Fib::default(),
            cs: CsConfig { capacity_bytes: CsConfig::DEFAULT_CAPACITY_BYTES, ..CsConfig::default() },
            pit_capacity: 65_536,
            lifetime: Duration::from_secs(4),
            retx_suppression: Duration::from_millis(10),
            retx: RetxSuppression::Fixed,
            strategy: StrategyName::default(),
            max_waiting: 64,
            max_units_per_request: 256,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            validation: ValidationConfig::default(),
            seed: 0,
            verify: VerifyConfig::default(),
            export_learned_routes: false,
            tags: TagClass::default(),
            source_limits: SourceLimits::default(),
            upstream_timeout: Some(Duration::from_secs(2)),
            control_capacity: 4096,
        }
    }
}

impl spec::Named for NodeId {
    fn expected() -> String {
        "1-8 printable characters, or 0x and 16 hex digits".into()
    }
}

impl spec::Named for cs::Replacement {
    fn expected() -> String {
        let names: Vec<&str> = cs::policy_help().into_iter().map(|(n, _)| n).collect();
        format!("one of {}", names.join(", "))
    }
}

impl spec::Named for cs::Admission {
    fn expected() -> String {
        "always, none or prob:P with 0 <= P <= 1".into()
    }
}

impl spec::Named for StrategyName {
    fn expected() -> String {
        let names: Vec<&str> = super::strategy::STRATEGIES.iter().map(|s| s.name).collect();
        format!("one of {}", names.join(", "))
    }
}

impl spec::Named for RetxSuppression {
    fn expected() -> String {
        "fixed or exponential".into()
    }
}

spec::text_field!(NodeId, cs::Replacement, cs::Admission, StrategyName, RetxSuppression);

const HOUR: Duration = Duration::from_secs(3600);

impl Keyed for RouterConfig {
    const KEYS: &'static [Key<RouterConfig>] = &[
        key!(id, spec::Text::of::<NodeId>(), "node id named in Data served from the store and in refusals"),
        key!("cs_units" => cs.capacity_units, Kind::Int { min: 0, max: u64::MAX }, "content store capacity in units (0 caches nothing; NFD's default: 65536)"),
        key!("cs_bytes" => cs.capacity_bytes, Kind::Size { min: 0, max: u64::MAX }, "content store capacity in bytes of memory (payload and bookkeeping)"),
        key!("cs_policy" => cs.replacement, spec::Text::of::<cs::Replacement>(), "replacement policy (`--cs help` lists them)"),
        key!("cs_insert" => cs.admission, spec::Text::of::<cs::Admission>(), "insertion policy: always, prob:P (cache with probability P) or none"),
        key!("pit_size" => pit_capacity, Kind::Int { min: 1, max: u64::MAX }, "most units pending upstream at once (beyond: Busy)"),
        key!(
            lifetime,
            Kind::Duration { min: Duration::from_nanos(1), max: HOUR },
            "how long a pending unit waits for its Data (NDN's Interest lifetime)"
        ),
        key!("strategy" => strategy, spec::Text::of::<StrategyName>(), "forwarding strategy: which of a route's next hops a request goes to"),
        key!("retx_suppression" => retx, spec::Text::of::<RetxSuppression>(), "fixed, or exponential (× 2 per re-forwarding, at most 250 ms; NFD's)"),
        key!("retx_interval" => retx_suppression, Kind::Duration { min: Duration::ZERO, max: HOUR }, "a request for a pending unit is forwarded again only this long after the last forwarding"),
        key!(max_waiting, Kind::Int { min: 1, max: u64::MAX }, "most downstreams waiting for one unit (beyond: Busy)"),
        key!(max_units_per_request, Kind::Int { min: 1, max: u32::MAX as u64 }, "most units one request may ask for"),
        key!(max_reply_bytes, Kind::Size { min: 1, max: u64::MAX }, "most Data bytes one request is answered with"),
        key!("validation" => validation.enabled, Kind::Bool, "answer requests without a valid address token with a Retry (RFC 9000 §8)"),
        key!("amplification" => validation.amplification, Kind::Int { min: 1, max: u64::MAX }, "most bytes sent toward an unvalidated address per byte it sent (RFC 9000: 3)"),
        Key {
            name: "seed",
            kind: Kind::Int { min: 0, max: u64::MAX },
            meaning: "seed of the router's randomness (tags, random eviction, prob:P)",
            get: |c| spec::Field::to_value(&c.seed),
            set: |c, v| {
                c.seed = spec::Field::from_value(v);
                c.cs.seed = c.seed;
            },
        },
        key!("verify_staging" => verify.staging_bytes, Kind::Size { min: 0, max: u64::MAX }, "most bytes of unverified blocks (and their units) held for verification"),
        key!("known_nodes" => verify.known_nodes, Kind::Int { min: 0, max: u64::MAX }, "most verified tree nodes remembered across all objects"),
        key!(
            upstream_timeout,
            Kind::Duration { min: Duration::ZERO, max: HOUR },
            "a next hop silent this long after being asked is presumed dead (0s: never)"
        ),
        key!("forward_rate" => source_limits.rate, Kind::Float { min: 0.0, max: f64::INFINITY }, "units per second forwarded upstream for all sources, shared fairly (0: no limit)"),
        key!("share_pending" => source_limits.share_pending, Kind::Bool, "split the pending tables between the active sources"),
        key!(
            control_capacity,
            Kind::Int { min: 1, max: u64::MAX },
            "most resolves, lists and proof requests pending upstream at once"
        ),
    ];
}

impl RouterConfig {
    /// Set the keys of `spec` (`key=value,...`; [`RouterConfig::help`] lists them), in order.
    pub fn apply_spec(&mut self, spec: &str) -> Result<(), ConfigError> {
        spec::apply(self, "router", spec)
    }

    /// The keys whose values differ from `base`'s (`cs_policy=lfu,pit_size=4096`; empty if
    /// none): applied to `base` they give this configuration back, but for the routes, the
    /// token secret and the runtime's fields, which are not keys.
    pub fn to_spec_from(&self, base: &RouterConfig) -> String {
        spec::changed(self, base)
    }

    /// [`RouterConfig::to_spec_from`] the default.
    pub fn to_spec(&self) -> String {
        self.to_spec_from(&RouterConfig::default())
    }

    /// Every key with its default, meaning and accepted values (`rdtp route --router help`,
    /// `rdtp_router_help()`).
    pub fn help() -> String {
        spec::help(
            "Router specs: KEY=VALUE[,...], e.g. cs_policy=lfu,cs_units=1000,strategy=asf.\n\
             Keys not given keep the defaults shown (those of `rdtp route`; simulations start\n\
             from their own: no byte limit on the store, no upstream timeout, no source limits).\n",
            &RouterConfig::default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keys_set_fields_and_print_back() {
        let mut c = RouterConfig::default();
        c.apply_spec(
            "cs_policy=lfu, cs_units=1000,cs_insert=prob:0.125,lifetime=2s,strategy=asf,seed=7,upstream_timeout=0s",
        )
        .unwrap();
        assert_eq!(c.cs.replacement, cs::Replacement::Lfu);
        assert_eq!(c.cs.capacity_units, 1000);
        assert_eq!(c.cs.admission, cs::Admission::Prob(0.125));
        assert_eq!(c.lifetime, Duration::from_secs(2));
        assert_eq!(c.strategy, StrategyName::ASF);
        assert_eq!((c.seed, c.cs.seed), (7, 7));
        assert_eq!(c.upstream_timeout, None);
        assert_eq!(
            c.to_spec(),
            "cs_units=1000,cs_policy=lfu,cs_insert=prob:0.125,lifetime=2s,strategy=asf,seed=7,upstream_timeout=0s"
        );
        let mut back = RouterConfig::default();
        back.apply_spec(&c.to_spec()).unwrap();
        assert_eq!(back.to_spec(), c.to_spec());
        assert_eq!(RouterConfig::default().to_spec(), "");
    }

    #[test]
    fn bad_specs_say_what_is_accepted() {
        let e = |s: &str| RouterConfig::default().apply_spec(s).unwrap_err().to_string();
        assert_eq!(
            e("cs_policy=lifo"),
            "router: cs_policy=lifo: the value must be one of lru, lfu, fifo, random, clock"
        );
        assert_eq!(e("pit_size=0"), "router: pit_size=0: the value must be an integer ≥ 1");
        assert!(
            e("cs_size=1").starts_with("router has no key 'cs_size' (its keys: id, cs_units,"),
            "{}",
            e("cs_size=1")
        );
        assert_eq!(e("strategy=fastest"), "router: strategy=fastest: the value must be one of best-route, asf");
        assert_eq!(
            e("id=waytoolongid"),
            "router: id=waytoolongid: the value must be 1-8 printable characters, or 0x and 16 hex digits"
        );
    }

    #[test]
    fn help_lists_every_key() {
        let h = RouterConfig::help();
        for k in RouterConfig::KEYS {
            assert!(h.contains(&format!("  {}=", k.name)), "{} missing:\n{h}", k.name);
        }
        assert!(h.contains("cs_bytes=256MiB"), "{h}");
        assert!(h.contains("strategy=best-route"), "{h}");
    }

    proptest! {
        /// Any values of any keys, in range, survive `to_spec` and `apply_spec`.
        #[test]
        fn specs_round_trip(units in 0usize.., bytes: u64, policy in 0usize..5, p in 0.0f64..=1.0, pit in 1usize..,
                            lifetime_us in 1u64..3_600_000_000, asf: bool, seed: u64, timeout_ms in 0u64..3_600_000,
                            rate in 0.0f64..1e9, control in 1usize..) {
            let mut c = RouterConfig::default();
            c.cs.capacity_units = units;
            c.cs.capacity_bytes = bytes;
            c.cs.replacement = cs::policy_help()[policy].0.parse().unwrap();
            c.cs.admission = cs::Admission::Prob(p);
            c.pit_capacity = pit;
            c.lifetime = Duration::from_micros(lifetime_us);
            c.strategy = if asf { StrategyName::ASF } else { StrategyName::BEST_ROUTE };
            c.seed = seed;
            c.cs.seed = seed;
            c.upstream_timeout = Some(Duration::from_millis(timeout_ms)).filter(|d| !d.is_zero());
            c.source_limits.rate = Some(rate).filter(|&r| r != 0.0);
            c.control_capacity = control;
            let mut back = RouterConfig::default();
            back.apply_spec(&c.to_spec()).unwrap();
            prop_assert_eq!(back.to_spec(), c.to_spec());
            prop_assert_eq!(back.cs, c.cs);
            prop_assert_eq!((back.pit_capacity, back.lifetime, back.seed, back.upstream_timeout), (c.pit_capacity, c.lifetime, c.seed, c.upstream_timeout));
            prop_assert_eq!((back.source_limits.rate, back.control_capacity), (c.source_limits.rate, c.control_capacity));
        }
    }
}
