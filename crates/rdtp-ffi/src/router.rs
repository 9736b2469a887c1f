//! The caching router behind the C ABI (`rdtp_router_*`): the `rdtp-proto` router core as
//! an [`RdtpNode`], with peers as [`RdtpAddr`]s, and node ids (`rdtp_node_id`).
//!
//! ```c
//! char why[256];
//! RdtpNode *r = rdtp_router_new_from_spec("id=ap,cs_units=1000,cs_policy=lfu", why, sizeof why);
//! rdtp_router_set_default_route(r, upstream);
//! // whenever a datagram arrives from `from`, or the timer fires:
//! rdtp_node_handle_datagram(r, now, from, data, len);   // or rdtp_node_handle_timeout(r, now)
//! while ((n = rdtp_node_poll_transmit(r, now, buf, sizeof buf, &to)) > 0) send(to, buf, n);
//! if (rdtp_node_poll_timeout(r, &at)) schedule(at);
//! ```
//!
//! Counters are exposed by name (`rdtp_router_counter_name`, `rdtp_router_counters`), in the
//! order the core's statistics serialise, so C code never mirrors the core's structs.

use crate::node::{Core, RdtpAddr, RdtpNode, view, view_mut};
use crate::panic::guard;
use std::ffi::{CStr, CString, c_char};
use std::slice;
use std::sync::OnceLock;

use rdtp_proto::NodeId;
use rdtp_proto::router::cs::CsConfig;
use rdtp_proto::router::fib::{Route, RouteKey};
use rdtp_proto::router::{Router, RouterConfig, SourceLimits};
use rdtp_proto::token::ValidationConfig;

/// The node id labelled `label` (1–8 printable characters, not starting with `0x`) as the
/// big-endian integer of its 8 bytes; 0 if `label` is not a valid label.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_node_id(label: *const c_char) -> u64 {
    guard("rdtp_node_id", 0, || {
        if label.is_null() {
            return 0;
        }
        unsafe { CStr::from_ptr(label) }.to_str().ok().and_then(NodeId::label).map_or(0, NodeId::to_u64)
    })
}

/// Write node id `id` as people read it — its label (`ap`, `origin`), else `0x` and 16 hex
/// digits — NUL-terminated into `buf`; returns the length without the NUL (0 if `cap` is
/// too small: 19 bytes always suffice).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_node_id_label(id: u64, buf: *mut c_char, cap: usize) -> usize {
    guard("rdtp_node_id_label", 0, || {
        let text = NodeId::from_u64(id).to_string();
        if buf.is_null() || cap <= text.len() {
            return 0;
        }
        let out = unsafe { slice::from_raw_parts_mut(buf.cast::<u8>(), cap) };
        out[..text.len()].copy_from_slice(text.as_bytes());
        out[text.len()] = 0;
        text.len()
    })
}

/// The string at `p` (`default` if null), or `None` if it is not UTF-8.
///
/// # Safety
/// `p` is null or a NUL-terminated string that outlives the use of the result.
unsafe fn string(p: *const c_char, default: &str) -> Option<&str> {
    if p.is_null() {
        return Some(default);
    }
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

/// The configuration a router made through the C ABI starts from, before its spec: the
/// core's defaults, but as the papers' routers (NFD) and the simulated experiments have them.
/// The store has no byte limit (`cs_bytes`), nothing is refused for a silent upstream
/// (`upstream_timeout=0s`: seed 001 §IV-D's 32 s producer outage must leave the AP's consumers
/// waiting, as it did), sources are not limited (`forward_rate=0,share_pending=false`, issue
/// 23) and downstream addresses are not validated (`validation=false`: a simulation has no
/// spoofers).
pub fn base_config() -> RouterConfig {
    let d = RouterConfig::default();
    RouterConfig {
        cs: CsConfig { capacity_bytes: u64::MAX, ..d.cs },
        validation: ValidationConfig { enabled: false, ..ValidationConfig::default() },
        upstream_timeout: None,
        source_limits: SourceLimits::off(),
        ..d
    }
}

/// A router with no routes yet, configured by a router spec `spec` ("KEY=VALUE,..."; null or
/// "" = the defaults of a simulated router, see below; `rdtp_router_help()` lists the keys;
/// several separated by ';' apply in order, so a host's keys — id, seed — may come before
/// its user's). Null if the spec is refused: then `err` holds why, naming the key
/// (NUL-terminated, truncated to `err_cap` - 1 bytes; `err` may be null when `err_cap` is 0).
///
/// Before its spec a router has the core's defaults as the papers' routers (NFD) have them:
/// no byte limit on the store, no upstream timeout, no per-source limits, no address
/// validation (`rdtp_router_help()` shows the core's defaults, those of `rdtp route`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_router_new_from_spec(
    spec: *const c_char,
    err: *mut c_char,
    err_cap: usize,
) -> *mut RdtpNode {
    guard("rdtp_router_new_from_spec", core::ptr::null_mut(), || {
        let mut config = base_config();
        let applied = if spec.is_null() {
            Ok(())
        } else {
            match unsafe { CStr::from_ptr(spec) }.to_str() {
                Ok(text) => config.apply_spec(text).map_err(|e| e.to_string()),
                Err(_) => Err("the router spec is not UTF-8".to_string()),
            }
        };
        match applied {
            Ok(()) => RdtpNode::into_raw(Core::Router(Router::new(config))),
            Err(message) => {
                unsafe { crate::panic::write_message(&message, err, err_cap) };
                core::ptr::null_mut()
            }
        }
    })
}

