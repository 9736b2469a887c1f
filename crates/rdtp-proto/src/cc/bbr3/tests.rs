//! BBRv3's states and model driven by scripted arrivals.

use core::time::Duration;

use super::*;
use crate::cc::{LossKind, RateSample};
use crate::node::ServedBy;

const UNIT: u16 = 1000;

fn bbr3(seed: u64) -> Bbr3 {
    Bbr3::new(Bbr3Config::default(), CcParams { unit: UNIT, max_aggregation: 64, seed })
}

/// A scripted path: the bottleneck delivers `bw` units/s with RTT `rtt`; each arrival's rate
/// sample covers one RTT of deliveries.
struct Script {
    now: Time,
    delivered: u64,
    lost: u64,
    /// C.lost after each arrival (index: C.delivered), for P.lost.
    lost_hist: Vec<u64>,
    bw: f64,
    rtt: Duration,
    /// The next arrival's unit was requested with this C.delivered (`None`: one RTT's
    /// deliveries before it arrives).
    prior: Option<u64>,
}

/// What one scripted arrival looks like besides the path.
#[derive(Clone, Copy)]
struct Arrival {
    inflight: u64,
    /// In flight when the arriving unit was requested.
    tx_in_flight: u64,
    /// Units this arrival declares lost.
    losses: u64,
    ca_state: CaState,
    rtt: Option<Duration>,
}

impl Script {
    fn new(bw: f64, rtt_ms: u64) -> Self {
        Script {
            now: Time::from_millis(1),
            delivered: 0,
            lost: 0,
            lost_hist: vec![0],
            bw,
            rtt: Duration::from_millis(rtt_ms),
            prior: None,
        }
    }

    fn bdp(&self) -> u64 {
        (self.bw * self.rtt.as_secs_f64()).round() as u64
    }

    fn arrive(&mut self, b: &mut Bbr3, a: Arrival) {
        self.now += Duration::from_secs_f64(1.0 / self.bw);
        self.delivered += 1;
        let window = self.bdp().max(1);
        let prior = self.prior.unwrap_or(self.delivered.saturating_sub(window));
        // Requested when `prior` units had been delivered: C.lost was then what it was after
        // that arrival.
        let lost_at_send = self.lost_hist[prior as usize];
        self.lost += a.losses;
        b.on_ack(&AckSample {
            now: self.now,
            unit: self.delivered,
            source: ServedBy::default(),
            cookie: cookie(a.tx_in_flight, lost_at_send, false),
            delivered: self.delivered,
            acked: 1,
            rate: RateSample {
                delivered: self.delivered - prior,
                interval: Some(self.rtt),
                prior_delivered: prior,
                is_app_limited: false,
            },
            rtt: a.rtt,
            srtt: Some(self.rtt),
            losses: a.losses,
            lost_total: self.lost,
            prior_inflight: a.inflight + 1,
            inflight: a.inflight,
            ca_state: a.ca_state,
        });
        self.lost_hist.push(self.lost);
    }

    /// A loss-free arrival with `inflight` outstanding (and as many when it was requested).
    fn ack(&mut self, b: &mut Bbr3, inflight: u64) {
        let rtt = Some(self.rtt);
        self.arrive(b, Arrival { inflight, tx_in_flight: inflight, losses: 0, ca_state: CaState::Open, rtt });
    }

    /// Arrivals for `d`, with in-flight chosen from the controller.
    fn run(&mut self, b: &mut Bbr3, d: Duration, inflight: impl Fn(&Bbr3) -> u64) {
        let end = self.now + d;
        while self.now < end {
            let i = inflight(b);
            self.ack(b, i);
        }
    }

    /// Arrivals until the controller is in `mode` (at most `limit` of time).
    fn run_until(&mut self, b: &mut Bbr3, mode: Mode, limit: Duration, inflight: impl Fn(&Bbr3) -> u64) {
        let end = self.now + limit;
        while b.mode() != mode {
            assert!(self.now < end, "not in {mode:?} after {limit:?}: {:?}", b.mode());
            let i = inflight(b);
            self.ack(b, i);
        }
    }
}

