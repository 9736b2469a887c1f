//! Forwarding strategies: where the units a router cannot answer itself go, and when a
//! further request for a pending unit goes again (NFD `daemon/fw/strategy.hpp`; its pipelines
//! call the strategy at the same points as `forwarder.rs` does here).
//!
//! The forwarding table gives the candidates (every next hop of the route that matches,
//! [`super::fib::Fib::next_hops_eid`]); the strategy picks, per request, the next hops its
//! new units go to ([`Strategy::after_receive_request`]), says whether a further request for
//! a pending unit (anyone's, re-request or not) is forwarded again ([`Strategy::retx_allowed`], by the configured
//! [`RetxSuppression`], NFD's `fw/retx-suppression-{fixed,exponential}`), and may learn from
//! what comes back (an RTT sample per upstream request, a Nack).
//!
//! Strategies are chosen by name ([`StrategyName`], `rdtp route --strategy NAME`, `--strategy
//! help`) from the registry [`STRATEGIES`], as `cc/registry.rs` resolves controllers:
//!
//! * `best-route` (the default, `strategy/best_route.rs`): the first next hop, today's behaviour;
//! * `asf` (`strategy/asf.rs`): the next hop with the lowest measured RTT, other hops probed now and
//!   then, after NFD's Adaptive SRTT-based Forwarding (Lehman et al., "An Experimental
//!   Investigation of Hyperbolic Routing with a Smart Forwarding Plane in NDN", IWQoS 2016).
//!
//! # Adding a strategy
//!
//! One file `router/strategy/NAME.rs` with a type implementing [`Strategy`] and a
//! `pub(super) fn build(&StrategyParams) -> Box<dyn Strategy>`, plus its `mod` line and its
//! row in [`STRATEGIES`] (both in this file). `--strategy` and `--strategy help` find it.
//!
//! # What a strategy must not do
//!
//! No I/O, no clock (time comes as `now`), no ambient randomness; its state bounded whatever
//! the traffic (per next hop at most, never per request or per receiver). It never sends a
//! request back where it came from: the candidates it is given exclude nothing, so it must
//! skip `from` itself (an empty choice is refused `NoRoute`).

use core::fmt;
use core::str::FromStr;
use core::time::Duration;
use std::net::SocketAddr;

use crate::time::Time;

mod asf;
mod best_route;

/// The text of `--strategy help`: every strategy with its line, the default first.
pub fn help() -> String {
    let mut out = String::from("Forwarding strategies (rdtp route --strategy NAME):\n");
    for s in STRATEGIES {
        out.push_str(&format!("  {:<12} {}\n", s.name, s.about));
    }
    out.push_str("Retransmission suppression (--retx-suppression): fixed (default) or exponential.\n");
    out
}

/// What a strategy is built from.
#[derive(Clone, Debug, PartialEq)]
pub struct StrategyParams {
    /// When a further request for a pending unit may go upstream again.
    pub retx: RetxSuppression,
}

/// One strategy of the registry.
pub struct StrategyEntry {
    pub name: &'static str,
    /// One line for `--strategy help`.
    pub about: &'static str,
    pub build: fn(&StrategyParams) -> Box<dyn Strategy>,
}

/// Every forwarding strategy, one row each (the first is the default).
pub const STRATEGIES: &[StrategyEntry] = &[
    StrategyEntry { name: "best-route", about: best_route::ABOUT, build: best_route::build },
    StrategyEntry { name: "asf", about: asf::ABOUT, build: asf::build },
];

/// A forwarding strategy, by its registry name. Text form: the name, case-insensitive.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct StrategyName(&'static str);

impl StrategyName {
    /// `best-route`: the first next hop.
    pub const BEST_ROUTE: StrategyName = StrategyName("best-route");
    /// `asf`: the next hop with the lowest measured RTT.
    pub const ASF: StrategyName = StrategyName("asf");

    pub fn name(self) -> &'static str {
        self.0
    }

    /// A new strategy of this name.
    pub fn build(self, params: &StrategyParams) -> Box<dyn Strategy> {
        let entry = STRATEGIES.iter().find(|s| s.name == self.0).unwrap_or(&STRATEGIES[0]);
        (entry.build)(params)
    }
}

