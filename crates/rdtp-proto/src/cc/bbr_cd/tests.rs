//! BBR-CD's state transitions, filtering and loss threshold, driven by scripted samples.

use core::time::Duration;

use super::*;
use crate::cc::{CaState, LossKind, RateSample};
use crate::node::{NodeId, ServedBy};

const UNIT: u16 = 1000;
const MS: Duration = Duration::from_millis(1);

fn params() -> CcParams {
    CcParams { unit: UNIT, max_aggregation: 64, seed: 3 }
}

/// A scripted path: `bw` units/s, RTT `rtt`, one arrival every 1/bw.
struct Script {
    now: Time,
    delivered: u64,
    bw: f64,
    rtt: Duration,
    source: ServedBy,
    cookie: u64,
}

impl Script {
    fn new(bw: f64, rtt: Duration) -> Self {
        Script { now: Time::from_millis(1), delivered: 0, bw, rtt, source: ServedBy::default(), cookie: 0 }
    }

    fn sample(&mut self, inflight: u64) -> AckSample {
        self.now += Duration::from_secs_f64(1.0 / self.bw);
        self.delivered += 1;
        let window = (self.bw * self.rtt.as_secs_f64()).round().max(1.0) as u64;
        let prior = self.delivered.saturating_sub(window);
        AckSample {
            now: self.now,
            unit: self.delivered,
            source: self.source,
            cookie: self.cookie,
            delivered: self.delivered,
            acked: 1,
            rate: RateSample {
                delivered: self.delivered - prior,
                interval: Some(self.rtt),
                prior_delivered: prior,
                is_app_limited: false,
            },
            rtt: Some(self.rtt),
            srtt: Some(self.rtt),
            losses: 0,
            lost_total: 0,
            prior_inflight: inflight + 1,
            inflight,
            ca_state: CaState::Open,
        }
    }

    fn ack(&mut self, b: &mut BbrCd, inflight: u64) {
        let s = self.sample(inflight);
        b.on_ack(&s);
    }

    /// Acks for `d`, keeping in-flight at what `inflight` says.
    fn run(&mut self, b: &mut BbrCd, d: Duration, inflight: impl Fn(&BbrCd) -> u64) {
        let end = self.now + d;
        while self.now < end {
            let i = inflight(b);
            self.ack(b, i);
        }
    }

    /// A loss timeout at `now + d` (no arrival).
    fn timeout_after(&mut self, b: &mut BbrCd, d: Duration) {
        self.now += d;
        b.on_congestion(&CongestionEvent {
            now: self.now,
            kind: LossKind::Timeout,
            inflight: 0,
            first_in_window: true,
        });
    }
}

/// Bring a flow to ProbeBW on a 1000 units/s, 20 ms path.
fn steady() -> (BbrCd, Script) {
    let mut b = BbrCd::new(BbrCdConfig::default(), params());
    let mut s = Script::new(1000.0, 20 * MS);
    s.run(&mut b, Duration::from_secs(2), |b| b.cwnd().min(20));
    assert_eq!(b.mode(), Mode::ProbeBw);
    (b, s)
}

#[test]
fn starts_with_one_unit_unpaced_and_is_built_with_its_loss_detector() {
    let mut b = BbrCd::new(BbrCdConfig::default(), params());
    assert_eq!((b.mode(), b.cwnd(), b.pacing_rate(), b.aggregation()), (Mode::Startup, 1, None, 1));
    assert!(b.new_units_first());
    assert!(matches!(BbrCdConfig::default().build(params()), Built::Detector(_, d) if d.name() == "bbr-cd"));
    assert_eq!(b.loss_threshold(), None, "no threshold before two RTT samples");
    // The first sample: one unit over one 20 ms RTT is 50 units/s, RTprop 20 ms, BDP 1:
    // Startup's window is ⌈2.885 × 1⌉ + 3 quanta of one unit, its pacing 2.885 × BtlBw.
    let mut s = Script::new(1000.0, 20 * MS);
    s.ack(&mut b, 0);
    assert_eq!(b.cwnd(), 3 + 3);
    assert!((b.pacing_rate().unwrap() - 2.885 * 50.0 * f64::from(UNIT)).abs() < 1e-6);
}

