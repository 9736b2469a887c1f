//! The emulated path: a bottleneck in the data direction (server → receivers) with a
//! drop-tail FIFO, propagation delay both ways, and optional impairments.

use core::time::Duration;

/// Bytes of IPv4 + UDP headers counted on the wire for every datagram.
pub const IPV4_UDP_HEADER: u32 = 28;

/// A dumbbell path shared by all flows of a simulation.
#[derive(Clone, Debug)]
pub struct PathConfig {
    /// Bottleneck rate in the data direction, bit/s.
    pub rate_bps: f64,
    /// Later rate changes: `(time since start, rate)`, in time order.
    pub rate_schedule: Vec<(Duration, f64)>,
    /// Propagation delay each way; the base RTT is twice this.
    pub one_way_delay: Duration,
    /// Drop-tail buffer at the bottleneck, bytes.
    pub queue_bytes: u64,
    /// Probability that a Data datagram is lost after the bottleneck (random loss).
    pub data_loss: f64,
    /// Probability that a request (or resolve) is lost on the way to the server.
    pub request_loss: f64,
    /// Probability that a Data datagram is held back by `reorder_delay` (reordering).
    pub reorder: f64,
    pub reorder_delay: Duration,
    /// Probability that a Data datagram is delivered twice.
    pub duplicate: f64,
    /// Header bytes added to every datagram on the wire.
    pub header_overhead: u32,
    /// Seed of the impairment randomness.
    pub seed: u64,
}

impl PathConfig {
    /// A clean path of `rate_bps` and base RTT `rtt` with a one-BDP drop-tail buffer.
    pub fn new(rate_bps: f64, rtt: Duration) -> Self {
        let mut p = PathConfig {
            rate_bps,
            rate_schedule: Vec::new(),
            one_way_delay: rtt / 2,
            queue_bytes: 0,
            data_loss: 0.0,
            request_loss: 0.0,
            reorder: 0.0,
            reorder_delay: Duration::ZERO,
            duplicate: 0.0,
            header_overhead: IPV4_UDP_HEADER,
            seed: 1,
        };
        p.queue_bytes = p.bdp_bytes().max(64 * 1500);
        p
    }

    /// Bandwidth-delay product at the initial rate, bytes.
    pub fn bdp_bytes(&self) -> u64 {
        (self.rate_bps / 8.0 * (self.one_way_delay * 2).as_secs_f64()) as u64
    }

    /// Base RTT.
    pub fn rtt(&self) -> Duration {
        self.one_way_delay * 2
    }

    /// Bytes one Data datagram carrying a `unit`-byte payload takes on the bottleneck
    /// (rdtp's Data header and this path's per-datagram overhead included).
    pub fn data_wire_bytes(&self, unit: u16) -> f64 {
        f64::from(unit) + (rdtp_proto::wire::DATA_HEADER_LEN as f64) + f64::from(self.header_overhead)
    }

    /// RTprop: the base RTT plus one `unit`-byte Data datagram's serialisation at the
    /// bottleneck.
    pub fn rtprop(&self, unit: u16) -> Duration {
        self.rtt() + Duration::from_secs_f64(self.data_wire_bytes(unit) * 8.0 / self.rate_bps)
    }

    /// Payload bytes per second the bottleneck carries with `unit`-byte units (what an exact
    /// estimate of the path would tell a receiver).
    pub fn payload_rate(&self, unit: u16) -> f64 {
        self.rate_bps / 8.0 * f64::from(unit) / self.data_wire_bytes(unit)
    }

    /// Set the buffer to `k` bandwidth-delay products.
    pub fn with_queue_bdp(mut self, k: f64) -> Self {
        self.queue_bytes = ((self.bdp_bytes() as f64 * k) as u64).max(2 * 1500);
        self
    }
}
