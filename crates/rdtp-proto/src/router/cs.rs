//! The content store (CS) of a caching router: a bounded cache of Data values keyed by name.
//!
//! A caching router (NDN-style: content store, PIT, FIB) looks every Interest up here first
//! and, when the Data comes back from upstream, offers it here. [`ContentStore`] holds:
//!
//! * the cached values, bounded twice — by a number of entries (`capacity_units`) and by
//!   their total size in bytes (`capacity_bytes`, each value sized by [`Weigh`]);
//! * a **replacement policy** ([`Policy`], one file each under `cs/`: `lru`, `lfu`, `fifo`,
//!   `random`, `clock`; chosen by name through the registry [`policies`], [`Replacement`])
//!   that picks what to evict when something new must fit;
//! * an **admission policy** ([`Admission`]: `always`, `prob:P`, `none`) that decides whether
//!   a passing value is cached at all (seed 003 §III compares "indiscriminate caching" with
//!   "random caching with LRU eviction, p = 0.125");
//! * plain hit/miss/insert/eviction counters ([`CsStats`]). Every [`ContentStore::get`] counts
//!   exactly one hit or one miss: these are the router's CS counters (users of ndnSIM's
//!   `CsTracer` complain that theirs read 0).
//!
//! It is generic over the key and the value so it can be tested on its own; the router uses
//! `K = (Eid, u64 /* offset */)` and `V` = a cached Data payload, which weighs its payload
//! plus what the store spends holding it ([`entry_overhead`]), so that `capacity_bytes`
//! bounds memory. [`SharedStore`] puts one store behind a lock for several owners: the
//! router cores of one runtime, so that the store is one as far as a user can tell.
//!
//! # What it must not do
//!
//! Like the rest of `rdtp-proto` it does no I/O, reads no clock and draws no ambient
//! randomness: `random` eviction and `prob:P` admission draw from a PCG seeded with
//! [`CsConfig::seed`], so a run is reproducible. Its memory is bounded by its capacity,
//! never by the number of distinct keys ever seen: besides the entries themselves and their
//! key index, `lfu` keeps at most [`LFU_BYTES_PER_UNIT`] (88) bytes of bookkeeping per unit
//! of capacity, plus [`LFU_MIN_SKETCH_BYTES`] (4 KiB) for stores under 128 units (see
//! `lfu.rs`; [`ContentStore::lfu_bookkeeping_bytes`] reports it). Every operation
//! is O(1) or O(log n). It knows nothing of freshness or expiry: deciding whether a cached
//! value may still be served is the router's business.
//!
//! `lfu` estimates frequencies with a count-min sketch that halves itself periodically
//! (TinyLFU's). It used to count the last `64 × capacity_units` lookups exactly
//! (Window-LFU), whose ring of lookups and map of per-key counts grew with the number of
//! distinct keys in that window: about 4.5 KiB per unit, 292 MiB of RSS for a 65 536-unit
//! store under a stream of distinct keys, more than the payload such a store holds.
//!
//! # Complexity (n = entries held, v = entries an offer evicts)
//!
//! | operation | `lru` / `fifo` / `random` / `clock` | `lfu` |
//! | --- | --- | --- |
//! | [`get`](ContentStore::get) | O(1) | O(log n) amortized |
//! | [`peek`](ContentStore::peek), [`contains`](ContentStore::contains) | O(1) | O(1) |
//! | [`offer`](ContentStore::offer) | O(1 + v) (`clock`: amortized) | O((1 + v) log n) amortized |
//! | [`remove`](ContentStore::remove) | O(1) | O(log n) |
//!
//! O(1) is expected time (hash maps). Each entry is evicted at most once, so the `v` terms
//! add up to at most the number of inserts over a run. `lfu`'s amortization: one lookup in
//! every W/2 (W = [`LFU_SAMPLE_PER_UNIT`] × `capacity_units`) completes a sample, halves
//! the sketch and re-sorts the entries, O(`capacity_units` + n) at once; and choosing a
//! victim first refreshes the heap's first node until its estimate is current, one
//! O(log n) step per rise that other keys' lookups caused in the estimate of the entry on
//! top (rare: the sketch has 8 counters per unit and row).

use core::fmt;
use core::str::FromStr;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::hashing::{Map, TableHasher};

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

