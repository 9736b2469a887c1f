//! `lfu`, least frequently used, with the frequency estimates and the admission filter of
//! **TinyLFU** (Einziger, Friedman & Manes, "TinyLFU: A Highly Efficient Cache Admission
//! Policy", ACM Transactions on Storage 13(4), 2017):
//!
//! * the frequency of a key is estimated by a count-min sketch that counts every
//!   [`get`](super::ContentStore::get) of it, whether cached or not, and ages: when it has
//!   counted W = [`LFU_SAMPLE_PER_UNIT`] × `capacity_units` lookups, every counter is
//!   halved, and so is its count of lookups, so the next halving comes W/2 lookups later
//!   (TinyLFU's "reset"). Under a stationary popularity p, a key's estimate swings
//!   between about p·W/2 and p·W;
//! * the victim is the cached entry with the lowest estimate (ties: the least recently
//!   touched, by insertion or hit);
//! * a new key is admitted only if its estimate exceeds that of every entry it would
//!   evict; otherwise the offer is rejected ([`Rejection::Frequency`](super::Rejection::Frequency)).
//!
//! Why not plain in-cache LFU: forgetting a key's count when it is evicted freezes the
//! cache on whatever entered first (newcomers arrive with count 1 and are the next
//! victims), so it never converges to the most popular keys. Why not perfect LFU: it
//! counts every key ever seen, which grows without bound. The sketch counts lookups of
//! non-cached keys too, so a popular key outside the cache gathers the count that lets
//! it in, and under a stationary popularity the content converges to the most frequent
//! keys, as perfect LFU's does; the halving also lets it follow popularity that changes
//! (a key no longer looked up loses half its estimate every W/2 lookups: at most 8
//! halvings take a saturated counter to 0). Why a sketch rather than exact counts of a
//! window of lookups (this policy's previous form, Window-LFU): exact counts need memory
//! for every distinct key in the window, the sketch only for the capacity, whatever W.
//!
//! The sketch: 4 rows of max(8 × `capacity_units`, 1 024) 8-bit counters, saturating at
//! 255; a key's cell in each row comes from its seeded 64-bit hash; an increment raises
//! only the key's smallest counters ("conservative update", Estan & Varghese, SIGCOMM
//! 2002). The estimate, the smallest of the key's 4 counters, is never below the key's
//! own (halved) count short of saturation; keys sharing its counters can only raise it. The finite sample and those collisions make estimates near the edge of
//! the cache noisy, which costs a little: with W = 128 C, `tests/cs_theory.rs` measures
//! 0.3–0.6 percentage points below perfect LFU's top-C sum under Zipf(0.64–1.03)
//! (W = 64 C costs about twice that, 256 C about half; 16-bit counters measure the same;
//! 4 counters per unit and row instead of 8 cost up to 0.4 points more).
//!
//! The eviction order: the cached entries sit in a binary min-heap by (estimate, last
//! touch). An entry's recorded estimate is refreshed when its key is looked up and after
//! every halving; in between, lookups of keys that share its counters can only raise its
//! current estimate, so the recorded one is a lower bound, and the first entry is
//! refreshed (and sifted down) until its recorded estimate is current before it is
//! compared with a newcomer or evicted. It is then the entry with the lowest current
//! estimate; recency breaks ties among equal recorded estimates.
//!
//! Memory, on top of the entries and the key index every policy keeps, counted by
//! [`ContentStore::lfu_bookkeeping_bytes`](super::ContentStore::lfu_bookkeeping_bytes): at most [`LFU_BYTES_PER_UNIT`] bytes per unit
//! of capacity — 88 on 64-bit targets: 32 of sketch, 24 of heap node (estimate, last
//! touch, slot), 16 of the set of cached key hashes (two 8-byte slots per unit, open
//! addressing), 16 of per-entry hash and heap position — plus [`LFU_MIN_SKETCH_BYTES`]
//! (the sketch's minimum width) for stores under 128 units. It does not depend on W or on
//! the keys looked up. The sketch and the hash set are allocated on first use.
//!
//! Two keys whose 64-bit hashes are equal share their estimate, and at most one of them
//! is cached at a time (the other is rejected, [`Rejection::Frequency`](super::Rejection::Frequency)).
//!
//! Its bookkeeping: a count-min sketch with periodic halving (the frequency estimates of
//! TinyLFU), a binary min-heap of the cached entries by (estimate, last touch), and an
//! open-addressing set of the cached keys' 64-bit hashes. All three are sized by the
//! capacity alone.

