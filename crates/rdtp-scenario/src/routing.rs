//! Where rdtp requests go when caching routers sit on a topology: every router's routes and
//! every consumer's first hop, decided here once, as data, so that rdtp-sim's C++ only turns
//! node names into addresses.
//!
//! Every topology is a graph of named nodes: a dumbbell or chain is
//! `server — r{hops+1} — … — r1 — clients` (r1 is the clients' gateway), WiFi is
//! `server — ap — clients`, and a `graph` topology is its own nodes and links. Paths towards
//! a server are shortest paths (fewest links, as ns-3's global routing counts them; ties go
//! to the node listed first) from one breadth-first tree per server, so the rest of any path
//! through a node is that node's own path. Requests travel towards the content's source and
//! the caches on the way may answer (S3 §I, §III).
//!
//! A consumer's **first hop** is the first caching router on its path to the server of its
//! object, or none (it sends to the server, as without routers). A router's **next hop**
//! towards a server is the next caching router on its own path there, or the server. With
//! one server (dumbbell, chain, WiFi) that is the router's default route; in a graph every
//! server's objects are named `<server>/…` and each router routes each server's prefix.

use crate::Error;
use std::collections::VecDeque;

use crate::Topology;

/// The name of the server node of a dumbbell, chain or WiFi topology.
pub const SERVER: &str = "server";
/// The node standing for every client of a dumbbell, chain or WiFi topology.
const CLIENTS: &str = "clients";

/// The topology's nodes, shortest paths towards each server, and where routers are.
#[derive(Debug, Clone)]
pub struct Paths {
    names: Vec<String>,
    /// Per server node: for every node, the next node towards that server (None: the server
    /// itself, or unreachable).
    towards: Vec<(usize, Vec<Option<usize>>)>,
    /// Whether a caching router runs on the node.
    caching: Vec<bool>,
    /// Client index → node (outside graphs one node stands for every client).
    clients: Vec<usize>,
    /// A graph topology: routes by server name prefix, else one default route.
    graph: bool,
}

