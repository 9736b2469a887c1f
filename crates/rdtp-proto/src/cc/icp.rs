//! `icp`: the Interest Control Protocol of Carofiglio, Gallo and Muscariello (INFOCOM
//! workshops 2012), the baseline of seed 003 ("S3") §III, configured as S3 configures it:
//! `δ = 0.5`, `β = 0.5`, `η = 1`, initial timeout 3 s.
//!
//! ICP is a receiver-driven AIMD window of Interests with one retransmission timer computed
//! from the RTT samples of all Data, "irrespective of origin" (S3 §I) — which is what CCTCP
//! improves on. The ICP paper is not in this repository; seed 000 §2 says only that ICP is
//! "window-based" and "depends on delay measurements and timer expirations", and S3 gives
//! the three parameters. Everything else here is a choice, listed so that it can be checked
//! against the ICP paper:
//!
//! * **Window**: `W` Interests outstanding, starting at `init_window` = 1; additive increase
//!   `W += η/W` per Data that arrives in time (η per round trip); multiplicative decrease
//!   `W = max(β·W, 1)` when an Interest's timer expires. No slow start (`slow_start = true`
//!   adds one, `W += 1` per Data until the first decrease, for comparison).
//! * **At most one decrease per window**: an expiry for an Interest sent before the last
//!   decrease does not decrease again (a burst of expiries is one congestion event).
//! * **Timer τ**: `τ = (1 + δ)·RTT_max`, `RTT_max` the largest of the last `history` = 30
//!   RTT samples, whatever node served them (δ read as the timer's margin over the largest
//!   recent RTT; 30 samples as the RTT history of Carofiglio et al.'s later RAAQM). Floor
//!   `min_timeout` 10 ms, ceiling 60 s; 3 s before the first sample. Each Interest's timer
//!   is set when it leaves, with the τ of that moment.
//! * **Backoff**: every expiry doubles τ until the next valid sample (as RFC 6298 §5.5 does
//!   for TCP's RTO). Without it a τ below the farthest source's RTT never recovers: each far
//!   unit times out before its Data comes, so no valid sample from it ever enters the
//!   history, and the transfer stalls (seen in the harness with a near cache holding the
//!   first 300 units of 1000). With it, a run of near units still costs the far ones that
//!   follow a burst of spurious timeouts and window decreases — S3 §III's account of ICP.
//! * **Samples**: one per Interest, never from a re-expressed one (Karn's rule; a CCN consumer
//!   cannot tell which of its Interests a Data answers). Measured from the latest expression
//!   instead, a far unit re-expressed every τ gives samples below τ and the timer never
//!   grows back; from the first, a unit lost several times gives the sum of its timeouts and
//!   τ grows without bound under heavy loss (both tried in the harness).
//! * **Interests** ask for one unit each and are not paced (window-clocked); a timed-out
//!   Interest is re-expressed. Out of order is no sign of loss (no fast re-request).
//! * **Late Data** (after its Interest timed out) grows no window.
//! * **After a timeout** the receiver's loss window (RFC 5681 §3.1, `recovery/loss_window.rs`,
//!   applied to every controller that does not set its window in recovery itself) limits the
//!   re-expressions: in-flight + 1, one more per arriving Data, until it reaches `W`. Seeds
//!   000 and 003 say nothing of this for ICP; it keeps a lost window from being re-expressed
//!   in one burst, as for every other window controller here.

use std::collections::VecDeque;

use core::time::Duration;

use super::spec::{Key, Keyed, Kind, key};
use super::{
    AckSample, Built, CcParams, CongestionEvent, Controller, ControllerSpec, LossDetector, LossKind, PathState,
};
use crate::node::NodeId;
use crate::recovery::{Arrival, LossCtx, LossView, UnitState, UnitTimers};
use crate::time::Time;

