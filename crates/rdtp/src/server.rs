//! The server runtime: one UDP socket, one thread, the stateless
//! [`rdtp_proto::server::Server`] core and a [`Catalog`].
//!
//! Requests arrive in batches (`recvmmsg`, GRO split by stride); each is handed to the
//! core and its reply datagrams go back to the request's source, equal-size Data packets
//! coalesced into GSO sends. The runtime keeps **no per-client state** — no maps keyed by
//! address, no sessions: its memory is the catalogue plus fixed buffers, whatever the
//! number of receivers (the paper's central claim about the sender).
//!
//! Run it in the current thread with [`ServerRuntime::run`] (the `rdtp serve` command
//! stops it on SIGINT/SIGTERM with [`ServerRuntime::run_until_signal`]) or in a background
//! thread with [`spawn`], which returns a [`ServerHandle`] to stop it.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;

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
}

impl std::fmt::Display for RunStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.core;
        write!(
            f,
            "{} datagrams in; {} requests, {} resolves, {} lists; {} data packets ({:.1} kB) in {} sends; \
             {} nacks, {} malformed, {} dropped, {} send drops",
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
            self.send_drops
        )
    }
}

/// A bound server, ready to run.
pub struct ServerRuntime<C: ?Sized> {
    sock: UdpSocket,
    state: UdpSocketState,
    core: Server,
    clock: Clock,
    catalog: Arc<C>,
    stop: StopSignal,
    stats: RunStats,
}

impl<C: Catalog + ?Sized> ServerRuntime<C> {
    /// Bind the socket (see [`ServeOptions::listen`]).
    pub fn bind(catalog: Arc<C>, mut options: ServeOptions) -> Result<Self> {
        crate::tokens::fill_secret(&mut options.config.validation)?;
        let sock = socket::bind_server(options.listen).map_err(|e| {
            let addr = options.listen.map_or_else(|| format!("[::]:{}", socket::DEFAULT_PORT), |a| a.to_string());
            Error::network(format!("cannot listen on {addr}"), e)
        })?;
        let state = socket::udp_state(&sock).map_err(|e| Error::network("cannot set up the UDP socket", e))?;
        Ok(ServerRuntime {
            sock,
            state,
            core: Server::new(options.config),
            clock: Clock::new(),
            catalog,
            stop: StopSignal::new()?,
            stats: RunStats::default(),
        })
    }

    /// The address the socket is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.sock.local_addr()
    }

    /// The catalogue being served.
    pub fn catalog(&self) -> &Arc<C> {
        &self.catalog
    }

    /// Serve until [`ServerHandle::stop`] (for [`spawn`]ed servers) or forever.
    pub fn run(&mut self) -> Result<RunStats> {
        self.run_loop(None)
    }

    /// Serve until SIGINT or SIGTERM arrives (installs handlers for both and blocks them
    /// outside the wait, so a signal is never missed).
    pub fn run_until_signal(&mut self) -> Result<RunStats> {
        let flag = signals::Flag::on(&signals::STOP).map_err(|e| Error::network("sigaction", e))?;
        let blocked = signals::Blocked::new(&signals::STOP).map_err(|e| Error::network("sigprocmask", e))?;
        self.run_loop(Some((&flag, blocked.wait_mask())))
    }

    fn should_stop(&self, signalled: Option<&signals::Flag>) -> bool {
        self.stop.requested() || signalled.is_some_and(signals::Flag::raised)
    }

    /// Serve until stopped (or, with `signals`, until that flag is raised: its signals are
    /// blocked outside the wait, which uses the given mask).
    fn run_loop(&mut self, signals: Option<(&signals::Flag, SigSet)>) -> Result<RunStats> {
        let (flag, sigmask) = (signals.map(|s| s.0), signals.map(|s| s.1));
        let mut batch = RecvBatch::new();
        let mut out = GsoBatch::new();
        while !self.should_stop(flag) {
            match batch.recv(&self.state, &self.sock) {
                Ok(_) => {
                    let now = self.clock.now();
                    for (src, dst_ip, dgram) in batch.datagrams() {
                        self.stats.datagrams_in += 1;
                        let mut reply = self.core.handle(now, src, &*self.catalog, dgram);
                        out.begin(&self.state, &self.sock, src, dst_ip);
                        while let Some(n) = reply.next_datagram(out.space()) {
                            out.commit(&self.state, &self.sock, n);
                        }
                        out.flush(&self.state, &self.sock);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
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
        Ok(self.stats.clone())
    }
}

/// A server running in a background thread. Dropping the handle stops it.
pub type ServerHandle = Background<RunStats>;

/// Run a server on `catalog` in a background thread.
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
pub fn spawn<C: Catalog + Send + Sync + ?Sized + 'static>(
    catalog: Arc<C>,
    options: ServeOptions,
) -> Result<ServerHandle> {
    let mut rt = ServerRuntime::bind(catalog, options)?;
    let addr = rt.local_addr().map_err(|e| Error::network("getsockname", e))?;
    let stopper = rt.stop.remote()?;
    Background::spawn("rdtp-server", addr, stopper, move || rt.run())
}
