//! Fair share at the server (issue 11): a greedy receiver — a fixed window of 1000 units
//! that ignores every congestion signal (since issue 23 every receiver still spaces its
//! requests after `Busy`, `receiver::refusals`) — beside a normal `bbr` fetch, with the
//! server's send budget (20 Mbit/s) the bottleneck. The greedy one gets no more than its
//! share and the normal one keeps at least 80 % of an equal split: its own back-off does
//! not starve it when the other keeps the server's total budget in debt.

use core::time::Duration;

use rdtp_harness::{FlowSpec, LinkConfig, Net};
use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::server::{PatternCatalog, ServerConfig, ShareConfig};

#[test]
fn a_greedy_receiver_gets_its_share_and_a_normal_fetch_keeps_its_own() {
    let rate_bps = 20e6;
    let mut net = Net::new(1, Duration::from_millis(100));
    let share = ShareConfig { rate: Some(rate_bps / 8.0), ..ShareConfig::default() };
    let server = net.add_server(
        "origin",
        ServerConfig { share, ..ServerConfig::default() },
        PatternCatalog::new([("big".to_string(), 50_000_000, 1), ("obj".to_string(), 50_000_000, 2)]),
    );
    let spec = |name: &str, cc: &str, seed| {
        FlowSpec::new(name, ReceiverConfig { cc: cc.parse::<CcConfig>().unwrap(), seed, ..ReceiverConfig::default() })
    };
    let greedy = net.add_flow(spec("big", "fixed:window=1000", 1), server);
    let normal = net.add_flow(spec("obj", "bbr", 2), server);
    for f in [greedy, normal] {
        let node = net.flows[f].node;
        // 100 Mbit/s access links: the server's budget, not a link, is the bottleneck.
        net.link_both(node, server, LinkConfig::new(100e6, Duration::from_millis(10)));
    }
    net.run(Duration::from_secs(8));
    let (from, to) = (Duration::from_secs(3), Duration::from_secs(8));
    let g = net.flows[greedy].goodput_bps(from, to);
    let n = net.flows[normal].goodput_bps(from, to);
    let busy = net.server(server).stats().busy;
    eprintln!("greedy {:.1} Mbit/s, normal {:.1} Mbit/s, {busy} Busy", g / 1e6, n / 1e6);
    // Goodput counts payload only (1402 of 1472 bytes a unit's Data carries).
    let equal = rate_bps / 2.0 * 1402.0 / 1472.0;
    assert!(n >= 0.8 * equal, "normal fetch {:.1} Mbit/s < 80 % of {:.1}", n / 1e6, equal / 1e6);
    assert!(g <= 1.2 * equal, "greedy {:.1} Mbit/s above its share {:.1}", g / 1e6, equal / 1e6);
    assert!(g + n <= rate_bps * 1.05, "the budget holds: {:.1} Mbit/s", (g + n) / 1e6);
    assert!(busy > 0, "the greedy receiver was refused");
}