/// The flow in steady state on a 10k units/s, 20 ms path (BDP 200 units): past Startup and
/// Drain, cruising.
fn cruising(seed: u64) -> (Bbr3, Script) {
    cruising_with(Bbr3Config::default(), seed, 20)
}

/// `cfg` in steady state on a 10k units/s path of `rtt_ms`: Startup at 2 × BDP in flight
/// for 100 ms, then at the BDP until it cruises.
fn cruising_with(cfg: Bbr3Config, seed: u64, rtt_ms: u64) -> (Bbr3, Script) {
    let mut b = Bbr3::new(cfg, CcParams { unit: UNIT, max_aggregation: 64, seed });
    let mut s = Script::new(10_000.0, rtt_ms);
    let bdp = s.bdp();
    s.run(&mut b, Duration::from_millis(100), |_| 2 * bdp);
    assert!(b.full_bw_reached());
    s.run_until(&mut b, Mode::ProbeBwCruise, Duration::from_secs(1), |_| bdp);
    (b, s)
}

#[test]
fn starts_in_startup_with_gain_4_ln_2_and_window_gain_2() {
    let b = bbr3(0);
    assert_eq!(b.mode(), Mode::Startup);
    assert_eq!(b.name(), "bbr3");
    assert!((b.pacing_gain() - 2.7726).abs() < 1e-3);
    assert_eq!(b.cwnd_gain, 2.0);
    assert_eq!(b.cwnd(), 10);
    assert!(b.controls_recovery());
}

#[test]
fn startup_drain_and_cruise_on_a_flat_bandwidth() {
    let mut b = bbr3(1);
    let mut s = Script::new(10_000.0, 20);
    // Three rounds without 25 % growth: the pipe is full → Drain at gain 0.5.
    s.run(&mut b, Duration::from_millis(90), |_| 400);
    assert!(b.full_bw_reached());
    assert_eq!(b.mode(), Mode::Drain, "in-flight 400 > BDP keeps Drain");
    assert_eq!(b.pacing_gain(), 0.5);
    assert_eq!(b.inflight_hi(), None, "no loss: no upper bound");
    // In-flight at the BDP: ProbeBW_DOWN, and in the same arrival CRUISE (nothing to drain).
    s.ack(&mut b, 200);
    assert_eq!(b.mode(), Mode::ProbeBwCruise);
    assert_eq!(b.cycle.ack_phase, probe_bw::AckPhase::ProbeStopping, "the cycle began in DOWN");
    assert!((b.max_bw() - 10_000.0).abs() < 1.0);
    // The window converges to 2 × BDP (the send quantum's budget is smaller).
    s.run(&mut b, Duration::from_millis(200), |_| 200);
    assert_eq!(b.cwnd(), 400);
    assert_eq!(b.send_quantum(), 9, "eq. 8: 10k units/s × 0.99 × 1 ms");
}

#[test]
fn drain_ends_after_three_rounds_even_with_a_queue() {
    let mut b = bbr3(2);
    let mut s = Script::new(10_000.0, 20);
    s.run(&mut b, Duration::from_millis(90), |_| 400);
    assert_eq!(b.mode(), Mode::Drain);
    // In-flight never falls (another flow holds the queue): Drain ends after 3 rounds anyway.
    s.run_until(&mut b, Mode::ProbeBwDown, Duration::from_millis(100), |_| 400);
}

