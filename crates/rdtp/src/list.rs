//! Listing a server's catalogue (`rdtp ls`): drives the core's
//! [`rdtp_proto::lister::Lister`] over a connected UDP socket.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use rdtp_proto::lister::{Listed, Lister};
use rdtp_proto::receiver::FetchError;
use rdtp_proto::wire::LIST_MAX_DATAGRAM;

use crate::clock::Clock;
use crate::error::{Error, Result, unreachable};

/// First retry interval of a list request (doubling after each loss).
const RETRY: Duration = Duration::from_millis(250);

/// Every entry of the catalogue of the server at `server`, in catalogue order. Gives up
/// after `idle_timeout` without an answer.
pub fn list(server: SocketAddr, idle_timeout: Duration) -> Result<Vec<Listed>> {
    let (sock, token) = crate::tokens::connect(server).map_err(|e| match unreachable(server, &e) {
        Some(u) => u,
        None => Error::network(format!("cannot open a UDP socket to {server}"), e),
    })?;
    let clock = Clock::new();
    let mut lister = Lister::new(server, clock.now(), RETRY, idle_timeout, crate::random_seed(), token);
    let mut out = vec![0u8; LIST_MAX_DATAGRAM];
    let mut inbuf = vec![0u8; 1 << 16];
    // An ICMP error is not fatal (anyone can forge one), only the explanation of a timeout.
    let mut icmp = None;
    let result = loop {
        let now = clock.now();
        if lister.poll_timeout().is_some_and(|t| t <= now) {
            lister.handle_timeout(now);
        }
        while let Some(t) = lister.poll_transmit(now, &mut out) {
            if let Err(e) = sock.send(&out[..t.len]) {
                icmp = unreachable(server, &e).or(icmp);
                tracing::debug!("send: {e}");
            }
        }
        if lister.is_done() {
            break Ok(lister.entries().to_vec());
        }
        match lister.error() {
            Some(FetchError::Timeout(_)) if icmp.is_some() => break Err(icmp.take().expect("checked")),
            Some(e) => break Err(Error::Fetch(e.clone())),
            None => {}
        }
        let Some(deadline) = lister.poll_timeout() else {
            continue;
        };
        let wait = clock.until(deadline);
        if wait.is_zero() {
            continue;
        }
        sock.set_read_timeout(Some(wait)).map_err(|e| Error::network("setsockopt", e))?;
        match sock.recv(&mut inbuf) {
            // The socket is connected: what it gives came from the server's address.
            Ok(n) => lister.handle_datagram(clock.now(), server, &inbuf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => match unreachable(server, &e) {
                Some(u) => icmp = Some(u),
                None => break Err(Error::network("receive", e)),
            },
        }
    };
    crate::tokens::put(server, &sock, lister.address_token());
    result
}
