//! Issue 15's case: 10 Mbit/s, 100 ms, a 1-BDP drop-tail buffer. Startup overshoots the buffer
//! and the receiver repairs the losses by fast re-request. The RTO (≥ 200 ms, RFC 6298) then
//! sits at the SRTT of a full queue (≈ 200 ms, RTTVAR ≈ 0), and the timer, restarted only by
//! in-order arrivals, used to expire while the re-request of the earliest lost unit was still
//! on its way: a spurious timeout every two rounds, each one resetting BBR's full-pipe
//! detection (Linux `bbr_set_state(TCP_CA_Loss)`), which kept `bbr` in Startup for 25 s with
//! 56 timeouts and 13 % of all units re-requested. Now the re-request of the earliest unit
//! restarts the timer (Linux `tcp_xmit_retransmit_queue`).

use core::time::Duration;

use rdtp_harness::{PathConfig, single_flow};
use rdtp_proto::cc::CcConfig;
use rdtp_proto::cc::registry::CONTROLLERS;
use rdtp_proto::recovery::StandardLoss;

#[test]
fn no_timeout_cascade_at_10mbps_100ms_1bdp() {
    let path = PathConfig::new(10e6, Duration::from_millis(100)).with_queue_bdp(1.0);
    // Controllers built with a detector of their own kind (BBR-CD's, S1 §III: a unit is lost
    // at T + RTprop + α·δ; ndnget's CUBIC: a unit is lost when its own RTO expires) count
    // each expiry as a timeout — not the shared RFC 6298 timer this case is about.
    let entries = CONTROLLERS.iter().filter(|e| e.owns_loss_detection() || e.loss_detector() == StandardLoss::NAME);
    for e in entries {
        let cc = e.name;
        let r = single_flow(
            path.clone(),
            CcConfig::from_name(cc).unwrap(),
            Duration::from_secs(30),
            Duration::from_secs(5),
            1,
        );
        let rerequested = r.units_rerequested as f64 / r.units_requested as f64;
        eprintln!("{cc}: {r:?}");
        assert!(r.byte_exact, "{cc}");
        // Controllers that are their own loss detectors (Saino, Cocora and Pavlou's `cctcp`,
        // `cctcp-single`, and `icp`) have one timer per unit and no fast re-request (S3 §I:
        // out of order is no sign of loss in an ICN), so every queue drop is found by its
        // unit's timer and counted as a timeout. For them the cascade this test is about
        // would show as more timeouts than drops.
        if e.owns_loss_detection() {
            // Every expiry is a drop found by its unit's timer: none is spurious.
            assert!(r.timeouts <= r.queue_drops, "{cc}: {} timeouts, {} drops", r.timeouts, r.queue_drops);
        } else {
            assert!(r.timeouts <= 2, "{cc}: {} timeouts", r.timeouts);
        }
        assert!(rerequested <= 0.02, "{cc}: {:.2} % of units re-requested", rerequested * 100.0);
    }
}
