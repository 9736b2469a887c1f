//! BBR-CD's modified ProbeRTT (S1 §III-C d): entered not when the min RTT is old but when
//! fewer than `min_samples` (4) RTT samples (here: arrivals) came over the window W — interests timed out or
//! the path broke —, the flow then requests at `k` = 4 units per second, and it leaves once
//! `min_samples` units have arrived, to ProbeBW if Startup had filled the pipe, else to
//! Startup.
//!
//! Three readings S1 leaves open, made so that the state can be left at all:
//! * **What counts** is every unit that arrived, re-requested ones included, not only the RTT
//!   samples the filter admits. S1's reason for the state is that too few samples "means the
//!   flow … encountered interest timeouts or the data retrieval path is disrupted"; a flow
//!   whose first-time requests are all out (the tail of a file, S1 §IV-D's re-requests go
//!   last) asks only for lost units, whose RTTs are filtered out by design — that is neither.
//!   Counting admitted samples only, such a flow entered ProbeRTT and re-requested its tail
//!   at 4 units/s (measured, 20 MB over 802.11n with ≈ 10 % loss: 164 s instead of ≈ 5 s).
//! * **Entry** is checked only once a whole window has passed since the flow's first RTT
//!   sample (and since it last left ProbeRTT): a flow one RTT old has one sample in its window
//!   of 8 RTTs, which says nothing about the path.
//! * **Exit** counts the arrivals *since ProbeRTT began*: at 4 units/s, four take a second,
//!   while W = β × RTprop is 8 × (a few ms … 100 ms) here; counted over W the threshold could
//!   never be reached and the flow would stay at 4 units/s for good.
//!
//! Samples taken in ProbeRTT are application-limited for the delivery rate (as BBR's), so
//! the 4-units/s rate does not drag the BtlBw average down — and so is every unit that was in
//! flight while the flow was in ProbeRTT, whenever it was requested (S1 is silent on samples
//! in ProbeRTT; this is our choice). The receiver marks only units *requested* in ProbeRTT
//! as application-limited; a unit requested before and answered in ProbeRTT or after it
//! counted the few units ProbeRTT let through over its whole RTT: issue 26's crawl (ns-3,
//! Hu et al.'s lossy Topology 2, seed 2), where one such 494 ms sample became BtlBw, the
//! pacing rate 0.21 Mbit/s, and with only re-requests left (no samples, S1 §III-B) it stayed
//! there. Its RTT is still a sample: S1 §III-B admits it.

use super::{BbrCd, State};
use crate::time::Time;

/// `(pacing_gain, cwnd_gain)` in ProbeRTT: the pacing rate is `k` units/s instead of a gain
/// times BtlBw (see [`BbrCd::pacing_rate_bytes`]); the window stays BDP + quanta.
pub(super) const GAINS: (f64, f64) = (1.0, 1.0);

/// ProbeRTT's data.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct ProbeRtt {
    /// When it began.
    pub(super) entered: Time,
    /// Units that arrived since then.
    pub(super) samples: u32,
}

impl BbrCd {
    /// Enter ProbeRTT if too few units arrived over the last window.
    pub(super) fn check_probe_rtt_entry(&mut self, now: Time) {
        if matches!(self.state, State::ProbeRtt(_)) {
            return;
        }
        let (Some(w), Some(first)) = (self.est.window(), self.est.first_rtt_at()) else { return };
        let since = self.last_probe_rtt_exit.map_or(first, |t| t.max(first));
        if now - since >= w && self.est.arrivals() < self.cfg.min_samples as usize {
            self.transition_to(State::ProbeRtt(ProbeRtt { entered: now, samples: 0 }));
        }
    }

    /// Whether a unit requested at `requested` and arriving now was in flight while the flow
    /// was held to `k` units/s: in ProbeRTT now, or requested before ProbeRTT last ended. Its
    /// delivery rate measures ProbeRTT's limit, not the path (module docs).
    pub(super) fn overlaps_probe_rtt(&self, requested: Time) -> bool {
        matches!(self.state, State::ProbeRtt(_)) || self.last_probe_rtt_exit.is_some_and(|exit| requested < exit)
    }

    /// A unit arrived in ProbeRTT: leave once enough did.
    pub(super) fn on_probe_rtt_arrival(&mut self, now: Time) {
        let State::ProbeRtt(p) = &mut self.state else { return };
        p.samples += 1;
        if p.samples >= self.cfg.min_samples {
            self.last_probe_rtt_exit = Some(now);
            if self.full_pipe.is_full() {
                self.enter_probe_bw(now);
            } else {
                self.transition_to(State::Startup);
            }
        }
    }
}