#[test]
fn startup_drain_probe_bw_with_window_gain_one() {
    let mut b = BbrCd::new(BbrCdConfig::default(), params());
    let mut s = Script::new(1000.0, 20 * MS);
    let mut modes = vec![b.mode()];
    // In-flight is the window, except in Drain, where it falls to below the BDP.
    while s.now < Time::from_millis(2000) {
        let i = if b.mode() == Mode::Drain { 15 } else { b.cwnd() };
        s.ack(&mut b, i);
        if modes.last() != Some(&b.mode()) {
            modes.push(b.mode());
        }
    }
    assert_eq!(modes, [Mode::Startup, Mode::Drain, Mode::ProbeBw]);
    assert!(b.full_bw_reached());
    // ProbeBW: window = 1 × BDP (1000 units/s × 20 ms) + 3.
    let bdp = b.estimator().bdp().unwrap();
    assert!((bdp - 20.0).abs() < 1e-6, "{bdp}");
    assert_eq!(b.cwnd(), bdp.ceil() as u64 + 3);
    // Each phase lasts one RTprop: over 8 RTprops the pacing gain takes all three values.
    let mut gains = std::collections::BTreeSet::new();
    let end = s.now + 8 * 20 * MS;
    while s.now < end {
        s.ack(&mut b, 20);
        gains.insert((b.pacing_rate().unwrap() / 1e4).round() as u64);
    }
    assert_eq!(gains.into_iter().collect::<Vec<_>>(), [75, 100, 125]);
}

#[test]
fn probe_rtt_entered_when_fewer_than_four_samples_in_w_and_left_after_four() {
    let (mut b, mut s) = steady();
    // W = 8 × 20 ms = 160 ms. Arrivals stop; timeouts keep the controller informed.
    assert_eq!(b.estimator().window(), Some(160 * MS));
    s.timeout_after(&mut b, 100 * MS);
    assert_eq!(b.mode(), Mode::ProbeBw, "W still holds the samples of the last 60 ms");
    s.timeout_after(&mut b, 55 * MS);
    assert_eq!(b.mode(), Mode::ProbeBw, "the samples of the last 5 ms: 6");
    s.timeout_after(&mut b, 3 * MS);
    assert_eq!(b.mode(), Mode::ProbeRtt);
    assert!(b.wants_app_limited());
    // k = 4 units/s.
    assert_eq!(b.pacing_rate(), Some(4.0 * f64::from(UNIT)));
    // Three samples (slow: 4 per second) are not enough; the fourth ends it, back to ProbeBW
    // because Startup had filled the pipe.
    s.bw = 4.0;
    for _ in 0..3 {
        s.ack(&mut b, 1);
        assert_eq!(b.mode(), Mode::ProbeRtt);
    }
    s.ack(&mut b, 1);
    assert_eq!(b.mode(), Mode::ProbeBw);
    assert!(!b.wants_app_limited());
    // Re-entry waits a whole window after the exit.
    s.timeout_after(&mut b, 100 * MS);
    assert_eq!(b.mode(), Mode::ProbeBw);
    s.timeout_after(&mut b, 70 * MS);
    assert_eq!(b.mode(), Mode::ProbeRtt);
}

#[test]
fn probe_rtt_leaves_to_startup_when_the_pipe_was_not_filled() {
    let mut b = BbrCd::new(BbrCdConfig::default(), params());
    let mut s = Script::new(1000.0, 20 * MS);
    // Three samples, then silence: after a whole window (8 × 20 ms), fewer than 4 in it.
    for _ in 0..3 {
        s.ack(&mut b, 1);
    }
    assert_eq!(b.mode(), Mode::Startup);
    s.timeout_after(&mut b, 100 * MS);
    assert_eq!(b.mode(), Mode::Startup, "the flow is younger than its window");
    s.timeout_after(&mut b, 100 * MS);
    assert_eq!(b.mode(), Mode::ProbeRtt);
    for _ in 0..4 {
        s.ack(&mut b, 1);
    }
    assert_eq!(b.mode(), Mode::Startup);
    assert!(!b.full_bw_reached());
}

