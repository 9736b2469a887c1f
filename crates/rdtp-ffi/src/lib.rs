//! # rdtp-ffi — the C ABI of the rdtp core
//!
//! Exposes the sans-IO [`rdtp_proto`] receiver, stateless server and caching router
//! ([`router`]) to C and C++: the ns-3
//! applications use it, and it is the C API a non-Rust application would use (seed 000
//! §3.2 offers POSIX-style calls; this is their user-space equivalent). The header is
//! `include/rdtp.h`: build.rs generates it with cbindgen into `OUT_DIR` (C/C++ dependents
//! get that directory as `DEP_RDTP_FFI_INCLUDE`), and `tests/header.rs` checks that the
//! committed copy is the same.
//!
//! It holds no protocol logic: every function forwards to `rdtp-proto`. Time is always
//! passed in nanoseconds since an origin of the caller's choosing.
//!
//! ## Call order (receiver)
//!
//! ```c
//! char why[256];
//! RdtpReceiver *rx = rdtp_receiver_new_from_spec("bbrp:probe_gain=2",   // controller spec: rdtp_cc_help()
//!                                                "rto_k=8,trace=true",  // receiver spec: rdtp_receiver_help()
//!                                                "object", now, why, sizeof why);  // null: `why` says why
//! // whenever anything happens (start, datagram in, timer):
//! while ((n = rdtp_receiver_poll_transmit(rx, now, buf, sizeof buf)) > 0) send(buf, n);
//! while (rdtp_receiver_poll_event(rx, &ev)) { ... }
//! if (rdtp_receiver_poll_timeout(rx, &at)) schedule(at);   // then rdtp_receiver_handle_timeout
//! rdtp_receiver_handle_datagram(rx, now, data, len);       // for each datagram from the server
//! n = rdtp_receiver_read(rx, out, sizeof out);              // in-order bytes
//! rdtp_receiver_free(rx);
//! ```
//!
//! Every pointer argument must be valid for the call (null where documented as allowed);
//! handles must come from the matching `_new` and be freed once.
//!
//! A panic inside the core never crosses into C (edition 2024 would abort the process):
//! every entry point catches it at its boundary ([`panic`]), returns its failure value
//! (null, false, 0, or nothing), and keeps the message for `rdtp_take_panic` and for the
//! host's `rdtp_set_panic_handler`, so a host can fail its run with that message.

#![allow(clippy::missing_safety_doc)] // the safety contract is stated once, above

use std::ffi::{CStr, CString, c_char};
use std::slice;

use core::time::Duration;

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rdtp_proto::cc::{CcConfig, spec};
use rdtp_proto::receiver::{Event, FetchError, MAX_DATAGRAM, Receiver, ReceiverConfig, Target};
use rdtp_proto::server::{Catalog, PatternCatalog, Server, ServerConfig, ServerNode};

pub mod panic;
pub mod router;
pub mod sources;
pub mod wifi;
use panic::{guard, write_message};
use rdtp_proto::token::ValidationConfig;
use rdtp_proto::{Eid, NodeId, Time};
use router::RdtpAddr;

/// Kinds of `RdtpEvent`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdtpEventKind {
    None = 0,
    /// `size` holds the object size.
    Resolved = 1,
    /// `unit_index`, `rtt_ns`, `srtt_ns`, `rttvar_ns`, `rto_ns` are set.
    RttSample = 2,
    /// `cwnd`, `pacing_rate`, `aggregation`, `inflight`, `state` are set.
    Congestion = 3,
    Finished = 4,
    /// `error` is set.
    Failed = 5,
    /// A request left: `unit_index` is its first unit, `units` how many it asks for,
    /// `retransmission` whether they are asked for again.
    Requested = 6,
    /// A unit arrived for the first time: `unit_index`, `source` (node id), `hops`,
    /// `cached`, and `rtt_ns` if it gave an RTT sample (else 0).
    Received = 7,
}

/// Why a fetch failed.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdtpError {
    None = 0,
    NotFound = 1,
    Timeout = 2,
    Integrity = 3,
    Refused = 4,
    /// The first hop never accepted the address tokens it gave.
    NotValidated = 5,
}