/// Parameters of `icp` (S3 §III: δ = 0.5, β = 0.5, η = 1, initial timeout 3 s).
#[derive(Clone, Debug, PartialEq)]
pub struct IcpConfig {
    /// Additive increase per round trip.
    pub eta: f64,
    /// Multiplicative decrease factor.
    pub beta: f64,
    /// The timer's margin over the largest recent RTT.
    pub delta: f64,
    /// RTT samples the timer looks at.
    pub history: u32,
    /// Initial window, Interests.
    pub init_window: f64,
    /// Timer before the first sample, seconds.
    pub initial_timeout: f64,
    /// Timer floor and ceiling, seconds.
    pub min_timeout: f64,
    pub max_timeout: f64,
    /// Slow start until the first decrease (not ICP's; for comparison).
    pub slow_start: bool,
}

impl Default for IcpConfig {
    fn default() -> Self {
        IcpConfig {
            eta: 1.0,
            beta: 0.5,
            delta: 0.5,
            history: 30,
            init_window: 1.0,
            initial_timeout: 3.0,
            min_timeout: 0.01,
            max_timeout: 60.0,
            slow_start: false,
        }
    }
}

impl Keyed for IcpConfig {
    const KEYS: &'static [Key<Self>] = &[
        key!(eta, Kind::Float { min: 1e-3, max: 1e3 }, "additive increase per round trip, η (Saino et al. §III: 1)"),
        key!(beta, Kind::Float { min: 0.0, max: 1.0 }, "multiplicative decrease, β (Saino et al. §III: 0.5)"),
        key!(
            delta,
            Kind::Float { min: 0.0, max: 100.0 },
            "timer margin: τ = (1 + δ)·RTT_max (Saino et al. §III: δ = 0.5)"
        ),
        key!(history, Kind::Int { min: 1, max: 100_000 }, "RTT samples RTT_max is taken over"),
        key!(init_window, Kind::Float { min: 1.0, max: 1e6 }, "initial window, Interests"),
        key!(
            initial_timeout,
            Kind::Float { min: 0.001, max: 3600.0 },
            "timer before the first sample, s (Saino et al.: 3)"
        ),
        key!(min_timeout, Kind::Float { min: 0.0, max: 3600.0 }, "timer floor, s"),
        key!(max_timeout, Kind::Float { min: 0.001, max: 3600.0 }, "timer ceiling, s"),
        key!(slow_start, Kind::Bool, "slow start until the first decrease (not ICP's)"),
    ];
}

impl ControllerSpec for IcpConfig {
    fn name(&self) -> &'static str {
        "icp"
    }
    /// ICP is its own loss detector: its window and its timers are one state.
    fn build(&self, params: CcParams) -> Built {
        Built::Own(Box::new(Icp::new(self.clone(), params)))
    }
}

/// The controller. See the module docs.
#[derive(Debug)]
pub struct Icp {
    cfg: IcpConfig,
    window: f64,
    samples: VecDeque<Duration>,
    timers: UnitTimers,
    decreased_at: Option<Time>,
    /// The arrival the loss detector just saw was late.
    late: Option<u64>,
    /// Expiries since the last valid sample: τ is doubled this many times (at most 6).
    backoff: u32,
}

impl Icp {
    pub fn new(cfg: IcpConfig, _params: CcParams) -> Self {
        let window = cfg.init_window.max(1.0);
        Icp {
            cfg,
            window,
            samples: VecDeque::new(),
            timers: UnitTimers::default(),
            decreased_at: None,
            late: None,
            backoff: 0,
        }
    }

    /// The timer τ an Interest leaving now gets (backoff included).
    pub fn timeout(&self) -> Duration {
        let secs = match self.samples.iter().max() {
            None => self.cfg.initial_timeout,
            Some(m) => (1.0 + self.cfg.delta) * m.as_secs_f64(),
        };
        let secs = (secs * f64::from(1u32 << self.backoff.min(6))).min(self.cfg.max_timeout).max(self.cfg.min_timeout);
        Duration::from_secs_f64(secs.clamp(0.0, 3600.0))
    }
}

