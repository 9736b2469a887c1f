//! Nodes: the call contract every rdtp core keeps ([`Node`], [`Transmit`]) and node
//! identifiers, who served a unit ([`NodeId`], [`ServedBy`]).
//!
//! # The call contract
//!
//! The receiver, the lister, the server ([`crate::server::ServerNode`]) and the router are
//! all driven the same way, as quinn-proto drives a connection, so that every host — the UDP
//! runtime, the virtual-time harness, the C ABI and ns-3 — moves datagrams and time for any
//! of them with one loop:
//!
//! ```text
//! loop {
//!     while let Some(t) = node.poll_transmit(now, &mut buf) { send(t.to, &buf[..t.len]) } // 1
//!     let deadline = node.poll_timeout();                                                  // 2
//!     wait until a datagram arrives or `deadline` passes, then update `now`:
//!       datagram from `from` → node.handle_datagram(now, from, &bytes)                     // 3
//!       deadline             → node.handle_timeout(now)
//! }
//! ```
//!
//! 1. Call [`Node::poll_transmit`] until it returns `None` after every other call. `buf`
//!    holds at least [`Node::max_datagram`] bytes.
//! 2. [`Node::poll_timeout`] is the next instant [`Node::handle_timeout`] is due (it may be
//!    past); `None`: no timer.
//! 3. `from` is the address the datagram came from, as the network says (a node never
//!    trusts it further than that: addresses are validated with tokens, `crate::token`).
//!    `now` never goes backwards.
//!
//! Each node adds its own calls beside these (a receiver's events and `read`, a router's
//! learned routes); the contract is what every host needs to move bytes and time.
//!
//! # Node identifiers
//!
//! Every Data and Nack names the node that produced it — the origin server or the router
//! whose content store held the unit — so receivers can keep state per source (seed 003
//! §II-B keeps a window and an RTO per source; seed 001 §III-B excludes samples served by
//! the receiver's own cache) and users can see where their bytes came from.
//!
//! A [`NodeId`] is 8 bytes on the wire. It is usually a short human label (`origin`, `ap`,
//! `r1`): up to 8 printable ASCII characters not starting with `0x`, padded with zero
//! bytes. Any other 8 bytes are a valid id too and print as `0x` and 16 hex digits. Ids
//! need not be routable (seed 003 §II-A: "a unique node identifier, which is not
//! necessarily routable").

use core::fmt;
use core::str::FromStr;
use std::net::SocketAddr;

use crate::time::Time;

/// A datagram to send: to whom, and its length at the start of the buffer given to
/// [`Node::poll_transmit`] (as quinn-proto's `Transmit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub to: SocketAddr,
    pub len: usize,
}

/// The sans-IO call contract of every rdtp core (see the module docs for the call order).
pub trait Node {
    /// Take one datagram that came from `from`.
    fn handle_datagram(&mut self, now: Time, from: SocketAddr, datagram: &[u8]);
    /// Write the next datagram to send into `buf` (≥ [`Node::max_datagram`] bytes), if one
    /// is due.
    fn poll_transmit(&mut self, now: Time, buf: &mut [u8]) -> Option<Transmit>;
    /// When [`Node::handle_timeout`] must next be called, if at all.
    fn poll_timeout(&self) -> Option<Time>;
    /// Handle the passing of time up to `now`.
    fn handle_timeout(&mut self, now: Time);
    /// The smallest buffer [`Node::poll_transmit`] accepts.
    fn max_datagram(&self) -> usize;
}

/// Implements [`Node`] for a core whose inherent methods already have the contract's shape
/// (they stay callable without importing the trait).
macro_rules! impl_node {
    ($ty:ty, $max:expr) => {
        impl $crate::node::Node for $ty {
            fn handle_datagram(&mut self, now: $crate::Time, from: ::std::net::SocketAddr, datagram: &[u8]) {
                <$ty>::handle_datagram(self, now, from, datagram)
            }
            fn poll_transmit(&mut self, now: $crate::Time, buf: &mut [u8]) -> Option<$crate::node::Transmit> {
                <$ty>::poll_transmit(self, now, buf)
            }
            fn poll_timeout(&self) -> Option<$crate::Time> {
                <$ty>::poll_timeout(self)
            }
            fn handle_timeout(&mut self, now: $crate::Time) {
                <$ty>::handle_timeout(self, now)
            }
            fn max_datagram(&self) -> usize {
                $max
            }
        }
    };
}
pub(crate) use impl_node;

