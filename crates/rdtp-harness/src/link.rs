//! One direction of a link: serialisation at a rate behind a drop-tail FIFO, propagation
//! delay, and optional random loss, reordering and duplication.
//!
//! This is the only link model of the harness: the dumbbell of [`crate::Sim`] and every
//! link of a [`crate::Net`] are made of it.

use core::time::Duration;

use rand_core::Rng;
use rand_pcg::Pcg32;
use rdtp_proto::Time;

use crate::metrics::{DelayStats, Series};
use crate::path::IPV4_UDP_HEADER;

/// One direction of a link.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    /// Serialisation rate, bit/s; `None` = infinitely fast (no queue).
    pub rate_bps: Option<f64>,
    /// Propagation delay.
    pub delay: Duration,
    /// Drop-tail buffer, bytes (with a rate only).
    pub queue_bytes: u64,
    /// Probability that a datagram is lost after the queue.
    pub loss: f64,
    /// Probability that a datagram is held back by `reorder_delay`.
    pub reorder: f64,
    pub reorder_delay: Duration,
    /// Probability that a datagram is delivered twice.
    pub duplicate: f64,
    /// Probability that a datagram's last byte is changed on the way (an on-path attacker
    /// or a broken middlebox: it hits a Data's payload or a Proof's last sibling).
    pub corrupt: f64,
    /// Header bytes added to every datagram on the wire (IPv4 + UDP by default).
    pub header_overhead: u32,
}

impl LinkConfig {
    /// A link of `rate_bps` and one-way `delay` with a drop-tail buffer of one
    /// bandwidth-delay product of the round trip (at least 64 full-size packets).
    pub fn new(rate_bps: f64, delay: Duration) -> Self {
        let bdp = (rate_bps / 8.0 * (delay * 2).as_secs_f64()) as u64;
        LinkConfig { rate_bps: Some(rate_bps), queue_bytes: bdp.max(64 * 1500), ..LinkConfig::wire(delay) }
    }

    /// An infinitely fast, clean link of one-way `delay`.
    pub fn wire(delay: Duration) -> Self {
        LinkConfig {
            rate_bps: None,
            delay,
            queue_bytes: 0,
            loss: 0.0,
            reorder: 0.0,
            reorder_delay: Duration::ZERO,
            duplicate: 0.0,
            corrupt: 0.0,
            header_overhead: IPV4_UDP_HEADER,
        }
    }

    /// Whether a datagram crosses it instantly and unchanged (a node's attachment to a
    /// switch, say): it then takes no event of its own.
    pub fn is_transparent(&self) -> bool {
        self.rate_bps.is_none()
            && self.delay.is_zero()
            && self.loss == 0.0
            && self.reorder == 0.0
            && self.duplicate == 0.0
            && self.corrupt == 0.0
    }
}

/// What a link measured.
#[derive(Debug)]
pub struct LinkStats {
    /// Bytes (with headers) that left the queue, binned.
    pub departed: Series,
    /// Queueing delay of every datagram that entered the queue.
    pub queue_delay: DelayStats,
    /// Datagrams dropped by the full buffer.
    pub queue_drops: u64,
    /// Datagrams dropped by random loss.
    pub random_drops: u64,
    pub reordered: u64,
    pub duplicated: u64,
    pub corrupted: u64,
    /// Datagrams offered to the link.
    pub datagrams: u64,
}

impl LinkStats {
    pub fn new(bin: Duration) -> Self {
        LinkStats {
            departed: Series::new(bin),
            queue_delay: DelayStats::default(),
            queue_drops: 0,
            random_drops: 0,
            reordered: 0,
            duplicated: 0,
            corrupted: 0,
            datagrams: 0,
        }
    }
}

/// One direction of a link, with its queue.
#[derive(Debug)]
pub struct Link {
    pub cfg: LinkConfig,
    pub stats: LinkStats,
    /// When the link finishes sending what is queued.
    free_at: Time,
}

/// When copies of a datagram arrive at the far end (none if it was lost).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arrivals {
    pub at: Option<Time>,
    /// A duplicate, scheduled before the original.
    pub duplicate_at: Option<Time>,
    /// The datagram's last byte is to be changed (both copies).
    pub corrupt: bool,
}

impl Link {
    pub fn new(cfg: LinkConfig, bin: Duration) -> Self {
        Link { cfg, stats: LinkStats::new(bin), free_at: Time::ZERO }
    }

    /// Change the rate (a capacity step).
    pub fn set_rate(&mut self, bps: f64) {
        self.cfg.rate_bps = Some(bps);
    }

    /// A datagram of `len` bytes enters at `now`.
    pub fn transmit(&mut self, now: Time, len: usize, rng: &mut Pcg32) -> Arrivals {
        self.stats.datagrams += 1;
        let done = match self.cfg.rate_bps {
            None => now,
            Some(rate) => {
                let size = len as u64 + u64::from(self.cfg.header_overhead);
                let backlog = ((self.free_at - now).as_secs_f64() * rate / 8.0) as u64;
                if backlog > 0 && backlog + size > self.cfg.queue_bytes {
                    self.stats.queue_drops += 1;
                    return Arrivals::default();
                }
                let start = self.free_at.max(now);
                let done = start + Duration::from_secs_f64(size as f64 * 8.0 / rate);
                self.free_at = done;
                self.stats.queue_delay.push(now, start - now);
                self.stats.departed.add(done, size);
                done
            }
        };
        if chance(rng, self.cfg.loss) {
            self.stats.random_drops += 1;
            return Arrivals::default();
        }
        let mut at = done + self.cfg.delay;
        if chance(rng, self.cfg.reorder) {
            self.stats.reordered += 1;
            at += self.cfg.reorder_delay;
        }
        let mut out = Arrivals { at: Some(at), duplicate_at: None, corrupt: false };
        if chance(rng, self.cfg.corrupt) {
            self.stats.corrupted += 1;
            out.corrupt = true;
        }
        if chance(rng, self.cfg.duplicate) {
            self.stats.duplicated += 1;
            out.duplicate_at = Some(at + Duration::from_micros(1));
        }
        out
    }
}

/// A Bernoulli draw; draws nothing when `p` is 0 (so adding a clean link does not change
/// the random stream other links see).
pub fn chance(rng: &mut Pcg32, p: f64) -> bool {
    p > 0.0 && (f64::from(rng.next_u32()) / f64::from(u32::MAX)) < p
}
