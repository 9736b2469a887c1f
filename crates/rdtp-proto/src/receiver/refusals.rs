//! Answers that refuse a request instead of serving it: `Busy` (back off and ask again)
//! and the terminal Nacks (`UnknownContent`, `Malformed`, `TooLarge`, `Internal`, …: a hint
//! until confirmed). Issue 23 items 3 and 6.
//!
//! # Busy: back off
//!
//! A server over its send budget (`rdtp serve --max-rate`, `server::share`: a token bucket
//! per source) or a router whose pending-request table is full answers `Busy`. The refused
//! units were *answered*, not lost: they go back to be asked for again, are not counted as
//! lost or re-requested, and do not restart the retransmission timer. A receiver that asked
//! again at once stormed the server: one round trip per Busy, for as long as the bucket was
//! in debt (10 019 requests and 9 981 Busy for a 2 140-unit object on loopback). So a Busy
//! starts a *hold*: no request leaves for 1 ms ([`BUSY_HOLD_BASE`]), and while backing off
//! requests leave at most one per hold, each as large as the window allows (up to the
//! aggregation limit L, seed 000 §4.2: fewer, larger requests, rather than a spacing that
//! caps the rate at one small request per hold). The hold grows ×1.5 per Busy *round* (a
//! Busy answering a request sent after the hold last grew) up to [`MAX_BUSY_HOLD`], and
//! shrinks by a tenth per round trip served (a request sent after it last changed, served);
//! below [`MIN_BUSY_HOLD`] the back-off ends.
//! The hold settles near the time the server's bucket takes to pay for one request
//! (request bytes ÷ the source's share, whatever the RTT), with a few Busy per request
//! served. It never exceeds 20 ms, the burst a server's bucket holds: asked at least that
//! often, the bucket never fills unused, so the budget stays used (a lone source gets
//! ≥ 85 % of it, `receiver::tests`), and a receiver refused because *another* source keeps
//! the server's total budget in debt (a refusal that backing off does not make rarer) is
//! not starved by its own back-off (`rdtp-harness` `tests/fair_share.rs`). The controller
//! still hears a Busy round as congestion, as a loss would tell it.
//!
//! A server never both serves and refuses one request, so a Data answering the very request
//! whose Busy last grew the hold proves that Busy forged (an attacker on the path): the step
//! is taken back and the hold lifted. Busy never counts as hearing from the server (the
//! idle timeout still runs), so a stream of forged Busy cannot keep a dead fetch alive.
//!
//! # Terminal Nacks: confirm first
//!
//! One Nack with the right tag — which any node on the path can forge — used to end the
//! fetch at once. Now a terminal Nack during the transfer is a *suspicion*: the refused
//! units are asked for again, every request carries `ORIGIN` (routers forward it instead of
//! answering from their store) and none leaves for one RTO. Each further terminal Nack
//! answering a request sent after the previous one counts as a confirmation; the fetch fails
//! when [`CONFIRMATIONS`] refusals in a row arrived and one more RTO passed without a Data
//! answering a request sent since the first (the last chance for the genuine answer to a
//! forged refusal to arrive). Any such Data — or a Data answering a refused request
//! itself — clears the suspicion. A genuine refusal therefore ends a fetch after about
//! `CONFIRMATIONS` RTOs (≈ 0.6 s with the 200 ms RTO floor), naming the node that sent it;
//! a forged one costs a fetch at most one RTO of waiting, and an attacker on the path must
//! forge the answers to `CONFIRMATIONS` successive requests *and* drop every genuine answer
//! to them — which is dropping the fetch's packets, which ends any fetch.

use core::time::Duration;

use crate::node::NodeId;
use crate::time::Time;
use crate::wire::NackCode;

/// The first hold after a Busy.
pub const BUSY_HOLD_BASE: Duration = Duration::from_millis(1);
/// The longest hold after Busy answers: the burst a server's bucket holds
/// (`server::ShareConfig::burst`, 20 ms).
pub const MAX_BUSY_HOLD: Duration = Duration::from_millis(20);
/// The back-off ends when served requests shrank the hold below this.
pub const MIN_BUSY_HOLD: Duration = Duration::from_micros(10);
/// Terminal Nacks (answering requests each sent after the previous Nack) that end a fetch.
pub const CONFIRMATIONS: u32 = 3;

/// Busy back-off state (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BusyBackoff {
    /// The spacing of requests while backing off (zero: not backing off).
    hold: Duration,
    /// When the hold last grew: a Busy answering a request sent before then is of the same
    /// round.
    raised_at: Time,
    /// When the hold last shrank: only a request sent since shrinks it again (once per round
    /// trip).
    relaxed_at: Time,
    /// No request leaves before this.
    until: Time,
    /// The tag of the request whose Busy last grew the hold.
    tag: u32,
    /// The first and last unit that Busy refused: a Data for one of them with that tag
    /// proves the Busy forged. (rdtp's Busy refuses a whole request; an NDN consumer's
    /// Congestion Nack one unit of it, while the request's other units are served.)
    refused: (u64, u64),
}

