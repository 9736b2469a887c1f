//! Windowed maximum over packet-timed rounds (the bottleneck-bandwidth filter of
//! seed 000 eq. 6; Linux keeps it with Kathleen Nichols' three-sample running max).
//!
//! Three samples are kept: the best, the second best seen after the best, and the third
//! best seen after the second. When the best ages out of the window the second is promoted,
//! so the maximum over the last `window` rounds is tracked in constant space and time.

#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    round: u64,
    value: f64,
}

/// Running maximum of `value` over the last `window` rounds.
#[derive(Clone, Debug, Default)]
pub(crate) struct MaxFilter {
    s: [Sample; 3],
}

impl MaxFilter {
    /// The current maximum.
    pub(crate) fn get(&self) -> f64 {
        self.s[0].value
    }

    /// Forget everything; start with `value` at `round`.
    pub(crate) fn reset(&mut self, round: u64, value: f64) {
        self.s = [Sample { round, value }; 3];
    }

    /// Add `value` measured at `round`; returns the new maximum.
    pub(crate) fn update(&mut self, window: u64, round: u64, value: f64) -> f64 {
        let new = Sample { round, value };
        // A new overall best, or nothing seen for a whole window: start over.
        if value >= self.s[0].value || round.saturating_sub(self.s[2].round) > window {
            self.reset(round, value);
            return value;
        }
        if value >= self.s[1].value {
            self.s[1] = new;
            self.s[2] = new;
        } else if value >= self.s[2].value {
            self.s[2] = new;
        }
        self.age(window, new);
        self.s[0].value
    }

    /// Promote candidates as the best ages out, and refresh stale candidates so that the
    /// three samples stay spread over the window.
    fn age(&mut self, window: u64, new: Sample) {
        let dt = new.round.saturating_sub(self.s[0].round);
        if dt > window {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = new;
            if new.round.saturating_sub(self.s[0].round) > window {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = new;
            }
        } else if self.s[1].round == self.s[0].round && dt > window / 4 {
            // A quarter of the window passed with no second choice: take one.
            self.s[1] = new;
            self.s[2] = new;
        } else if self.s[2].round == self.s[1].round && dt > window / 2 {
            // Half the window passed with no third choice: take one.
            self.s[2] = new;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_max_within_window_and_forgets_after() {
        let mut f = MaxFilter::default();
        f.reset(0, 0.0);
        assert_eq!(f.update(10, 1, 100.0), 100.0);
        for r in 2..=11 {
            assert_eq!(f.update(10, r, 50.0), 100.0, "round {r}");
        }
        // Round 12 is more than 10 rounds after the best (round 1): it ages out.
        assert_eq!(f.update(10, 12, 50.0), 50.0);
        assert_eq!(f.update(10, 13, 80.0), 80.0);
    }

    #[test]
    fn second_best_is_promoted() {
        let mut f = MaxFilter::default();
        f.reset(0, 0.0);
        f.update(10, 0, 100.0);
        f.update(10, 5, 90.0);
        f.update(10, 8, 70.0);
        assert_eq!(f.update(10, 11, 10.0), 90.0);
        assert_eq!(f.update(10, 16, 10.0), 70.0);
    }
}