use super::{CsConfig, Entry, NIL, Policy, Table};

pub(super) const ABOUT: &str =
    "TinyLFU: the least frequently looked-up entry goes, and a new unit enters only if looked up more often";

pub(super) fn build<K, V>(cfg: &CsConfig) -> Box<dyn Policy<K, V>> {
    Box::new(Lfu::new(cfg.capacity_units, cfg.capacity_units.saturating_mul(LFU_SAMPLE_PER_UNIT)))
}

/// The sample size W of an `lfu` store, per unit of capacity: its sketch
/// halves every counter when it has counted `LFU_SAMPLE_PER_UNIT × capacity_units` lookups.
///
/// Longer samples estimate frequencies more precisely (a key at the edge of the cache, of
/// popularity p, is counted about `W·p` times per sample) but forget old popularity more
/// slowly. Unlike Window-LFU's window, the sample size costs no memory.
pub const LFU_SAMPLE_PER_UNIT: usize = 128;

/// Most bytes of bookkeeping an `lfu` store keeps per unit of capacity (88
/// on 64-bit targets), beyond [`LFU_MIN_SKETCH_BYTES`]; see `lfu`.
pub const LFU_BYTES_PER_UNIT: usize = DEPTH * WIDTH_PER_UNIT * size_of::<Counter>()
    + size_of::<Node>()
    + HASH_SLOTS_PER_UNIT * size_of::<u64>()
    + size_of::<u64>()
    + size_of::<usize>();

/// The smallest sketch of an `lfu` store (4 rows of 1 024 counters: 4 KiB),
/// so that a small store's estimates are not drowned by collisions; it is what an
/// `lfu` store under 128 units keeps beyond [`LFU_BYTES_PER_UNIT`] per unit.
pub const LFU_MIN_SKETCH_BYTES: usize = DEPTH * MIN_WIDTH * size_of::<Counter>();

/// Counter of the sketch. Saturates at `Counter::MAX`.
pub(super) type Counter = u8;

/// Rows of the sketch (independent hash functions).
pub(super) const DEPTH: usize = 4;

/// Counters per row per unit of capacity.
pub(super) const WIDTH_PER_UNIT: usize = 8;

/// Fewest counters per row, whatever the capacity.
pub(super) const MIN_WIDTH: usize = 1024;

/// Slots of the hash set per unit of capacity (it is at most half full).
pub(super) const HASH_SLOTS_PER_UNIT: usize = 2;

