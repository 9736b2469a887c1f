//! UDP plumbing shared by the server and the fetch driver: binding with big buffers,
//! batched receive with GRO (one buffer may hold several datagrams, `stride` apart), and
//! GSO sends (several equal-size datagrams handed to the kernel as one `Transmit`).
//!
//! Nothing here knows the protocol: datagrams are opaque bytes.

use std::io::{self, IoSliceMut};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::fd::AsFd;
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::time::TimeSpec;
use quinn_udp::{RecvMeta, Transmit, UdpSockRef, UdpSocketState};
use socket2::{Domain, Protocol, Socket, Type};

/// Default UDP port of rdtp servers.
pub const DEFAULT_PORT: u16 = 7447;

/// Socket buffer size asked for (the kernel may clamp it to `net.core.*mem_max`).
pub const SOCKET_BUFFER: usize = 8 << 20;

/// Largest UDP payload of one GSO send: 65 535 − 20 (IPv4) − 8 (UDP).
pub const GSO_MAX_BYTES: usize = 65_507;

/// Size of one receive buffer (a GRO-coalesced batch is at most 64 KiB).
const RECV_BUF: usize = 1 << 16;

/// Create a UDP socket bound to `addr` with big buffers. An IPv6 wildcard address is
/// bound dual-stack (IPv4 clients arrive as v4-mapped addresses).
pub fn bind(addr: SocketAddr) -> io::Result<UdpSocket> {
    bind_with(addr, false)
}

fn bind_with(addr: SocketAddr, reuse_port: bool) -> io::Result<UdpSocket> {
    let domain = if addr.is_ipv4() { Domain::IPV4 } else { Domain::IPV6 };
    let sock = Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        sock.set_only_v6(false)?;
    }
    set_buffers(&sock);
    if reuse_port {
        sock.set_reuse_port(true)?;
    }
    sock.bind(&addr.into())?;
    Ok(sock.into())
}

/// Let more sockets bind `sock`'s address (`SO_REUSEPORT`), after it was bound alone: a
/// server's first socket is bound without it, so an address another process holds is
/// refused, and then opened to the server's own further workers.
pub fn set_reuse_port(sock: &UdpSocket) -> io::Result<()> {
    socket2::SockRef::from(sock).set_reuse_port(true)
}

/// Another socket on `addr` (held by a socket made [`set_reuse_port`]), with big buffers:
/// the kernel spreads incoming datagrams over them by a hash of the source address.
pub fn bind_reuse_port(addr: SocketAddr) -> io::Result<UdpSocket> {
    bind_with(addr, true)
}

/// `SO_ATTACH_REUSEPORT_CBPF` (Linux ≥ 4.5; 51 on every architecture but SPARC's 0x35).
const SO_ATTACH_REUSEPORT_CBPF: libc::c_int = 51;

/// Attach a classic BPF program to `sock`'s `SO_REUSEPORT` group: for each datagram it
/// returns the index of the socket to receive it (offsets from the start of the UDP
/// payload); an index past the group falls back to the kernel's hash of the addresses.
pub fn steer_reuse_port(sock: &UdpSocket, prog: &mut [libc::sock_filter]) -> io::Result<()> {
    use libc::sock_fprog;
    use std::os::fd::AsRawFd;
    let len = u16::try_from(prog.len()).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "program too long"))?;
    let fprog = sock_fprog { len, filter: prog.as_mut_ptr() };
    // SAFETY: a valid descriptor, and a pointer to a sock_fprog whose filter array lives
    // until the call returns (the kernel copies it).
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_ATTACH_REUSEPORT_CBPF,
            (&fprog as *const sock_fprog).cast(),
            std::mem::size_of::<sock_fprog>() as libc::socklen_t,
        )
    };
    if r == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Bind the server's socket: `listen` if given, else `[::]:7447` dual-stack, falling back
/// to `0.0.0.0:7447` where IPv6 is unavailable.
pub fn bind_server(listen: Option<SocketAddr>) -> io::Result<UdpSocket> {
    if let Some(addr) = listen {
        return bind(addr);
    }
    match bind(SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), DEFAULT_PORT)) {
        Ok(s) => Ok(s),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EAFNOSUPPORT) | Some(libc::EADDRNOTAVAIL) | Some(libc::EPROTONOSUPPORT)
            ) =>
        {
            bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), DEFAULT_PORT))
        }
        Err(e) => Err(e),
    }
}

