//! Fetches through caching routers: byte-exact under impairments for every controller,
//! repeat fetches served from the first router's store, and coalescing of simultaneous
//! fetches of one object.

use core::time::Duration;

use rdtp_harness::{FlowSpec, LinkConfig, Net, NodeIx};
use rdtp_proto::NodeId;
use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::router::RouterConfig;
use rdtp_proto::router::cs::{Admission, CsConfig};
use rdtp_proto::router::fib::Fib;
use rdtp_proto::server::{PatternCatalog, ServerConfig};

const SIZE: u64 = 1_500_000;

fn catalog() -> PatternCatalog {
    PatternCatalog::new([("obj".to_string(), SIZE, 42)])
}

/// receivers — r1 — r2 — origin; `mid` is the r1 — r2 link (both ways), where the
/// impairments are. Returns (net, r1, r2, origin).
fn chain(seed: u64, mid: LinkConfig, cs: CsConfig) -> (Net, NodeIx, NodeIx, NodeIx) {
    let mut net = Net::new(seed, Duration::from_millis(100));
    let origin = net.add_server("origin", ServerConfig::default(), catalog());
    let router = |net: &Net, id: &str, up: NodeIx| RouterConfig {
        id: NodeId::label(id).unwrap(),
        fib: Fib::new(Some(net.addr(up))),
        cs: cs.clone(),
        seed,
        ..RouterConfig::default()
    };
    let cfg2 = router(&net, "r2", origin);
    let r2 = net.add_router("r2", cfg2);
    let cfg1 = router(&net, "r1", r2);
    let r1 = net.add_router("r1", cfg1);
    net.link_both(r2, origin, LinkConfig::new(50e6, Duration::from_millis(4)));
    net.link_both(r1, r2, mid);
    (net, r1, r2, origin)
}

fn add_receiver(net: &mut Net, first_hop: NodeIx, spec: FlowSpec) -> usize {
    let f = net.add_flow(spec, first_hop);
    let node = net.flows[f].node;
    net.link_both(node, first_hop, LinkConfig::new(100e6, Duration::from_millis(1)));
    f
}

fn receiver(cc: &str, seed: u64) -> ReceiverConfig {
    ReceiverConfig { cc: CcConfig::from_name(cc).unwrap(), seed, ..ReceiverConfig::default() }
}

fn impaired(loss: f64, reorder: f64, duplicate: f64) -> LinkConfig {
    LinkConfig {
        loss,
        reorder,
        reorder_delay: Duration::from_millis(3),
        duplicate,
        ..LinkConfig::new(20e6, Duration::from_millis(5))
    }
}

#[test]
fn every_controller_is_byte_exact_through_two_routers_under_impairments() {
    let profiles = [
        ("2% loss both ways", impaired(0.02, 0.0, 0.0)),
        ("10% reordered by 3 ms", impaired(0.0, 0.10, 0.0)),
        ("5% duplicated", impaired(0.0, 0.0, 0.05)),
        ("all of it", impaired(0.01, 0.05, 0.02)),
    ];
    for (p, (label, mid)) in profiles.into_iter().enumerate() {
        for (i, cc) in CcConfig::NAMES.iter().enumerate() {
            let seed = (p * 10 + i) as u64;
            let (mut net, r1, _, origin) = chain(seed, mid.clone(), CsConfig::default());
            let f = add_receiver(&mut net, r1, FlowSpec::new("obj", receiver(cc, seed)));
            net.run(Duration::from_secs(300));
            let flow = &net.flows[f];
            assert!(flow.is_byte_exact(), "{cc} / {label}: {:?} mismatch {:?}", flow.error, flow.mismatch_at);
            let s = flow.stats().unwrap();
            // Everything comes from the origin (two routers away), except re-requests for
            // units lost between r2 and r1, which r2 answers from its store (one hop away).
            for src in s.sources.iter() {
                let (id, cached, hops) = (src.node.to_string(), src.cached, src.hops);
                assert!(
                    (id == "origin" && !cached && hops == 2) || (id == "r2" && cached && hops == 1),
                    "{cc} / {label}: unexpected source {src:?}"
                );
            }
            let from_r2 = s.sources.iter().find(|x| x.cached).map_or(0, |x| x.units);
            if mid.loss > 0.0 {
                assert!(s.units_rerequested > 0, "{cc} / {label}: losses but no re-requests");
                assert!(from_r2 > 0, "{cc} / {label}: no loss repaired from r2's store");
            }
            // Only re-requested units can come from r2.
            assert!(from_r2 <= s.units_rerequested, "{cc} / {label}: {from_r2} units from r2");
            if mid.duplicate > 0.0 {
                let unsolicited = net.router(r1).stats().unsolicited;
                assert!(unsolicited > 0, "{cc} / {label}: duplicated Data should reach r1 twice");
            }
            assert!(net.server(origin).stats().data_packets > 0);
        }
    }
}

