//! The router runtime: the [`rdtp_proto::router::Router`] core on UDP sockets, on one
//! thread or several.
//!
//! Everything a router sends leaves from its listening address: answers to downstreams
//! (receivers, routers nearer to them) and the requests it sends itself to its next hops
//! (servers, routers nearer to the content), whose answers come back to that address. A
//! peer therefore sees the router under one address, the one in its forwarding table, and
//! "never back to the peer a request came from" (`docs/PROTOCOL.md`, Routers: Loops) holds
//! between two routers that route to each other. Datagrams arrive in batches (`recvmmsg`
//! with GRO); the core's output leaves in GSO batches per destination. The runtime adds no
//! protocol logic: the core decides everything, the runtime moves bytes and time and
//! reports the core's counters ([`Snapshot`]).
//!
//! # Workers
//!
//! With [`RouteOptions::workers`] > 1 each worker is a router core on its own thread, with
//! its own socket on the listening address (`SO_REUSEPORT`; the first bound alone, so a
//! port someone holds is refused). A classic BPF program on the sockets' group
//! (`steering_program`) picks the worker of each datagram by its contents:
//!
//! * a Request or ProofRequest goes to the worker of its object (the EID's first word mod
//!   the workers), whoever sends it: every request for one object meets the same pending
//!   entries, staged blocks and verified tree nodes, so coalescing works across receivers
//!   as on one core. One object is served by one core (as one name prefix is by one
//!   forwarding thread in NDN-DPDK); many objects use them all;
//! * an answer (Data, Nack, Retry, ResolveResponse, ListResponse, Proof) goes to the
//!   worker whose request it answers: worker `i` of `n` picks its tags ≡ `i` (mod `n`)
//!   ([`rdtp_proto::router::TagClass`]) and every answer carries its tag at bytes 8–11;
//! * anything else (resolves, lists, malformed datagrams) by the kernel's hash of the
//!   addresses.
//!
//! **How capacity is divided.** The workers share **one content store** (its whole
//! `--cs-size` and `--cs-bytes`): an object up to the store's capacity is cached whole
//! whatever the number of cores, and hits, evictions and the byte budget are those of one
//! store. The store's lock is taken once per unit looked up or cached (never while another
//! is held); since requests for one object go to one worker, workers contend only when
//! they serve different objects at the same instant. The other limits are the workers' own,
//! each `1/workers` of the configured total: pending units (`--pit-size`), verification
//! staging (32 MiB) and known tree nodes (65 536), so their memory is that of one router
//! — but each worker gets at least what one fast fetch needs (4 096 units, 4 MiB, 8 192
//! nodes: one object's requests all reach one worker), so on more than 8 cores the staging
//! and node totals grow (the pending total, at the default `--pit-size`, beyond 16) ([`staging_bytes`] gives the staging total, which `rdtp route` prints).
//! Workers tell each other the routes they learn from resolve answers (a channel each,
//! drained after every receive, before the datagrams are handled — a request that follows
//! a resolve can only be received after the route was sent), and publish their counters
//! for reports at most every 50 ms.
//!
//! Run it in the current thread with [`RouterRuntime::run_with`] (the `rdtp route` command
//! does, with signal handling and periodic reports) or in a background thread with
//! [`spawn`].

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::SigSet;
use quinn_udp::UdpSocketState;
use rdtp_proto::NodeId;
use rdtp_proto::router::cs::CsStats;
use rdtp_proto::router::fib::LEARNED_ROUTES;
use rdtp_proto::router::{Router, RouterConfig, RouterStats, RouterStore, TagClass};
use rdtp_proto::wire::PacketType;
use serde::Serialize;

use crate::background::{Background, StopSignal};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::signals;
use crate::socket::{self, GsoBatch, RecvBatch};

/// Runtime settings of a router.
#[derive(Clone, Debug, Default)]
pub struct RouteOptions {
    /// Address to bind; `None` = `[::]:7447` dual-stack, else `0.0.0.0:7447`.
    pub listen: Option<SocketAddr>,
    /// The core's configuration: id, forwarding table, content store, tables' limits. An
    /// id of [`NodeId::UNKNOWN`] (which no node sends) asks for [`default_id`] of the
    /// address the router binds.
    pub config: RouterConfig,
    /// Routing threads, each a router core with its own sockets (see the module docs); 0
    /// counts as 1.
    pub workers: usize,
}

