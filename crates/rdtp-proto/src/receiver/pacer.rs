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
}

impl Pacer {
    pub fn new(max_credit: Duration) -> Self {
        Pacer { next_send: Time::ZERO, max_credit }
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
            return;
        };
        // Slightly late: keep the schedule. Idle for longer: restart it from now.
        let start = if now - self.next_send <= self.max_credit { self.next_send } else { now };
        self.next_send = start + Duration::from_secs_f64(bytes as f64 / rate);
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
}
