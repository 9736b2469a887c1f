//! ndnget's loss detection (ndn-tools `PipelineInterestsAdaptive`, the AIMD and CUBIC
//! pipelines): every unit has its own timer, set to the RTO of the moment it was requested,
//! and a unit is lost when its timer expires — there is no out-of-order rule. The RTO backs
//! off once per loss episode: when a timed-out unit lies beyond the highest unit requested
//! at the previous backoff (ndnget's "recovery point"), as its window decrease does.
//!
//! ndnget polls the timers every 10 ms (`rtoCheckInterval`); here each timer fires when due.
//! The timers are kept in [`super::UnitTimers`], as ICP's and CCTCP's.
//!
//! The RTO is ndnget's own estimate, kept here: an [`RttEstimator`] with the receiver's
//! [`super::RtoConfig`] (bounds, initial RTO; ndnget's K = 8 is [`super::RtoConfig::k`]) fed
//! a sample by every unit that arrives and was requested once (Karn's rule), with α and β
//! divided by the samples expected in a round trip, half the units in flight
//! ([`RttEstimator::on_sample_per_round`], as `PipelineInterestsAdaptive::handleData`). The
//! receiver's own estimator, which takes RFC 6298's gains once per request, is not used for
//! these timers: per-sample gains let RTTVAR shrink to a fraction of a millisecond while the
//! queue grows slowly, so that an RTO above the 200 ms floor sits at SRTT, below the RTT of
//! every unit requested meanwhile (`a_slowly_growing_queue_gives_no_spurious_expiry`; on the
//! harness grid, `cubic` at 10 Mbit/s / 100 ms / 2 BDP: 964 expiries for 348 drops before,
//! see `docs/BENCHMARKS.md`). The receiver's RTO still backs off with each episode, as for
//! every other detector, and when the receiver clears its backoff (the answer to a unit's
//! latest re-request, told by its echoed tag) this one is cleared too.

use super::loss::{LossCtx, LossDetector, LossView};
use super::rtt::RttEstimator;
use super::samples::LossKind;
use super::unit_timers::UnitTimers;
use super::window::Arrival;
use crate::time::Time;

/// Per-unit retransmission timers. See the module docs.
#[derive(Debug, Default)]
pub struct NdngetTimers {
    /// One timer per outstanding unit (the container ICP and CCTCP keep theirs in), armed
    /// at its request, re-armed at its re-request, disarmed at its arrival.
    timers: UnitTimers,
    /// Units up to here were requested before the last backoff.
    recovery_point: Option<u64>,
    /// ndnget's RTT estimator (module docs); made with the receiver's configuration at the
    /// first call.
    rtt: Option<RttEstimator>,
}

impl NdngetTimers {
    pub fn new() -> Self {
        NdngetTimers::default()
    }

    /// ndnget's estimator, made with the receiver's RTO configuration if there is none yet.
    fn estimator(&mut self, receivers: &RttEstimator) -> &mut RttEstimator {
        self.rtt.get_or_insert_with(|| RttEstimator::new(receivers.config()))
    }
}