/// The socket's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SocketStats {
    /// Datagrams received.
    pub datagrams_in: u64,
    /// `sendmsg` calls (one per GSO batch).
    pub sends: u64,
    /// Datagrams dropped because the socket stayed full or sending failed.
    pub send_drops: u64,
    /// Datagrams received by each worker.
    pub datagrams_per_worker: Vec<u64>,
}

/// Everything a router can report at one instant.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Snapshot {
    /// Seconds since the router started.
    pub elapsed_s: f64,
    /// The core's counters (totals).
    pub router: RouterStats,
    /// The content store's own counters (one store, shared by the workers).
    pub cs: CsStats,
    /// Units in the content store now.
    pub cs_entries: usize,
    /// Bytes the content store counts against its budget now (payload and per-unit
    /// bookkeeping, `rdtp_proto::router::CACHED_UNIT_OVERHEAD`).
    pub cs_bytes: u64,
    /// Units pending now.
    pub pit_entries: usize,
    /// Bytes of unverified blocks and units in verification staging now.
    pub staging_bytes: usize,
    /// The socket's counters.
    pub socket: SocketStats,
}

impl Snapshot {
    /// Counters per second between `earlier` and `self` (gauges as they are now), as JSON.
    pub fn rates_since(&self, earlier: &Snapshot) -> serde_json::Value {
        let dt = (self.elapsed_s - earlier.elapsed_s).max(1e-9);
        let (now, then) =
            (serde_json::to_value(self).unwrap_or_default(), serde_json::to_value(earlier).unwrap_or_default());
        per_second(&now, &then, dt)
    }
}

/// Numbers in `now` minus those in `then`, over `dt`, for every counter (recursively);
/// the gauges (`*_entries`, `*_bytes`: the tables now) and the elapsed time are kept as they are.
fn per_second(now: &serde_json::Value, then: &serde_json::Value, dt: f64) -> serde_json::Value {
    use serde_json::Value;
    match (now, then) {
        (Value::Object(a), Value::Object(b)) => Value::Object(
            a.iter()
                .map(|(k, v)| {
                    let gauge = k == "elapsed_s" || k.ends_with("_entries") || k.ends_with("_bytes");
                    let out = if gauge { v.clone() } else { per_second(v, b.get(k).unwrap_or(&Value::Null), dt) };
                    (k.clone(), out)
                })
                .collect(),
        ),
        (Value::Number(a), Value::Number(b)) => {
            let d = a.as_f64().unwrap_or(0.0) - b.as_f64().unwrap_or(0.0);
            serde_json::json!((d / dt * 1000.0).round() / 1000.0)
        }
        (Value::Number(a), _) => serde_json::json!(a.as_f64().unwrap_or(0.0) / dt),
        (v, _) => v.clone(),
    }
}

impl std::fmt::Display for Snapshot {
    /// One line a user reads (the `nfdc status` and `nfdc cs info` essentials).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.router;
        let ratio =
            if r.cs_hits + r.cs_misses > 0 { r.cs_hits as f64 * 100.0 / (r.cs_hits + r.cs_misses) as f64 } else { 0.0 };
        write!(
            f,
            "{} requests ({} units): CS {} hits, {} misses ({ratio:.1} % hits), {} coalesced; {} units forwarded in {} \
             requests ({} again); Data {} in ({:.1} MB), {} out ({:.1} MB); CS {} units ({:.1} MB), {} evictions; PIT {}; \
             nacks {} in, {} out; busy {}, no route {}, loops {}, expired {}, unsolicited {}",
            r.requests,
            r.units_requested,
            r.cs_hits,
            r.cs_misses,
            r.coalesced,
            r.forwarded_units,
            r.upstream_requests,
            r.reforwarded_units,
            r.data_in,
            r.bytes_in as f64 / 1e6,
            r.data_out,
            r.bytes_out as f64 / 1e6,
            self.cs_entries,
            self.cs_bytes as f64 / 1e6,
            self.cs.evictions,
            self.pit_entries,
            r.nacks_in,
            r.nacks_out,
            r.busy,
            r.no_route,
            r.loops,
            r.expired,
            r.unsolicited
        )
    }
}

impl Snapshot {
    /// Add another worker's counters and gauges. The content store's (`cs`, `cs_entries`,
    /// `cs_bytes`) are left as they are: the workers share one store, which `self` reports.
    fn add(&mut self, o: &Snapshot) {
        self.elapsed_s = self.elapsed_s.max(o.elapsed_s);
        self.router.add(&o.router);
        self.pit_entries += o.pit_entries;
        self.staging_bytes += o.staging_bytes;
        self.socket.datagrams_in += o.socket.datagrams_in;
        self.socket.sends += o.socket.sends;
        self.socket.send_drops += o.socket.send_drops;
        self.socket.datagrams_per_worker.extend_from_slice(&o.socket.datagrams_per_worker);
    }
}