#[test]
fn loss_threshold_is_rtprop_plus_alpha_delta() {
    let mut b = BbrCd::new(BbrCdConfig::default(), params());
    let mut s = Script::new(1000.0, 10 * MS);
    assert_eq!(b.loss_threshold(), None);
    s.ack(&mut b, 1);
    assert_eq!(b.loss_threshold(), None, "δ needs two samples");
    // Alternate 10 and 30 ms: RTprop 20 ms, δ 10 ms → 20 + 10 × 10 = 120 ms (within one odd
    // sample out of the ≈ 160 in the window).
    for i in 0..199 {
        s.rtt = if i % 2 == 0 { 30 * MS } else { 10 * MS };
        s.ack(&mut b, 1);
    }
    let t = b.loss_threshold().unwrap();
    assert!(t.abs_diff(120 * MS) < Duration::from_micros(200), "{t:?}");
    // α = 2: 20 + 2 × 10 = 40 ms.
    let mut b = BbrCd::new(BbrCdConfig { alpha: 2.0, ..BbrCdConfig::default() }, params());
    for i in 0..200 {
        s.rtt = if i % 2 == 0 { 30 * MS } else { 10 * MS };
        s.ack(&mut b, 1);
    }
    let t = b.loss_threshold().unwrap();
    assert!(t.abs_diff(40 * MS) < Duration::from_micros(200), "{t:?}");
}

#[test]
fn rtt_filtering_drops_rerequests_and_the_own_cache_only() {
    let run = |cfg: BbrCdConfig, source: ServedBy, cookie: u64| {
        let mut b = BbrCd::new(cfg, params());
        let mut s = Script::new(1000.0, 20 * MS);
        s.source = source;
        s.cookie = cookie;
        for _ in 0..10 {
            s.ack(&mut b, 1);
        }
        b.estimator().rtt_samples()
    };
    let ap = ServedBy { node: NodeId::label("ap").unwrap(), hops: 0, cached: true };
    let origin = ServedBy { node: NodeId::ORIGIN, hops: 1, cached: false };
    let local = BbrCdConfig { local_cache: true, ..BbrCdConfig::default() };
    assert_eq!(run(BbrCdConfig::default(), origin, 0), 10);
    // The AP's store is a source like any other unless it is this host's own cache.
    assert_eq!(run(BbrCdConfig::default(), ap, 0), 10);
    assert_eq!(run(local.clone(), ap, 0), 0);
    assert_eq!(run(local, origin, 0), 10);
    // Re-requested units: no sample.
    let mut b = BbrCd::new(BbrCdConfig::default(), params());
    let cookie = b.on_request(&RequestInfo { now: Time::ZERO, units: &[7], retransmission: true });
    assert_ne!(cookie, b.on_request(&RequestInfo { now: Time::ZERO, units: &[8], retransmission: false }));
    assert_eq!(run(BbrCdConfig::default(), origin, cookie), 0);
}

#[test]
fn losses_do_not_shrink_the_window() {
    let (mut b, mut s) = steady();
    let before = b.cwnd();
    s.timeout_after(&mut b, MS);
    assert_eq!(b.cwnd(), before);
}

#[test]
fn rerequested_arrivals_keep_the_flow_out_of_probe_rtt_but_give_no_samples() {
    let (mut b, mut s) = steady();
    let bdp = b.estimator().bdp().unwrap();
    // The tail of a file: only re-requests are out (S1 §IV-D), for a second.
    s.cookie = b.on_request(&RequestInfo { now: s.now, units: &[1], retransmission: true });
    s.run(&mut b, Duration::from_secs(1), |_| 10);
    assert_eq!(b.mode(), Mode::ProbeBw, "the path works: data keeps arriving");
    assert_eq!(b.estimator().rtt_samples(), 0, "W slid past every admitted sample");
    assert!(b.estimator().arrivals() > 100);
    // The estimates of before are kept.
    assert!((b.estimator().bdp().unwrap() - bdp).abs() < 1e-9);
    // Silence for a whole window: ProbeRTT; four re-requested arrivals end it.
    s.timeout_after(&mut b, 170 * MS);
    assert_eq!(b.mode(), Mode::ProbeRtt);
    s.bw = 4.0;
    for _ in 0..4 {
        s.ack(&mut b, 1);
    }
    assert_eq!(b.mode(), Mode::ProbeBw);
}

#[test]
fn delivery_rate_is_units_delivered_since_the_request_over_its_rtt() {
    // S1 §III-B: Δdelivered / ΔT over [interest sent, data received].
    assert_eq!(delivery_rate(10, 20 * MS), Some(500.0));
    assert_eq!(delivery_rate(0, 20 * MS), None);
    assert_eq!(delivery_rate(3, Duration::ZERO), None);
    // Not BBR's max(send_elapsed, ack_elapsed): an interval of 40 ms does not halve it.
    let mut b = BbrCd::new(BbrCdConfig::default(), params());
    let mut s = Script::new(1000.0, 20 * MS);
    let mut sample = s.sample(1);
    sample.rate.delivered = 20;
    sample.rate.interval = Some(40 * MS);
    b.on_ack(&sample);
    let bw = b.estimator().btlbw().unwrap();
    assert!((bw - 1000.0).abs() < 1e-9, "{bw}");
    assert!(b.retime_pacing(), "S1: the next send time is recomputed at every arrival");
}

