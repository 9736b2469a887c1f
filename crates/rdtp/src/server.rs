//! The server runtime: UDP sockets, one thread per socket, each with the stateless
//! [`rdtp_proto::server::Server`] core and a view of the [`Catalog`].
//!
//! Requests arrive in batches (`recvmmsg`, GRO split by stride); each is handed to the
//! core and its reply datagrams go back to the request's source, equal-size Data packets
//! coalesced into GSO sends. The runtime keeps **no per-client state** — no maps keyed by
//! address, no sessions: its memory is the catalogue plus fixed buffers, whatever the
//! number of receivers (the paper's central claim about the sender).
//!
//! # Workers
//!
//! [`ServeOptions::workers`] loops serve at once, each on its own thread and its own socket
//! bound to the same address with `SO_REUSEPORT`: the kernel spreads sources over the
//! sockets by a hash of their addresses, so a receiver talks to one worker for as long as
//! its address stays the same. Because the server keeps no per-receiver state, the workers
//! share nothing on the hot path: each has its own core, buffers and read windows
//! ([`Parallel::worker`]); they share the token secret (a token one worker minted is valid
//! at all) and the clock. The first socket is bound without `SO_REUSEPORT`, so a port
//! another server already holds is refused as before rather than shared. A send budget
//! (`--max-rate`) is the server's total: the cores are [`Server::worker`]s of one another
//! and share one set of token buckets (a lock taken once per request for Data), so a lone
//! source gets all of it whichever worker the kernel hands it to, and several sources
//! share it evenly across workers (issue 23, item 3).
//!
//! Run it in the current thread with [`ServerRuntime::run`] (the `rdtp serve` command
//! stops it on SIGINT/SIGTERM with [`ServerRuntime::run_until_signal`]) or in a background
//! thread with [`spawn`], which returns a [`ServerHandle`] to stop it. Workers beyond the
//! first run on threads of their own, started and stopped with it.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::SigSet;
use quinn_udp::UdpSocketState;
use rdtp_proto::server::{Catalog, Server, ServerConfig, ServerStats};

use crate::background::{Background, StopSignal};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::signals;
use crate::socket::{self, GsoBatch, RecvBatch};

/// Runtime settings of a server.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// Address to bind; `None` = `[::]:7447` dual-stack, else `0.0.0.0:7447`.
    pub listen: Option<SocketAddr>,
    /// The core's limits and address validation. A validation secret left all zeros (the
    /// default) is replaced by a random one at bind, so tokens cannot be minted by others
    /// and die with the process.
    pub config: ServerConfig,
    /// Serving threads, each with its own socket (see the module docs); 0 counts as 1.
    pub workers: usize,
    /// Wake-up coalescing (interrupt moderation, as `ethtool -C rx-usecs` for a NIC): after
    /// answering a batch, a worker whose socket is empty sleeps this long before it looks
    /// again, so the requests that come meanwhile are taken in one batch instead of one
    /// wake-up each; it waits in `poll` only if they did not come. Each request may wait up
    /// to this long more. Zero (the default): wait in `poll` at once.
    pub coalesce: Duration,
}

/// Serving threads that use every core this process may run on.
pub fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Aggregate counters of a finished server run: the core's plus the socket's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// The core's counters.
    pub core: ServerStats,
    /// Datagrams received.
    pub datagrams_in: u64,
    /// `sendmsg` calls (one per GSO batch).
    pub sends: u64,
    /// Reply datagrams dropped because the socket stayed full or sending failed.
    pub send_drops: u64,
    /// Datagrams received by each worker, in the order of their sockets.
    pub datagrams_per_worker: Vec<u64>,
    /// Waits in `poll` for a datagram (each ends in a wake-up).
    pub waits: u64,
    /// Sleeps of [`ServeOptions::coalesce`] after a batch.
    pub coalesced_sleeps: u64,
}

impl RunStats {
    /// Add another worker's counters.
    fn add(&mut self, o: &RunStats) {
        self.core.add(&o.core);
        self.datagrams_in += o.datagrams_in;
        self.sends += o.sends;
        self.send_drops += o.send_drops;
        self.datagrams_per_worker.extend_from_slice(&o.datagrams_per_worker);
        self.waits += o.waits;
        self.coalesced_sleeps += o.coalesced_sleeps;
    }
}

impl std::fmt::Display for RunStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.core;
        write!(
            f,
            "{} datagrams in; {} requests, {} resolves, {} lists; {} data packets ({:.1} kB) in {} sends; \
             {} nacks, {} malformed, {} dropped, {} send drops; {} waits, {} coalescing sleeps",
            self.datagrams_in,
            c.requests,
            c.resolves,
            c.lists,
            c.data_packets,
            c.data_bytes as f64 / 1000.0,
            self.sends,
            c.nacks,
            c.malformed,
            c.dropped,
            self.send_drops,
            self.waits,
            self.coalesced_sleeps
        )
    }
}

