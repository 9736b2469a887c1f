//! BBR-CD's Loss Detector (S1 §III-B, §III-C): a unit requested at `T` is lost if it has not
//! arrived by `T + RTprop + α·δ`, where RTprop is the average and δ the standard deviation of
//! the RTTs over the estimator's window (α = 10). It replaces seed 000's fast re-request and
//! RFC 6298 timer: there is no out-of-order rule.
//!
//! The BDP Estimator lives in the controller (`cc/bbr_cd/`); it publishes the threshold as the
//! controller's `loss_threshold`, which the receiver copies into every call of this detector
//! ([`LossCtx::threshold`], [`LossView::threshold`]; S1 Fig. 2: the estimator "feeds … RTprop …
//! to the Loss Detector"). Until the estimator has one (fewer than two RTT samples, so no δ),
//! the receiver's RFC 6298 RTO stands in for it.
//!
//! **Units requested more than once** (S1 says nothing about them): the k-th request of a
//! unit waits `2^(k−1)` thresholds (at most [`MAX_BACKOFF`]), RFC 6298's back-off applied per
//! unit, unless `backoff=false`. Without it the detector collapses under S1 §IV-C's losses:
//! re-requests go last (§IV-D), so at the end of a transfer only re-requests are out; S1's
//! RTT filter admits no sample from them, the threshold stays at what the path was before;
//! once the AP's queue is longer than that (it is whenever answers queue behind duplicates),
//! every re-request is declared lost before its answer can arrive, asked for again, and
//! answered again — measured, Topology 1 with ≈ 10 % loss and 8600-byte units: 1 480
//! re-requests for 2 326 units, 1 647 duplicates, 2 662 drops at a full AP queue and the AP
//! sending 42 MB for a 20 MB object.
//!
//! **The back-off stops at the receiver's RTO ceiling** (`rto_max`, 60 s by default: RFC
//! 6298 §2.5's bound, which the receiver's own RTO back-off obeys too): a unit waits
//! `min(2^(k−1) · threshold, max(threshold, rto_max))`. Without the bound a threshold
//! inflated to tens of seconds put a unit's next request minutes away, after the receiver's
//! idle timeout, so the receiver gave up with re-requests still due — Hu et al.'s Topology 2
//! under loss (docs/EXPERIMENTS.md §8c): a consumer's first-time request that joined a
//! caching router's pending entry whose upstream Data was lost waits there until some
//! consumer re-requests the unit, which BBR-CD does only after its first-time requests
//! (§IV-D); that wait, seconds long, is a valid RTT sample for the threshold
//! (`crates/rdtp-harness/tests/bbr_cd_through_a_lossy_cache.rs` reproduces it). The threshold
//! itself (the first request's wait) is not bounded: that is Hu et al.'s rule.
//!
//! Units are checked in request order per back-off level: within a level the threshold is the
//! same for every unit, so its oldest request is the next to expire. Records that were
//! answered or re-requested since are skipped when they reach the front. This is why the
//! detector does not keep its units in the per-unit timers ndnget's, ICP's and CCTCP's
//! detectors share ([`super::UnitTimers`]): theirs get a deadline when the
//! request leaves, while here a unit's deadline moves with the threshold the estimator
//! publishes after every arrival.

use core::time::Duration;
use std::collections::VecDeque;

use super::loss::{LossCtx, LossDetector, LossView};
use super::samples::LossKind;
use super::window::{Arrival, UnitState, Window};
use crate::time::Time;

/// Back-off levels: a unit's k-th request waits `2^min(k−1, MAX_BACKOFF)` thresholds.
pub const MAX_BACKOFF: usize = 6;

/// The Loss Detector. See the module docs.
#[derive(Debug)]
pub struct BbrCdLoss {
    /// Whether a unit's later requests wait longer (module docs).
    backoff: bool,
    /// The receiver's RFC 6298 RTO as of the last call, used until there is a threshold.
    fallback: Duration,
    /// Per back-off level, (request time, unit) in request order; stale entries are skipped.
    sent: [VecDeque<(Time, u64)>; MAX_BACKOFF + 1],
}

impl BbrCdLoss {
    /// The name it has in traces and in the registry.
    pub const NAME: &'static str = "bbr-cd";

    pub fn new(backoff: bool) -> Self {
        BbrCdLoss { backoff, fallback: Duration::from_secs(1), sent: Default::default() }
    }

    /// How long a unit requested once may be outstanding, given the controller's `threshold`.
    pub fn limit(&self, threshold: Option<Duration>) -> Duration {
        threshold.unwrap_or(self.fallback)
    }

    /// How long a unit at back-off `level` may be outstanding: the threshold doubled per
    /// level, but no longer than the receiver's RTO `ceiling` (`rto_max`) once backed off.
    fn limit_at(&self, threshold: Option<Duration>, level: usize, ceiling: Duration) -> Duration {
        let first = self.limit(threshold);
        if level == 0 { first } else { (first * (1u32 << level)).min(ceiling.max(first)) }
    }

    /// The back-off level of a unit's `tx`-th request.
    fn level(&self, tx: u16) -> usize {
        if self.backoff { usize::from(tx.saturating_sub(1)).min(MAX_BACKOFF) } else { 0 }
    }

