//! Drain: pace at 1/high_gain until the queue Startup built is gone (Linux `bbr_check_drain`).

use super::{Bbr, Mode};
use crate::cc::AckSample;

impl Bbr {
    pub(super) fn check_drain(&mut self, rs: &AckSample) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        // Fall through: in-flight may already be small enough.
        if self.mode == Mode::Drain && rs.inflight <= self.inflight_target(self.max_bw(), 1.0) {
            self.enter_probe_bw(rs.now);
        }
    }
}
