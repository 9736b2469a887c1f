//! Seed 003's path in the harness, step by step: receivers behind one 10 Mbit/s access link,
//! eight caching routers h1, p1 … p6, h2 on 40 Mbit/s links, the origin behind a 10 Mbit/s
//! link, every link `T_link` one way and a 100-packet DropTail queue (§III). Flows fetch the
//! same 1000-unit object, starting at the given times; a line every `EVERY_MS` per flow with
//! its per-source windows, SRTTs and RTOs, and at the end each flow's completion time,
//! timeouts, late arrivals, duplicates and sources.
//!
//! With `SCATTER` > 0 every router's store first holds each unit of the object with that
//! probability (as random caching, p = 1/8, leaves an object after it has passed once).
//!
//! `cargo run --release -p rdtp-harness --example s3path -- CC T_LINK_MS CS_UNITS SCATTER EVERY_MS START_S…`

use core::time::Duration;

use rdtp_harness::{FlowSpec, LinkConfig, Net};
use rdtp_proto::NodeId;
use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::router::RouterConfig;
use rdtp_proto::router::cs::CsConfig;
use rdtp_proto::router::fib::Fib;
use rdtp_proto::server::{Catalog, PatternCatalog, ServerConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cc = args.first().map_or("cctcp", String::as_str).to_string();
    let num = |i: usize, d: f64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (t_link, cs, scatter, every) = (num(1, 5.0), num(2, 2000.0) as usize, num(3, 0.0), num(4, 100.0));
    let starts: Vec<f64> =
        if args.len() > 5 { args[5..].iter().map(|a| a.parse().unwrap()).collect() } else { vec![0.0] };
    let unit: u16 = 1000;
    let d = Duration::from_secs_f64(t_link / 1e3);
    let link = |rate: f64| LinkConfig { queue_bytes: 100 * 1100, ..LinkConfig::new(rate, d) };
    let mut net = Net::new(1, Duration::from_millis(100));
    let origin = net.add_server(
        "s1",
        ServerConfig::default(),
        PatternCatalog::new([("obj".to_string(), u64::from(unit) * 1000, 3)]),
    );
    let names = ["h2", "p6", "p5", "p4", "p3", "p2", "p1", "h1"];
    let catalog = PatternCatalog::new([("obj".to_string(), u64::from(unit) * 1000, 3)]);
    let (eid, size) = catalog.resolve("obj").unwrap();
    let mut object = vec![0u8; size as usize];
    catalog.read_at(&eid, 0, &mut object).unwrap();
    let mut lcg = 0x2545_f491_4f6c_dd1du64;
    let mut up = origin;
    let mut first = true;
    for name in names {
        let cfg = RouterConfig {
            id: NodeId::label(name).unwrap(),
            fib: Fib::new(Some(net.addr(up))),
            cs: CsConfig { capacity_units: cs, ..CsConfig::default() },
            seed: 1,
            ..RouterConfig::default()
        };
        let r = net.add_router(name, cfg);
        if scatter > 0.0 {
            for u in 0..1000u64 {
                lcg = lcg.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                if ((lcg >> 11) as f64 / (1u64 << 53) as f64) < scatter {
                    net.router_mut(r).preload(eid, &object, unit, u..u + 1);
                }
            }
        }
        net.link_both(r, up, link(if first { 10e6 } else { 40e6 }));
        first = false;
        up = r;
    }
    let h1 = up;
    let access = net.add_switch("c1");
    net.link_both(access, h1, link(10e6));
    let mut flows = vec![];
    for (i, &s) in starts.iter().enumerate() {
        let cfg = ReceiverConfig {
            cc: cc.parse::<CcConfig>().unwrap(),
            unit,
            seed: 1 + i as u64,
            ..ReceiverConfig::default()
        };
        let spec = FlowSpec { start: Duration::from_secs_f64(s), ..FlowSpec::new("obj", cfg) };
        let f = net.add_flow(spec, h1);
        let node = net.flows[f].node;
        net.link_both(node, access, LinkConfig::wire(Duration::ZERO));
        flows.push(f);
    }
    let mut next = rdtp_proto::Time::ZERO;
    while !net.all_done() && net.now() < rdtp_proto::Time::ZERO + Duration::from_secs(120) && net.step() {
        if net.now() < next {
            continue;
        }
        next = net.now() + Duration::from_secs_f64(every / 1e3);
        let drops: u64 = net.links.iter().map(|l| l.stats.queue_drops).sum();
        for &f in &flows {
            let fl = &net.flows[f];
            let Some(rx) = fl.rx.as_ref() else { continue };
            if fl.is_done() {
                continue;
            }
            let s = rx.stats();
            let ps: Vec<String> = rx
                .controller()
                .path_states()
                .iter()
                .filter(|p| p.samples > 0 || p.inflight > 0)
                .map(|p| {
                    format!(
                        "{}:w{:.0}/{:.0} if{} srtt{:.0} rto{:.0}",
                        p.node,
                        p.cwnd,
                        p.ssthresh.min(9999.0),
                        p.inflight,
                        p.srtt.map_or(0.0, |r| r.as_secs_f64() * 1e3),
                        p.rto.as_secs_f64() * 1e3
                    )
                })
                .collect();
            println!(
                "{:8.3} f{f} rcvd {:4} tmo {:4} late {:3} dup {:3} drops {:5} | {}",
                net.now().as_secs_f64(),
                s.units_received,
                s.timeouts,
                s.late_arrivals,
                s.duplicates,
                drops,
                ps.join(" | ")
            );
        }
    }
    for &f in &flows {
        let fl = &net.flows[f];
        let s = fl.stats().unwrap();
        println!(
            "flow {f}: err {:?} fct {:?} exact {} timeouts {} late {} dup {} lost {} sources {}",
            fl.error,
            fl.completion_time(),
            fl.is_byte_exact(),
            s.timeouts,
            s.late_arrivals,
            s.duplicates,
            s.units_lost,
            s.sources.summary()
        );
        for x in s.sources.iter() {
            println!(
                "    {}: units {} rtt samples {} mean {:.1} ms",
                x.label(),
                x.units,
                x.rtt_samples,
                x.rtt_avg().map_or(0.0, |r| r.as_secs_f64() * 1e3)
            );
        }
    }
}
