//! Forwarding strategies through a router with two next hops to the same object, one slower
//! than the other: `best-route` keeps to the route's first next hop, `asf` probes the other,
//! measures both and moves to the faster; the fetch is byte-exact and the router verifies
//! (and caches) what it forwards either way.

use core::time::Duration;

use rdtp_harness::{FlowSpec, LinkConfig, Net, NodeIx};
use rdtp_proto::NodeId;
use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::router::RouterConfig;
use rdtp_proto::router::fib::Fib;
use rdtp_proto::router::strategy::StrategyName;
use rdtp_proto::server::{PatternCatalog, ServerConfig};

const SIZE: u64 = 2_000_000;

/// receiver — r1 — {slow, fast}: both servers hold the object; r1's default route names
/// `slow` first. Returns (net, flow, r1, slow, fast).
fn two_upstreams(strategy: StrategyName) -> (Net, usize, NodeIx, NodeIx, NodeIx) {
    let mut net = Net::new(7, Duration::from_millis(100));
    let catalog = || PatternCatalog::new([("obj".to_string(), SIZE, 42)]);
    let slow = net.add_server("slow", ServerConfig::default(), catalog());
    let fast = net.add_server("fast", ServerConfig::default(), catalog());
    let mut fib = Fib::new(Some(net.addr(slow)));
    fib.add_default_next_hop(net.addr(fast));
    let cfg = RouterConfig { id: NodeId::label("r1").unwrap(), fib, strategy, seed: 7, ..RouterConfig::default() };
    let r1 = net.add_router("r1", cfg);
    net.link_both(r1, slow, LinkConfig::new(50e6, Duration::from_millis(30)));
    net.link_both(r1, fast, LinkConfig::new(50e6, Duration::from_millis(3)));
    let rx = ReceiverConfig { cc: CcConfig::from_name("bbr").unwrap(), seed: 7, ..ReceiverConfig::default() };
    let f = net.add_flow(FlowSpec::new("obj", rx), r1);
    let node = net.flows[f].node;
    net.link_both(node, r1, LinkConfig::new(100e6, Duration::from_millis(1)));
    net.run(Duration::from_secs(120));
    (net, f, r1, slow, fast)
}

/// The fetch completed byte-exact and every block the router cached verified.
fn verified(net: &Net, f: usize, r1: NodeIx) {
    assert!(net.flows[f].is_byte_exact(), "{:?}", net.flows[f].error);
    let s = net.router(r1).stats();
    assert!(s.blocks_verified > 0 && s.blocks_failed == 0, "{s:?}");
    assert!(net.router(r1).cs_len() > 0, "verified units are cached");
}

#[test]
fn best_route_keeps_to_the_first_next_hop() {
    let (net, f, r1, slow, fast) = two_upstreams(StrategyName::BEST_ROUTE);
    verified(&net, f, r1);
    assert_eq!(net.router(r1).strategy(), "best-route");
    assert!(net.server(slow).stats().data_packets > 0);
    assert_eq!(net.server(fast).stats().data_packets, 0, "nothing goes to the second next hop");
}

#[test]
fn asf_moves_to_the_faster_next_hop() {
    let (net, f, r1, slow, fast) = two_upstreams(StrategyName::ASF);
    verified(&net, f, r1);
    assert_eq!(net.router(r1).strategy(), "asf");
    let (from_slow, from_fast) = (net.server(slow).stats().data_packets, net.server(fast).stats().data_packets);
    // The first request goes to the first next hop and is probed on the other; once both
    // answered, the faster one gets every request (the next probe is 60 s away).
    assert!(from_slow > 0, "the first next hop was asked first");
    assert!(from_fast > 10 * from_slow, "slow {from_slow}, fast {from_fast} Data packets");
    let units = SIZE.div_ceil(1402);
    assert!(from_fast >= units * 9 / 10, "{from_fast} of {units} units from the faster hop");
}
