//! The address tokens this process holds, per server (or first-hop router) address — the
//! in-memory counterpart of QUIC's NEW_TOKEN (RFC 9000 §8.1.3). A fetch or listing starts
//! with the token the last one to the same address ended with, so only a process's first
//! exchange with a node pays the Retry round trip. Nothing is written to disk: a new
//! process pays it once.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock};

/// Addresses remembered at most (beyond, one is forgotten).
const CAPACITY: usize = 1024;

fn table() -> &'static Mutex<HashMap<SocketAddr, Vec<u8>>> {
    static TOKENS: OnceLock<Mutex<HashMap<SocketAddr, Vec<u8>>>> = OnceLock::new();
    TOKENS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The token last held for `addr`, if any.
pub fn get(addr: SocketAddr) -> Option<Vec<u8>> {
    table().lock().unwrap_or_else(|p| p.into_inner()).get(&addr).cloned()
}

/// Remember `token` for `addr` (nothing if `None`).
pub fn put(addr: SocketAddr, token: Option<&[u8]>) {
    let Some(token) = token else { return };
    let mut t = table().lock().unwrap_or_else(|p| p.into_inner());
    if t.len() >= CAPACITY && !t.contains_key(&addr) {
        let victim = *t.keys().next().expect("non-empty");
        t.remove(&victim);
    }
    t.insert(addr, token.to_vec());
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
