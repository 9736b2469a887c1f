//! Next-hop liveness (issue 23, item 14): a router whose next hop is dead says so, naming it,
//! instead of leaving its receivers to time out with "no answer from the server".
//!
//! For each next hop the router remembers when it first sent it something that is still
//! unanswered — more exactly, the first request sent since the last datagram of any kind
//! came from that hop — and how many times it asked since, counting requests less than
//! 1/16 of the timeout apart as one attempt. A hop that has been asked at least
//! [`MIN_ATTEMPTS`] times and has sent nothing at all for
//! [`RouterConfig::upstream_timeout`](super::RouterConfig::upstream_timeout) is *silent*:
//! the router then refuses everything pending toward it with Nack `NoRoute` ("upstream
//! ADDR did not answer within 2 s", the router's node id as `from`). Slow Data is not
//! silence: any Data, Nack, Retry or answer from the hop, for any request, shows it alive.
//! Nor is one lost request: on a lossy path whose traffic is sparse (a second fetch that
//! the store answers but for a unit or two), a receiver's re-requests back off, so one
//! request and its two re-requests lost can span the timeout; the hop must have let down
//! several attempts before it is called dead. A hop that is really dead is found when the
//! timeout has passed and receivers have asked again twice (their RTOs, which start at 1 s:
//! about 3 s after the first request). An attempt more than two timeouts after the last
//! one starts the count again: it says nothing of the hop now.
//!
//! After that the hop is *presumed dead*: the next request for it is forwarded as usual (a
//! probe; it waits the timeout again), and requests that come while that probe is
//! unanswered are refused at once. Anything from the hop clears it. So a dead hop costs a
//! receiver at most one timeout, a hop that comes back is used again at the next probe,
//! and the router sends it at most one request per timeout in the meantime (besides
//! requests that join what is already pending).
//!
//! State: at most [`HOPS`] next hops (next hops come from the forwarding table, not from
//! receivers), two words each, and the earliest deadline; a scan of them when a deadline
//! passes (about once per timeout while requests are unanswered).

use std::net::SocketAddr;

use core::time::Duration;

use super::hashing::{Map, TableHasher, map};
use crate::time::Time;

/// Next hops whose liveness is followed at most (beyond, new ones are not: their pending
/// entries just expire, as they did before this module).
pub(crate) const HOPS: usize = 1024;

/// Attempts (requests at least 1/16 of the timeout apart) a hop must leave unanswered, over
/// a whole timeout, to be presumed dead.
pub(crate) const MIN_ATTEMPTS: u8 = 3;

#[derive(Clone, Copy, Debug, Default)]
struct Hop {
    /// When the first request since the hop was last heard from left.
    asked_since: Option<Time>,
    /// Attempts since then, and when the last one left.
    attempts: u8,
    last_attempt: Time,
    /// It stayed silent for a whole timeout, and has not been heard from since.
    presumed_dead: bool,
}

/// The liveness of a router's next hops.
#[derive(Debug)]
pub(crate) struct Liveness {
    timeout: Duration,
    hops: Map<SocketAddr, Hop>,
    /// No hop's deadline is earlier than this (`None`: no hop is waited for).
    due: Option<Time>,
}

