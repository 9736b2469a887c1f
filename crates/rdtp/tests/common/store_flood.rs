//! The content-store flood of issue 23 (item 2): valid requests whose units are as large as
//! the protocol allows (65 437 bytes) and whose offsets are not unit-aligned, each one byte
//! further than the last, so every unit of every request is a key the store has not seen
//! (units overlap, and are stored separately). One request of 68 bytes asks for 16 such
//! units, ≈ 1 MiB that a caching router fetches, verifies and offers to its store.
//!
//! Used by `tests/router_memory.rs` and by `examples/store_flood.rs` (the before/after
//! figures in `docs/SECURITY.md`).

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use rdtp_proto::Eid;
use rdtp_proto::wire::{ByteRange, MAX_UNIT};

// The including crate provides `raw` (tests/common/raw.rs) at its root.
use crate::raw;

/// Units per request: the most whose Data fit the 1 MiB a node answers one request with.
pub const UNITS: u32 = 16;

/// What a flood sent.
#[derive(Debug, Default)]
pub struct Flooded {
    /// Requests sent (after the one that fetched the token).
    pub requests: u64,
    /// Their bytes (UDP payload).
    pub bytes: u64,
    /// How long it took.
    pub elapsed: Duration,
}

/// Send `requests` flood requests for `eid` (an object of `size` bytes, at least 2 MiB) to
/// `to`, at most `per_second` of them a second, with the address token `to` hands out.
/// Answers are not read (they overflow the socket's buffer). Panics if no token comes.
pub fn store_flood(to: SocketAddr, eid: Eid, size: u64, requests: u64, per_second: u64) -> Flooded {
    let sock = UdpSocket::bind(if to.is_ipv4() { "127.0.0.1:0" } else { "[::1]:0" }).expect("bind");
    sock.set_read_timeout(Some(Duration::from_millis(200))).expect("timeout");
    let span = u64::from(UNITS) * u64::from(MAX_UNIT);
    assert!(size > span, "the object must be larger than one request's span");
    let encode = |tag: u32, offset: u64, token: Option<&[u8]>| {
        raw::request(eid, tag, ByteRange::new(offset, UNITS * u32::from(MAX_UNIT)), MAX_UNIT, token)
    };
    let token = raw::fetch_token(&sock, to, &encode(1, 0, None), || false);
    let token = token.unwrap_or_else(|| panic!("no Retry (address token) from {to}"));
    let t0 = Instant::now();
    let mut out = Flooded::default();
    for k in 0..requests {
        // Paced: request k leaves at k / per_second.
        let due = t0 + Duration::from_secs_f64(k as f64 / per_second.max(1) as f64);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        // Offsets 1, 2, 3, … (wrapping within the object): never a multiple of the unit.
        let offset = 1 + k % (size - span);
        let d = encode(2 + k as u32, offset, Some(&token));
        if sock.send_to(&d, to).is_ok() {
            out.requests += 1;
            out.bytes += d.len() as u64;
        }
    }
    out.elapsed = t0.elapsed();
    out
}

/// The resident set of process `pid` now and at its peak (`VmRSS`, `VmHWM`), in bytes.
pub fn rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|kib| kib.parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