/// A replacement policy, by its registry name ([`policies`]): which entry to evict when a new
/// one must fit. Text form: the name (`lru`, `lfu`, `fifo`, `random`, `clock`; `--cs-policy
/// help` lists them), case-insensitive. The constants name the policies tests and front ends
/// use most; every registry name parses.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Replacement(&'static str);

#[allow(non_upper_case_globals)]
impl Replacement {
    /// Least recently used (`cs/lru.rs`).
    pub const Lru: Replacement = Replacement("lru");
    /// TinyLFU's frequency estimates and admission filter (`cs/lfu.rs`).
    pub const Lfu: Replacement = Replacement("lfu");
    /// First in, first out (`cs/fifo.rs`).
    pub const Fifo: Replacement = Replacement("fifo");
    /// Uniformly random eviction (`cs/random.rs`).
    pub const Random: Replacement = Replacement("random");

    /// The policy's registry name.
    pub fn name(self) -> &'static str {
        self.0
    }
}

impl Default for Replacement {
    /// `lru`.
    fn default() -> Self {
        Replacement::Lru
    }
}

impl fmt::Debug for Replacement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// What a replacement policy does, as NFD's `cs::Policy` (`table/cs-policy.hpp`): the store
/// tells it of every lookup, insertion, erasure and move, and asks it for the next victim
/// (and, for a policy that filters, whether a new key may displace the victims). The store
/// keeps the entries, their key index, the byte and unit counts and the admission draw; a
/// policy keeps its own order, in its own structures or in the per-entry words of
/// [`Table`].
///
/// # Adding a policy
///
/// One file `router/cs/NAME.rs` with a type implementing this trait and
/// `pub(super) fn build<K, V>(cfg: &CsConfig) -> Box<dyn Policy<K, V>>`, plus its `mod` line
/// and its row in [`policies`] (both in `cs.rs`). Nothing else names it: `--cs-policy`,
/// `--cs-policy help`, the scenario files and the C ABI take any registry name.
///
/// # What it must not do
///
/// No I/O, no clock, no ambient randomness (draw from [`Table::rng`], seeded by
/// [`CsConfig::seed`]); memory bounded by the capacity, never by the keys seen; every hook
/// O(1) or O(log n).
pub trait Policy<K, V>: Send {
    /// Whether the store keeps its recency list ([`Table::head`], [`Table::tail`]) for this
    /// policy: new and replaced entries go to the front, an erased entry is unlinked.
    fn uses_list(&self) -> bool {
        false
    }
    /// Whether the policy wants the key hashes ([`key_hash`]) in `after_lookup`, `admits`
    /// and [`Entry`]'s `hash` (otherwise they are 0 and cost nothing).
    fn hashes_keys(&self) -> bool {
        false
    }
    /// A lookup to serve (`get`) of the key with `hash`: held at `slot`, or missed.
    fn after_lookup(&mut self, t: &mut Table<'_, K, V>, hash: u64, slot: Option<usize>) {
        let _ = (t, hash, slot);
    }
    /// Whether a new key with `hash` may displace the entries that must go to free `units`
    /// entries and `bytes` bytes (a filtering policy's admission; the store's own admission
    /// policy has passed it already). Must leave the same entries held.
    fn admits(&mut self, t: &mut Table<'_, K, V>, hash: u64, units: usize, bytes: u64) -> bool {
        let _ = (t, hash, units, bytes);
        true
    }
    /// The entry at `slot` (the last) was just stored (new, or replacing an old value).
    fn after_insert(&mut self, t: &mut Table<'_, K, V>, slot: usize) {
        let _ = (t, slot);
    }
    /// The entry at `slot` is about to leave (evicted, removed or replaced).
    fn before_erase(&mut self, t: &mut Table<'_, K, V>, slot: usize) {
        let _ = (t, slot);
    }
    /// The store moved its last entry into `to` (after erasing the one that was there).
    fn after_move(&mut self, t: &mut Table<'_, K, V>, to: usize) {
        let _ = (t, to);
    }
    /// The slot of the entry to evict next (only asked when the store holds something).
    fn victim(&mut self, t: &mut Table<'_, K, V>) -> usize;
    /// Bytes of bookkeeping the policy holds beyond the store's own (for policies that keep
    /// side structures; `None` for those that keep none), counted by allocated capacity.
    fn bookkeeping_bytes(&self, entries_capacity: usize) -> Option<usize> {
        let _ = entries_capacity;
        None
    }
    /// `lfu`'s state, for the tests' invariant checks.
    #[cfg(test)]
    #[allow(private_interfaces)]
    fn as_lfu(&self) -> Option<&lfu::Lfu> {
        None
    }
}

/// What a [`Policy`] sees of the store: the entries (their `prev`, `next`, `hash` and `pos`
/// words are the policy's), the ends of the recency list and the store's seeded PCG.
pub struct Table<'a, K, V> {
    pub entries: &'a mut Vec<Entry<K, V>>,
    /// Front (most recent) and back of the recency list ([`NIL`] if empty).
    pub head: &'a mut usize,
    pub tail: &'a mut usize,
    pub rng: &'a mut Pcg64,
}

