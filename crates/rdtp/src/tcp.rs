//! Kernel-TCP comparison baseline (`rdtp serve --tcp`, `rdtp fetch --tcp`).
//!
//! Not part of the rdtp protocol: a deliberately plain sender-driven transfer over the
//! kernel's TCP, so experiments can put rdtp and Linux TCP (BBR, CUBIC) through the same
//! network. The *server* runs the congestion control: it sets `TCP_CONGESTION` on the
//! listener and on every accepted socket.
//!
//! ## Exchange
//!
//! * request: one line, `NAME\n` or `EID\n` (64 hex digits), at most [`MAX_REQUEST`] bytes;
//! * response: an 8-byte big-endian size, the object's 32-byte EID, then exactly `size`
//!   bytes; the server closes the connection after the last byte. The EID is in the header
//!   so a fetch by name is verified against the content's hash just as the UDP fetch is
//!   (there the resolve answer carries it). A size of [`NOT_FOUND`] means the server has no
//!   such name or EID, [`REFUSED`] that the request was malformed; the connection then ends.
//!
//! ## Server
//!
//! One thread, non-blocking sockets, edge-triggered epoll (chosen over a thread per
//! connection so a hundred receivers cost a hundred small structs, not a hundred stacks and
//! buffers, and the CPU comparison with the single-threaded rdtp server is like for like).
//! Each writable connection gets bytes read with the catalogue's `read_at` into one shared
//! 256 KiB buffer and written; whatever the socket did not take is read again next time
//! (the server keeps only an offset per connection). Like the rdtp server, this copies each
//! byte twice (page cache → buffer → socket); `sendfile` would need the served files'
//! descriptors, which the catalogue does not expose.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::signal::SigSet;
use nix::sys::socket::{getsockopt, setsockopt, sockopt::TcpCongestion};

use rdtp_proto::receiver::{FetchError, Target};
use rdtp_proto::server::Catalog;
use rdtp_proto::wire::NackCode;
use rdtp_proto::{Eid, NodeId};

use crate::args::parse_target;
use crate::error::{Error, Result};
use crate::server::Served;
use crate::signals;
use crate::socket::{self, DEFAULT_PORT};
use crate::summary::Summary;

/// Response size meaning "no such name or EID".
pub const NOT_FOUND: u64 = u64::MAX;
/// Response size meaning "malformed request".
pub const REFUSED: u64 = u64::MAX - 1;
/// Bytes of the response header: size (8) + EID (32).
pub const HEADER_LEN: usize = 40;
/// Longest request line, newline included.
pub const MAX_REQUEST: usize = 4096;

const CHUNK: usize = 256 << 10;
const LISTENER: u64 = u64::MAX;

/// Options of [`TcpServer::bind`].
#[derive(Clone, Debug, Default)]
pub struct TcpServeOptions {
    /// Address to listen on; `None` = `[::]:7447` dual-stack, else `0.0.0.0:7447`.
    pub listen: Option<SocketAddr>,
    /// Congestion control for every connection (`bbr`, `cubic`, …); `None` = the kernel default.
    pub cc: Option<String>,
}

/// What a server did, reported on shutdown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpServeStats {
    /// Connections accepted.
    pub connections: u64,
    /// Objects sent completely.
    pub completed: u64,
    /// Requests answered with [`NOT_FOUND`] or [`REFUSED`].
    pub refused: u64,
    /// Connections that ended before their object was sent.
    pub aborted: u64,
    /// Payload bytes written to sockets.
    pub bytes: u64,
}

impl std::fmt::Display for TcpServeStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} connections; {} objects sent ({:.1} kB), {} refused, {} aborted",
            self.connections,
            self.completed,
            self.bytes as f64 / 1000.0,
            self.refused,
            self.aborted
        )
    }
}

/// Set the congestion control of a TCP socket (`TCP_CONGESTION`).
pub fn set_congestion(sock: &impl AsFd, name: &str) -> io::Result<()> {
    setsockopt(sock, TcpCongestion, &name.into()).map_err(io::Error::from)
}

/// The congestion control a TCP socket uses.
pub fn congestion(sock: &impl AsFd) -> io::Result<String> {
    Ok(getsockopt(sock, TcpCongestion).map_err(io::Error::from)?.to_string_lossy().into_owned())
}

fn cc_error(name: &str, e: io::Error) -> Error {
    Error::Network {
        context: format!(
            "cannot use TCP congestion control {name:?} (available: {}; `modprobe tcp_{name}` may help)",
            std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unknown".into())
        ),
        source: e,
    }
}