/// Every router spec key with the core's default, meaning and accepted values: static,
/// NUL-terminated text, never freed.
#[unsafe(no_mangle)]
pub extern "C" fn rdtp_router_help() -> *const c_char {
    guard("rdtp_router_help", core::ptr::null(), || {
        static HELP: OnceLock<CString> = OnceLock::new();
        HELP.get_or_init(|| CString::new(RouterConfig::help()).expect("the help text has no NUL")).as_ptr()
    })
}

/// **Experiments only** (feature `experiments`; declared with `RDTP_EXPERIMENTS` defined):
/// `on` makes the router cache every unit it forwards as it arrives, unchecked and without
/// proof requests — the non-verifying baseline that measures what verify-before-caching
/// costs. Such a router can be made to serve forged bytes from its store. False if `r` is
/// no router.
#[cfg(feature = "experiments")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_router_cache_unverified(r: *mut RdtpNode, on: bool) -> bool {
    guard("rdtp_router_cache_unverified", false, || {
        let Some(r) = (unsafe { view_mut::<Router>(r) }) else { return false };
        r.cache_unverified_for_experiments(on);
        true
    })
}

/// Send what no other route matches to `next_hop`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_router_set_default_route(r: *mut RdtpNode, next_hop: RdtpAddr) -> bool {
    guard("rdtp_router_set_default_route", false, || {
        let (Some(r), Some(a)) = (unsafe { view_mut::<Router>(r) }, next_hop.to_socket()) else { return false };
        r.fib_mut().set_default(Some(a));
        true
    })
}

/// Route `key` — an EID in hex (64 digits) or a name prefix — to `next_hop`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_router_add_route(r: *mut RdtpNode, key: *const c_char, next_hop: RdtpAddr) -> bool {
    guard("rdtp_router_add_route", false, || {
        let Some(r) = (unsafe { view_mut::<Router>(r) }) else { return false };
        let (Some(key), Some(a)) = (unsafe { string(key, "") }, next_hop.to_socket()) else { return false };
        r.fib_mut().add(Route { key: RouteKey::parse(key), next_hop: a });
        true
    })
}

/// Add `next_hop` to the route of `key` — "" for the default route, or an EID in hex (64
/// digits) — after the next hops it has, for the forwarding strategy to choose among (spec key
/// `strategy`, e.g. `asf`); a route `key` did not have yet is created. A name prefix keeps one
/// next hop: for one, this replaces it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_router_add_next_hop(r: *mut RdtpNode, key: *const c_char, next_hop: RdtpAddr) -> bool {
    guard("rdtp_router_add_next_hop", false, || {
        let Some(r) = (unsafe { view_mut::<Router>(r) }) else { return false };
        let (Some(key), Some(a)) = (unsafe { string(key, "") }, next_hop.to_socket()) else { return false };
        if key.is_empty() {
            r.fib_mut().add_default_next_hop(a);
        } else {
            r.fib_mut().add_next_hop(Route { key: RouteKey::parse(key), next_hop: a });
        }
        true
    })
}

