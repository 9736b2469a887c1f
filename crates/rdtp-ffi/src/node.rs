//! The node family of the C ABI: one opaque handle, [`RdtpNode`], for every core — a
//! receiver (`rdtp_receiver_new_from_spec`), a server (`rdtp_server_new_pattern`) or a router
//! (`rdtp_router_new_from_spec`) — driven by one set of calls, `rdtp_node_*`, implemented once
//! over the core's call contract (`rdtp_proto::Node`, quinn-proto's shape):
//!
//! ```c
//! // whenever anything happens (start, datagram in, timer):
//! rdtp_node_handle_datagram(node, now, from, data, len);  // for each datagram from `from`
//! rdtp_node_handle_timeout(node, now);                    // at (or after) the instant below
//! while ((n = rdtp_node_poll_transmit(node, now, buf, sizeof buf, &to)) > 0) send(to, buf, n);
//! if (rdtp_node_poll_timeout(node, &at)) schedule(at);
//! rdtp_node_free(node);
//! ```
//!
//! Peers are [`RdtpAddr`]s. What only one kind has — a receiver's events, bytes and
//! statistics, a router's routes and counters, a server's objects and counters — are
//! accessors named by the kind (`rdtp_receiver_read`, `rdtp_router_counters`, …) taking the
//! same handle; given a node of another kind they return their failure value.
//!
//! This module holds no protocol logic and no per-kind copy of the contract: each call
//! forwards to the core through `dyn Node`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::slice;

use rdtp_proto::receiver::Receiver;
use rdtp_proto::router::Router;
use rdtp_proto::server::{PatternCatalog, ServerNode};
use rdtp_proto::{Node, Time};

use crate::panic::guard;

/// A UDP peer address: IPv4 (`family` 4, `ip[0..4]`) or IPv6 (`family` 6, `ip[0..16]`),
/// bytes in network order.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RdtpAddr {
    pub family: u8,
    pub ip: [u8; 16],
    pub port: u16,
}

impl RdtpAddr {
    pub(crate) fn to_socket(self) -> Option<SocketAddr> {
        let ip = match self.family {
            4 => IpAddr::V4(Ipv4Addr::new(self.ip[0], self.ip[1], self.ip[2], self.ip[3])),
            6 => IpAddr::V6(Ipv6Addr::from(self.ip)),
            _ => return None,
        };
        Some(SocketAddr::new(ip, self.port))
    }

    pub(crate) fn from_socket(a: SocketAddr) -> RdtpAddr {
        let mut ip = [0u8; 16];
        let family = match a.ip() {
            IpAddr::V4(v4) => {
                ip[..4].copy_from_slice(&v4.octets());
                4
            }
            IpAddr::V6(v6) => {
                ip.copy_from_slice(&v6.octets());
                6
            }
        };
        RdtpAddr { family, ip, port: a.port() }
    }
}

/// An IPv4 address (host-order integer, as ns-3's `Ipv4Address::Get`) and port.
#[unsafe(no_mangle)]
pub extern "C" fn rdtp_addr_v4(ip: u32, port: u16) -> RdtpAddr {
    guard("rdtp_addr_v4", RdtpAddr::default(), || {
        RdtpAddr::from_socket(SocketAddr::new(IpAddr::V4(Ipv4Addr::from(ip)), port))
    })
}

/// What a node is (`rdtp_node_kind`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdtpNodeKind {
    /// A null handle.
    None = 0,
    Receiver = 1,
    Server = 2,
    Router = 3,
}

/// The core behind a handle.
#[allow(clippy::large_enum_variant)] // one per handle, and every handle is boxed once
pub(crate) enum Core {
    Receiver(Receiver),
    Server(ServerNode<PatternCatalog>),
    Router(Router),
}

/// Opaque node handle: a receiver, a server or a router (`rdtp_node_kind`), freed with
/// `rdtp_node_free`.
pub struct RdtpNode {
    core: Core,
}

impl RdtpNode {
    /// A handle owning `core`, for C.
    pub(crate) fn into_raw(core: Core) -> *mut RdtpNode {
        Box::into_raw(Box::new(RdtpNode { core }))
    }

    fn node(&mut self) -> &mut dyn Node {
        match &mut self.core {
            Core::Receiver(c) => c,
            Core::Server(c) => c,
            Core::Router(c) => c,
        }
    }

