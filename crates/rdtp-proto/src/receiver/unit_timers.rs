//! ndnget's loss detection (ndn-tools `PipelineInterestsAdaptive`, the AIMD and CUBIC
//! pipelines): every unit has its own timer, set to the RTO of the moment it was requested,
//! and a unit is lost when its timer expires — there is no out-of-order rule. The RTO backs
//! off once per loss episode: when a timed-out unit lies beyond the highest unit requested
//! at the previous backoff (ndnget's "recovery point"), as its window decrease does.
//!
//! ndnget polls the timers every 10 ms (`rtoCheckInterval`); here each timer fires when due.
//! The RTO is the receiver's [`RttEstimator`] (RFC 6298; ndnget's K = 8 is
//! [`super::RtoConfig::k`]).

use core::cmp::Reverse;
use std::collections::BinaryHeap;

use super::loss::{LossCtx, LossDetector};
use super::window::{Arrival, UnitState, Window};
use crate::cc::LossKind;
use crate::time::Time;

/// Per-unit retransmission timers. See the module docs.
#[derive(Debug, Default)]
pub struct UnitTimers {
    /// (expiry, request time, unit); entries whose unit was answered or re-requested since
    /// are skipped.
    timers: BinaryHeap<Reverse<(Time, Time, u64)>>,
    /// Units up to here were requested before the last backoff.
    recovery_point: Option<u64>,
}

impl UnitTimers {
    pub fn new() -> Self {
        UnitTimers::default()
    }

    fn live(window: &Window, sent: Time, unit: u64) -> bool {
        window.get(unit).is_some_and(|r| r.state == UnitState::Requested && r.sent_at == sent)
    }

    fn drop_stale_top(&mut self, window: &Window) {
        while self.timers.peek().is_some_and(|Reverse((_, sent, u))| !Self::live(window, *sent, *u)) {
            self.timers.pop();
        }
    }
}

impl LossDetector for UnitTimers {
    fn name(&self) -> &'static str {
        "unit-timers"
    }

    fn on_request(&mut self, ctx: &mut LossCtx<'_>, units: &[u64], _retransmission: bool) {
        let expiry = ctx.now + ctx.rtt.rto();
        self.timers.extend(units.iter().map(|&u| Reverse((expiry, ctx.now, u))));
    }

    fn on_arrival(&mut self, ctx: &mut LossCtx<'_>, _arrival: &Arrival, _in_order: bool) {
        self.drop_stale_top(ctx.window);
    }

    fn deadline(&self) -> Option<Time> {
        self.timers.peek().map(|Reverse((at, _, _))| *at)
    }

    fn on_timeout(&mut self, ctx: &mut LossCtx<'_>) -> Option<LossKind> {
        let mut highest = None;
        while let Some(&Reverse((at, sent, unit))) = self.timers.peek() {
            if !Self::live(ctx.window, sent, unit) {
                self.timers.pop();
                continue;
            }
            if ctx.now < at {
                break;
            }
            self.timers.pop();
            ctx.declare_lost(unit);
            highest = highest.max(Some(unit));
        }
        let highest = highest?;
        if self.recovery_point.is_none_or(|r| highest >= r) {
            ctx.rtt.backoff();
            self.recovery_point = Some(ctx.window.next());
        }
        Some(LossKind::Timeout)
    }

    fn reset(&mut self) {
        self.timers.clear();
        self.recovery_point = None;
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use super::*;
    use crate::receiver::RtoConfig;
    use crate::receiver::rate::SendSnapshot;
    use crate::receiver::rtt::RttEstimator;
    use crate::receiver::window::UnitRecord;

    fn rec(sent_ms: u64) -> UnitRecord {
        UnitRecord {
            state: UnitState::Requested,
            sent_at: Time::from_millis(sent_ms),
            tx: 1,
            tag: 0,
            prev_tags: [0; crate::receiver::window::PREV_TAGS],
            req_id: 0,
            seq: 0,
            snap: SendSnapshot::default(),
            cookie: 0,
            nonce: 0,
        }
    }

    #[test]
    fn each_unit_keeps_the_rto_of_its_request_and_backoff_is_once_per_episode() {
        let mut d = UnitTimers::new();
        let mut w = Window::default();
        let mut rtt = RttEstimator::new(RtoConfig { k: 8, ..RtoConfig::default() });
        let mut lost = vec![];
        let request = |d: &mut UnitTimers, w: &mut Window, rtt: &mut RttEstimator, u: u64, at: u64| {
            w.push_requested(rec(at));
            let mut ctx = LossCtx { now: Time::from_millis(at), window: w, rtt, lost: &mut vec![] };
            d.on_request(&mut ctx, &[u], false);
        };
        // Unit 0 at 0 ms with the initial 1 s RTO; then a 50 ms sample: RTO 50 + 8·25 = 250.
        request(&mut d, &mut w, &mut rtt, 0, 0);
        rtt.on_sample(Duration::from_millis(50));
        request(&mut d, &mut w, &mut rtt, 1, 10);
        request(&mut d, &mut w, &mut rtt, 2, 20);
        assert_eq!(d.deadline(), Some(Time::from_millis(260)), "unit 1 first, on its own RTO");
        // Unit 2 arrives out of order: nothing is declared.
        let a = w.mark_received(2).unwrap();
        let mut ctx = LossCtx { now: Time::from_millis(100), window: &mut w, rtt: &mut rtt, lost: &mut lost };
        d.on_arrival(&mut ctx, &a, false);
        assert!(lost.is_empty());
        let mut ctx = LossCtx { now: Time::from_millis(260), window: &mut w, rtt: &mut rtt, lost: &mut lost };
        assert_eq!(d.on_timeout(&mut ctx), Some(LossKind::Timeout));
        assert_eq!(lost, [1]);
        assert_eq!(rtt.rto(), Duration::from_millis(500), "backed off");
        // Unit 0 (1 s timer, requested before the backoff): lost at 1000, no second backoff.
        assert_eq!(d.deadline(), Some(Time::from_millis(1000)));
        let mut ctx = LossCtx { now: Time::from_millis(1000), window: &mut w, rtt: &mut rtt, lost: &mut lost };
        assert_eq!(d.on_timeout(&mut ctx), Some(LossKind::Timeout));
        assert_eq!(lost, [1, 0]);
        assert_eq!(rtt.rto(), Duration::from_millis(500));
        assert_eq!(d.deadline(), None);
    }
}