impl Paths {
    /// The paths of `t` (assumed valid: see `validate_topology`).
    pub fn new(t: &Topology) -> Paths {
        let (names, links, clients): (Vec<String>, Vec<(usize, usize)>, Vec<usize>) = match t.kind.as_str() {
            "graph" => {
                let names: Vec<String> = t.nodes.iter().map(|n| n.name.clone()).collect();
                let ix = |name: &str| names.iter().position(|n| n == name).expect("validated link end");
                let links = t.links.iter().map(|l| (ix(&l.from), ix(&l.to))).collect();
                let clients = t.nodes_with_role("client").into_iter().map(ix).collect();
                (names, links, clients)
            }
            _ => {
                // server, then the routers from the server's gateway to the clients', then the clients.
                let mut names = vec![SERVER.to_string()];
                names.extend(crate::router_nodes(t).into_iter().rev());
                names.push(CLIENTS.to_string());
                let links = (1..names.len()).map(|i| (i - 1, i)).collect();
                (names.clone(), links, vec![names.len() - 1])
            }
        };
        let mut adjacent = vec![Vec::new(); names.len()];
        for &(a, b) in &links {
            adjacent[a].push(b);
            adjacent[b].push(a);
        }
        for list in &mut adjacent {
            list.sort_unstable();
        }
        let servers: Vec<usize> = match t.kind.as_str() {
            "graph" => t.nodes.iter().enumerate().filter(|(_, n)| n.role == "server").map(|(i, _)| i).collect(),
            _ => vec![0],
        };
        let towards = servers.into_iter().map(|s| (s, tree(&adjacent, s))).collect();
        let caching = names.iter().map(|n| t.routers.iter().any(|r| r.node == *n)).collect();
        Paths { names, towards, caching, clients, graph: t.kind == "graph" }
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    fn tree(&self, server: &str) -> Result<&Vec<Option<usize>>, Error> {
        let s = self.index(server).ok_or_else(|| Error::Route(format!("no server '{server}'")))?;
        self.towards
            .iter()
            .find(|(t, _)| *t == s)
            .map(|(_, tree)| tree)
            .ok_or_else(|| Error::Route(format!("'{server}' is not a server")))
    }

    /// The next caching router after `node` on its path to `server`, or `server` itself;
    /// `None` if `server` cannot be reached.
    fn next_stop(&self, node: usize, server: &str) -> Result<Option<usize>, Error> {
        let tree = self.tree(server)?;
        let mut at = node;
        while let Some(next) = tree[at] {
            if self.caching[next] || tree[next].is_none() {
                return Ok(Some(next));
            }
            at = next;
        }
        Ok(None)
    }

    /// The server a client's flow fetches from when it names none: the first server.
    pub fn default_server(&self) -> &str {
        &self.names[self.towards[0].0]
    }

    /// Where client `client`'s rdtp requests for `server`'s objects go first: the first
    /// caching router on its path (`None`: straight to the server).
    pub fn first_hop(&self, client: u32, server: &str) -> Result<Option<&str>, Error> {
        let node = if self.graph { self.clients.get(client as usize) } else { self.clients.first() };
        let node = *node.ok_or_else(|| Error::Route(format!("no client {client}")))?;
        let stop = self
            .next_stop(node, server)?
            .ok_or_else(|| Error::Route(format!("client {client} cannot reach '{server}'")))?;
        Ok(self.caching[stop].then(|| self.names[stop].as_str()))
    }

    /// The routes of the caching router on `router`: `(name prefix, next hop node)`, an
    /// empty prefix being the default route. Servers it cannot reach get no route.
    pub fn routes(&self, router: &str) -> Vec<(String, String)> {
        let Some(node) = self.index(router) else { return Vec::new() };
        let mut routes = Vec::new();
        for (server, _) in &self.towards {
            let server = &self.names[*server];
            if let Ok(Some(next)) = self.next_stop(node, server) {
                let prefix = if self.graph { server.clone() } else { String::new() };
                routes.push((prefix, self.names[next].clone()));
            }
        }
        routes
    }
}

/// Breadth-first tree towards `root`: for every node the next node on a shortest path to
/// `root` (neighbours in node order, so ties go to the node listed first).
fn tree(adjacent: &[Vec<usize>], root: usize) -> Vec<Option<usize>> {
    let mut next = vec![None; adjacent.len()];
    let mut seen = vec![false; adjacent.len()];
    seen[root] = true;
    let mut queue = VecDeque::from([root]);
    while let Some(u) = queue.pop_front() {
        for &v in &adjacent[u] {
            if !seen[v] {
                seen[v] = true;
                next[v] = Some(u);
                queue.push_back(v);
            }
        }
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topology(text: &str) -> Topology {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_chain_routes_through_its_caching_routers_towards_the_server() {
        let t = topology(
            "kind = \"dumbbell\"\nhops = 3\n[[router]]\nnode = \"r1\"\n[[router]]\nnode = \"r3\"\n\
             [[router]]\nnode = \"r4\"\n",
        );
        let p = Paths::new(&t);
        assert_eq!(p.first_hop(0, SERVER).unwrap(), Some("r1"));
        assert_eq!(p.first_hop(7, SERVER).unwrap(), Some("r1"), "every client behind r1");
        assert_eq!(p.routes("r1"), [(String::new(), "r3".to_string())], "r2 has no cache: skipped");
        assert_eq!(p.routes("r3"), [(String::new(), "r4".to_string())]);
        assert_eq!(p.routes("r4"), [(String::new(), SERVER.to_string())]);
        let t = topology("kind = \"dumbbell\"\nhops = 3\n[[router]]\nnode = \"r2\"\n");
        assert_eq!(Paths::new(&t).first_hop(0, SERVER).unwrap(), Some("r2"));
        let t = topology("kind = \"wifi\"\n");
        assert_eq!(Paths::new(&t).first_hop(0, SERVER).unwrap(), None, "no routers: straight to the server");
        let t = topology("kind = \"wifi\"\n[[router]]\nnode = \"ap\"\n");
        assert_eq!(Paths::new(&t).first_hop(0, SERVER).unwrap(), Some("ap"));
        assert_eq!(Paths::new(&t).routes("ap"), [(String::new(), SERVER.to_string())]);
    }

    /// Two servers, a core of three routers in a triangle and two clients:
    /// s1 - a - b - c1, s2 - c - b, a - c, c2 - c.
    #[test]
    fn a_graph_routes_each_servers_prefix_along_its_shortest_paths() {
        let mut text = String::from("kind = \"graph\"\n");
        for (name, role) in [("s1", "server"), ("s2", "server"), ("a", "router"), ("b", "router"), ("c", "router")]
            .into_iter()
            .chain([("c1", "client"), ("c2", "client")])
        {
            text.push_str(&format!("[[node]]\nname = \"{name}\"\nrole = \"{role}\"\n"));
        }
        for (from, to) in [("s1", "a"), ("a", "b"), ("b", "c1"), ("s2", "c"), ("c", "b"), ("a", "c"), ("c2", "c")] {
            text.push_str(&format!("[[link]]\nfrom = \"{from}\"\nto = \"{to}\"\n"));
        }
        let routers = "[[router]]\nnode = \"a\"\n[[router]]\nnode = \"b\"\n[[router]]\nnode = \"c\"\n";
        let t = topology(&format!("{text}{routers}"));
        let p = Paths::new(&t);
        assert_eq!(p.default_server(), "s1");
        assert_eq!(p.first_hop(0, "s1").unwrap(), Some("b"));
        assert_eq!(p.first_hop(0, "s2").unwrap(), Some("b"));
        assert_eq!(p.first_hop(1, "s1").unwrap(), Some("c"));
        assert_eq!(p.first_hop(1, "s2").unwrap(), Some("c"));
        let r = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
        assert_eq!(p.routes("b"), r(&[("s1", "a"), ("s2", "c")]));
        assert_eq!(p.routes("c"), r(&[("s1", "a"), ("s2", "s2")]));
        assert_eq!(p.routes("a"), r(&[("s1", "s1"), ("s2", "c")]));
        // Without a cache on b, client 0 goes to a for s1 and to c for s2.
        let t = topology(&format!("{text}[[router]]\nnode = \"a\"\n[[router]]\nnode = \"c\"\n"));
        let p = Paths::new(&t);
        assert_eq!(p.first_hop(0, "s1").unwrap(), Some("a"));
        assert_eq!(p.first_hop(0, "s2").unwrap(), Some("c"));
        assert!(p.first_hop(2, "s1").is_err());
        assert!(p.first_hop(0, "c1").is_err(), "not a server");
        // Unreachable: a lone client.
        let t = topology(&format!("{text}[[node]]\nname = \"c3\"\nrole = \"client\"\n"));
        assert!(Paths::new(&t).first_hop(2, "s1").unwrap_err().to_string().contains("cannot reach"));
    }
}