enum Phase {
    Request,
    Sending,
}

struct Conn {
    sock: TcpStream,
    phase: Phase,
    request: Vec<u8>,
    header: [u8; HEADER_LEN],
    header_sent: usize,
    eid: Eid,
    size: u64,
    offset: u64,
    /// Close after the header (a refusal).
    refusal: bool,
}

/// A bound TCP server, ready to run.
pub struct TcpServer<S> {
    listener: TcpListener,
    epoll: Epoll,
    source: S,
    cc: Option<String>,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    buf: Vec<u8>,
    stats: TcpServeStats,
}

fn bind_listener(listen: Option<SocketAddr>) -> io::Result<TcpListener> {
    let make = |addr: SocketAddr| -> io::Result<TcpListener> {
        let domain = if addr.is_ipv6() { socket2::Domain::IPV6 } else { socket2::Domain::IPV4 };
        let s = socket2::Socket::new(domain, socket2::Type::STREAM, Some(socket2::Protocol::TCP))?;
        s.set_reuse_address(true)?;
        if addr.is_ipv6() && addr.ip().is_unspecified() {
            // Dual-stack where the system allows it.
            let _ = s.set_only_v6(false);
        }
        s.bind(&addr.into())?;
        s.listen(1024)?;
        Ok(s.into())
    };
    match listen {
        Some(a) => make(a),
        None => make(SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), DEFAULT_PORT))
            .or_else(|_| make(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), DEFAULT_PORT))),
    }
}

impl<S: Served> TcpServer<S> {
    /// Bind and listen; fails if the congestion control is not available. `source` is an
    /// `Arc` of a catalogue or a [`crate::DirCatalog`] (see [`Served`]).
    pub fn bind(source: S, options: TcpServeOptions) -> Result<Self> {
        let listener = bind_listener(options.listen).map_err(|e| {
            let addr = options.listen.map_or_else(|| format!("[::]:{DEFAULT_PORT}"), |a| a.to_string());
            Error::network(format!("cannot listen on TCP {addr}"), e)
        })?;
        listener.set_nonblocking(true).map_err(|e| Error::network("fcntl", e))?;
        if let Some(cc) = &options.cc {
            set_congestion(&listener, cc).map_err(|e| cc_error(cc, e))?;
        }
        let epoll =
            Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).map_err(|e| Error::network("epoll_create1", e.into()))?;
        epoll
            .add(&listener, EpollEvent::new(EpollFlags::EPOLLIN, LISTENER))
            .map_err(|e| Error::network("epoll_ctl", e.into()))?;
        Ok(TcpServer {
            listener,
            epoll,
            source,
            cc: options.cc,
            conns: Vec::new(),
            free: Vec::new(),
            buf: vec![0u8; CHUNK],
            stats: TcpServeStats::default(),
        })
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Open connections.
    pub fn connections(&self) -> usize {
        self.conns.len() - self.free.len()
    }

    /// Serve until `stop` becomes true (checked at least every 100 ms).
    pub fn run_until(&mut self, stop: &AtomicBool) -> Result<TcpServeStats> {
        self.run_loop(|| stop.load(Ordering::Acquire), None)
    }

    /// Serve until SIGINT or SIGTERM (blocked outside the wait, so none is missed, and
    /// delivered on every turn of a loop too busy to wait).
    pub fn run_until_signal(&mut self) -> Result<TcpServeStats> {
        let flag = signals::Flag::on(&signals::STOP).map_err(|e| Error::network("sigaction", e))?;
        let blocked = signals::Blocked::new(&signals::STOP).map_err(|e| Error::network("sigprocmask", e))?;
        self.run_loop(
            || {
                blocked.deliver_pending();
                flag.raised()
            },
            Some(blocked.wait_mask()),
        )
    }

