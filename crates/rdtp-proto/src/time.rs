//! Time as the core sees it: nanoseconds since an origin the caller chooses.
//!
//! The core never reads a clock. Every entry point takes `now: Time`; the UDP runtime
//! passes a monotonic clock, the ns-3 glue passes `Simulator::Now()`, the test harness
//! passes virtual time. Only differences between two `Time`s mean anything.

use core::fmt;
use core::ops::{Add, AddAssign, Sub};
use core::time::Duration;

/// A point in time, in nanoseconds since an arbitrary origin.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(u64);

impl Time {
    /// The origin.
    pub const ZERO: Time = Time(0);
    /// Latest representable instant; used as "never".
    pub const MAX: Time = Time(u64::MAX);

    /// `n` nanoseconds after the origin.
    pub const fn from_nanos(n: u64) -> Self {
        Time(n)
    }
    /// `us` microseconds after the origin.
    pub const fn from_micros(us: u64) -> Self {
        Time(us * 1_000)
    }
    /// `ms` milliseconds after the origin.
    pub const fn from_millis(ms: u64) -> Self {
        Time(ms * 1_000_000)
    }
    /// Nanoseconds since the origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the origin, as a float (for logs and plots).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later than `self`.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
    /// `self - d`, clamped at the origin.
    pub fn saturating_sub(self, d: Duration) -> Time {
        Time(self.0.saturating_sub(duration_nanos(d)))
    }
}

/// A duration in whole nanoseconds, saturating at `u64::MAX` (≈ 584 years).
pub(crate) fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(duration_nanos(d)))
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

/// `a - b` saturates at zero: asking how long ago a future instant was is not an error.
impl Sub<Time> for Time {
    type Output = Duration;
    fn sub(self, rhs: Time) -> Duration {
        self.saturating_since(rhs)
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Time::from_millis(5);
        assert_eq!(t + Duration::from_millis(3), Time::from_millis(8));
        assert_eq!(Time::from_millis(8) - t, Duration::from_millis(3));
        assert_eq!(t - Time::from_millis(8), Duration::ZERO);
        assert_eq!(Time::MAX + Duration::from_secs(1), Time::MAX);
        assert_eq!(t.saturating_sub(Duration::from_secs(1)), Time::ZERO);
    }
}