/// A UDP socket *connected* to `peer` (so ICMP port-unreachable surfaces as
/// `ECONNREFUSED`, and only the peer's datagrams arrive), with big buffers.
pub fn connect(peer: SocketAddr) -> io::Result<UdpSocket> {
    connect_from(peer, 0)
}

/// [`connect`] from local port `port` (0: any), e.g. the port an address token names
/// ([`crate::tokens`]); fails if the port is taken.
pub fn connect_from(peer: SocketAddr, port: u16) -> io::Result<UdpSocket> {
    let local = match peer {
        SocketAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port),
        SocketAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port),
    };
    let sock = bind(local)?;
    sock.connect(peer)?;
    Ok(sock)
}

fn set_buffers(sock: &Socket) {
    // Best effort: an unprivileged process gets at most `net.core.{w,r}mem_max`; with
    // CAP_NET_ADMIN the FORCE variants go past it.
    let _ = sock.set_send_buffer_size(SOCKET_BUFFER);
    let _ = sock.set_recv_buffer_size(SOCKET_BUFFER);
    // The kernel reports twice the size it was asked for (bookkeeping overhead).
    if sock.send_buffer_size().unwrap_or(0) < 2 * SOCKET_BUFFER {
        force_buffer(sock, libc::SO_SNDBUFFORCE);
    }
    if sock.recv_buffer_size().unwrap_or(0) < 2 * SOCKET_BUFFER {
        force_buffer(sock, libc::SO_RCVBUFFORCE);
    }
}

fn force_buffer(sock: &Socket, option: libc::c_int) {
    use std::os::fd::AsRawFd;
    let size = SOCKET_BUFFER as libc::c_int;
    // SAFETY: setsockopt with a valid descriptor and a pointer to a live c_int of the
    // length given; failure (EPERM without CAP_NET_ADMIN) is ignored.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// What the kernel reported about one readiness wait.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    /// The socket has datagrams (or an error) to read.
    pub socket: bool,
    /// The wake-up descriptor fired.
    pub wake: bool,
    /// The wait was interrupted by a signal.
    pub interrupted: bool,
}

/// Wait until `sock` is readable (or writable, with `writable`), `wake` is readable, or
/// `timeout` passes (`None` = forever). `sigmask` is installed for the wait only, so a
/// signal blocked outside the wait interrupts it without a race.
pub fn wait(
    sock: &impl AsFd,
    writable: bool,
    wake: Option<&impl AsFd>,
    timeout: Option<Duration>,
    sigmask: Option<nix::sys::signal::SigSet>,
) -> io::Result<Ready> {
    let sock_events = if writable { PollFlags::POLLOUT } else { PollFlags::POLLIN };
    let mut fds = Vec::with_capacity(2);
    fds.push(PollFd::new(sock.as_fd(), sock_events));
    if let Some(w) = wake {
        fds.push(PollFd::new(w.as_fd(), PollFlags::POLLIN));
    }
    if poll(&mut fds, timeout, sigmask)? {
        return Ok(Ready { interrupted: true, ..Ready::default() });
    }
    Ok(Ready { socket: fired(&fds[0]), wake: fds.len() > 1 && fired(&fds[1]), interrupted: false })
}

