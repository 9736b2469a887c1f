//! Per-source limits (issue 23, item 4): one source — one address and port, as the server's
//! fair share counts them (`server/share.rs`) — must not be able to starve a router of its
//! pending tables or of the work it does per unit.
//!
//! A request for 256 units of 64 B of a made-up EID costs the router 256 pending entries and
//! 256 units of forwarding work, and its upstream only one Nack; a few thousand such requests
//! a second from one address filled a router's pending table (in virtual time) or its CPU
//! (on loopback) so that an honest fetch beside them got nothing. Two limits stop it, both
//! kept in a fixed array of slots that sources are hashed into with a keyed BLAKE3 (the key
//! derived from the router's secret, so nobody can aim at another source's slot; the slots
//! and buckets are [`crate::fair`]'s, as the server's fair share's are):
//!
//! * **Pending entries**: a source holds at most `capacity / active` of each pending table
//!   (units pending upstream, forwarded resolves, lists and proof requests), where `active`
//!   counts the slots that asked for anything in the last [`SourceLimits::active_window`],
//!   unless more than `capacity / (active + 1)` of the table is free: the others always
//!   find that much room, and a source that needs more than its share (a fast fetch over a
//!   long path) gets it while they do not. A source alone may use the whole table; beyond
//!   its share with the table that full, it gets no new entries until it is back under it
//!   (its entries leave when answered, or at their lifetime).
//! * **Forwarding rate**: units forwarded upstream (each new or again-forwarded pending
//!   unit, each forwarded resolve, list or proof request) are paid from token buckets, as the
//!   server's fair share pays bytes: every slot refills at `rate / active`, the router's own
//!   bucket at `rate`. A source within its share is always served; a source beyond it only
//!   while the router's bucket is not in debt, so a lone source, or several that do not use
//!   their shares, may use the whole rate (the limit is work-conserving up to `rate`), and
//!   under contention the source asking for most is the one refused. Units the upstream
//!   refuses (a Nack other than `Busy`: made-up EIDs, ranges beyond the end) were wasted
//!   work and are charged again, [`REFUSED_UNIT_CHARGE`] times more.
//!
//! A request from a source beyond its share of the rate, or holding all the pending entries
//! it may, is refused whole with Nack `Busy`, as the server's fair share refuses (receivers
//! take it as congestion and ask again later): it costs the router a look-up and one small
//! Nack to the (validated) source, not a pending entry or a look-up per unit. Units answered
//! from the content store and requests that join an existing pending entry are not charged:
//! they cost no upstream work. The state is the same size whatever the number of sources:
//! [`SourceLimits::slots`] slots of 32 bytes, plus a count of held entries per slot and table.
//!
//! Limits, said plainly: a source is an address and port, so a host sending from many ports
//! takes many shares (as at the server), and sources hashed into one slot share it; the rate
//! is per router core (`rdtp route --workers N` has N of them, each with its own).

use std::hash::Hash;
use std::net::SocketAddr;

use core::time::Duration;

use super::expiring::ExpiringMap;
use super::hashing::TableHasher;
use crate::fair::{Asked, Bucket, SourceSlots};
use crate::time::Time;

/// What the Busy refusing a unit beyond its source's share says.
pub(super) const SOURCE_SHARE_DETAIL: &str =
    "this source's share of the router is in use (too many units pending or asked for)";

/// How a router limits each source (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct SourceLimits {
    /// Units per second this router core forwards upstream for all sources together; under
    /// contention each active source is guaranteed `rate / active` of it and the rest goes
    /// to those asking for more. `None`: no rate limit. The default, 256 000 units/s
    /// (2.9 Gbit/s of 1402-byte units), is above what one core forwards cold through its store
    /// and verification on the machine of `docs/BENCHMARKS.md` (≈ 200 000 units/s), so a
    /// source alone is not slowed there, and it keeps a flood of tiny units (≈ 1.2 µs of work
    /// each) to about a third of a core.
    pub rate: Option<f64>,
    /// Split the pending tables between the active sources (each holds at most
    /// `capacity / active` entries).
    pub share_pending: bool,
    /// Slots sources are hashed into.
    pub slots: usize,
    /// Tokens a bucket holds at most: this long at its rate (100 ms: a receiver's rate
    /// varies from one round trip to the next, and within its share it must not be refused).
    pub burst: Duration,
    /// A slot counts as active for this long after its last request.
    pub active_window: Duration,
}

