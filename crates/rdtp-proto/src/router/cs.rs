//! The content store (CS) of a caching router: a bounded cache of Data values keyed by name.
//!
//! A caching router (NDN-style: content store, PIT, FIB) looks every Interest up here first
//! and, when the Data comes back from upstream, offers it here. [`ContentStore`] holds:
//!
//! * the cached values, bounded twice — by a number of entries (`capacity_units`) and by
//!   their total size in bytes (`capacity_bytes`, each value sized by [`Weigh`]);
//! * a **replacement policy** ([`Replacement`]: `lru`, `lfu`, `fifo`, `random`) that picks
//!   what to evict when something new must fit;
//! * an **admission policy** ([`Admission`]: `always`, `prob:P`, `none`) that decides whether
//!   a passing value is cached at all (seed 003 §III compares "indiscriminate caching" with
//!   "random caching with LRU eviction, p = 0.125");
//! * plain hit/miss/insert/eviction counters ([`CsStats`]). Every [`ContentStore::get`] counts
//!   exactly one hit or one miss: these are the router's CS counters (users of ndnSIM's
//!   `CsTracer` complain that theirs read 0).
//!
//! It is generic over the key and the value so it can be tested on its own; the router uses
//! `K = (Eid, u64 /* offset */)` and `V` = a cached Data payload.
//!
//! # What it must not do
//!
//! Like the rest of `rdtp-proto` it does no I/O, reads no clock and draws no ambient
//! randomness: `random` eviction and `prob:P` admission draw from a PCG seeded with
//! [`CsConfig::seed`], so a run is reproducible. Its memory is bounded by its capacity (a
//! constant multiple of `capacity_units` entries of bookkeeping, see [`Replacement::Lfu`]),
//! never by the number of distinct keys ever seen. Every operation is O(1) or O(log n).
//! It knows nothing of freshness or expiry: deciding whether a cached value may still be
//! served is the router's business.
//!
//! # Complexity (n = entries held, v = entries an offer evicts)
//!
//! | operation | `lru` / `fifo` / `random` | `lfu` |
//! | --- | --- | --- |
//! | [`get`](ContentStore::get) | O(1) | O(log n) |
//! | [`peek`](ContentStore::peek), [`contains`](ContentStore::contains) | O(1) | O(1) |
//! | [`offer`](ContentStore::offer) | O(1 + v) | O((1 + v) log n) |
//! | [`remove`](ContentStore::remove) | O(1) | O(log n) |
//!
//! O(1) is expected time (hash maps). Each entry is evicted at most once, so the `v` terms
//! add up to at most the number of inserts over a run.

use core::fmt;
use core::str::FromStr;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// The size a cached value occupies, counted against [`CsConfig::capacity_bytes`].
pub trait Weigh {
    /// Size in bytes (the payload is enough; it need not include bookkeeping).
    fn bytes(&self) -> usize;
}

impl Weigh for [u8] {
    fn bytes(&self) -> usize {
        self.len()
    }
}

impl Weigh for Vec<u8> {
    fn bytes(&self) -> usize {
        self.len()
    }
}

impl Weigh for Box<[u8]> {
    fn bytes(&self) -> usize {
        self.len()
    }
}

impl<T: Weigh + ?Sized> Weigh for Arc<T> {
    fn bytes(&self) -> usize {
        (**self).bytes()
    }
}

