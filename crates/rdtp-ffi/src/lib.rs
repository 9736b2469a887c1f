//! # rdtp-ffi — the C ABI of the rdtp core
//!
//! Exposes the sans-IO [`rdtp_proto`] receiver, stateless server and caching router
//! ([`router`]), one node family ([`node`]), to C and C++: the ns-3
//! applications use it, and it is the C API a non-Rust application would use (seed 000
//! §3.2 offers POSIX-style calls; this is their user-space equivalent). The header is
//! `include/rdtp.h`: build.rs generates it with cbindgen into `OUT_DIR` (C/C++ dependents
//! get that directory as `DEP_RDTP_FFI_INCLUDE`), and `tests/header.rs` checks that the
//! committed copy is the same.
//!
//! It holds no protocol logic: every function forwards to `rdtp-proto`. Time is always
//! passed in nanoseconds since an origin of the caller's choosing.
//!
//! ## Nodes
//!
//! A receiver, a server and a router are all one opaque handle, `RdtpNode`, driven by the
//! same calls ([`node`]: `rdtp_node_handle_datagram`, `rdtp_node_poll_transmit`,
//! `rdtp_node_poll_timeout`, `rdtp_node_handle_timeout`, `rdtp_node_free`); what only one
//! kind has are accessors named by the kind (`rdtp_receiver_read`, `rdtp_router_counters`,
//! `rdtp_server_stats`, …), which fail on a node of another kind. A receiver:
//!
//! ```c
//! char why[256];
//! RdtpNode *rx = rdtp_receiver_new_from_spec("bbrp:probe_gain=2",   // controller spec: rdtp_cc_help()
//!                                            "rto_k=8,trace=true",  // receiver spec: rdtp_receiver_help()
//!                                            "object", server,      // the peer it fetches from (RdtpAddr)
//!                                            now, why, sizeof why); // null: `why` says why
//! // whenever anything happens (start, datagram in, timer):
//! while ((n = rdtp_node_poll_transmit(rx, now, buf, sizeof buf, &to)) > 0) send(to, buf, n);
//! while (rdtp_receiver_poll_event(rx, &ev)) { ... }
//! if (rdtp_node_poll_timeout(rx, &at)) schedule(at);        // then rdtp_node_handle_timeout
//! rdtp_node_handle_datagram(rx, now, from, data, len);      // for each datagram that arrives
//! n = rdtp_receiver_read(rx, out, sizeof out);               // in-order bytes
//! rdtp_node_free(rx);
//! ```
//!
//! Every pointer argument must be valid for the call (null where documented as allowed);
//! handles must come from a `_new` function and be freed once, with `rdtp_node_free`.
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

type Srv = ServerNode<PatternCatalog>;

pub mod node;
pub mod panic;
pub mod router;
pub mod sources;
pub mod wifi;
use node::{Core, RdtpAddr, RdtpNode, view, view_mut};
use panic::{guard, write_message};
use rdtp_proto::token::ValidationConfig;
use rdtp_proto::{Eid, NodeId, Time};

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

/// Buffer size `rdtp_node_poll_transmit` needs for a receiver (the largest datagram it sends).
pub const RDTP_MAX_REQUEST: usize = 1232;
const _: () = assert!(RDTP_MAX_REQUEST == MAX_DATAGRAM);
/// Buffer size that holds any datagram a node sends (`rdtp_node_max_datagram` of any node).
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

/// Parse a C controller spec (null = the default, "bbr3-rdtp").
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

/// The name of the receivers' default controller (what a null spec runs): static,
/// NUL-terminated, never freed.
#[unsafe(no_mangle)]
pub extern "C" fn rdtp_cc_default() -> *const c_char {
    guard("rdtp_cc_default", core::ptr::null(), || {
        static NAME: OnceLock<CString> = OnceLock::new();
        NAME.get_or_init(|| CString::new(rdtp_proto::cc::registry::DEFAULT).expect("a name has no NUL")).as_ptr()
    })
}

/// Check a controller spec: 0 if `spec` is valid (null = the default, "bbr3-rdtp");
/// otherwise the length of the message saying what is wrong and what is accepted, written
/// NUL-terminated to `buf` (truncated to `cap` - 1 bytes; `buf` may be null when `cap` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_cc_error(spec: *const c_char, buf: *mut c_char, cap: usize) -> usize {
    guard("rdtp_cc_error", 0, || {
        let Err(message) = (unsafe { cc_config(spec) }) else { return 0 };
        unsafe { write_message(&message, buf, cap) }
    })
}

