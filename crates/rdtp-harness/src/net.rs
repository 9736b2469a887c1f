//! A virtual network of rdtp nodes: receivers, caching routers, servers and plain switches
//! joined by links ([`crate::link`]), in virtual time.
//!
//! Every node has an address; a datagram travels hop by hop along a shortest path (in
//! links) to the node with its destination address, as IP would route it, crossing each
//! link's queue. Receivers, routers and servers are the real `rdtp-proto` cores; switches
//! only forward; a datagram source ([`Net::add_source`]) sends what a test makes at a fixed
//! rate and counts what comes back (an attacker, a flood). All randomness comes from one
//! seeded generator, so a run is deterministic.
//!
//! ```text
//! let mut net = Net::new(seed, bin);
//! let s = net.add_server("origin", ServerConfig::default(), catalog);
//! let r = net.add_router("r1", RouterConfig { fib: Fib::new(Some(net.addr(s))), ..Default::default() });
//! net.link_both(r, s, LinkConfig::new(100e6, 5 ms));
//! let f = net.add_flow(FlowSpec::new("object", cfg), r);
//! net.link_both(net.flows[f].node, r, LinkConfig::wire(1 ms));
//! net.run(60 s);                       // or net.step() to go event by event
//! assert!(net.flows[f].is_byte_exact());
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;

use core::time::Duration;

use rand_core::SeedableRng;
use rand_pcg::Pcg32;
use rdtp_proto::node::Node as Core;
use rdtp_proto::receiver::{Event, FetchError, Receiver, ReceiverConfig, Stats, Target};
use rdtp_proto::router::{self, Router, RouterConfig};
use rdtp_proto::server::{Catalog, Server, ServerConfig, ServerNode};
use rdtp_proto::{Eid, Time};

use crate::link::{Link, LinkConfig};
use crate::metrics::{DelayStats, Series};

/// Index of a node in [`Net::nodes`].
pub type NodeIx = usize;

/// A flow to start: a receiver fetching one object.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    /// When the flow starts.
    pub start: Duration,
    /// What it fetches.
    pub target: Target,
    pub config: ReceiverConfig,
    /// Stop the flow (abandon the fetch) at this time, if it has not finished.
    pub stop: Option<Duration>,
    /// A rate estimate, bytes/s, given to the receiver before its first request
    /// ([`Receiver::informed_start`], Hiorth and Welzl's informed start).
    pub informed_rate: Option<f64>,
}

impl FlowSpec {
    /// Fetch `name` from time zero with `config` (trace events on).
    pub fn new(name: &str, config: ReceiverConfig) -> Self {
        FlowSpec {
            start: Duration::ZERO,
            target: Target::Name(name.to_string()),
            config,
            stop: None,
            informed_rate: None,
        }
    }
}