    fn node_ref(&self) -> &dyn Node {
        match &self.core {
            Core::Receiver(c) => c,
            Core::Server(c) => c,
            Core::Router(c) => c,
        }
    }
}

/// A core the kind-specific accessors can ask a handle for.
pub(crate) trait Kind: Sized {
    fn of(core: &Core) -> Option<&Self>;
    fn of_mut(core: &mut Core) -> Option<&mut Self>;
}

macro_rules! kind {
    ($ty:ty, $variant:ident) => {
        impl Kind for $ty {
            fn of(core: &Core) -> Option<&Self> {
                if let Core::$variant(c) = core { Some(c) } else { None }
            }
            fn of_mut(core: &mut Core) -> Option<&mut Self> {
                if let Core::$variant(c) = core { Some(c) } else { None }
            }
        }
    };
}
kind!(Receiver, Receiver);
kind!(ServerNode<PatternCatalog>, Server);
kind!(Router, Router);

/// The core of kind `K` behind `node`; `None` if `node` is null or of another kind.
///
/// # Safety
/// `node` is null or a live handle, not used mutably elsewhere during `'a`.
pub(crate) unsafe fn view<'a, K: Kind>(node: *const RdtpNode) -> Option<&'a K> {
    unsafe { node.as_ref() }.and_then(|n| K::of(&n.core))
}

/// As [`view`], mutably.
///
/// # Safety
/// `node` is null or a live handle, not used elsewhere during `'a`.
pub(crate) unsafe fn view_mut<'a, K: Kind>(node: *mut RdtpNode) -> Option<&'a mut K> {
    unsafe { node.as_mut() }.and_then(|n| K::of_mut(&mut n.core))
}

/// What `node` is (`RDTP_NODE_KIND_NONE` for null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_node_kind(node: *const RdtpNode) -> RdtpNodeKind {
    guard("rdtp_node_kind", RdtpNodeKind::None, || match unsafe { node.as_ref() }.map(|n| &n.core) {
        None => RdtpNodeKind::None,
        Some(Core::Receiver(_)) => RdtpNodeKind::Receiver,
        Some(Core::Server(_)) => RdtpNodeKind::Server,
        Some(Core::Router(_)) => RdtpNodeKind::Router,
    })
}

/// Free a node of any kind (null is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_node_free(node: *mut RdtpNode) {
    guard("rdtp_node_free", (), || {
        if !node.is_null() {
            drop(unsafe { Box::from_raw(node) });
        }
    })
}

/// Take one datagram that came from `from` at `now_ns`. False, and nothing happens, if
/// `node` is null, `from` is not an IPv4 or IPv6 address, or `data` is null with `len` > 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_node_handle_datagram(
    node: *mut RdtpNode,
    now_ns: u64,
    from: RdtpAddr,
    data: *const u8,
    len: usize,
) -> bool {
    guard("rdtp_node_handle_datagram", false, || {
        let (Some(n), Some(from)) = (unsafe { node.as_mut() }, from.to_socket()) else { return false };
        if data.is_null() && len > 0 {
            return false;
        }
        let bytes = if len == 0 { &[][..] } else { unsafe { slice::from_raw_parts(data, len) } };
        n.node().handle_datagram(Time::from_nanos(now_ns), from, bytes);
        true
    })
}

/// The next datagram to send: written into `buf`, its destination into `*to` (`to` may be
/// null); returns its length, 0 if none is due — or if `buf` is null or `cap` is below
/// `rdtp_node_max_datagram(node)`, in which case nothing is taken.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_node_poll_transmit(
    node: *mut RdtpNode,
    now_ns: u64,
    buf: *mut u8,
    cap: usize,
    to: *mut RdtpAddr,
) -> usize {
    guard("rdtp_node_poll_transmit", 0, || {
        let Some(n) = (unsafe { node.as_mut() }) else { return 0 };
        let n = n.node();
        if buf.is_null() || cap < n.max_datagram() {
            return 0;
        }
        let out = unsafe { slice::from_raw_parts_mut(buf, cap) };
        let Some(t) = n.poll_transmit(Time::from_nanos(now_ns), out) else { return 0 };
        if let Some(to) = unsafe { to.as_mut() } {
            *to = RdtpAddr::from_socket(t.to);
        }
        t.len
    })
}