/// What the loop does after a wake-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Leave the loop.
    Stop,
    /// Go on; be called again within this long at the latest (`None`: whenever).
    Continue(Option<Duration>),
}

/// A learned route: an EID and the next hop that resolved it.
type LearnedRoute = (rdtp_proto::Eid, SocketAddr);

/// How often a worker publishes its counters for reports, at most.
const PUBLISH_EVERY: Duration = Duration::from_millis(50);

/// One socket and quinn-udp's state for it.
struct Sock {
    sock: UdpSocket,
    state: UdpSocketState,
    local: SocketAddr,
}

impl Sock {
    fn new(sock: UdpSocket) -> Result<Sock> {
        let local = sock.local_addr().map_err(|e| Error::network("getsockname", e))?;
        let state = socket::udp_state(&sock).map_err(|e| Error::network("cannot set up the UDP socket", e))?;
        Ok(Sock { sock, state, local })
    }
}

/// What workers share: each one's latest counters (for the reports of the first).
struct Board {
    slots: Vec<Mutex<Snapshot>>,
}

/// One router core with its socket.
struct Worker {
    index: usize,
    sock: Sock,
    core: Router,
    clock: Clock,
    stop: StopSignal,
    socket_stats: SocketStats,
    board: Arc<Board>,
    routes_in: Receiver<LearnedRoute>,
    routes_out: Vec<SyncSender<LearnedRoute>>,
}

/// A bound router, ready to run: its first worker runs in the thread that runs it, the
/// others (bound already) on threads the run starts.
pub struct RouterRuntime {
    first: Worker,
    others: Vec<Worker>,
}

/// The runtime as [`RouterRuntime::run_with`]'s callback sees it.
pub struct Running<'a> {
    first: &'a Worker,
}

impl Running<'_> {
    /// The counters now: the first worker's, and the others' as last published (≤ 50 ms old).
    pub fn snapshot(&self) -> Snapshot {
        self.first.total()
    }
}

/// Where a Request's EID starts in its datagram, a ProofRequest's, and every answer's tag
/// (`docs/PROTOCOL.md`).
const REQUEST_EID_AT: u32 = 20;
const PROOF_REQUEST_EID_AT: u32 = 12;
const ANSWER_TAG_AT: u32 = rdtp_proto::wire::RESPONSE_TAG_AT as u32;

/// The program that steers datagrams among the workers' sockets (see the module docs):
/// socket `(first word of the EID) mod workers` for a Request and a ProofRequest — by
/// *what* is asked, not by who asks, as NDN-DPDK dispatches Interests to forwarding
/// threads by a hash of their name (the EID is a hash already) — and `tag mod workers` for
/// an answer, the worker that picked the tag of the request it answers. Resolves, lists
/// and anything else go by the kernel's usual hash of the addresses (an index past the
/// group). Words are read big-endian, as the codec writes them.
fn steering_program(workers: u32) -> Vec<libc::sock_filter> {
    use libc::{BPF_A, BPF_ABS, BPF_ALU, BPF_B, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_MOD, BPF_RET, BPF_W, sock_filter};
    let op = |code: u32, k: u32| sock_filter { code: code as u16, jt: 0, jf: 0, k };
    // Where the word that picks the socket is, by type; the checks come first, then the
    // fallback, then one three-instruction pick per offset, in this order.
    let answers = [
        PacketType::Data,
        PacketType::Nack,
        PacketType::ResolveResponse,
        PacketType::ListResponse,
        PacketType::Retry,
        PacketType::Proof,
    ];
    let picks = [ANSWER_TAG_AT, REQUEST_EID_AT, PROOF_REQUEST_EID_AT];
    let mut checks: Vec<(PacketType, usize)> = answers.iter().map(|&ty| (ty, 0)).collect();
    checks.push((PacketType::Request, 1));
    checks.push((PacketType::ProofRequest, 2));
    let mut prog = vec![op(BPF_LD | BPF_B | BPF_ABS, 3)];
    let first_pick = 1 + checks.len() + 1;
    for &(ty, pick) in &checks {
        // A jump lands `jt` instructions after the one following it.
        let jt = first_pick + 3 * pick - (prog.len() + 1);
        prog.push(sock_filter { code: (BPF_JMP | BPF_JEQ | BPF_K) as u16, jt: jt as u8, jf: 0, k: ty as u32 });
    }
    prog.push(op(BPF_RET | BPF_K, u32::MAX)); // no socket of that index: the usual hash
    for at in picks {
        prog.push(op(BPF_LD | BPF_W | BPF_ABS, at));
        prog.push(op(BPF_ALU | BPF_MOD | BPF_K, workers.max(1)));
        prog.push(op(BPF_RET | BPF_A, 0));
    }
    prog
}

