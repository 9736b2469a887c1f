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

/// Seed 003's `cctcp`, `cctcp-single` and `icp` are their own loss detectors too: one timer
/// per unit and no fast re-request (S3 §I: out of order is no sign of loss in an ICN), so
/// every queue drop is found by its unit's timer and counted as a timeout. For them the
/// cascade this test is about would show as more timeouts than drops.
const SEED003_OWN_TIMERS: [&str; 3] = ["cctcp", "cctcp-single", "icp"];

#[test]
fn no_timeout_cascade_at_10mbps_100ms_1bdp() {
    let path = PathConfig::new(10e6, Duration::from_millis(100)).with_queue_bdp(1.0);
    // BBR-CD and ndnget's CUBIC bring their own loss detectors (S1 §III: a unit is lost at
    // T + RTprop + α·δ; ndnget: a unit is lost when its own RTO expires), each expiry counted
    // as a timeout — not the shared RFC 6298 timer this case is about.
    for &cc in CcConfig::NAMES.iter().filter(|&&n| n != "bbr-cd" && n != "cubic") {
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
        if SEED003_OWN_TIMERS.contains(&cc) {
            // Every expiry is a drop found by its unit's timer: none is spurious.
            assert!(r.timeouts <= r.queue_drops, "{cc}: {} timeouts, {} drops", r.timeouts, r.queue_drops);
        } else {
            assert!(r.timeouts <= 2, "{cc}: {} timeouts", r.timeouts);
        }
        assert!(rerequested <= 0.02, "{cc}: {:.2} % of units re-requested", rerequested * 100.0);
    }
}
