//! Fetching one object: the [`Fetch`] builder and the [`FetchReader`] it starts.
//!
//! A fetch runs a [`Receiver`] (the sans-IO core) on a driver thread that owns a UDP
//! socket *connected* to the server. The driver loop only moves datagrams and time:
//!
//! 1. receive what is waiting (`recvmmsg` batches, GRO split by stride) into
//!    `handle_datagram(now, ..)` — before any deadline, so answers that came while the
//!    driver was not scheduled are not taken for lost;
//! 2. on due deadlines, `handle_timeout(now)`; then send everything `poll_transmit`
//!    yields and drain `poll_event` into the trace sinks (and back to 1 if 1 received);
//! 3. otherwise wait in `ppoll` (nanosecond timeout, timer slack 1 ns: pacing needs
//!    sub-millisecond wake-ups) for the socket, the next `poll_timeout` deadline, or the
//!    reader's wake-up (an eventfd written when reading freed receive-window space).
//!
//! The driver wakes a waiting reader once a take's worth of bytes (1 MiB, at most an eighth
//! of the receive window) is readable, or before it waits itself, or at the end — not after
//! every batch of datagrams.
//!
//! The receiver sits in an `Arc<Mutex<..>>` shared with the [`FetchReader`], which hands
//! out in-order bytes through [`std::io::Read`].
//!
//! [`Fetch::ndn`] fetches from an NDN node instead: the same driver moves datagrams and time
//! for [`rdtp_proto::ndn::Consumer`], the translator around the same receiver (the driver
//! sees either through the private `Core` trait, nothing more).
//!
//! With [`Fetch::stop_on_signals`] (what `rdtp fetch` does) SIGINT and SIGTERM end the
//! fetch with [`Error::Interrupted`]: the driver waits with them unblocked and looks for
//! pending ones on every turn ([`crate::signals`]), so the reader's caller can clean up
//! (remove a partial output file) instead of the process dying mid-write.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use nix::sys::eventfd::{EfdFlags, EventFd};
use quinn_udp::{Transmit, UdpSocketState};
use rdtp_proto::cc::CcConfig;
use rdtp_proto::ndn::{self, Consumer, ConsumerConfig};
use rdtp_proto::receiver::{CcSnapshot, Event, FetchError, Receiver, ReceiverConfig, Stats, Target};
use rdtp_proto::wire::{MAX_UNIT, MIN_UNIT, unit_for_mtu};
use rdtp_proto::{Eid, Node, Time};

use crate::clock::Clock;
use crate::error::{Error, Result, unreachable};
use crate::signals;
use crate::socket::{self, RecvBatch};
use crate::summary::{NdnSummary, Summary};
use crate::trace::TraceSinks;

/// Default link MTU used to size units.
pub const DEFAULT_MTU: usize = 1500;

/// The reader wakes the driver after freeing this many bytes of receive window (and
/// whenever it has read everything that was ready).
const WAKE_AFTER_BYTES: usize = 256 << 10;

/// Most bytes taken from the receiver at once (whole buffers, no copy under the lock).
const TAKE_BYTES: usize = 1 << 20;

/// While datagrams keep arriving, the driver wakes a waiting reader once this many bytes
/// are readable (a take's worth, at most an eighth of the receive window: unread bytes
/// count against the window, so the driver must not sit on many of them), not on every
/// verified group: each wake-up is a futex call and a thread switch on both sides (issue
/// 29). Before the driver itself waits, or when the fetch ends, it wakes the reader for
/// any readable byte, so a slow stream is handed out as soon as it verifies.
fn wake_reader_bytes(recv_window: u64) -> usize {
    usize::try_from(recv_window / 8).unwrap_or(usize::MAX).clamp(1, TAKE_BYTES)
}

#[derive(Clone, Copy, Debug)]
enum UnitChoice {
    Mtu(usize),
    Unit(u16),
}

/// Builder for one fetch. See the crate docs for an example.
#[derive(Debug)]
pub struct Fetch {
    server: SocketAddr,
    target: Target,
    config: ReceiverConfig,
    unit: UnitChoice,
    sinks: TraceSinks,
    trace: bool,
    initial_rate: Option<f64>,
    stop: Option<signals::Flag>,
    /// Fetch this NDN name from an NDN node ([`Fetch::ndn`]).
    ndn: Option<ndn::Name>,
    /// The local address to send from ([`Fetch::bind`]).
    bind: Option<SocketAddr>,
    /// The key NDN segments must be signed by ([`Fetch::trust_anchor`]).
    trust: Option<ndn::trust::TrustAnchor>,
}