    /// Whether the entry still describes an outstanding request.
    fn live(window: &Window, (at, unit): (Time, u64)) -> bool {
        window.get(unit).is_some_and(|r| r.state == UnitState::Requested && r.sent_at == at)
    }

    fn drop_stale_fronts(&mut self, window: &Window) {
        for q in &mut self.sent {
            while q.front().is_some_and(|&e| !Self::live(window, e)) {
                q.pop_front();
            }
        }
    }
}

impl LossDetector for BbrCdLoss {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn on_request(&mut self, ctx: &mut LossCtx<'_>, units: &[u64], _retransmission: bool) {
        self.fallback = ctx.rtt.rto();
        for &u in units {
            let level = self.level(ctx.window.get(u).map_or(1, |r| r.tx));
            self.sent[level].push_back((ctx.now, u));
        }
    }

    fn on_arrival(&mut self, ctx: &mut LossCtx<'_>, _arrival: &Arrival, _in_order: bool) {
        self.fallback = ctx.rtt.rto();
        self.drop_stale_fronts(ctx.window);
    }

    fn deadline(&self, view: &LossView<'_>) -> Option<Time> {
        let ceiling = view.rtt.config().max;
        let limit = |l| self.limit_at(view.threshold, l, ceiling);
        (0..=MAX_BACKOFF).filter_map(|l| self.sent[l].front().map(|&(at, _)| at + limit(l))).min()
    }

    fn on_timeout(&mut self, ctx: &mut LossCtx<'_>) -> Option<LossKind> {
        self.fallback = ctx.rtt.rto();
        let mut lost = false;
        for level in 0..=MAX_BACKOFF {
            let limit = self.limit_at(ctx.threshold, level, ctx.rtt.config().max);
            // S1 §III-B: "resends an interest that was sent at time T … if the corresponding
            // data has not been received by T + RTprop + α·δ".
            while let Some(&(at, unit)) = self.sent[level].front() {
                if !Self::live(ctx.window, (at, unit)) {
                    self.sent[level].pop_front();
                    continue;
                }
                if ctx.now < at + limit {
                    break;
                }
                self.sent[level].pop_front();
                ctx.declare_lost(unit);
                lost = true;
            }
        }
        lost.then_some(LossKind::Timeout)
    }

    fn rto(&self, view: &LossView<'_>) -> Option<Duration> {
        Some(self.limit(view.threshold))
    }

