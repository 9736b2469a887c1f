//! BBR-CD's Loss Detector (S1 §III-B, §III-C): a unit requested at `T` is lost if it has not
//! arrived by `T + RTprop + α·δ`, where RTprop is the average and δ the standard deviation of
//! the RTTs over the estimator's window (α = 10). It replaces seed 000's fast re-request and
//! RFC 6298 timer: there is no out-of-order rule and no backoff.
//!
//! The BDP Estimator lives in the controller; it publishes the threshold through a
//! [`Threshold`] both hold (S1 Fig. 2: the estimator "feeds … RTprop … to the Loss Detector").
//! Until the estimator has one (fewer than two RTT samples, so no δ), the receiver's RFC 6298
//! RTO stands in for it.
//!
//! Units are checked in request order: the threshold is the same for every unit, so the
//! oldest request is always the next to expire. Records that were answered or re-requested
//! since are skipped when they reach the front.

use core::time::Duration;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cc::LossKind;
use crate::receiver::loss::{LossCtx, LossDetector};
use crate::receiver::rtt::RttEstimator;
use crate::receiver::window::{Arrival, UnitState, Window};
use crate::time::Time;

/// `RTprop + α·δ` in nanoseconds, shared by the controller (writer) and its loss detector
/// (reader); 0 while there is none.
#[derive(Clone, Debug, Default)]
pub struct Threshold(Arc<AtomicU64>);

impl Threshold {
    pub fn set(&self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).max(1);
        self.0.store(ns, Ordering::Relaxed);
    }
    pub fn get(&self) -> Option<Duration> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            ns => Some(Duration::from_nanos(ns)),
        }
    }
}

/// The Loss Detector. See the module docs.
#[derive(Debug)]
pub struct BbrCdLoss {
    threshold: Threshold,
    /// The receiver's RFC 6298 RTO as of the last call, used until there is a threshold.
    fallback: Duration,
    /// (request time, unit), in request order; stale entries are skipped.
    sent: VecDeque<(Time, u64)>,
}

impl BbrCdLoss {
    pub fn new(threshold: Threshold) -> Self {
        BbrCdLoss { threshold, fallback: Duration::from_secs(1), sent: VecDeque::new() }
    }

    /// How long a unit may be outstanding.
    pub fn limit(&self) -> Duration {
        self.threshold.get().unwrap_or(self.fallback)
    }

    /// Whether the entry still describes an outstanding request.
    fn live(window: &Window, (at, unit): (Time, u64)) -> bool {
        window.get(unit).is_some_and(|r| r.state == UnitState::Requested && r.sent_at == at)
    }

    fn drop_stale_front(&mut self, window: &Window) {
        while self.sent.front().is_some_and(|&e| !Self::live(window, e)) {
            self.sent.pop_front();
        }
    }
}