/// The next instant `rdtp_node_handle_timeout` is due (it may be past), in `*at_ns`;
/// false if there is none (or `node` is null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_node_poll_timeout(node: *const RdtpNode, at_ns: *mut u64) -> bool {
    guard("rdtp_node_poll_timeout", false, || {
        let Some(t) = unsafe { node.as_ref() }.and_then(|n| n.node_ref().poll_timeout()) else { return false };
        if let Some(out) = unsafe { at_ns.as_mut() } {
            *out = t.as_nanos();
        }
        true
    })
}

/// Let time pass up to `now_ns`: call at (or after) the instant `rdtp_node_poll_timeout`
/// gave.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_node_handle_timeout(node: *mut RdtpNode, now_ns: u64) {
    guard("rdtp_node_handle_timeout", (), || {
        if let Some(n) = unsafe { node.as_mut() } {
            n.node().handle_timeout(Time::from_nanos(now_ns));
        }
    })
}

/// The smallest buffer `rdtp_node_poll_transmit` accepts for `node` (0 if null):
/// `RDTP_MAX_REQUEST` for a receiver, at most `RDTP_MAX_DATAGRAM` for any node.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_node_max_datagram(node: *const RdtpNode) -> usize {
    guard("rdtp_node_max_datagram", 0, || unsafe { node.as_ref() }.map_or(0, |n| n.node_ref().max_datagram()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RDTP_MAX_DATAGRAM, RDTP_MAX_REQUEST};

    /// Every kind through the family: its kind, its buffer size, a refused buffer or address
    /// taking nothing, and an accessor of another kind failing instead of misreading.
    #[test]
    fn every_kind_is_driven_by_the_same_calls() {
        let peer = rdtp_addr_v4(0x0a00_0001, 7447);
        let rx = unsafe {
            crate::rdtp_receiver_new_from_spec(
                core::ptr::null(),
                core::ptr::null(),
                c"obj".as_ptr(),
                peer,
                0,
                core::ptr::null_mut(),
                0,
            )
        };
        let names = [c"obj".as_ptr()];
        let srv = unsafe { crate::rdtp_server_new_pattern(names.as_ptr(), [10_000u64].as_ptr(), [7u64].as_ptr(), 1) };
        let router = unsafe { crate::router::rdtp_router_new_from_spec(core::ptr::null(), core::ptr::null_mut(), 0) };
        unsafe {
            assert_eq!(
                [rdtp_node_kind(rx), rdtp_node_kind(srv), rdtp_node_kind(router), rdtp_node_kind(core::ptr::null())],
                [RdtpNodeKind::Receiver, RdtpNodeKind::Server, RdtpNodeKind::Router, RdtpNodeKind::None]
            );
            assert_eq!(rdtp_node_max_datagram(rx), RDTP_MAX_REQUEST);
            assert!(
                rdtp_node_max_datagram(srv) <= RDTP_MAX_DATAGRAM && rdtp_node_max_datagram(router) <= RDTP_MAX_DATAGRAM
            );
            let mut buf = vec![0u8; RDTP_MAX_DATAGRAM];
            let mut to = RdtpAddr::default();
            assert_eq!(rdtp_node_poll_transmit(rx, 0, buf.as_mut_ptr(), RDTP_MAX_REQUEST - 1, &mut to), 0, "too small");
            let n = rdtp_node_poll_transmit(rx, 0, buf.as_mut_ptr(), buf.len(), &mut to);
            assert!(n > 0, "the resolution request is taken only now");
            assert_eq!(to, peer);
            let from = rdtp_addr_v4(0x0a00_0002, 5000);
            assert!(!rdtp_node_handle_datagram(srv, 0, RdtpAddr::default(), buf.as_ptr(), n), "no address family");
            assert!(rdtp_node_handle_datagram(srv, 0, from, buf.as_ptr(), n));
            let m = rdtp_node_poll_transmit(srv, 0, buf.as_mut_ptr(), buf.len(), &mut to);
            assert!(m > 0 && to == from, "the answer goes back to the asker");
            assert_eq!(rdtp_node_poll_transmit(srv, 0, buf.as_mut_ptr(), buf.len(), &mut to), 0);
            assert_eq!(crate::rdtp_receiver_status(srv), 2, "a server is no receiver");
            assert_eq!(crate::router::rdtp_router_counters(rx, [0u64; 4].as_mut_ptr(), 4), 0);
            assert!(!crate::rdtp_server_set_id(router, 5));
            for node in [rx, srv, router] {
                rdtp_node_free(node);
            }
        }
    }
}