/// One receiver event. Fields not listed for a kind are zero.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RdtpEvent {
    pub kind: RdtpEventKind,
    pub time_ns: u64,
    pub size: u64,
    pub unit_index: u64,
    pub rtt_ns: u64,
    pub srtt_ns: u64,
    pub rttvar_ns: u64,
    pub rto_ns: u64,
    /// Window in units.
    pub cwnd: u64,
    /// Bytes per second; negative if the controller does not pace.
    pub pacing_rate: f64,
    pub aggregation: u32,
    pub inflight: u64,
    /// Controller state ("startup", "probe_bw", …); static, NUL-terminated, never freed.
    pub state: *const c_char,
    pub error: RdtpError,
    pub units: u64,
    pub retransmission: bool,
    /// Node id of the node that served the unit (big-endian integer of its 8 bytes).
    pub source: u64,
    /// Routers between that node and the receiver.
    pub hops: u8,
    /// Served from a router's content store.
    pub cached: bool,
}

/// Receiver statistics (see `rdtp_proto::receiver::Stats`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RdtpStats {
    pub units_received: u64,
    pub bytes_received: u64,
    pub duplicates: u64,
    pub invalid: u64,
    pub requests_sent: u64,
    pub units_requested: u64,
    pub units_rerequested: u64,
    pub units_lost: u64,
    pub timeouts: u64,
    pub timeout_window_decreases: u64,
    pub fast_recoveries: u64,
    pub rtt_samples: u64,
    pub rtt_min_ns: u64,
    pub rtt_avg_ns: u64,
    pub rtt_max_ns: u64,
    /// Bytes delivered in order to the application.
    pub delivered_bytes: u64,
    /// Object size; 0 until known.
    pub size: u64,
    /// Units in flight now.
    pub inflight: u64,
    /// Current window (units) and pacing rate (bytes/s; negative if unpaced).
    pub cwnd: u64,
    pub pacing_rate: f64,
    /// Units that arrived after being declared lost, before being asked for again
    /// (spurious losses; see `rdtp_proto::receiver::Stats::late_arrivals`).
    pub late_arrivals: u64,
}

/// Aggregate server counters.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RdtpServerStats {
    pub requests: u64,
    pub data_packets: u64,
    pub data_bytes: u64,
    pub nacks: u64,
    pub dropped: u64,
    pub malformed: u64,
}

/// Opaque receiver handle.
pub struct RdtpReceiver {
    rx: Receiver,
}

/// Opaque server handle: the stateless server with its generated objects, and the datagrams
/// of the last reply not yet taken (the core's `ServerNode`).
pub struct RdtpServer {
    node: ServerNode<PatternCatalog>,
}

/// Buffer size `rdtp_receiver_poll_transmit` needs (the largest datagram a receiver sends).
pub const RDTP_MAX_REQUEST: usize = 1232;
const _: () = assert!(RDTP_MAX_REQUEST == MAX_DATAGRAM);
/// Buffer size that holds any datagram a server sends.
pub const RDTP_MAX_DATAGRAM: usize = 65536;

/// A controller's state name (`Controller::state`, whatever it is) as a NUL-terminated C
/// string that lives as long as the process. Each distinct name is made once and kept: the
/// names are `&'static str` of the controllers in the binary, so there are few.
fn state_cstr(s: &'static str) -> *const c_char {
    static NAMES: Mutex<Vec<(&'static str, &'static CStr)>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, c)) = names.iter().find(|(n, _)| *n == s) {
        return c.as_ptr();
    }
    // A name with a NUL inside cannot be a C string (no controller has one).
    let c: &'static CStr = match CString::new(s) {
        Ok(c) => Box::leak(c.into_boxed_c_str()),
        Err(_) => c"?",
    };
    names.push((s, c));
    c.as_ptr()
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Parse a C controller spec (null = "bbr").
unsafe fn cc_config(spec: *const c_char) -> Result<CcConfig, String> {
    if spec.is_null() {
        return Ok(CcConfig::default());
    }
    let text = unsafe { CStr::from_ptr(spec) }.to_str().map_err(|_| "the controller spec is not UTF-8".to_string())?;
    text.parse().map_err(|e: spec::SpecError| e.to_string())
}