impl Controller for Icp {
    fn name(&self) -> &'static str {
        "icp"
    }
    fn cwnd(&self) -> u64 {
        self.window as u64
    }
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    fn aggregation(&self) -> u32 {
        1
    }
    fn state(&self) -> &'static str {
        if self.cfg.slow_start && self.decreased_at.is_none() { "slow_start" } else { "aimd" }
    }
    fn on_ack(&mut self, s: &AckSample) {
        if let Some(r) = s.rtt {
            self.samples.push_back(r);
            while self.samples.len() > self.cfg.history as usize {
                self.samples.pop_front();
            }
            self.backoff = 0;
        }
        if self.late.take() == Some(s.unit) {
            return;
        }
        if self.cfg.slow_start && self.decreased_at.is_none() {
            self.window += 1.0;
        } else {
            self.window += self.cfg.eta / self.window;
        }
    }
    fn on_congestion(&mut self, _e: &CongestionEvent) {
        // Decreases happen at timer expiries (`on_timeout`); Busy is not a timer expiry.
    }
    fn path_states(&self) -> Vec<PathState> {
        let srtt = self.samples.back().copied();
        vec![PathState {
            node: NodeId::UNKNOWN,
            hops: 0,
            cwnd: self.window,
            ssthresh: f64::INFINITY,
            srtt,
            rto: self.timeout(),
            inflight: self.timers.len() as u64,
            samples: self.samples.len() as u64,
        }]
    }
}