#[test]
fn a_second_fetch_is_served_from_the_first_routers_store() {
    let (mut net, r1, r2, origin) = chain(3, impaired(0.01, 0.0, 0.0), CsConfig::default());
    let first = add_receiver(&mut net, r1, FlowSpec::new("obj", receiver("bbr", 1)));
    let mut later = FlowSpec::new("obj", receiver("bbr", 2));
    later.start = Duration::from_secs(30);
    let second = add_receiver(&mut net, r1, later);
    net.run(Duration::from_secs(29));
    assert!(net.flows[first].is_byte_exact());
    let (served, hits) = (net.server(origin).stats().data_packets, net.router(r1).stats().cs_hits);
    let r2_requests = net.router(r2).stats().requests;
    net.run(Duration::from_secs(120));
    assert!(net.flows[second].is_byte_exact());
    let s = net.flows[second].stats().unwrap();
    assert_eq!(s.sources.summary(), "router r1 100.0 %");
    let src = s.sources.iter().next().unwrap();
    let units = SIZE.div_ceil(1402);
    assert_eq!((src.cached, src.hops, src.units), (true, 0, units));
    // The second fetch cost the origin nothing, and r2 saw none of it.
    assert_eq!(net.server(origin).stats().data_packets, served);
    // Every unit was a hit at r1 — re-requests too (hits come in bursts that can overflow
    // the access link's buffer, and are repaired from r1 again).
    assert_eq!(net.router(r1).stats().cs_hits - hits, units + s.units_rerequested);
    assert_eq!(net.router(r2).stats().requests, r2_requests);
    // Served from one hop away, its RTT is far below the first fetch's.
    let rtt = |f: usize| net.flows[f].stats().unwrap().rtt_min.unwrap();
    assert!(rtt(second) * 4 < rtt(first), "{:?} vs {:?}", rtt(second), rtt(first));
}

/// Ten receivers behind r1 fetch the same object at once over a 20 Mbit/s bottleneck: the
/// origin sends each unit about once, and the Data fans out at r1. With the content store
/// off, coalescing alone must do it.
#[test]
fn ten_simultaneous_fetches_of_one_object_are_coalesced() {
    for cs in [CsConfig::default(), CsConfig { admission: Admission::Never, ..CsConfig::default() }] {
        let (mut net, r1, _, origin) = chain(7, LinkConfig::new(20e6, Duration::from_millis(5)), cs.clone());
        let flows: Vec<usize> =
            (0..10).map(|i| add_receiver(&mut net, r1, FlowSpec::new("obj", receiver("bbr", 100 + i)))).collect();
        net.run(Duration::from_secs(300));
        for &f in &flows {
            assert!(net.flows[f].is_byte_exact(), "{:?}: flow {f}: {:?}", cs.admission, net.flows[f].error);
        }
        let units = SIZE.div_ceil(1402);
        let sent = net.server(origin).stats().data_packets;
        let delivered: u64 = flows.iter().map(|&f| net.flows[f].stats().unwrap().units_received).sum();
        let factor = delivered as f64 / sent as f64;
        eprintln!(
            "{:?}: origin sent {sent} Data for {units} units; receivers got {delivered}; coalescing factor {factor:.2}; r1 {:?}",
            cs.admission,
            net.router(r1).stats()
        );
        assert!(sent < units * 3 / 2, "{:?}: origin sent {sent} Data for {units} units", cs.admission);
        assert!(factor > 6.5, "{:?}: coalescing factor {factor:.2}", cs.admission);
        assert!(net.router(r1).stats().coalesced > 0);
    }
}