impl LossDetector for BbrCdLoss {
    fn name(&self) -> &'static str {
        "bbr-cd"
    }

    fn on_request(&mut self, ctx: &mut LossCtx<'_>, units: &[u64], _retransmission: bool) {
        self.fallback = ctx.rtt.rto();
        self.sent.extend(units.iter().map(|&u| (ctx.now, u)));
    }

    fn on_arrival(&mut self, ctx: &mut LossCtx<'_>, _arrival: &Arrival, _in_order: bool) {
        self.fallback = ctx.rtt.rto();
        self.drop_stale_front(ctx.window);
    }

    fn deadline(&self) -> Option<Time> {
        self.sent.front().map(|&(at, _)| at + self.limit())
    }

    fn on_timeout(&mut self, ctx: &mut LossCtx<'_>) -> Option<LossKind> {
        self.fallback = ctx.rtt.rto();
        let limit = self.limit();
        let mut lost = false;
        // S1 §III-B: "resends an interest that was sent at time T … if the corresponding data
        // has not been received by T + RTprop + α·δ".
        while let Some(&(at, unit)) = self.sent.front() {
            if !Self::live(ctx.window, (at, unit)) {
                self.sent.pop_front();
                continue;
            }
            if ctx.now < at + limit {
                break;
            }
            self.sent.pop_front();
            ctx.declare_lost(unit);
            lost = true;
        }
        lost.then_some(LossKind::Timeout)
    }

    fn rto(&self, _rtt: &RttEstimator) -> Option<Duration> {
        Some(self.limit())
    }

    fn reset(&mut self) {
        self.sent.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receiver::RtoConfig;
    use crate::receiver::rate::SendSnapshot;
    use crate::receiver::window::UnitRecord;

    const MS: Duration = Duration::from_millis(1);

    fn rec(sent_ms: u64) -> UnitRecord {
        UnitRecord {
            state: UnitState::Requested,
            sent_at: Time::from_millis(sent_ms),
            tx: 1,
            tag: 0,
            prev_tag: 0,
            req_id: 0,
            seq: 0,
            snap: SendSnapshot::default(),
            cookie: 0,
        }
    }

    #[test]
    fn lost_exactly_at_rtprop_plus_alpha_delta_and_never_out_of_order() {
        let thr = Threshold::default();
        let mut d = BbrCdLoss::new(thr.clone());
        let mut w = Window::default();
        let mut rtt = RttEstimator::new(RtoConfig::default());
        let mut lost = vec![];
        for (u, at) in [(0, 0), (1, 10), (2, 20)] {
            w.push_requested(rec(at));
            let mut ctx = LossCtx { now: Time::from_millis(at), window: &mut w, rtt: &mut rtt, lost: &mut lost };
            d.on_request(&mut ctx, &[u], false);
        }
        // No threshold yet: the RFC 6298 RTO (1 s before any sample) stands in.
        assert_eq!(d.deadline(), Some(Time::from_millis(1000)));
        // RTprop 20 ms, δ 3 ms, α = 10: 50 ms.
        thr.set(20 * MS + 10 * (3 * MS));
        assert_eq!(d.deadline(), Some(Time::from_millis(50)));
        // Units 1 and 2 arriving out of order declare nothing (no fast re-request).
        let a = w.mark_received(2).unwrap();
        let mut ctx = LossCtx { now: Time::from_millis(45), window: &mut w, rtt: &mut rtt, lost: &mut lost };
        d.on_arrival(&mut ctx, &a, false);
        assert!(lost.is_empty());
        // 1 ns before T + threshold: not lost; at it: lost.
        let mut ctx = LossCtx { now: Time::from_nanos(50_000_000 - 1), window: &mut w, rtt: &mut rtt, lost: &mut lost };
        assert_eq!(d.on_timeout(&mut ctx), None);
        let mut ctx = LossCtx { now: Time::from_millis(50), window: &mut w, rtt: &mut rtt, lost: &mut lost };
        assert_eq!(d.on_timeout(&mut ctx), Some(LossKind::Timeout));
        assert_eq!(lost, [0]);
        assert_eq!(d.deadline(), Some(Time::from_millis(60)), "unit 1 next");
        // The threshold shrinks to 30 ms: unit 1 (sent at 10) is due at 40, i.e. now.
        thr.set(30 * MS);
        let mut ctx = LossCtx { now: Time::from_millis(50), window: &mut w, rtt: &mut rtt, lost: &mut lost };
        assert_eq!(d.on_timeout(&mut ctx), Some(LossKind::Timeout));
        assert_eq!(lost, [0, 1]);
        assert_eq!(d.deadline(), None, "unit 2 arrived: nothing outstanding");
        // A re-request is timed from its own request.
        let mut take = vec![];
        w.take_lost(1, &mut take);
        w.mark_rerequested(0, |r| r.sent_at = Time::from_millis(70));
        let mut ctx = LossCtx { now: Time::from_millis(70), window: &mut w, rtt: &mut rtt, lost: &mut lost };
        d.on_request(&mut ctx, &[0], true);
        assert_eq!(d.deadline(), Some(Time::from_millis(100)));
        assert_eq!(d.rto(&rtt), Some(30 * MS));
    }
}