    /// Serve until `stop()`. With `sigmask`, the thread waits in `ppoll` on the epoll
    /// descriptor with that mask (signals blocked outside interrupt only the wait, so none is
    /// missed) whenever no event is ready; otherwise in `epoll_wait`. At most 100 ms a wait.
    fn run_loop(&mut self, stop: impl Fn() -> bool, sigmask: Option<SigSet>) -> Result<TcpServeStats> {
        let mut events = vec![EpollEvent::empty(); 256];
        let timeout = Duration::from_millis(100);
        while !stop() {
            self.source.refresh();
            let wait = match sigmask {
                None => EpollTimeout::try_from(timeout).unwrap_or(EpollTimeout::NONE),
                Some(_) => EpollTimeout::ZERO,
            };
            let n = match self.epoll.wait(&mut events, wait) {
                Ok(n) => n,
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(Error::network("epoll_wait", e.into())),
            };
            if n == 0 {
                if sigmask.is_some() {
                    socket::wait(&self.epoll.0, false, None::<&std::os::fd::OwnedFd>, Some(timeout), sigmask)
                        .map_err(|e| Error::network("ppoll", e))?;
                }
                continue;
            }
            for ev in &events[..n] {
                let (token, flags) = (ev.data(), ev.events());
                if token == LISTENER {
                    self.accept_all();
                } else {
                    self.service(token as usize, flags);
                }
            }
        }
        Ok(self.stats)
    }

