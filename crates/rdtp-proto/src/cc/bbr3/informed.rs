//! Informed start (Hiorth and Welzl §II, §IV: "an application could be told its rate before
//! it even begins to transmit"), as `bbr`'s [`crate::cc::bbr`] has it: with a predicted rate,
//! skip Startup and Drain. The bandwidth filter is seeded with the rate (it ages out after two
//! ProbeBW cycles like any sample unless the path confirms it), the pipe counts as full, the
//! ProbeBW cycle starts in CRUISE, and until the first RTT sample gives a min RTT only the
//! pacing rate limits requesting (the window, which needs the min RTT, does not: pacing at
//! the rate keeps in-flight at rate × RTT by itself, as `bbr-wifi` relies on in ProbeBW);
//! then the window opens to `cwnd_gain × bw × min_rtt`.
//! Not in the draft, which has no informed start.

use super::state::State;
use super::{Bbr3, Mode};
use crate::time::Time;

impl Bbr3 {
    /// Seed the model with `bytes_per_sec`; false (and nothing changed) once requesting has
    /// started, or for a rate that is not a positive number.
    pub(super) fn start_informed(&mut self, now: Time, bytes_per_sec: f64) -> bool {
        if self.started || self.mode() != Mode::Startup || !(bytes_per_sec.is_finite() && bytes_per_sec > 0.0) {
            return false;
        }
        let units_per_sec = bytes_per_sec / f64::from(self.params.unit);
        self.max_bw.update(units_per_sec);
        self.bound_bw_for_model();
        self.full_pipe.set_full(units_per_sec);
        self.full_bw_reached = true;
        // Startup → Drain → ProbeBW_DOWN: the draft's edges, with nothing to drain.
        self.transition_to(State::Drain { start_round: self.rounds.count() });
        self.enter_probe_bw(now);
        // DOWN would pace at 0.9 to drain a queue there is not: cruise at once.
        self.start_probe_bw_cruise();
        self.set_pacing_rate();
        self.informed_window_pending = true;
        true
    }

    /// After the first min-RTT sample: jump to the target window instead of growing to it.
    pub(super) fn open_informed_window(&mut self) {
        if !self.informed_window_pending || self.min_rtt.is_none() {
            return;
        }
        self.informed_window_pending = false;
        if self.mode().is_probe_bw() {
            self.cwnd = self.cwnd.max(self.max_inflight());
        }
    }
}