impl LossDetector for Icp {
    fn name(&self) -> &'static str {
        "icp"
    }
    fn on_request(&mut self, ctx: &mut LossCtx<'_>, units: &[u64], _retransmission: bool) {
        let tau = self.timeout();
        for &u in units {
            self.timers.arm(u, ctx.now, tau, 0);
        }
    }
    fn on_arrival(&mut self, _ctx: &mut LossCtx<'_>, a: &Arrival, _in_order: bool) {
        self.timers.disarm(a.unit);
        if a.before.state == UnitState::Lost || a.before.tx > 1 {
            self.late = Some(a.unit);
        }
    }
    fn deadline(&self, _view: &LossView<'_>) -> Option<Time> {
        self.timers.next_deadline()
    }
    fn on_timeout(&mut self, ctx: &mut LossCtx<'_>) -> Option<LossKind> {
        let mut any = false;
        while let Some((unit, armed)) = self.timers.pop_expired(ctx.now) {
            if !ctx.declare_lost(unit) {
                continue;
            }
            if !any {
                self.backoff = (self.backoff + 1).min(6); // once per expiry event
            }
            any = true;
            if self.decreased_at.is_none_or(|t| armed.sent_at >= t) {
                self.window = (self.window * self.cfg.beta).max(1.0);
                self.decreased_at = Some(ctx.now);
            }
        }
        any.then_some(LossKind::Timeout)
    }
    fn rto(&self, _view: &LossView<'_>) -> Option<Duration> {
        Some(self.timeout())
    }
    fn reset(&mut self) {
        self.timers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{CaState, RateSample};
    use crate::node::ServedBy;
    use crate::recovery::{RtoConfig, RttEstimator, UnitRecord, Window};

    const MS: Duration = Duration::from_millis(1);

    fn ack(unit: u64, rtt: Option<Duration>) -> AckSample {
        AckSample {
            now: Time::ZERO,
            unit,
            source: ServedBy::default(),
            cookie: 0,
            delivered: 1,
            acked: 1,
            rate: RateSample { delivered: 1, interval: None, prior_delivered: 0, is_app_limited: false },
            rtt,
            srtt: rtt,
            losses: 0,
            lost_total: 0,
            prior_inflight: 1,
            inflight: 0,
            ca_state: CaState::Open,
        }
    }

    fn record(sent: Time) -> UnitRecord {
        UnitRecord::requested_at(sent)
    }

    /// Request unit `u` at `sent` (the receiver's order of calls), as the receiver does.
    fn request(icp: &mut Icp, w: &mut Window, rtt: &mut RttEstimator, u: u64, sent: Time) {
        w.push_requested(record(sent));
        let mut lost = vec![];
        let mut ctx = LossCtx { now: sent, window: w, rtt, lost: &mut lost, threshold: None };
        LossDetector::on_request(icp, &mut ctx, &[u], false);
    }

    /// Unit `u` arrives at `now`.
    fn arrive(icp: &mut Icp, w: &mut Window, rtt: &mut RttEstimator, u: u64, now: Time) {
        let a = w.mark_received(u).unwrap();
        let mut lost = vec![];
        let mut ctx = LossCtx { now, window: w, rtt, lost: &mut lost, threshold: None };
        LossDetector::on_arrival(icp, &mut ctx, &a, false);
        // The receiver's sample: Karn's rule, none from a unit asked for twice.
        icp.on_ack(&ack(u, (a.before.tx == 1).then(|| now - a.before.sent_at)));
    }

    /// The timer follows the largest of the last 30 samples, whoever served them: a run of
    /// near-cache samples shrinks it below a far source's RTT (S3 §III's spurious timeouts);
    /// expiries back it off until a far unit arrives in time.
    #[test]
    fn the_timer_forgets_far_sources_and_learns_them_again() {
        let p = CcParams { unit: 1000, max_aggregation: 64, seed: 0 };
        let mut icp = Icp::new(IcpConfig::default(), p);
        let (mut w, mut rtt) = (Window::default(), RttEstimator::new(RtoConfig::default()));
        assert_eq!(icp.timeout(), Duration::from_secs(3));
        request(&mut icp, &mut w, &mut rtt, 0, Time::ZERO);
        arrive(&mut icp, &mut w, &mut rtt, 0, Time::from_millis(90)); // from the origin
        assert_eq!(icp.timeout(), 135 * MS);
        for u in 1..=30 {
            let t = Time::from_millis(100 * u);
            request(&mut icp, &mut w, &mut rtt, u, t);
            arrive(&mut icp, &mut w, &mut rtt, u, t + 10 * MS); // from the nearest cache
        }
        assert_eq!(icp.timeout(), 15 * MS, "the origin's sample left the history");
        // Additive increase, η/W per Data, no slow start: W² grows by about 2 per Data.
        let win: f64 = icp.path_states()[0].cwnd;
        assert!((win - 63f64.sqrt()).abs() < 0.5, "W after 31 Data: {win}");
        // Far units again: the first times out (spuriously) and τ doubles, and again, until
        // one arrives in time and its sample brings τ back to (1 + δ) · 90 ms.
        let mut t = Time::from_millis(5000);
        for (u, tau) in [(31, 15), (32, 30), (33, 60)] {
            assert_eq!(icp.timeout(), tau * MS);
            request(&mut icp, &mut w, &mut rtt, u, t);
            let mut lost = vec![];
            let mut ctx =
                LossCtx { now: t + tau * MS, window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: None };
            assert_eq!(icp.on_timeout(&mut ctx), Some(LossKind::Timeout));
            t += Duration::from_millis(200);
        }
        assert!(icp.cwnd() < win as u64, "spurious decreases");
        assert_eq!(icp.timeout(), 120 * MS);
        request(&mut icp, &mut w, &mut rtt, 34, t);
        arrive(&mut icp, &mut w, &mut rtt, 34, t + 90 * MS);
        assert_eq!(icp.timeout(), 135 * MS);
    }

    #[test]
    fn one_decrease_per_window_of_expiries() {
        let p = CcParams { unit: 1000, max_aggregation: 64, seed: 0 };
        let mut icp = Icp::new(IcpConfig { init_window: 16.0, ..IcpConfig::default() }, p);
        let mut w = Window::default();
        let mut rtt = RttEstimator::new(RtoConfig::default());
        let mut lost = vec![];
        for u in 0..4 {
            w.push_requested(record(Time::ZERO));
            let mut ctx = LossCtx { now: Time::ZERO, window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: None };
            LossDetector::on_request(&mut icp, &mut ctx, &[u], false);
        }
        let mut ctx =
            LossCtx { now: Time::from_millis(3000), window: &mut w, rtt: &mut rtt, lost: &mut lost, threshold: None };
        assert_eq!(icp.on_timeout(&mut ctx), Some(LossKind::Timeout));
        assert_eq!(lost, [0, 1, 2, 3]);
        assert_eq!(icp.cwnd(), 8, "four expiries of one window: one decrease");
    }
}