#[test]
fn startup_leaves_on_high_loss_with_inflight_hi() {
    let mut b = bbr3(3);
    let mut s = Script::new(10_000.0, 20);
    // Two rounds of growth, then fast recovery with a loss at every 20th arrival (5 % of
    // in-flight) while the bandwidth still grows: the plateau test cannot fire.
    s.run(&mut b, Duration::from_millis(40), |b| b.cwnd());
    b.on_congestion(&CongestionEvent { now: s.now, kind: LossKind::Fast, inflight: 300, first_in_window: true });
    let mut i = 0;
    while b.mode() == Mode::Startup {
        assert!(i < 2000, "still in Startup after {i} lossy arrivals");
        i += 1;
        let losses = u64::from(i % 20 == 0);
        s.arrive(
            &mut b,
            Arrival { inflight: 300, tx_in_flight: 300, losses, ca_state: CaState::Recovery, rtt: Some(s.rtt) },
        );
        s.bw *= 1.0012; // +27 % per 200-arrival round: no plateau
    }
    assert_eq!(b.mode(), Mode::Drain);
    assert!(b.full_bw_reached());
    let hi = b.inflight_hi().expect("inflight_hi set on leaving Startup");
    assert!(hi >= s.bdp() - 1, "inflight_hi {hi} ≥ BDP {}", s.bdp());
}

#[test]
fn cruise_refill_up_down_cycle() {
    let (mut b, mut s) = cruising(4);
    // CRUISE lasts 2–3 s (the Reno bound, min(BDP, 63) = 63 rounds of 20 ms, is 1.26 s).
    let start = s.now;
    s.run_until(&mut b, Mode::ProbeBwRefill, Duration::from_secs(4), |_| 200);
    let waited = s.now - start;
    assert!(waited > Duration::from_millis(1000) && waited < Duration::from_millis(1400), "{waited:?}");
    assert_eq!(b.pacing_gain(), 1.0);
    // One round of REFILL, then UP at 1.25 with window gain 2.25.
    s.run_until(&mut b, Mode::ProbeBwUp, Duration::from_millis(45), |_| 200);
    assert_eq!((b.pacing_gain(), b.cwnd_gain), (1.25, 2.25));
    // The bandwidth does not grow: after three rounds UP ends → DOWN at 0.9.
    s.run_until(&mut b, Mode::ProbeBwDown, Duration::from_millis(120), |_| 250);
    assert_eq!(b.pacing_gain(), 0.9);
    // Queue drained (in-flight ≤ BDP): CRUISE.
    s.ack(&mut b, 200);
    assert_eq!(b.mode(), Mode::ProbeBwCruise);
}

#[test]
fn up_ends_once_a_quarter_bdp_queue_built_after_a_min_rtt() {
    let (mut b, mut s) = cruising(11);
    s.run_until(&mut b, Mode::ProbeBwUp, Duration::from_secs(4), |_| 200);
    let up = s.now;
    // In-flight 1.3 × BDP, no loss, flat bandwidth: the estimated-queue exit (§5.3.3.4) ends
    // the probe a min RTT (20 ms) after it began — not at once, and not only after the
    // three-round plateau (60 ms) or a loss.
    s.run_until(&mut b, Mode::ProbeBwDown, Duration::from_millis(50), |_| 260);
    let took = s.now - up;
    assert!(took >= Duration::from_millis(20) && took < Duration::from_millis(22), "{took:?}");
    assert_eq!(b.inflight_hi(), None, "no loss: no upper bound");
    // At exactly 1.25 × BDP the probe goes on (the prose's `>`), until the plateau.
    let (mut b, mut s) = cruising(11);
    s.run_until(&mut b, Mode::ProbeBwUp, Duration::from_secs(4), |_| 200);
    s.run(&mut b, Duration::from_millis(30), |_| 250);
    assert_eq!(b.mode(), Mode::ProbeBwUp);
}