impl Fetch {
    /// Fetch `target` from the server at `server`, with the receivers' defaults (the default
    /// controller `bbr3-rdtp`, docs/CONTROLLER.md; MTU 1500).
    pub fn new(server: SocketAddr, target: Target) -> Self {
        Fetch {
            server,
            target,
            config: ReceiverConfig { seed: crate::random_seed(), ..ReceiverConfig::default() },
            unit: UnitChoice::Mtu(DEFAULT_MTU),
            sinks: TraceSinks::default(),
            trace: false,
            initial_rate: None,
            stop: None,
            ndn: None,
            bind: None,
            trust: None,
        }
    }
    /// Fetch the segmented object `name` from the NDN node (a producer's or a forwarder's
    /// UDP face) at `node`, with the same receiver and controllers
    /// ([`rdtp_proto::ndn::Consumer`]); the unit is the object's segment size.
    pub fn ndn(node: SocketAddr, name: ndn::Name) -> Self {
        Fetch { ndn: Some(name), ..Fetch::new(node, Target::Name(String::new())) }
    }
    /// Send from this local address (an NDN forwarder's unicast UDP face expects its peer at
    /// a fixed address); default: any port.
    pub fn bind(mut self, local: SocketAddr) -> Self {
        self.bind = Some(local);
        self
    }
    /// With [`Fetch::ndn`]: accept only segments signed by this key (Ed25519 or ECDSA P-256,
    /// from an NDN certificate: [`ndn::trust::TrustAnchor::from_certificate`]); without one,
    /// segments signed otherwise than with DigestSha256 are taken and reported unverified.
    pub fn trust_anchor(mut self, anchor: ndn::trust::TrustAnchor) -> Self {
        self.trust = Some(anchor);
        self
    }
    /// Fetch the object called `name`.
    pub fn by_name(server: SocketAddr, name: impl Into<String>) -> Self {
        Fetch::new(server, Target::Name(name.into()))
    }
    /// Fetch the object with this EID.
    pub fn by_eid(server: SocketAddr, eid: Eid) -> Self {
        Fetch::new(server, Target::Eid(eid))
    }
    /// The congestion controller (default: `bbr3-rdtp`, [`rdtp_proto::cc::registry::DEFAULT`]).
    pub fn cc(mut self, cc: CcConfig) -> Self {
        self.config.cc = cc;
        self
    }
    /// Payload bytes per Data packet (overrides [`Fetch::mtu`]).
    pub fn unit(mut self, unit: u16) -> Self {
        self.unit = UnitChoice::Unit(unit);
        self
    }
    /// Size units to fit a link MTU (default 1500: 1402-byte units over IPv4, 1382 over IPv6).
    pub fn mtu(mut self, mtu: usize) -> Self {
        self.unit = UnitChoice::Mtu(mtu);
        self
    }
    /// Out-of-order arrivals that declare a unit lost (default 6).
    pub fn reorder_threshold(mut self, n: u32) -> Self {
        self.config.reorder_threshold = n;
        self
    }
    /// Floor of the retransmission timeout (default 200 ms).
    pub fn min_rto(mut self, d: Duration) -> Self {
        self.config.rto.min = d;
        self
    }
    /// Ceiling of the retransmission timeout (default 60 s).
    pub fn max_rto(mut self, d: Duration) -> Self {
        self.config.rto.max = d;
        self
    }
    /// RTTVAR multiplier K of the retransmission timeout `SRTT + K·RTTVAR` (default 4, RFC
    /// 6298; ndnget's `--rto-k` is 8).
    pub fn rto_k(mut self, k: u32) -> Self {
        self.config.rto.k = k;
        self
    }
    /// Most bytes requested but not yet read (default 64 MiB).
    pub fn recv_window(mut self, bytes: u64) -> Self {
        self.config.recv_window = bytes;
        self
    }
    /// Give up after this long without a valid answer from the server (default 10 s).
    pub fn idle_timeout(mut self, d: Duration) -> Self {
        self.config.idle_timeout = d;
        self
    }
    /// Seed of the receiver's randomness (default: drawn from the OS, so two fetches never
    /// share request nonces — routers would take that for a loop). Set it to repeat a run.
    pub fn seed(mut self, seed: u64) -> Self {
        self.config.seed = seed;
        self
    }
    /// Informed start (seed 002): the controller starts from `bytes_per_sec` of payload (BBR:
    /// seeded bandwidth, straight to ProbeBW) instead of probing for it, if it can
    /// ([`FetchReader::informed_start`] says whether it did).
    pub fn initial_rate(mut self, bytes_per_sec: f64) -> Self {
        self.initial_rate = Some(bytes_per_sec);
        self
    }
    /// Emit RTT and congestion trace events even without a sink (for [`Fetch::on_event`]
    /// users; sinks turn it on by themselves).
    pub fn trace(mut self, on: bool) -> Self {
        self.trace = on;
        self
    }
    /// Write ndnget's `--log-cwnd` TSV to `w`.
    pub fn log_cwnd(mut self, w: impl io::Write + Send + 'static) -> Self {
        self.sinks.set_cwnd_log(w);
        self
    }
    /// Write ndnget's `--log-rtt` TSV to `w`.
    pub fn log_rtt(mut self, w: impl io::Write + Send + 'static) -> Self {
        self.sinks.set_rtt_log(w);
        self
    }
    /// Write ndnget-style verbose lines (`Received segment #N, rtt=…`) to `w`.
    pub fn verbose(mut self, w: impl io::Write + Send + 'static) -> Self {
        self.sinks.set_verbose(w);
        self
    }
    /// Call `f` for every receiver event, on the driver thread.
    pub fn on_event(mut self, f: impl FnMut(&Event) + Send + 'static) -> Self {
        self.sinks.set_callback(Box::new(f));
        self
    }
    /// End the fetch with [`Error::Interrupted`] when SIGINT or SIGTERM arrives; `flag` is
    /// what `signals::Flag::on(&signals::STOP)` returned. Block those signals in the calling
    /// thread first ([`signals::Blocked`]) so that they reach the driver thread, which waits
    /// with them unblocked and also looks for pending ones on every turn.
    pub fn stop_on_signals(mut self, flag: signals::Flag) -> Self {
        self.stop = Some(flag);
        self
    }
    /// Apply a receiver spec (`rto_k=8,idle_timeout=30s`; `ReceiverConfig::help()` lists the
    /// keys) to the settings so far; a spec naming `unit` sets it as [`Fetch::unit`] does.
    pub fn spec(mut self, spec: &str) -> std::result::Result<Self, rdtp_proto::spec::ConfigError> {
        self.config.apply_spec(spec)?;
        if rdtp_proto::spec::names(spec).any(|k| k == "unit") {
            self.unit = UnitChoice::Unit(self.config.unit);
        }
        Ok(self)
    }
    /// Change any other receiver setting.
    pub fn configure(mut self, f: impl FnOnce(&mut ReceiverConfig)) -> Self {
        f(&mut self.config);
        self
    }