/// The router's counters and gauges, flattened to `(name, value)` in a fixed order: the
/// core's `RouterStats` fields, then the content store's own (`store_` prefixed: inserts,
/// evictions, admission refusals…), then the gauges.
/// Warm a path of routers without packets (seed 003's warm-up, as Icarus warms caches): one
/// fetch of a whole object — `len` bytes at `object`, which must hash to the 32-byte `eid` —
/// in units of `unit` bytes along `routers[0..n)` (the receiver's first hop first): each
/// router looks each unit up as for a request, the first holding it answers, and the ones
/// before it are offered it as Data from upstream (`Router::warm_fetch`). Writes how many
/// units each router answered into `answered[0..n)` (may be null). False, and nothing
/// changes, if the bytes are not the EID's, `unit` is 0, or a router pointer is null,
/// repeated or no router.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_routers_warm_fetch(
    routers: *const *mut RdtpNode,
    n: usize,
    eid: *const u8,
    object: *const u8,
    len: usize,
    unit: u16,
    answered: *mut u64,
) -> bool {
    guard("rdtp_routers_warm_fetch", false, || {
        if routers.is_null() || eid.is_null() || (object.is_null() && len > 0) {
            return false;
        }
        let ptrs = unsafe { slice::from_raw_parts(routers, n) };
        let mut path: Vec<&mut Router> = Vec::with_capacity(n);
        for (i, &p) in ptrs.iter().enumerate() {
            if ptrs[..i].contains(&p) {
                return false;
            }
            let Some(r) = (unsafe { view_mut::<Router>(p) }) else { return false };
            path.push(r);
        }
        let mut id = [0u8; 32];
        id.copy_from_slice(unsafe { slice::from_raw_parts(eid, 32) });
        let bytes = if len == 0 { &[][..] } else { unsafe { slice::from_raw_parts(object, len) } };
        let Some(counts) = Router::warm_fetch(&mut path, rdtp_proto::Eid(id), bytes, unit) else { return false };
        if !answered.is_null() {
            unsafe { slice::from_raw_parts_mut(answered, n) }.copy_from_slice(&counts);
        }
        true
    })
}

fn counters(r: &Router) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut flatten = |prefix: &str, v: serde_json::Value| {
        if let serde_json::Value::Object(m) = v {
            for (k, v) in m {
                out.push((format!("{prefix}{k}"), v.as_u64().unwrap_or(0)));
            }
        }
    };
    flatten("", serde_json::to_value(r.stats()).unwrap_or_default());
    flatten("store_", serde_json::to_value(r.cs_stats()).unwrap_or_default());
    out.push(("cs_entries".into(), r.cs_len() as u64));
    out.push(("cs_bytes".into(), r.cs_bytes()));
    out.push(("pit_entries".into(), r.pit_len() as u64));
    out
}

fn counter_names() -> &'static [CString] {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let r = Router::new(RouterConfig::default());
        counters(&r).into_iter().map(|(n, _)| CString::new(n).expect("no NUL in field names")).collect()
    })
}

/// How many counters `rdtp_router_counters` reports.
#[unsafe(no_mangle)]
pub extern "C" fn rdtp_router_counter_count() -> usize {
    guard("rdtp_router_counter_count", 0, || counter_names().len())
}

/// The name of counter `i` (static, NUL-terminated; null if out of range), e.g. `cs_hits`,
/// `cs_misses`, `coalesced`, `store_evictions`, `pit_entries`.
#[unsafe(no_mangle)]
pub extern "C" fn rdtp_router_counter_name(i: usize) -> *const c_char {
    guard("rdtp_router_counter_name", core::ptr::null(), || {
        counter_names().get(i).map_or(core::ptr::null(), |c| c.as_ptr())
    })
}