/// Every controller with its spec keys, their defaults and meaning: static, NUL-terminated
/// text, never freed.
#[unsafe(no_mangle)]
pub extern "C" fn rdtp_cc_help() -> *const c_char {
    guard("rdtp_cc_help", core::ptr::null(), || {
        static HELP: OnceLock<CString> = OnceLock::new();
        HELP.get_or_init(|| CString::new(spec::help()).expect("the help text has no NUL")).as_ptr()
    })
}

/// Check a controller spec: 0 if `spec` is valid (null = "bbr"); otherwise the length of the
/// message saying what is wrong and what is accepted, written NUL-terminated to `buf`
/// (truncated to `cap` - 1 bytes; `buf` may be null when `cap` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_cc_error(spec: *const c_char, buf: *mut c_char, cap: usize) -> usize {
    guard("rdtp_cc_error", 0, || {
        let Err(message) = (unsafe { cc_config(spec) }) else { return 0 };
        unsafe { write_message(&message, buf, cap) }
    })
}

/// The address a C receiver's core knows its peer by. A C host talks to one peer per
/// receiver and hands over only that peer's datagrams, so the core needs no real address:
/// every datagram goes to, and comes from, this one.
const PEER: std::net::SocketAddr =
    std::net::SocketAddr::V4(std::net::SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, 0));

/// The configuration of `cc` and `spec` (null: "bbr" and none), or the message saying what is
/// wrong with them. The base is the core's default, with the unit that fits a 1500-byte MTU
/// less the room the controller's Data annotations need.
unsafe fn receiver_from_spec(cc: *const c_char, spec: *const c_char) -> Result<ReceiverConfig, String> {
    let cc = unsafe { cc_config(cc) }?;
    let d = ReceiverConfig::default();
    let mut config = ReceiverConfig { unit: d.unit - cc.data_options_room(), cc, ..d };
    if !spec.is_null() {
        let text =
            unsafe { CStr::from_ptr(spec) }.to_str().map_err(|_| "the receiver spec is not UTF-8".to_string())?;
        config.apply_spec(text).map_err(|e| e.to_string())?;
    }
    Ok(config)
}

/// A receiver configured by specs, or null with the reason in `err` (NUL-terminated,
/// truncated to `err_cap` - 1 bytes; `err` may be null when `err_cap` is 0).
unsafe fn receiver_with(
    cc: *const c_char,
    spec: *const c_char,
    target: Option<Target>,
    now_ns: u64,
    err: *mut c_char,
    err_cap: usize,
) -> *mut RdtpReceiver {
    let made = unsafe { receiver_from_spec(cc, spec) }
        .and_then(|config| target.map(|t| (config, t)).ok_or_else(|| "no valid object name or EID".to_string()));
    match made {
        Ok((config, target)) => {
            let rx = Receiver::new(config, PEER, target, Time::from_nanos(now_ns));
            Box::into_raw(Box::new(RdtpReceiver { rx }))
        }
        Err(message) => {
            unsafe { write_message(&message, err, err_cap) };
            core::ptr::null_mut()
        }
    }
}

/// A receiver fetching the object called `name`, created at `now_ns`, configured by a
/// controller spec `cc` (null = "bbr"; `rdtp_cc_help()`) and a receiver spec `spec`
/// ("KEY=VALUE,..."; null or "" = the defaults; `rdtp_receiver_help()` lists the keys; several
/// separated by ';' apply in order, so a host's keys may come before its user's). Null if a
/// spec is refused or `name` is not UTF-8: then `err` holds why, naming the key
/// (NUL-terminated, truncated to `err_cap` - 1 bytes; `err` may be null when `err_cap` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_new_from_spec(
    cc: *const c_char,
    spec: *const c_char,
    name: *const c_char,
    now_ns: u64,
    err: *mut c_char,
    err_cap: usize,
) -> *mut RdtpReceiver {
    guard("rdtp_receiver_new_from_spec", core::ptr::null_mut(), || {
        let name = (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_str().ok()).flatten();
        let target = name.map(|n| Target::Name(n.to_string()));
        unsafe { receiver_with(cc, spec, target, now_ns, err, err_cap) }
    })
}

