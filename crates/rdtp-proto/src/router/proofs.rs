//! The proof requests a router sends itself, to verify blocks before caching them
//! ([`super::verify`]): one outstanding request per block, asked again with exponential
//! back-off, and the answer to *any* attempt accepted (issue 23 item 10).
//!
//! A proof crosses the same queues as the Data it proves, so its round trip grows with the
//! upstream's queue. The timeout is RFC 6298's (`SRTT + 4·RTTVAR`, [`RttEstimator`], the
//! receiver's own estimator) but at least 3 SRTT — a sample arrives one round trip after its
//! request left, so behind a growing queue the next round trip is longer than any sample yet;
//! waiting longer only delays caching one block, asking again costs a request and a Proof
//! on the upstream's link — and at least 20 ms, at most the pending lifetime (a quarter of
//! it before the first sample). It doubles at every expiry (§5.5) and stays doubled until a
//! fresh sample (§5.7, Karn and Partridge). Each attempt goes out under its own tag, and the upstream
//! echoes it, so an answer says which attempt it answers: its sample is measured from that
//! attempt's send time and is never ambiguous (RFC 6298 §3's exception for timestamps, RFC
//! 7323 §4) — late answers to earlier attempts are what teach the estimator that the queue
//! grew. Expiries of several blocks' attempts sent with the same timeout double it once, as
//! TCP's one retransmission timer would. After [`ATTEMPTS`] attempts (a minute at most,
//! seconds at the usual timeouts) the block is left unverified: its units are not cached.
//!
//! Before: the timeout was 3 smoothed round trips sampled from first attempts only, never
//! backed off, and an answer to an earlier attempt was dropped as unsolicited; once the
//! queue outgrew 3 early round trips no answer was ever in time and the router asked 8 times
//! for every block — ≈ 9 500 proof requests for 1 221 blocks, ≈ 10 of them verified, in half
//! of seed 001's Topology 1 rounds (docs/EXPERIMENTS.md §8).

use std::net::SocketAddr;

use core::time::Duration;

use super::expiring::ExpiringMap;
use super::hashing::{Map, TableHasher, map};
use crate::eid::Eid;
use crate::recovery::{RtoConfig, RttEstimator};
use crate::time::Time;

/// Most attempts per block (the first and five more).
pub(crate) const ATTEMPTS: usize = 6;
/// Least timeout: a proof waits behind Data, whose round trip varies by milliseconds.
pub(crate) const MIN_TIMEOUT: Duration = Duration::from_millis(20);

/// A block whose proof this router is asking for.
#[derive(Debug)]
pub(crate) struct Asking {
    pub next_hop: SocketAddr,
    pub depth: u8,
    /// A Retry from the next hop was obeyed already (a second one is not).
    pub retried: bool,
    /// Tag and send time of every attempt, oldest first: an answer to any of them counts.
    attempts: Vec<(u32, Time)>,
    /// The back-off exponent of the latest attempt's timeout.
    shift: u32,
}

impl Asking {
    /// Attempts sent so far.
    pub(crate) fn attempts(&self) -> usize {
        self.attempts.len()
    }
}

/// The router's outstanding proof requests and their timer. No I/O: the router sends the
/// requests and says which tag each went out under.
#[derive(Debug)]
pub(crate) struct OwnProofs {
    asking: ExpiringMap<(Eid, u64), Asking>,
    /// Which block each outstanding attempt's tag asked for.
    tags: Map<u32, (Eid, u64)>,
    rtt: RttEstimator,
}

impl OwnProofs {
    /// At most `capacity` blocks at once; timeouts at most `lifetime` (the pending lifetime).
    pub(crate) fn new(capacity: usize, lifetime: Duration, h: &TableHasher) -> Self {
        let max = lifetime.max(MIN_TIMEOUT);
        let cfg = RtoConfig {
            initial: (lifetime / 4).clamp(MIN_TIMEOUT, max),
            min: MIN_TIMEOUT,
            max,
            k: 4,
            granularity: Duration::ZERO,
        };
        OwnProofs { asking: ExpiringMap::new(capacity.max(1), h), tags: map(h), rtt: RttEstimator::new(cfg) }
    }

    /// The estimator of proof round trips (its RTO is the next first attempt's timeout).
    #[cfg(test)]
    pub(crate) fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// The timeout of an attempt sent now: RFC 6298's RTO, at least 3 SRTT, doubled per
    /// back-off, at most the lifetime (see the module docs).
    pub(crate) fn timeout(&self) -> Duration {
        let doubled = 1u32 << self.rtt.backoffs().min(16);
        let floor = self.rtt.srtt().map_or(Duration::ZERO, |s| (s * 3).saturating_mul(doubled));
        self.rtt.rto().max(floor).min(self.rtt.config().max)
    }

    pub(crate) fn next_expiry(&self) -> Option<Time> {
        self.asking.next_expiry()
    }