/// Least pending units, staging bytes and known tree nodes a worker gets however many
/// share the configured totals (unless a total is smaller): every request for one object
/// goes to one worker, and these are what one fast fetch needs there — a window of a few
/// thousand units, blocks waiting for their proofs for a round trip (a 60 MB fetch at
/// 0.8 Gbit/s kept < 1 MiB staged), the nodes of a few objects' paths.
const WORKER_MIN_PIT: usize = 4096;
const WORKER_MIN_STAGING: usize = 4 << 20;
const WORKER_MIN_KNOWN_NODES: usize = 8192;

/// A worker's share of `total` among `workers`: `1/workers` of it, but at least `floor`
/// (or all of it, if smaller).
fn share(total: usize, workers: usize, floor: usize) -> usize {
    total.div_ceil(workers.max(1)).max(floor.min(total))
}

/// Bytes of verification staging a router with `config` on `workers` workers may hold in
/// all: each worker's share ([`RouteOptions::workers`]), summed; part of the memory budget
/// `rdtp route` prints.
pub fn staging_bytes(config: &RouterConfig, workers: usize) -> u64 {
    match workers {
        0 | 1 => config.verify.staging_bytes as u64,
        n => (share(config.verify.staging_bytes, n, WORKER_MIN_STAGING) * n) as u64,
    }
}

/// The configuration of worker `index` of `workers`: its share of the limits that are
/// per worker (pending units, staging, known nodes; the content store is shared, see the
/// module docs), its class of tags, its own randomness, learned routes exported when there
/// are others to teach.
/// The id of a router given none: `:PORT`, the port it listens on (`:7448`). Two routers on
/// one host, which differ by port, are told apart in every "served by" and refusal; a node
/// id is 8 bytes on the wire, too short for an address with its port (routers on different
/// hosts that share a port need an id each).
pub fn default_id(local: SocketAddr) -> NodeId {
    NodeId::label(&format!(":{}", local.port())).expect(":PORT is 2 to 6 printable characters")
}