/// As `rdtp_receiver_new_from_spec`, for an object whose EID (32 bytes) and size are known:
/// no resolution.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_new_known_from_spec(
    cc: *const c_char,
    spec: *const c_char,
    eid: *const u8,
    size: u64,
    now_ns: u64,
    err: *mut c_char,
    err_cap: usize,
) -> *mut RdtpReceiver {
    guard("rdtp_receiver_new_known_from_spec", core::ptr::null_mut(), || {
        let target = (!eid.is_null()).then(|| {
            let mut e = [0u8; 32];
            e.copy_from_slice(unsafe { slice::from_raw_parts(eid, 32) });
            Target::Known { eid: Eid(e), size }
        });
        unsafe { receiver_with(cc, spec, target, now_ns, err, err_cap) }
    })
}

/// Every receiver spec key with its default, meaning and accepted values: static,
/// NUL-terminated text, never freed.
#[unsafe(no_mangle)]
pub extern "C" fn rdtp_receiver_help() -> *const c_char {
    guard("rdtp_receiver_help", core::ptr::null(), || {
        static HELP: OnceLock<CString> = OnceLock::new();
        HELP.get_or_init(|| CString::new(ReceiverConfig::help()).expect("the help text has no NUL")).as_ptr()
    })
}

/// Free a receiver (null is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_free(rx: *mut RdtpReceiver) {
    guard("rdtp_receiver_free", (), || {
        if !rx.is_null() {
            drop(unsafe { Box::from_raw(rx) });
        }
    })
}

/// Feed one datagram from the server.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_handle_datagram(
    rx: *mut RdtpReceiver,
    now_ns: u64,
    data: *const u8,
    len: usize,
) {
    guard("rdtp_receiver_handle_datagram", (), || {
        let Some(rx) = (unsafe { rx.as_mut() }) else { return };
        if data.is_null() && len > 0 {
            return;
        }
        let bytes = if len == 0 { &[][..] } else { unsafe { slice::from_raw_parts(data, len) } };
        rx.rx.handle_datagram(Time::from_nanos(now_ns), PEER, bytes);
    })
}

/// Let time pass: call at (or after) the instant `rdtp_receiver_poll_timeout` gave.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_handle_timeout(rx: *mut RdtpReceiver, now_ns: u64) {
    guard("rdtp_receiver_handle_timeout", (), || {
        if let Some(rx) = unsafe { rx.as_mut() } {
            rx.rx.handle_timeout(Time::from_nanos(now_ns));
        }
    })
}

/// Write the next datagram to send into `buf` (capacity ≥ `RDTP_MAX_REQUEST`); returns its
/// length, 0 if nothing is due now.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_poll_transmit(
    rx: *mut RdtpReceiver,
    now_ns: u64,
    buf: *mut u8,
    cap: usize,
) -> usize {
    guard("rdtp_receiver_poll_transmit", 0, || {
        let Some(rx) = (unsafe { rx.as_mut() }) else { return 0 };
        if buf.is_null() || cap < MAX_DATAGRAM {
            return 0;
        }
        let out = unsafe { slice::from_raw_parts_mut(buf, cap) };
        rx.rx.poll_transmit(Time::from_nanos(now_ns), out).map_or(0, |t| t.len)
    })
}

/// The next instant `rdtp_receiver_handle_timeout` is due, in `*at_ns`; returns false if
/// there is none (finished, failed, or waiting only for datagrams).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_poll_timeout(rx: *const RdtpReceiver, at_ns: *mut u64) -> bool {
    guard("rdtp_receiver_poll_timeout", false, || {
        let Some(rx) = (unsafe { rx.as_ref() }) else { return false };
        match rx.rx.poll_timeout() {
            Some(t) => {
                if let Some(out) = unsafe { at_ns.as_mut() } {
                    *out = t.as_nanos();
                }
                true
            }
            None => false,
        }
    })
}