impl<K, V> Table<'_, K, V> {
    /// Takes entry `i` out of the recency list.
    pub fn unlink(&mut self, i: usize) {
        let (prev, next) = (self.entries[i].prev, self.entries[i].next);
        if prev == NIL {
            *self.head = next
        } else {
            self.entries[prev].next = next
        }
        if next == NIL {
            *self.tail = prev
        } else {
            self.entries[next].prev = prev
        }
        self.entries[i].prev = NIL;
        self.entries[i].next = NIL;
    }

    /// Puts entry `i` (not in the list) at its front.
    pub fn link_front(&mut self, i: usize) {
        self.entries[i].prev = NIL;
        self.entries[i].next = *self.head;
        if *self.head == NIL {
            *self.tail = i
        } else {
            self.entries[*self.head].prev = i
        }
        *self.head = i;
    }

    /// Moves entry `i` (in the list) to its front.
    pub fn move_to_front(&mut self, i: usize) {
        self.unlink(i);
        self.link_front(i);
    }
}

/// One replacement policy of the registry.
pub struct PolicyEntry<K, V> {
    pub name: &'static str,
    /// One line for `--cs-policy help`.
    pub about: &'static str,
    pub build: fn(&CsConfig) -> Box<dyn Policy<K, V>>,
}

mod clock;
mod fifo;
mod lfu;
mod lru;
mod random;

/// The registry of replacement policies, one row each, resolved by name as `cc/registry.rs`
/// resolves controllers (the first is the default).
pub fn policies<K, V>() -> Vec<PolicyEntry<K, V>> {
    vec![
        PolicyEntry { name: "lru", about: lru::ABOUT, build: lru::build },
        PolicyEntry { name: "lfu", about: lfu::ABOUT, build: lfu::build },
        PolicyEntry { name: "fifo", about: fifo::ABOUT, build: fifo::build },
        PolicyEntry { name: "random", about: random::ABOUT, build: random::build },
        PolicyEntry { name: "clock", about: clock::ABOUT, build: clock::build },
    ]
}

/// The text of `--cs-policy help`: every replacement policy with its line, the default
/// first.
pub fn help() -> String {
    let mut out = String::from("Content store replacement policies (rdtp route --cs-policy NAME):\n");
    for (name, about) in policy_help() {
        out.push_str(&format!("  {name:<8} {about}\n"));
    }
    out
}

/// Every policy's name and line of help, in registry order (`--cs-policy help`).
pub fn policy_help() -> Vec<(&'static str, &'static str)> {
    policies::<(), ()>().into_iter().map(|p| (p.name, p.about)).collect()
}

pub use lfu::{LFU_BYTES_PER_UNIT, LFU_MIN_SKETCH_BYTES, LFU_SAMPLE_PER_UNIT};