#[test]
fn loss_above_two_percent_in_up_sets_inflight_hi_and_goes_down() {
    let (mut b, mut s) = cruising(5);
    s.run_until(&mut b, Mode::ProbeBwUp, Duration::from_secs(4), |_| 200);
    s.run(&mut b, Duration::from_millis(25), |_| 240); // a round into the probe
    assert_eq!(b.mode(), Mode::ProbeBwUp);
    // One unit in ten is lost: once more than 2 % of what was in flight when the arriving
    // unit was requested (240) has been lost since, the probe stops.
    let mut i = 0;
    while b.mode() == Mode::ProbeBwUp {
        i += 1;
        assert!(i < 100, "still probing after {i} lossy arrivals");
        let losses = u64::from(i % 10 == 0);
        s.arrive(
            &mut b,
            Arrival { inflight: 240, tx_in_flight: 240, losses, ca_state: CaState::Recovery, rtt: Some(s.rtt) },
        );
    }
    assert_eq!(b.mode(), Mode::ProbeBwDown);
    assert!(i >= 50, "2 % of 240 is 4.8: the fifth loss ({i} arrivals) stops it");
    assert_eq!(b.inflight_hi(), Some(240), "max(tx_in_flight 240, 0.7 × BDP 200)");
    // In DOWN the window is capped by inflight_hi; in CRUISE 15 % below it.
    assert!(b.cwnd() <= 240);
    s.run_until(&mut b, Mode::ProbeBwCruise, Duration::from_millis(200), |_| 190);
    s.ack(&mut b, 190);
    s.ack(&mut b, 190);
    assert_eq!(b.cwnd(), 240 - 36, "inflight_hi − 15 % headroom");
}

#[test]
fn losses_in_cruise_cut_the_short_term_bounds_by_at_most_beta_per_round() {
    let (mut b, mut s) = cruising(6);
    // The path now delivers half as fast, and every round loses a unit: each round the
    // short-term model follows the latest round's delivery, but falls by at most 30 %.
    s.bw = 5_000.0;
    let mut bws = vec![b.bw()];
    for i in 1..=800 {
        let losses = u64::from(i % 50 == 0);
        s.arrive(&mut b, Arrival { inflight: 100, tx_in_flight: 100, losses, ca_state: CaState::Open, rtt: None });
        if b.bw() != *bws.last().unwrap() {
            bws.push(b.bw());
        }
    }
    assert!(bws.len() >= 3, "{bws:?}");
    for w in bws.windows(2) {
        assert!(w[1] >= BETA * w[0] - 1e-9, "fell by more than β in a round: {bws:?}");
    }
    assert!((b.bw() - 5_000.0).abs() < 1.0, "{bws:?}");
    let lo = b.inflight_lo().expect("inflight_lo set by lossy rounds");
    assert!(b.cwnd() <= lo, "cwnd {} ≤ inflight_lo {lo}", b.cwnd());
}

#[test]
fn probe_rtt_every_five_seconds_at_half_the_bdp() {
    let (mut b, mut s) = cruising(7);
    let entered = loop {
        s.ack(&mut b, 200);
        if b.mode() == Mode::ProbeRtt {
            break s.now;
        }
        assert!(s.now < Time::from_millis(7000), "no ProbeRTT within 5 s of the last lower RTT");
    };
    assert!(entered > Time::from_millis(5000));
    assert_eq!(b.cwnd(), 100, "½ BDP");
    assert!(b.wants_app_limited());
    // In-flight falls to ½ BDP; ≥ 200 ms and a round later, back to CRUISE with the window.
    s.run_until(&mut b, Mode::ProbeBwCruise, Duration::from_millis(400), |_| 100);
    assert!(s.now - entered >= Duration::from_millis(200));
    s.ack(&mut b, 150);
    assert!(b.cwnd() >= 340, "window restored: {}", b.cwnd());
    // The next one is 5 s later, not before.
    let left = s.now;
    s.run_until(&mut b, Mode::ProbeRtt, Duration::from_secs(6), |_| 200);
    assert!(s.now - left >= Duration::from_millis(4999), "{:?}", s.now - left);
}

#[test]
fn a_lower_rtt_postpones_probe_rtt() {
    let (mut b, mut s) = cruising(8);
    for ms in [19, 18, 17] {
        s.run(&mut b, Duration::from_secs(4), |_| 200);
        s.arrive(
            &mut b,
            Arrival {
                inflight: 200,
                tx_in_flight: 200,
                losses: 0,
                ca_state: CaState::Open,
                rtt: Some(Duration::from_millis(ms)),
            },
        );
        assert_ne!(b.mode(), Mode::ProbeRtt);
    }
    assert_eq!(b.min_rtt(), Some(Duration::from_millis(17)));
}