/// Copy in-order bytes into `buf`; returns how many.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_read(rx: *mut RdtpReceiver, buf: *mut u8, cap: usize) -> usize {
    guard("rdtp_receiver_read", 0, || {
        let Some(rx) = (unsafe { rx.as_mut() }) else { return 0 };
        if buf.is_null() || cap == 0 {
            return 0;
        }
        rx.rx.read(unsafe { slice::from_raw_parts_mut(buf, cap) })
    })
}

fn empty_event() -> RdtpEvent {
    RdtpEvent {
        kind: RdtpEventKind::None,
        time_ns: 0,
        size: 0,
        unit_index: 0,
        rtt_ns: 0,
        srtt_ns: 0,
        rttvar_ns: 0,
        rto_ns: 0,
        cwnd: 0,
        pacing_rate: -1.0,
        aggregation: 0,
        inflight: 0,
        state: core::ptr::null(),
        error: RdtpError::None,
        units: 0,
        retransmission: false,
        source: 0,
        hops: 0,
        cached: false,
    }
}

/// Take the next event into `*out`; returns false if there is none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_poll_event(rx: *mut RdtpReceiver, out: *mut RdtpEvent) -> bool {
    guard("rdtp_receiver_poll_event", false, || {
        let Some(rx) = (unsafe { rx.as_mut() }) else { return false };
        let Some(out) = (unsafe { out.as_mut() }) else { return false };
        let Some(ev) = rx.rx.poll_event() else { return false };
        let mut e = empty_event();
        match ev {
            Event::Resolved { size, .. } => {
                e.kind = RdtpEventKind::Resolved;
                e.size = size;
            }
            Event::RttSample(s) => {
                e.kind = RdtpEventKind::RttSample;
                e.time_ns = s.time.as_nanos();
                e.unit_index = s.unit;
                e.rtt_ns = ns(s.rtt);
                e.srtt_ns = ns(s.srtt);
                e.rttvar_ns = ns(s.rttvar);
                e.rto_ns = ns(s.rto);
            }
            Event::Congestion(c) => {
                e.kind = RdtpEventKind::Congestion;
                e.time_ns = c.time.as_nanos();
                e.cwnd = c.cwnd;
                e.pacing_rate = c.pacing_rate.unwrap_or(-1.0);
                e.aggregation = c.aggregation;
                e.inflight = c.inflight;
                e.state = state_cstr(c.state);
            }
            Event::Requested { time, units, retransmission } => {
                e.kind = RdtpEventKind::Requested;
                e.time_ns = time.as_nanos();
                e.unit_index = units.first().copied().unwrap_or(0);
                e.units = units.len() as u64;
                e.retransmission = retransmission;
            }
            Event::Received { time, unit, source, rtt } => {
                e.kind = RdtpEventKind::Received;
                e.time_ns = time.as_nanos();
                e.unit_index = unit;
                e.source = source.node.to_u64();
                e.hops = source.hops;
                e.cached = source.cached;
                e.rtt_ns = rtt.map_or(0, ns);
            }
            Event::Finished => e.kind = RdtpEventKind::Finished,
            Event::Failed(err) => {
                e.kind = RdtpEventKind::Failed;
                e.error = match err {
                    FetchError::NotFound(_) => RdtpError::NotFound,
                    FetchError::Timeout(_) => RdtpError::Timeout,
                    FetchError::Integrity { .. } | FetchError::BadBlock { .. } => RdtpError::Integrity,
                    FetchError::Refused { .. } => RdtpError::Refused,
                    FetchError::AddressNotValidated => RdtpError::NotValidated,
                    FetchError::BadName { .. } => RdtpError::Refused,
                };
            }
        }
        *out = e;
        true
    })
}

/// 0 = running, 1 = finished (all bytes arrived and verified), 2 = failed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_status(rx: *const RdtpReceiver) -> i32 {
    guard("rdtp_receiver_status", 2, || match unsafe { rx.as_ref() } {
        Some(r) if r.rx.is_finished() => 1,
        Some(r) if r.rx.error().is_some() => 2,
        Some(_) => 0,
        None => 2,
    })
}

