//! A windowed minimum or maximum: the best value seen over the last `window` of time, where
//! time is whatever the caller counts in (packet-timed rounds, or [`Time`]).
//!
//! The filter keeps `N` samples, best first, each newer than the one before: the best, the
//! best seen after it, and so on. When the best ages out of the window the next one is
//! promoted, so the extreme over the window is tracked in constant space and time. This is
//! Kathleen Nichols' algorithm as Linux `lib/win_minmax.c` implements it for `N = 3`
//! (`minmax_running_max`/`minmax_running_min`; BBR's bottleneck-bandwidth filter, seed 000
//! eq. 6). With `N = 1` it is "keep the best sample until a better one comes or it is older
//! than the window, then take the next sample whatever it is": Linux `bbr_update_min_rtt`'s
//! min-RTT filter (seed 000 eq. 7).

use core::marker::PhantomData;
use core::time::Duration;

use crate::time::Time;

/// Which extreme a filter keeps.
pub trait Extreme {
    /// Whether `new` is at least as good as `current` (and so replaces it).
    fn supersedes<V: PartialOrd>(new: V, current: V) -> bool;
}

/// Keep the maximum.
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;

/// Keep the minimum.
#[derive(Clone, Copy, Debug, Default)]
pub struct Min;

impl Extreme for Max {
    fn supersedes<V: PartialOrd>(new: V, current: V) -> bool {
        new >= current
    }
}

impl Extreme for Min {
    fn supersedes<V: PartialOrd>(new: V, current: V) -> bool {
        new <= current
    }
}

/// What a filter measures time in.
pub trait Clock: Copy + PartialEq {
    /// A length of time.
    type Span: Copy + PartialOrd;
    /// `self - earlier`, zero if `earlier` is later.
    fn since(self, earlier: Self) -> Self::Span;
    /// `span × num / den` (the sub-windows at which candidates are refreshed).
    fn part(span: Self::Span, num: u32, den: u32) -> Self::Span;
}

/// Packet-timed round trips (BBR's `rtt_cnt`).
impl Clock for u64 {
    type Span = u64;
    fn since(self, earlier: u64) -> u64 {
        self.saturating_sub(earlier)
    }
    fn part(span: u64, num: u32, den: u32) -> u64 {
        span * u64::from(num) / u64::from(den)
    }
}