/// Length of a node id on the wire.
pub const NODE_ID_LEN: usize = 8;

/// Identifier of a node (origin server or router).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct NodeId(pub [u8; NODE_ID_LEN]);

impl NodeId {
    /// All zero: "unknown" (never sent by a correct node).
    pub const UNKNOWN: NodeId = NodeId([0; NODE_ID_LEN]);
    /// The default id of an origin server.
    pub const ORIGIN: NodeId = NodeId(*b"origin\0\0");

    /// The id labelled `s`, if `s` is 1–8 printable ASCII characters (no spaces) and does
    /// not start with `0x` (which is how raw ids print).
    pub fn label(s: &str) -> Option<NodeId> {
        let b = s.as_bytes();
        if b.is_empty() || b.len() > NODE_ID_LEN || !b.iter().all(|c| c.is_ascii_graphic()) || s.starts_with("0x") {
            return None;
        }
        let mut id = [0u8; NODE_ID_LEN];
        id[..b.len()].copy_from_slice(b);
        Some(NodeId(id))
    }

    /// The label, if this id is one (printable ASCII then zero padding).
    pub fn as_label(&self) -> Option<&str> {
        let len = self.0.iter().position(|&b| b == 0).unwrap_or(NODE_ID_LEN);
        let (text, pad) = self.0.split_at(len);
        (len > 0
            && text.iter().all(|c| c.is_ascii_graphic())
            && pad.iter().all(|&b| b == 0)
            && !text.starts_with(b"0x"))
        .then(|| core::str::from_utf8(text).expect("ASCII"))
    }

    /// The id as a big-endian integer (for C and logs).
    pub fn to_u64(self) -> u64 {
        u64::from_be_bytes(self.0)
    }

    /// The id whose big-endian integer is `v`.
    pub fn from_u64(v: u64) -> NodeId {
        NodeId(v.to_be_bytes())
    }
}

/// Who served a Data packet, as the packet says (seed 003 §II-A: node id and hop count).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ServedBy {
    /// The origin server, or the router whose content store held the unit.
    pub node: NodeId,
    /// Routers crossed between that node and the receiver.
    pub hops: u8,
    /// Served from a router's content store (else by the origin).
    pub cached: bool,
}

/// Why a string is not a node id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a node id is 1 to 8 printable ASCII characters, or 0x and 16 hexadecimal digits")]
pub struct ParseNodeIdError;

impl FromStr for NodeId {
    type Err = ParseNodeIdError;
    fn from_str(s: &str) -> Result<NodeId, ParseNodeIdError> {
        if let Some(hex) = s.strip_prefix("0x")
            && hex.len() == 2 * NODE_ID_LEN
        {
            return u64::from_str_radix(hex, 16).map(NodeId::from_u64).map_err(|_| ParseNodeIdError);
        }
        NodeId::label(s).ok_or(ParseNodeIdError)
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_label() {
            Some(l) => f.write_str(l),
            None => write!(f, "0x{:016x}", self.to_u64()),
        }
    }
}

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NodeId({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_raw_ids_round_trip_through_text() {
        let ap: NodeId = "ap".parse().unwrap();
        assert_eq!(ap.0, *b"ap\0\0\0\0\0\0");
        assert_eq!(ap.to_string(), "ap");
        assert_eq!(NodeId::ORIGIN.to_string(), "origin");
        assert_eq!("12345678".parse::<NodeId>().unwrap().to_string(), "12345678");
        let raw = NodeId([0xff, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(raw.to_string(), "0xff01020304050607");
        assert_eq!(raw.to_string().parse::<NodeId>().unwrap(), raw);
        // Zero padding in the middle is not a label.
        assert_eq!(NodeId(*b"a\0b\0\0\0\0\0").to_string(), "0x6100620000000000");
        assert_eq!(NodeId::UNKNOWN.to_string(), "0x0000000000000000");
        assert_eq!(NodeId(*b"0x12\0\0\0\0").to_string(), "0x3078313200000000");
        for bad in ["", "123456789", "a b", "é", "0xzz", "0x12"] {
            assert!(bad.parse::<NodeId>().is_err(), "{bad:?}");
        }
    }
}