#[test]
fn fast_recovery_conserves_units_for_a_round_then_restores() {
    let (mut b, mut s) = cruising(12);
    let before = b.cwnd();
    assert!(before > 300, "{before}");
    b.on_congestion(&CongestionEvent { now: s.now, kind: LossKind::Fast, inflight: 190, first_in_window: true });
    assert_eq!(b.cwnd(), 191, "in-flight + the arriving unit");
    let rec =
        |inflight, losses| Arrival { inflight, tx_in_flight: 200, losses, ca_state: CaState::Recovery, rtt: None };
    // The arrival that found the loss takes it out; conservation keeps in-flight + 1 open.
    s.arrive(&mut b, rec(190, 1));
    assert_eq!(b.cwnd(), 191);
    // For the rest of the round (units requested before recovery), one out per one in: the
    // window follows in-flight instead of growing by every arrival.
    for _ in 0..150 {
        s.arrive(&mut b, rec(150, 0));
        assert_eq!(b.cwnd(), 191);
    }
    // A round later the window grows again …
    for _ in 0..100 {
        s.arrive(&mut b, rec(150, 0));
    }
    assert!(b.cwnd() > 191 && b.cwnd() < before, "{}", b.cwnd());
    // … and leaving recovery restores the window saved when it began, within the short-term
    // bound the lossy round set (§5.5.10.3: inflight_lo, cut by at most β).
    s.ack(&mut b, 150);
    let lo = b.inflight_lo().expect("the lossy round set inflight_lo");
    assert!(lo >= 191 && lo < before, "{lo}");
    assert_eq!(b.cwnd(), before.min(lo));
}

#[test]
fn timeout_cuts_window_to_inflight_plus_one_and_recovery_restores_it() {
    let (mut b, mut s) = cruising(9);
    let before = b.cwnd();
    b.on_congestion(&CongestionEvent { now: s.now, kind: LossKind::Timeout, inflight: 0, first_in_window: true });
    assert_eq!(b.cwnd(), 1);
    s.arrive(&mut b, Arrival { inflight: 0, tx_in_flight: 1, losses: 0, ca_state: CaState::Loss, rtt: None });
    assert!(b.cwnd() < 10, "grows by what arrived: {}", b.cwnd());
    s.ack(&mut b, 1);
    assert_eq!(b.cwnd(), before, "leaving recovery restores the window");
}

#[test]
fn cookie_carries_inflight_losses_and_app_limitation() {
    for (tx, lost, app) in [(0, 0, false), (12345, 678, true), (u64::from(u32::MAX), 0x7fff_ffff, false)] {
        assert_eq!(uncookie(cookie(tx, lost, app)), (tx, lost, app));
    }
    // C.lost wraps at 2³¹: RS.lost is still the difference.
    let mut b = bbr3(10);
    b.on_send(Time::from_millis(1), 5, 10, false);
    let c = b.on_request(&RequestInfo { now: Time::from_millis(1), units: &[1, 2, 3, 4, 5], retransmission: false });
    assert_eq!(uncookie(c), (15, 0, false));
}

/// Cruising with `cfg`, then `rounds` rounds (20 ms each) whose every RTT sample is `rtt_ms`
/// (the minimum stays 20 ms): did the queue signal cut the short-term bounds?
fn queue_cut_after(cfg: Bbr3Config, rtt_ms: u64, rounds: u64) -> bool {
    cut_per_round(cfg, &vec![rtt_ms; rounds as usize]).last() == Some(&true)
}