/// What a server runtime serves: a catalogue, which may be replaced while the server runs
/// (a directory whose files change, [`crate::DirCatalog`]). A fixed catalogue is served as
/// an `Arc<C>`.
pub trait Served {
    /// The catalogue type.
    type Catalog: Catalog + ?Sized;
    /// The catalogue to answer the next datagrams from.
    fn catalog(&self) -> &Self::Catalog;
    /// Take up changes prepared in the background. The runtimes call it between datagrams
    /// (no answer borrows the catalogue then); it must not block.
    fn refresh(&mut self) {}
}

impl<C: Catalog + ?Sized> Served for Arc<C> {
    type Catalog = C;
    fn catalog(&self) -> &C {
        self
    }
}

/// What several serving threads can serve at once: each worker gets its own handle, which
/// sees the same objects (and, after its own [`Served::refresh`], the same changes).
pub trait Parallel: Served {
    /// A worker's handle.
    type Worker: Served<Catalog = Self::Catalog> + Send + 'static;
    /// A handle for one more worker thread.
    fn worker(&self) -> Self::Worker;
}

impl<C: Catalog + Send + Sync + ?Sized + 'static> Parallel for Arc<C> {
    type Worker = Arc<C>;
    fn worker(&self) -> Arc<C> {
        self.clone()
    }
}

/// One serving loop: a socket, a core, a handle on the catalogue.
struct Worker<S> {
    sock: UdpSocket,
    state: UdpSocketState,
    core: Server,
    clock: Clock,
    source: S,
    stop: StopSignal,
    stats: RunStats,
    /// [`ServeOptions::coalesce`].
    coalesce: Duration,
}

/// A bound server, ready to run: its first worker runs in the thread that runs it, the
/// others (bound already, so the port is theirs) on threads started by the run.
pub struct ServerRuntime<S: Parallel> {
    first: Worker<S>,
    others: Vec<Worker<S::Worker>>,
}

impl<S: Parallel> ServerRuntime<S> {
    /// Bind the sockets (see [`ServeOptions::listen`] and [`ServeOptions::workers`]).
    pub fn bind(source: S, mut options: ServeOptions) -> Result<Self> {
        crate::tokens::fill_secret(&mut options.config.validation)?;
        // The fair-share slots' hash key: secret too, so nobody can aim at another's slot.
        options.config.share.key = blake3::derive_key("rdtp fair-share slots", &options.config.validation.secret);
        let workers = options.workers.max(1);
        let sock = socket::bind_server(options.listen).map_err(|e| {
            let addr = options.listen.map_or_else(|| format!("[::]:{}", socket::DEFAULT_PORT), |a| a.to_string());
            Error::network(format!("cannot listen on {addr}"), e)
        })?;
        let clock = Clock::new();
        let mut cores = cores(options.config, workers).into_iter();
        let first_core = cores.next().expect("at least one core");
        let mut others = Vec::with_capacity(workers - 1);
        if workers > 1 {
            let local = sock.local_addr().map_err(|e| Error::network("getsockname", e))?;
            socket::set_reuse_port(&sock).map_err(|e| Error::network("SO_REUSEPORT", e))?;
            for core in cores {
                let s = socket::bind_reuse_port(local)
                    .map_err(|e| Error::network(format!("cannot add a worker socket on {local}"), e))?;
                others.push(Worker::new(s, core, clock, source.worker(), options.coalesce)?);
            }
        }
        Ok(ServerRuntime { first: Worker::new(sock, first_core, clock, source, options.coalesce)?, others })
    }

    /// The address the sockets are bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.first.sock.local_addr()
    }

    /// Serving threads (sockets).
    pub fn workers(&self) -> usize {
        1 + self.others.len()
    }

    /// The catalogue being served now (by the first worker).
    pub fn catalog(&self) -> &S::Catalog {
        self.first.source.catalog()
    }

    /// Serve until [`ServerHandle::stop`] (for [`spawn`]ed servers) or forever.
    pub fn run(&mut self) -> Result<RunStats> {
        self.run_all(None)
    }

    /// Serve until SIGINT or SIGTERM arrives (installs handlers for both and blocks them
    /// outside the wait, so a signal is never missed, even while the server is too busy
    /// ever to wait). The other workers' threads start with the signals blocked, so the
    /// first worker's wait is where they arrive.
    pub fn run_until_signal(&mut self) -> Result<RunStats> {
        let flag = signals::Flag::on(&signals::STOP).map_err(|e| Error::network("sigaction", e))?;
        let blocked = signals::Blocked::new(&signals::STOP).map_err(|e| Error::network("sigprocmask", e))?;
        self.run_all(Some((&flag, &blocked)))
    }

    /// Start the other workers, run the first here, then stop the others; the counters of all.
    fn run_all(&mut self, signals: Option<(&signals::Flag, &signals::Blocked)>) -> Result<RunStats> {
        let mut running = Vec::with_capacity(self.others.len());
        for mut w in self.others.drain(..) {
            let addr = w.sock.local_addr().map_err(|e| Error::network("getsockname", e))?;
            let stopper = w.stop.remote()?;
            running.push(Background::spawn("rdtp-server", addr, stopper, move || w.run_loop(None))?);
        }
        let first = self.first.run_loop(signals);
        let mut total = first?;
        for r in running {
            total.add(&r.stop()?);
        }
        Ok(total)
    }
}