/// Whether a value passing through is cached at all. Text form: `always`, `prob:P`,
/// `full:P` (0 ≤ P ≤ 1), `none`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Admission {
    /// Cache everything ("indiscriminate caching", seed 003 §III).
    #[default]
    Always,
    /// Cache a new key with probability P, drawn from the seeded PCG ("random caching",
    /// seed 003 §III uses P = 0.125). With LRU this is q-LRU (Martina, Garetto & Leonardi,
    /// INFOCOM 2014). P above 1 behaves as 1, below 0 or NaN as 0.
    Prob(f64),
    /// Cache a new key always while it fits without evicting anything, and with probability
    /// P once the store is full (q-LRU under pressure). An object that fits is cached whole
    /// on its first pass, as with `always`; one larger than the store, fetched again and
    /// again in order, is LRU's worst case under `always` (each unit is evicted just before
    /// it is asked for again: 0 hits), while here each miss evicts one entry only with
    /// probability P, so most of what the first pass stored is still held when it is asked
    /// for again. `rdtp route`'s default, with P = 0.125 (docs/BENCHMARKS.md, "A store
    /// smaller than the object").
    WhenFull(f64),
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
    /// Seed of the PCG behind `random` eviction and `prob:P` admission (and salt of the key
    /// hash behind `lfu`'s sketch).
    pub seed: u64,
}

impl CsConfig {
    /// NFD's default content store size, in packets.
    pub const DEFAULT_CAPACITY_UNITS: usize = 65_536;
    /// A router's default byte budget (`rdtp route --cs-bytes`, [`super::RouterConfig`]'s
    /// default): 256 MiB. It holds a 60 MB object with room to spare once every entry's
    /// bookkeeping is counted (≈ 75 MB of budget at 1 402-byte units), and bounds what
    /// large, overlapping units can make the store hold: 65 536 units of 64 KiB would be
    /// 4.3 GB.
    pub const DEFAULT_CAPACITY_BYTES: u64 = 256 << 20;
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

/// The keys of a content-store spec (`--cs POLICY[:KEY=VALUE,...]`, the policy named
/// first): `lfu:units=1000,bytes=64MiB,insert=prob:0.125`. A router's spec has the same
/// keys with a `cs_` prefix (`cs_units`, …), beside `cs_policy`.
impl crate::spec::Keyed for CsConfig {
    const KEYS: &'static [crate::spec::Key<CsConfig>] = &[
        crate::spec::key!("units" => capacity_units, crate::spec::Kind::Int { min: 0, max: u64::MAX }, "most entries held (0 caches nothing; NFD's default: 65536)"),
        crate::spec::key!("bytes" => capacity_bytes, crate::spec::Kind::Size { min: 0, max: u64::MAX }, "most bytes held, each unit weighing its payload and bookkeeping"),
        crate::spec::key!("insert" => admission, crate::spec::Text::of::<Admission>(), "insertion: always, prob:P (cache with probability P), full:P (always while there is room, then with probability P) or none"),
    ];
}

impl CsConfig {
    /// Apply a content-store spec: `POLICY[:KEY=VALUE,...]` (a replacement policy of
    /// [`policies`], then keys), or keys alone (`units=1000`) to keep the policy.
    pub fn apply_spec(&mut self, spec: &str) -> Result<(), crate::spec::ConfigError> {
        let (policy, keys) = match spec.split_once(':') {
            Some((p, keys)) if !p.contains('=') => (Some(p.trim()), keys),
            _ if !spec.contains('=') => (Some(spec.trim()), ""),
            _ => (None, spec),
        };
        if let Some(p) = policy {
            self.replacement = p.parse().map_err(|_| crate::spec::ConfigError {
                what: "content store",
                spec: spec.to_string(),
                error: crate::spec::ItemError::BadValue {
                    key: "policy".into(),
                    value: p.to_string(),
                    expected: <Replacement as crate::spec::Named>::expected(),
                },
            })?;
        }
        crate::spec::apply(self, "content store", keys)
    }

    /// The canonical spec against `base`: the policy, then the keys that differ
    /// (`lfu:units=1000`).
    pub fn to_spec_from(&self, base: &CsConfig) -> String {
        match crate::spec::changed(self, base) {
            keys if keys.is_empty() => self.replacement.to_string(),
            keys => format!("{}:{keys}", self.replacement),
        }
    }