/// Fill `*out` with the receiver's statistics.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_stats(rx: *const RdtpReceiver, out: *mut RdtpStats) {
    guard("rdtp_receiver_stats", (), || {
        let (Some(r), Some(out)) = (unsafe { rx.as_ref() }, unsafe { out.as_mut() }) else { return };
        let s = r.rx.stats();
        let c = r.rx.controller();
        *out = RdtpStats {
            units_received: s.units_received,
            bytes_received: s.bytes_received,
            duplicates: s.duplicates,
            invalid: s.invalid,
            requests_sent: s.requests_sent,
            units_requested: s.units_requested,
            units_rerequested: s.units_rerequested,
            units_lost: s.units_lost,
            timeouts: s.timeouts,
            timeout_window_decreases: s.timeout_window_decreases,
            fast_recoveries: s.fast_recoveries,
            rtt_samples: s.rtt_samples,
            rtt_min_ns: s.rtt_min.map_or(0, ns),
            rtt_avg_ns: s.rtt_avg.map_or(0, ns),
            rtt_max_ns: s.rtt_max.map_or(0, ns),
            delivered_bytes: r.rx.delivered_bytes(),
            size: r.rx.size().unwrap_or(0),
            inflight: r.rx.inflight(),
            cwnd: c.cwnd(),
            pacing_rate: c.pacing_rate().unwrap_or(-1.0),
            late_arrivals: s.late_arrivals,
        };
    })
}

/// A stateless server for `n` generated objects: `names[i]` of `sizes[i]` bytes whose
/// content is a function of `seeds[i]` (see `rdtp_proto::server::PatternCatalog`). Null if
/// a name is not UTF-8.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_new_pattern(
    names: *const *const c_char,
    sizes: *const u64,
    seeds: *const u64,
    n: usize,
) -> *mut RdtpServer {
    guard("rdtp_server_new_pattern", core::ptr::null_mut(), || {
        let mut objects = Vec::with_capacity(n);
        if n > 0 && (names.is_null() || sizes.is_null() || seeds.is_null()) {
            return core::ptr::null_mut();
        }
        for i in 0..n {
            let name_ptr = unsafe { *names.add(i) };
            if name_ptr.is_null() {
                return core::ptr::null_mut();
            }
            let Ok(name) = unsafe { CStr::from_ptr(name_ptr) }.to_str() else { return core::ptr::null_mut() };
            objects.push((name.to_string(), unsafe { *sizes.add(i) }, unsafe { *seeds.add(i) }));
        }
        // Simulated networks have no spoofers: no address validation unless asked for
        // (`rdtp_server_set_validation`).
        let validation = ValidationConfig { enabled: false, ..ValidationConfig::default() };
        let server = Server::new(ServerConfig { validation, ..ServerConfig::default() });
        Box::into_raw(Box::new(RdtpServer { node: ServerNode::new(server, Arc::new(PatternCatalog::new(objects))) }))
    })
}

/// Set the server's node id (named in every Data and Nack it sends; see `rdtp_node_id`);
/// false if `id` is 0. Call before the first datagram: the counters start over.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_set_id(s: *mut RdtpServer, id: u64) -> bool {
    guard("rdtp_server_set_id", false, || {
        let Some(s) = (unsafe { s.as_mut() }) else { return false };
        if id == 0 {
            return false;
        }
        let config = ServerConfig { id: NodeId::from_u64(id), ..s.node.server().config().clone() };
        s.node.set_server(Server::new(config));
        true
    })
}

/// Turn address validation on or off (off after `rdtp_server_new_pattern`): with it, a
/// request without a valid token gets a Retry (RFC 9000 §8). `secret` (32 bytes, or null
/// for all zeros) keys the tokens. Call before the first datagram: the counters start over.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_set_validation(s: *mut RdtpServer, enabled: bool, secret: *const u8) -> bool {
    guard("rdtp_server_set_validation", false, || {
        let Some(s) = (unsafe { s.as_mut() }) else { return false };
        let mut validation = ValidationConfig { enabled, ..ValidationConfig::default() };
        if !secret.is_null() {
            validation.secret.copy_from_slice(unsafe { slice::from_raw_parts(secret, 32) });
        }
        let config = ServerConfig { validation, ..s.node.server().config().clone() };
        s.node.set_server(Server::new(config));
        true
    })
}