    /// The receiver's settings as configured so far (the unit is set at start, see
    /// [`Fetch::effective_unit`]).
    pub fn receiver_config(&self) -> &ReceiverConfig {
        &self.config
    }

    /// The unit this fetch will use.
    pub fn effective_unit(&self) -> Result<u16> {
        let ipv6 = self.server.ip().to_canonical().is_ipv6();
        let unit = match self.unit {
            UnitChoice::Unit(u) => u,
            UnitChoice::Mtu(m) => {
                let u = unit_for_mtu(m, ipv6)
                    .ok_or_else(|| Error::Usage(format!("MTU {m} is too small to carry a {MIN_UNIT}-byte unit")))?;
                // A controller that lists anticipated interests (seed 003) gets Data with
                // annotations before the payload: keep them within the MTU.
                u.saturating_sub(self.config.cc.data_options_room()).max(MIN_UNIT)
            }
        };
        if !(MIN_UNIT..=MAX_UNIT).contains(&unit) {
            return Err(Error::Usage(format!("unit must be between {MIN_UNIT} and {MAX_UNIT} bytes, not {unit}")));
        }
        Ok(unit)
    }

    /// Start the transfer: bind and connect a socket, start the driver thread.
    pub fn start(mut self) -> Result<FetchReader> {
        self.config.unit = self.effective_unit()?;
        if self.config.rto.min > self.config.rto.max {
            return Err(Error::Usage("the minimum RTO is larger than the maximum RTO".into()));
        }
        self.config.rto.initial = self.config.rto.initial.clamp(self.config.rto.min, self.config.rto.max);
        self.config.trace |= self.trace || self.sinks.needs_trace();
        let server = self.server;
        let opened = match (&self.ndn, self.bind) {
            // NDN nodes issue no address tokens.
            (Some(_), _) | (None, Some(_)) => {
                let local = self.bind.unwrap_or_else(|| match server {
                    SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
                    SocketAddr::V6(_) => SocketAddr::from(([0u16; 8], 0)),
                });
                socket::bind(local)
                    .map_err(|e| Error::network(format!("cannot bind a UDP socket to {local}"), e))
                    .and_then(|s| s.connect(server).map(|()| (s, None)).map_err(|e| connect_error(server, e)))
            }
            (None, None) => crate::tokens::connect(server).map_err(|e| connect_error(server, e)),
        };
        let (sock, held_token) = opened?;
        let state = socket::udp_state(&sock).map_err(|e| Error::network("cannot set up the UDP socket", e))?;
        let wake = EventFd::from_flags(EfdFlags::EFD_NONBLOCK | EfdFlags::EFD_CLOEXEC)
            .map_err(|e| Error::network("eventfd", e.into()))?;
        let clock = Clock::new();
        let now = clock.now();
        let unit = self.config.unit;
        let wake_reader = wake_reader_bytes(self.config.recv_window);
        if self.config.address_token.is_none() {
            self.config.address_token = held_token;
        }
        let cc_name = self.config.cc.name();
        let (rx, informed): (Box<dyn Core>, _) = match self.ndn {
            Some(name) => {
                let cfg = ConsumerConfig { receiver: self.config, trust: self.trust, ..ConsumerConfig::default() };
                (Box::new(Consumer::new(cfg, server, name, now)), None)
            }
            None => {
                let mut rx = Receiver::new(self.config, server, self.target, now);
                let informed = self.initial_rate.filter(|&r| rx.informed_start(now, r));
                (Box::new(rx), informed)
            }
        };
        let mut sinks = self.sinks;
        sinks.start(now).map_err(|e| Error::io("cannot write a log file", e))?;
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner { rx, failure: None, icmp: None, driver_done: false }),
            cond: Condvar::new(),
            wake,
            stop: AtomicBool::new(false),
        });
        let driver = Driver { sock, state, clock, sinks, server, shared: shared.clone(), stop: self.stop, wake_reader };
        let thread = std::thread::Builder::new()
            .name("rdtp-fetch".into())
            .spawn(move || driver.run())
            .map_err(|e| Error::network("cannot start the fetch thread", e))?;
        Ok(FetchReader {
            shared,
            thread: Some(thread),
            clock,
            server,
            cc_name,
            unit,
            unwoken: 0,
            informed,
            local: VecDeque::new(),
            local_off: 0,
            spent: Vec::new(),
        })
    }
}