/// Fill `values[0..n)` with the counters, in the order of their names; returns how many
/// were written.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_router_counters(r: *const RdtpNode, values: *mut u64, n: usize) -> usize {
    guard("rdtp_router_counters", 0, || {
        let Some(r) = (unsafe { view::<Router>(r) }) else { return 0 };
        if values.is_null() {
            return 0;
        }
        let out = unsafe { slice::from_raw_parts_mut(values, n) };
        let c = counters(r);
        for (slot, (_, v)) in out.iter_mut().zip(&c) {
            *slot = *v;
        }
        c.len().min(n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_in_a_stable_order() {
        let names: Vec<&str> = counter_names().iter().map(|c| c.to_str().unwrap()).collect();
        for want in ["requests", "cs_hits", "cs_misses", "coalesced", "store_evictions", "pit_entries", "bytes_in"] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        let r = Router::new(RouterConfig::default());
        assert_eq!(counters(&r).len(), names.len());
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "names collide");
        let a = crate::node::rdtp_addr_v4(0x0a00_0001, 7447);
        assert_eq!(a.to_socket(), Some("10.0.0.1:7447".parse().unwrap()));
        assert_eq!(unsafe { rdtp_node_id(c"ap".as_ptr()) }, NodeId::label("ap").unwrap().to_u64());
        assert_eq!(unsafe { rdtp_node_id(c"waytoolongid".as_ptr()) }, 0);
        let mut buf = [0 as c_char; 19];
        let ap = NodeId::label("ap").unwrap().to_u64();
        assert_eq!(unsafe { rdtp_node_id_label(ap, buf.as_mut_ptr(), buf.len()) }, 2);
        assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }, c"ap");
        assert_eq!(unsafe { rdtp_node_id_label(1, buf.as_mut_ptr(), buf.len()) }, 18);
        assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }, c"0x0000000000000001");
        assert_eq!(unsafe { rdtp_node_id_label(1, buf.as_mut_ptr(), 18) }, 0, "no room for the NUL");
    }

    /// The warm-up through the C ABI: an object read from a producer warms two routers; the
    /// second fetch is answered by the first router; wrong bytes and a repeated router are
    /// refused without touching the stores.
    /// A router spec reaches the core over the simulated base; a bad one is refused with its
    /// reason in the caller's buffer, never a panic.
    #[test]
    fn routers_are_configured_by_spec() {
        let mut why = [0 as c_char; 128];
        let r = unsafe { rdtp_router_new_from_spec(c"seed=1;cs_units=7,strategy=asf".as_ptr(), why.as_mut_ptr(), 128) };
        assert_eq!(unsafe { view::<Router>(r) }.unwrap().strategy(), "asf");
        unsafe { crate::node::rdtp_node_free(r) };
        let mut c = base_config();
        c.apply_spec("seed=1;cs_units=7").unwrap();
        assert_eq!((c.cs.capacity_units, c.cs.capacity_bytes, c.cs.seed), (7, u64::MAX, 1));
        assert_eq!((c.upstream_timeout, c.validation.enabled, c.source_limits.rate), (None, false, None));
        let bad = unsafe { rdtp_router_new_from_spec(c"lifetime=4".as_ptr(), why.as_mut_ptr(), why.len()) };
        assert!(bad.is_null());
        let message = unsafe { CStr::from_ptr(why.as_ptr()) }.to_str().unwrap();
        assert!(message.starts_with("router: lifetime=4: the value must be a duration"), "{message}");
    }

    #[test]
    fn a_path_is_warmed_with_an_object_read_from_its_producer() {
        use crate::node::rdtp_node_free;
        use crate::{rdtp_server_new_pattern, rdtp_server_read, rdtp_server_resolve};
        let names = [c"obj".as_ptr()];
        let s = unsafe { rdtp_server_new_pattern(names.as_ptr(), [10_000u64].as_ptr(), [7u64].as_ptr(), 1) };
        let (mut eid, mut size) = ([0u8; 32], 0u64);
        assert!(unsafe { rdtp_server_resolve(s, c"obj".as_ptr(), eid.as_mut_ptr(), &mut size) });
        let mut object = vec![0u8; size as usize];
        assert!(unsafe { rdtp_server_read(s, eid.as_ptr(), 0, object.as_mut_ptr(), object.len()) });
        assert!(!unsafe { rdtp_server_read(s, eid.as_ptr(), 1, object.as_mut_ptr(), object.len()) }, "past the end");
        let new = || unsafe { rdtp_router_new_from_spec(core::ptr::null(), core::ptr::null_mut(), 0) };
        let (a, b) = (new(), new());
        let path = [a, b];
        let mut answered = [9u64; 2];
        let warm = |path: &[*mut RdtpNode], bytes: &[u8], answered: &mut [u64]| unsafe {
            rdtp_routers_warm_fetch(
                path.as_ptr(),
                path.len(),
                eid.as_ptr(),
                bytes.as_ptr(),
                bytes.len(),
                1000,
                answered.as_mut_ptr(),
            )
        };
        assert!(!warm(&[a, a], &object, &mut answered), "the same router twice");
        let mut wrong = object.clone();
        wrong[0] ^= 1;
        assert!(!warm(&path, &wrong, &mut answered));
        assert!(warm(&path, &object, &mut answered));
        assert_eq!(answered, [0, 0]);
        assert!(warm(&path, &object, &mut answered));
        assert_eq!(answered, [10, 0]);
        unsafe {
            assert_eq!((view::<Router>(a).unwrap().cs_len(), view::<Router>(b).unwrap().cs_len()), (10, 10));
            rdtp_node_free(a);
            rdtp_node_free(b);
            rdtp_node_free(s);
        }
    }
}