impl LossDetector for NdngetTimers {
    fn name(&self) -> &'static str {
        "unit-timers"
    }

    fn on_request(&mut self, ctx: &mut LossCtx<'_>, units: &[u64], _retransmission: bool) {
        let rto = self.estimator(ctx.rtt).rto();
        for &u in units {
            self.timers.arm(u, ctx.now, rto, 0);
        }
    }

    fn on_arrival(&mut self, ctx: &mut LossCtx<'_>, arrival: &Arrival, _in_order: bool) {
        let expected = ctx.window.inflight().div_ceil(2); // `(m_nInFlight + 1) >> 1`, this unit out
        let (r, receivers) = (ctx.now - arrival.before.sent_at, &*ctx.rtt);
        let est = self.estimator(receivers);
        if arrival.before.tx == 1 {
            est.on_sample_per_round(r, expected);
        }
        if receivers.backoffs() == 0 {
            // The receiver's RTO, backed off with this one, was cleared: by a sample, or by
            // the answer to a unit's latest re-request (its echoed tag proves which request
            // it answers), which ndnget, without tags, cannot tell. Both show the path
            // delivers again.
            est.clear_backoff();
        }
        self.timers.disarm(arrival.unit);
    }

    fn deadline(&self, _view: &LossView<'_>) -> Option<Time> {
        self.timers.next_deadline()
    }

    fn on_timeout(&mut self, ctx: &mut LossCtx<'_>) -> Option<LossKind> {
        let mut highest = None;
        while let Some((unit, _)) = self.timers.pop_expired(ctx.now) {
            // Not in flight any more (refused by a Retry, or Busy): nothing to declare.
            if ctx.declare_lost(unit) {
                highest = highest.max(Some(unit));
            }
        }
        let highest = highest?;
        if self.recovery_point.is_none_or(|r| highest >= r) {
            ctx.rtt.backoff();
            self.estimator(ctx.rtt).backoff();
            self.recovery_point = Some(ctx.window.next());
        }
        Some(LossKind::Timeout)
    }

    fn rto(&self, view: &LossView<'_>) -> Option<core::time::Duration> {
        Some(self.rtt.as_ref().unwrap_or(view.rtt).rto())
    }

    /// The transfer ended. The RTT estimate, like the receiver's, is the path's and stays.
    fn reset(&mut self) {
        self.timers.clear();
        self.recovery_point = None;
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use super::*;
    use crate::recovery::RtoConfig;
    use crate::recovery::window::{UnitRecord, Window};

    fn view(rtt: &RttEstimator) -> LossView<'_> {
        LossView { rtt, threshold: None }
    }

    /// A queue that grows by 3 ms every 100 ms, above the 200 ms floor of the RTO, with 175–
    /// 250 units in flight and one arriving every 1.2 ms (cubic at 10 Mbit/s / 100 ms with a
    /// 2-BDP buffer): no unit is lost, so none may be declared lost. With RFC 6298's gains per
    /// *sample*, SRTT follows the rising RTT within a few samples, RTTVAR falls to a fraction of
    /// a millisecond and the RTO (≈ SRTT) is shorter than the RTT of every unit requested while
    /// the queue grows: a burst of spurious expiries (the harness grid: 964 expiries for 348
    /// drops). ndnget smooths per round trip, so RTTVAR keeps the RTT's drift over a round trip.
    #[test]
    fn a_slowly_growing_queue_gives_no_spurious_expiry() {
        let mut d = NdngetTimers::new();
        let mut w = Window::default();
        // The receiver's estimator, fed one sample per (unaggregated) request, as the receiver does.
        let mut rtt = RttEstimator::new(RtoConfig::default());
        let mut lost = vec![];
        let gap = Duration::from_micros(1200);
        let sent = |u: u64| Time::ZERO + gap * u as u32;
        let rtt_of = |u: u64| Duration::from_millis(210) + (sent(u) - Time::ZERO) * 3 / 100;
        let due = |u: u64| sent(u) + rtt_of(u);
        let fire = |d: &mut NdngetTimers, w: &mut Window, rtt: &mut RttEstimator, lost: &mut Vec<u64>, until: Time| {
            while let Some(at) = d.deadline(&view(rtt)).filter(|&at| at <= until) {
                let mut ctx = LossCtx { now: at, window: w, rtt, lost, threshold: None };
                d.on_timeout(&mut ctx);
            }
        };
        let mut next_arrival = 0;
        for u in 0..4000u64 {
            while next_arrival < u && due(next_arrival) <= sent(u) {
                let now = due(next_arrival);
                fire(&mut d, &mut w, &mut rtt, &mut lost, now);
                if let Some(a) = w.mark_received(next_arrival) {
                    if a.before.tx == 1 {
                        rtt.on_sample(now - a.before.sent_at);
                    }
                    let mut ctx = LossCtx { now, window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: None };
                    d.on_arrival(&mut ctx, &a, true);
                }
                next_arrival += 1;
            }
            fire(&mut d, &mut w, &mut rtt, &mut lost, sent(u));
            w.push_requested(UnitRecord::requested_at(sent(u)));
            let mut ctx = LossCtx { now: sent(u), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: None };
            d.on_request(&mut ctx, &[u], false);
        }
        assert!(rtt_of(4000) > Duration::from_millis(350));
        assert!(lost.is_empty(), "{} units declared lost, the first {:?}", lost.len(), lost.first());
    }

    #[test]
    fn each_unit_keeps_the_rto_of_its_request_and_backoff_is_once_per_episode() {
        const MS: Duration = Duration::from_millis(1);
        let mut d = NdngetTimers::new();
        let mut w = Window::default();
        let mut rtt = RttEstimator::new(RtoConfig { k: 8, ..RtoConfig::default() });
        let mut lost = vec![];
        let request = |d: &mut NdngetTimers, w: &mut Window, rtt: &mut RttEstimator, u: u64, at: u64| {
            w.push_requested(UnitRecord::requested_at(Time::from_millis(at)));
            let mut ctx = LossCtx { now: Time::from_millis(at), window: w, rtt, lost: &mut vec![], threshold: None };
            d.on_request(&mut ctx, &[u], false);
        };
        let arrive = |d: &mut NdngetTimers, w: &mut Window, rtt: &mut RttEstimator, lost: &mut Vec<u64>, u, at| {
            let a = w.mark_received(u).unwrap();
            let mut ctx = LossCtx { now: Time::from_millis(at), window: w, rtt, lost, threshold: None };
            d.on_arrival(&mut ctx, &a, false);
        };
        // Units 0 and 1 at 0 ms with the initial 1 s RTO; unit 1's answer after 50 ms is the
        // first sample: RTO 50 + 8·25 = 250 ms for units 2 and 3.
        request(&mut d, &mut w, &mut rtt, 0, 0);
        request(&mut d, &mut w, &mut rtt, 1, 0);
        arrive(&mut d, &mut w, &mut rtt, &mut lost, 1, 50);
        assert_eq!(d.rto(&view(&rtt)), Some(250 * MS));
        request(&mut d, &mut w, &mut rtt, 2, 60);
        request(&mut d, &mut w, &mut rtt, 3, 70);
        assert_eq!(d.deadline(&view(&rtt)), Some(Time::from_millis(310)), "unit 2 first, on its own RTO");
        // Unit 3 arrives out of order: nothing is declared. Its 100 ms sample, with two units
        // still in flight (one expected per round trip): SRTT 56.25, RTTVAR 31.25 ms.
        arrive(&mut d, &mut w, &mut rtt, &mut lost, 3, 170);
        assert!(lost.is_empty());
        assert_eq!(d.rto(&view(&rtt)), Some(Duration::from_micros(56_250 + 8 * 31_250)));
        let mut ctx =
            LossCtx { now: Time::from_millis(310), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: None };
        assert_eq!(d.on_timeout(&mut ctx), Some(LossKind::Timeout));
        assert_eq!(lost, [2]);
        assert_eq!(d.rto(&view(&rtt)), Some(Duration::from_micros(2 * 306_250)), "backed off");
        assert_eq!(rtt.rto(), 2 * 1000 * MS, "the receiver's RTO (no samples here) backs off too");
        // Unit 0 (1 s timer, requested before the backoff): lost at 1000, no second backoff.
        assert_eq!(d.deadline(&view(&rtt)), Some(Time::from_millis(1000)));
        let mut ctx =
            LossCtx { now: Time::from_millis(1000), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: None };
        assert_eq!(d.on_timeout(&mut ctx), Some(LossKind::Timeout));
        assert_eq!(lost, [2, 0]);
        assert_eq!(d.rto(&view(&rtt)), Some(Duration::from_micros(2 * 306_250)));
        assert_eq!(d.deadline(&view(&rtt)), None);
    }
}