    /// Whether a tag is in use by an outstanding attempt (new tags must avoid it).
    pub(crate) fn uses_tag(&self, tag: u32) -> bool {
        self.tags.contains_key(&tag)
    }

    /// The block an outstanding attempt under `tag` asked `from` for.
    pub(crate) fn asked(&self, tag: u32, from: SocketAddr) -> Option<(Eid, u64)> {
        let key = *self.tags.get(&tag)?;
        self.asking.get(&key).is_some_and(|a| a.next_hop == from).then_some(key)
    }

    /// Whether this router is asking for the proof of `block` of `eid` already.
    pub(crate) fn is_asking(&self, eid: Eid, block: u64) -> bool {
        self.asking.get(&(eid, block)).is_some()
    }

    /// Make room for one more block if full: the block with the earliest timeout is
    /// forgotten (returned: it waits in staging unverified).
    pub(crate) fn make_room(&mut self) -> Option<(Eid, u64)> {
        if !self.asking.is_full() {
            return None;
        }
        let (key, a) = self.asking.pop_expired(Time::MAX)?;
        self.forget_tags(&a);
        Some(key)
    }

    /// The first attempt for `block` of `eid` left for `next_hop` at `now` under `tag`.
    pub(crate) fn first(&mut self, now: Time, eid: Eid, block: u64, next_hop: SocketAddr, depth: u8, tag: u32) {
        let a = Asking { next_hop, depth, retried: false, attempts: Vec::new(), shift: 0 };
        self.sent(now, (eid, block), a, tag);
    }

    /// Another attempt for `key` (given back by [`OwnProofs::pop_expired`] or
    /// [`OwnProofs::take_for_retry`]) left at `now` under `tag`; earlier attempts stay
    /// answerable.
    pub(crate) fn again(&mut self, now: Time, key: (Eid, u64), a: Asking, tag: u32) {
        self.sent(now, key, a, tag);
    }

    fn sent(&mut self, now: Time, key: (Eid, u64), mut a: Asking, tag: u32) {
        a.attempts.push((tag, now));
        // The current timeout, backed off if an expiry came after the last sample (Karn).
        a.shift = self.rtt.backoffs();
        self.tags.insert(tag, key);
        if let Err(a) = self.asking.insert(key, a, now + self.timeout()) {
            self.forget_tags(&a);
        }
    }

    /// The answer to the attempt under `tag` (from its next hop: see
    /// [`OwnProofs::asked`]) arrived at `now`: the block's request ends, and the round trip
    /// of that very attempt is a sample. Returns the block and its request.
    pub(crate) fn answered(&mut self, now: Time, tag: u32) -> Option<((Eid, u64), Asking)> {
        let key = *self.tags.get(&tag)?;
        let a = self.asking.remove(&key)?;
        self.forget_tags(&a);
        if let Some(&(_, sent)) = a.attempts.iter().find(|&&(t, _)| t == tag) {
            self.rtt.on_sample(now.saturating_since(sent));
        }
        Some((key, a))
    }

    /// The block's request ends without an answer (a Nack for the attempt under `tag`).
    pub(crate) fn refused(&mut self, tag: u32) -> Option<(Eid, u64)> {
        let key = *self.tags.get(&tag)?;
        let a = self.asking.remove(&key)?;
        self.forget_tags(&a);
        Some(key)
    }

    /// A Retry answered the attempt under `tag`: the request, to be sent again at once with
    /// the new token (through [`OwnProofs::again`]), unless a Retry was obeyed for it before.
    pub(crate) fn take_for_retry(&mut self, tag: u32, from: SocketAddr) -> Option<((Eid, u64), Asking)> {
        let key = self.asked(tag, from)?;
        if self.asking.get(&key).is_some_and(|a| a.retried) {
            return None;
        }
        let mut a = self.asking.remove(&key)?;
        a.retried = true;
        Some((key, a))
    }

    /// A block whose latest attempt timed out by `now`: ask again ([`OwnProofs::again`]) or
    /// give up ([`OwnProofs::give_up`]). The timeout doubles (RFC 6298 §5.5) — once for all
    /// the attempts that were sent with the same timeout.
    pub(crate) fn pop_expired(&mut self, now: Time) -> Option<((Eid, u64), Asking)> {
        let (key, a) = self.asking.pop_expired(now)?;
        if a.shift == self.rtt.backoffs() {
            self.rtt.backoff();
        }
        Some((key, a))
    }

    /// No more attempts for this block: its late answers will count as late.
    pub(crate) fn give_up(&mut self, a: Asking) {
        self.forget_tags(&a);
    }