/// What happened to one flow.
#[derive(Debug)]
pub struct FlowState {
    pub spec: FlowSpec,
    /// Its receiver's node.
    pub node: NodeIx,
    /// Where its requests go.
    pub first_hop: SocketAddr,
    /// The receiver (present once started).
    pub rx: Option<Receiver>,
    /// Bytes the application read, binned by time.
    pub goodput: Series,
    /// RTT samples the receiver took.
    pub rtt: DelayStats,
    /// `(time, cwnd units, pacing rate bytes/s, state)` at every controller change.
    pub cc_trace: Vec<(Time, u64, Option<f64>, &'static str)>,
    /// `(time, units, re-request)` of every request the receiver sent ([`Event::Requested`]).
    pub requested: Vec<(Time, Vec<u64>, bool)>,
    /// `(time, unit, RTT sample)` of every unit's first arrival ([`Event::Received`]).
    pub received: Vec<(Time, u64, Option<Duration>)>,
    /// Bytes the application read so far.
    pub read_bytes: u64,
    /// First offset whose byte differed from the catalogue's content, if any.
    pub mismatch_at: Option<u64>,
    pub started_at: Option<Time>,
    pub finished_at: Option<Time>,
    pub error: Option<FetchError>,
    pub stopped: bool,
    eid: Option<Eid>,
}

impl FlowState {
    pub fn stats(&self) -> Option<Stats> {
        self.rx.as_ref().map(Receiver::stats)
    }
    /// Goodput in bit/s over `[from, to)`.
    pub fn goodput_bps(&self, from: Duration, to: Duration) -> f64 {
        self.goodput.bytes_between(from, to) as f64 * 8.0 / (to - from).as_secs_f64()
    }
    /// Finished with every byte identical to the catalogue's content.
    pub fn is_byte_exact(&self) -> bool {
        self.finished_at.is_some()
            && self.mismatch_at.is_none()
            && Some(self.read_bytes) == self.rx.as_ref().and_then(|r| r.size())
    }
    /// Whether it finished, failed or was stopped.
    pub fn is_done(&self) -> bool {
        self.finished_at.is_some() || self.error.is_some() || self.stopped
    }
    /// Time from start to finish.
    pub fn completion_time(&self) -> Option<Duration> {
        Some(self.finished_at? - self.started_at?)
    }
}

/// What a node is.
#[derive(Debug)]
pub enum NodeKind {
    /// The receiver of flow `flow`.
    Receiver {
        flow: usize,
    },
    Router(Box<Router>),
    Server {
        server: Box<ServerNode<dyn Catalog>>,
        catalog: usize,
    },
    /// Forwards datagrams, nothing else.
    Switch,
    /// Sends datagrams a test makes, at a fixed rate ([`Net::add_source`]).
    Source(Box<Source>),
}

/// Makes the `n`-th datagram (from 0) a [`Source`] sends.
pub type MakeDatagram = Box<dyn FnMut(u64) -> Vec<u8>>;

/// A node that sends `make(0)`, `make(1)`, … to `to`, one every `every` from `start` until
/// `stop`, and counts the datagrams that come back, by type byte. It runs no protocol: it is
/// a test's attacker or load.
pub struct Source {
    pub to: SocketAddr,
    pub every: Duration,
    pub start: Duration,
    pub stop: Duration,
    make: MakeDatagram,
    /// Datagrams sent, and bytes.
    pub sent: u64,
    pub sent_bytes: u64,
    /// Datagrams received, by their type byte (index 3 of the datagram).
    pub received: [u64; 16],
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("to", &self.to)
            .field("every", &self.every)
            .field("sent", &self.sent)
            .field("received", &self.received)
            .finish_non_exhaustive()
    }
}

/// A node of the network.
#[derive(Debug)]
pub struct Node {
    pub name: String,
    pub addr: SocketAddr,
    pub kind: NodeKind,
    timer: Option<Time>,
    /// Consecutive wake-ups at the same instant without progress (a core bug).
    spins: u32,
}

#[derive(Debug)]
enum Ev {
    /// `data` from `src` to `dst` reaches `node` (its destination, or a hop on the way).
    Arrive {
        node: NodeIx,
        src: SocketAddr,
        dst: SocketAddr,
        data: Vec<u8>,
    },
    Timer {
        node: NodeIx,
    },
    Start {
        flow: usize,
    },
    Stop {
        flow: usize,
    },
    /// Source `node` sends its next datagram.
    Emit {
        node: NodeIx,
    },
    Rate {
        link: usize,
        bps: f64,
    },
}

/// The network. See the module docs.
pub struct Net {
    now: Time,
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    pub flows: Vec<FlowState>,
    catalogs: Vec<Arc<dyn Catalog>>,
    adj: HashMap<(NodeIx, NodeIx), usize>,
    neighbours: Vec<Vec<NodeIx>>,
    by_addr: HashMap<SocketAddr, NodeIx>,
    /// `next_hop[from][to]`, computed when first needed after the topology changed.
    next_hop: Option<Vec<Vec<Option<NodeIx>>>>,
    queue: BinaryHeap<Reverse<(Time, u64)>>,
    events: HashMap<u64, Ev>,
    next_id: u64,
    rng: Pcg32,
    bin: Duration,
    /// Datagrams to addresses no node has, or with no path to them.
    pub unroutable: u64,
    read_buf: Vec<u8>,
    check_buf: Vec<u8>,
    /// Scratch for datagrams produced by servers and routers.
    out_buf: Vec<u8>,
}