/// What the driver runs: rdtp's [`Receiver`], or the NDN consumer around one. The calls of
/// the node contract ([`Node`]) and what the reader and the summary need, nothing more.
trait Core: Node + Send {
    fn poll_event(&mut self) -> Option<Event>;
    fn is_finished(&self) -> bool;
    fn error(&self) -> Option<&FetchError>;
    fn readable(&self) -> usize;
    fn read_buffers(&mut self, max: usize, out: &mut Vec<Vec<u8>>) -> usize;
    fn eid(&self) -> Option<Eid>;
    fn size(&self) -> Option<u64>;
    fn name(&self) -> String;
    fn delivered_bytes(&self) -> u64;
    fn stats(&self) -> Stats;
    fn cc_snapshot(&self, now: Time) -> CcSnapshot;
    fn address_token(&self) -> Option<&[u8]>;
    /// The unit in use, once known (an NDN object's segment size is learnt first).
    fn unit(&self) -> Option<u16>;
    /// How an NDN fetch's segments were checked (`None` for rdtp).
    fn ndn(&self) -> Option<NdnSummary>;
}

/// The [`Core`] methods both cores have under the same names (their inherent methods).
macro_rules! delegate_core {
    ($t:ident) => {
        fn poll_event(&mut self) -> Option<Event> {
            $t::poll_event(self)
        }
        fn is_finished(&self) -> bool {
            $t::is_finished(self)
        }
        fn error(&self) -> Option<&FetchError> {
            $t::error(self)
        }
        fn readable(&self) -> usize {
            $t::readable(self)
        }
        fn read_buffers(&mut self, max: usize, out: &mut Vec<Vec<u8>>) -> usize {
            $t::read_buffers(self, max, out)
        }
        fn eid(&self) -> Option<Eid> {
            $t::eid(self)
        }
        fn size(&self) -> Option<u64> {
            $t::size(self)
        }
        fn name(&self) -> String {
            $t::name(self).to_string()
        }
        fn delivered_bytes(&self) -> u64 {
            $t::delivered_bytes(self)
        }
        fn stats(&self) -> Stats {
            $t::stats(self)
        }
    };
}