impl Liveness {
    pub(crate) fn new(timeout: Duration, h: &TableHasher) -> Self {
        Liveness { timeout, hops: map(h), due: None }
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A request left for `hop` at `now`.
    pub(crate) fn sent(&mut self, now: Time, hop: SocketAddr) {
        if self.timeout.is_zero() || (self.hops.len() >= HOPS && !self.hops.contains_key(&hop)) {
            return;
        }
        let (timeout, spacing) = (self.timeout, self.timeout / 16);
        let h = self.hops.entry(hop).or_default();
        let deadline = match h.asked_since {
            // Something unanswered, asked recently enough to say something of the hop now.
            Some(since) if now < h.last_attempt + 2 * timeout => {
                if now < h.last_attempt + spacing {
                    return; // the same attempt
                }
                h.attempts = h.attempts.saturating_add(1);
                h.last_attempt = now;
                // With enough attempts after the timeout already passed: silent now.
                since + timeout
            }
            // Nothing unanswered, or only an attempt too old to count.
            _ => {
                (h.asked_since, h.attempts, h.last_attempt) = (Some(now), 1, now);
                now + timeout
            }
        };
        self.due = Some(self.due.map_or(deadline, |d| d.min(deadline)));
    }

    /// A datagram (of any kind) came from `hop`: it is alive.
    pub(crate) fn heard(&mut self, hop: SocketAddr) {
        if let Some(h) = self.hops.get_mut(&hop) {
            *h = Hop::default();
        }
    }

    /// Whether a request for `hop` must be refused at once: the hop is presumed dead and a
    /// probe is already waiting for its answer.
    pub(crate) fn refuses(&self, hop: SocketAddr) -> bool {
        self.hops.get(&hop).is_some_and(|h| h.presumed_dead && h.asked_since.is_some())
    }

    /// When [`Liveness::expire`] must next be called.
    pub(crate) fn next_deadline(&self) -> Option<Time> {
        self.due
    }

    /// The hops that have been silent for a whole timeout by `now`, into `out`: each is
    /// presumed dead from now on (and reported once per silence).
    pub(crate) fn expire(&mut self, now: Time, out: &mut Vec<SocketAddr>) {
        if self.due.is_none_or(|d| d > now) {
            return;
        }
        let mut due: Option<Time> = None;
        for (&addr, h) in self.hops.iter_mut() {
            let Some(since) = h.asked_since else { continue };
            let deadline = since + self.timeout;
            if deadline <= now {
                // A probe of a hop presumed dead is one attempt by design.
                if h.presumed_dead || h.attempts >= MIN_ATTEMPTS {
                    h.asked_since = None;
                    h.presumed_dead = true;
                    out.push(addr);
                    continue;
                }
                // Too few attempts: due again when the next one leaves; forgotten when the
                // last is too old to count (so stale hops do not crowd out new ones).
                let stale = h.last_attempt + 2 * self.timeout;
                if stale <= now {
                    *h = Hop::default();
                } else {
                    due = Some(due.map_or(stale, |d| d.min(stale)));
                }
                continue;
            }
            due = Some(due.map_or(deadline, |d| d.min(deadline)));
        }
        // Hops that are neither waited for nor presumed dead need no memory.
        self.hops.retain(|_, h| h.asked_since.is_some() || h.presumed_dead);
        self.due = due;
    }
}

/// `d` as a person reads it: "2 s", "1.5 s", "300 ms".
pub(crate) fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms >= 1000 && ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else if ms >= 1000 {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        format!("{ms} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(p: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 9], p))
    }

    fn t(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    #[test]
    fn silence_for_a_whole_timeout_and_nothing_less_presumes_a_hop_dead() {
        let mut l = Liveness::new(Duration::from_secs(2), &TableHasher::default());
        let mut dead = vec![];
        l.sent(t(0), a(1));
        l.sent(t(500), a(1)); // still the first unanswered request that counts the time
        l.sent(t(700), a(1)); // a third attempt
        for ms in [1000, 1200, 1400] {
            l.sent(t(ms), a(2));
        }
        assert_eq!(l.next_deadline(), Some(t(2000)));
        l.expire(t(1999), &mut dead);
        assert!(dead.is_empty());
        // a(2) answers something (slow Data for an older request, say): alive.
        l.heard(a(2));
        l.expire(t(2000), &mut dead);
        assert_eq!(dead, [a(1)]);
        assert!(!l.refuses(a(1)), "the next request is a probe");
        l.sent(t(2100), a(1));
        assert!(l.refuses(a(1)), "while the probe waits, others are refused at once");
        assert!(!l.refuses(a(2)));
        // a(2) was asked again after it was heard: a new deadline.
        for ms in [2500, 2700, 2900] {
            l.sent(t(ms), a(2));
        }
        dead.clear();
        l.expire(t(4099), &mut dead);
        assert!(dead.is_empty());
        l.expire(t(4100), &mut dead);
        assert_eq!(dead, [a(1)], "the probe went unanswered too");
        // a(1) comes back: it is used as before.
        l.heard(a(1));
        assert!(!l.refuses(a(1)));
        dead.clear();
        l.expire(t(4500), &mut dead);
        assert_eq!(dead, [a(2)]);
        assert_eq!(l.next_deadline(), None);
        assert_eq!(l.hops.len(), 1, "only the hop presumed dead is remembered");
    }

    /// The flake this rule fixed: a lossy upstream that the store makes quiet (one unit left
    /// to fetch), its request lost twice while the receiver's re-requests back off.
    #[test]
    fn a_hop_is_not_presumed_dead_for_fewer_than_three_attempts_unanswered() {
        let mut l = Liveness::new(Duration::from_secs(2), &TableHasher::default());
        let mut dead = vec![];
        l.sent(t(0), a(1));
        l.sent(t(50), a(1)); // too close to the first: the same attempt
        l.sent(t(1000), a(1));
        l.expire(t(2000), &mut dead);
        assert!(dead.is_empty(), "two attempts over the timeout: not dead");
        assert_eq!(l.next_deadline(), Some(t(5000)), "due again at the next attempt, or to forget the hop");
        // The third attempt, after the timeout: silent at once.
        l.sent(t(3000), a(1));
        assert_eq!(l.next_deadline(), Some(t(2000)), "already due");
        l.expire(t(3000), &mut dead);
        assert_eq!(dead, [a(1)]);
        // The answer to a re-request comes before the third attempt: alive.
        let mut l = Liveness::new(Duration::from_secs(2), &TableHasher::default());
        dead.clear();
        l.sent(t(0), a(2));
        l.sent(t(1000), a(2));
        l.heard(a(2));
        l.sent(t(3000), a(2));
        l.expire(t(3000), &mut dead);
        assert!(dead.is_empty());
        // An attempt more than two timeouts after the last starts the count again.
        l.sent(t(8000), a(2));
        l.sent(t(8500), a(2));
        l.expire(t(8500), &mut dead);
        assert!(dead.is_empty(), "the attempt at 3 s is too old to count");
        assert_eq!(l.next_deadline(), Some(t(10_000)));
        // A hop asked once and never again is forgotten two timeouts after.
        let mut l = Liveness::new(Duration::from_secs(2), &TableHasher::default());
        l.sent(t(0), a(4));
        l.expire(t(2000), &mut dead);
        assert_eq!((l.next_deadline(), l.hops.len()), (Some(t(4000)), 1));
        l.expire(t(4000), &mut dead);
        assert_eq!((l.next_deadline(), l.hops.len()), (None, 0));
        assert!(!dead.contains(&a(4)));
    }

    #[test]
    fn bounded_and_off_with_a_zero_timeout() {
        let mut l = Liveness::new(Duration::from_secs(1), &TableHasher::default());
        for p in 0..(HOPS as u16 + 50) {
            l.sent(t(0), a(p));
        }
        assert_eq!(l.hops.len(), HOPS);
        let mut off = Liveness::new(Duration::ZERO, &TableHasher::default());
        off.sent(t(0), a(1));
        assert_eq!(off.next_deadline(), None);
        assert_eq!(human(Duration::from_secs(2)), "2 s");
        assert_eq!(human(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(human(Duration::from_millis(300)), "300 ms");
    }
}