/// Where `hash` falls in a row of `width` counters: the row's own mix of the key hash
/// (SplitMix64's finalizer on the hash plus a per-row odd constant), mapped onto
/// `0..width` by multiply-shift.
fn column(hash: u64, row: usize, width: usize) -> usize {
    let mut z = hash.wrapping_add((row as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    ((u128::from(z) * width as u128) >> 64) as usize
}

/// A count-min sketch (Cormode & Muthukrishnan, J. Algorithms 2005) of `DEPTH` rows of
/// `width` saturating counters, with TinyLFU's aging (Einziger, Friedman & Manes, ACM ToS
/// 2017, "reset"): every counted lookup also increments `samples`, and when `samples`
/// reaches the sample size W, every counter and `samples` itself are halved.
///
/// Increments are conservative (Estan & Varghese, SIGCOMM 2002): only the counters equal to
/// the key's current minimum are raised. The estimate stays at least the key's own count
/// (halved alike, short of saturation), with less noise from the keys sharing its counters
/// than plain increments leave.
pub(super) struct Sketch {
    /// `DEPTH` rows of `width` counters, row after row; empty until the first lookup.
    pub(super) counters: Vec<Counter>,
    pub(super) width: usize,
    /// Lookups counted since the last halving, halved with the counters.
    pub(super) samples: usize,
    /// W; 0 (capacity 0) counts nothing.
    pub(super) sample_size: usize,
}

impl Sketch {
    fn new(capacity_units: usize, sample_size: usize) -> Self {
        let width = capacity_units.saturating_mul(WIDTH_PER_UNIT).max(MIN_WIDTH);
        Sketch { counters: Vec::new(), width, samples: 0, sample_size }
    }

    fn cells(&self, hash: u64) -> [usize; DEPTH] {
        core::array::from_fn(|row| row * self.width + column(hash, row, self.width))
    }

    /// The estimated (aged) number of lookups of `hash`: never below the true one.
    pub(super) fn estimate(&self, hash: u64) -> u32 {
        if self.counters.is_empty() {
            return 0;
        }
        self.cells(hash).iter().map(|&c| u32::from(self.counters[c])).min().unwrap_or(0)
    }

    /// Counts one lookup of `hash`. Returns whether it completed a sample, which halved
    /// every counter.
    fn increment(&mut self, hash: u64) -> bool {
        if self.sample_size == 0 {
            return false;
        }
        if self.counters.is_empty() {
            self.counters = vec![0; DEPTH * self.width];
        }
        let cells = self.cells(hash);
        let min = cells.iter().map(|&c| self.counters[c]).min().unwrap_or(0);
        if min < Counter::MAX {
            for c in cells {
                if self.counters[c] == min {
                    self.counters[c] = min + 1;
                }
            }
        }
        self.samples += 1;
        if self.samples < self.sample_size {
            return false;
        }
        for c in &mut self.counters {
            *c >>= 1;
        }
        self.samples /= 2;
        true
    }

    fn bytes(&self) -> usize {
        self.counters.capacity() * size_of::<Counter>()
    }
}

/// A cached entry in the heap: its estimate when last refreshed, and its last touch.
#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    /// The sketch's estimate for the entry's hash when last refreshed: at most the current
    /// one (estimates only grow between halvings, and a halving refreshes every node).
    pub(super) freq: u32,
    /// Last touch (insertion or hit); unique, so the order is total.
    pub(super) seq: u64,
    /// Index of the entry in the store's `entries`.
    pub(super) slot: usize,
}

impl Node {
    /// Whether `self` is evicted before `other`: lower estimate, then older touch.
    pub(super) fn before(&self, other: &Node) -> bool {
        (self.freq, self.seq) < (other.freq, other.seq)
    }
}

/// The set of the cached keys' 64-bit hashes: `HASH_SLOTS_PER_UNIT × capacity_units` slots
/// with linear probing and backward-shift deletion; 0 marks an empty slot, so a hash of 0 is
/// stored as 1 (the two count as one hash, like any other 64-bit collision).
pub(super) struct HashSet64 {
    pub(super) slots: Vec<u64>,
    size: usize,
    pub(super) len: usize,
}

impl HashSet64 {
    fn new(capacity_units: usize) -> Self {
        HashSet64 { slots: Vec::new(), size: capacity_units.saturating_mul(HASH_SLOTS_PER_UNIT).max(2), len: 0 }
    }

    fn home(&self, h: u64) -> usize {
        ((u128::from(h) * self.slots.len() as u128) >> 64) as usize
    }

    fn next(&self, i: usize) -> usize {
        if i + 1 == self.slots.len() { 0 } else { i + 1 }
    }

    /// Index of `h`'s slot, or of the empty slot where it would go.
    fn find(&self, h: u64) -> usize {
        let mut i = self.home(h);
        while self.slots[i] != 0 && self.slots[i] != h {
            i = self.next(i);
        }
        i
    }

    pub(super) fn contains(&self, hash: u64) -> bool {
        let h = hash.max(1);
        !self.slots.is_empty() && self.slots[self.find(h)] == h
    }

    /// Adds `hash` (not present; fewer than half the slots are used).
    fn insert(&mut self, hash: u64) {
        if self.slots.is_empty() {
            self.slots = vec![0; self.size];
        }
        let i = self.find(hash.max(1));
        self.slots[i] = hash.max(1);
        self.len += 1;
    }

    /// Takes `hash` out, shifting back the entries of its probe run that may move.
    fn remove(&mut self, hash: u64) {
        if self.slots.is_empty() {
            return;
        }
        let mut hole = self.find(hash.max(1));
        if self.slots[hole] == 0 {
            return;
        }
        self.len -= 1;
        let m = self.slots.len();
        let mut j = hole;
        loop {
            j = self.next(j);
            let h = self.slots[j];
            if h == 0 {
                break;
            }
            // The entry at j may fill the hole iff the hole lies on its probe path, i.e.
            // (cyclically) between its home and j.
            let home = self.home(h);
            if (j + m - home) % m >= (j + m - hole) % m {
                self.slots[hole] = h;
                hole = j;
            }
        }
        self.slots[hole] = 0;
    }

    fn bytes(&self) -> usize {
        self.slots.capacity() * size_of::<u64>()
    }
}

/// `lfu`'s state (see the module documentation).
pub(super) struct Lfu {
    pub(super) sketch: Sketch,
    /// The cached entries as a binary min-heap by [`Node::before`]; `entries[i].pos` is the
    /// index of entry `i`'s node. Its first node is the next victim (after a refresh).
    pub(super) heap: Vec<Node>,
    /// The cached entries' key hashes: at most one cached key per hash.
    pub(super) hashes: HashSet64,
    /// Source of `seq` values; strictly increasing.
    tick: u64,
    capacity_units: usize,
}

impl Lfu {
    pub(super) fn new(capacity_units: usize, sample_size: usize) -> Self {
        Lfu {
            sketch: Sketch::new(capacity_units, sample_size),
            heap: Vec::new(),
            hashes: HashSet64::new(capacity_units),
            tick: 0,
            capacity_units,
        }
    }

    fn next_seq(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// One lookup of `hash`: count it in the sketch (halving it, and then refreshing every
    /// node, when a sample is complete), and touch the entry if it is cached (`slot`).
    pub(super) fn record<K, V>(&mut self, hash: u64, slot: Option<usize>, entries: &mut [Entry<K, V>]) {
        if self.sketch.increment(hash) {
            self.reorder(entries);
        }
        if let Some(i) = slot {
            let seq = self.next_seq();
            let pos = entries[i].pos;
            self.heap[pos].freq = self.sketch.estimate(hash);
            self.heap[pos].seq = seq;
            self.fix(pos, entries);
        }
    }

    /// Adds the entry just stored at `slot` (the last one), with a fresh touch.
    pub(super) fn attach<K, V>(&mut self, slot: usize, entries: &mut [Entry<K, V>]) {
        let hash = entries[slot].hash;
        let node = Node { freq: self.sketch.estimate(hash), seq: self.next_seq(), slot };
        if self.heap.len() == self.heap.capacity() {
            super::reserve_within(&mut self.heap, self.capacity_units);
        }
        self.heap.push(node);
        entries[slot].pos = self.heap.len() - 1;
        self.sift_up(self.heap.len() - 1, entries);
        self.hashes.insert(hash);
    }

    /// Takes entry `slot` out (before the store moves another entry into its slot).
    pub(super) fn detach<K, V>(&mut self, slot: usize, entries: &mut [Entry<K, V>]) {
        self.remove_at(entries[slot].pos, entries);
        self.hashes.remove(entries[slot].hash);
    }

    /// The store moved an entry into slot `to` (after detaching the one that was there).
    pub(super) fn moved<K, V>(&mut self, to: usize, entries: &[Entry<K, V>]) {
        self.heap[entries[to].pos].slot = to;
    }

    /// The next victim: the first node once its estimate is current (refreshing a node can
    /// only raise it, so the loop ends; the node found is then minimal by current estimate,
    /// the others' recorded estimates being lower bounds). `None` if nothing is cached.
    pub(super) fn victim<K, V>(&mut self, entries: &mut [Entry<K, V>]) -> Option<usize> {
        loop {
            let top = *self.heap.first()?;
            let current = self.sketch.estimate(entries[top.slot].hash);
            if current <= top.freq {
                return Some(top.slot);
            }
            self.heap[0].freq = current;
            self.sift_down(0, entries);
        }
    }

    /// Whether a new key with `hash` beats every entry that would be evicted, in order, to
    /// free `units` entries and `bytes` bytes. Leaves the same entries cached (it takes
    /// the victims out of the heap to find the next ones, then puts them back).
    pub(super) fn admits<K, V>(
        &mut self,
        hash: u64,
        mut units: usize,
        mut bytes: u64,
        entries: &mut [Entry<K, V>],
    ) -> bool {
        if self.hashes.contains(hash) {
            return false; // a different key with the same 64-bit hash is cached
        }
        let candidate = self.sketch.estimate(hash);
        let mut taken = Vec::new();
        let mut admitted = true;
        while units > 0 || bytes > 0 {
            let Some(v) = self.victim(entries) else { break };
            if self.heap[0].freq >= candidate {
                admitted = false;
                break;
            }
            units = units.saturating_sub(1);
            bytes = bytes.saturating_sub(entries[v].size);
            if units > 0 || bytes > 0 {
                taken.push(self.remove_at(0, entries));
            }
        }
        for node in taken {
            self.heap.push(node);
            self.sift_up(self.heap.len() - 1, entries);
        }
        admitted
    }

    /// Bytes held by these structures and by the per-entry fields only `lfu` uses (`hash`,
    /// `pos`), counted by allocated capacity.
    pub(super) fn bytes(&self, entries_capacity: usize) -> usize {
        self.sketch.bytes()
            + self.heap.capacity() * size_of::<Node>()
            + self.hashes.bytes()
            + entries_capacity * (size_of::<u64>() + size_of::<usize>())
    }

    /// After a halving: every node's estimate from the sketch, then the heap rebuilt.
    fn reorder<K, V>(&mut self, entries: &mut [Entry<K, V>]) {
        for node in &mut self.heap {
            node.freq = self.sketch.estimate(entries[node.slot].hash);
        }
        for pos in (0..self.heap.len() / 2).rev() {
            self.sift_down(pos, entries);
        }
    }

    fn place<K, V>(&mut self, pos: usize, node: Node, entries: &mut [Entry<K, V>]) {
        self.heap[pos] = node;
        entries[node.slot].pos = pos;
    }

    /// Restores the heap order around `pos`, whose node changed.
    fn fix<K, V>(&mut self, pos: usize, entries: &mut [Entry<K, V>]) {
        if pos > 0 && self.heap[pos].before(&self.heap[(pos - 1) / 2]) {
            self.sift_up(pos, entries);
        } else {
            self.sift_down(pos, entries);
        }
    }

    fn sift_up<K, V>(&mut self, mut pos: usize, entries: &mut [Entry<K, V>]) {
        let node = self.heap[pos];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if !node.before(&self.heap[parent]) {
                break;
            }
            self.place(pos, self.heap[parent], entries);
            pos = parent;
        }
        self.place(pos, node, entries);
    }

    fn sift_down<K, V>(&mut self, mut pos: usize, entries: &mut [Entry<K, V>]) {
        let node = self.heap[pos];
        let n = self.heap.len();
        loop {
            let left = 2 * pos + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.heap[right].before(&self.heap[left]) { right } else { left };
            if !self.heap[child].before(&node) {
                break;
            }
            self.place(pos, self.heap[child], entries);
            pos = child;
        }
        self.place(pos, node, entries);
    }

    /// Takes out the node at `pos` and returns it (its entry's `pos` becomes `NIL`).
    fn remove_at<K, V>(&mut self, pos: usize, entries: &mut [Entry<K, V>]) -> Node {
        let removed = self.heap[pos];
        let last = self.heap.pop().unwrap_or(removed);
        if pos < self.heap.len() {
            self.place(pos, last, entries);
            self.fix(pos, entries);
        }
        entries[removed.slot].pos = NIL;
        removed
    }
}

impl<K, V> Policy<K, V> for Lfu {
    fn hashes_keys(&self) -> bool {
        true
    }
    fn after_lookup(&mut self, t: &mut Table<'_, K, V>, hash: u64, slot: Option<usize>) {
        self.record(hash, slot, t.entries);
    }
    fn admits(&mut self, t: &mut Table<'_, K, V>, hash: u64, units: usize, bytes: u64) -> bool {
        Lfu::admits(self, hash, units, bytes, t.entries)
    }
    fn after_insert(&mut self, t: &mut Table<'_, K, V>, slot: usize) {
        self.attach(slot, t.entries);
    }
    fn before_erase(&mut self, t: &mut Table<'_, K, V>, slot: usize) {
        self.detach(slot, t.entries);
    }
    fn after_move(&mut self, t: &mut Table<'_, K, V>, to: usize) {
        self.moved(to, t.entries);
    }
    fn victim(&mut self, t: &mut Table<'_, K, V>) -> usize {
        Lfu::victim(self, t.entries).unwrap_or(0)
    }
    fn bookkeeping_bytes(&self, entries_capacity: usize) -> Option<usize> {
        Some(self.bytes(entries_capacity))
    }
    #[cfg(test)]
    fn as_lfu(&self) -> Option<&Lfu> {
        Some(self)
    }
}