/// Which entry to evict when a new one must fit. Text form: `lru`, `lfu`, `fifo`, `random`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Replacement {
    /// Least recently used: a hit (or a replacement) moves the entry to the front; the back
    /// is evicted. Under the independent reference model its hit ratio follows Che's
    /// approximation (Che, Tung & Wang, IEEE JSAC 2002).
    #[default]
    Lru,
    /// Least frequently used, as **Window-LFU** (Karakostas & Serpanos, ISCC 2002) with a
    /// frequency admission filter (the idea of TinyLFU: Einziger, Friedman & Manes, ACM ToS
    /// 2017):
    ///
    /// * the frequency of a key is the number of [`get`](ContentStore::get)s of it among the
    ///   last `W = LFU_WINDOW_PER_UNIT × capacity_units` lookups, whether cached or not;
    /// * the victim is the cached entry with the lowest frequency (ties: least recently
    ///   used);
    /// * a new key is admitted only if its frequency exceeds that of every entry it would
    ///   evict; otherwise the offer is rejected ([`Rejection::Frequency`]).
    ///
    /// Why not plain in-cache LFU: forgetting a key's count when it is evicted freezes the
    /// cache on whatever entered first (newcomers arrive with count 1 and are the next
    /// victims), so it never converges to the most popular keys. Why not perfect LFU: it
    /// counts every key ever seen, which grows without bound. The window remembers recent
    /// lookups of non-cached keys too, so a popular key outside the cache gathers the count
    /// that lets it in, and under a stationary popularity the content converges to the
    /// most frequent keys, as perfect LFU's does; unlike perfect LFU it also follows
    /// popularity that changes. The window's finite length makes the frequencies of keys
    /// near the edge of the cache noisy, which costs a little: with W = 64 C,
    /// `tests/cs_theory.rs` measures 0.7–1.2 percentage points below perfect LFU's top-C
    /// sum under Zipf(0.64–1.03) (32 C cost about twice that, 128 C about half).
    ///
    /// Memory: a ring of at most `W` 64-bit key hashes (8 bytes each) plus a map of at most
    /// `W + capacity_units` counters (about 25–60 bytes each with the map's slack), i.e. a
    /// constant multiple of `capacity_units`: up to about 5 KiB per unit when every lookup
    /// names a different key, much less when lookups repeat keys. Two keys whose 64-bit
    /// hashes collide share a counter, and at most one of them is cached at a time.
    Lfu,
    /// First in, first out: evicts the entry inserted longest ago; hits do not reorder (a
    /// replacement of an existing key counts as a new insertion).
    Fifo,
    /// Evicts an entry drawn uniformly at random, from the seeded PCG. Under the independent
    /// reference model its hit ratio equals FIFO's (Gelenbe 1973).
    Random,
}

/// Lookups an [`Replacement::Lfu`] store remembers per unit of capacity: its frequency
/// window is `LFU_WINDOW_PER_UNIT × capacity_units` lookups long.
///
/// Longer windows estimate frequencies more precisely (a key at the edge of the cache, of
/// popularity p, is looked up about `W·p` times in a window) at the cost of more
/// bookkeeping: up to about 70 bytes per lookup remembered (see [`Replacement::Lfu`]).
pub const LFU_WINDOW_PER_UNIT: usize = 64;

/// Whether a value passing through is cached at all. Text form: `always`, `prob:P`
/// (0 ≤ P ≤ 1), `none`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Admission {
    /// Cache everything ("indiscriminate caching", seed 003 §III).
    #[default]
    Always,
    /// Cache a new key with probability P, drawn from the seeded PCG ("random caching",
    /// seed 003 §III uses P = 0.125). With LRU this is q-LRU (Martina, Garetto & Leonardi,
    /// INFOCOM 2014). P above 1 behaves as 1, below 0 or NaN as 0.
    Prob(f64),
    /// Cache nothing (a router whose CS is switched off, like NFD's `admit` flag cleared).
    Never,
}

/// Configuration of a [`ContentStore`].
#[derive(Clone, Debug, PartialEq)]
pub struct CsConfig {
    /// Most entries held. 0 caches nothing.
    pub capacity_units: usize,
    /// Most bytes held (sum of [`Weigh::bytes`] of the values). A value larger than this is
    /// never cached.
    pub capacity_bytes: u64,
    /// Eviction policy.
    pub replacement: Replacement,
    /// Admission policy.
    pub admission: Admission,
    /// Seed of the PCG behind `random` eviction and `prob:P` admission (and of the key hash
    /// behind `lfu`'s counters).
    pub seed: u64,
}