impl Default for SourceLimits {
    fn default() -> Self {
        SourceLimits {
            rate: Some(256_000.0),
            share_pending: true,
            slots: 1024,
            burst: Duration::from_millis(100),
            active_window: Duration::from_millis(200),
        }
    }
}

impl SourceLimits {
    /// No limits (a source may use every table and any rate).
    pub fn off() -> Self {
        SourceLimits { rate: None, share_pending: false, ..SourceLimits::default() }
    }

    /// Slots used: [`SourceLimits::slots`] within 1 ..= 65 536.
    fn slot_count(&self) -> usize {
        self.slots.clamp(1, usize::from(SlotIx::MAX) + 1)
    }
}

/// Units the upstream refused (a Nack other than `Busy`: unknown content, beyond the end…)
/// were wasted work, charged to their source this many times more: a source asking for
/// what does not exist gets a quarter of the rate it would otherwise, one asking for real
/// content is not affected.
pub(crate) const REFUSED_UNIT_CHARGE: u64 = 3;

/// A slot a source is hashed into.
pub(crate) type SlotIx = u16;

/// A slot of [`SourceSlots`] as a [`SlotIx`] (there are at most 65 536 of them).
fn slot_ix(slot: usize) -> SlotIx {
    SlotIx::try_from(slot).expect("slot_count keeps slots within SlotIx")
}

/// What a source may do now (from [`Limiter::ask`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Standing {
    pub slot: SlotIx,
    /// It may have units forwarded upstream.
    pub may_forward: bool,
    /// Sources active now, this one included.
    pub active: usize,
}

/// The per-source rate buckets and the count of active sources.
#[derive(Debug)]
pub(crate) struct Limiter {
    cfg: SourceLimits,
    /// The router's own bucket (`None` until the first request: it starts full).
    global: Option<Bucket>,
    sources: SourceSlots,
}

impl Limiter {
    /// Limits `cfg`, with slots keyed by `secret` (the router's address-validation secret).
    pub(crate) fn new(mut cfg: SourceLimits, secret: &[u8; 32]) -> Self {
        cfg.slots = cfg.slot_count();
        let key = blake3::derive_key("rdtp router per-source limits v1", secret);
        Limiter { sources: SourceSlots::new(cfg.slots, key, cfg.active_window), cfg, global: None }
    }

    /// The slot of `from`: a keyed hash of its address and port.
    #[cfg(test)]
    pub(crate) fn slot_of(&mut self, from: SocketAddr) -> SlotIx {
        slot_ix(self.sources.slot_of(from))
    }

    /// `from` asks for something at `now`: count it as active and say what it may do.
    pub(crate) fn ask(&mut self, now: Time, from: SocketAddr) -> Standing {
        let (rate, burst) = (self.cfg.rate, self.cfg.burst);
        let Asked { slot, active } = self.sources.ask(now, from, rate, burst);
        let Some(rate) = rate else {
            return Standing { slot: slot_ix(slot), may_forward: true, active };
        };
        let global = self.global.get_or_insert(Bucket::full(now, rate, burst));
        global.refill(now, rate, burst);
        let may_forward = self.sources.bucket_mut(slot).tokens >= 0.0 || global.tokens >= 0.0;
        Standing { slot: slot_ix(slot), may_forward, active }
    }