impl Clock for Time {
    type Span = Duration;
    fn since(self, earlier: Time) -> Duration {
        self - earlier
    }
    fn part(span: Duration, num: u32, den: u32) -> Duration {
        span * num / den
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample<V, C> {
    at: C,
    value: V,
}

/// The best `V` (by `E`) over the last `window` of `C`, tracked with `N` samples.
#[derive(Clone, Debug)]
pub struct WindowedFilter<V, C: Clock, E, const N: usize> {
    window: C::Span,
    s: [Sample<V, C>; N],
    extreme: PhantomData<E>,
}

impl<V, C, E, const N: usize> WindowedFilter<V, C, E, N>
where
    V: Copy + PartialOrd,
    C: Clock,
    E: Extreme,
{
    /// A filter over `window` that starts with `value` measured at `at` (Linux `minmax_reset`;
    /// BBR starts its bandwidth filter at 0 and its min-RTT at "none yet" as of its creation).
    pub fn new(window: C::Span, at: C, value: V) -> Self {
        const { assert!(N > 0, "a windowed filter needs at least one sample") };
        WindowedFilter { window, s: [Sample { at, value }; N], extreme: PhantomData }
    }

    /// The best value over the window.
    pub fn get(&self) -> V {
        self.s[0].value
    }

    /// Whether the best value was measured more than a window before `now`.
    pub fn is_expired(&self, now: C) -> bool {
        now.since(self.s[0].at) > self.window
    }

    /// Forget everything; start over with `value` measured at `at`.
    pub fn reset(&mut self, at: C, value: V) {
        self.s = [Sample { at, value }; N];
    }

    /// Keep the current best but count its age from `now` (Linux `bbr_check_probe_rtt_done`
    /// restamps the min-RTT so that the next ProbeRTT is a full window away).
    pub fn restamp(&mut self, now: C) {
        self.reset(now, self.get());
    }

    /// Add `value` measured at `now`; returns the new best.
    pub fn update(&mut self, now: C, value: V) -> V {
        let new = Sample { at: now, value };
        // A new overall best, or nothing seen for a whole window: start over.
        if E::supersedes(value, self.s[0].value) || now.since(self.s[N - 1].at) > self.window {
            self.reset(now, value);
            return value;
        }
        // Otherwise it replaces the first candidate it is at least as good as, and all later ones.
        if let Some(i) = (1..N).find(|&i| E::supersedes(value, self.s[i].value)) {
            self.s[i..].fill(new);
        }
        self.age(new);
        self.s[0].value
    }

    /// Promote candidates as the best ages out, and refresh candidates that have been equal
    /// to the one before them for the `i/(N+1)`-th part of the window (Linux: a quarter for
    /// the second, half for the third), so that the samples stay spread over the window.
    fn age(&mut self, new: Sample<V, C>) {
        let dt = new.at.since(self.s[0].at);
        if dt > self.window {
            self.s.rotate_left(1);
            self.s[N - 1] = new;
            // The promoted sample may be out of the window as well.
            if new.at.since(self.s[0].at) > self.window {
                self.s.rotate_left(1);
                self.s[N - 1] = new;
            }
            return;
        }
        let den = N as u32 + 1;
        if let Some(i) = (1..N).find(|&i| self.s[i].at == self.s[i - 1].at && dt > C::part(self.window, i as u32, den))
        {
            self.s[i..].fill(new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type RoundMax = WindowedFilter<f64, u64, Max, 3>;

    #[test]
    fn keeps_max_within_window_and_forgets_after() {
        let mut f = RoundMax::new(10, 0, 0.0);
        assert_eq!(f.update(1, 100.0), 100.0);
        for r in 2..=11 {
            assert_eq!(f.update(r, 50.0), 100.0, "round {r}");
        }
        // Round 12 is more than 10 rounds after the best (round 1): it ages out.
        assert_eq!(f.update(12, 50.0), 50.0);
        assert_eq!(f.update(13, 80.0), 80.0);
    }

    #[test]
    fn second_best_is_promoted() {
        let mut f = RoundMax::new(10, 0, 0.0);
        f.update(0, 100.0);
        f.update(5, 90.0);
        f.update(8, 70.0);
        assert_eq!(f.update(11, 10.0), 90.0);
        assert_eq!(f.update(16, 10.0), 70.0);
    }

    #[test]
    fn candidates_refresh_after_a_quarter_and_a_half_window() {
        let mut f = RoundMax::new(8, 0, 100.0);
        // Three rounds (> 8/4) with no second choice: the next sample becomes one.
        assert_eq!(f.update(3, 40.0), 100.0);
        // Five rounds (> 8/2) with the third equal to the second: it is refreshed.
        assert_eq!(f.update(5, 30.0), 100.0);
        assert_eq!(f.update(9, 10.0), 40.0);
        assert_eq!(f.update(12, 10.0), 30.0);
    }

    #[test]
    fn one_sample_min_is_linux_min_rtt() {
        let ms = Duration::from_millis;
        let at = Time::from_millis;
        let mut f = WindowedFilter::<Duration, Time, Min, 1>::new(ms(10_000), Time::ZERO, Duration::MAX);
        assert_eq!(f.update(at(1), ms(30)), ms(30));
        assert_eq!(f.update(at(2), ms(30)), ms(30), "an equal sample refreshes the stamp");
        assert_eq!(f.update(at(5_000), ms(40)), ms(30));
        assert!(!f.is_expired(at(10_002)));
        assert!(f.is_expired(at(10_003)));
        // Expired: the next sample is taken whatever it is.
        assert_eq!(f.update(at(10_003), ms(40)), ms(40));
        f.restamp(at(20_000));
        assert!(!f.is_expired(at(30_000)));
        assert_eq!(f.update(at(30_000), ms(50)), ms(40));
    }
}
