//! Where a receiver's units came from (`rdtp_receiver_sources`): the core's per-source
//! accounting (`rdtp_proto::receiver::Sources`: the origin, or a router's content store,
//! named by the `served by` of every Data) as a C array, so a host can report per transfer
//! which share came from caches (seed 003 §II-A: a node id per Data) without counting
//! events itself.

use crate::panic::guard;
use std::slice;

use crate::node::{RdtpNode, view};
use crate::ns;
use rdtp_proto::receiver::Receiver;

/// What one source delivered to a receiver.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RdtpSource {
    /// Its node id (`rdtp_node_id_label` prints it).
    pub node: u64,
    /// Served from a router's content store (else by the origin).
    pub cached: bool,
    /// Routers between it and the receiver, as last seen.
    pub hops: u8,
    /// Distinct units, and their payload bytes, it delivered.
    pub units: u64,
    pub bytes: u64,
    /// RTT samples taken from its units, their minimum and mean (0 without samples).
    pub rtt_samples: u64,
    pub rtt_min_ns: u64,
    pub rtt_avg_ns: u64,
}

/// Copy the receiver's sources, in the order they first delivered, into `out[0..cap)`;
/// returns how many there are (more than `cap` if `out` was too short; `cap` 0 counts).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_sources(rx: *const RdtpNode, out: *mut RdtpSource, cap: usize) -> usize {
    guard("rdtp_receiver_sources", 0, || {
        let Some(r) = (unsafe { view::<Receiver>(rx) }) else { return 0 };
        let sources = r.sources();
        if !out.is_null() && cap > 0 {
            let out = unsafe { slice::from_raw_parts_mut(out, cap) };
            for (slot, s) in out.iter_mut().zip(sources.iter()) {
                *slot = RdtpSource {
                    node: s.node.to_u64(),
                    cached: s.cached,
                    hops: s.hops,
                    units: s.units,
                    bytes: s.bytes,
                    rtt_samples: s.rtt_samples,
                    rtt_min_ns: s.rtt_min.map_or(0, ns),
                    rtt_avg_ns: s.rtt_avg().map_or(0, ns),
                };
            }
        }
        sources.len()
    })
}