impl CsConfig {
    /// NFD's default content store size, in packets.
    pub const DEFAULT_CAPACITY_UNITS: usize = 65_536;
}

impl Default for CsConfig {
    /// 65 536 units (NFD's default), no byte limit, `lru`, `always`, seed 0.
    fn default() -> Self {
        CsConfig {
            capacity_units: Self::DEFAULT_CAPACITY_UNITS,
            capacity_bytes: u64::MAX,
            replacement: Replacement::Lru,
            admission: Admission::Always,
            seed: 0,
        }
    }
}

/// Counters of a [`ContentStore`]. Plain totals since creation; they never reset.
///
/// Invariants: `hits + misses` = number of [`get`](ContentStore::get)s;
/// `inserts + replaced + admission_rejects + frequency_rejects + too_big_rejects` = number
/// of [`offer`](ContentStore::offer)s; `inserts − evictions − removals` = entries held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CsStats {
    /// Lookups that found the key.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Offers of a key not held that were stored.
    pub inserts: u64,
    /// Offers of a key already held that replaced its value.
    pub replaced: u64,
    /// Entries evicted to make room.
    pub evictions: u64,
    /// Entries taken out by [`remove`](ContentStore::remove).
    pub removals: u64,
    /// Offers the admission policy declined (`prob:P` lost the draw, or `none`).
    pub admission_rejects: u64,
    /// Offers `lfu` declined: the key was not more frequent than what it would evict.
    pub frequency_rejects: u64,
    /// Offers of a value that can never fit (larger than `capacity_bytes`, or
    /// `capacity_units` is 0).
    pub too_big_rejects: u64,
}

impl CsStats {
    /// Number of lookups (`hits + misses`).
    pub fn lookups(&self) -> u64 {
        self.hits + self.misses
    }

    /// `hits / lookups`, or `None` before the first lookup.
    pub fn hit_ratio(&self) -> Option<f64> {
        let n = self.lookups();
        (n > 0).then(|| self.hits as f64 / n as f64)
    }

    /// Number of offers (every outcome).
    pub fn offers(&self) -> u64 {
        self.inserts + self.replaced + self.admission_rejects + self.frequency_rejects + self.too_big_rejects
    }
}

/// What [`ContentStore::offer`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// The key was new and is now held; `evicted` entries made room for it.
    Inserted {
        /// Entries evicted to make room.
        evicted: usize,
    },
    /// The key was held; its value was replaced (which may evict others if it grew).
    Replaced {
        /// Entries evicted to make room.
        evicted: usize,
    },
    /// Nothing changed; the store holds what it held before.
    Rejected(Rejection),
}

/// Why an offer was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The admission policy declined it (`prob:P` lost the draw, or `none`).
    Admission,
    /// `lfu`: the key was not looked up more often, within the window, than the entries it
    /// would evict (or, with odds of about 2⁻⁶⁴ per pair, its hash equals a held key's).
    Frequency,
    /// The value is larger than `capacity_bytes`, or `capacity_units` is 0.
    TooBig,
}

/// A [`Replacement`] that is not one of `lru`, `lfu`, `fifo`, `random`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown replacement policy {0:?} (expected lru, lfu, fifo or random)")]
pub struct ParseReplacementError(pub String);

/// An [`Admission`] that is not one of `always`, `none`, `prob:P` with 0 ≤ P ≤ 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad admission policy {0:?} (expected always, none or prob:P with 0 <= P <= 1)")]
pub struct ParseAdmissionError(pub String);

impl FromStr for Replacement {
    type Err = ParseReplacementError;
    /// Case-insensitive.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let all = [Replacement::Lru, Replacement::Lfu, Replacement::Fifo, Replacement::Random];
        all.into_iter().find(|r| r.name().eq_ignore_ascii_case(s)).ok_or_else(|| ParseReplacementError(s.to_string()))
    }
}