    fn forget_tags(&mut self, a: &Asking) {
        for (t, _) in &a.attempts {
            self.tags.remove(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop() -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 9], 7447))
    }
    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn timeouts_back_off_once_per_generation_until_a_fresh_sample() {
        let mut p = OwnProofs::new(16, Duration::from_secs(4), &TableHasher::default());
        let e = Eid([7; 32]);
        assert_eq!(p.timeout(), Duration::from_secs(1), "before any sample: a quarter of the lifetime");
        p.first(Time::ZERO, e, 0, hop(), 1, 100);
        let ((key, a), sample) = (p.answered(Time::from_millis(40), 100).unwrap(), p.rtt().srtt());
        assert_eq!((key, a.attempts(), sample), ((e, 0), 1, Some(40 * MS)));
        let rto = p.timeout();
        assert_eq!(rto, 40 * MS + 4 * 20 * MS, "SRTT + 4 RTTVAR (here 3 SRTT as well)");
        // Three blocks asked at once; all time out together: the timeout doubles once.
        for b in 1..=3 {
            p.first(Time::from_millis(100), e, b, hop(), 1, 100 + b as u32);
        }
        let at = Time::from_millis(100) + rto;
        assert_eq!(p.next_expiry(), Some(at));
        let mut expired = vec![];
        while let Some(x) = p.pop_expired(at) {
            expired.push(x);
        }
        assert_eq!((expired.len(), p.rtt().backoffs(), p.timeout()), (3, 1, 2 * rto));
        // Asked again: each waits twice as long, and a new block waits as long (Karn: the
        // backed-off timeout stays until a fresh sample).
        for (i, (key, a)) in expired.into_iter().enumerate() {
            p.again(at, key, a, 200 + i as u32);
        }
        p.first(at, e, 9, hop(), 1, 300);
        assert_eq!(p.next_expiry(), Some(at + 2 * rto));
        // They time out again: doubled once more.
        let at2 = at + 2 * rto;
        let mut n = 0;
        while let Some((key, a)) = p.pop_expired(at2) {
            n += 1;
            assert_eq!(a.attempts(), if key.1 == 9 { 1 } else { 2 });
            p.again(at2, key, a, 400 + n);
        }
        assert_eq!((n, p.rtt().backoffs(), p.timeout()), (4, 2, 4 * rto));
        // The answer to block 1's *first* attempt arrives late: accepted, and its sample is
        // measured from that attempt (unambiguous: the tag says which), which clears the
        // back-off.
        let late = at2 + 10 * MS;
        let ((key, a), srtt) = (p.answered(late, 101).unwrap(), p.rtt().srtt().unwrap());
        assert_eq!((key, a.attempts()), ((e, 1), 3));
        assert!(srtt > 40 * MS, "the long round trip was sampled: {srtt:?}");
        assert_eq!(p.rtt().backoffs(), 0);
        // Its other attempts are forgotten: their answers are late, not ours.
        assert!(p.asked(200, hop()).is_none() && p.asked(401, hop()).is_none());
        assert_eq!(p.asked(201, hop()), Some((e, 2)), "block 2's first retry is still answerable");
        assert!(p.asked(102, SocketAddr::from(([10, 0, 0, 1], 7447))).is_none(), "from another address");
    }

    #[test]
    fn a_block_gets_at_most_its_attempts_and_a_retry_is_obeyed_once() {
        let mut p = OwnProofs::new(16, Duration::from_secs(4), &TableHasher::default());
        let e = Eid([3; 32]);
        p.first(Time::ZERO, e, 5, hop(), 2, 1);
        let (key, a) = p.take_for_retry(1, hop()).unwrap();
        assert_eq!(a.attempts(), 1);
        p.again(Time::ZERO, key, a, 2);
        assert!(p.take_for_retry(2, hop()).is_none(), "a second Retry is not obeyed");
        let mut now = Time::ZERO;
        let mut tag = 3;
        let mut waits = vec![];
        loop {
            let at = p.next_expiry().unwrap();
            waits.push(at - now);
            now = at;
            let (key, a) = p.pop_expired(now).unwrap();
            if a.attempts() >= ATTEMPTS {
                p.give_up(a);
                break;
            }
            p.again(now, key, a, tag);
            tag += 1;
        }
        // 1 s before any sample, then doubled each time, at most the lifetime.
        let s = Duration::from_secs;
        assert_eq!(waits, [s(1), s(2), s(4), s(4), s(4)]);
        assert!(!p.is_asking(e, 5) && !p.uses_tag(1) && !p.uses_tag(tag - 1));
    }

    #[test]
    fn a_full_table_forgets_the_earliest_timeout() {
        let mut p = OwnProofs::new(2, Duration::from_secs(4), &TableHasher::default());
        let e = Eid([1; 32]);
        p.first(Time::ZERO, e, 0, hop(), 1, 10);
        p.first(Time::from_millis(1), e, 1, hop(), 1, 11);
        assert_eq!(p.make_room(), Some((e, 0)));
        assert!(!p.uses_tag(10) && p.uses_tag(11));
        p.first(Time::from_millis(2), e, 2, hop(), 1, 12);
        assert!(p.refused(12) == Some((e, 2)) && !p.is_asking(e, 2));
    }
}