    /// Every policy and key, with the defaults of `base` (`rdtp route --cs help`).
    pub fn help(base: &CsConfig) -> String {
        let mut out =
            String::from("Content store specs: POLICY[:KEY=VALUE,...], e.g. lfu:units=1000,insert=prob:0.125.\n\n");
        out.push_str(&help());
        out.push('\n');
        out.push_str(&crate::spec::help("Keys (defaults shown):\n", base));
        out
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

crate::impl_add!(CsStats {
    hits,
    misses,
    inserts,
    replaced,
    evictions,
    removals,
    admission_rejects,
    frequency_rejects,
    too_big_rejects
});

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
    /// `lfu`: the key's estimated frequency was not higher than that of the entries it would
    /// evict (or, with odds of about 2⁻⁶⁴ per pair, its hash equals a held key's).
    Frequency,
    /// The value is larger than `capacity_bytes`, or `capacity_units` is 0.
    TooBig,
}

/// A [`Replacement`] that names no policy of the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseReplacementError(pub String);

impl fmt::Display for ParseReplacementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = policy_help().into_iter().map(|(n, _)| n).collect();
        write!(f, "unknown replacement policy {:?} (expected one of {})", self.0, names.join(", "))
    }
}

impl std::error::Error for ParseReplacementError {}

/// An [`Admission`] that is not one of `always`, `none`, `prob:P`, `full:P` with 0 ≤ P ≤ 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad admission policy {0:?} (expected always, none, prob:P or full:P with 0 <= P <= 1)")]
pub struct ParseAdmissionError(pub String);

impl FromStr for Replacement {
    type Err = ParseReplacementError;
    /// A registry name, case-insensitive.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        policies::<(), ()>()
            .into_iter()
            .find(|p| p.name.eq_ignore_ascii_case(s))
            .map(|p| Replacement(p.name))
            .ok_or_else(|| ParseReplacementError(s.to_string()))
    }
}

impl fmt::Display for Replacement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
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
        let p: f64 = p.trim().parse().map_err(|_| err())?;
        if !(0.0..=1.0).contains(&p) {
            return Err(err());
        }
        match kw {
            kw if kw.eq_ignore_ascii_case("prob") => Ok(Admission::Prob(p)),
            kw if kw.eq_ignore_ascii_case("full") => Ok(Admission::WhenFull(p)),
            _ => Err(err()),
        }
    }
}

impl fmt::Display for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Admission::Always => f.write_str("always"),
            Admission::Prob(p) => write!(f, "prob:{p}"),
            Admission::WhenFull(p) => write!(f, "full:{p}"),
            Admission::Never => f.write_str("none"),
        }
    }
}

/// No entry (end of the recency list, or a key not cached).
pub const NIL: usize = usize::MAX;

/// One cached entry. Its last four words are the replacement policy's to use ([`Policy`]).
pub struct Entry<K, V> {
    key: K,
    value: V,
    /// `value.bytes()` when it was stored.
    pub size: u64,
    /// Towards the front (more recent) of the recency list, if the policy uses it.
    pub prev: usize,
    /// Towards the back (the next victim), if the policy uses it.
    pub next: usize,
    /// The key's hash ([`key_hash`]) if the policy hashes keys; 0 otherwise.
    pub hash: u64,
    /// The policy's own word ([`NIL`] when stored): `lfu`'s heap position, `clock`'s
    /// reference bit.
    pub pos: usize,
}