impl Replacement {
    fn name(self) -> &'static str {
        match self {
            Replacement::Lru => "lru",
            Replacement::Lfu => "lfu",
            Replacement::Fifo => "fifo",
            Replacement::Random => "random",
        }
    }
}

impl fmt::Display for Replacement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Admission {
    type Err = ParseAdmissionError;
    /// Case-insensitive keywords; `P` is a decimal number in [0, 1].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseAdmissionError(s.to_string());
        if s.eq_ignore_ascii_case("always") {
            return Ok(Admission::Always);
        }
        if s.eq_ignore_ascii_case("none") {
            return Ok(Admission::Never);
        }
        let (kw, p) = s.split_once(':').ok_or_else(err)?;
        if !kw.eq_ignore_ascii_case("prob") {
            return Err(err());
        }
        let p: f64 = p.trim().parse().map_err(|_| err())?;
        if !(0.0..=1.0).contains(&p) {
            return Err(err());
        }
        Ok(Admission::Prob(p))
    }
}

impl fmt::Display for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Admission::Always => f.write_str("always"),
            Admission::Prob(p) => write!(f, "prob:{p}"),
            Admission::Never => f.write_str("none"),
        }
    }
}

/// No entry (end of the recency list, or a key not cached).
const NIL: usize = usize::MAX;

struct Entry<K, V> {
    key: K,
    value: V,
    /// `value.bytes()` when it was stored.
    size: u64,
    /// Towards the front (more recent) of the recency list; `lru`/`fifo` only.
    prev: usize,
    /// Towards the back (the next victim); `lru`/`fifo` only.
    next: usize,
    /// Key hash of `lfu`'s counters; 0 otherwise.
    hash: u64,
    /// `lfu`: last touch (insertion or hit), the tie-break between equal counts.
    seq: u64,
}

/// `lfu`'s bookkeeping for one hash: its count in the window, and where it is cached.
struct Track {
    count: u64,
    /// Index in `entries` of the cached key with this hash, or `NIL`.
    slot: usize,
}

/// Window-LFU state (see [`Replacement::Lfu`]).
struct Lfu {
    /// Hashes of the last `window_len` lookups, oldest first.
    window: VecDeque<u64>,
    window_len: usize,
    /// Counts of the hashes in `window`, and every cached key's (possibly 0). At most
    /// `window_len + capacity_units` entries.
    tracked: HashMap<u64, Track>,
    /// Cached entries by (count, last touch), ascending: the first is the victim.
    order: BTreeMap<(u64, u64), usize>,
    /// Source of `seq` values; strictly increasing, so `order`'s keys are unique.
    tick: u64,
}

impl Lfu {
    fn new(capacity_units: usize) -> Self {
        Lfu {
            window: VecDeque::new(),
            window_len: capacity_units.saturating_mul(LFU_WINDOW_PER_UNIT),
            tracked: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
        }
    }

    fn count(&self, hash: u64) -> u64 {
        self.tracked.get(&hash).map_or(0, |t| t.count)
    }

