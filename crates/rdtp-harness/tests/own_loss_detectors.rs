//! Controllers with loss detectors of their own, on paths of issue 15's grid where those
//! detectors declared units lost that the queue had not dropped.
//!
//! ndnget's per-unit retransmission timers (`cubic`, `aimd:rto_only=true`;
//! `rdtp_proto::recovery::NdngetTimers`) on the grid's 10 Mbit/s / 100 ms / 2-BDP path, where
//! the RTT climbs from 100 to over 300 ms as CUBIC fills the buffer. Slow start overshoots it
//! (and its RTT doubles faster than any RTO follows: spurious expiries there are ndnget's
//! too). Past it, in congestion avoidance, a unit's timer may fire only if the queue dropped
//! it. The timers used the receiver's RFC 6298 estimator, whose per-sample gains let RTTVAR
//! shrink to nothing while the queue grew a few ms per round trip: with the RTO above its
//! 200 ms floor at ≈ SRTT, a burst of spurious expiries every ≈ 10 s (cubic: 598 units
//! declared lost between 5 and 25 s with no drop at all). ndnget divides the gains by the
//! samples expected in a round trip; so do the timers now.

use core::time::Duration;

use rdtp_harness::{FlowSpec, PathConfig, Sim};
use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::server::PatternCatalog;

#[test]
fn ndnget_timers_fire_only_for_dropped_units_after_slow_start() {
    let path = PathConfig::new(10e6, Duration::from_millis(100)).with_queue_bdp(2.0);
    for (cc, k) in [("cubic", 4), ("cubic", 8), ("aimd:rto_only=true", 4)] {
        let mut cfg = ReceiverConfig { cc: cc.parse().unwrap(), seed: 1, ..ReceiverConfig::default() };
        cfg.rto.k = k;
        let catalog = PatternCatalog::new([("object".to_string(), 40_000_000, 1)]);
        let mut sim = Sim::new(path.clone(), catalog, Duration::from_millis(10));
        let id = sim.add_flow(FlowSpec::new("object", cfg));
        let at = |sim: &Sim<PatternCatalog>| (sim.flows[id].stats().unwrap().units_lost, sim.bottleneck().queue_drops);
        sim.run(Duration::from_secs(5));
        let (lost5, drops5) = at(&sim);
        sim.run(Duration::from_secs(30));
        let (lost, drops) = at(&sim);
        eprintln!("{cc} k={k}: lost {lost5} → {lost}, queue drops {drops5} → {drops}");
        assert!(sim.flows[id].mismatch_at.is_none() && sim.flows[id].error.is_none(), "{cc}");
        assert!(
            lost - lost5 <= drops - drops5,
            "{cc}, K = {k}: {} units declared lost after 5 s, {} dropped",
            lost - lost5,
            drops - drops5
        );
    }
}

/// BBR-CD's Loss Detector (S1 §III-B) declares a unit lost at `T + RTprop + α·δ` after its
/// request left at `T`. At 100 Mbit/s a request carries 8 units (1 ms of the pacing rate,
/// seed 000 eq. 8), and the threshold was computed from the receiver's one RTT sample per
/// request, its first unit: δ missed the spread inside a burst and its later units passed
/// the threshold on their way (47 902 units declared lost for 11 594 queue drops in 30 s).
/// Now every unit is a sample; a unit is declared lost only if the queue dropped it.
#[test]
fn bbr_cd_declares_lost_only_what_the_queue_dropped_with_aggregated_requests() {
    let path = PathConfig::new(100e6, Duration::from_millis(5)).with_queue_bdp(1.0);
    let cfg = ReceiverConfig { cc: "bbr-cd".parse().unwrap(), seed: 1, ..ReceiverConfig::default() };
    let catalog = PatternCatalog::new([("object".to_string(), 200_000_000, 1)]);
    let mut sim = Sim::new(path, catalog, Duration::from_millis(10));
    let id = sim.add_flow(FlowSpec::new("object", cfg));
    sim.run(Duration::from_secs(10));
    let (lost, drops) = (sim.flows[id].stats().unwrap().units_lost, sim.bottleneck().queue_drops);
    eprintln!("bbr-cd: {lost} units declared lost, {drops} queue drops");
    assert!(sim.flows[id].mismatch_at.is_none() && sim.flows[id].error.is_none());
    assert!(drops > 1000, "the buffer overflows: {drops} drops");
    assert!(lost <= drops, "{lost} units declared lost, {drops} dropped");
}
