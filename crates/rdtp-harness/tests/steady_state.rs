//! Seed 000 §5.2 target in the harness: BBR on a 100 Mbit/s, 20 ms RTT path reaches
//! ≥ 90 % utilisation in steady state with queueing delay ≤ 50 % of the RTT.

use core::time::Duration;

use rdtp_harness::{PathConfig, single_flow};
use rdtp_proto::cc::CcConfig;

fn check(cc: &str) {
    let path = PathConfig::new(100e6, Duration::from_millis(20)); // 1-BDP drop-tail buffer
    let r = single_flow(path, CcConfig::from_name(cc).unwrap(), Duration::from_secs(25), Duration::from_secs(5), 1);
    eprintln!("{cc}: {r:?}");
    assert!(r.byte_exact);
    assert!(r.utilisation >= 0.90, "{cc}: utilisation {:.3}", r.utilisation);
    assert!(r.mean_queue_delay <= Duration::from_millis(10), "{cc}: mean queueing delay {:?}", r.mean_queue_delay);
    // RTT samples agree with the path: mean RTT = RTprop + queueing (within a millisecond).
    let implied = r.rtprop + r.mean_queue_delay;
    let diff = r.mean_rtt.abs_diff(implied);
    assert!(
        diff < Duration::from_millis(2),
        "{cc}: mean RTT {:?} vs RTprop {:?} + queue {:?}",
        r.mean_rtt,
        r.rtprop,
        r.mean_queue_delay
    );
    // Steady state loses (almost) nothing.
    assert!(r.timeouts == 0, "{cc}: {} timeouts", r.timeouts);
}

#[test]
fn bbr_fills_100mbps_20ms_with_short_queue() {
    check("bbr");
}

#[test]
fn bbr_wifi_behaves_as_bbr_on_a_wired_path() {
    check("bbr-wifi");
}

#[test]
fn runs_are_deterministic() {
    let path = PathConfig { data_loss: 0.005, ..PathConfig::new(50e6, Duration::from_millis(10)) };
    let a = single_flow(
        path.clone(),
        CcConfig::from_name("bbr").unwrap(),
        Duration::from_secs(5),
        Duration::from_secs(1),
        3,
    );
    let b = single_flow(path, CcConfig::from_name("bbr").unwrap(), Duration::from_secs(5), Duration::from_secs(1), 3);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}