impl Core for Receiver {
    delegate_core!(Receiver);
    fn cc_snapshot(&self, now: Time) -> CcSnapshot {
        Receiver::cc_snapshot(self, now)
    }
    fn address_token(&self) -> Option<&[u8]> {
        Receiver::address_token(self)
    }
    fn unit(&self) -> Option<u16> {
        Some(self.config().unit)
    }
    fn ndn(&self) -> Option<NdnSummary> {
        None
    }
}

impl Core for Consumer {
    delegate_core!(Consumer);
    fn cc_snapshot(&self, now: Time) -> CcSnapshot {
        Consumer::cc_snapshot(self, now).unwrap_or(CcSnapshot {
            time: now,
            cwnd: 0,
            pacing_rate: None,
            aggregation: 1,
            inflight: 0,
            state: "discovery",
        })
    }
    fn address_token(&self) -> Option<&[u8]> {
        None
    }
    fn unit(&self) -> Option<u16> {
        self.receiver().map(|rx| rx.config().unit)
    }
    fn ndn(&self) -> Option<NdnSummary> {
        let s = self.ndn_stats();
        Some(NdnSummary {
            name: self.name().to_string(),
            integrity: match (s.unverified, s.key_verified) {
                (0, 0) => "DigestSha256",
                (0, _) => "trust-anchor",
                _ => "unverified",
            },
            digest_verified: s.digest_verified,
            unverified_segments: s.unverified,
            key_verified: s.key_verified,
            bad_signature: s.bad_signature,
            bad_digest: s.bad_digest,
            interests: s.interests,
            nacks: s.nacks.iter().sum(),
        })
    }
}

/// The error for a socket that cannot reach `server`.
fn connect_error(server: SocketAddr, e: io::Error) -> Error {
    match unreachable(server, &e) {
        Some(u) => u,
        None => Error::network(format!("cannot open a UDP socket to {server}"), e),
    }
}

struct Inner {
    rx: Box<dyn Core>,
    /// A runtime failure (socket, log file); the receiver's own failures are in `rx`.
    failure: Option<Error>,
    /// An ICMP error seen (port or host unreachable). Not fatal by itself — anyone can forge
    /// one — but the explanation if the server then never answers.
    icmp: Option<Error>,
    driver_done: bool,
}

struct Shared {
    inner: Mutex<Inner>,
    /// Signalled when bytes become readable or the fetch ends.
    cond: Condvar,
    /// Wakes the driver (receive-window space freed, or stop).
    wake: EventFd,
    stop: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves the receiver usable for reading.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn wake_driver(&self) {
        let _ = self.wake.write(1);
    }
}

struct Driver {
    sock: UdpSocket,
    state: UdpSocketState,
    clock: Clock,
    sinks: TraceSinks,
    server: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<signals::Flag>,
    /// Readable bytes that wake a waiting reader while the driver is busy ([`wake_reader_bytes`]).
    wake_reader: usize,
}

impl Driver {
    fn run(mut self) {
        // Pacing needs precise wake-ups: ask for (almost) no timer slack on this thread.
        // SAFETY: PR_SET_TIMERSLACK takes an integer and affects only this thread.
        unsafe {
            libc::prctl(
                libc::PR_SET_TIMERSLACK,
                1 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            );
        }
        let result = match self.stop.clone() {
            None => self.event_loop(None),
            Some(flag) => match signals::Blocked::new(&signals::STOP) {
                Ok(blocked) => self.event_loop(Some((&flag, &blocked))),
                Err(e) => Err(Error::network("sigprocmask", e)),
            },
        };
        let flushed = self.sinks.finish().map_err(|e| Error::io("cannot write a log file", e));
        let mut g = self.shared.lock();
        g.driver_done = true;
        crate::tokens::put(self.server, &self.sock, g.rx.address_token());
        if let Err(e) = result.and(flushed) {
            g.failure.get_or_insert(e);
        }
        drop(g);
        self.shared.cond.notify_all();
    }