impl Net {
    /// An empty network; randomness from `seed`, series in `bin`-long bins.
    pub fn new(seed: u64, bin: Duration) -> Self {
        Net {
            now: Time::ZERO,
            nodes: Vec::new(),
            links: Vec::new(),
            flows: Vec::new(),
            catalogs: Vec::new(),
            adj: HashMap::new(),
            neighbours: Vec::new(),
            by_addr: HashMap::new(),
            next_hop: None,
            queue: BinaryHeap::new(),
            events: HashMap::new(),
            next_id: 0,
            rng: Pcg32::seed_from_u64(seed),
            bin,
            unroutable: 0,
            read_buf: vec![0u8; 1 << 16],
            check_buf: vec![0u8; 1 << 16],
            out_buf: vec![0u8; router::MAX_DATAGRAM],
        }
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// The address of node `n`.
    pub fn addr(&self, n: NodeIx) -> SocketAddr {
        self.nodes[n].addr
    }

    /// The node called `name`.
    pub fn node_named(&self, name: &str) -> Option<NodeIx> {
        self.nodes.iter().position(|n| n.name == name)
    }

    fn add_node(&mut self, name: &str, kind: NodeKind) -> NodeIx {
        let i = self.nodes.len();
        let addr = SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], 7447));
        self.by_addr.insert(addr, i);
        self.nodes.push(Node { name: name.to_string(), addr, kind, timer: None, spins: 0 });
        self.neighbours.push(Vec::new());
        self.next_hop = None;
        i
    }

    /// A server serving `catalog`.
    pub fn add_server(&mut self, name: &str, config: ServerConfig, catalog: impl Catalog + 'static) -> NodeIx {
        self.catalogs.push(Arc::new(catalog));
        let server =
            Box::new(ServerNode::new(Server::new(config), Arc::clone(&self.catalogs[self.catalogs.len() - 1])));
        self.add_node(name, NodeKind::Server { server, catalog: self.catalogs.len() - 1 })
    }

    /// A caching router. Its forwarding table names next hops by [`Net::addr`].
    pub fn add_router(&mut self, name: &str, config: RouterConfig) -> NodeIx {
        self.add_node(name, NodeKind::Router(Box::new(Router::new(config))))
    }

    /// A node that only forwards.
    pub fn add_switch(&mut self, name: &str) -> NodeIx {
        self.add_node(name, NodeKind::Switch)
    }

    /// A datagram source: sends `make(n)` to node `to`, one every `every` from `start` to
    /// `stop` (since start), and counts what comes back ([`Source`]). Link it like any node.
    pub fn add_source(
        &mut self,
        name: &str,
        to: NodeIx,
        every: Duration,
        (start, stop): (Duration, Duration),
        make: impl FnMut(u64) -> Vec<u8> + 'static,
    ) -> NodeIx {
        let source = Source {
            to: self.nodes[to].addr,
            every: every.max(Duration::from_nanos(1)),
            start,
            stop,
            make: Box::new(make),
            sent: 0,
            sent_bytes: 0,
            received: [0; 16],
        };
        let n = self.add_node(name, NodeKind::Source(Box::new(source)));
        self.schedule(Time::ZERO + start, Ev::Emit { node: n });
        n
    }

    /// The source at node `n`.
    pub fn source(&self, n: NodeIx) -> &Source {
        match &self.nodes[n].kind {
            NodeKind::Source(s) => s,
            k => panic!("node {n} is not a source: {k:?}"),
        }
    }

    /// A receiver running `spec`, sending its requests to `first_hop`. Returns the flow's
    /// index in [`Net::flows`]; its node is `flows[i].node` (link it to the network).
    pub fn add_flow(&mut self, spec: FlowSpec, first_hop: NodeIx) -> usize {
        let flow = self.flows.len();
        let node = self.add_node(&format!("rx{flow}"), NodeKind::Receiver { flow });
        self.schedule(Time::ZERO + spec.start, Ev::Start { flow });
        if let Some(stop) = spec.stop {
            self.schedule(Time::ZERO + stop, Ev::Stop { flow });
        }
        self.flows.push(FlowState {
            spec,
            node,
            first_hop: self.nodes[first_hop].addr,
            rx: None,
            goodput: Series::new(self.bin),
            rtt: DelayStats::default(),
            cc_trace: Vec::new(),
            requested: Vec::new(),
            received: Vec::new(),
            read_bytes: 0,
            mismatch_at: None,
            started_at: None,
            finished_at: None,
            error: None,
            stopped: false,
            eid: None,
        });
        flow
    }

    /// A one-way link from `a` to `b`; returns its index in [`Net::links`].
    pub fn link(&mut self, a: NodeIx, b: NodeIx, cfg: LinkConfig) -> usize {
        let l = self.links.len();
        self.links.push(Link::new(cfg, self.bin));
        if self.adj.insert((a, b), l).is_none() {
            self.neighbours[a].push(b);
        }
        self.next_hop = None;
        l
    }

    /// Links both ways with the same configuration; returns `(a → b, b → a)`.
    pub fn link_both(&mut self, a: NodeIx, b: NodeIx, cfg: LinkConfig) -> (usize, usize) {
        (self.link(a, b, cfg.clone()), self.link(b, a, cfg))
    }

    /// The link from `a` to `b`.
    pub fn link_between(&self, a: NodeIx, b: NodeIx) -> Option<&Link> {
        self.adj.get(&(a, b)).map(|&l| &self.links[l])
    }

    /// Change link `link`'s rate to `bps` at `at` (since start).
    pub fn schedule_rate(&mut self, link: usize, at: Duration, bps: f64) {
        self.schedule(Time::ZERO + at, Ev::Rate { link, bps });
    }

    /// The router at node `n`.
    pub fn router(&self, n: NodeIx) -> &Router {
        match &self.nodes[n].kind {
            NodeKind::Router(r) => r,
            k => panic!("node {n} is not a router: {k:?}"),
        }
    }

    /// The router at node `n`, to change it (warm its store, add routes).
    pub fn router_mut(&mut self, n: NodeIx) -> &mut Router {
        match &mut self.nodes[n].kind {
            NodeKind::Router(r) => r,
            k => panic!("node {n} is not a router: {k:?}"),
        }
    }

    /// The server at node `n`.
    pub fn server(&self, n: NodeIx) -> &Server {
        match &self.nodes[n].kind {
            NodeKind::Server { server, .. } => server.server(),
            k => panic!("node {n} is not a server: {k:?}"),
        }
    }

    fn schedule(&mut self, at: Time, ev: Ev) {
        let id = self.next_id;
        self.next_id += 1;
        self.events.insert(id, ev);
        self.queue.push(Reverse((at, id)));
    }

    /// Whether every flow has finished, failed or stopped.
    pub fn all_done(&self) -> bool {
        self.flows.iter().all(FlowState::is_done)
    }

    /// Run until `until` (since start) or until every flow is done.
    pub fn run(&mut self, until: Duration) {
        let end = Time::ZERO + until;
        while let Some(Reverse((at, _))) = self.queue.peek().copied() {
            if at > end || self.all_done() {
                break;
            }
            self.step();
        }
        if !self.all_done() {
            self.now = self.now.max(end);
        }
    }

    /// Process the next event; false if there is none.
    pub fn step(&mut self) -> bool {
        let Some(Reverse((at, id))) = self.queue.pop() else { return false };
        let ev = self.events.remove(&id).expect("event stored");
        self.now = self.now.max(at);
        self.dispatch(ev);
        true
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Rate { link, bps } => self.links[link].set_rate(bps),
            Ev::Start { flow } => {
                let f = &mut self.flows[flow];
                let mut cfg = f.spec.config.clone();
                cfg.trace = true;
                let mut rx = Receiver::new(cfg, f.first_hop, f.spec.target.clone(), self.now);
                if let Some(rate) = f.spec.informed_rate {
                    rx.informed_start(self.now, rate);
                }
                f.rx = Some(rx);
                f.started_at = Some(self.now);
                let node = f.node;
                self.service(node);
            }
            Ev::Stop { flow } => {
                let f = &mut self.flows[flow];
                if !f.is_done() {
                    f.stopped = true;
                    self.nodes[f.node].timer = None;
                }
            }
            Ev::Arrive { node, src, dst, data } => self.arrive(node, src, dst, data),
            Ev::Emit { node } => {
                let now = self.now;
                let me = self.nodes[node].addr;
                let NodeKind::Source(s) = &mut self.nodes[node].kind else { return };
                if now >= Time::ZERO + s.stop {
                    return;
                }
                let d = (s.make)(s.sent);
                s.sent += 1;
                s.sent_bytes += d.len() as u64;
                let (to, next) = (s.to, Time::ZERO + s.start + s.every * u32::try_from(s.sent).unwrap_or(u32::MAX));
                self.send(node, me, to, d);
                self.schedule(next, Ev::Emit { node });
            }
            Ev::Timer { node } => {
                let n = &mut self.nodes[node];
                if n.timer != Some(self.now) {
                    return; // superseded
                }
                n.timer = None;
                let Some(core) = core_of(&mut n.kind, &mut self.flows) else { return };
                core.handle_timeout(self.now);
                self.service(node);
            }
        }
    }

    fn routes(&mut self) -> &Vec<Vec<Option<NodeIx>>> {
        if self.next_hop.is_none() {
            // Breadth-first search from every node: the first hop of a shortest path, ties
            // broken by the order links were added.
            let n = self.nodes.len();
            let mut table = vec![vec![None; n]; n];
            for (from, row) in table.iter_mut().enumerate() {
                let mut queue = VecDeque::new();
                for &nb in &self.neighbours[from] {
                    if row[nb].is_none() && nb != from {
                        row[nb] = Some(nb);
                        queue.push_back(nb);
                    }
                }
                while let Some(x) = queue.pop_front() {
                    for &nb in &self.neighbours[x] {
                        if nb != from && row[nb].is_none() {
                            row[nb] = row[x];
                            queue.push_back(nb);
                        }
                    }
                }
            }
            self.next_hop = Some(table);
        }
        self.next_hop.as_ref().expect("computed")
    }

    /// Node `at` sends `data` (from `src`) towards `dst`.
    fn send(&mut self, at: NodeIx, src: SocketAddr, dst: SocketAddr, data: Vec<u8>) {
        let Some(&dest) = self.by_addr.get(&dst) else {
            self.unroutable += 1;
            return;
        };
        let Some(next) = self.routes()[at][dest] else {
            self.unroutable += 1;
            return;
        };
        let l = self.adj[&(at, next)];
        if self.links[l].cfg.is_transparent() {
            return self.arrive(next, src, dst, data);
        }
        let a = self.links[l].transmit(self.now, data.len(), &mut self.rng);
        let mut data = data;
        if a.corrupt
            && let Some(last) = data.last_mut()
        {
            *last ^= 0x5a;
        }
        if let Some(t) = a.duplicate_at {
            self.schedule(t, Ev::Arrive { node: next, src, dst, data: data.clone() });
        }
        if let Some(t) = a.at {
            self.schedule(t, Ev::Arrive { node: next, src, dst, data });
        }
    }

    fn arrive(&mut self, node: NodeIx, src: SocketAddr, dst: SocketAddr, data: Vec<u8>) {
        if self.nodes[node].addr != dst {
            return self.send(node, src, dst, data); // a hop on the way
        }
        let now = self.now;
        if let NodeKind::Source(s) = &mut self.nodes[node].kind {
            if let Some(&t) = data.get(3) {
                s.received[usize::from(t & 0x0f)] += 1;
            }
            return;
        }
        // A receiver, router or server: one contract for all three.
        let Some(core) = core_of(&mut self.nodes[node].kind, &mut self.flows) else { return };
        core.handle_datagram(now, src, &data);
        self.service(node);
    }

    /// Let node `n` send what is due, take its events and bytes, and set its timer.
    fn service(&mut self, n: NodeIx) {
        let now = self.now;
        let me = self.nodes[n].addr;
        let mut out: Vec<(SocketAddr, Vec<u8>)> = Vec::new();
        {
            let Some(core) = core_of(&mut self.nodes[n].kind, &mut self.flows) else { return };
            let buf = &mut self.out_buf;
            while let Some(t) = core.poll_transmit(now, buf) {
                out.push((t.to, buf[..t.len].to_vec()));
            }
        }
        if let NodeKind::Receiver { flow } = self.nodes[n].kind {
            let f = &mut self.flows[flow];
            if let Some(rx) = f.rx.as_mut() {
                while let Some(ev) = rx.poll_event() {
                    match ev {
                        Event::Resolved { eid, .. } => f.eid = Some(eid),
                        Event::RttSample(s) => f.rtt.push(s.time, s.rtt),
                        Event::Congestion(c) => f.cc_trace.push((c.time, c.cwnd, c.pacing_rate, c.state)),
                        Event::Finished => f.finished_at = Some(now),
                        Event::Failed(e) => f.error = Some(e),
                        Event::Requested { time, units, retransmission } => {
                            f.requested.push((time, units, retransmission))
                        }
                        Event::Received { time, unit, rtt, .. } => f.received.push((time, unit, rtt)),
                    }
                }
            }
        }
        // A receiver's deadline is read after its bytes are (reading opens its window); a
        // router's and a server's before their datagrams leave (a transparent link may hand
        // an answer straight back, and that call sets the timer itself).
        let mut timeout = None;
        if !matches!(self.nodes[n].kind, NodeKind::Receiver { .. }) {
            timeout = core_of(&mut self.nodes[n].kind, &mut self.flows).and_then(|c| c.poll_timeout());
        }
        for (to, d) in out.drain(..) {
            self.send(n, me, to, d);
        }
        if let NodeKind::Receiver { flow } = self.nodes[n].kind {
            self.drain_reads(flow);
            timeout = self.flows[flow].rx.as_ref().and_then(Receiver::poll_timeout);
        }
        let node = &mut self.nodes[n];
        match timeout {
            Some(t) if node.timer != Some(t.max(now)) => {
                let at = if t <= now {
                    node.spins += 1;
                    assert!(
                        node.spins < 1000,
                        "node {}: keeps asking to be woken at {now:?} without progress",
                        node.name
                    );
                    now
                } else {
                    node.spins = 0;
                    t
                };
                node.timer = Some(at);
                self.schedule(at, Ev::Timer { node: n });
            }
            Some(_) => {}
            None => node.timer = None,
        }
    }

    /// Read everything flow `i`'s receiver has in order and compare it with the content.
    fn drain_reads(&mut self, i: usize) {
        let now = self.now;
        let f = &mut self.flows[i];
        let Some(rx) = f.rx.as_mut() else { return };
        loop {
            let n = rx.read(&mut self.read_buf);
            if n == 0 {
                break;
            }
            if f.mismatch_at.is_none() {
                let eid = f.eid.unwrap_or_default();
                let check = &mut self.check_buf[..n];
                let same = self
                    .catalogs
                    .iter()
                    .find(|c| c.size_of(&eid).is_some())
                    .is_some_and(|c| c.read_at(&eid, f.read_bytes, check).is_ok() && *check == self.read_buf[..n]);
                if !same {
                    f.mismatch_at = Some(f.read_bytes);
                }
            }
            f.read_bytes += n as u64;
            f.goodput.add(now, n as u64);
        }
    }
}

/// The rdtp core at a node (its receiver, router or server), driven through the contract
/// every core keeps; `None` for switches, sources, receivers not started or stopped.
fn core_of<'a>(kind: &'a mut NodeKind, flows: &'a mut [FlowState]) -> Option<&'a mut dyn Core> {
    match kind {
        NodeKind::Receiver { flow } => {
            let f = &mut flows[*flow];
            if f.stopped {
                return None;
            }
            f.rx.as_mut().map(|rx| rx as &mut dyn Core)
        }
        NodeKind::Router(r) => Some(&mut **r),
        NodeKind::Server { server, .. } => Some(&mut **server),
        NodeKind::Switch | NodeKind::Source(_) => None,
    }
}
