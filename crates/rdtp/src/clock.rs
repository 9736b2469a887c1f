//! Monotonic clock → [`rdtp_proto::Time`].
//!
//! The sans-IO core never reads a clock; the runtime hands it `Time`s measured from a
//! base instant chosen when the clock is created (for a fetch: when it starts).

use std::time::{Duration, Instant};

use rdtp_proto::Time;

/// A monotonic clock whose origin is the instant it was created.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    base: Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// A clock whose origin ([`Time::ZERO`]) is now.
    pub fn new() -> Self {
        Clock { base: Instant::now() }
    }

    /// The current time.
    pub fn now(&self) -> Time {
        Time::from_nanos(u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    /// The base instant (what [`Time::ZERO`] stands for).
    pub fn base(&self) -> Instant {
        self.base
    }

    /// How long from now until `t` (zero if `t` is past).
    pub fn until(&self, t: Time) -> Duration {
        t - self.now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_and_starts_near_zero() {
        let c = Clock::new();
        let a = c.now();
        std::thread::sleep(Duration::from_millis(2));
        let b = c.now();
        assert!(b > a);
        assert!(b - a >= Duration::from_millis(2));
        assert!(a < Time::from_millis(100));
        assert_eq!(c.until(Time::ZERO), Duration::ZERO);
    }
}