#[test]
fn a_standing_queue_counts_only_above_the_floor_and_after_enough_rounds() {
    let signal = Bbr3Config { queue_signal: 0.1, ..Bbr3Config::default() };
    // 3 ms above a 20 ms minimum is 15 %: a standing queue for `queue_signal` 0.1 alone …
    assert!(queue_cut_after(signal.clone(), 23, 3));
    // … but not a delay that matters with a 5 ms floor; 6 ms above is.
    let floored = Bbr3Config { queue_floor: 0.005, ..signal.clone() };
    assert!(!queue_cut_after(floored.clone(), 23, 6));
    assert!(queue_cut_after(floored, 26, 3));
    // With `queue_rounds` 4, rounds must keep the queue four times in a row.
    let patient = Bbr3Config { queue_rounds: 4, ..signal };
    assert!(!queue_cut_after(patient.clone(), 23, 2));
    assert!(queue_cut_after(patient, 23, 6));
}

#[test]
fn extra_acked_opens_the_window_by_what_bursts_bring() {
    // Cruising, then units arrive in bursts of 40 at the path's mean rate (an A-MPDU): with
    // `extra_acked` the window grows by about a burst, without it stays 2 × BDP.
    let window = |extra_acked: bool| {
        let (mut b, mut s) = cruising_with(Bbr3Config { extra_acked, ..Bbr3Config::default() }, 10, 20);
        let gap = Duration::from_secs_f64(1.0 / s.bw);
        for _ in 0..20 {
            let at = s.now + gap * 40;
            for _ in 0..40 {
                s.now = at.saturating_sub(gap); // `arrive` adds one gap: all 40 arrive at `at`
                s.ack(&mut b, 200);
            }
        }
        assert_eq!(b.mode(), Mode::ProbeBwCruise);
        b.cwnd()
    };
    let (plain, extra) = (window(false), window(true));
    assert_eq!(plain, 400, "2 × BDP");
    assert!((430..=450).contains(&extra), "2 × BDP + about a burst: {extra}");
}

#[test]
fn offload_sum_adds_three_send_quanta_to_the_window() {
    let (mut b, mut s) = cruising_with(Bbr3Config { offload_sum: true, ..Bbr3Config::default() }, 11, 20);
    s.run(&mut b, Duration::from_millis(100), |_| 200);
    // The draft's window here is 2 × BDP = 400 (three quanta, ≈ 30 units, are less).
    let quanta = 3 * u64::from(b.aggregation());
    assert!(quanta >= 27, "a quantum is 1 ms at the pacing rate: {quanta}");
    assert_eq!(b.cwnd(), 400 + quanta);
}

/// Cruising with `cfg` on the scripted 10k units/s, 20 ms path, then `rounds` rounds (20 ms
/// each) of arrivals in requests of `request` units: with `burst` > 0, `burst` units at twice
/// the path's rate every `burst` per-unit times (the path's mean rate: an A-MPDU when a burst
/// holds several requests, a paced wired path when it holds one), else one every 0.1 ms.
/// The first two rounds' RTT samples are the minimum, 20 ms; the rest `rtt_ms`.
fn after_arrivals(cfg: Bbr3Config, burst: u64, request: u64, rtt_ms: u64, rounds: u64) -> Bbr3 {
    let (mut b, mut s) = cruising_with(cfg, 12, 20);
    let gap = Duration::from_secs_f64(1.0 / s.bw);
    let (first, bdp) = (s.delivered + 1, s.bdp());
    let mut start = s.now + gap;
    for i in 0..rounds * 200 {
        let rtt = Duration::from_millis(if i < 400 { 20 } else { rtt_ms });
        if burst > 0 {
            // Unit k of a burst arrives k half-gaps after its start (`arrive` adds one gap).
            let k = (i % burst) as u32;
            if k == 0 && i > 0 {
                start += gap * burst as u32;
            }
            s.now = (start + gap / 2 * k).saturating_sub(gap);
        }
        s.prior = Some((first + i / request * request).saturating_sub(bdp));
        s.arrive(
            &mut b,
            Arrival { inflight: 200, tx_in_flight: 200, losses: 0, ca_state: CaState::Open, rtt: Some(rtt) },
        );
    }
    assert_eq!(b.mode(), Mode::ProbeBwCruise, "still cruising");
    b
}