/// A bounded cache of `V`s keyed by `K`, with a replacement and an admission policy; see
/// the [module documentation](self).
pub struct ContentStore<K, V> {
    cfg: CsConfig,
    /// The entries, densely packed (removal swaps the last one in).
    entries: Vec<Entry<K, V>>,
    /// Key → index in `entries`, hashed with keys derived from [`CsConfig::seed`]
    /// ([`super::hashing`]; nothing ever iterates the map).
    index: Map<K, usize>,
    bytes: u64,
    /// Front (most recent) and back (next victim) of the recency list; `lru`/`fifo` only.
    head: usize,
    tail: usize,
    rng: Pcg64,
    /// The replacement policy ([`policies`]).
    policy: Box<dyn Policy<K, V>>,
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
        let policy = policies::<K, V>()
            .into_iter()
            .find(|p| p.name == cfg.replacement.name())
            .map_or_else(|| lru::build(&cfg), |p| (p.build)(&cfg));
        let seed = cfg.seed;
        ContentStore {
            rng: Pcg64::seed_from_u64(cfg.seed),
            cfg,
            entries: Vec::new(),
            index: Map::with_hasher(TableHasher::from_seed(seed)),
            bytes: 0,
            head: NIL,
            tail: NIL,
            policy,
            stats: CsStats::default(),
        }
    }

    /// Looks `key` up to serve it: counts one hit or one miss, and tells the policy (`lru`
    /// moves a hit to the front; `lfu` counts the lookup, hit or miss, in its sketch, and
    /// re-sorts a hit by its new estimate; `clock` marks a hit referenced; `fifo` and
    /// `random` change nothing). O(1); O(log n) amortized for `lfu`.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        let slot = self.index.get(key).copied();
        let hash = if self.policy.hashes_keys() { key_hash(self.cfg.seed, key) } else { 0 };
        let (policy, mut t) = self.split();
        policy.after_lookup(&mut t, hash, slot);
        match slot {
            Some(i) => {
                self.stats.hits += 1;
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
    /// value in place). O(1 + v) for v evictions; O((1 + v) log n) amortized for `lfu`.
    pub fn offer(&mut self, key: K, value: V) -> Offer {
        let size = value.bytes() as u64;
        if self.cfg.capacity_units == 0 || size > self.cfg.capacity_bytes {
            self.stats.too_big_rejects += 1;
            return Offer::Rejected(Rejection::TooBig);
        }
        let hash = if self.policy.hashes_keys() { key_hash(self.cfg.seed, &key) } else { 0 };
        if let Some(&i) = self.index.get(&key) {
            drop(self.detach(i));
            let evicted = self.make_room(size);
            self.attach(key, value, size, hash);
            self.stats.replaced += 1;
            return Offer::Replaced { evicted };
        }
        if !self.admit(size) {
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

    /// Takes `key` out of the store (not an eviction: counted in `removals`). `lfu`'s sketch
    /// keeps counting its lookups. O(1); O(log n) for `lfu`.
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

    /// `lfu` only: the bytes its bookkeeping holds (sketch, heap, set of cached key hashes,
    /// and the per-entry fields only it uses), counted by the capacity of the allocations,
    /// not their use. At most `LFU_BYTES_PER_UNIT × capacity_units + LFU_MIN_SKETCH_BYTES`
    /// (see `lfu.rs`), however many keys were looked up. `None` for the other
    /// policies.
    pub fn lfu_bookkeeping_bytes(&self) -> Option<usize> {
        self.policy.bookkeeping_bytes(self.entries.capacity())
    }

    /// The policy, and the view of the store it works on.
    fn split(&mut self) -> (&mut dyn Policy<K, V>, Table<'_, K, V>) {
        let t = Table { entries: &mut self.entries, head: &mut self.head, tail: &mut self.tail, rng: &mut self.rng };
        (&mut *self.policy, t)
    }

    /// `lfu`'s state, if that is the policy (for the tests' invariant checks).
    #[cfg(test)]
    fn lfu(&self) -> Option<&lfu::Lfu> {
        self.policy.as_lfu()
    }

    /// The admission draw for a new key whose value weighs `size`.
    fn admit(&mut self, size: u64) -> bool {
        match self.cfg.admission {
            Admission::Always => true,
            Admission::Never => false,
            Admission::Prob(p) => self.draw() < p,
            Admission::WhenFull(p) => self.shortfall(size) == (0, 0) || self.draw() < p,
        }
    }

    /// A uniform double in [0, 1) from 53 bits of the seeded PCG.
    fn draw(&mut self) -> f64 {
        ((self.rng.next_u64() >> 11) as f64) * (1.0 / (1u64 << 53) as f64)
    }

    /// `lfu` only (true otherwise): whether a new key with `hash` and `size` is more
    /// frequent than every entry that would be evicted to make room for it.
    fn passes_frequency_filter(&mut self, hash: u64, size: u64) -> bool {
        let (units, bytes) = self.shortfall(size);
        let (policy, mut t) = self.split();
        policy.admits(&mut t, hash, units, bytes)
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
        let (policy, mut t) = self.split();
        policy.victim(&mut t)
    }

    fn uses_list(&self) -> bool {
        self.policy.uses_list()
    }

    /// Stores a new entry (room has been made) at the front of the list / with a fresh touch.
    fn attach(&mut self, key: K, value: V, size: u64, hash: u64) {
        let i = self.entries.len();
        self.index.insert(key.clone(), i);
        if self.entries.len() == self.entries.capacity() {
            reserve_within(&mut self.entries, self.cfg.capacity_units);
        }
        self.entries.push(Entry { key, value, size, prev: NIL, next: NIL, hash, pos: NIL });
        self.bytes += size;
        let (policy, mut t) = self.split();
        if policy.uses_list() {
            t.link_front(i);
        }
        policy.after_insert(&mut t, i);
    }

    /// Takes entry `i` out of every structure and returns it; the last entry moves into `i`.
    fn detach(&mut self, i: usize) -> Entry<K, V> {
        let (policy, mut t) = self.split();
        if policy.uses_list() {
            t.unlink(i);
        }
        policy.before_erase(&mut t, i);
        self.index.remove(&self.entries[i].key);
        let e = self.entries.swap_remove(i);
        self.bytes -= e.size;
        if i < self.entries.len() {
            // The former last entry (index `len`) now lives at `i`: repoint what refers to it.
            let (prev, next) = (self.entries[i].prev, self.entries[i].next);
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
            let (policy, mut t) = self.split();
            policy.after_move(&mut t, i);
        }
        e
    }
}

/// Bytes a [`ContentStore<K, V>`] spends on each entry besides the value's own allocations:
/// the entry record (key, value's inline part, size, list links, `lfu` fields) and its slot
/// in the key index (key, position, control byte). A value type that wants its weight
/// ([`Weigh::bytes`]) to be what holding it really costs adds this to its payload (the
/// router's cached units do). The store's two tables never hold more than
/// `capacity_units` entries, whatever their weight, and may have grown up to twice that
/// (`Vec` and hash-table growth), so the slack is bounded by the unit capacity.
pub const fn entry_overhead<K, V>() -> usize {
    size_of::<Entry<K, V>>() + size_of::<(K, usize)>() + 1
}

/// A [`ContentStore`] shared by several owners, e.g. the router cores of one runtime (one
/// per thread, [`super::Router::with_store`]): one store as far as anyone can tell, so an
/// object up to its capacity is cached whole whichever core handles it. Every operation
/// takes the lock for that operation only (one lookup, one offer), so the critical sections
/// are O(1) and no lock is ever held while another is taken. A single owner pays an
/// uncontended lock per operation (two atomic instructions).
///
/// A lock poisoned by a panicking owner is taken anyway: every operation leaves the store
/// consistent before it can panic (the panics are index bugs, never half-done updates).
pub struct SharedStore<K, V>(Arc<Mutex<ContentStore<K, V>>>);

impl<K, V> Clone for SharedStore<K, V> {
    /// Another handle on the same store.
    fn clone(&self) -> Self {
        SharedStore(self.0.clone())
    }
}

impl<K, V> fmt::Debug for SharedStore<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.try_lock() {
            Ok(cs) => cs.fmt(f),
            Err(_) => f.write_str("SharedStore(<locked>)"),
        }
    }
}

impl<K: Hash + Eq + Clone, V: Weigh> SharedStore<K, V> {
    /// A new, empty store behind its own lock.
    pub fn new(cfg: CsConfig) -> Self {
        SharedStore(Arc::new(Mutex::new(ContentStore::new(cfg))))
    }

    /// The store, locked until the guard is dropped. Do not hold it while taking another.
    pub fn lock(&self) -> MutexGuard<'_, ContentStore<K, V>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether `other` is a handle on the same store.
    pub fn same(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The 64-bit key hash behind `lfu`'s counters: SipHash with fixed keys, salted by the
/// seed, so it does not vary between runs (std's `RandomState` would).
pub fn key_hash<K: Hash>(seed: u64, key: &K) -> u64 {
    let mut h = DefaultHasher::new();
    seed.hash(&mut h);
    key.hash(&mut h);
    h.finish()
}

/// Grows a full `v` by as much as it holds (at least 4), but never beyond `limit` elements
/// of capacity (unless it holds more already): the doubling of `Vec::push` without its
/// overshoot past the capacity of the store.
pub(crate) fn reserve_within<T>(v: &mut Vec<T>, limit: usize) {
    let extra = v.capacity().max(4).min(limit.saturating_sub(v.len())).max(1);
    v.reserve_exact(extra);
}

#[cfg(test)]
mod tests;