/// The cores of a server with `workers` serving threads: the first made from `config`, the
/// others its [`Server::worker`]s — one token secret and one send budget between them.
fn cores(config: ServerConfig, workers: usize) -> Vec<Server> {
    let first = Server::new(config);
    let others: Vec<Server> = (1..workers.max(1)).map(|_| first.worker()).collect();
    core::iter::once(first).chain(others).collect()
}

impl<S: Served> Worker<S> {
    fn new(sock: UdpSocket, core: Server, clock: Clock, source: S, coalesce: Duration) -> Result<Self> {
        let state = socket::udp_state(&sock).map_err(|e| Error::network("cannot set up the UDP socket", e))?;
        let stats = RunStats::default();
        Ok(Worker { sock, state, core, clock, source, stop: StopSignal::new()?, stats, coalesce })
    }

    /// Whether to stop: asked by the handle, or (with `signals`) one of the signals came —
    /// pending ones are delivered first, since a busy loop never waits with them unblocked.
    fn should_stop(&self, signals: Option<(&signals::Flag, &signals::Blocked)>) -> bool {
        if self.stop.requested() {
            return true;
        }
        signals.is_some_and(|(flag, blocked)| {
            blocked.deliver_pending();
            flag.raised()
        })
    }

    /// Serve until stopped (or, with `signals`, until that flag is raised: its signals are
    /// blocked outside the wait, which uses the mask of the [`signals::Blocked`]).
    fn run_loop(&mut self, signals: Option<(&signals::Flag, &signals::Blocked)>) -> Result<RunStats> {
        let sigmask: Option<SigSet> = signals.map(|s| s.1.wait_mask());
        let mut batch = RecvBatch::new();
        let mut out = GsoBatch::new();
        // A batch was answered since the last wait: with coalescing, sleep before waiting.
        let mut answered = false;
        'serve: while !self.should_stop(signals) {
            self.source.refresh();
            match batch.recv(&self.state, &self.sock) {
                Ok(_) => {
                    answered = true;
                    let now = self.clock.now();
                    for (i, (src, dst_ip, dgram)) in batch.datagrams().enumerate() {
                        // A batch can hold hundreds of requests (GRO), each answered with up
                        // to a MiB: look for a stop now and then within it too.
                        if i % STOP_CHECK_EVERY == STOP_CHECK_EVERY - 1 && self.should_stop(signals) {
                            break 'serve;
                        }
                        self.stats.datagrams_in += 1;
                        let mut reply = self.core.handle(now, src, self.source.catalog(), dgram);
                        out.begin(&self.state, &self.sock, src, dst_ip);
                        while let Some(n) = reply.next_datagram(out.space()) {
                            out.commit(&self.state, &self.sock, n);
                        }
                        out.flush(&self.state, &self.sock);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && answered && !self.coalesce.is_zero() => {
                    answered = false;
                    self.stats.coalesced_sleeps += 1;
                    std::thread::sleep(self.coalesce);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    answered = false;
                    self.stats.waits += 1;
                    let r = socket::wait(&self.sock, false, Some(self.stop.wake_fd()), None, sigmask)
                        .map_err(|e| Error::network("poll", e))?;
                    if r.wake {
                        self.stop.drain();
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // ICMP errors for earlier replies and the like: not fatal for a server.
                Err(e) => tracing::debug!("recv: {e}"),
            }
        }
        self.stats.core = self.core.stats().clone();
        self.stats.sends = out.sends;
        self.stats.send_drops = out.dropped;
        self.stats.datagrams_per_worker = vec![self.stats.datagrams_in];
        Ok(self.stats.clone())
    }
}

/// Datagrams of one receive batch between two checks for a stop (a `sigpending` call each).
const STOP_CHECK_EVERY: usize = 16;

/// A server running in a background thread. Dropping the handle stops it.
pub type ServerHandle = Background<RunStats>;

/// Run a server on `source` (an `Arc` of a catalogue, or a [`crate::DirCatalog`]) in a
/// background thread.
///
/// ```
/// use std::sync::Arc;
/// use rdtp::server::{spawn, ServeOptions};
/// use rdtp_proto::server::MemoryCatalog;
///
/// let catalog = Arc::new(MemoryCatalog::new([("hello".to_string(), b"hi".to_vec())]));
/// let opts = ServeOptions { listen: Some("127.0.0.1:0".parse().unwrap()), ..Default::default() };
/// let server = spawn(catalog, opts).unwrap();
/// println!("listening on {}", server.local_addr());
/// let stats = server.stop().unwrap();
/// assert_eq!(stats.core.requests, 0);
/// ```
pub fn spawn<S: Parallel + Send + 'static>(source: S, options: ServeOptions) -> Result<ServerHandle> {
    let mut rt = ServerRuntime::bind(source, options)?;
    let addr = rt.local_addr().map_err(|e| Error::network("getsockname", e))?;
    let stopper = rt.first.stop.remote()?;
    Background::spawn("rdtp-server", addr, stopper, move || rt.run())
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::time::Duration;

    use rdtp_proto::server::{Catalog, PatternCatalog, ShareConfig};
    use rdtp_proto::time::Time;
    use rdtp_proto::token::ValidationConfig;
    use rdtp_proto::wire::{ByteRange, Options, Request, RequestFlags};

    use super::*;

    const UNIT: u16 = 1402;
    const UNITS: u32 = 16;

    /// Cores as [`ServerRuntime::bind`] makes them, with a send budget of `rate` bytes/s.
    fn budgeted(rate: f64, workers: usize) -> Vec<Server> {
        let share = ShareConfig { rate: Some(rate), ..ShareConfig::default() };
        let validation = ValidationConfig { enabled: false, ..ValidationConfig::default() };
        cores(ServerConfig { share, validation, ..ServerConfig::default() }, workers)
    }

    /// Greedy sources, each always reaching the same core (as `SO_REUSEPORT` hands a source
    /// to one socket): source `i` asks core `route[i]` for 16 units every millisecond of
    /// virtual time for 2 s. Returns the bytes of Data each was sent.
    fn greedy(cores: &mut [Server], route: &[usize]) -> Vec<u64> {
        let cat = PatternCatalog::new([("obj".to_string(), 32 << 20, 1)]);
        let eid = cat.resolve("obj").unwrap().0;
        let mut got = vec![0u64; route.len()];
        let mut buf = vec![0u8; 65_536];
        for ms in 0..2000u64 {
            let now = Time::ZERO + Duration::from_millis(ms);
            for (i, &core) in route.iter().enumerate() {
                let from = SocketAddr::from(([10, 0, 0, 1 + i as u8], 4000));
                let span = UNITS * u32::from(UNIT);
                let req = Request {
                    flags: RequestFlags(0),
                    hop_limit: 1,
                    unit: UNIT,
                    tag: 1,
                    nonce: ms,
                    eid,
                    range: ByteRange::new((ms * u64::from(span)) % (16 << 20), span),
                    options: Options::EMPTY,
                };
                let mut d = vec![0u8; req.encoded_len()];
                req.encode(&mut d).unwrap();
                let mut reply = cores[core].handle(now, from, &cat, &d);
                if reply.is_data() {
                    while let Some(n) = reply.next_datagram(&mut buf) {
                        got[i] += n as u64;
                    }
                }
            }
        }
        got
    }

    /// Issue 23, item 3: `--max-rate` is the server's total. A lone source gets ≥ 90 % of it
    /// on any number of workers (0036bef split the rate between workers: 50 % on two); two
    /// sources on two workers share it evenly; the budget holds.
    #[test]
    fn the_send_budget_is_the_servers_total_across_workers() {
        let rate = 5e6;
        let whole = rate * 2.0;
        for workers in [1, 2, 4] {
            let mut c = budgeted(rate, workers);
            let lone = greedy(&mut c, &[workers - 1]);
            assert!(lone[0] as f64 >= 0.9 * whole, "{workers} workers: a lone source got {lone:?} of {whole}");
            assert!(lone[0] as f64 <= whole + 2.0 * rate * 0.02 + 30_000.0, "{workers} workers: {lone:?}");
        }
        let mut c = budgeted(rate, 2);
        let two = greedy(&mut c, &[0, 1]);
        let total: u64 = two.iter().sum();
        assert!(total as f64 >= 0.9 * whole && total as f64 <= whole + 2.0 * rate * 0.02 + 60_000.0, "{two:?}");
        for got in &two {
            assert!((0.4..=0.6).contains(&(*got as f64 / total as f64)), "an even split: {two:?}");
        }
        // Both cores saw the other's source: one count of active sources.
        assert_eq!((c[0].active_sources(), c[1].active_sources()), (2, 2));
    }
}