fn worker_config(config: &RouterConfig, index: usize, workers: usize) -> RouterConfig {
    let mut c = config.clone();
    if workers > 1 {
        c.pit_capacity = share(c.pit_capacity, workers, WORKER_MIN_PIT).max(1);
        c.verify.staging_bytes = share(c.verify.staging_bytes, workers, WORKER_MIN_STAGING);
        c.verify.known_nodes = share(c.verify.known_nodes, workers, WORKER_MIN_KNOWN_NODES);
        c.export_learned_routes = true;
        c.tags = TagClass { modulus: workers as u32, residue: index as u32 };
        let mix = (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        c.seed ^= mix;
    }
    c
}

impl RouterRuntime {
    /// Bind the sockets (see [`RouteOptions::listen`] and [`RouteOptions::workers`]).
    pub fn bind(mut options: RouteOptions) -> Result<Self> {
        // As a server's: a random secret unless one was given.
        crate::tokens::fill_secret(&mut options.config.validation)?;
        let workers = options.workers.max(1);
        let first = socket::bind_server(options.listen).map_err(|e| {
            let addr = options.listen.map_or_else(|| format!("[::]:{}", socket::DEFAULT_PORT), |a| a.to_string());
            Error::network(format!("cannot listen on {addr}"), e)
        })?;
        let local = first.local_addr().map_err(|e| Error::network("getsockname", e))?;
        if options.config.id == NodeId::UNKNOWN {
            options.config.id = default_id(local);
        }
        let mut downs = vec![first];
        if workers > 1 {
            socket::set_reuse_port(&downs[0]).map_err(|e| Error::network("SO_REUSEPORT", e))?;
            for _ in 1..workers {
                downs.push(
                    socket::bind_reuse_port(local)
                        .map_err(|e| Error::network(format!("cannot add a worker socket on {local}"), e))?,
                );
            }
            socket::steer_reuse_port(&downs[0], &mut steering_program(workers as u32)).map_err(|e| {
                Error::network("cannot steer requests between the workers (SO_ATTACH_REUSEPORT_CBPF)", e)
            })?;
        }
        let board = Arc::new(Board { slots: (0..workers).map(|_| Mutex::new(Snapshot::default())).collect() });
        // Bounded as the forwarding table's learned routes are: a worker that has not
        // drained (no traffic) cannot be made to hold more than it would keep anyway.
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..workers).map(|_| sync_channel(LEARNED_ROUTES)).unzip();
        let clock = Clock::new();
        // One content store for all (see the module docs).
        let store = RouterStore::new(options.config.cs.clone());
        let mut built = Vec::with_capacity(workers);
        for (index, (down, routes_in)) in downs.into_iter().zip(receivers).enumerate() {
            let routes_out = senders.iter().enumerate().filter(|&(i, _)| i != index).map(|(_, s)| s.clone()).collect();
            built.push(Worker {
                index,
                sock: Sock::new(down)?,
                core: Router::with_store(worker_config(&options.config, index, workers), store.clone()),
                clock,
                stop: StopSignal::new()?,
                socket_stats: SocketStats::default(),
                board: board.clone(),
                routes_in,
                routes_out,
            });
        }
        let mut built = built.into_iter();
        let first = built.next().expect("at least one worker");
        Ok(RouterRuntime { first, others: built.collect() })
    }

    /// The address the listening sockets are bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.first.sock.local
    }

    /// The node id the router names itself by in what it serves and refuses.
    pub fn id(&self) -> NodeId {
        self.first.core.id()
    }

    /// Set (or clear) the default route of every worker before it runs: e.g. for two
    /// routers that route to each other, each bound before the other's address is known.
    pub fn set_default_route(&mut self, next_hop: Option<SocketAddr>) {
        for w in std::iter::once(&mut self.first).chain(self.others.iter_mut()) {
            w.core.fib_mut().set_default(next_hop);
        }
    }

    /// Routing threads (router cores).
    pub fn workers(&self) -> usize {
        1 + self.others.len()
    }

    /// The counters now (of every worker).
    pub fn snapshot(&self) -> Snapshot {
        let mut s = self.first.snapshot();
        for w in &self.others {
            s.add(&w.snapshot());
        }
        s
    }

    /// Route until [`RouterHandle::stop`] (for [`spawn`]ed routers) or forever.
    pub fn run(&mut self) -> Result<Snapshot> {
        self.run_with(None, |_| Next::Continue(None))
    }

    /// Route until `each` — called in the first worker after every wake-up, and at least as
    /// often as it asks — says [`Next::Stop`]. With `signals`, their mask is installed
    /// during waits only (see `crate::socket::wait`), so signals blocked elsewhere interrupt
    /// a wait at once, and pending ones are delivered on every turn, so a router too busy
    /// ever to wait still sees them; the other workers' threads start with them blocked.
    /// Returns the counters of all workers.
    pub fn run_with(
        &mut self,
        signals: Option<&signals::Blocked>,
        mut each: impl FnMut(&Running<'_>) -> Next,
    ) -> Result<Snapshot> {
        let mut running = Vec::with_capacity(self.others.len());
        for mut w in self.others.drain(..) {
            let stopper = w.stop.remote()?;
            let addr = w.sock.local;
            running.push(Background::spawn("rdtp-router", addr, stopper, move || {
                w.run(None, &mut |_| Next::Continue(None))
            })?);
        }
        let result = self.first.run(signals, &mut |w| each(&Running { first: w }));
        let mut total = result?;
        for r in running {
            total.add(&r.stop()?);
        }
        Ok(total)
    }
}

