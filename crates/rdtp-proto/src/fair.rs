//! Fair shares between sources: the token buckets and the count of active sources that the
//! server's send budget (`server/share.rs`, issue 11) and the router's per-source limits
//! (`router/limits.rs`, issue 23 item 4) both split a rate with.
//!
//! A source is an address and port. Sources are hashed into a fixed array of slots with a
//! keyed BLAKE3 (the key is the node's, so nobody can aim at another source's slot), and a
//! slot counts as active for one window after its last request. Each slot has a token bucket
//! refilled at `rate / active`; what a token is (a byte, a unit) and what is done when a
//! bucket is in debt is the caller's. The state is the same size whatever the number of
//! sources: one [`Slot`] of 32 bytes per slot.
//!
//! Time comes from the caller; instants passed slightly out of order (cores on several
//! threads sharing one budget) count as no time passing.

use std::net::{IpAddr, SocketAddr};

use core::time::Duration;

use crate::time::Time;

/// Tokens that refill at a rate up to a cap (a burst).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Bucket {
    /// Tokens now; below zero, the debt later refills pay back.
    pub tokens: f64,
    last: Time,
}

impl Bucket {
    /// A bucket holding `burst` at `rate`, as of `now`.
    pub(crate) fn full(now: Time, rate: f64, burst: Duration) -> Self {
        Bucket { tokens: rate * burst.as_secs_f64(), last: now }
    }

    /// Add what `rate` gave since the last refill, up to `burst` at `rate`.
    pub(crate) fn refill(&mut self, now: Time, rate: f64, burst: Duration) {
        let dt = if now > self.last { (now - self.last).as_secs_f64() } else { 0.0 };
        self.tokens = (self.tokens + dt * rate).min(rate * burst.as_secs_f64());
        self.last = self.last.max(now);
    }
}

/// One slot: its bucket and when it last asked.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Slot {
    bucket: Bucket,
    /// When this slot last asked (`None`: never).
    seen: Option<Time>,
}

/// A source's slot and the sources active now (from [`SourceSlots::ask`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Asked {
    pub slot: usize,
    /// Sources active now, this one included (at least 1).
    pub active: usize,
}

/// Sources hashed into slots, each with a bucket, and the count of the active ones.
#[derive(Debug)]
pub(crate) struct SourceSlots {
    key: [u8; 32],
    window: Duration,
    slots: Vec<Slot>,
    active: usize,
    last_sweep: Option<Time>,
    /// The last source hashed, and its slot (requests come in runs from one source).
    last: Option<(SocketAddr, usize)>,
}

impl SourceSlots {
    /// `slots` slots (at least one) keyed by `key`; a slot is active for `window` after it asks.
    pub(crate) fn new(slots: usize, key: [u8; 32], window: Duration) -> Self {
        SourceSlots { key, window, slots: vec![Slot::default(); slots.max(1)], active: 0, last_sweep: None, last: None }
    }

    /// Slots (the state's size).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Sources active as last counted.
    pub(crate) fn active(&self) -> usize {
        self.active
    }

    /// The slot of `from`: a keyed hash of its address (IPv4 as IPv4-mapped IPv6) and port.
    pub(crate) fn slot_of(&mut self, from: SocketAddr) -> usize {
        if let Some((a, s)) = self.last
            && a == from
        {
            return s;
        }
        let mut b = [0u8; 18];
        match from.ip() {
            IpAddr::V4(a) => b[..16].copy_from_slice(&a.to_ipv6_mapped().octets()),
            IpAddr::V6(a) => b[..16].copy_from_slice(&a.octets()),
        }
        b[16..].copy_from_slice(&from.port().to_be_bytes());
        let h = blake3::keyed_hash(&self.key, &b);
        let x = u64::from_le_bytes(h.as_bytes()[..8].try_into().expect("8 bytes"));
        let s = (x % self.slots.len() as u64) as usize;
        self.last = Some((from, s));
        s
    }

