//! The forwarding table (FIB): where a router sends a request it cannot answer itself.
//!
//! Routes map an EID, or a name prefix, to a next hop; a default route catches the rest
//! (NFD's FIB does longest-prefix match on names; rdtp names are `/`-separated paths, so a
//! prefix matches whole components: `videos` matches `videos/intro.mp4` but not
//! `videos2/x`). Requests for data carry only an EID, so a router also *learns* which next
//! hop resolved a name to an EID and routes that EID the same way; learned routes are kept
//! in a bounded table, oldest forgotten first. Configured EID routes win over learned ones,
//! learned ones over the default.
//!
//! A configured route or the default may name several next hops (NFD's FIB entries hold a
//! list of next hops): [`Fib::next_hops_eid`] gives them in the order they were added, and
//! the forwarding strategy ([`super::strategy`]) chooses among them. [`Fib::route_eid`] and
//! the other single-hop lookups give the first.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::str::FromStr;

use super::hashing::{Map, TableHasher, map};
use crate::eid::Eid;

/// Learned routes kept at most.
pub const LEARNED_ROUTES: usize = 4096;

/// What a route matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteKey {
    Eid(Eid),
    /// A name prefix (whole `/`-separated components; empty = every name).
    Name(String),
}

impl RouteKey {
    /// `key` as a route spells it: 64 hex digits are an EID, anything else a name prefix.
    pub fn parse(key: &str) -> RouteKey {
        match key.parse::<Eid>() {
            Ok(e) => RouteKey::Eid(e),
            Err(_) => RouteKey::Name(normalize(key).to_string()),
        }
    }
}

/// One configured route, as `rdtp route --route KEY=ADDR` spells it: `KEY` is 64 hex
/// digits (an EID) or a name prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub key: RouteKey,
    pub next_hop: SocketAddr,
}

/// Why a route does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseRouteError {
    #[error("a route is KEY=ADDR:PORT (KEY an EID in hex or a name prefix)")]
    NoEquals,
    #[error("invalid next hop {0:?}: want ADDR:PORT")]
    Address(String),
}

impl FromStr for Route {
    type Err = ParseRouteError;
    fn from_str(s: &str) -> Result<Route, ParseRouteError> {
        let (key, addr) = s.rsplit_once('=').ok_or(ParseRouteError::NoEquals)?;
        let next_hop = addr.parse().map_err(|_| ParseRouteError::Address(addr.to_string()))?;
        Ok(Route { key: RouteKey::parse(key), next_hop })
    }
}

fn normalize(prefix: &str) -> &str {
    prefix.trim_matches('/')
}

/// The forwarding table of one router.
#[derive(Clone, Debug, Default)]
pub struct Fib {
    /// The default route's next hops, first added first.
    default: Vec<SocketAddr>,
    eids: Map<Eid, Vec<SocketAddr>>,
    names: Vec<(String, SocketAddr)>,
    learned: Map<Eid, SocketAddr>,
    learned_order: VecDeque<Eid>,
}

impl Fib {
    /// A table whose default route is `upstream`, if any.
    pub fn new(upstream: Option<SocketAddr>) -> Self {
        Fib { default: upstream.into_iter().collect(), ..Fib::default() }
    }

    /// Hash its tables with `h` (its router's keyed hash, [`super::hashing`]) from now on.
    pub(crate) fn rekey(&mut self, h: &TableHasher) {
        let mut eids = map(h);
        eids.extend(self.eids.drain());
        self.eids = eids;
        let mut learned = map(h);
        learned.extend(self.learned.drain());
        self.learned = learned;
    }

    /// Set or clear the default route (its only next hop).
    pub fn set_default(&mut self, next_hop: Option<SocketAddr>) {
        self.default = next_hop.into_iter().collect();
    }

    /// Add another next hop to the default route (after those it has).
    pub fn add_default_next_hop(&mut self, next_hop: SocketAddr) {
        if !self.default.contains(&next_hop) {
            self.default.push(next_hop);
        }
    }

    /// Every next hop of the default route, first added first.
    pub fn default_next_hops(&self) -> &[SocketAddr] {
        &self.default
    }

    /// The default route (its first next hop).
    pub fn default_route(&self) -> Option<SocketAddr> {
        self.default.first().copied()
    }

    /// Add a route (a later route for the same key replaces the earlier).
    pub fn add(&mut self, route: Route) {
        match route.key {
            RouteKey::Eid(e) => {
                self.eids.insert(e, vec![route.next_hop]);
            }
            RouteKey::Name(n) => {
                let n = normalize(&n).to_string();
                self.names.retain(|(p, _)| *p != n);
                self.names.push((n, route.next_hop));
            }
        }
    }

    /// Add another next hop to the route of an EID (after those it has; a route the EID
    /// did not have yet is created). A name prefix keeps one next hop: this replaces it.
    pub fn add_next_hop(&mut self, route: Route) {
        match &route.key {
            RouteKey::Eid(e) => {
                let hops = self.eids.entry(*e).or_default();
                if !hops.contains(&route.next_hop) {
                    hops.push(route.next_hop);
                }
            }
            RouteKey::Name(_) => self.add(route),
        }
    }

    /// Next hop for a request for `eid`: a configured route, a learned one, the default (the
    /// first next hop of the route that matches).
    pub fn route_eid(&self, eid: &Eid) -> Option<SocketAddr> {
        self.next_hops_eid(eid).first().copied()
    }