/// Growth of the hold per Busy round.
const BUSY_GROWTH: f64 = 1.5;
/// Shrinking of the hold per round trip served since it last changed.
const BUSY_RELIEF: f64 = 0.9;

impl BusyBackoff {
    /// A Busy answered the request with `tag` sent at `sent_at`. Returns whether it starts a
    /// new round (the hold grew; the controller should hear of congestion).
    pub(crate) fn on_busy(&mut self, now: Time, sent_at: Time, tag: u32, refused: (u64, u64)) -> bool {
        if !self.hold.is_zero() && sent_at < self.raised_at {
            return false; // sent before the hold last grew: that growth answered it
        }
        self.hold =
            if self.hold.is_zero() { BUSY_HOLD_BASE } else { self.hold.mul_f64(BUSY_GROWTH) }.min(MAX_BUSY_HOLD);
        self.raised_at = now;
        self.until = self.until.max(now + self.hold);
        self.tag = tag;
        self.refused = refused;
        true
    }

    /// A request left at `now`: while backing off, the next one waits a hold.
    pub(crate) fn on_sent(&mut self, now: Time) {
        if !self.hold.is_zero() {
            self.until = self.until.max(now + self.hold);
        }
    }

    /// A Data for `unit` answered the request with `tag`, sent at `sent_at` (`Time::ZERO` if
    /// unknown).
    pub(crate) fn on_served(&mut self, now: Time, sent_at: Time, tag: u32, unit: u64) {
        if self.hold.is_zero() {
            return;
        }
        if tag == self.tag && (self.refused.0..=self.refused.1).contains(&unit) {
            // The request whose Busy grew the hold was served: that Busy was forged.
            self.tag = 0;
            self.shrink(1.0 / BUSY_GROWTH);
            self.until = self.until.min(now);
        } else if sent_at >= self.raised_at.max(self.relaxed_at) {
            // Served, and sent since the hold last changed: the debt is being paid.
            self.relaxed_at = now;
            self.shrink(BUSY_RELIEF);
        }
    }

    fn shrink(&mut self, factor: f64) {
        self.hold = self.hold.mul_f64(factor);
        if self.hold < MIN_BUSY_HOLD {
            self.hold = Duration::ZERO; // requests leave as the controller sends them again
        }
    }

    /// No request may leave before this.
    pub(crate) fn until(&self) -> Time {
        self.until
    }

    /// Whether requests are spaced (after a Busy, until served requests shrank the hold away).
    pub(crate) fn backing_off(&self) -> bool {
        !self.hold.is_zero()
    }

    /// The current spacing of requests (zero: not backing off).
    #[cfg(test)]
    pub(crate) fn hold(&self) -> Duration {
        self.hold
    }
}

/// A terminal Nack not yet confirmed (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Suspicion {
    pub(crate) code: NackCode,
    /// The node that sent the latest refusal, and the routers its Nack crossed.
    pub(crate) from: NodeId,
    pub(crate) hops: u8,
    /// Its text, control characters removed.
    pub(crate) detail: String,
    /// Refusals so far (1 ..= `CONFIRMATIONS`).
    pub(crate) count: u32,
    /// When the first refused request was sent: a Data answering a request sent since
    /// contradicts the refusal.
    pub(crate) first_sent: Time,
    /// When the latest refusal arrived: the next one counts only if it answers a request
    /// sent after it.
    pub(crate) last_at: Time,
    /// No request leaves before this; with `count == CONFIRMATIONS`, the fetch fails then.
    pub(crate) until: Time,
    /// Tags of the refused requests (a Data echoing one proves its refusal forged).
    pub(crate) tags: Vec<u32>,
}

/// Most refused tags remembered.
const SUSPECT_TAGS: usize = 64;

impl Suspicion {
    /// A first terminal Nack, answering the request `tag` sent at `sent_at`, with `wait` (an RTO)
    /// before anything is asked again.
    pub(crate) fn new(now: Time, n: &crate::wire::Nack<'_>, sent_at: Time, wait: Duration) -> Self {
        Suspicion {
            code: n.code,
            from: n.from,
            hops: n.hops,
            detail: clean(n.detail),
            count: 1,
            first_sent: sent_at,
            last_at: now,
            until: now + wait,
            tags: vec![n.tag],
        }
    }

    /// Another terminal Nack, answering the request sent at `sent_at`: counts if that request
    /// was sent after the latest refusal. Returns whether it counted.
    pub(crate) fn on_nack(&mut self, now: Time, n: &crate::wire::Nack<'_>, sent_at: Time, wait: Duration) -> bool {
        if self.tags.len() < SUSPECT_TAGS && !self.tags.contains(&n.tag) {
            self.tags.push(n.tag);
        }
        if sent_at < self.last_at || self.count >= CONFIRMATIONS {
            return false;
        }
        self.count += 1;
        self.code = n.code;
        self.from = n.from;
        self.hops = n.hops;
        self.detail = clean(n.detail);
        self.last_at = now;
        self.until = now + wait;
        true
    }

    /// Whether a Data answering the request `tag` sent at `sent_at` contradicts the refusal.
    pub(crate) fn contradicted_by(&self, sent_at: Time, tag: u32) -> bool {
        sent_at >= self.first_sent || self.tags.contains(&tag)
    }