    /// Run the fetch; with `signals`, until one of them comes (see the module docs).
    fn event_loop(&mut self, signals: Option<(&signals::Flag, &signals::Blocked)>) -> Result<()> {
        let sigmask = signals.map(|s| s.1.wait_mask());
        let mut buf = vec![0u8; self.shared.lock().rx.max_datagram()];
        let mut batch = RecvBatch::new();
        let mut events = Vec::new();
        let mut sends = 0u64;
        // Bytes became readable while the reader may be waiting, and it was not woken yet.
        let mut unwoken = false;
        loop {
            if self.shared.stop.load(Ordering::Acquire) {
                return Ok(());
            }
            if let Some((flag, blocked)) = signals {
                blocked.deliver_pending();
                if let Some(signal) = flag.signal() {
                    return Err(Error::Interrupted(signal as i32));
                }
            }
            // What is waiting comes in before any deadline is handled: a driver that was not
            // scheduled for a while (a loaded machine) must not take the answers sitting in
            // its socket for missing ones — a spurious loss or, past the idle timeout, a
            // failed fetch.
            let got = match batch.recv(&self.state, &self.sock) {
                Ok(_) => {
                    let now = self.clock.now();
                    let mut g = self.shared.lock();
                    // The reader waits only after finding nothing readable, so it can be
                    // waiting now only if nothing is.
                    unwoken |= g.rx.readable() == 0;
                    // The socket is connected: whatever it gives came from the server's address.
                    for (_, _, d) in batch.datagrams() {
                        g.rx.handle_datagram(now, self.server, d);
                    }
                    let readable = g.rx.readable();
                    drop(g);
                    if readable == 0 {
                        unwoken = false;
                    } else if unwoken && readable >= self.wake_reader {
                        unwoken = false;
                        self.shared.cond.notify_all();
                    }
                    true
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => false,
                Err(e) => match unreachable(self.server, &e) {
                    Some(u) => {
                        self.shared.lock().icmp = Some(u);
                        false
                    }
                    None => return Err(Error::network("receive", e)),
                },
            };
            let now = self.clock.now();
            let (done, deadline, send_error) = {
                let mut g = self.shared.lock();
                let rx = &mut g.rx;
                if rx.poll_timeout().is_some_and(|t| t <= now) {
                    rx.handle_timeout(now);
                }
                let mut send_error = None;
                while let Some(out) = rx.poll_transmit(now, &mut buf) {
                    let t = Transmit {
                        destination: out.to,
                        ecn: None,
                        contents: &buf[..out.len],
                        segment_size: None,
                        src_ip: None,
                    };
                    if let Err(e) = socket::send_with_retry(&self.state, &self.sock, &t, &mut sends) {
                        // A lost request is recovered by the receiver; a refused one is
                        // remembered (the ICMP error may be forged, or the server restarting).
                        if let Some(u) = unreachable(self.server, &e) {
                            send_error = Some(u);
                        }
                        tracing::debug!("send: {e}");
                    }
                }
                events.extend(std::iter::from_fn(|| rx.poll_event()));
                (rx.is_finished() || rx.error().is_some(), rx.poll_timeout(), send_error)
            };
            let mut resolved = false;
            for ev in events.drain(..) {
                resolved |= matches!(ev, Event::Resolved { .. });
                self.sinks.on_event(&ev).map_err(|e| Error::io("cannot write a log file", e))?;
            }
            if resolved {
                self.shared.cond.notify_all(); // for `wait_resolved`
            }
            if let Some(e) = send_error {
                self.shared.lock().icmp = Some(e);
            }
            if done {
                return Ok(());
            }

            if got {
                continue; // poll_transmit after every handle_datagram, and receive again
            }

            let timeout = deadline.map(|d| self.clock.until(d));
            if timeout.is_some_and(|t| t.is_zero()) {
                continue;
            }
            if std::mem::take(&mut unwoken) {
                // Idle: whatever is readable goes to the reader now.
                self.shared.cond.notify_all();
            }
            let r = socket::wait(&self.sock, false, Some(&self.shared.wake), timeout, sigmask)
                .map_err(|e| Error::network("poll", e))?;
            if r.wake {
                let _ = self.shared.wake.read();
            }
        }
    }
}

/// How far a fetch has come.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Bytes that arrived in order so far.
    pub delivered: u64,
    /// The object's size, once resolved.
    pub size: Option<u64>,
}