/// `ppoll`; `true` if a signal interrupted it.
fn poll(
    fds: &mut [PollFd<'_>],
    timeout: Option<Duration>,
    sigmask: Option<nix::sys::signal::SigSet>,
) -> io::Result<bool> {
    match ppoll(fds, timeout.map(TimeSpec::from), sigmask) {
        Ok(_) => Ok(false),
        Err(nix::errno::Errno::EINTR) => Ok(true),
        Err(e) => Err(io::Error::from(e)),
    }
}

fn fired(fd: &PollFd<'_>) -> bool {
    fd.revents().is_some_and(|r| !r.is_empty())
}

/// Wait until one of `socks` is readable, `wake` is readable, or `timeout` passes (as
/// [`wait`]; [`Ready::socket`] says whether any socket fired).
pub fn wait_readable(
    socks: &[&UdpSocket],
    wake: &impl AsFd,
    timeout: Option<Duration>,
    sigmask: Option<nix::sys::signal::SigSet>,
) -> io::Result<Ready> {
    let mut fds: Vec<PollFd<'_>> = socks.iter().map(|s| PollFd::new(s.as_fd(), PollFlags::POLLIN)).collect();
    fds.push(PollFd::new(wake.as_fd(), PollFlags::POLLIN));
    if poll(&mut fds, timeout, sigmask)? {
        return Ok(Ready { interrupted: true, ..Ready::default() });
    }
    let (last, socks) = fds.split_last().expect("the wake descriptor");
    Ok(Ready { socket: socks.iter().any(fired), wake: fired(last), interrupted: false })
}

/// Buffers for batched receives (`recvmmsg`, with GRO).
pub struct RecvBatch {
    storage: Vec<u8>,
    meta: Vec<RecvMeta>,
    filled: usize,
}

impl Default for RecvBatch {
    fn default() -> Self {
        RecvBatch::new()
    }
}

impl RecvBatch {
    /// Room for [`quinn_udp::BATCH_SIZE`] buffers of 64 KiB.
    pub fn new() -> Self {
        let n = quinn_udp::BATCH_SIZE.max(1);
        RecvBatch { storage: vec![0u8; n * RECV_BUF], meta: vec![RecvMeta::default(); n], filled: 0 }
    }

    /// Receive what is waiting (non-blocking): `Ok(n)` buffers filled, `WouldBlock` if none.
    pub fn recv(&mut self, state: &UdpSocketState, sock: &UdpSocket) -> io::Result<usize> {
        self.filled = 0;
        let mut slices: Vec<IoSliceMut<'_>> = self.storage.chunks_mut(RECV_BUF).map(IoSliceMut::new).collect();
        let n = state.recv(UdpSockRef::from(sock), &mut slices, &mut self.meta)?;
        self.filled = n;
        Ok(n)
    }

    /// The datagrams of the last [`RecvBatch::recv`]: `(source, destination IP, bytes)`,
    /// GRO batches split at `stride`.
    pub fn datagrams(&self) -> impl Iterator<Item = (SocketAddr, Option<IpAddr>, &[u8])> + '_ {
        self.meta[..self.filled].iter().enumerate().flat_map(move |(i, m)| {
            let start = i * RECV_BUF;
            let len = m.len.min(RECV_BUF);
            let buf = &self.storage[start..start + len];
            let stride = if m.stride == 0 { len.max(1) } else { m.stride };
            buf.chunks(stride).map(move |d| (m.addr, m.dst_ip, d))
        })
    }
}

/// Coalesces consecutive equal-size datagrams to one destination into GSO sends.
///
/// Write a datagram with [`GsoBatch::space`], then [`GsoBatch::commit`] its length. A
/// batch is sent when it holds `max_gso_segments` datagrams, would exceed
/// [`GSO_MAX_BYTES`], gets a shorter datagram (which may only come last) or a longer one,
/// and at [`GsoBatch::flush`].
pub struct GsoBatch {
    buf: Vec<u8>,
    len: usize,
    segment: usize,
    count: usize,
    destination: Option<SocketAddr>,
    src_ip: Option<IpAddr>,
    /// Datagrams dropped because the socket stayed full or sending failed.
    pub dropped: u64,
    /// `sendmsg` calls made.
    pub sends: u64,
}

impl Default for GsoBatch {
    fn default() -> Self {
        GsoBatch::new()
    }
}

impl GsoBatch {
    /// An empty batch with room for one full GSO send plus one more datagram.
    pub fn new() -> Self {
        GsoBatch {
            buf: vec![0u8; GSO_MAX_BYTES + RECV_BUF],
            len: 0,
            segment: 0,
            count: 0,
            destination: None,
            src_ip: None,
            dropped: 0,
            sends: 0,
        }
    }

    /// Start a reply to `destination`, sent from `src_ip` (the address the request came to,
    /// so multi-homed hosts answer from the address the client talks to).
    pub fn begin(&mut self, state: &UdpSocketState, sock: &UdpSocket, destination: SocketAddr, src_ip: Option<IpAddr>) {
        self.flush(state, sock);
        self.destination = Some(destination);
        self.src_ip = src_ip;
    }

