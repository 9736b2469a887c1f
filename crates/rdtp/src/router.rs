//! The router runtime: one UDP socket, one thread, the [`rdtp_proto::router::Router`] core.
//!
//! Downstreams (receivers, routers nearer to them) and next hops (servers, routers nearer to
//! the content) all talk to the same socket, as NFD's UDP face does. Datagrams arrive in
//! batches (`recvmmsg` with GRO); the core's answers leave in GSO batches per destination.
//! The runtime adds no protocol logic: the core decides everything, the runtime moves bytes
//! and time and reports the core's counters ([`Snapshot`]).
//!
//! Run it in the current thread with [`RouterRuntime::run_with`] (the `rdtp route` command
//! does, with signal handling and periodic reports) or in a background thread with
//! [`spawn`].

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use nix::sys::signal::SigSet;
use quinn_udp::UdpSocketState;
use rdtp_proto::router::cs::CsStats;
use rdtp_proto::router::{Router, RouterConfig, RouterStats};
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
    /// The core's configuration: id, forwarding table, content store, tables' limits.
    pub config: RouterConfig,
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
}

/// Everything a router can report at one instant.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Snapshot {
    /// Seconds since the router started.
    pub elapsed_s: f64,
    /// The core's counters (totals).
    pub router: RouterStats,
    /// The content store's own counters.
    pub cs: CsStats,
    /// Units in the content store now.
    pub cs_entries: usize,
    /// Payload bytes in the content store now.
    pub cs_bytes: u64,
    /// Units pending now.
    pub pit_entries: usize,
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
/// the gauges (`*_entries`, `*_bytes` of the store) and the elapsed time are kept as they are.
fn per_second(now: &serde_json::Value, then: &serde_json::Value, dt: f64) -> serde_json::Value {
    use serde_json::Value;
    match (now, then) {
        (Value::Object(a), Value::Object(b)) => Value::Object(
            a.iter()
                .map(|(k, v)| {
                    let gauge = k == "elapsed_s" || k.ends_with("_entries") || k == "cs_bytes";
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

/// What the loop does after a wake-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Leave the loop.
    Stop,
    /// Go on; be called again within this long at the latest (`None`: whenever).
    Continue(Option<Duration>),
}

/// A bound router, ready to run.
pub struct RouterRuntime {
    sock: UdpSocket,
    state: UdpSocketState,
    local: SocketAddr,
    core: Router,
    clock: Clock,
    stop: StopSignal,
    socket_stats: SocketStats,
}

impl RouterRuntime {
    /// Bind the socket (see [`RouteOptions::listen`]).
    pub fn bind(mut options: RouteOptions) -> Result<Self> {
        // As a server's: a random secret unless one was given.
        crate::tokens::fill_secret(&mut options.config.validation)?;
        let sock = socket::bind_server(options.listen).map_err(|e| {
            let addr = options.listen.map_or_else(|| format!("[::]:{}", socket::DEFAULT_PORT), |a| a.to_string());
            Error::network(format!("cannot listen on {addr}"), e)
        })?;
        let local = sock.local_addr().map_err(|e| Error::network("getsockname", e))?;
        let state = socket::udp_state(&sock).map_err(|e| Error::network("cannot set up the UDP socket", e))?;
        Ok(RouterRuntime {
            sock,
            state,
            local,
            core: Router::new(options.config),
            clock: Clock::new(),
            stop: StopSignal::new()?,
            socket_stats: SocketStats::default(),
        })
    }

    /// The address the socket is bound to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The core.
    pub fn core(&self) -> &Router {
        &self.core
    }

    /// The counters now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            elapsed_s: self.clock.now().as_secs_f64(),
            router: self.core.stats().clone(),
            cs: *self.core.cs_stats(),
            cs_entries: self.core.cs_len(),
            cs_bytes: self.core.cs_bytes(),
            pit_entries: self.core.pit_len(),
            socket: self.socket_stats.clone(),
        }
    }

    /// Route until [`RouterHandle::stop`] (for [`spawn`]ed routers) or forever.
    pub fn run(&mut self) -> Result<Snapshot> {
        self.run_with(None, |_| Next::Continue(None))
    }

    /// Route until `each` — called after every wake-up, and at least as often as it asks —
    /// says [`Next::Stop`]. With `signals`, their mask is installed during waits only (see
    /// `crate::socket::wait`), so signals blocked elsewhere interrupt a wait at once, and
    /// pending ones are delivered on every turn, so a router too busy ever to wait still
    /// sees them.
    pub fn run_with(
        &mut self,
        signals: Option<&signals::Blocked>,
        mut each: impl FnMut(&Self) -> Next,
    ) -> Result<Snapshot> {
        let sigmask: Option<SigSet> = signals.map(signals::Blocked::wait_mask);
        let mut batch = RecvBatch::new();
        let mut out = GsoBatch::new();
        loop {
            if let Some(b) = signals {
                b.deliver_pending();
            }
            if self.core.poll_timeout().is_some_and(|t| t <= self.clock.now()) {
                self.core.handle_timeout(self.clock.now());
            }
            let received = match batch.recv(&self.state, &self.sock) {
                Ok(_) => {
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
            };
            while let Some(t) = self.core.poll_transmit(out.space()) {
                out.commit_to(&self.state, &self.sock, socket::for_socket(t.to, self.local), None, t.len);
            }
            out.flush(&self.state, &self.sock);
            self.socket_stats.sends = out.sends;
            self.socket_stats.send_drops = out.dropped;
            let wake_within = match each(self) {
                Next::Stop => break,
                Next::Continue(w) => w,
            };
            if self.stop.requested() {
                break;
            }
            if received {
                continue;
            }
            let deadline = self.core.poll_timeout().map(|t| self.clock.until(t));
            let timeout = match (deadline, wake_within) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let r = socket::wait(&self.sock, false, Some(self.stop.wake_fd()), timeout, sigmask)
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
/// let router = spawn(RouteOptions { listen: Some("127.0.0.1:0".parse().unwrap()), config }).unwrap();
/// println!("routing on {}", router.local_addr());
/// let stats = router.stop().unwrap();
/// assert_eq!(stats.router.requests, 0);
/// ```
pub fn spawn(options: RouteOptions) -> Result<RouterHandle> {
    let mut rt = RouterRuntime::bind(options)?;
    let addr = rt.local_addr();
    let stopper = rt.stop.remote()?;
    Background::spawn("rdtp-router", addr, stopper, move || rt.run())
}

#[cfg(test)]
mod tests {
    use super::*;

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
