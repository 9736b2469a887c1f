//! Caching routers in the path (`[[path.router]]`): where each `rdtp route` process runs, whom
//! it forwards to, and where the rdtp clients send their requests.
//!
//! Each router gets its own namespace `rdtp-<pid>-rt-<node>` with a tap that the emulator
//! attaches to the topology node the router stands for (`--RouterTaps`): on a dumbbell or
//! chain `r1` is the clients' gateway (client side of the bottleneck) and `r{hops+1}` the
//! server's; on WiFi `ap` is the access point. Its subnet is
//! [`rdtp_scenario::network::router_subnet`] of its slot (its position in
//! [`rdtp_scenario::router_nodes`], path order from the clients). rdtp clients fetch from the
//! router nearest them; each router's upstream is the next router towards the server, the
//! last one's the server. Kernel TCP goes to the server directly.

use std::net::Ipv4Addr;

use anyhow::{Error, Result, anyhow};
use rdtp_scenario::Topology;
use rdtp_scenario::network::{PREFIX_LEN, router_subnet};

/// One router of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct RouterPlan {
    /// The topology node it stands for: `r1` … `r{hops+1}`, `ap`.
    pub node: String,
    /// Its namespace.
    pub ns: String,
    /// The emulator's address on the router's tap (its default route).
    pub gateway: Ipv4Addr,
    /// The router's own address (it listens on [`crate::run::UDP_PORT`]).
    pub addr: Ipv4Addr,
    /// Its next hop: the next router towards the server, or the server.
    pub upstream: Ipv4Addr,
    /// The `rdtp route` options of its `[[path.router]]` entry (`--id`, `--cs-size`, …).
    pub args: Vec<String>,
}

/// The routers of `t` in path order from the clients, for namespaces named `prefix-…`;
/// `server` is the last one's upstream.
pub fn plan(t: &Topology, prefix: &str, server: Ipv4Addr) -> Result<Vec<RouterPlan>> {
    let nodes = rdtp_scenario::router_nodes(t);
    let mut placed = Vec::new();
    for r in &t.routers {
        let slot = nodes.iter().position(|n| *n == r.node);
        let slot = slot.ok_or_else(|| anyhow!("path.router node '{}' is not on this path", r.node))?;
        placed.push((slot, r));
    }
    placed.sort_by_key(|(slot, _)| *slot);
    let mut plans: Vec<RouterPlan> = Vec::with_capacity(placed.len());
    for &(slot, r) in placed.iter().rev() {
        let (gateway, addr) = router_subnet(slot);
        let upstream = plans.last().map_or(server, |next| next.addr);
        let args = r.route_args().map_err(Error::msg)?;
        plans.push(RouterPlan { node: r.node.clone(), ns: ns_name(prefix, &r.node), gateway, addr, upstream, args });
    }
    plans.reverse();
    Ok(plans)
}

/// "; routers r1 → 10.199.2.2, r3 → server" for `--dry-run` (empty without routers).
pub fn describe(t: &Topology) -> String {
    let server = rdtp_scenario::network::subnet(None).1;
    match plan(t, "rdtp", server) {
        Ok(p) if p.is_empty() => String::new(),
        Ok(p) => {
            let hop = |r: &RouterPlan| {
                let to = if r.upstream == server { "server".to_string() } else { r.upstream.to_string() };
                format!("{} {} → {to}", r.node, r.addr)
            };
            format!("; routers {}", p.iter().map(hop).collect::<Vec<_>>().join(", "))
        }
        Err(e) => format!("; routers: {e:#}"),
    }
}

/// A router's namespace.
pub fn ns_name(prefix: &str, node: &str) -> String {
    format!("{prefix}-rt-{node}")
}

/// The emulator's `--RouterTaps` argument (none without routers).
pub fn emulator_arg(plans: &[RouterPlan], tap: &str) -> Option<String> {
    let entries: Vec<String> =
        plans.iter().map(|r| format!("{}:{}/{tap}:{}/{PREFIX_LEN}", r.node, r.ns, r.gateway)).collect();
    (!entries.is_empty()).then(|| format!("--RouterTaps={}", entries.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topology(text: &str) -> Topology {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn routers_chain_towards_the_server_in_path_order() {
        let server = Ipv4Addr::new(10, 200, 0, 2);
        let t = topology(
            "kind = \"dumbbell\"\nhops = 2\n[[router]]\nnode = \"r3\"\ncs_size = 10\n[[router]]\nnode = \"r1\"\n",
        );
        let p = plan(&t, "rdtp-7", server).unwrap();
        assert_eq!(p.iter().map(|r| r.node.as_str()).collect::<Vec<_>>(), ["r1", "r3"]);
        assert_eq!(p[0].ns, "rdtp-7-rt-r1");
        assert_eq!((p[0].gateway, p[0].addr), (Ipv4Addr::new(10, 199, 0, 1), Ipv4Addr::new(10, 199, 0, 2)));
        assert_eq!(p[1].addr, Ipv4Addr::new(10, 199, 2, 2));
        assert_eq!(p[0].upstream, p[1].addr);
        assert_eq!(p[1].upstream, server);
        assert_eq!(p[1].args, ["--id", "r3", "--router", "id=r3,cs_units=10"]);
        assert_eq!(
            emulator_arg(&p, "tap0").unwrap(),
            "--RouterTaps=r1:rdtp-7-rt-r1/tap0:10.199.0.1/24,r3:rdtp-7-rt-r3/tap0:10.199.2.1/24"
        );
        let wifi = plan(&topology("kind = \"wifi\"\n[[router]]\nnode = \"ap\"\n"), "rdtp-7", server).unwrap();
        assert_eq!((wifi[0].addr, wifi[0].upstream), (Ipv4Addr::new(10, 199, 0, 2), server));
    }

    #[test]
    fn without_routers_nothing_changes() {
        let server = Ipv4Addr::new(10, 200, 0, 2);
        let p = plan(&topology("kind = \"dumbbell\"\n"), "rdtp-7", server).unwrap();
        assert!(p.is_empty());
        assert_eq!(emulator_arg(&p, "tap0"), None);
    }
}