impl Worker {
    /// This worker's counters now.
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            elapsed_s: self.clock.now().as_secs_f64(),
            router: self.core.stats().clone(),
            cs: self.core.cs_stats(),
            cs_entries: self.core.cs_len(),
            cs_bytes: self.core.cs_bytes(),
            pit_entries: self.core.pit_len(),
            staging_bytes: self.core.staging_bytes(),
            socket: SocketStats {
                datagrams_per_worker: vec![self.socket_stats.datagrams_in],
                ..self.socket_stats.clone()
            },
        }
    }

    /// This worker's counters now and the others' as last published.
    fn total(&self) -> Snapshot {
        let mut s = self.snapshot();
        for (i, slot) in self.board.slots.iter().enumerate() {
            if i != self.index {
                s.add(&slot.lock().unwrap_or_else(|p| p.into_inner()));
            }
        }
        s
    }

    fn publish(&self) {
        *self.board.slots[self.index].lock().unwrap_or_else(|p| p.into_inner()) = self.snapshot();
    }

    /// Receive what waits on the socket and hand it to the core: whether anything (or an
    /// error) came.
    fn receive(&mut self, batch: &mut RecvBatch) -> bool {
        let s = &self.sock;
        match batch.recv(&s.state, &s.sock) {
            Ok(_) => {
                // Routes the other workers learned before these datagrams were received.
                while let Ok((eid, hop)) = self.routes_in.try_recv() {
                    self.core.learn_route(eid, hop);
                }
                for (src, _, dgram) in batch.datagrams() {
                    self.socket_stats.datagrams_in += 1;
                    self.core.handle_datagram(self.clock.now(), socket::canonical(src), dgram);
                }
                true
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => false,
            // ICMP errors for earlier sends and the like: not fatal for a router.
            Err(e) => {
                tracing::debug!("recv: {e}");
                true
            }
        }
    }

    /// Send what the core has to send, requests and answers alike, from the listening
    /// address (see the module docs), in two GSO batches: the core's queue interleaves the
    /// Data for a downstream with the requests and proof requests for an upstream, and one
    /// batch would be sent at every change of destination (≈ 6 datagrams per `sendmsg` on a
    /// cold fetch), the receiver then getting as few per GRO read. Each datagram joins the
    /// batch for its destination, or an empty one; a third destination sends the first
    /// batch. Datagrams to one destination keep their order; every batch leaves by the end
    /// of the turn.
    fn transmit(&mut self, outs: &mut [GsoBatch; 2]) {
        let s = &self.sock;
        let now = self.clock.now();
        while let Some(to) = self.core.next_transmit_to() {
            let to = socket::for_socket(to, s.local);
            let i = match outs.iter().position(|o| o.holds(to, None)) {
                Some(i) => i,
                None => outs.iter().position(GsoBatch::is_empty).unwrap_or_else(|| {
                    outs[0].flush(&s.state, &s.sock);
                    0
                }),
            };
            let Some(t) = self.core.poll_transmit(now, outs[i].space()) else { break };
            outs[i].commit_to(&s.state, &s.sock, to, None, t.len);
        }
        for out in outs.iter_mut() {
            out.flush(&s.state, &s.sock);
        }
        self.socket_stats.sends = outs.iter().map(|o| o.sends).sum();
        self.socket_stats.send_drops = outs.iter().map(|o| o.dropped).sum();
    }

    /// Route until stopped or `each` says [`Next::Stop`].
    fn run(&mut self, signals: Option<&signals::Blocked>, each: &mut dyn FnMut(&Worker) -> Next) -> Result<Snapshot> {
        let sigmask: Option<SigSet> = signals.map(signals::Blocked::wait_mask);
        let (mut batch, mut out) = (RecvBatch::new(), [GsoBatch::new(), GsoBatch::new()]);
        let shared = !self.routes_out.is_empty();
        let (mut published, mut dirty) = (Instant::now(), false);
        loop {
            if let Some(b) = signals {
                b.deliver_pending();
            }
            if self.core.poll_timeout().is_some_and(|t| t <= self.clock.now()) {
                self.core.handle_timeout(self.clock.now());
            }
            let received = self.receive(&mut batch);
            if shared {
                // Before anything learned is answered downstream (see the module docs).
                while let Some(route) = self.core.poll_learned_route() {
                    for tx in &self.routes_out {
                        // Full: that worker is behind by a whole table of routes; the oldest
                        // would be forgotten anyway, so this one is dropped instead.
                        if let Err(TrySendError::Full(_)) = tx.try_send(route) {
                            tracing::debug!("a router worker's route channel is full");
                        }
                    }
                }
            }
            self.transmit(&mut out);
            dirty |= received;
            if shared && dirty && published.elapsed() >= PUBLISH_EVERY {
                self.publish();
                (published, dirty) = (Instant::now(), false);
            }
            let Next::Continue(wake_within) = each(self) else { break };
            if self.stop.requested() {
                break;
            }
            if received {
                continue;
            }
            let deadline = self.core.poll_timeout().map(|t| self.clock.until(t));
            let publish_within = (shared && dirty).then(|| PUBLISH_EVERY.saturating_sub(published.elapsed()));
            let timeout = [deadline, wake_within, publish_within].into_iter().flatten().min();
            let r = socket::wait_readable(&[&self.sock.sock], self.stop.wake_fd(), timeout, sigmask)
                .map_err(|e| Error::network("poll", e))?;
            if r.wake {
                self.stop.drain();
            }
        }
        Ok(self.snapshot())
    }
}