/// The configuration of `cc` and `spec` (null: the default controller, "bbr3-rdtp", and no
/// receiver spec), or the message saying what is wrong with them. The base is the core's
/// default, with the unit that fits a 1500-byte MTU
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
    peer: RdtpAddr,
    now_ns: u64,
    err: *mut c_char,
    err_cap: usize,
) -> *mut RdtpNode {
    let made = unsafe { receiver_from_spec(cc, spec) }
        .and_then(|config| target.map(|t| (config, t)).ok_or_else(|| "no valid object name or EID".to_string()))
        .and_then(|made| {
            peer.to_socket().map(|p| (made, p)).ok_or_else(|| "the peer is no IPv4 or IPv6 address".into())
        });
    match made {
        Ok(((config, target), peer)) => {
            RdtpNode::into_raw(Core::Receiver(Receiver::new(config, peer, target, Time::from_nanos(now_ns))))
        }
        Err(message) => {
            unsafe { write_message(&message, err, err_cap) };
            core::ptr::null_mut()
        }
    }
}

/// A receiver fetching the object called `name` through `peer` (the server, or the router it
/// fetches through: every datagram goes there, and only that peer's are read), created at
/// `now_ns`, configured by a controller spec `cc` (null = the default, "bbr3-rdtp";
/// `rdtp_cc_help()`) and a receiver spec `spec` ("KEY=VALUE,..."; null or "" = the
/// defaults; `rdtp_receiver_help()` lists the keys; several separated by ';' apply in order,
/// so a host's keys may come before its user's). Null if a spec is refused, `name` is not
/// UTF-8 or `peer` no address: then `err` holds why, naming the key (NUL-terminated,
/// truncated to `err_cap` - 1 bytes; `err` may be null when `err_cap` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_new_from_spec(
    cc: *const c_char,
    spec: *const c_char,
    name: *const c_char,
    peer: RdtpAddr,
    now_ns: u64,
    err: *mut c_char,
    err_cap: usize,
) -> *mut RdtpNode {
    guard("rdtp_receiver_new_from_spec", core::ptr::null_mut(), || {
        let name = (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_str().ok()).flatten();
        let target = name.map(|n| Target::Name(n.to_string()));
        unsafe { receiver_with(cc, spec, target, peer, now_ns, err, err_cap) }
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
    peer: RdtpAddr,
    now_ns: u64,
    err: *mut c_char,
    err_cap: usize,
) -> *mut RdtpNode {
    guard("rdtp_receiver_new_known_from_spec", core::ptr::null_mut(), || {
        let target = (!eid.is_null()).then(|| {
            let mut e = [0u8; 32];
            e.copy_from_slice(unsafe { slice::from_raw_parts(eid, 32) });
            Target::Known { eid: Eid(e), size }
        });
        unsafe { receiver_with(cc, spec, target, peer, now_ns, err, err_cap) }
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

/// Copy in-order bytes into `buf`; returns how many.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_read(rx: *mut RdtpNode, buf: *mut u8, cap: usize) -> usize {
    guard("rdtp_receiver_read", 0, || {
        let Some(rx) = (unsafe { view_mut::<Receiver>(rx) }) else { return 0 };
        if buf.is_null() || cap == 0 {
            return 0;
        }
        rx.read(unsafe { slice::from_raw_parts_mut(buf, cap) })
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
pub unsafe extern "C" fn rdtp_receiver_poll_event(rx: *mut RdtpNode, out: *mut RdtpEvent) -> bool {
    guard("rdtp_receiver_poll_event", false, || {
        let Some(rx) = (unsafe { view_mut::<Receiver>(rx) }) else { return false };
        let Some(out) = (unsafe { out.as_mut() }) else { return false };
        let Some(ev) = rx.poll_event() else { return false };
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

/// 0 = running, 1 = finished (all bytes arrived and verified), 2 = failed (or not a
/// receiver).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_status(rx: *const RdtpNode) -> i32 {
    guard("rdtp_receiver_status", 2, || match unsafe { view::<Receiver>(rx) } {
        Some(r) if r.is_finished() => 1,
        Some(r) if r.error().is_some() => 2,
        Some(_) => 0,
        None => 2,
    })
}

/// Payload bytes of the units that arrived so far, verified or not (the `bytes_received`
/// of [`rdtp_receiver_stats`] without filling the whole struct); 0 if not a receiver.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_bytes_received(rx: *const RdtpNode) -> u64 {
    guard("rdtp_receiver_bytes_received", 0, || unsafe { view::<Receiver>(rx) }.map_or(0, |r| r.bytes_received()))
}

/// Fill `*out` with the receiver's statistics.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_stats(rx: *const RdtpNode, out: *mut RdtpStats) {
    guard("rdtp_receiver_stats", (), || {
        let (Some(r), Some(out)) = (unsafe { view::<Receiver>(rx) }, unsafe { out.as_mut() }) else { return };
        let s = r.stats();
        let c = r.controller();
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
            delivered_bytes: r.delivered_bytes(),
            size: r.size().unwrap_or(0),
            inflight: r.inflight(),
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
) -> *mut RdtpNode {
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
        RdtpNode::into_raw(Core::Server(ServerNode::new(server, Arc::new(PatternCatalog::new(objects)))))
    })
}

/// Set the server's node id (named in every Data and Nack it sends; see `rdtp_node_id`);
/// false if `id` is 0. Call before the first datagram: the counters start over.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_set_id(s: *mut RdtpNode, id: u64) -> bool {
    guard("rdtp_server_set_id", false, || {
        let Some(s) = (unsafe { view_mut::<Srv>(s) }) else { return false };
        if id == 0 {
            return false;
        }
        let config = ServerConfig { id: NodeId::from_u64(id), ..s.server().config().clone() };
        s.set_server(Server::new(config));
        true
    })
}

/// Turn address validation on or off (off after `rdtp_server_new_pattern`): with it, a
/// request without a valid token gets a Retry (RFC 9000 §8). `secret` (32 bytes, or null
/// for all zeros) keys the tokens. Call before the first datagram: the counters start over.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_set_validation(s: *mut RdtpNode, enabled: bool, secret: *const u8) -> bool {
    guard("rdtp_server_set_validation", false, || {
        let Some(s) = (unsafe { view_mut::<Srv>(s) }) else { return false };
        let mut validation = ValidationConfig { enabled, ..ValidationConfig::default() };
        if !secret.is_null() {
            validation.secret.copy_from_slice(unsafe { slice::from_raw_parts(secret, 32) });
        }
        let config = ServerConfig { validation, ..s.server().config().clone() };
        s.set_server(Server::new(config));
        true
    })
}

/// EID (32 bytes into `eid_out`) and size of the object `name`; false if unknown.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_resolve(
    s: *const RdtpNode,
    name: *const c_char,
    eid_out: *mut u8,
    size_out: *mut u64,
) -> bool {
    guard("rdtp_server_resolve", false, || {
        let Some(s) = (unsafe { view::<Srv>(s) }) else { return false };
        if name.is_null() {
            return false;
        }
        let Ok(name) = unsafe { CStr::from_ptr(name) }.to_str() else { return false };
        let Some((eid, size)) = s.catalog().resolve(name) else { return false };
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
    s: *const RdtpNode,
    eid: *const u8,
    offset: u64,
    buf: *mut u8,
    len: usize,
) -> bool {
    guard("rdtp_server_read", false, || {
        let Some(s) = (unsafe { view::<Srv>(s) }) else { return false };
        if eid.is_null() || (buf.is_null() && len > 0) {
            return false;
        }
        let mut id = [0u8; 32];
        id.copy_from_slice(unsafe { slice::from_raw_parts(eid, 32) });
        let id = Eid(id);
        let Some(size) = s.catalog().size_of(&id) else { return false };
        if offset.checked_add(len as u64).is_none_or(|end| end > size) {
            return false;
        }
        if len == 0 {
            return true;
        }
        s.catalog().read_at(&id, offset, unsafe { slice::from_raw_parts_mut(buf, len) }).is_ok()
    })
}

/// Fill `*out` with the server's aggregate counters.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_server_stats(s: *const RdtpNode, out: *mut RdtpServerStats) {
    guard("rdtp_server_stats", (), || {
        let (Some(s), Some(out)) = (unsafe { view::<Srv>(s) }, unsafe { out.as_mut() }) else { return };
        let st = s.server().stats();
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