    /// `from` asks at `now`: it counts as active for one window from now. With a `rate`, its
    /// bucket is refilled at `rate / active` holding at most `burst` of it (a slot's first
    /// request finds it full); [`SourceSlots::bucket_mut`] then debits it.
    pub(crate) fn ask(&mut self, now: Time, from: SocketAddr, rate: Option<f64>, burst: Duration) -> Asked {
        let slot = self.slot_of(from);
        let window = self.window;
        let is_active = |s: &Slot| s.seen.is_some_and(|t| t + window > now);
        if self.last_sweep.is_none_or(|t| now >= t + window) {
            self.active = self.slots.iter().filter(|s| is_active(s)).count();
            self.last_sweep = Some(now);
        }
        if !is_active(&self.slots[slot]) {
            self.active += 1;
        }
        let active = self.active.max(1);
        let s = &mut self.slots[slot];
        if let Some(rate) = rate {
            let share = rate / active as f64;
            if s.seen.is_none() {
                s.bucket = Bucket::full(now, share, burst);
            }
            s.bucket.refill(now, share, burst);
        }
        s.seen = Some(now);
        Asked { slot, active }
    }

    /// The bucket of `slot`.
    pub(crate) fn bucket_mut(&mut self, slot: usize) -> &mut Bucket {
        &mut self.slots[slot].bucket
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(n: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], 4000 + n))
    }

    #[test]
    fn slots_depend_on_the_key_and_the_port_and_state_does_not_grow() {
        let w = Duration::from_millis(200);
        let (mut a, mut b) = (SourceSlots::new(1024, [1; 32], w), SourceSlots::new(1024, [2; 32], w));
        let differ = (0..64).filter(|&p| a.slot_of(addr(p)) != b.slot_of(addr(p))).count();
        assert!(differ > 56, "another key, other slots ({differ} of 64 differ)");
        let ports: std::collections::HashSet<usize> = (0..64).map(|p| a.slot_of(addr(p))).collect();
        assert!(ports.len() > 56, "ports of one address spread over the slots");
        // The cached last source is not returned for another.
        let (x, y) = (a.slot_of(addr(1)), a.slot_of(addr(2)));
        assert_eq!((a.slot_of(addr(1)), a.slot_of(addr(2))), (x, y));
        // 10 000 sources: 64 slots, at most 64 active.
        let mut s = SourceSlots::new(64, [3; 32], w);
        for i in 0..10_000u32 {
            let from = SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], 7000));
            s.ask(Time::ZERO + Duration::from_micros(u64::from(i)), from, Some(1e6), w);
        }
        assert_eq!(s.len(), 64);
        assert!(s.active() <= 64);
        assert_eq!(std::mem::size_of::<Slot>(), 32, "as the module docs say");
    }

    #[test]
    fn active_sources_are_counted_over_one_window_and_buckets_refill_at_their_share() {
        let w = Duration::from_millis(200);
        let burst = Duration::from_millis(100);
        let mut s = SourceSlots::new(1024, [1; 32], w);
        let t0 = Time::ZERO;
        let a = s.ask(t0, addr(1), Some(1000.0), burst);
        assert_eq!(a.active, 1);
        assert_eq!(s.bucket_mut(a.slot).tokens, 100.0, "new: full at the whole rate");
        s.bucket_mut(a.slot).tokens = 0.0;
        let b = s.ask(t0, addr(2), Some(1000.0), burst);
        assert_eq!(b.active, 2);
        assert_eq!(s.bucket_mut(b.slot).tokens, 50.0, "new: full at half the rate");
        // 40 ms later, two active: the first refilled at 500 per second.
        let a = s.ask(t0 + Duration::from_millis(40), addr(1), Some(1000.0), burst);
        assert_eq!(a.active, 2);
        assert!((s.bucket_mut(a.slot).tokens - 20.0).abs() < 1e-9);
        // Out-of-order instants are no time passing.
        s.ask(t0 + Duration::from_millis(30), addr(1), Some(1000.0), burst);
        assert!((s.bucket_mut(a.slot).tokens - 20.0).abs() < 1e-9);
        // After a window without the second, one active again; no rate: only counted.
        let a = s.ask(t0 + Duration::from_millis(300), addr(1), None, burst);
        assert_eq!(a.active, 1);
    }
}