#[test]
fn bursts_of_several_requests_are_aggregated_delivery_and_evenly_spaced_arrivals_are_not() {
    let on = Bbr3Config { burst_floor: true, burst_window: true, ..Bbr3Config::default() };
    // Bursts of 40 units, requests of 10 (a send quantum, 1 ms): four requests a burst.
    let b = after_arrivals(on.clone(), 40, 10, 20, 4);
    let period = b.aggregation_period().expect("bursts of four requests: aggregated");
    assert!((period - 0.004).abs() < 1e-4, "one burst every 4 ms: {period}");
    let plain = after_arrivals(Bbr3Config::default(), 40, 10, 20, 4).cwnd();
    let quanta = 3 * u64::from(b.aggregation());
    assert!(quanta >= 27, "a quantum is 1 ms at the pacing rate: {quanta}");
    assert_eq!(b.cwnd(), plain + quanta, "burst_window: 2 × BDP plus the offload budget");
    assert!((b.queue_floor() - 0.024).abs() < 1e-4, "burst_floor: six periods by default");
    // Evenly spaced at the path's rate, or one request a burst (a wired path paced below its
    // rate): not aggregated.
    for (burst, request) in [(0, 10), (10, 10), (20, 20)] {
        let b = after_arrivals(on.clone(), burst, request, 20, 4);
        assert_eq!(b.aggregation_period(), None, "bursts of {burst}, requests of {request}");
        let plain = after_arrivals(Bbr3Config::default(), burst, request, 20, 4).cwnd();
        assert_eq!(b.cwnd(), plain, "the draft's window: 2 × BDP");
        assert_eq!(b.queue_floor(), 0.0);
    }
}

#[test]
fn aggregation_lifts_the_queue_floor_only_with_burst_floor() {
    let signal = Bbr3Config { queue_signal: 0.1, queue_floor: QUEUE_FLOOR, ..Bbr3Config::default() };
    // 5 ms above a 20 ms minimum is above 10 % and 2 ms: a standing queue, bursts or not …
    assert!(after_arrivals(signal.clone(), 40, 10, 25, 6).inflight_lo().is_some());
    let floor = Bbr3Config { burst_floor: true, burst_periods: 2.0, ..signal };
    assert!(after_arrivals(floor.clone(), 10, 10, 25, 6).inflight_lo().is_some());
    // … but within two aggregation periods (8 ms) of bursts every 4 ms it is aggregation;
    // 9 ms above is a queue again.
    assert!(after_arrivals(floor.clone(), 40, 10, 25, 6).inflight_lo().is_none());
    assert!(after_arrivals(floor.clone(), 40, 10, 29, 6).inflight_lo().is_some());
    // burst_periods = 3: the floor is 12 ms, so 9 ms above is aggregation, 13 ms a queue.
    let three = Bbr3Config { burst_periods: 3.0, ..floor };
    assert!((after_arrivals(three.clone(), 40, 10, 20, 4).queue_floor() - 0.012).abs() < 1e-4);
    assert!(after_arrivals(three.clone(), 40, 10, 29, 6).inflight_lo().is_none());
    assert!(after_arrivals(three.clone(), 40, 10, 33, 6).inflight_lo().is_some());
    let spec: crate::cc::CcConfig = "bbr3:burst_floor=true,burst_periods=3".parse().unwrap();
    assert_eq!(spec.to_string(), "bbr3:burst_floor=true,burst_periods=3.0");
}

#[test]
fn burst_keys_off_leave_bbr3_unchanged() {
    // The keys default to off, the spec `bbr3` is the default config, and with them off the
    // detector keeps no state: bursts leave the window and the floor as the draft has them.
    let cfg: crate::cc::CcConfig = "bbr3".parse().unwrap();
    assert_eq!(cfg.to_string(), "bbr3");
    let off = Bbr3Config { queue_floor: QUEUE_FLOOR, ..Bbr3Config::default() };
    assert!(!off.burst_floor && !off.burst_window);
    let b = after_arrivals(off.clone(), 40, 10, 20, 4);
    assert_eq!(b.bursts, bursts::Bursts::default());
    assert_eq!(b.aggregation_period(), None);
    assert_eq!(b.cwnd(), after_arrivals(off, 0, 10, 20, 4).cwnd(), "as if evenly spaced");
    assert_eq!(b.queue_floor(), QUEUE_FLOOR);
}

