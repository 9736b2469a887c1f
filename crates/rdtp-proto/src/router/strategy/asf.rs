//! `asf`: each request goes to the next hop with the lowest smoothed RTT, and now and then
//! a copy goes to another one to measure it (a probe), after NFD's Adaptive SRTT-based
//! Forwarding (`fw/asf-strategy.cpp`, `fw/asf-measurements.cpp`, `fw/asf-probing-module.cpp`;
//! Lehman et al., "An Experimental Investigation of Hyperbolic Routing with a Smart
//! Forwarding Plane in NDN", IWQoS 2016).
//!
//! * **Measuring.** The first Data answering each upstream request gives a sample of its
//!   next hop's RTT (the router's requests have one tag per transmission, so a sample is
//!   never ambiguous, RFC 6298 §3's concern; Data an upstream router coalesced are not
//!   counted). SRTT per next hop with RFC 6298's gain 1/8.
//! * **Choosing.** Among the route's next hops other than the asker and not presumed dead
//!   ([`super::super::liveness`]), the one with the lowest SRTT; hops not measured yet rank
//!   after measured ones, in route order, and a hop that last answered with a Nack ranks
//!   last until it gives a sample again (NFD ranks timed-out faces last the same way).
//! * **Probing.** A next hop never measured is probed at once; afterwards one other hop (the
//!   one measured longest ago) is probed every [`PROBE_INTERVAL`] (NFD's default, 60 s).
//!   A probe is the same request sent to that hop as well: the first answer serves the
//!   downstreams and is verified and cached as any other, the later one only gives its
//!   sample. A unit refused by one hop waits for the other it went to.
//!
//! Bounded: at most [`HOPS`] next hops measured (the one measured longest ago forgotten).
//! It changes nothing when a route has one next hop: then it is `best-route`.

use core::time::Duration;
use std::net::SocketAddr;

use super::{Candidates, RetxSuppression, Strategy, StrategyParams};
use crate::router::hashing::Map;
use crate::time::Time;

pub(super) const ABOUT: &str =
    "adaptive (NFD's ASF): the next hop with the lowest measured RTT, the others probed every 60 s";

pub(super) fn build(p: &StrategyParams) -> Box<dyn Strategy> {
    Box::new(Asf { retx: p.retx, hops: Map::default(), next_probe: None, probe: None, usable: Vec::new() })
}

/// How often a next hop other than the best is probed once every hop was measured.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(60);
/// Next hops measured at most.
pub const HOPS: usize = 1024;

/// What is known of one next hop.
#[derive(Clone, Copy, Debug)]
struct Measure {
    /// Smoothed RTT; `None` until the first sample.
    srtt: Option<Duration>,
    /// When it was last sampled or probed.
    touched: Time,
    /// Its last answer was a Nack (ranked last until its next sample).
    nacked: bool,
}

#[derive(Debug)]
struct Asf {
    retx: RetxSuppression,
    hops: Map<SocketAddr, Measure>,
    /// When a measured hop may be probed next (from the first request on).
    next_probe: Option<Time>,
    /// The probe the last choice added, until a request goes there ([`Strategy::after_send`]).
    probe: Option<SocketAddr>,
    /// Scratch: the candidates that may be used.
    usable: Vec<SocketAddr>,
}

impl Asf {
    /// Rank of `hop` (lower is better): measured by SRTT, then unmeasured, then Nacked.
    fn rank(&self, hop: SocketAddr) -> (u8, Duration) {
        match self.hops.get(&hop) {
            Some(m) if m.nacked => (2, Duration::ZERO),
            Some(Measure { srtt: Some(s), .. }) => (0, *s),
            _ => (1, Duration::ZERO),
        }
    }

    fn measure(&mut self, now: Time, hop: SocketAddr) -> &mut Measure {
        if self.hops.len() >= HOPS && !self.hops.contains_key(&hop) {
            let oldest = self.hops.iter().min_by_key(|(a, m)| (m.touched, **a)).map(|(a, _)| *a);
            if let Some(a) = oldest {
                self.hops.remove(&a);
            }
        }
        self.hops.entry(hop).or_insert(Measure { srtt: None, touched: now, nacked: false })
    }

    /// The hop to probe besides `best`, if one is due: a usable hop never asked, else
    /// (every [`PROBE_INTERVAL`]) the one measured or probed longest ago.
    fn probe_due(&self, now: Time, best: SocketAddr) -> Option<SocketAddr> {
        let others = self.usable.iter().copied().filter(|&h| h != best);
        if let Some(h) = others.clone().find(|h| !self.hops.contains_key(h)) {
            return Some(h);
        }
        if self.next_probe.is_some_and(|t| now < t) {
            return None;
        }
        others.min_by_key(|h| self.hops.get(h).map_or(Time::ZERO, |m| m.touched))
    }
}

