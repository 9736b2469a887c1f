//! The address tokens this process holds, per server (or first-hop router) address — the
//! in-memory counterpart of QUIC's NEW_TOKEN (RFC 9000 §8.1.3). A fetch or listing starts
//! with the token the last one to the same address ended with, so only a process's first
//! exchange with a node pays the Retry round trip. Nothing is written to disk: a new
//! process pays it once.
//!
//! A token names the IP address *and the port* it was issued to
//! ([`rdtp_proto::token`]), so each is kept with the local port it names, and [`connect`]
//! binds the next socket to that same port when it is free (the previous exchange's socket
//! is closed). When it is not — two fetches to one node at once — the new socket gets any
//! port and no token: the node would answer that token with a Retry anyway.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Mutex, OnceLock};

use crate::socket;

/// Addresses remembered at most (beyond, one is forgotten).
const CAPACITY: usize = 1024;

/// A token, and the local port it names.
struct Held {
    port: u16,
    token: Vec<u8>,
}

fn table() -> &'static Mutex<HashMap<SocketAddr, Held>> {
    static TOKENS: OnceLock<Mutex<HashMap<SocketAddr, Held>>> = OnceLock::new();
    TOKENS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A UDP socket connected to `addr` ([`socket::connect`]) and the token held for it, if
/// any: the socket is bound to the port the token names when that port is free; otherwise
/// to any port, without the token.
pub fn connect(addr: SocketAddr) -> io::Result<(UdpSocket, Option<Vec<u8>>)> {
    let held = table().lock().unwrap_or_else(|p| p.into_inner()).get(&addr).map(|h| (h.port, h.token.clone()));
    if let Some((port, token)) = held
        && let Ok(sock) = socket::connect_from(addr, port)
    {
        return Ok((sock, Some(token)));
    }
    Ok((socket::connect(addr)?, None))
}

/// Remember `token` for `addr`, issued to the local address of `sock` (nothing if `None`).
pub fn put(addr: SocketAddr, sock: &UdpSocket, token: Option<&[u8]>) {
    let (Some(token), Ok(local)) = (token, sock.local_addr()) else { return };
    let mut t = table().lock().unwrap_or_else(|p| p.into_inner());
    if t.len() >= CAPACITY && !t.contains_key(&addr) {
        let victim = *t.keys().next().expect("non-empty");
        t.remove(&victim);
    }
    t.insert(addr, Held { port: local.port(), token: token.to_vec() });
}

/// A fresh secret for a node's tokens, from the operating system's generator.
pub fn secret() -> std::io::Result<[u8; 32]> {
    let mut s = [0u8; 32];
    getrandom::fill(&mut s).map_err(std::io::Error::other)?;
    Ok(s)
}

/// Give `v` a random secret if it validates with the all-zero default (which anyone could
/// use to mint tokens).
pub fn fill_secret(v: &mut rdtp_proto::token::ValidationConfig) -> crate::error::Result<()> {
    if v.enabled && v.secret == [0; 32] {
        v.secret = secret().map_err(|e| crate::error::Error::network("cannot draw a random token secret", e))?;
    }
    Ok(())
}
