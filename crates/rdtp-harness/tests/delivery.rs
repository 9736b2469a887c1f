//! Every controller delivers byte-exact content under loss, reordering and duplication.

use core::time::Duration;

use rdtp_harness::{FlowSpec, PathConfig, Sim};
use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::server::PatternCatalog;

const SIZE: u64 = 3_000_000;

fn profiles() -> Vec<(&'static str, PathConfig)> {
    let base = PathConfig::new(20e6, Duration::from_millis(10));
    vec![
        ("clean", base.clone()),
        ("2% data loss + 2% request loss", PathConfig { data_loss: 0.02, request_loss: 0.02, seed: 2, ..base.clone() }),
        ("10% loss", PathConfig { data_loss: 0.10, request_loss: 0.10, seed: 3, ..base.clone() }),
        (
            "10% reordered by 5 ms",
            PathConfig { reorder: 0.10, reorder_delay: Duration::from_millis(5), seed: 4, ..base.clone() },
        ),
        ("5% duplicated", PathConfig { duplicate: 0.05, seed: 5, ..base.clone() }),
        (
            "all of it, tiny buffer",
            PathConfig {
                data_loss: 0.01,
                request_loss: 0.01,
                reorder: 0.05,
                reorder_delay: Duration::from_millis(4),
                duplicate: 0.02,
                seed: 6,
                ..base.clone().with_queue_bdp(0.2)
            },
        ),
    ]
}

#[test]
fn every_controller_is_byte_exact_under_impairments() {
    let catalog = PatternCatalog::new([("obj".to_string(), SIZE, 77)]);
    for (label, path) in profiles() {
        for cc in CcConfig::NAMES {
            let cfg = ReceiverConfig { cc: CcConfig::from_name(cc).unwrap(), seed: 9, ..ReceiverConfig::default() };
            let mut sim = Sim::new(path.clone(), catalog.clone(), Duration::from_millis(100));
            let id = sim.add_flow(FlowSpec::new("obj", cfg));
            sim.run(Duration::from_secs(600));
            let f = &sim.flows[id];
            assert!(f.error.is_none(), "{cc} / {label}: failed: {:?}", f.error);
            assert!(f.finished_at.is_some(), "{cc} / {label}: not finished after 600 s, read {} bytes", f.read_bytes);
            assert!(f.is_byte_exact(), "{cc} / {label}: mismatch at {:?}, read {}", f.mismatch_at, f.read_bytes);
            let s = f.stats().unwrap();
            if path.data_loss > 0.0 {
                assert!(s.units_rerequested > 0, "{cc} / {label}: losses but no re-requests");
            }
            if path.duplicate > 0.0 {
                assert!(s.duplicates > 0, "{cc} / {label}: duplicates not seen");
            }
        }
    }
}

#[test]
fn many_flows_share_a_server_byte_exact() {
    let catalog = PatternCatalog::new([("a".to_string(), 2_000_000, 1), ("b".to_string(), 1_500_000, 2)]);
    let path = PathConfig { data_loss: 0.01, ..PathConfig::new(50e6, Duration::from_millis(20)) };
    let mut sim = Sim::new(path, catalog, Duration::from_millis(100));
    for (i, cc) in CcConfig::NAMES.iter().cycle().take(8).enumerate() {
        let cfg = ReceiverConfig { cc: CcConfig::from_name(cc).unwrap(), seed: i as u64, ..ReceiverConfig::default() };
        let mut spec = FlowSpec::new(if i % 2 == 0 { "a" } else { "b" }, cfg);
        spec.start = Duration::from_millis(100 * i as u64);
        sim.add_flow(spec);
    }
    sim.run(Duration::from_secs(300));
    for (i, f) in sim.flows.iter().enumerate() {
        assert!(f.is_byte_exact(), "flow {i}: {:?} {:?}", f.error, f.mismatch_at);
    }
}
