//! The loss window after a retransmission timeout, for controllers that do not set their
//! window in recovery themselves.
//!
//! On a timeout seed 000 §3.3 re-requests every unit requested but not arrived within an RTO.
//! If only the controller's window limited requesting, those re-requests would all leave at
//! once: `aimd` halves its window but in-flight has just dropped to (nearly) nothing, and
//! `fixed` does not reduce at all. TCP does not let any congestion control do that: on a
//! timeout the stack sets the window to the units still in flight plus one (RFC 5681 §3.1's
//! loss window; Linux `tcp_enter_loss` sets `cwnd = tcp_packets_in_flight + 1` whatever the
//! congestion control) and it grows by one per delivered unit (slow start) from there. The
//! receiver does the same: after a timeout the window is `min(controller's window, loss
//! window)`, the loss window growing by one per arriving unit until it reaches the
//! controller's window. The lost units are thus re-requested clocked by arrivals, doubling
//! per round trip, not in one burst.
//!
//! Fast recovery (seed 000 §3.4) needs nothing here: a controller that lowers its window
//! there (`aimd`) already releases nothing until in-flight has fallen below the new window
//! and then one unit per arriving unit — packet conservation. (Proportional rate reduction,
//! RFC 6937, which spreads the reduction over the recovery round, is not implemented.)
//!
//! Controllers that set their window in recovery themselves (the controller's `controls_recovery`:
//! `bbr` and `bbr3`, as Linux `tcp_bbr.c` with its own `cong_control`) are not limited here.
//!

/// The loss window, while one is in force (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LossWindow(Option<u64>);

impl LossWindow {
    /// A retransmission timeout: `inflight` units are still outstanding once the lost ones
    /// were taken out.
    pub(crate) fn on_timeout(&mut self, inflight: u64) {
        self.0 = Some(inflight + 1);
    }

    /// A unit arrived; `cwnd` is the controller's window. Slow start (RFC 5681 §3.1) until
    /// the loss window reaches it: TCP grows one window, so leaving the Loss state (all units
    /// lost before the timeout arrived) does not end slow start by itself.
    pub(crate) fn on_arrival(&mut self, cwnd: u64) {
        if let Some(w) = self.0.as_mut() {
            *w += 1;
            if *w >= cwnd {
                self.0 = None;
            }
        }
    }

    /// The window in force given the controller's `cwnd`.
    pub(crate) fn limit(&self, cwnd: u64) -> u64 {
        self.0.map_or(cwnd, |w| w.min(cwnd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_starts_from_inflight_plus_one_to_the_window() {
        let mut w = LossWindow::default();
        assert_eq!(w.limit(64), 64);
        // A timeout with nothing left in flight: one unit may go, not the controller's 64.
        w.on_timeout(0);
        assert_eq!(w.limit(64), 1);
        w.on_arrival(64);
        assert_eq!(w.limit(64), 2);
        assert_eq!(w.limit(1), 1, "never above the controller's window");
        for _ in 0..61 {
            w.on_arrival(64);
        }
        assert_eq!(w.limit(64), 63);
        w.on_arrival(64);
        assert_eq!(w, LossWindow::default(), "reaching the window ends it");
        // A timeout with units still out keeps them counted.
        w.on_timeout(10);
        assert_eq!(w.limit(64), 11);
    }
}