impl Strategy for Asf {
    fn name(&self) -> &'static str {
        "asf"
    }

    fn after_receive_request(&mut self, c: &Candidates<'_>, out: &mut Vec<SocketAddr>) {
        let now = c.now;
        self.usable.clear();
        self.usable.extend(c.hops.iter().copied().filter(|&h| h != c.from && !(c.dead)(h)));
        if self.usable.len() < 2 {
            // One choice (or none alive): as best-route.
            out.extend(c.first_usable());
            return;
        }
        // The lowest rank; ties in route order.
        let best = *self.usable.iter().min_by_key(|&&h| self.rank(h)).expect("two or more");
        out.push(best);
        self.next_probe.get_or_insert(now + PROBE_INTERVAL);
        self.probe = self.probe_due(now, best);
        out.extend(self.probe);
    }

    fn after_send(&mut self, now: Time, to: SocketAddr) {
        if self.probe != Some(to) {
            return;
        }
        // Probed: not again before it answers (never asked) or the next interval.
        self.probe = None;
        if self.hops.contains_key(&to) {
            self.next_probe = Some(now + PROBE_INTERVAL);
        }
        self.measure(now, to).touched = now;
    }

    fn retx(&self) -> RetxSuppression {
        self.retx
    }

    fn wants_rtt(&self) -> bool {
        true
    }

    fn after_receive_data(&mut self, now: Time, from: SocketAddr, rtt: Duration) {
        let m = self.measure(now, from);
        m.srtt = Some(match m.srtt {
            // RFC 6298 §2: SRTT ← 7/8 SRTT + 1/8 R.
            Some(s) => (s * 7 + rtt) / 8,
            None => rtt,
        });
        m.touched = now;
        m.nacked = false;
    }

    fn after_receive_nack(&mut self, now: Time, from: SocketAddr) {
        self.measure(now, from).nacked = true;
    }

    fn waits_for_other_upstreams(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(p: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], p))
    }
    const DOWN: u16 = 1;

    /// The next hops of one request, sent.
    fn choose(s: &mut dyn Strategy, now: Time, hops: &[SocketAddr]) -> Vec<SocketAddr> {
        let mut out = Vec::new();
        s.after_receive_request(&Candidates { now, from: a(DOWN), hops, dead: &|_| false }, &mut out);
        for &h in &out {
            s.after_send(now, h);
        }
        out
    }

    #[test]
    fn probes_the_unmeasured_then_moves_to_the_fastest() {
        let mut s = build(&StrategyParams { retx: RetxSuppression::Fixed });
        let t = |ms| Time::ZERO + Duration::from_millis(ms);
        let hops = [a(DOWN), a(2), a(3)];
        // Nothing measured: the first usable hop, and the other probed at once.
        assert_eq!(choose(&mut *s, t(1), &hops), [a(2), a(3)]);
        // Probed already: not again before it answers. A probe chosen but not sent (every
        // unit answered from the store) is chosen again.
        assert_eq!(choose(&mut *s, t(2), &hops), [a(2)]);
        let mut out = Vec::new();
        let hops4 = [a(2), a(3), a(4)];
        s.after_receive_request(&Candidates { now: t(3), from: a(DOWN), hops: &hops4, dead: &|_| false }, &mut out);
        assert_eq!(out, [a(2), a(4)]);
        assert_eq!(choose(&mut *s, t(4), &hops4), [a(2), a(4)]);
        s.after_receive_data(t(50), a(2), Duration::from_millis(40));
        s.after_receive_data(t(20), a(3), Duration::from_millis(10));
        assert_eq!(choose(&mut *s, t(60), &hops), [a(3)]);
        // The probe interval on: the one measured longest ago is probed again.
        s.after_receive_data(t(30), a(4), Duration::from_millis(30));
        assert_eq!(choose(&mut *s, t(1) + PROBE_INTERVAL, &hops), [a(3), a(2)]);
        assert_eq!(choose(&mut *s, t(2) + PROBE_INTERVAL, &hops), [a(3)]);
        // A Nack ranks a hop last.
        s.after_receive_nack(t(70), a(3));
        assert_eq!(choose(&mut *s, t(1) + PROBE_INTERVAL + Duration::from_millis(1), &hops)[0], a(2));
    }

    #[test]
    fn one_usable_hop_is_best_route() {
        let mut s = build(&StrategyParams { retx: RetxSuppression::Fixed });
        let mut out = Vec::new();
        let dead = |h: SocketAddr| h == a(3);
        s.after_receive_request(
            &Candidates { now: Time::ZERO, from: a(DOWN), hops: &[a(3), a(2)], dead: &dead },
            &mut out,
        );
        assert_eq!(out, [a(2)]);
    }
}
