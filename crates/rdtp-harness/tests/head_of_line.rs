//! BBR-CD asks for every new unit before it re-requests a lost one (S1 §IV-D). On an object
//! longer than the run (the controller table's endless transfer), a unit lost early is
//! re-requested only when no new unit may be asked for: the receive window (64 MiB by
//! default) bounds the wait. Until then every later unit arrives but none can be read in
//! order, so the table's goodput (bytes read in order) is 0 with a full bottleneck. That is
//! the controller's real behaviour, not a miscount: these tests pin it and its bound.

use core::time::Duration;

use rdtp_harness::{FlowSpec, PathConfig, Sim, single_flow};
use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::server::PatternCatalog;

/// 10 Mbit/s, 20 ms, a 1-BDP drop-tail buffer (BBR-CD's Startup overflows it): 10 s of
/// an object 20 % longer than the path carries in that time.
fn run(cc: &str, recv_window: u64) -> (u64, rdtp_proto::receiver::Stats, bool) {
    let path = PathConfig::new(10e6, Duration::from_millis(20));
    let cfg = ReceiverConfig { cc: cc.parse().unwrap(), seed: 1, recv_window, ..ReceiverConfig::default() };
    let size = (10e6 / 8.0 * 10.0 * 1.2) as u64;
    let mut sim = Sim::new(path, PatternCatalog::new([("object".to_string(), size, 1)]), Duration::from_millis(10));
    let id = sim.add_flow(FlowSpec::new("object", cfg));
    sim.run(Duration::from_secs(10));
    let f = &sim.flows[id];
    let exact = f.mismatch_at.is_none() && f.error.is_none();
    (f.read_bytes, f.stats().unwrap_or_default(), exact)
}

#[test]
fn the_controller_table_reports_bbr_cd_holding_lost_units_back() {
    let path = PathConfig::new(10e6, Duration::from_millis(20));
    let r =
        single_flow(path, CcConfig::from_name("bbr-cd").unwrap(), Duration::from_secs(10), Duration::from_secs(5), 1);
    assert!(r.new_units_first && r.byte_exact, "{r:?}");
    // The bottleneck is busy and the units arrive ...
    assert!(r.utilisation > 0.9, "{r:?}");
    assert!(r.units_lost > 0 && r.units_rerequested == 0, "{r:?}");
    // ... but the first lost unit holds back everything after it.
    assert!(r.bytes_received > 10 * r.bytes_read, "{r:?}");
    assert_eq!(r.goodput_bps, 0.0, "{r:?}");
}

#[test]
fn a_full_receive_window_or_new_first_off_releases_the_lost_units() {
    let (read, s, exact) = run("bbr-cd", 64 << 20);
    assert!(exact && s.units_lost > 0 && s.units_rerequested == 0, "{s:?}");
    assert!(s.bytes_received > 10 * read, "read {read} of {}", s.bytes_received);
    // A 1 MiB receive window fills within a second: lost units go out again and the
    // application reads nearly all that arrived.
    for (cc, window) in [("bbr-cd", 1 << 20), ("bbr-cd:new_first=false", 64 << 20)] {
        let (read, s, exact) = run(cc, window);
        assert!(exact, "{cc}");
        assert!(s.units_rerequested > 0, "{cc}: {s:?}");
        assert!(read * 10 > s.bytes_received * 9, "{cc}: read {read} of {}", s.bytes_received);
    }
}
