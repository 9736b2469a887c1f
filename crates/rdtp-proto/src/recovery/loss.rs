//! Loss detection, as a part the receiver plugs in: which outstanding units are lost, and
//! when to look again.
//!
//! The receiver owns the [`Window`] of unit records and the RFC 6298 [`RttEstimator`]; a
//! [`LossDetector`] reads them and declares units lost with [`Window::declare_lost`]. The
//! default, [`StandardLoss`], is seed 000's: fast re-request after `threshold` later
//! arrivals (§3.4) and the retransmission timer (§3.3, RFC 6298). A controller that needs
//! another rule (seed 001's BBR-CD: lost when not received by T + RTprop + α·δ; seed 003's
//! CCTCP: one RTO per expected source) is built with its own (the `Built` a controller's spec
//! gives, in `cc`); ndnget's per-unit timers are [`super::NdngetTimers`] (the `cubic`
//! pipeline, `aimd:rto_only=true`). What a detector needs of its controller comes as a value
//! in the context ([`LossCtx::threshold`]), never as a reference to the controller.
//!
//! # Contract
//!
//! The receiver calls, in this order for each event:
//! * [`LossDetector::on_request`] after a request left (its units are in the window, state
//!   `Requested`, with `sent_at = now`);
//! * [`LossDetector::on_arrival`] after a unit arrived and its RTT sample (if any) went into
//!   the estimator, before the controller hears of it;
//! * [`LossDetector::on_timeout`] when `now` reaches [`LossDetector::deadline`] (asked, with
//!   [`LossDetector::rto`], through a read-only [`LossView`] whenever the receiver needs it);
//! * [`LossDetector::reset`] when the transfer ends.
//!
//! Units a call declares lost are appended to `ctx.lost`; the receiver re-requests them and
//! reports the loss to the controller.

use std::collections::BTreeMap;
use std::fmt;

use core::time::Duration;

use super::rtt::RttEstimator;
use super::samples::LossKind;
use super::window::{Arrival, UnitState, Window};
use crate::time::Time;

/// What a detector may read and change.
pub struct LossCtx<'a> {
    pub now: Time,
    pub window: &'a mut Window,
    pub rtt: &'a mut RttEstimator,
    /// Units declared lost by this call, appended.
    pub lost: &'a mut Vec<u64>,
    /// The controller's loss threshold as of this call (its `loss_threshold`: BBR-CD's
    /// `RTprop + α·δ`); `None` if it publishes none.
    pub threshold: Option<Duration>,
}

/// What a detector may read when it is only asked (its deadline, its RTO): the receiver's
/// estimator and the controller's loss threshold as they are at that moment.
#[derive(Clone, Copy)]
pub struct LossView<'a> {
    pub rtt: &'a RttEstimator,
    /// As [`LossCtx::threshold`].
    pub threshold: Option<Duration>,
}

impl LossCtx<'_> {
    /// Declare `unit` lost if it is in flight; whether it was.
    pub fn declare_lost(&mut self, unit: u64) -> bool {
        let lost = self.window.declare_lost(unit);
        if lost {
            self.lost.push(unit);
        }
        lost
    }
}