    /// `units` were forwarded upstream for `slot`: pay them from its bucket and the router's
    /// (either may go into debt, which later requests pay back).
    pub(crate) fn charge(&mut self, slot: SlotIx, units: u64) {
        if self.cfg.rate.is_none() || units == 0 {
            return;
        }
        self.sources.bucket_mut(usize::from(slot)).tokens -= units as f64;
        if let Some(g) = self.global.as_mut() {
            g.tokens -= units as f64;
        }
    }

    /// Whether the source in `slot` may add an entry to `table` when `active` sources ask:
    /// within its share (`capacity / active`), or beyond it while more than
    /// `capacity / (active + 1)` of the table is free — room kept for the others, so the
    /// limit costs nothing while they do not need it.
    pub(crate) fn may_hold_more<K: Hash + Eq + Clone, V: Sourced>(
        &self,
        table: &Held<K, V>,
        slot: SlotIx,
        active: usize,
    ) -> bool {
        let (capacity, active) = (table.capacity(), active.max(1));
        !self.cfg.share_pending
            || table.held(slot) < (capacity / active).max(1)
            || capacity.saturating_sub(table.len()) > capacity / (active + 1)
    }
}

/// A value charged to the source that caused it.
pub(crate) trait Sourced {
    fn source(&self) -> SlotIx;
    /// Records the entry holds beyond its first (a pending unit's further downstreams),
    /// counted by [`Held::joined`] so that their memory is bounded too.
    fn joined(&self) -> usize {
        0
    }
}

/// An [`ExpiringMap`] that counts, per source slot, the entries it holds (the pending
/// tables: [`super::pit::PitEntry`] and forwarded resolves, lists and proof requests).
/// Every way out (removal, expiry) gives the entry's slot its count back.
#[derive(Debug)]
pub(crate) struct Held<K, V> {
    map: ExpiringMap<K, V>,
    held: Vec<u32>,
    /// Sum of the entries' [`Sourced::joined`] records.
    joined: usize,
}

impl<K: Hash + Eq + Clone, V: Sourced> Held<K, V> {
    /// A table of `capacity` entries, counted per slot of `limits`.
    pub(crate) fn new(capacity: usize, limits: &SourceLimits, h: &TableHasher) -> Self {
        Held { map: ExpiringMap::new(capacity, h), held: vec![0; limits.slot_count()], joined: 0 }
    }

    /// Entries charged to `slot`.
    pub(crate) fn held(&self, slot: SlotIx) -> usize {
        self.held.get(usize::from(slot)).map_or(0, |&n| n as usize)
    }

