//! Aggregated delivery (keys `burst_floor`, `burst_window`, off by default; not the draft):
//! does the path hand this flow its Data in aggregates — an 802.11n/ac hop's A-MPDUs (Liu et
//! al. §3: aggregation is what carries those standards' rates) — and how long is one
//! aggregation period?
//!
//! **What the receiver sees.** A request's units leave the source together. Over a wired
//! bottleneck they arrive back to back, spaced by its per-unit time, and the gaps between
//! requests are what the pacing, or the other flows sharing the queue, leave: a burst — a
//! run of arrivals with no gap longer than [`LONG_GAP`] back-to-back gaps (the shortest gap
//! of the last two rounds) — is one request, or a whole queue's worth of them without a gap.
//! Over a WiFi hop the access point sends what it has queued in one aggregate: units arrive
//! back to back at the PHY rate, then nothing while the channel is handed over (block ack,
//! contention, the station's own requests, the next preamble; ns-3, Liu et al.'s Fig. 9 at
//! 0.5 ms: MPDUs 31.7 µs apart, bursts of 17–35 units 0.23–1.2 ms apart). An aggregate's
//! boundaries do not follow the requests': its bursts cut through them. So delivery counts
//! as aggregated when tight bursts (gaps on average at most [`TIGHT`] back-to-back gaps) hold,
//! on average, the units of at least [`AGG_REQUESTS`] requests (units of one request share
//! `P.delivered`, the sample's `prior_delivered`; a running mean over the last bursts, of at
//! least [`MIN_BURSTS`] bursts, the latest within [`FRESH_ROUNDS`] rounds). A loose burst
//! (one flow's units between other flows' in a shared queue) or one of more than
//! [`MAX_REQUESTS`] requests (a wired queue between rare gaps) counts as one request. A run
//! shorter than half a send quantum (a lone unit sent in its own PPDU) joins the next burst.
//! Only ProbeBW's arrivals count, and only those not application-limited: Startup's and
//! ProbeRTT's windows leave gaps of their own.
//!
//! **What it changes, only while delivery is aggregated** (docs/CONTROLLER.md, "WiFi"):
//! * `burst_floor`: the queue signal's floor ([`super::congestion`]) is at least
//!   `burst_periods` ([`FLOOR_PERIODS`] by default) aggregation periods — a request may wait for the aggregate on air
//!   before it gets the channel, and its Data for the next aggregate — so the delay
//!   aggregation adds to every round is not read as a standing queue.
//! * `burst_window`: the window adds the offload budget to the BDP multiple, as BBR v1 (the
//!   `offload_sum` key) does, so that in flight covers an aggregate besides the BDP of the
//!   minimum RTT.
//!
//! With both keys off nothing here runs and `bbr3` is unchanged. It reads no clock but the
//! samples' times.

use crate::time::Time;

use super::{Bbr3, Sample};

/// A gap longer than this many back-to-back gaps ends a burst (WiFi's gaps between aggregates
/// are 7 or more; a wired path paced at 0.9 of its rate leaves `1 + 0.1 ×` the send quantum
/// in units, 1.9 at 100 Mbit/s; a lost unit adds one).
pub const LONG_GAP: f64 = 4.0;
/// A burst is tight when its gaps are on average at most this many back-to-back gaps.
pub const TIGHT: f64 = 1.5;
/// Bursts holding on average the units of at least this many requests are aggregates.
pub const AGG_REQUESTS: f64 = 1.5;
/// A burst of more requests than this counts as one (a long run of back-to-back arrivals from
/// a wired queue that ends in one gap is not an aggregate; 802.11n's 64 KB A-MPDU holds
/// about five 1 ms send quanta at its rates).
pub const MAX_REQUESTS: u64 = 8;
/// Weight of the latest burst in the running means (about the last eight bursts).
pub const WEIGHT: f64 = 0.125;
/// Bursts to see before delivery can count as aggregated.
pub const MIN_BURSTS: u32 = 8;
/// Delivery is aggregated only while the latest burst ended within this many rounds.
pub const FRESH_ROUNDS: u64 = 4;
/// The queue signal's floor is by default this many aggregation periods (`burst_floor`; the
/// key `burst_periods`). Chosen from ns-3 runs of Liu et al.'s Figs. 9 and 10
/// (docs/CONTROLLER.md, "Aggregated delivery"): 2, 3, 4 and 6 periods give 226.0, 229.3,
/// 229.6, 229.6 Mbit/s over 802.11ac at 0.5 ms, 217.1, 225.9, 233.3, 241.6 at 2.5 ms, and
/// 87.6, 89.6, 89.6, 89.6 over 802.11n; the harness's wired rows move alike (≤ 1 %) at each.
pub const FLOOR_PERIODS: f64 = 6.0;