    fn next_seq(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// One lookup of `hash`: count it, touch its entry if cached, forget the oldest lookup.
    fn record<K, V>(&mut self, hash: u64, entries: &mut [Entry<K, V>]) {
        if self.window_len == 0 {
            return;
        }
        let seq = self.next_seq();
        let t = self.tracked.entry(hash).or_insert(Track { count: 0, slot: NIL });
        if t.slot != NIL {
            let e = &mut entries[t.slot];
            self.order.remove(&(t.count, e.seq));
            e.seq = seq;
            self.order.insert((t.count + 1, seq), t.slot);
        }
        t.count += 1;
        self.window.push_back(hash);
        if self.window.len() > self.window_len
            && let Some(old) = self.window.pop_front()
        {
            self.forget(old, entries);
        }
    }

    /// The lookup of `hash` left the window.
    fn forget<K, V>(&mut self, hash: u64, entries: &[Entry<K, V>]) {
        let Some(t) = self.tracked.get_mut(&hash) else { return };
        if t.slot != NIL {
            let seq = entries[t.slot].seq;
            self.order.remove(&(t.count, seq));
            self.order.insert((t.count - 1, seq), t.slot);
        }
        t.count -= 1;
        if t.count == 0 && t.slot == NIL {
            self.tracked.remove(&hash);
        }
    }
}

/// A bounded cache of `V`s keyed by `K`, with a replacement and an admission policy; see
/// the [module documentation](self).
pub struct ContentStore<K, V> {
    cfg: CsConfig,
    /// The entries, densely packed (removal swaps the last one in).
    entries: Vec<Entry<K, V>>,
    /// Key → index in `entries`. (Its `RandomState` keys do not make behaviour vary between
    /// runs: nothing ever iterates the map.)
    index: HashMap<K, usize>,
    bytes: u64,
    /// Front (most recent) and back (next victim) of the recency list; `lru`/`fifo` only.
    head: usize,
    tail: usize,
    rng: Pcg64,
    /// `Some` iff the policy is `lfu`.
    lfu: Option<Lfu>,
    stats: CsStats,
}

impl<K, V> fmt::Debug for ContentStore<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContentStore")
            .field("config", &self.cfg)
            .field("len", &self.entries.len())
            .field("bytes", &self.bytes)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<K: Hash + Eq + Clone, V: Weigh> ContentStore<K, V> {
    /// An empty store. Allocates nothing in proportion to the capacity up front.
    pub fn new(cfg: CsConfig) -> Self {
        let lfu = (cfg.replacement == Replacement::Lfu).then(|| Lfu::new(cfg.capacity_units));
        ContentStore {
            rng: Pcg64::seed_from_u64(cfg.seed),
            cfg,
            entries: Vec::new(),
            index: HashMap::new(),
            bytes: 0,
            head: NIL,
            tail: NIL,
            lfu,
            stats: CsStats::default(),
        }
    }

    /// Looks `key` up to serve it: counts one hit or one miss, and updates the policy (`lru`
    /// moves a hit to the front; `lfu` counts the lookup, hit or miss, in its window;
    /// `fifo` and `random` change nothing). O(1); O(log n) for `lfu`.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        let slot = self.index.get(key).copied();
        if let Some(lfu) = &mut self.lfu {
            let h = key_hash(self.cfg.seed, key);
            lfu.record(h, &mut self.entries);
        }
        match slot {
            Some(i) => {
                self.stats.hits += 1;
                if self.cfg.replacement == Replacement::Lru {
                    self.unlink(i);
                    self.link_front(i);
                }
                Some(&self.entries[i].value)
            }
            None => {
                self.stats.misses += 1;
                None
            }
        }
    }

    /// The value held for `key`, without counting a lookup or touching the policy (for a
    /// router asking "do I hold X" without serving it). O(1).
    pub fn peek(&self, key: &K) -> Option<&V> {
        self.index.get(key).map(|&i| &self.entries[i].value)
    }

    /// Whether `key` is held; no counting, no policy update. O(1).
    pub fn contains(&self, key: &K) -> bool {
        self.index.contains_key(key)
    }