    /// Every next hop of the route that matches `eid` (a configured route, a learned one, the
    /// default), in the order they were added; empty if none does.
    pub fn next_hops_eid(&self, eid: &Eid) -> &[SocketAddr] {
        if let Some(hops) = self.eids.get(eid) {
            return hops;
        }
        match self.learned.get(eid) {
            // A default of several next hops that includes the one that resolved the EID
            // stays the strategy's choice.
            Some(hop) if !(self.default.len() > 1 && self.default.contains(hop)) => core::slice::from_ref(hop),
            _ => &self.default,
        }
    }

    /// Next hop for resolving `name`: the longest matching prefix, else the default.
    pub fn route_name(&self, name: &str) -> Option<SocketAddr> {
        let name = normalize(name);
        self.names
            .iter()
            .filter(|(p, _)| {
                p.is_empty() || name == p || name.strip_prefix(p.as_str()).is_some_and(|r| r.starts_with('/'))
            })
            .max_by_key(|(p, _)| p.len())
            .map(|(_, a)| *a)
            .or(self.default_route())
    }

    /// `next_hop` resolved a name to `eid`: route `eid` there from now on (bounded).
    pub(crate) fn learn(&mut self, eid: Eid, next_hop: SocketAddr) {
        if self.eids.contains_key(&eid) {
            return;
        }
        if self.learned.insert(eid, next_hop).is_none() {
            self.learned_order.push_back(eid);
            if self.learned_order.len() > LEARNED_ROUTES
                && let Some(old) = self.learned_order.pop_front()
            {
                self.learned.remove(&old);
            }
        }
    }

    /// Number of learned routes.
    pub fn learned_len(&self) -> usize {
        self.learned.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(p: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], p))
    }

    #[test]
    fn longest_prefix_on_whole_components_then_default() {
        let mut f = Fib::new(Some(a(1)));
        f.add("videos=10.0.0.1:2".parse().unwrap());
        f.add("/videos/hd/=10.0.0.1:3".parse().unwrap());
        assert_eq!(f.route_name("videos/intro.mp4"), Some(a(2)));
        assert_eq!(f.route_name("videos/hd/x.mp4"), Some(a(3)));
        assert_eq!(f.route_name("videos"), Some(a(2)));
        assert_eq!(f.route_name("videos2/x"), Some(a(1)));
        assert_eq!(f.route_name("other"), Some(a(1)));
        f.set_default(None);
        assert_eq!(f.route_name("other"), None);
    }

    #[test]
    fn eid_routes_then_learned_then_default() {
        let e1 = Eid([1; 32]);
        let e2 = Eid([2; 32]);
        let mut f = Fib::new(Some(a(1)));
        let r: Route = format!("{e1}=10.0.0.1:5").parse().unwrap();
        assert_eq!(r.key, RouteKey::Eid(e1));
        f.add(r);
        f.learn(e1, a(9)); // configured wins
        f.learn(e2, a(6));
        assert_eq!(f.route_eid(&e1), Some(a(5)));
        assert_eq!(f.route_eid(&e2), Some(a(6)));
        assert_eq!(f.route_eid(&Eid([3; 32])), Some(a(1)));
        for i in 0..LEARNED_ROUTES as u32 + 10 {
            let mut b = [0u8; 32];
            b[..4].copy_from_slice(&i.to_be_bytes());
            b[31] = 7;
            f.learn(Eid(b), a(7));
        }
        assert_eq!(f.learned_len(), LEARNED_ROUTES);
        assert_eq!(f.route_eid(&e2), Some(a(1)), "oldest learned route forgotten");
    }

    #[test]
    fn several_next_hops_in_the_order_added() {
        let e1 = Eid([1; 32]);
        let mut f = Fib::new(Some(a(1)));
        f.add_default_next_hop(a(2));
        f.add_default_next_hop(a(1));
        assert_eq!(f.next_hops_eid(&e1), &[a(1), a(2)]);
        f.add_next_hop(format!("{e1}=10.0.0.1:5").parse().unwrap());
        f.add_next_hop(format!("{e1}=10.0.0.1:6").parse().unwrap());
        assert_eq!(f.next_hops_eid(&e1), &[a(5), a(6)]);
        assert_eq!(f.route_eid(&e1), Some(a(5)));
        f.add(format!("{e1}=10.0.0.1:7").parse().unwrap());
        assert_eq!(f.next_hops_eid(&e1), &[a(7)], "add replaces");
        f.learn(Eid([3; 32]), a(2));
        f.learn(Eid([4; 32]), a(9));
        assert_eq!(f.next_hops_eid(&Eid([3; 32])), &[a(1), a(2)], "learned through one of the default's");
        assert_eq!(f.next_hops_eid(&Eid([4; 32])), &[a(9)]);
        f.set_default(None);
        assert!(f.next_hops_eid(&Eid([2; 32])).is_empty());
    }

    #[test]
    fn bad_routes() {
        assert_eq!("nothing".parse::<Route>(), Err(ParseRouteError::NoEquals));
        assert!(matches!("x=nowhere".parse::<Route>(), Err(ParseRouteError::Address(_))));
        assert_eq!("=10.0.0.1:4".parse::<Route>().unwrap().key, RouteKey::Name(String::new()));
    }
}