/// Free a server (null is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_free(s: *mut RdtpServer) {
    guard("rdtp_server_free", (), || {
        if !s.is_null() {
            drop(unsafe { Box::from_raw(s) });
        }
    })
}

/// EID (32 bytes into `eid_out`) and size of the object `name`; false if unknown.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_resolve(
    s: *const RdtpServer,
    name: *const c_char,
    eid_out: *mut u8,
    size_out: *mut u64,
) -> bool {
    guard("rdtp_server_resolve", false, || {
        let Some(s) = (unsafe { s.as_ref() }) else { return false };
        if name.is_null() {
            return false;
        }
        let Ok(name) = unsafe { CStr::from_ptr(name) }.to_str() else { return false };
        let Some((eid, size)) = s.node.catalog().resolve(name) else { return false };
        if !eid_out.is_null() {
            unsafe { slice::from_raw_parts_mut(eid_out, 32) }.copy_from_slice(&eid.0);
        }
        if let Some(out) = unsafe { size_out.as_mut() } {
            *out = size;
        }
        true
    })
}

/// Copy `len` bytes of the object with the 32-byte `eid` from `offset` into `buf` (to warm
/// caches with, `rdtp_routers_warm_fetch`); false if the object is unknown or the range
/// does not lie within it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_read(
    s: *const RdtpServer,
    eid: *const u8,
    offset: u64,
    buf: *mut u8,
    len: usize,
) -> bool {
    guard("rdtp_server_read", false, || {
        let Some(s) = (unsafe { s.as_ref() }) else { return false };
        if eid.is_null() || (buf.is_null() && len > 0) {
            return false;
        }
        let mut id = [0u8; 32];
        id.copy_from_slice(unsafe { slice::from_raw_parts(eid, 32) });
        let id = Eid(id);
        let Some(size) = s.node.catalog().size_of(&id) else { return false };
        if offset.checked_add(len as u64).is_none_or(|end| end > size) {
            return false;
        }
        if len == 0 {
            return true;
        }
        s.node.catalog().read_at(&id, offset, unsafe { slice::from_raw_parts_mut(buf, len) }).is_ok()
    })
}

/// Take one datagram from `from` at `now_ns`; returns how many reply datagrams it produced
/// (all for `from`). Take them with `rdtp_server_next` (replies not taken are dropped at
/// the next call).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_handle(
    s: *mut RdtpServer,
    now_ns: u64,
    from: RdtpAddr,
    data: *const u8,
    len: usize,
) -> usize {
    guard("rdtp_server_handle", 0, || {
        let (Some(s), Some(from)) = (unsafe { s.as_mut() }, from.to_socket()) else { return 0 };
        if data.is_null() && len > 0 {
            return 0;
        }
        let bytes = if len == 0 { &[][..] } else { unsafe { slice::from_raw_parts(data, len) } };
        s.node.clear();
        s.node.handle_datagram(Time::from_nanos(now_ns), from, bytes);
        s.node.queued()
    })
}

/// Copy the next reply datagram into `buf`; returns its length, 0 when none is left (or if
/// `cap` is too small, in which case the datagram stays queued).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_next(s: *mut RdtpServer, buf: *mut u8, cap: usize) -> usize {
    guard("rdtp_server_next", 0, || {
        let Some(s) = (unsafe { s.as_mut() }) else { return 0 };
        let Some(n) = s.node.next_len() else { return 0 };
        if buf.is_null() || cap < n {
            return 0; // it stays queued
        }
        let out = unsafe { slice::from_raw_parts_mut(buf, n) };
        s.node.poll_transmit(Time::ZERO, out).map_or(0, |t| t.len)
    })
}

/// Fill `*out` with the server's aggregate counters.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_stats(s: *const RdtpServer, out: *mut RdtpServerStats) {
    guard("rdtp_server_stats", (), || {
        let (Some(s), Some(out)) = (unsafe { s.as_ref() }, unsafe { out.as_mut() }) else { return };
        let st = s.node.server().stats();
        *out = RdtpServerStats {
            requests: st.requests,
            data_packets: st.data_packets,
            data_bytes: st.data_bytes,
            nacks: st.nacks,
            dropped: st.dropped,
            malformed: st.malformed,
        };
    })
}