    pub(crate) fn capacity(&self) -> usize {
        self.map.capacity()
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn is_full(&self) -> bool {
        self.map.is_full()
    }

    pub(crate) fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k)
    }

    /// The entry at `k`, to change (its source is kept: only the entry's creator pays).
    pub(crate) fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        self.map.get_mut(k)
    }

    pub(crate) fn insert(&mut self, k: K, value: V, at: Time) -> Result<&mut V, V> {
        let slot = usize::from(value.source());
        let v = self.map.insert(k, value, at)?;
        if let Some(n) = self.held.get_mut(slot) {
            *n += 1;
        }
        Ok(v)
    }

    pub(crate) fn set_expiry(&mut self, k: &K, at: Time) {
        self.map.set_expiry(k, at);
    }

    fn release(&mut self, v: &V) {
        if let Some(n) = self.held.get_mut(usize::from(v.source())) {
            *n = n.saturating_sub(1);
        }
        self.joined = self.joined.saturating_sub(v.joined());
    }

    /// Records the entries hold beyond their first ([`Sourced::joined`]).
    pub(crate) fn joined(&self) -> usize {
        self.joined
    }

    /// One more record joined an entry (its [`Sourced::joined`] grew by one).
    pub(crate) fn note_joined(&mut self) {
        self.joined += 1;
    }

    pub(crate) fn remove(&mut self, k: &K) -> Option<V> {
        let v = self.map.remove(k)?;
        self.release(&v);
        Some(v)
    }

    /// Remove the entry at `k` if `pred` says so.
    pub(crate) fn remove_if(&mut self, k: &K, pred: impl FnOnce(&V) -> bool) -> Option<V> {
        let v = self.map.remove_if(k, pred)?;
        self.release(&v);
        Some(v)
    }

    pub(crate) fn next_expiry(&self) -> Option<Time> {
        self.map.next_expiry()
    }

    pub(crate) fn pop_expired(&mut self, now: Time) -> Option<(K, V)> {
        let (k, v) = self.map.pop_expired(now)?;
        self.release(&v);
        Some((k, v))
    }

    /// Keys of the entries `pred` picks (a scan of the whole table: for rare events).
    pub(crate) fn keys_where(&self, pred: impl FnMut(&K, &V) -> bool) -> Vec<K> {
        self.map.keys_where(pred)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(n: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], 4000 + n))
    }

    /// Sources ask every `every` for `units` (all forwarded when allowed) for 2 s; returns
    /// the units each got forwarded.
    fn run(cfg: SourceLimits, asks: &[(u16, Duration, u64)]) -> Vec<u64> {
        let mut l = Limiter::new(cfg, &[9; 32]);
        let mut got = vec![0u64; asks.len()];
        let mut next: Vec<Time> = vec![Time::ZERO; asks.len()];
        let end = Time::ZERO + Duration::from_secs(2);
        loop {
            let (i, &t) = next.iter().enumerate().min_by_key(|(_, t)| **t).unwrap();
            if t >= end {
                break;
            }
            let (src, every, units) = asks[i];
            let s = l.ask(t, addr(src));
            if s.may_forward {
                l.charge(s.slot, units);
                got[i] += units;
            }
            next[i] = t + every;
        }
        got
    }

    #[test]
    fn a_flooder_is_held_to_what_the_others_leave_and_a_modest_source_keeps_all_it_asks() {
        let cfg = SourceLimits { rate: Some(100_000.0), ..SourceLimits::default() };
        // Flooder: 256 units every 0.125 ms (2 M units/s asked); modest: 16 units every
        // 0.5 ms (32 000 units/s, within its share of 50 000).
        let fl = (1, Duration::from_micros(125), 256);
        let modest = (2, Duration::from_micros(500), 16);
        let got = run(cfg.clone(), &[fl, modest]);
        assert_eq!(got[1], 4000 * 16, "the modest source got everything it asked: {got:?}");
        let total: u64 = got.iter().sum();
        // The router's rate holds (2 s at 100 000, plus a burst and one request of debt).
        assert!(total <= 200_000 + 10_000 + 256, "{got:?}");
        // The flooder gets what the modest source leaves: about 2 × (100 000 − 32 000).
        assert!(got[0] >= 120_000, "{got:?}");
        // Alone, the flooder gets the whole rate (and a burst), not a share of it.
        let alone = run(cfg.clone(), &[fl]);
        assert!(alone[0] >= 190_000 && alone[0] <= 200_000 + 10_000 + 256, "{alone:?}");
        // Two flooders split it evenly.
        let two = run(cfg, &[fl, (3, Duration::from_micros(125), 256)]);
        let (a, b) = (two[0] as f64, two[1] as f64);
        assert!((a - b).abs() <= 0.1 * (a + b), "{two:?}");
        // No rate configured: everything goes.
        let open = run(SourceLimits::off(), &[fl]);
        assert_eq!(open[0], 16_000 * 256);
    }

    #[test]
    fn pending_shares_follow_the_active_sources_and_state_does_not_grow() {
        let mut l = Limiter::new(SourceLimits { slots: 64, ..SourceLimits::default() }, &[1; 32]);
        let t0 = Time::ZERO;
        let a = l.ask(t0, addr(1));
        let mut table: Held<u32, V> =
            Held::new(1000, &SourceLimits { slots: 64, ..SourceLimits::default() }, &TableHasher::default());
        for k in 0..1000 {
            assert!(l.may_hold_more(&table, a.slot, a.active), "alone: the whole table ({k})");
            table.insert(k, V(a.slot), t0).unwrap();
        }
        let b = l.ask(t0, addr(2));
        assert_eq!(b.active, 2);
        assert!(!l.may_hold_more(&table, a.slot, b.active), "beyond its share with the table full");
        assert!(l.may_hold_more(&table, b.slot, b.active), "within its share (the table is full, though)");
        for k in 0..666 {
            table.remove(&k);
        }
        assert!(l.may_hold_more(&table, a.slot, 2), "334 held: within its share again");
        // Beyond its share, a source may add while more than a third of the table is free.
        let mut c: Held<u32, V> =
            Held::new(1000, &SourceLimits { slots: 64, ..SourceLimits::default() }, &TableHasher::default());
        for k in 0..600 {
            c.insert(k, V(a.slot), t0).unwrap();
        }
        assert!(l.may_hold_more(&c, a.slot, 2), "600 of 1000, 400 free: more than a third");
        for k in 600..667 {
            c.insert(k, V(a.slot), t0).unwrap();
        }
        assert!(!l.may_hold_more(&c, a.slot, 2), "667 held, 333 free: the others' room");
        assert!(l.may_hold_more(&c, b.slot, 2));
        // After the active window, a source that stopped asking no longer counts.
        let later = t0 + Duration::from_millis(300);
        let b = l.ask(later, addr(2));
        assert_eq!(b.active, 1);
        for i in 0..10_000u32 {
            let from = SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], 7000));
            l.ask(later + Duration::from_micros(u64::from(i)), from);
        }
        assert_eq!(l.sources.len(), 64);
        assert!(l.sources.active() <= 64);
        assert!(Limiter::new(SourceLimits::off(), &[1; 32]).may_hold_more(&table, a.slot, 7));
    }

    #[test]
    fn slots_depend_on_the_secret() {
        let (mut a, mut b) =
            (Limiter::new(SourceLimits::default(), &[1; 32]), Limiter::new(SourceLimits::default(), &[2; 32]));
        let differ = (0..64).filter(|&p| a.slot_of(addr(p)) != b.slot_of(addr(p))).count();
        assert!(differ > 56, "another secret, other slots ({differ} of 64 differ)");
        let big = Limiter::new(SourceLimits { slots: 1 << 20, ..SourceLimits::default() }, &[1; 32]);
        assert_eq!(big.sources.len(), 65_536, "slots are clamped to what a SlotIx numbers");
    }

    #[derive(Debug)]
    struct V(SlotIx);
    impl Sourced for V {
        fn source(&self) -> SlotIx {
            self.0
        }
    }

    #[test]
    fn held_counts_follow_every_way_out() {
        let mut h: Held<u32, V> =
            Held::new(8, &SourceLimits { slots: 4, ..SourceLimits::default() }, &TableHasher::default());
        let t = |ms| Time::from_millis(ms);
        assert!(h.insert(1, V(2), t(10)).is_ok());
        assert!(h.insert(2, V(2), t(20)).is_ok());
        assert!(h.insert(3, V(1), t(30)).is_ok());
        assert!(h.insert(3, V(2), t(30)).is_err(), "present: not counted");
        assert_eq!((h.held(2), h.held(1), h.held(0)), (2, 1, 0));
        assert!(h.remove(&1).is_some());
        assert_eq!(h.held(2), 1);
        assert!(h.pop_expired(t(25)).is_some());
        assert_eq!(h.held(2), 0);
        assert_eq!(h.keys_where(|_, v| v.0 == 1), [3]);
        assert!(h.remove(&1).is_none());
        assert_eq!((h.held(2), h.held(1), h.len()), (0, 1, 1));
    }
}