/// An on-path attacker between r2 and r1 changes a byte of some datagrams. The receiver
/// drops each bad block and fetches it again (from the origin), so the fetch is byte-exact;
/// r1 verifies every block before caching it, so a second receiver served from r1's store
/// gets no bad block at all (issue 11: "a router never caches an unverified block").
#[test]
fn corrupted_blocks_are_refetched_and_never_cached() {
    let mid = LinkConfig { corrupt: 0.002, ..LinkConfig::new(20e6, Duration::from_millis(5)) };
    let (mut net, r1, _r2, origin) = chain(11, mid, CsConfig::default());
    let first = add_receiver(&mut net, r1, FlowSpec::new("obj", receiver("bbr", 1)));
    let mut later = FlowSpec::new("obj", receiver("bbr", 2));
    later.start = Duration::from_secs(30);
    let second = add_receiver(&mut net, r1, later);
    net.run(Duration::from_secs(29));
    assert!(net.flows[first].is_byte_exact());
    let s1 = net.flows[first].stats().unwrap();
    let corrupted: u64 = net.links.iter().map(|l| l.stats.corrupted).sum();
    assert!(corrupted > 0);
    assert!(s1.bad_blocks > 0, "the attacker hit some Data payload ({corrupted} datagrams changed)");
    let r = net.router(r1).stats();
    assert!(r.blocks_failed > 0 && r.blocks_verified > 0, "{r:?}");
    net.run(Duration::from_secs(120));
    assert!(net.flows[second].is_byte_exact());
    let s2 = net.flows[second].stats().unwrap();
    assert_eq!(s2.bad_blocks, 0, "nothing unverified was cached at r1");
    assert!(net.router(r1).stats().cs_hits > 0);
    assert!(net.server(origin).stats().data_packets > 0);
}

/// Issue 23 item 11 (`experiments/smoke-routers.toml`): two receivers fetch one object, the
/// second 5 ms after the first (a quarter of the 20 ms round trip), so its requests join the
/// first's pending entries at r1 and their Data reach it sooner than a round trip. With
/// those arrivals taken as RTT samples its BBR's min RTT fell to a fraction of the path's,
/// its window to 4 units, and once its requests were no longer behind the first's the fetch
/// crawled: 8.6 s of virtual time for a 5 MB object that takes 1 s alone. Now r1 marks such
/// copies `COALESCED`; neither fetch may take twice as long as a lone fetch (what two
/// fetches sharing the bottleneck without sharing any Data would take), stores on or off.
#[test]
fn a_fetch_whose_requests_join_anothers_does_not_crawl() {
    let size = 5_000_000;
    let cat = || PatternCatalog::new([("big".to_string(), size, 42)]);
    let off = CsConfig { admission: Admission::Never, ..CsConfig::default() };
    for cs in [off, CsConfig::default()] {
        let run = |starts: &[u64]| -> Vec<Duration> {
            let mut net = Net::new(5, Duration::from_millis(100));
            let origin = net.add_server("origin", ServerConfig::default(), cat());
            let cfg = |net: &Net, id: &str, up: NodeIx| RouterConfig {
                id: NodeId::label(id).unwrap(),
                fib: Fib::new(Some(net.addr(up))),
                cs: cs.clone(),
                ..RouterConfig::default()
            };
            let c2 = cfg(&net, "r2", origin);
            let r2 = net.add_router("r2", c2);
            let c1 = cfg(&net, "r1", r2);
            let r1 = net.add_router("r1", c1);
            net.link_both(r2, origin, LinkConfig::wire(Duration::from_micros(10)));
            net.link_both(r1, r2, LinkConfig::new(50e6, Duration::from_millis(10)));
            let flows: Vec<usize> = starts
                .iter()
                .enumerate()
                .map(|(i, &ms)| {
                    let mut spec = FlowSpec::new("big", receiver("bbr", 1 + i as u64));
                    spec.start = Duration::from_millis(ms);
                    let f = net.add_flow(spec, r1);
                    let node = net.flows[f].node;
                    net.link_both(node, r1, LinkConfig::wire(Duration::from_micros(10)));
                    f
                })
                .collect();
            net.run(Duration::from_secs(30));
            flows
                .iter()
                .map(|&f| {
                    assert!(net.flows[f].is_byte_exact(), "{:?}: flow {f}: {:?}", cs.admission, net.flows[f].error);
                    net.flows[f].completion_time().unwrap()
                })
                .collect()
        };
        let alone = run(&[0])[0];
        let pair = run(&[0, 5]);
        eprintln!("{:?}: alone {alone:?}, together {pair:?}", cs.admission);
        for t in pair {
            assert!(t < alone * 2, "{:?}: {t:?} against {alone:?} alone", cs.admission);
        }
    }
}