    fn reset(&mut self) {
        self.sent.iter_mut().for_each(VecDeque::clear);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recovery::window::UnitRecord;
    use crate::recovery::{RtoConfig, RttEstimator};

    const MS: Duration = Duration::from_millis(1);

    fn rec(sent_ms: u64) -> UnitRecord {
        UnitRecord::requested_at(Time::from_millis(sent_ms))
    }

    #[test]
    fn lost_exactly_at_rtprop_plus_alpha_delta_and_never_out_of_order() {
        let mut thr = None;
        let mut d = BbrCdLoss::new(true);
        let mut w = Window::default();
        let mut rtt = RttEstimator::new(RtoConfig::default());
        let mut lost = vec![];
        for (u, at) in [(0, 0), (1, 10), (2, 20)] {
            w.push_requested(rec(at));
            let mut ctx =
                LossCtx { now: Time::from_millis(at), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
            d.on_request(&mut ctx, &[u], false);
        }
        // No threshold yet: the RFC 6298 RTO (1 s before any sample) stands in.
        assert_eq!(d.deadline(&LossView { rtt: &rtt, threshold: thr }), Some(Time::from_millis(1000)));
        // RTprop 20 ms, δ 3 ms, α = 10: 50 ms.
        thr = Some(20 * MS + 10 * (3 * MS));
        assert_eq!(d.deadline(&LossView { rtt: &rtt, threshold: thr }), Some(Time::from_millis(50)));
        // Units 1 and 2 arriving out of order declare nothing (no fast re-request).
        let a = w.mark_received(2).unwrap();
        let mut ctx =
            LossCtx { now: Time::from_millis(45), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
        d.on_arrival(&mut ctx, &a, false);
        assert!(lost.is_empty());
        // 1 ns before T + threshold: not lost; at it: lost.
        let mut ctx = LossCtx {
            now: Time::from_nanos(50_000_000 - 1),
            window: &mut w,
            rtt: &mut rtt,
            lost: &mut lost,
            threshold: thr,
        };
        assert_eq!(d.on_timeout(&mut ctx), None);
        let mut ctx =
            LossCtx { now: Time::from_millis(50), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
        assert_eq!(d.on_timeout(&mut ctx), Some(LossKind::Timeout));
        assert_eq!(lost, [0]);
        assert_eq!(d.deadline(&LossView { rtt: &rtt, threshold: thr }), Some(Time::from_millis(60)), "unit 1 next");
        // The threshold shrinks to 30 ms: unit 1 (sent at 10) is due at 40, i.e. now.
        thr = Some(30 * MS);
        let mut ctx =
            LossCtx { now: Time::from_millis(50), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
        assert_eq!(d.on_timeout(&mut ctx), Some(LossKind::Timeout));
        assert_eq!(lost, [0, 1]);
        assert_eq!(d.deadline(&LossView { rtt: &rtt, threshold: thr }), None, "unit 2 arrived: nothing outstanding");
        // A re-request is timed from its own request, and waits twice as long (the unit's
        // second request: back-off level 1).
        let mut take = vec![];
        w.take_lost(1, &mut take);
        w.mark_rerequested(0, |r| {
            r.sent_at = Time::from_millis(70);
            r.tx = 2;
        });
        let mut ctx =
            LossCtx { now: Time::from_millis(70), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
        d.on_request(&mut ctx, &[0], true);
        assert_eq!(d.deadline(&LossView { rtt: &rtt, threshold: thr }), Some(Time::from_millis(130)));
        assert_eq!(d.rto(&LossView { rtt: &rtt, threshold: thr }), Some(30 * MS));
        // Without back-off (S1 read literally) it would be due after one threshold.
        let mut literal = BbrCdLoss::new(false);
        let mut ctx =
            LossCtx { now: Time::from_millis(70), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
        literal.on_request(&mut ctx, &[0], true);
        assert_eq!(literal.deadline(&LossView { rtt: &rtt, threshold: thr }), Some(Time::from_millis(100)));
    }

    #[test]
    fn back_off_levels_expire_independently_in_request_order() {
        let thr = Some(10 * MS);
        let mut d = BbrCdLoss::new(true);
        let mut w = Window::default();
        let mut rtt = RttEstimator::new(RtoConfig::default());
        let mut lost = vec![];
        // Unit 0 on its fourth request at 0 ms (level 3: 80 ms), unit 1 first requested at
        // 5 ms (10 ms), unit 2 on its 20th at 6 ms (capped at level 6: 640 ms).
        for (u, at, tx) in [(0u64, 0u64, 4u16), (1, 5, 1), (2, 6, 20)] {
            let mut r = rec(at);
            r.tx = tx;
            w.push_requested(r);
            let mut ctx =
                LossCtx { now: Time::from_millis(at), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
            d.on_request(&mut ctx, &[u], tx > 1);
        }
        assert_eq!(d.deadline(&LossView { rtt: &rtt, threshold: thr }), Some(Time::from_millis(15)));
        let mut ctx =
            LossCtx { now: Time::from_millis(15), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
        assert_eq!(d.on_timeout(&mut ctx), Some(LossKind::Timeout));
        assert_eq!(lost, [1]);
        assert_eq!(d.deadline(&LossView { rtt: &rtt, threshold: thr }), Some(Time::from_millis(80)));
        let mut ctx =
            LossCtx { now: Time::from_millis(80), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
        d.on_timeout(&mut ctx);
        assert_eq!(lost, [1, 0]);
        assert_eq!(d.deadline(&LossView { rtt: &rtt, threshold: thr }), Some(Time::from_millis(646)));
    }

    #[test]
    fn the_back_off_stops_at_the_receivers_rto_ceiling() {
        let mut d = BbrCdLoss::new(true);
        let mut w = Window::default();
        let mut rtt = RttEstimator::new(RtoConfig::default()); // rto_max 60 s
        let mut lost = vec![];
        // Unit 0 on its fourth request at 0 s (level 3).
        let mut r = rec(0);
        r.tx = 4;
        w.push_requested(r);
        let thr = Some(Duration::from_secs(20));
        let mut ctx = LossCtx { now: Time::ZERO, window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
        d.on_request(&mut ctx, &[0], true);
        // 8 thresholds would be 160 s, after a 120 s idle timeout: capped at 60 s.
        assert_eq!(d.deadline(&LossView { rtt: &rtt, threshold: thr }), Some(Time::from_millis(60_000)));
        let mut ctx =
            LossCtx { now: Time::from_millis(60_000), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
        assert_eq!(d.on_timeout(&mut ctx), Some(LossKind::Timeout));
        assert_eq!(lost, [0]);
        // A threshold above the ceiling is kept (Hu et al.'s rule), not doubled.
        let thr = Some(Duration::from_secs(70));
        let mut d = BbrCdLoss::new(true);
        let mut w = Window::default();
        let mut r = rec(0);
        r.tx = 2;
        w.push_requested(r);
        let mut ctx = LossCtx { now: Time::ZERO, window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: thr };
        d.on_request(&mut ctx, &[0], true);
        assert_eq!(d.deadline(&LossView { rtt: &rtt, threshold: thr }), Some(Time::from_millis(70_000)));
        // rto_max=10s lowers the ceiling.
        let rtt = RttEstimator::new(RtoConfig { max: Duration::from_secs(10), ..RtoConfig::default() });
        assert_eq!(
            d.deadline(&LossView { rtt: &rtt, threshold: Some(Duration::from_secs(4)) }),
            Some(Time::from_millis(8_000))
        );
        assert_eq!(
            d.deadline(&LossView { rtt: &rtt, threshold: Some(Duration::from_secs(6)) }),
            Some(Time::from_millis(10_000))
        );
    }
}