    /// Offers `value` for caching under `key`.
    ///
    /// A key already held has its value replaced, without consulting the admission policy
    /// (it was admitted already); the entry counts as just inserted for `fifo` and just used
    /// for `lru`, and keeps its frequency for `lfu`. A new key goes through, in order: the
    /// size check (larger than `capacity_bytes`, or `capacity_units` 0: rejected), the
    /// admission policy, and for `lfu` the frequency filter. Then entries are evicted by the
    /// replacement policy until the value fits both capacities, and it is stored.
    ///
    /// A rejected offer changes nothing (a replacement by a value too large leaves the old
    /// value in place). O(1 + v) for v evictions; O((1 + v) log n) for `lfu`.
    pub fn offer(&mut self, key: K, value: V) -> Offer {
        let size = value.bytes() as u64;
        if self.cfg.capacity_units == 0 || size > self.cfg.capacity_bytes {
            self.stats.too_big_rejects += 1;
            return Offer::Rejected(Rejection::TooBig);
        }
        let hash = if self.lfu.is_some() { key_hash(self.cfg.seed, &key) } else { 0 };
        if let Some(&i) = self.index.get(&key) {
            drop(self.detach(i));
            let evicted = self.make_room(size);
            self.attach(key, value, size, hash);
            self.stats.replaced += 1;
            return Offer::Replaced { evicted };
        }
        if !self.admit() {
            self.stats.admission_rejects += 1;
            return Offer::Rejected(Rejection::Admission);
        }
        if !self.passes_frequency_filter(hash, size) {
            self.stats.frequency_rejects += 1;
            return Offer::Rejected(Rejection::Frequency);
        }
        let evicted = self.make_room(size);
        self.attach(key, value, size, hash);
        self.stats.inserts += 1;
        Offer::Inserted { evicted }
    }