/// An aggregated request: eight units asked for at once, the receiver's RTT sample only with
/// the first to arrive (seed 000), the others one serialisation (1 ms) apart after it. Each
/// is an S1 sample, timed from the request, so that δ holds the spread the Loss Detector
/// sees: it times every unit from its request.
#[test]
fn every_unit_of_an_aggregated_request_is_a_sample() {
    let mut b = BbrCd::new(BbrCdConfig::default(), params());
    let mut s = Script::new(1000.0, 20 * MS);
    let sent = s.now;
    s.cookie = b.on_request(&RequestInfo { now: sent, units: &[1, 2, 3, 4, 5, 6, 7, 8], retransmission: false });
    for i in 0..8u32 {
        let mut a = s.sample(8 - u64::from(i));
        a.now = sent + 20 * MS + i * MS;
        a.rtt = (i == 0).then_some(20 * MS);
        b.on_ack(&a);
    }
    let e = b.estimator();
    assert_eq!(e.rtt_samples(), 8);
    // RTTs 20 … 27 ms: mean 23.5 ms, population standard deviation √5.25 ≈ 2.29 ms.
    assert!(e.rtprop().unwrap().abs_diff(Duration::from_micros(23_500)) < Duration::from_micros(1));
    assert!(e.delta().unwrap().abs_diff(Duration::from_secs_f64(5.25f64.sqrt() / 1e3)) < Duration::from_micros(1));
    // A re-request's units give none, aggregated or not.
    let mut b = BbrCd::new(BbrCdConfig::default(), params());
    s.cookie = b.on_request(&RequestInfo { now: s.now, units: &[1, 2], retransmission: true });
    let mut a = s.sample(1);
    a.rtt = None;
    b.on_ack(&a);
    assert_eq!(b.estimator().rtt_samples(), 0);
}

/// A consumer whose share is a few units per second and whose units then come from a nearby
/// store in 1.4 ms (ns-3, Hu et al.'s Topology 2, seed 4): `β × RTprop` is 11 ms, less than
/// one unit at BtlBw, so a window of S1's length never holds `min_samples` arrivals. The
/// window's floor (`estimator` docs) keeps it long enough to expect `2 × min_samples`; units
/// arriving at BtlBw keep the flow out of ProbeRTT.
#[test]
fn a_flow_whose_window_holds_less_than_one_unit_is_not_held_in_probe_rtt() {
    let mut b = BbrCd::new(BbrCdConfig::default(), params());
    // 7 units/s over 150 ms (one unit per request and RTT: 6.7 units/s samples).
    let mut s = Script::new(7.0, 150 * MS);
    s.run(&mut b, Duration::from_secs(20), |b| if b.mode() == Mode::Drain { 0 } else { b.cwnd() });
    assert_eq!(b.mode(), Mode::ProbeBw);
    let bw = b.estimator().btlbw().unwrap();
    assert!((6.0..7.5).contains(&bw), "{bw}");
    // The same rate, now 1.4 ms away; the delivery-rate samples are left out (as after
    // ProbeRTT, `probe_rtt` docs) so that BtlBw stays what the arrivals are.
    s.rtt = Duration::from_micros(1400);
    let mut probe_rtt = Duration::ZERO;
    let end = s.now + Duration::from_secs(20);
    while s.now < end {
        let before = s.now;
        let mut a = s.sample(1);
        a.rate.is_app_limited = true;
        b.on_ack(&a);
        if b.mode() == Mode::ProbeRtt {
            probe_rtt += s.now - before;
        }
    }
    assert_eq!(probe_rtt, Duration::ZERO, "held in ProbeRTT while units arrive at BtlBw");
    let rtprop = b.estimator().rtprop().unwrap();
    assert!(rtprop < 2 * MS, "{rtprop:?}");
    assert!(b.estimator().window().unwrap() >= Duration::from_secs_f64(8.0 / 7.5));
}