impl Default for StrategyName {
    fn default() -> Self {
        StrategyName(STRATEGIES[0].name)
    }
}

impl fmt::Debug for StrategyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Display for StrategyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// A strategy name the registry does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseStrategyError(pub String);

impl fmt::Display for ParseStrategyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = STRATEGIES.iter().map(|s| s.name).collect();
        write!(f, "unknown forwarding strategy {:?} (expected one of {})", self.0, names.join(", "))
    }
}

impl std::error::Error for ParseStrategyError {}

impl FromStr for StrategyName {
    type Err = ParseStrategyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        STRATEGIES
            .iter()
            .find(|e| e.name.eq_ignore_ascii_case(s))
            .map(|e| StrategyName(e.name))
            .ok_or_else(|| ParseStrategyError(s.to_string()))
    }
}

/// When a request for a unit already pending (from any downstream, flagged RETRANSMISSION or
/// not, as NFD's `decidePerPitEntry` treats every Interest that finds a pending entry) is
/// forwarded again: only if the unit was last forwarded at least the suppression interval ago. The first
/// interval is [`super::RouterConfig::retx_suppression`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum RetxSuppression {
    /// Always the first interval (NFD's `RetxSuppressionFixed`; rdtp's behaviour so far).
    #[default]
    Fixed,
    /// The interval is multiplied by `multiplier` each time the unit is forwarded again, up
    /// to `max` (NFD's `RetxSuppressionExponential`: 10 ms initial, × 2, at most 250 ms).
    Exponential { multiplier: f64, max: Duration },
}

impl RetxSuppression {
    /// NFD's exponential defaults (× 2, at most 250 ms).
    pub const EXPONENTIAL: RetxSuppression =
        RetxSuppression::Exponential { multiplier: 2.0, max: Duration::from_millis(250) };

    /// The interval after `reforwards` re-forwardings, from `initial`.
    pub fn interval(&self, initial: Duration, reforwards: u8) -> Duration {
        match *self {
            RetxSuppression::Fixed => initial,
            RetxSuppression::Exponential { multiplier, max } => {
                let factor = multiplier.max(1.0).powi(i32::from(reforwards));
                initial.mul_f64(factor.min(1e9)).min(max.max(initial))
            }
        }
    }
}

impl FromStr for RetxSuppression {
    type Err = String;
    /// `fixed` or `exponential`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "fixed" => Ok(RetxSuppression::Fixed),
            "exponential" => Ok(RetxSuppression::EXPONENTIAL),
            _ => Err(format!("unknown retransmission suppression {s:?} (expected fixed or exponential)")),
        }
    }
}

impl fmt::Display for RetxSuppression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetxSuppression::Fixed => f.write_str("fixed"),
            RetxSuppression::Exponential { .. } => f.write_str("exponential"),
        }
    }
}

/// What a strategy is told about a pending unit a request asks for again.
#[derive(Clone, Copy, Debug)]
pub struct Pending {
    /// When the unit was last forwarded upstream.
    pub last_forwarded: Time,
    /// Times it was forwarded again after its first forwarding (saturating).
    pub reforwards: u8,
}

/// A request to place: what [`Strategy::after_receive_request`] chooses from.
pub struct Candidates<'a> {
    pub now: Time,
    /// Where the request came from (never a next hop for it).
    pub from: SocketAddr,
    /// The matching route's next hops, in the order they were added (never empty).
    pub hops: &'a [SocketAddr],
    /// Which next hops are presumed dead (`liveness.rs`: units for them are refused, so a
    /// strategy that has others should avoid them).
    pub dead: &'a dyn Fn(SocketAddr) -> bool,
}

impl Candidates<'_> {
    /// The first next hop that is not `from`, preferring one not presumed dead (what
    /// `best-route` does, and what `asf` falls back to).
    pub fn first_usable(&self) -> Option<SocketAddr> {
        let mut usable = self.hops.iter().copied().filter(|&h| h != self.from);
        let first = usable.clone().next()?;
        Some(usable.find(|&h| !(self.dead)(h)).unwrap_or(first))
    }
}