    /// Takes `key` out of the store (not an eviction: counted in `removals`). `lfu` keeps
    /// counting its lookups in the window. O(1); O(log n) for `lfu`.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let i = self.index.get(key).copied()?;
        self.stats.removals += 1;
        Some(self.detach(i).value)
    }

    /// Number of entries held (≤ `capacity_units`).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Total [`Weigh::bytes`] of the values held (≤ `capacity_bytes`).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &CsConfig {
        &self.cfg
    }

    /// Its counters.
    pub fn stats(&self) -> &CsStats {
        &self.stats
    }

    /// The admission draw for a new key.
    fn admit(&mut self) -> bool {
        match self.cfg.admission {
            Admission::Always => true,
            Admission::Never => false,
            // 53 random bits: a uniform double in [0, 1).
            Admission::Prob(p) => ((self.rng.next_u64() >> 11) as f64) * (1.0 / (1u64 << 53) as f64) < p,
        }
    }

    /// `lfu` only (true otherwise): whether a new key with `hash` and `size` is more
    /// frequent than every entry that would be evicted to make room for it.
    fn passes_frequency_filter(&self, hash: u64, size: u64) -> bool {
        let Some(lfu) = &self.lfu else { return true };
        if lfu.tracked.get(&hash).is_some_and(|t| t.slot != NIL) {
            return false; // a different key with the same 64-bit hash is cached
        }
        let candidate = lfu.count(hash);
        let (mut units, mut bytes) = self.shortfall(size);
        for (&(count, _), &i) in &lfu.order {
            if units == 0 && bytes == 0 {
                break;
            }
            if count >= candidate {
                return false;
            }
            units = units.saturating_sub(1);
            bytes = bytes.saturating_sub(self.entries[i].size);
        }
        true
    }

    /// Entries and bytes to free before a value of `size` bytes fits.
    fn shortfall(&self, size: u64) -> (usize, u64) {
        let units = (self.entries.len() + 1).saturating_sub(self.cfg.capacity_units);
        let room = self.cfg.capacity_bytes - self.bytes;
        (units, size.saturating_sub(room))
    }

    /// Evicts by policy until a value of `size` bytes (≤ `capacity_bytes`, with
    /// `capacity_units` ≥ 1) fits. Returns the number evicted.
    fn make_room(&mut self, size: u64) -> usize {
        let mut evicted = 0;
        while self.shortfall(size) != (0, 0) {
            let v = self.victim();
            drop(self.detach(v));
            evicted += 1;
        }
        self.stats.evictions += evicted as u64;
        evicted
    }

    /// Index of the entry the policy evicts next. Only called when not empty.
    fn victim(&mut self) -> usize {
        match self.cfg.replacement {
            Replacement::Lru | Replacement::Fifo => self.tail,
            Replacement::Random => {
                // Multiply-shift maps 64 random bits onto 0..len (bias below len / 2^64).
                let r = self.rng.next_u64();
                ((u128::from(r) * self.entries.len() as u128) >> 64) as usize
            }
            Replacement::Lfu => self.lfu.as_ref().and_then(|l| l.order.first_key_value()).map_or(0, |(_, &i)| i),
        }
    }

    fn uses_list(&self) -> bool {
        matches!(self.cfg.replacement, Replacement::Lru | Replacement::Fifo)
    }

    /// Stores a new entry (room has been made) at the front of the list / with a fresh touch.
    fn attach(&mut self, key: K, value: V, size: u64, hash: u64) {
        let i = self.entries.len();
        let seq = match &mut self.lfu {
            Some(lfu) => {
                let seq = lfu.next_seq();
                let t = lfu.tracked.entry(hash).or_insert(Track { count: 0, slot: NIL });
                t.slot = i;
                lfu.order.insert((t.count, seq), i);
                seq
            }
            None => 0,
        };
        self.index.insert(key.clone(), i);
        self.entries.push(Entry { key, value, size, prev: NIL, next: NIL, hash, seq });
        self.bytes += size;
        if self.uses_list() {
            self.link_front(i);
        }
    }

    /// Takes entry `i` out of every structure and returns it; the last entry moves into `i`.
    fn detach(&mut self, i: usize) -> Entry<K, V> {
        if self.uses_list() {
            self.unlink(i);
        }
        if let Some(lfu) = &mut self.lfu {
            let (hash, seq) = (self.entries[i].hash, self.entries[i].seq);
            if let Some(t) = lfu.tracked.get_mut(&hash) {
                lfu.order.remove(&(t.count, seq));
                t.slot = NIL;
                if t.count == 0 {
                    lfu.tracked.remove(&hash);
                }
            }
        }
        self.index.remove(&self.entries[i].key);
        let e = self.entries.swap_remove(i);
        self.bytes -= e.size;
        if i < self.entries.len() {
            // The former last entry (index `len`) now lives at `i`: repoint what refers to it.
            let (prev, next, hash, seq) = {
                let m = &self.entries[i];
                (m.prev, m.next, m.hash, m.seq)
            };
            if let Some(slot) = self.index.get_mut(&self.entries[i].key) {
                *slot = i;
            }
            if self.uses_list() {
                if prev == NIL {
                    self.head = i
                } else {
                    self.entries[prev].next = i
                }
                if next == NIL { self.tail = i } else { self.entries[next].prev = i }
            }
            if let Some(lfu) = &mut self.lfu
                && let Some(t) = lfu.tracked.get_mut(&hash)
            {
                t.slot = i;
                if let Some(slot) = lfu.order.get_mut(&(t.count, seq)) {
                    *slot = i;
                }
            }
        }
        e
    }

    fn unlink(&mut self, i: usize) {
        let (prev, next) = (self.entries[i].prev, self.entries[i].next);
        if prev == NIL {
            self.head = next
        } else {
            self.entries[prev].next = next
        }
        if next == NIL {
            self.tail = prev
        } else {
            self.entries[next].prev = prev
        }
        self.entries[i].prev = NIL;
        self.entries[i].next = NIL;
    }

    fn link_front(&mut self, i: usize) {
        self.entries[i].prev = NIL;
        self.entries[i].next = self.head;
        if self.head == NIL {
            self.tail = i
        } else {
            self.entries[self.head].prev = i
        }
        self.head = i;
    }
}

/// The 64-bit key hash behind `lfu`'s counters: SipHash with fixed keys, salted by the
/// seed, so it does not vary between runs (std's `RandomState` would).
fn key_hash<K: Hash>(seed: u64, key: &K) -> u64 {
    let mut h = DefaultHasher::new();
    seed.hash(&mut h);
    key.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests;