    /// Whether datagrams to `destination` from `src_ip` are batched now (waiting to be sent).
    pub fn holds(&self, destination: SocketAddr, src_ip: Option<IpAddr>) -> bool {
        self.count > 0 && self.destination == Some(destination) && self.src_ip == src_ip
    }

    /// Whether nothing is batched.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Room for the next datagram (at least 64 KiB).
    pub fn space(&mut self) -> &mut [u8] {
        &mut self.buf[self.len..]
    }

    /// The datagram written into [`GsoBatch::space`] is `n` bytes long.
    pub fn commit(&mut self, state: &UdpSocketState, sock: &UdpSocket, n: usize) {
        let max_segments = state.max_gso_segments().max(1);
        if self.count > 0 {
            let fits = n <= self.segment && self.len + n <= GSO_MAX_BYTES && self.count < max_segments;
            if !fits {
                // Send what is batched, then move the new datagram to the front.
                let start = self.len;
                self.send_batch(state, sock);
                self.buf.copy_within(start..start + n, 0);
            }
        }
        if self.count == 0 {
            self.segment = n;
        }
        let last = n < self.segment;
        self.len += n;
        self.count += 1;
        if last || self.count >= max_segments || self.len + self.segment > GSO_MAX_BYTES {
            self.send_batch(state, sock);
        }
    }

    /// Like [`GsoBatch::commit`] for a datagram to `destination` (written into
    /// [`GsoBatch::space`]): a batch to another destination is sent first. For senders whose
    /// datagrams go to many peers (a router).
    pub fn commit_to(
        &mut self,
        state: &UdpSocketState,
        sock: &UdpSocket,
        destination: SocketAddr,
        src_ip: Option<IpAddr>,
        n: usize,
    ) {
        if self.count > 0 && (self.destination != Some(destination) || self.src_ip != src_ip) {
            let start = self.len;
            self.send_batch(state, sock);
            self.buf.copy_within(start..start + n, 0);
        }
        self.destination = Some(destination);
        self.src_ip = src_ip;
        self.commit(state, sock, n);
    }

    /// Send whatever is batched.
    pub fn flush(&mut self, state: &UdpSocketState, sock: &UdpSocket) {
        if self.count > 0 {
            self.send_batch(state, sock);
        }
    }

    fn send_batch(&mut self, state: &UdpSocketState, sock: &UdpSocket) {
        let (len, segment, count) = (self.len, self.segment, self.count);
        self.len = 0;
        self.count = 0;
        self.segment = 0;
        let Some(destination) = self.destination else {
            self.dropped += count as u64;
            return;
        };
        let contents = &self.buf[..len];
        let t = Transmit {
            destination,
            ecn: None,
            contents,
            segment_size: (count > 1).then_some(segment),
            src_ip: self.src_ip,
        };
        match send_with_retry(state, sock, &t, &mut self.sends) {
            Ok(()) => {}
            Err(e) if count > 1 && state.max_gso_segments() <= 1 => {
                // GSO was just found unsupported: send the datagrams one by one.
                tracing::debug!("GSO send failed ({e}); sending {count} datagrams separately");
                for d in contents.chunks(segment) {
                    let t1 = Transmit { destination, ecn: None, contents: d, segment_size: None, src_ip: self.src_ip };
                    if send_with_retry(state, sock, &t1, &mut self.sends).is_err() {
                        self.dropped += 1;
                    }
                }
            }
            Err(e) => {
                tracing::debug!("send to {destination} failed: {e}");
                self.dropped += count as u64;
            }
        }
    }
}

/// `addr` with an IPv4-mapped IPv6 address turned into plain IPv4 (how a dual-stack socket
/// reports IPv4 peers), so one peer has one address.
pub fn canonical(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(addr.ip().to_canonical(), addr.port())
}

/// `addr` as a socket bound to `local` can send to it: IPv4 peers of an IPv6 (dual-stack)
/// socket as IPv4-mapped addresses.
pub fn for_socket(addr: SocketAddr, local: SocketAddr) -> SocketAddr {
    match (addr.ip(), local.is_ipv6()) {
        (IpAddr::V4(v4), true) => SocketAddr::new(IpAddr::V6(v4.to_ipv6_mapped()), addr.port()),
        _ => addr,
    }
}