/// A router running in a background thread. Dropping the handle stops it.
pub type RouterHandle = Background<Snapshot>;

/// Run a router in a background thread.
///
/// ```
/// use rdtp::router::{spawn, RouteOptions};
/// use rdtp_proto::router::{RouterConfig, fib::Fib};
///
/// let upstream = "127.0.0.1:7447".parse().unwrap();
/// let config = RouterConfig { fib: Fib::new(Some(upstream)), ..RouterConfig::default() };
/// let router = spawn(RouteOptions { listen: Some("127.0.0.1:0".parse().unwrap()), config, workers: 2 }).unwrap();
/// println!("routing on {}", router.local_addr());
/// let stats = router.stop().unwrap();
/// assert_eq!(stats.router.requests, 0);
/// ```
pub fn spawn(options: RouteOptions) -> Result<RouterHandle> {
    RouterRuntime::bind(options)?.spawn()
}

impl RouterRuntime {
    /// Run this (bound) router in a background thread, as [`spawn`] does: e.g. after
    /// [`RouterRuntime::set_default_route`].
    pub fn spawn(mut self) -> Result<RouterHandle> {
        let addr = self.local_addr();
        let stopper = self.first.stop.remote()?;
        Background::spawn("rdtp-router", addr, stopper, move || self.run())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run a classic BPF program of the instructions `steering_program` uses on `packet`,
    /// as the kernel does: a load past the end ends the program with 0.
    fn run_bpf(prog: &[libc::sock_filter], packet: &[u8]) -> u32 {
        use libc::{BPF_ABS, BPF_ALU, BPF_B, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_MOD, BPF_RET, BPF_W};
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let i = prog[pc];
            let code = u32::from(i.code);
            pc += 1;
            if code == BPF_LD | BPF_B | BPF_ABS {
                let Some(&b) = packet.get(i.k as usize) else { return 0 };
                a = u32::from(b);
            } else if code == BPF_LD | BPF_W | BPF_ABS {
                let Some(w) = packet.get(i.k as usize..i.k as usize + 4) else { return 0 };
                a = u32::from_be_bytes(w.try_into().unwrap());
            } else if code == BPF_JMP | BPF_JEQ | BPF_K {
                pc += usize::from(if a == i.k { i.jt } else { i.jf });
            } else if code == BPF_ALU | BPF_MOD | BPF_K {
                a %= i.k;
            } else if code == BPF_RET | libc::BPF_A {
                return a;
            } else if code == BPF_RET | BPF_K {
                return i.k;
            } else {
                panic!("instruction {code:#x} not expected");
            }
        }
    }