    fn accept_all(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((sock, _)) => {
                    if let Err(e) = self.add(sock) {
                        tracing::warn!("dropping a TCP connection: {e}");
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // EMFILE and the like: keep serving the connections we have.
                    tracing::warn!("accept: {e}");
                    return;
                }
            }
        }
    }

    fn add(&mut self, sock: TcpStream) -> io::Result<()> {
        sock.set_nonblocking(true)?;
        if let Some(cc) = &self.cc {
            set_congestion(&sock, cc)?;
        }
        let conn = Conn {
            sock,
            phase: Phase::Request,
            request: Vec::new(),
            header: [0; HEADER_LEN],
            header_sent: 0,
            eid: Eid([0; 32]),
            size: 0,
            offset: 0,
            refusal: false,
        };
        let slot = match self.free.pop() {
            Some(i) => i,
            None => {
                self.conns.push(None);
                self.conns.len() - 1
            }
        };
        let flags = EpollFlags::EPOLLIN | EpollFlags::EPOLLOUT | EpollFlags::EPOLLET | EpollFlags::EPOLLRDHUP;
        if let Err(e) = self.epoll.add(&conn.sock, EpollEvent::new(flags, slot as u64)) {
            self.free.push(slot);
            return Err(e.into());
        }
        self.conns[slot] = Some(conn);
        self.stats.connections += 1;
        // Data may already be waiting (edge-triggered: no event for what arrived before).
        self.service(slot, EpollFlags::EPOLLIN);
        Ok(())
    }

    fn close(&mut self, slot: usize) {
        if let Some(c) = self.conns.get_mut(slot).and_then(Option::take) {
            // Closing the socket removes it from the epoll set.
            drop(c);
            self.free.push(slot);
        }
    }

    fn service(&mut self, slot: usize, flags: EpollFlags) {
        let Some(Some(conn)) = self.conns.get_mut(slot) else { return };
        if matches!(conn.phase, Phase::Request) {
            match read_request(conn) {
                Ok(None) => {
                    if flags.intersects(EpollFlags::EPOLLHUP | EpollFlags::EPOLLERR | EpollFlags::EPOLLRDHUP) {
                        self.stats.aborted += 1;
                        self.close(slot);
                    }
                    return;
                }
                Ok(Some(line)) => {
                    let answer = answer(self.source.catalog(), &line);
                    let Some(Some(conn)) = self.conns.get_mut(slot) else { return };
                    let (size, eid) = match answer {
                        Some((eid, size)) => (size, eid),
                        None => {
                            conn.refusal = true;
                            (
                                if line.is_empty() || line.len() >= MAX_REQUEST { REFUSED } else { NOT_FOUND },
                                Eid([0; 32]),
                            )
                        }
                    };
                    conn.header[..8].copy_from_slice(&size.to_be_bytes());
                    conn.header[8..].copy_from_slice(&eid.0);
                    conn.eid = eid;
                    conn.size = if conn.refusal { 0 } else { size };
                    conn.phase = Phase::Sending;
                }
                Err(_) => {
                    self.stats.aborted += 1;
                    self.close(slot);
                    return;
                }
            }
        }
        match self.send(slot) {
            Ok(true) => {
                let refusal = self.conns.get(slot).and_then(Option::as_ref).is_some_and(|c| c.refusal);
                if refusal {
                    self.stats.refused += 1;
                } else {
                    self.stats.completed += 1;
                }
                self.close(slot);
            }
            Ok(false) => {}
            Err(e) => {
                tracing::debug!("TCP connection ended: {e}");
                self.stats.aborted += 1;
                self.close(slot);
            }
        }
    }

    /// Write until the socket is full or everything is sent (`Ok(true)`).
    fn send(&mut self, slot: usize) -> io::Result<bool> {
        let Some(Some(conn)) = self.conns.get_mut(slot) else { return Ok(false) };
        while conn.header_sent < HEADER_LEN {
            match conn.sock.write(&conn.header[conn.header_sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => conn.header_sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        while conn.offset < conn.size {
            let n = (conn.size - conn.offset).min(CHUNK as u64) as usize;
            // A file changed under the transfer ends it: the client sees a short object.
            self.source
                .catalog()
                .read_at(&conn.eid, conn.offset, &mut self.buf[..n])
                .map_err(|e| io::Error::other(format!("reading the object: {e}")))?;
            match conn.sock.write(&self.buf[..n]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(w) => {
                    conn.offset += w as u64;
                    self.stats.bytes += w as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

/// Read what is there of the request line; `Some(line)` once complete (or too long: then
/// the line is returned at its full, invalid length so it is refused).
fn read_request(conn: &mut Conn) -> io::Result<Option<String>> {
    let mut buf = [0u8; 1024];
    loop {
        match conn.sock.read(&mut buf) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                conn.request.extend_from_slice(&buf[..n]);
                if let Some(pos) = conn.request.iter().position(|&b| b == b'\n') {
                    let line = String::from_utf8_lossy(&conn.request[..pos]).trim_end_matches('\r').to_string();
                    return Ok(Some(line));
                }
                if conn.request.len() >= MAX_REQUEST {
                    return Ok(Some("x".repeat(MAX_REQUEST)));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn answer<C: Catalog + ?Sized>(catalog: &C, line: &str) -> Option<(Eid, u64)> {
    if line.is_empty() || line.len() >= MAX_REQUEST {
        return None;
    }
    match parse_target(line) {
        Target::Eid(eid) | Target::Known { eid, .. } => catalog.size_of(&eid).map(|s| (eid, s)),
        Target::Name(name) => catalog.resolve(&name),
    }
}

/// A [`TcpServer`] running in a background thread (tests, embedding).
pub struct TcpServerHandle {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<Result<TcpServeStats>>>,
}

impl TcpServerHandle {
    /// The listening address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
    /// Stop the server and return its statistics.
    pub fn stop(mut self) -> Result<TcpServeStats> {
        self.stop.store(true, Ordering::Release);
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(Error::Runtime("the TCP server thread panicked".into())),
            None => Ok(TcpServeStats::default()),
        }
    }
}

impl Drop for TcpServerHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Bind a TCP server and run it in a background thread.
pub fn spawn<S: Served + Send + 'static>(source: S, options: TcpServeOptions) -> Result<TcpServerHandle> {
    let mut server = TcpServer::bind(source, options)?;
    let addr = server.local_addr().map_err(|e| Error::network("getsockname", e))?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::Builder::new()
        .name("rdtp-tcp-server".into())
        .spawn(move || server.run_until(&flag))
        .map_err(|e| Error::network("cannot start the TCP server thread", e))?;
    Ok(TcpServerHandle { addr, stop, thread: Some(thread) })
}

/// Kernel TCP's view of a finished connection (`TCP_INFO` of the receiving socket).
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpInfo {
    /// The receiver's RTT estimate (`tcpi_rcv_rtt`), milliseconds.
    pub rcv_rtt_ms: Option<f64>,
    /// Smallest RTT seen (`tcpi_min_rtt`), milliseconds.
    pub min_rtt_ms: Option<f64>,
    /// Advertised MSS (`tcpi_rcv_mss`), bytes.
    pub rcv_mss: u32,
}

fn tcp_info(fd: RawFd) -> Option<TcpInfo> {
    // SAFETY: tcp_info is plain data; getsockopt writes at most len bytes into it.
    let mut ti: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: valid pointers to locals.
    let r = unsafe {
        libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, (&mut ti as *mut libc::tcp_info).cast(), &mut len)
    };
    if r != 0 {
        return None;
    }
    let ms = |us: u32| (us > 0 && us != u32::MAX).then(|| us as f64 / 1e3);
    Some(TcpInfo { rcv_rtt_ms: ms(ti.tcpi_rcv_rtt), min_rtt_ms: ms(ti.tcpi_min_rtt), rcv_mss: ti.tcpi_rcv_mss })
}

/// A fetch over kernel TCP.
#[derive(Clone, Debug)]
pub struct TcpFetch {
    server: SocketAddr,
    target: Target,
    timeout: Duration,
}

impl TcpFetch {
    /// Fetch `target` from `server`; the idle/connect timeout defaults to 10 s.
    pub fn new(server: SocketAddr, target: Target) -> Self {
        TcpFetch { server, target, timeout: Duration::from_secs(10) }
    }

    /// Give up after this long without progress (also the connect timeout).
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }

    /// Run the fetch, writing the content to `out` as it arrives; the summary on success.
    /// The content is hashed on the way and checked against the EID (and the requested EID)
    /// before `Ok` is returned; `on_size` sees the object size once the header arrived.
    pub fn run(&self, out: &mut dyn Write, mut on_size: impl FnMut(u64, u64)) -> Result<Summary> {
        let started = Instant::now();
        let (name, wanted) = match &self.target {
            Target::Name(n) => (n.clone(), None),
            Target::Eid(e) | Target::Known { eid: e, .. } => (e.to_hex(), Some(*e)),
        };
        if name.is_empty() || name.len() + 1 > MAX_REQUEST || name.contains('\n') {
            return Err(Error::Usage(format!("the name must be 1..{} bytes without newlines", MAX_REQUEST - 1)));
        }
        let unreachable = |e: io::Error| Error::Unreachable { addr: self.server, reason: e.to_string() };
        let mut sock = TcpStream::connect_timeout(&self.server, self.timeout).map_err(unreachable)?;
        sock.set_read_timeout(Some(self.timeout)).map_err(|e| Error::network("setsockopt", e))?;
        sock.set_write_timeout(Some(self.timeout)).map_err(|e| Error::network("setsockopt", e))?;
        sock.write_all(format!("{name}\n").as_bytes()).map_err(|e| self.io_error(e, "sending the request"))?;

        let mut reader = BufReader::with_capacity(1 << 20, &sock);
        let mut header = [0u8; HEADER_LEN];
        reader.read_exact(&mut header).map_err(|e| self.io_error(e, "reading the response header"))?;
        let mut size_bytes = [0u8; 8];
        size_bytes.copy_from_slice(&header[..8]);
        let size = u64::from_be_bytes(size_bytes);
        let mut eid_bytes = [0u8; 32];
        eid_bytes.copy_from_slice(&header[8..]);
        let eid = Eid(eid_bytes);
        if size == NOT_FOUND {
            return Err(Error::Fetch(FetchError::NotFound(name)));
        }
        if size == REFUSED {
            return Err(Error::Fetch(FetchError::Refused {
                code: NackCode::Malformed,
                by: NodeId::UNKNOWN,
                who: "the TCP server".into(),
                detail: "request refused".into(),
            }));
        }
        if let Some(w) = wanted
            && w != eid
        {
            return Err(Error::Fetch(FetchError::Integrity { expected: w, actual: eid }));
        }
        on_size(size, 0);

        let mut hasher = blake3::Hasher::new();
        let mut got = 0u64;
        while got < size {
            let chunk = reader.fill_buf().map_err(|e| self.io_error(e, "receiving"))?;
            if chunk.is_empty() {
                return Err(Error::Runtime(format!("the server closed the connection after {got} of {size} bytes")));
            }
            let n = chunk.len().min((size - got) as usize);
            hasher.update(&chunk[..n]);
            out.write_all(&chunk[..n]).map_err(|e| Error::io("cannot write the output", e))?;
            reader.consume(n);
            got += n as u64;
            on_size(size, got);
        }
        let elapsed = started.elapsed();
        let actual = Eid::from_hasher(&hasher);
        if actual != eid {
            return Err(Error::Fetch(FetchError::Integrity { expected: eid, actual }));
        }
        let info = tcp_info(sock.as_raw_fd()).unwrap_or_default();
        let secs = elapsed.as_secs_f64();
        Ok(Summary {
            server: self.server.to_string(),
            name: match &self.target {
                Target::Name(n) => n.clone(),
                _ => String::new(),
            },
            eid: Some(eid.to_hex()),
            size: Some(size),
            cc: "tcp".into(),
            unit: info.rcv_mss.min(u16::MAX as u32) as u16,
            completed: true,
            elapsed_s: secs,
            goodput_bps: if secs > 0.0 { size as f64 * 8.0 / secs } else { 0.0 },
            bytes_received: size,
            rtt_min_ms: info.min_rtt_ms,
            rtt_avg_ms: info.rcv_rtt_ms,
            ..Summary::default()
        })
    }

    fn io_error(&self, e: io::Error, what: &str) -> Error {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Error::Fetch(FetchError::Timeout(self.timeout)),
            io::ErrorKind::ConnectionRefused => Error::Unreachable { addr: self.server, reason: e.to_string() },
            io::ErrorKind::UnexpectedEof => Error::Runtime(format!("the server closed the connection while {what}")),
            _ => Error::network(what.to_string(), e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdtp_proto::server::MemoryCatalog;

    fn content(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect()
    }

    fn serve(objects: Vec<(String, Vec<u8>)>, cc: Option<&str>) -> TcpServerHandle {
        let catalog = Arc::new(MemoryCatalog::new(objects));
        let opts = TcpServeOptions { listen: Some("127.0.0.1:0".parse().unwrap()), cc: cc.map(str::to_string) };
        spawn(catalog, opts).unwrap()
    }

    #[test]
    fn loopback_fetch_by_name_and_eid_is_byte_exact() {
        let data = content(3_000_017);
        let server = serve(vec![("big".into(), data.clone()), ("empty".into(), Vec::new())], None);
        let addr = server.local_addr();

        let mut got = Vec::new();
        let s = TcpFetch::new(addr, Target::Name("big".into())).run(&mut got, |_, _| {}).unwrap();
        assert_eq!(got, data);
        assert!(s.completed);
        assert_eq!(s.eid.as_deref(), Some(Eid::of(&data).to_hex().as_str()));
        assert_eq!(s.bytes_received, data.len() as u64);

        let mut got = Vec::new();
        TcpFetch::new(addr, Target::Eid(Eid::of(&data))).run(&mut got, |_, _| {}).unwrap();
        assert_eq!(got, data);

        let mut got = Vec::new();
        let s = TcpFetch::new(addr, Target::Name("empty".into())).run(&mut got, |_, _| {}).unwrap();
        assert!(got.is_empty() && s.completed);

        let stats = server.stop().unwrap();
        assert_eq!(stats.completed, 3);
        assert_eq!(stats.bytes, 2 * data.len() as u64);
    }

    #[test]
    fn unknown_content_and_dead_server_map_to_their_exit_codes() {
        let server = serve(vec![("a".into(), content(10))], None);
        let addr = server.local_addr();
        let e = TcpFetch::new(addr, Target::Name("nope".into())).run(&mut Vec::new(), |_, _| {}).unwrap_err();
        assert_eq!(e.exit_code(), 3, "{e}");
        let e =
            TcpFetch::new(addr, Target::Eid(Eid::of(b"something else"))).run(&mut Vec::new(), |_, _| {}).unwrap_err();
        assert_eq!(e.exit_code(), 3, "{e}");
        drop(server);
        let e = TcpFetch::new(addr, Target::Name("a".into()))
            .timeout(Duration::from_secs(2))
            .run(&mut Vec::new(), |_, _| {})
            .unwrap_err();
        assert_eq!(e.exit_code(), 6, "{e}");
    }

    #[test]
    fn many_concurrent_connections_and_congestion_control() {
        let data = content(400_000);
        // "reno" is always built in; the accepted sockets must report it.
        let server = serve(vec![("x".into(), data.clone())], Some("reno"));
        let addr = server.local_addr();
        let threads: Vec<_> = (0..20)
            .map(|_| {
                let d = data.clone();
                std::thread::spawn(move || {
                    let mut got = Vec::new();
                    TcpFetch::new(addr, Target::Name("x".into())).run(&mut got, |_, _| {}).unwrap();
                    assert_eq!(got, d);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(server.stop().unwrap().completed, 20);

        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        set_congestion(&l, "reno").unwrap();
        assert_eq!(congestion(&l).unwrap(), "reno");
        assert!(set_congestion(&l, "no-such-cc").is_err());
    }

    #[test]
    fn a_wrong_eid_in_the_header_fails_validation() {
        // A fake server that announces one EID and sends other bytes.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut line = String::new();
            BufReader::new(&s).read_line(&mut line).unwrap();
            let mut h = [0u8; HEADER_LEN];
            h[..8].copy_from_slice(&5u64.to_be_bytes());
            h[8..].copy_from_slice(&Eid::of(b"hello").0);
            s.write_all(&h).unwrap();
            s.write_all(b"HELLO").unwrap();
        });
        let mut got = Vec::new();
        let e = TcpFetch::new(addr, Target::Name("x".into())).run(&mut got, |_, _| {}).unwrap_err();
        assert_eq!(e.exit_code(), 5, "{e}");
        t.join().unwrap();
    }
}