    /// Whether the refusal is confirmed and its last wait is over: the fetch fails.
    pub(crate) fn is_final(&self, now: Time) -> bool {
        self.count >= CONFIRMATIONS && now >= self.until
    }
}

/// A Nack's text without control characters (it is printed).
fn clean(detail: &str) -> String {
    detail.chars().filter(|c| !c.is_control()).collect()
}

/// Who sent a Nack, for messages: `the origin` (or `the origin ID`), `router ID` or `node ID`,
/// and how far: `(1 hop away)` for a node the receiver talks to directly, one more per
/// router the Nack crossed (`the origin (2 hops away)`). `origin` says whether the id is known to be the origin's (it served
/// uncached Data, or is the default origin id); `router` whether it served from its store.
pub fn describe_node(from: NodeId, hops: u8, origin: bool, router: bool) -> String {
    let away = u32::from(hops) + 1;
    let s = if away == 1 { "" } else { "s" };
    let who = if from == NodeId::ORIGIN {
        "the origin".to_string()
    } else if origin {
        format!("the origin {from}")
    } else if router {
        format!("router {from}")
    } else {
        format!("node {from}")
    };
    format!("{who} ({away} hop{s} away)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    #[test]
    fn busy_holds_grow_by_half_per_round_and_shrink_per_round_trip_served() {
        let us = Duration::from_micros;
        let mut b = BusyBackoff::default();
        assert!(b.on_busy(at(10), at(9), 1, (0, 63)));
        assert_eq!((b.hold(), b.until()), (us(1000), at(11)));
        // Another Busy of the same burst (sent before the hold grew): same round.
        assert!(!b.on_busy(at(10), at(9), 2, (0, 63)));
        assert_eq!(b.hold(), us(1000));
        // Requests are spaced by the hold while backing off.
        b.on_sent(at(11));
        assert_eq!(b.until(), at(12));
        assert!(b.on_busy(at(12), at(11), 3, (0, 63)));
        assert_eq!(b.hold(), us(1500));
        assert!(b.on_busy(at(14), at(13), 4, (0, 63)));
        assert_eq!(b.hold(), us(2250));
        // Served after the hold grew: a tenth less, once per round trip.
        b.on_served(at(20), at(19), 5, 0);
        assert_eq!(b.hold(), us(2025));
        b.on_served(at(20), at(19), 6, 0);
        assert_eq!(b.hold(), us(2025), "sent before the last change");
        b.on_served(at(21), at(20), 7, 0);
        assert_eq!(b.hold(), us(1822) + Duration::from_nanos(500));
        // Below MIN_BUSY_HOLD it ends: requests leave as the controller sends them.
        for i in 0..100 {
            b.on_served(at(22 + i), at(22 + i), 8, 0);
        }
        assert_eq!(b.hold(), Duration::ZERO);
        b.on_sent(at(300));
        assert!(b.until() < at(300));
        // Never longer than MAX_BUSY_HOLD.
        for i in 0..100 {
            b.on_busy(at(400 + 2 * i), at(400 + 2 * i), 7, (0, 63));
        }
        assert_eq!(b.hold(), MAX_BUSY_HOLD);
    }

    #[test]
    fn a_busy_for_one_unit_is_not_disproved_by_the_other_units_of_its_request() {
        // An NDN consumer's Congestion Nack refuses one Interest, that is one unit (5) of a
        // request (tag 42) whose other units are served: the back-off stands.
        let mut b = BusyBackoff::default();
        b.on_busy(at(10), at(9), 42, (5, 5));
        let hold = b.hold();
        b.on_served(at(10), at(9), 42, 6);
        assert_eq!(b.hold(), hold, "unit 6 was not refused");
        // The refused unit itself served with that tag: forged.
        b.on_served(at(10), at(9), 42, 5);
        assert!(b.hold() < hold);
    }

    #[test]
    fn a_busy_whose_request_is_served_was_forged() {
        let mut b = BusyBackoff::default();
        b.on_busy(at(10), at(9), 42, (0, 63));
        b.on_busy(at(12), at(11), 43, (0, 63));
        assert_eq!(b.hold(), Duration::from_micros(1500));
        b.on_served(at(12), at(11), 43, 0);
        assert_eq!((b.hold(), b.until()), (Duration::from_millis(1), at(12)), "the step is undone and the hold lifted");
    }

    #[test]
    fn nodes_are_named_with_their_distance() {
        let r1: NodeId = "r1".parse().unwrap();
        assert_eq!(describe_node(NodeId::ORIGIN, 0, true, false), "the origin (1 hop away)");
        assert_eq!(describe_node(NodeId::ORIGIN, 2, false, false), "the origin (3 hops away)");
        assert_eq!(describe_node(r1, 0, false, true), "router r1 (1 hop away)");
        assert_eq!(describe_node(r1, 1, true, false), "the origin r1 (2 hops away)");
        assert_eq!(describe_node(r1, 0, false, false), "node r1 (1 hop away)");
    }
}