    #[test]
    fn the_steering_program_picks_the_eids_worker_for_requests_and_the_tags_for_answers() {
        use rdtp_proto::wire::{
            ByteRange, Data, DataFlags, ListRequest, ListResponseBuilder, Nack, NackCode, Options, Proof, ProofRequest,
            Query, Request, RequestFlags, ResolveRequest, ResolveResponse, Retry,
        };
        use rdtp_proto::{Eid, NodeId};
        let eid = Eid::of(b"steer");
        let word = u32::from_be_bytes(eid.0[..4].try_into().unwrap());
        let tag = 0x8765_4321u32;
        let id = NodeId::label("r").unwrap();
        let mut datagrams: Vec<(&str, Vec<u8>, Option<u32>)> = Vec::new();
        let mut b = vec![0u8; 2048];
        let mut add = |what, n: usize, b: &[u8], picks| datagrams.push((what, b[..n].to_vec(), picks));
        let range = ByteRange::new(1 << 30, 1402);
        let r = Request {
            flags: RequestFlags(0),
            hop_limit: 32,
            unit: 1402,
            tag,
            nonce: 9,
            eid,
            range,
            options: Options::EMPTY,
        };
        add("request", r.encode(&mut b).unwrap(), &b, Some(word));
        let p = ProofRequest {
            flags: RequestFlags(0),
            hop_limit: 32,
            tag,
            eid,
            block: 3,
            depth: 1,
            options: Options::EMPTY,
        };
        add("proof request", p.encode(&mut b).unwrap(), &b, Some(word));
        let d = Data {
            flags: DataFlags(0),
            hops: 0,
            tag,
            eid,
            offset: 0,
            total_size: 10,
            served_by: id,
            options: Options::EMPTY,
            payload: b"0123456789",
        };
        add("data", d.encode(&mut b).unwrap(), &b, Some(tag));
        let n = Nack { code: NackCode::NoRoute, hops: 0, tag, eid, offset: 0, length: 0, from: id, detail: "x" };
        add("nack", n.encode(&mut b).unwrap(), &b, Some(tag));
        add("retry", Retry { tag, token: &[7; 32] }.encode(&mut b).unwrap(), &b, Some(tag));
        let rr = ResolveResponse { tag, eid, size: 10, name: "a" };
        add("resolve response", rr.encode(&mut b).unwrap(), &b, Some(tag));
        add("list response", ListResponseBuilder::new(&mut b).unwrap().finish(tag, 0, 0, false), &b, Some(tag));
        let pr = Proof { hops: 0, tag, eid, block: 3, served_by: id, siblings: &[1; 32] };
        add("proof", pr.encode(&mut b).unwrap(), &b, Some(tag));
        let q = ResolveRequest { hop_limit: 32, tag, query: Query::Name("a"), options: Options::EMPTY };
        add("resolve", q.encode(&mut b).unwrap(), &b, None);
        let l = ListRequest { hop_limit: 32, tag, cursor: 0, options: Options::EMPTY };
        add("list", l.encode(&mut b).unwrap(), &b, None);
        add("not rdtp", 16, &[0xff; 16], None);
        for workers in [1u32, 2, 3, 7] {
            let prog = steering_program(workers);
            for (what, d, word) in &datagrams {
                let want = word.map_or(u32::MAX, |w| w % workers);
                assert_eq!(run_bpf(&prog, d), want, "{what} with {workers} workers");
            }
            // Too short to read the type or the word: 0, as the kernel ends the program.
            assert_eq!(run_bpf(&prog, &datagrams[0].1[..3]), 0);
            assert_eq!(run_bpf(&prog, &datagrams[0].1[..10]), 0);
        }
        assert_eq!(REQUEST_EID_AT as usize, 20);
    }

    #[test]
    fn worker_i_picks_tags_its_socket_is_steered() {
        let config = RouterConfig::default();
        for workers in [2, 3] {
            for i in 0..workers {
                let c = worker_config(&config, i, workers);
                assert_eq!(c.tags, TagClass { modulus: workers as u32, residue: i as u32 });
                assert_eq!(c.cs, config.cs, "the store is shared, not divided");
                assert_eq!(c.pit_capacity, config.pit_capacity.div_ceil(workers));
                assert_eq!(c.verify.staging_bytes, config.verify.staging_bytes.div_ceil(workers));
            }
        }
        assert_eq!(worker_config(&config, 0, 1).tags, TagClass::default());
        assert_eq!(staging_bytes(&config, 2), 32 << 20);
        // Many workers: each keeps what one fast fetch needs; the totals grow.
        let c = worker_config(&config, 5, 64);
        assert_eq!((c.pit_capacity, c.verify.staging_bytes, c.verify.known_nodes), (4096, 4 << 20, 8192));
        assert_eq!(staging_bytes(&config, 64), 64 * (4 << 20));
        // A total smaller than the floor is not raised.
        let small = RouterConfig { pit_capacity: 100, ..RouterConfig::default() };
        assert_eq!(worker_config(&small, 0, 64).pit_capacity, 100);
    }

    #[test]
    fn rates_divide_counters_and_keep_gauges() {
        let a = Snapshot { elapsed_s: 1.0, cs_entries: 5, ..Snapshot::default() };
        let mut b = Snapshot { elapsed_s: 3.0, cs_entries: 9, cs_bytes: 900, ..Snapshot::default() };
        b.router.cs_hits = 40;
        b.socket.datagrams_in = 100;
        let r = b.rates_since(&a);
        assert_eq!(r["router"]["cs_hits"], serde_json::json!(20.0));
        assert_eq!(r["socket"]["datagrams_in"], serde_json::json!(50.0));
        assert_eq!(r["cs_entries"], serde_json::json!(9));
        assert_eq!(r["cs_bytes"], serde_json::json!(900));
        assert!(b.to_string().contains("CS 40 hits, 0 misses (100.0 % hits)"));
    }
}