/// Send one transmit; when the socket buffer is full, wait (up to 100 ms in all) for room.
pub fn send_with_retry(state: &UdpSocketState, sock: &UdpSocket, t: &Transmit<'_>, sends: &mut u64) -> io::Result<()> {
    let mut waited = Duration::ZERO;
    loop {
        *sends += 1;
        match state.try_send(UdpSockRef::from(sock), t) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && waited < Duration::from_millis(100) => {
                let step = Duration::from_millis(10);
                let _ = wait(sock, true, None::<&UdpSocket>, Some(step), None)?;
                waited += step;
            }
            other => return other,
        }
    }
}

/// Set up quinn-udp's per-socket state (non-blocking, GRO, packet info).
pub fn udp_state(sock: &UdpSocket) -> io::Result<UdpSocketState> {
    UdpSocketState::new(UdpSockRef::from(sock))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gso_batches_equal_datagrams_and_splits_on_receive() {
        let rx = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let rx_state = udp_state(&rx).unwrap();
        let tx = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let tx_state = udp_state(&tx).unwrap();
        let dest = rx.local_addr().unwrap();
        let mut batch = GsoBatch::new();
        batch.begin(&tx_state, &tx, dest, None);
        // 100 datagrams of 1000 bytes, then a short one, then a longer one.
        let mut sizes = vec![1000usize; 100];
        sizes.push(300);
        sizes.push(1400);
        for (i, &n) in sizes.iter().enumerate() {
            batch.space()[..n].fill(i as u8);
            batch.commit(&tx_state, &tx, n);
        }
        batch.flush(&tx_state, &tx);
        assert_eq!(batch.dropped, 0);
        assert!(batch.sends < sizes.len() as u64 || tx_state.max_gso_segments() == 1);

        let mut got = Vec::new();
        let mut rb = RecvBatch::new();
        while got.len() < sizes.len() {
            let r = wait(&rx, false, None::<&UdpSocket>, Some(Duration::from_secs(2)), None).unwrap();
            assert!(r.socket, "timed out after {} datagrams", got.len());
            while let Ok(n) = rb.recv(&rx_state, &rx) {
                assert!(n > 0);
                got.extend(rb.datagrams().map(|(_, _, d)| (d.len(), d[0])));
            }
        }
        let want: Vec<_> = sizes.iter().enumerate().map(|(i, &n)| (n, i as u8)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn batches_to_several_destinations_keep_order_per_destination() {
        let a = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let b = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let tx = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let tx_state = udp_state(&tx).unwrap();
        let (da, db) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        let mut batch = GsoBatch::new();
        let plan = [(da, 1u8), (da, 2), (db, 3), (da, 4), (db, 5), (db, 6)];
        for &(to, tag) in &plan {
            batch.space()[..500].fill(tag);
            batch.commit_to(&tx_state, &tx, to, None, 500);
        }
        batch.flush(&tx_state, &tx);
        assert_eq!(batch.dropped, 0);
        for (sock, dest) in [(&a, da), (&b, db)] {
            let state = udp_state(sock).unwrap();
            let want: Vec<u8> = plan.iter().filter(|(d, _)| *d == dest).map(|&(_, t)| t).collect();
            let mut got = Vec::new();
            let mut rb = RecvBatch::new();
            while got.len() < want.len() {
                let r = wait(sock, false, None::<&UdpSocket>, Some(Duration::from_secs(2)), None).unwrap();
                assert!(r.socket, "timed out");
                while let Ok(n) = rb.recv(&state, sock) {
                    assert!(n > 0);
                    got.extend(rb.datagrams().map(|(_, _, d)| d[0]));
                }
            }
            assert_eq!(got, want);
        }
        let mapped = for_socket("10.1.2.3:9".parse().unwrap(), "[::]:0".parse().unwrap());
        assert_eq!(mapped.to_string(), "[::ffff:10.1.2.3]:9");
        assert_eq!(canonical(mapped).to_string(), "10.1.2.3:9");
    }
}
