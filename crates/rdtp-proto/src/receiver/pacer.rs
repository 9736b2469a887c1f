//! Request pacing (seed 000 §3.5): after a request for M bytes the next one may leave
//! M / pacing_rate later.
//!
//! A caller that wakes late (timer slack, a busy event loop) by at most `max_credit` keeps
//! its schedule, so late wakeups do not lower the request rate; after a longer idle
//! period the schedule restarts from now, so idleness never turns into a burst.

use core::time::Duration;

use crate::time::Time;

#[derive(Clone, Debug)]
pub struct Pacer {
    next_send: Time,
    max_credit: Duration,
    /// The slot of the last paced request: its start and its bytes ([`Pacer::retime`]).
    last: Option<(Time, u64)>,
}

impl Pacer {
    pub fn new(max_credit: Duration) -> Self {
        Pacer { next_send: Time::ZERO, max_credit, last: None }
    }

    /// Earliest time the next request may leave.
    pub fn next_send(&self) -> Time {
        self.next_send
    }

    /// Whether a request may leave at `now`.
    pub fn ready(&self, now: Time) -> bool {
        now >= self.next_send
    }

    /// A request for `bytes` left at `now`; `rate` is in bytes/s, `None` = unpaced.
    pub fn on_send(&mut self, now: Time, bytes: u64, rate: Option<f64>) {
        let Some(rate) = rate.filter(|r| *r > 0.0 && r.is_finite()) else {
            self.next_send = now;
            self.last = None;
            return;
        };
        // Slightly late: keep the schedule. Idle for longer: restart it from now.
        let start = if now - self.next_send <= self.max_credit { self.next_send } else { now };
        self.next_send = start + Duration::from_secs_f64(bytes as f64 / rate);
        self.last = Some((start, bytes));
    }

    /// The rate changed since the last request: if the last request's bytes at `rate` give an
    /// earlier slot than the one scheduled, take it (never a later one: a rate that fell
    /// applies from the next request on). Seed 001's BBR-CD recomputes the next send time at
    /// every data arrival and timeout (S1 §III-B, §III-C); without this, a request scheduled
    /// at ProbeRTT's 4 units/s would hold the flow for 250 ms after ProbeRTT ended.
    pub fn retime(&mut self, rate: Option<f64>) {
        let Some((start, bytes)) = self.last else { return };
        let at = match rate.filter(|r| *r > 0.0 && r.is_finite()) {
            Some(rate) => start + Duration::from_secs_f64(bytes as f64 / rate),
            None => start,
        };
        self.next_send = self.next_send.min(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_requests_and_bounds_catch_up() {
        let mut p = Pacer::new(Duration::from_millis(1));
        let t = Time::from_millis(100);
        p.on_send(t, 1_000_000, Some(1e9)); // 1 MB at 1 GB/s: 1 ms
        assert_eq!(p.next_send(), Time::from_millis(101));
        assert!(!p.ready(Time::from_micros(100_999)));
        // Woken 300 µs late: the next slot is still 1 ms after the previous one.
        p.on_send(Time::from_micros(101_300), 1_000_000, Some(1e9));
        assert_eq!(p.next_send(), Time::from_millis(102));
        // After a long idle period the schedule restarts: no burst.
        p.on_send(Time::from_millis(500), 1_000_000, Some(1e9));
        assert_eq!(p.next_send(), Time::from_millis(501));
        p.on_send(Time::from_millis(500), 1_000, None);
        assert!(p.ready(Time::from_millis(500)));
    }

    #[test]
    fn retime_only_brings_the_next_slot_forward() {
        let mut p = Pacer::new(Duration::from_millis(1));
        p.retime(Some(1.0));
        assert_eq!(p.next_send(), Time::ZERO, "nothing sent yet: nothing to retime");
        // 1000 bytes at 4000 B/s: the next slot is 250 ms later.
        p.on_send(Time::from_millis(100), 1_000, Some(4_000.0));
        assert_eq!(p.next_send(), Time::from_millis(350));
        // The rate falls: the slot stays.
        p.retime(Some(1_000.0));
        assert_eq!(p.next_send(), Time::from_millis(350));
        // The rate rises to 1 MB/s: 1 ms after the last request.
        p.retime(Some(1e6));
        assert_eq!(p.next_send(), Time::from_millis(101));
        // Unpaced: now.
        p.retime(None);
        assert_eq!(p.next_send(), Time::from_millis(100));
    }
}