/// A running fetch: read the object's bytes in order with [`std::io::Read`].
///
/// `read` returns `Ok(0)` only after the whole object arrived and matched its EID. On
/// failure it returns an `io::Error` wrapping this crate's [`Error`] (recover it with
/// [`Error::from_io`], or call [`FetchReader::error`]). Bytes are handed out in order once
/// their 16 KiB block verified against the EID (unless verification was turned off), so
/// no byte read is unverified. [`FetchReader::read_buffers`] hands them out without a
/// copy. Dropping the reader stops the transfer.
pub struct FetchReader {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    clock: Clock,
    server: SocketAddr,
    cc_name: &'static str,
    unit: u16,
    unwoken: usize,
    informed: Option<f64>,
    /// Buffers taken from the receiver and not yet read: `Read` copies out of them without
    /// the lock (the first `local_off` bytes of the front one are read).
    local: VecDeque<Vec<u8>>,
    local_off: usize,
    /// Buffers read out, handed back to the receiver on the next take.
    spent: Vec<Vec<u8>>,
}

impl std::fmt::Debug for FetchReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchReader").field("server", &self.server).field("progress", &self.progress()).finish()
    }
}

impl FetchReader {
    /// The server's address.
    pub fn server(&self) -> SocketAddr {
        self.server
    }
    /// The object's EID, once known.
    pub fn eid(&self) -> Option<Eid> {
        self.shared.lock().rx.eid()
    }
    /// The object's size, once known.
    pub fn size(&self) -> Option<u64> {
        self.shared.lock().rx.size()
    }
    /// The object's name (empty when fetched by EID and the server knows no name).
    pub fn name(&self) -> String {
        self.shared.lock().rx.name()
    }
    /// The congestion controller's name.
    pub fn cc_name(&self) -> &'static str {
        self.cc_name
    }
    /// The rate (payload bytes/s) the controller started from, if informed start was asked
    /// for and the controller took it.
    pub fn informed_start(&self) -> Option<f64> {
        self.informed
    }
    /// Payload bytes per unit (an NDN object's segment size once known).
    pub fn unit(&self) -> u16 {
        self.shared.lock().rx.unit().unwrap_or(self.unit)
    }
    /// Bytes delivered so far and the size.
    pub fn progress(&self) -> Progress {
        let g = self.shared.lock();
        Progress { delivered: g.rx.delivered_bytes(), size: g.rx.size() }
    }
    /// Whether every byte arrived and matched the EID.
    pub fn is_finished(&self) -> bool {
        self.shared.lock().rx.is_finished()
    }
    /// Why the fetch failed, if it did.
    pub fn error(&self) -> Option<Error> {
        let g = self.shared.lock();
        failure_of(&g)
    }
    /// The receiver's counters.
    pub fn stats(&self) -> Stats {
        self.shared.lock().rx.stats()
    }
    /// The current time on the fetch's clock (what [`Stats`] times are measured against).
    pub fn now(&self) -> Time {
        self.clock.now()
    }
    /// A handle that samples this fetch's counters from any thread while it runs
    /// (what `rdtp fetch --interval` reports from).
    pub fn monitor(&self) -> FetchMonitor {
        FetchMonitor { shared: self.shared.clone(), clock: self.clock }
    }
    /// Counters, rates and identity of the transfer, ready to print.
    pub fn summary(&self) -> Summary {
        let now = self.clock.now();
        let g = self.shared.lock();
        let rx = &g.rx;
        Summary {
            server: self.server.to_string(),
            name: rx.name(),
            eid: rx.eid().map(|e| e.to_hex()),
            size: rx.size(),
            cc: self.cc_name.to_string(),
            unit: rx.unit().unwrap_or(self.unit),
            completed: rx.is_finished(),
            ndn: rx.ndn(),
            ..Summary::from_stats(&rx.stats(), now)
        }
    }

    /// Block until the object's size is known (or the fetch failed).
    pub fn wait_resolved(&self) -> Result<(Eid, u64)> {
        let mut g = self.shared.lock();
        loop {
            if let (Some(eid), Some(size)) = (g.rx.eid(), g.rx.size()) {
                return Ok((eid, size));
            }
            if let Some(e) = failure_of(&g) {
                return Err(e);
            }
            if g.driver_done {
                return Err(Error::Runtime("the fetch stopped before the object was resolved".into()));
            }
            g = self.shared.cond.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Read and discard the rest of the object; return the summary.
    pub fn finish(mut self) -> Result<Summary> {
        let mut buf = vec![0u8; 1 << 20];
        loop {
            match self.read(&mut buf) {
                Ok(0) => return Ok(self.summary()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::from_io(&e).cloned().unwrap_or_else(|| Error::network("read", e)));
                }
            }
        }
    }
}

