//! Informed start (seed 002 §II, §IV: "an application could be told its rate before it even
//! begins to transmit"): with a predicted rate, BBR skips Startup and Drain. The bandwidth
//! filter is seeded with the rate (it ages out after 10 rounds like any sample unless the
//! path confirms it), the pipe counts as full, ProbeBW starts at a random non-draining
//! phase, and the window opens to `cwnd_gain × BtlBw × RTTmin` as soon as the first RTT
//! sample gives RTTmin (before that the BDP is `init_cwnd`, as without a rate).

use super::{Bbr, Mode};
use crate::time::Time;

impl Bbr {
    /// Seed the model with `bytes_per_sec`; false (and nothing changed) once requesting has
    /// started, or for a rate that is not a positive number.
    pub(super) fn start_informed(&mut self, now: Time, bytes_per_sec: f64) -> bool {
        if self.started || self.mode() != Mode::Startup || !(bytes_per_sec.is_finite() && bytes_per_sec > 0.0) {
            return false;
        }
        let units_per_sec = bytes_per_sec / f64::from(self.params.unit);
        self.bw.update(self.rounds.count(), units_per_sec);
        self.full_pipe.set_full(units_per_sec);
        self.enter_probe_bw(now);
        self.update_gains();
        self.pacing_rate = self.rate_bytes(units_per_sec, self.pacing_gain);
        self.informed_window_pending = true;
        true
    }

    /// After the first min-RTT sample: jump to the target window instead of growing to it.
    pub(super) fn open_informed_window(&mut self, bw: f64) {
        if self.min_rtt().is_none() {
            return;
        }
        self.informed_window_pending = false;
        if self.mode() == Mode::ProbeBw {
            self.cwnd = self.cwnd.max(self.inflight_target(bw, self.cwnd_gain));
        }
    }
}