/// The burst in progress and the running means of the last ones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Bursts {
    /// The previous arrival.
    last: Option<Time>,
    /// When the burst in progress began (`None`: its start was not seen).
    start: Option<Time>,
    /// The shortest gap between two arrivals in the previous round and in this one (the
    /// bottleneck's or the PHY's per-unit time), seconds, and this round.
    spacing: [f64; 2],
    spacing_round: u64,
    /// The short gaps inside the burst in progress: how many, and their sum in seconds.
    short_gaps: u64,
    short_sum: f64,
    /// Units and requests of the burst in progress, and the request of its latest unit
    /// (its `prior_delivered`).
    units: u64,
    requests: u64,
    request: u64,
    /// Running means: requests per burst, and seconds from one burst's start to the next.
    requests_mean: f64,
    period: f64,
    /// Bursts counted (saturating), and the round in which the latest ended.
    seen: u32,
    round: u64,
}

impl Default for Bursts {
    fn default() -> Self {
        Bursts {
            last: None,
            start: None,
            spacing: [f64::INFINITY; 2],
            spacing_round: 0,
            short_gaps: 0,
            short_sum: 0.0,
            units: 0,
            requests: 0,
            request: 0,
            requests_mean: 0.0,
            period: 0.0,
            seen: 0,
            round: 0,
        }
    }
}

impl Bbr3 {
    /// Count one arrival (with either key on).
    pub(super) fn note_burst_sample(&mut self, s: &Sample) {
        if !(self.cfg.burst_floor || self.cfg.burst_window) {
            return;
        }
        let max_bw = self.max_bw.get();
        let counted = self.full_bw_reached && self.mode().is_probe_bw() && !s.is_app_limited && max_bw > 0.0;
        let quantum = self.send_quantum();
        let round = self.rounds.count();
        let b = &mut self.bursts;
        let last = b.last.replace(s.now);
        if !counted {
            b.start = None; // what came before this gap was not a whole burst
            b.units = 0;
            return;
        }
        let Some(gap) = last.map(|l| s.now.saturating_since(l).as_secs_f64()) else { return };
        if round != b.spacing_round {
            b.spacing = [b.spacing[1], f64::INFINITY];
            b.spacing_round = round;
        }
        b.spacing[1] = b.spacing[1].min(gap);
        // Back-to-back is the shortest gap seen, but never taken below 1/16 of the unit time
        // at `max_bw` (arrivals at one instant, sixteen flows sharing a link).
        let spacing = b.spacing[0].min(b.spacing[1]).max(1.0 / (16.0 * max_bw));
        let long = gap > LONG_GAP * spacing;
        if long && (b.start.is_none() || 2 * b.units >= u64::from(quantum)) {
            if let Some(start) = b.start {
                // A whole burst, from its first arrival to the one before this gap. Only a
                // tight one (back to back) of a few requests is an aggregate's; a loose one
                // (units of a shared queue, the gaps the queue's other flows leave), or a
                // long one (a wired queue between rare gaps), counts as one request.
                let tight = b.short_sum <= TIGHT * spacing * b.short_gaps as f64;
                let requests = if tight && b.requests <= MAX_REQUESTS { b.requests as f64 } else { 1.0 };
                let period = s.now.saturating_since(start).as_secs_f64();
                if b.seen == 0 {
                    (b.requests_mean, b.period) = (requests, period);
                } else {
                    b.requests_mean += WEIGHT * (requests - b.requests_mean);
                    b.period += WEIGHT * (period - b.period);
                }
                b.seen = b.seen.saturating_add(1);
                b.round = round;
            }
            b.start = Some(s.now);
            b.units = 0;
            b.requests = 0;
            (b.short_gaps, b.short_sum) = (0, 0.0);
        } else if !long {
            b.short_gaps += 1;
            b.short_sum += gap;
        }
        if b.units == 0 || s.prior_delivered != b.request {
            b.requests += 1;
            b.request = s.prior_delivered;
        }
        b.units += s.newly_acked;
    }

    /// The aggregation period in seconds while delivery is aggregated, else `None`.
    pub(super) fn aggregation_period(&self) -> Option<f64> {
        let b = &self.bursts;
        let fresh = b.seen >= MIN_BURSTS && self.rounds.count() <= b.round + FRESH_ROUNDS;
        (fresh && b.requests_mean >= AGG_REQUESTS).then_some(b.period)
    }

    /// Seconds a round's least RTT must exceed the minimum by for the queue signal:
    /// `queue_floor`, or with `burst_floor` `burst_periods` aggregation periods if more.
    pub(super) fn queue_floor(&self) -> f64 {
        match self.aggregation_period() {
            Some(p) if self.cfg.burst_floor => self.cfg.queue_floor.max(self.cfg.burst_periods * p),
            _ => self.cfg.queue_floor,
        }
    }

    /// The window adds the offload budget: `offload_sum`, or with `burst_window` while
    /// delivery is aggregated.
    pub(super) fn offload_sum(&self) -> bool {
        self.cfg.offload_sum || (self.cfg.burst_window && self.aggregation_period().is_some())
    }
}