/// A forwarding strategy (NFD's `fw::Strategy`): the decisions of the router's pipelines.
pub trait Strategy: Send + fmt::Debug {
    /// Its registry name.
    fn name(&self) -> &'static str;

    /// The next hops the new (and re-forwarded) units of a request go to, into `out`
    /// (empty: refused `NoRoute`, "leads back where the request came from"). The first is
    /// the request's own: pending units are refused if it is dead.
    fn after_receive_request(&mut self, c: &Candidates<'_>, out: &mut Vec<SocketAddr>);

    /// A request went to `to` (one of the next hops it chose) with at least one unit.
    fn after_send(&mut self, now: Time, to: SocketAddr) {
        let _ = (now, to);
    }

    /// The retransmission suppression it was built with.
    fn retx(&self) -> RetxSuppression;

    /// Whether a request for the pending unit (anyone's) is forwarded again at `now`.
    fn retx_allowed(&mut self, now: Time, initial: Duration, unit: Pending) -> bool {
        now - unit.last_forwarded >= self.retx().interval(initial, unit.reforwards)
    }

    /// Whether the strategy wants [`Strategy::after_receive_data`]'s RTT samples (looking
    /// them up costs one hash lookup per Data).
    fn wants_rtt(&self) -> bool {
        false
    }

    /// The first Data answering an upstream request sent to `from`, `rtt` after it was sent
    /// (not counting Data an upstream router coalesced: it answered an earlier request).
    fn after_receive_data(&mut self, now: Time, from: SocketAddr, rtt: Duration) {
        let _ = (now, from, rtt);
    }

    /// A Nack from `from` refusing units of an upstream request.
    fn after_receive_nack(&mut self, now: Time, from: SocketAddr) {
        let _ = (now, from);
    }

    /// Whether a unit refused by one next hop waits for the others it went to (a strategy
    /// that sends a unit to several); otherwise the refusal goes downstream at once.
    fn waits_for_other_upstreams(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_from_the_registry() {
        assert_eq!("best-route".parse::<StrategyName>(), Ok(StrategyName::BEST_ROUTE));
        assert_eq!("ASF".parse::<StrategyName>(), Ok(StrategyName::ASF));
        assert_eq!(StrategyName::default(), StrategyName::BEST_ROUTE);
        let e = "multicast".parse::<StrategyName>().unwrap_err().to_string();
        assert_eq!(e, "unknown forwarding strategy \"multicast\" (expected one of best-route, asf)");
        for s in STRATEGIES {
            let built = (s.build)(&StrategyParams { retx: RetxSuppression::Fixed });
            assert_eq!(built.name(), s.name);
        }
    }

    #[test]
    fn exponential_suppression_doubles_up_to_its_max() {
        let ms = Duration::from_millis;
        let e = RetxSuppression::EXPONENTIAL;
        let got: Vec<Duration> = (0..7).map(|n| e.interval(ms(10), n)).collect();
        assert_eq!(got, [ms(10), ms(20), ms(40), ms(80), ms(160), ms(250), ms(250)]);
        assert_eq!(RetxSuppression::Fixed.interval(ms(10), 5), ms(10));
        assert_eq!("exponential".parse(), Ok(RetxSuppression::EXPONENTIAL));
    }

    #[test]
    fn first_usable_skips_the_asker_and_dead_hops() {
        let a = |p| SocketAddr::from(([10, 0, 0, 1], p));
        let dead = |h: SocketAddr| h == a(2);
        let first = |hops: &[SocketAddr]| Candidates { now: Time::ZERO, from: a(1), hops, dead: &dead }.first_usable();
        assert_eq!(first(&[a(1), a(2), a(3)]), Some(a(3)));
        assert_eq!(first(&[a(1), a(2)]), Some(a(2)), "only a dead one: it");
        assert_eq!(first(&[a(1)]), None);
    }
}