/// Samples a running fetch's counters from another thread (see [`FetchReader::monitor`]).
/// It keeps the receiver's state alive, not the transfer: dropping the reader stops it.
#[derive(Clone)]
pub struct FetchMonitor {
    shared: Arc<Shared>,
    clock: Clock,
}

impl FetchMonitor {
    /// The receiver's counters and controller state, and the time they were taken at (on
    /// the fetch's clock, which [`Stats`] times are measured against).
    pub fn sample(&self) -> (Stats, CcSnapshot, Time) {
        let g = self.shared.lock();
        let now = self.clock.now();
        (g.rx.stats(), g.rx.cc_snapshot(now), now)
    }
    /// How long until `t` on the fetch's clock (zero if it has passed).
    pub fn until(&self, t: Time) -> Duration {
        self.clock.until(t)
    }
}

impl std::fmt::Debug for FetchMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchMonitor").finish_non_exhaustive()
    }
}

fn failure_of(g: &Inner) -> Option<Error> {
    g.failure.clone().or_else(|| match g.rx.error() {
        // Nothing answered and the network said why.
        Some(FetchError::Timeout(_)) if g.icmp.is_some() => g.icmp.clone(),
        e => e.cloned().map(Error::Fetch),
    })
}

impl FetchReader {
    /// Take the next verified bytes as whole buffers (≤ 16 KiB each, up to 1 MiB in all),
    /// without copying them: `out` is emptied (its buffers go back to the receiver for
    /// reuse: pass the same `Vec` every time) and filled. Waits until some are ready;
    /// `Ok(0)` only after the whole object arrived and verified. Errors as
    /// [`Read::read`]'s. Mixing it with `read` is fine: it hands out what `read` left first.
    pub fn read_buffers(&mut self, out: &mut Vec<Vec<u8>>) -> io::Result<usize> {
        if !self.local.is_empty() {
            out.clear();
            let mut n = 0;
            while let Some(mut b) = self.local.pop_front() {
                b.drain(..std::mem::take(&mut self.local_off));
                n += b.len();
                out.push(b);
            }
            return Ok(n);
        }
        let mut g = self.shared.lock();
        loop {
            let n = g.rx.read_buffers(TAKE_BYTES, out);
            if n > 0 {
                let drained = g.rx.readable() == 0;
                drop(g);
                self.unwoken += n;
                if drained || self.unwoken >= WAKE_AFTER_BYTES {
                    self.unwoken = 0;
                    self.shared.wake_driver();
                }
                return Ok(n);
            }
            if let Some(e) = failure_of(&g) {
                return Err(e.into_io());
            }
            if g.rx.is_finished() {
                return Ok(0);
            }
            if g.driver_done {
                return Err(Error::Runtime("the fetch stopped".into()).into_io());
            }
            g = self.shared.cond.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Read for FetchReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.local.is_empty() {
            // The buffers read out go back to the receiver for reuse.
            let mut taken = std::mem::take(&mut self.spent);
            let n = self.read_buffers(&mut taken)?;
            self.local.extend(taken.drain(..));
            self.spent = taken;
            if n == 0 {
                return Ok(0);
            }
        }
        // Copy outside the lock, so the driver thread never waits for this copy.
        let mut n = 0;
        while n < buf.len() {
            let Some(front) = self.local.front() else { break };
            let from = &front[self.local_off..];
            let k = from.len().min(buf.len() - n);
            buf[n..n + k].copy_from_slice(&from[..k]);
            n += k;
            self.local_off += k;
            if self.local_off == front.len() {
                self.spent.extend(self.local.pop_front());
                self.local_off = 0;
            }
        }
        Ok(n)
    }
}

impl Drop for FetchReader {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.shared.wake_driver();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_is_woken_by_a_take_at_most_an_eighth_of_the_window() {
        assert_eq!(wake_reader_bytes(64 << 20), TAKE_BYTES);
        assert_eq!(wake_reader_bytes(8 << 20), TAKE_BYTES);
        assert_eq!(wake_reader_bytes(1 << 20), 128 << 10);
        assert_eq!(wake_reader_bytes(0), 1);
    }
}