/// Decides which outstanding units are lost. See the module docs for the call order.
pub trait LossDetector: fmt::Debug + Send {
    /// Name for traces (`standard`, …).
    fn name(&self) -> &'static str;
    /// A request for `units` left at `ctx.now`; `retransmission` if they were lost before.
    fn on_request(&mut self, ctx: &mut LossCtx<'_>, units: &[u64], retransmission: bool);
    /// A unit arrived. `in_order` if it is the first unit not yet received in order (it
    /// moves `req_una`). Losses found are reported as [`LossKind::Fast`].
    fn on_arrival(&mut self, ctx: &mut LossCtx<'_>, arrival: &Arrival, in_order: bool);
    /// When [`LossDetector::on_timeout`] must run, if at all.
    fn deadline(&self, view: &LossView<'_>) -> Option<Time>;
    /// `ctx.now` reached the deadline. Returns the kind of loss episode this is, if any.
    fn on_timeout(&mut self, ctx: &mut LossCtx<'_>) -> Option<LossKind>;
    /// The current retransmission timeout, for traces (`None` if the detector has none).
    fn rto(&self, view: &LossView<'_>) -> Option<Duration> {
        Some(view.rtt.rto())
    }
    /// The transfer ended: drop all state.
    fn reset(&mut self);
}

/// Seed 000's loss detection: fast re-request (§3.4) and the RFC 6298 retransmission timer
/// (§3.3).
///
/// * A unit still outstanding is lost once `threshold` units *requested after it* have
///   arrived.
/// * The timer starts when a request leaves and none is running (§3.3 rule 1), restarts on
///   every in-order arrival (rule 2) and when the earliest outstanding unit is re-requested
///   (Linux `tcp_xmit_retransmit_queue`), stops when nothing is outstanding; on expiry every unit
///   outstanding for an RTO is lost, and the earliest in any case; the RTO backs off and the
///   timer restarts if units are still in flight (RFC 6298 §5.5–5.6).
#[derive(Debug)]
pub struct StandardLoss {
    threshold: u32,
    /// Units below the highest arrival that had not arrived when it passed them, with the
    /// number of later-requested units that arrived since.
    holes: BTreeMap<u64, u32>,
    deadline: Option<Time>,
}

impl StandardLoss {
    /// The name it has in traces and in the registry.
    pub const NAME: &'static str = "standard";

    /// Fast re-request after `threshold` later arrivals (seed 000: 6).
    pub fn new(threshold: u32) -> Self {
        StandardLoss { threshold: threshold.max(1), holes: BTreeMap::new(), deadline: None }
    }
}

impl LossDetector for StandardLoss {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn on_request(&mut self, ctx: &mut LossCtx<'_>, units: &[u64], retransmission: bool) {
        if retransmission {
            // Arrivals counted against the old request say nothing about the new one.
            for u in units {
                if let Some(c) = self.holes.get_mut(u) {
                    *c = 0;
                }
            }
        }
        if self.deadline.is_none() {
            self.deadline = Some(ctx.now + ctx.rtt.rto()); // §3.3 rule 1
        } else if retransmission && ctx.window.first_missing().is_some_and(|u| units.contains(&u)) {
            // The earliest outstanding unit is asked for again: give its re-request a whole
            // RTO, as Linux `tcp_xmit_retransmit_queue` rearms the timer when it retransmits
            // the head of its queue. Rule 2 alone runs the timer from the last in-order
            // arrival, which came *before* the loss was even detected; with a standing queue
            // RTTVAR shrinks and the RTO (≥ 200 ms) approaches SRTT, so the re-request's answer
            // (detection + one RTT later) lands after the expiry: a spurious timeout.
            self.deadline = Some(ctx.now + ctx.rtt.rto());
        }
    }

    fn on_arrival(&mut self, ctx: &mut LossCtx<'_>, a: &Arrival, in_order: bool) {
        let una = ctx.window.una();
        while self.holes.first_key_value().is_some_and(|(&h, _)| h < una) {
            self.holes.pop_first();
        }
        if a.unit >= a.prev_high {
            for h in a.prev_high.max(una)..a.unit {
                if ctx.window.get(h).is_some_and(|r| r.state != UnitState::Received) {
                    self.holes.insert(h, 0);
                }
            }
        }
        self.holes.remove(&a.unit);
        // Seed 000 §3.4: a unit is lost after `threshold` later-requested units arrived.
        let seq = a.before.seq;
        for (&h, count) in self.holes.range_mut(..a.unit) {
            let Some(&r) = ctx.window.get(h) else { continue };
            if r.state == UnitState::Requested && r.seq < seq {
                *count += 1;
                if *count >= self.threshold {
                    ctx.declare_lost(h);
                }
            }
        }
        if in_order {
            self.deadline = Some(ctx.now + ctx.rtt.rto()); // §3.3 rule 2
        }
        if ctx.window.inflight() == 0 {
            self.deadline = None; // §3.3: nothing outstanding
        }
    }

    fn deadline(&self, _view: &LossView<'_>) -> Option<Time> {
        self.deadline
    }

    fn on_timeout(&mut self, ctx: &mut LossCtx<'_>) -> Option<LossKind> {
        if self.deadline.is_none_or(|d| ctx.now < d) {
            return None;
        }
        self.deadline = None;
        // §3.3: every unit requested at least an RTO ago is lost, and the earliest in any case.
        let rto = ctx.rtt.rto();
        let expired: Vec<u64> = ctx
            .window
            .iter()
            .filter(|(_, r)| r.state == UnitState::Requested)
            .enumerate()
            .filter(|(i, (_, r))| *i == 0 || ctx.now - r.sent_at >= rto)
            .map(|(_, (u, _))| u)
            .collect();
        for u in expired {
            ctx.declare_lost(u);
        }
        ctx.rtt.backoff();
        // RFC 6298 §5.6: restart with the backed-off RTO. If the window is still full of
        // recent requests nothing may leave now, yet those requests need the timer too.
        // Otherwise it starts when the re-requests leave (§3.3 rule 1).
        if ctx.window.inflight() > 0 {
            self.deadline = Some(ctx.now + ctx.rtt.rto());
        }
        Some(LossKind::Timeout)
    }

    fn reset(&mut self) {
        self.holes.clear();
        self.deadline = None;
    }
}

#[cfg(test)]
mod tests {
    use core::time::Duration;

    use super::*;
    use crate::recovery::RtoConfig;
    use crate::recovery::window::UnitRecord;

    fn rec(seq: u64, sent_ms: u64) -> UnitRecord {
        UnitRecord { req_id: seq, seq, ..UnitRecord::requested_at(Time::from_millis(sent_ms)) }
    }

    struct Bench {
        w: Window,
        rtt: RttEstimator,
        d: StandardLoss,
        lost: Vec<u64>,
    }

    impl Bench {
        fn view(&self) -> LossView<'_> {
            LossView { rtt: &self.rtt, threshold: None }
        }
        fn new() -> Self {
            Bench {
                w: Window::default(),
                rtt: RttEstimator::new(RtoConfig::default()),
                d: StandardLoss::new(6),
                lost: vec![],
            }
        }
        fn request(&mut self, now: Time, units: &[u64], retransmission: bool) {
            let mut ctx =
                LossCtx { now, window: &mut self.w, rtt: &mut self.rtt, lost: &mut self.lost, threshold: None };
            self.d.on_request(&mut ctx, units, retransmission);
        }
        fn timeout(&mut self, now: Time) -> Option<LossKind> {
            let mut ctx =
                LossCtx { now, window: &mut self.w, rtt: &mut self.rtt, lost: &mut self.lost, threshold: None };
            self.d.on_timeout(&mut ctx)
        }
        fn arrive(&mut self, u: u64) -> bool {
            let Some(a) = self.w.mark_received(u) else { return false };
            let in_order = u == self.w.una();
            let mut ctx = LossCtx {
                now: Time::ZERO,
                window: &mut self.w,
                rtt: &mut self.rtt,
                lost: &mut self.lost,
                threshold: None,
            };
            self.d.on_arrival(&mut ctx, &a, in_order);
            if in_order {
                let mut una = u;
                while self.w.get(una).is_some_and(|r| r.state == UnitState::Received) {
                    una += 1;
                }
                self.w.advance_to(una);
            }
            true
        }
    }

    #[test]
    fn sixth_later_arrival_declares_loss() {
        let mut b = Bench::new();
        for s in 0..10 {
            b.w.push_requested(rec(s, 0));
        }
        assert!(b.arrive(0));
        // Unit 1 is missing; units 2..=6 arrive: 5 later arrivals, not yet lost.
        for u in 2..=6 {
            b.arrive(u);
        }
        assert!(b.lost.is_empty());
        assert_eq!(b.w.inflight(), 4); // units 1, 7, 8, 9
        b.arrive(7);
        assert_eq!(b.lost, vec![1]);
        assert_eq!(b.w.inflight(), 2);
        assert!(!b.arrive(7), "duplicate");
        // Re-requested with a later seq: arrivals of units requested before it do not count.
        let mut take = vec![];
        b.w.take_lost(8, &mut take);
        assert_eq!(take, vec![1]);
        b.w.mark_rerequested(1, |r| r.seq = 100);
        b.request(Time::ZERO, &[1], true);
        b.lost.clear();
        for u in 8..10 {
            b.arrive(u);
        }
        assert!(b.lost.is_empty());
        // The late original (or the re-request) arrives: everything is in.
        b.arrive(1);
        assert_eq!(b.w.inflight(), 0);
        assert_eq!(b.w.una(), 10);
        assert_eq!(b.d.deadline(&b.view()), None, "nothing outstanding: no timer");
    }

    #[test]
    fn re_requesting_the_earliest_unit_restarts_the_timer() {
        let mut b = Bench::new();
        for s in 0..10 {
            b.w.push_requested(rec(s, 0));
        }
        b.request(Time::ZERO, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], false);
        assert_eq!(b.d.deadline(&b.view()), Some(Time::from_millis(1000)));
        // Unit 0 is lost: 1..=6 arrive (out of order, so the timer keeps running) and declare it.
        for u in 1..=6 {
            b.arrive(u);
        }
        assert_eq!(b.lost, vec![0]);
        assert!(b.w.declare_lost(9));
        let mut take = vec![];
        b.w.take_lost(8, &mut take);
        assert_eq!(take, vec![0, 9]);
        // Re-requesting a later unit does not move the timer …
        b.w.mark_rerequested(9, |r| r.seq = 10);
        b.request(Time::from_millis(300), &[9], true);
        assert_eq!(b.d.deadline(&b.view()), Some(Time::from_millis(1000)));
        // … re-requesting the earliest outstanding unit (req_una) does.
        b.w.mark_rerequested(0, |r| r.seq = 11);
        b.request(Time::from_millis(400), &[0], true);
        assert_eq!(b.d.deadline(&b.view()), Some(Time::from_millis(1400)));
    }

    #[test]
    fn the_earliest_missing_unit_counts_even_when_the_window_has_not_slid() {
        // Verified streaming slides the window a block at a time: units 0 and 1 arrived but
        // are still in it, unit 2 is the earliest missing one.
        let mut b = Bench::new();
        for s in 0..10 {
            b.w.push_requested(rec(s, 0));
        }
        b.request(Time::ZERO, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], false);
        b.w.mark_received(0);
        b.w.mark_received(1);
        assert_eq!((b.w.una(), b.w.first_missing()), (0, Some(2)));
        assert!(b.w.declare_lost(2));
        let mut take = vec![];
        b.w.take_lost(8, &mut take);
        b.w.mark_rerequested(2, |r| r.seq = 10);
        b.request(Time::from_millis(400), &[2], true);
        assert_eq!(b.d.deadline(&b.view()), Some(Time::from_millis(1400)));
    }

    #[test]
    fn expiry_takes_old_units_and_always_the_earliest() {
        let mut b = Bench::new();
        b.w.push_requested(rec(0, 100)); // earliest but recent
        b.w.push_requested(rec(1, 0));
        b.w.push_requested(rec(2, 350));
        b.request(Time::ZERO, &[0, 1, 2], false);
        assert_eq!(b.d.deadline(&b.view()), Some(Time::from_millis(1000)));
        b.rtt.on_sample(Duration::from_millis(40)); // RTO = max(40 + 4·20, 200) = 200 ms
        // Not due yet: nothing happens.
        assert_eq!(b.timeout(Time::from_millis(400)), None);
        b.d.deadline = Some(Time::from_millis(400));
        assert_eq!(b.timeout(Time::from_millis(400)), Some(LossKind::Timeout));
        assert_eq!(b.lost, vec![0, 1]);
        assert_eq!(b.w.inflight(), 1);
        assert_eq!(b.w.lost_count(), 2);
        // Backed off (400 ms) and restarted because unit 2 is still out.
        assert_eq!(b.d.deadline(&b.view()), Some(Time::from_millis(800)));
    }
}
