//! Graph topologies (`kind = "graph"`): named nodes with a role and point-to-point links
//! between them, for networks that are neither a dumbbell nor a WiFi cell — seed 003's
//! evaluation network of five sources, eight caches and five receivers (S3 §III) is one.
//! rdtp-sim builds them (`--Nodes`, `--Links`); the testbed does not.
//!
//! ```toml
//! [topology]
//! kind = "graph"
//! [[topology.node]]
//! name = "s1"
//! role = "server"          # server | router | client
//! [[topology.link]]
//! from = "s1"
//! to = "r1"
//! rate = "10Mbps"          # default 100Mbps
//! delay = "5ms"            # one-way, default 1ms
//! queue = 100              # DropTail packets at each end, default 100
//! monitor = true           # queue.csv samples `from`'s queue towards `to` (at most one link)
//! ```
//!
//! Clients are numbered in the order of their nodes (a flow's `client = 0` is the first
//! client node); a flow names the server it fetches from with `server` (default: the first).

use crate::Error;
use serde::Deserialize;

use crate::{Quantity, Topology};

/// Roles a graph node can have.
pub const ROLES: &[&str] = &["server", "router", "client"];
/// Defaults of a link's rate, one-way delay and queue (packets).
pub const DEFAULT_RATE: &str = "100Mbps";
pub const DEFAULT_DELAY: &str = "1ms";
pub const DEFAULT_QUEUE: u32 = 100;

/// A node of a graph topology (`[[topology.node]]`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GraphNode {
    /// Letters, digits, `.`, `_`, `-`; a caching router's default node id, so at most 8
    /// characters on a node that gets one.
    pub name: String,
    /// `server` (runs a producer serving `<name>/…` objects, and the TCP/UDP senders),
    /// `router` (forwards; a `[[topology.router]]` on it adds a caching router), `client`.
    pub role: String,
}

/// A point-to-point link (`[[topology.link]]`), the same in both directions.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    pub from: String,
    pub to: String,
    pub rate: Option<Quantity>,
    /// One-way delay.
    pub delay: Option<Quantity>,
    /// DropTail queue of each end's device, packets.
    pub queue: Option<u32>,
    /// Sample `from`'s device queue (towards `to`) into queue.csv and compute the run's
    /// utilisation and queueing delay on this link.
    #[serde(default)]
    pub monitor: bool,
}

impl Topology {
    /// Names of the nodes with `role`, in file order.
    pub fn nodes_with_role(&self, role: &str) -> Vec<&str> {
        self.nodes.iter().filter(|n| n.role == role).map(|n| n.name.as_str()).collect()
    }
}

/// Check a graph topology's nodes and links (`table` names it in errors).
pub fn validate(t: &Topology, table: &str) -> Result<(), Error> {
    let mut seen: Vec<&str> = Vec::new();
    for n in &t.nodes {
        if n.name.is_empty() || !n.name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) {
            return Err(Error::Invalid(format!(
                "{table}.node '{}': a name is letters, digits, '.', '_' or '-'",
                n.name
            )));
        }
        if seen.contains(&n.name.as_str()) {
            return Err(Error::Invalid(format!("{table}.node '{}' twice", n.name)));
        }
        if !ROLES.contains(&n.role.as_str()) {
            return Err(Error::Invalid(format!(
                "{table}.node '{}': role '{}' (want {})",
                n.name,
                n.role,
                ROLES.join(", ")
            )));
        }
        // A server's name is its node id in the Data it serves (`served_by`).
        if n.role == "server" && n.name.parse::<rdtp_proto::NodeId>().is_err() {
            return Err(Error::Invalid(format!(
                "{table}.node '{}': a server's name is its node id: 1-8 characters",
                n.name
            )));
        }
        seen.push(&n.name);
    }
    for role in ["server", "client"] {
        if t.nodes_with_role(role).is_empty() {
            return Err(Error::Invalid(format!("{table}: a graph needs a node with role = \"{role}\"")));
        }
    }
    if t.clients.is_some() {
        return Err(Error::Invalid(format!("{table}.clients: a graph's clients are its client nodes")));
    }
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for l in &t.links {
        let at = format!("{table}.link {} - {}", l.from, l.to);
        for end in [&l.from, &l.to] {
            if !seen.contains(&end.as_str()) {
                return Err(Error::Invalid(format!("{at}: no node '{end}'")));
            }
        }
        if l.from == l.to {
            return Err(Error::Invalid(format!("{at}: a link joins two different nodes")));
        }
        let pair = if l.from < l.to { (l.from.as_str(), l.to.as_str()) } else { (l.to.as_str(), l.from.as_str()) };
        if pairs.contains(&pair) {
            return Err(Error::Invalid(format!("{at}: these nodes are linked twice")));
        }
        pairs.push(pair);
        if let Some(r) = &l.rate {
            crate::network::parse_rate(&r.rate()).map_err(|e| Error::Invalid(format!("{at}: {e}")))?;
        }
        if l.queue == Some(0) {
            return Err(Error::Invalid(format!("{at}: queue must be ≥ 1 packet")));
        }
    }
    if t.links.iter().filter(|l| l.monitor).count() > 1 {
        return Err(Error::Invalid(format!("{table}: at most one link has monitor = true")));
    }
    Ok(())
}

/// `--Nodes`: `name:role,…` in file order.
pub fn nodes_arg(t: &Topology) -> String {
    t.nodes.iter().map(|n| format!("{}:{}", n.name, n.role)).collect::<Vec<_>>().join(",")
}

/// `--Links`: `from=a,to=b,rate=…,delay=…,queue=…[,monitor=1];…` with every default filled in.
pub fn links_arg(t: &Topology) -> String {
    t.links
        .iter()
        .map(|l| {
            let rate = l.rate.as_ref().map_or(DEFAULT_RATE.to_string(), Quantity::rate);
            let delay = l.delay.as_ref().map_or(DEFAULT_DELAY.to_string(), Quantity::time);
            let mut s = format!(
                "from={},to={},rate={rate},delay={delay},queue={}",
                l.from,
                l.to,
                l.queue.unwrap_or(DEFAULT_QUEUE)
            );
            if l.monitor {
                s.push_str(",monitor=1");
            }
            s
        })
        .collect::<Vec<_>>()
        .join(";")
}