/// Cruising with `cfg`, then one round (20 ms of arrivals) per entry of `rtts_ms`, each
/// round's every RTT sample that many ms (the minimum stays 20 ms): after each round, are
/// the short-term bounds cut?
fn cut_per_round(cfg: Bbr3Config, rtts_ms: &[u64]) -> Vec<bool> {
    let (mut b, mut s) = cruising_with(cfg, 13, 20);
    assert!(b.inflight_lo().is_none(), "not cut before the rounds");
    let mut cut = Vec::new();
    for &ms in rtts_ms {
        let rtt = Some(Duration::from_millis(ms));
        for _ in 0..200 {
            s.arrive(&mut b, Arrival { inflight: 200, tx_in_flight: 200, losses: 0, ca_state: CaState::Open, rtt });
        }
        assert_eq!(b.mode(), Mode::ProbeBwCruise, "still cruising");
        cut.push(b.inflight_lo().is_some());
    }
    cut
}

#[test]
fn a_queue_that_does_not_drain_under_the_cuts_is_not_this_flows() {
    let signal = Bbr3Config { queue_signal: 0.1, queue_patience: 4, ..Bbr3Config::default() };
    // A queue that stays 10 ms (a loss-based flow fills what this one leaves): cut rounds,
    // then after four in a row above half the largest the signal stands down and lifts the
    // cuts, and stays down while the queue stays.
    let held = cut_per_round(signal.clone(), &[30; 12]);
    assert!(held[0], "the first round with the queue cuts: {held:?}");
    let lifted = held.iter().position(|c| !c).expect("stood down");
    assert!((4..=6).contains(&lifted), "after about queue_patience rounds: {held:?}");
    assert!(held[lifted..].iter().all(|c| !c), "and stays down: {held:?}");
    // A round that sees the queue empty arms it again: the next queue is cut.
    let mut rearmed = vec![30; 8];
    rearmed.extend([20, 30]);
    assert!(cut_per_round(signal.clone(), &rearmed)[9], "re-armed");
    // A queue that drains under the cuts (halving within a few rounds, as four flows that
    // all cut do) is cut every round: the signal does not stand down.
    let draining: Vec<u64> = [30, 29, 27, 25, 24, 30, 29, 27, 25, 24, 30, 28].to_vec();
    assert!(cut_per_round(signal.clone(), &draining).iter().all(|&c| c), "draining queue");
    // queue_patience 0: never stands down.
    let never = Bbr3Config { queue_patience: 0, ..signal };
    assert!(cut_per_round(never, &[30; 12]).iter().all(|&c| c));
}

#[test]
fn quiet_floor_learns_random_loss_on_a_short_jittery_path() {
    // A 4 ms path (10k units/s, BDP 40 units) whose RTT samples jitter up to 1.5 ms above
    // the minimum (a WiFi hop's aggregation: 38 % above, so never within QUIET_RTT's
    // 12.5 %, but within the 2 ms floor), losing one unit in ten at random. Without
    // `quiet_floor` no round is quiet and the base stays 0; with it the base is learned.
    let base = |quiet_floor: bool| {
        let (mut b, mut s) = cruising_with(Bbr3Config { quiet_floor, ..Bbr3Config::rdtp() }, 14, 4);
        for i in 0..4_000u64 {
            let rtt = Some(Duration::from_micros(4_000 + (i % 4) * 500));
            let losses = u64::from(i % 10 == 0);
            s.arrive(&mut b, Arrival { inflight: 40, tx_in_flight: 40, losses, ca_state: CaState::Open, rtt });
        }
        b.random_loss.base
    };
    assert_eq!(base(false), 0.0, "no round within 12.5 % of the minimum");
    let learned = base(true);
    assert!((0.05..=0.2).contains(&learned), "about one in ten: {learned}");
}
