//! Unit and property tests of the content store: exact eviction orders, capacities, counters,
//! parsing, and the internal invariants after arbitrary operation sequences.

use super::*;
use proptest::prelude::*;
use std::collections::{HashMap, VecDeque};

/// A value of a chosen size, tagged so a test can tell which offer it came from.
#[derive(Clone, Debug, PartialEq)]
struct Val {
    size: usize,
    tag: u64,
}

impl Weigh for Val {
    fn bytes(&self) -> usize {
        self.size
    }
}

fn v(tag: u64) -> Val {
    Val { size: 1, tag }
}

fn store(replacement: Replacement, units: usize) -> ContentStore<u32, Val> {
    ContentStore::new(CsConfig { capacity_units: units, replacement, ..CsConfig::default() })
}

/// The keys held, ascending.
fn held(cs: &ContentStore<u32, Val>) -> Vec<u32> {
    let mut k: Vec<u32> = cs.entries.iter().map(|e| e.key).collect();
    k.sort_unstable();
    k
}

impl<K: Hash + Eq + Clone, V: Weigh> ContentStore<K, V> {
    /// Checks every internal invariant; panics on the first broken one.
    fn check(&self) {
        let n = self.entries.len();
        assert!(n <= self.cfg.capacity_units, "len {n} > capacity_units");
        assert!(self.bytes <= self.cfg.capacity_bytes, "bytes > capacity_bytes");
        assert_eq!(self.bytes, self.entries.iter().map(|e| e.size).sum::<u64>());
        assert_eq!(self.index.len(), n);
        for (i, e) in self.entries.iter().enumerate() {
            assert_eq!(self.index.get(&e.key), Some(&i));
            assert_eq!(e.size, e.value.bytes() as u64);
        }
        let s = &self.stats;
        assert_eq!(s.inserts - s.evictions - s.removals, n as u64);
        if self.uses_list() {
            let (mut seen, mut prev, mut i) = (0, NIL, self.head);
            while i != NIL {
                assert_eq!(self.entries[i].prev, prev);
                seen += 1;
                assert!(seen <= n, "cycle in the recency list");
                prev = i;
                i = self.entries[i].next;
            }
            assert_eq!(seen, n);
            assert_eq!(self.tail, prev);
        }
        if let Some(lfu) = self.lfu() {
            let units = self.cfg.capacity_units;
            // The memory bound, by allocated capacity: a constant per unit of capacity, plus
            // the sketch's minimum for small stores.
            let bytes = self.lfu_bookkeeping_bytes().expect("lfu");
            assert!(bytes <= LFU_BYTES_PER_UNIT * units + LFU_MIN_SKETCH_BYTES, "memory bound: {bytes} bytes");
            assert!(self.entries.capacity() <= units && lfu.heap.capacity() <= units, "allocated past the capacity");
            let sk = &lfu.sketch;
            assert!(sk.counters.is_empty() || sk.counters.len() == lfu::DEPTH * sk.width);
            assert_eq!(sk.width, (units * lfu::WIDTH_PER_UNIT).max(lfu::MIN_WIDTH));
            assert_eq!(sk.sample_size, units * LFU_SAMPLE_PER_UNIT);
            assert!(sk.samples < sk.sample_size || sk.sample_size == 0);
            // The heap: one node per entry, positions consistent, heap-ordered, recorded
            // estimates never above the current ones, touches unique.
            assert_eq!(lfu.heap.len(), n);
            let mut seqs = std::collections::HashSet::new();
            for (pos, node) in lfu.heap.iter().enumerate() {
                assert!(node.slot < n);
                assert_eq!(self.entries[node.slot].pos, pos);
                if pos > 0 {
                    assert!(!node.before(&lfu.heap[(pos - 1) / 2]), "heap order at {pos}");
                }
                assert!(node.freq <= sk.estimate(self.entries[node.slot].hash), "stale estimate above the sketch's");
                assert!(seqs.insert(node.seq), "two nodes touched at once");
            }
            // The set of cached hashes: exactly the entries' hashes.
            assert_eq!(lfu.hashes.len, n);
            assert_eq!(lfu.hashes.slots.iter().filter(|&&h| h != 0).count(), n);
            assert!(lfu.hashes.slots.is_empty() || lfu.hashes.slots.len() == (2 * units).max(2));
            for e in &self.entries {
                assert!(lfu.hashes.contains(e.hash));
            }
        }
    }
}

#[test]
fn lru_evicts_least_recently_used() {
    let mut cs = store(Replacement::Lru, 3);
    for k in 1..=3 {
        assert_eq!(cs.offer(k, v(k.into())), Offer::Inserted { evicted: 0 });
    }
    assert!(cs.get(&1).is_some()); // recency, most recent first: 1 3 2
    assert_eq!(cs.offer(4, v(4)), Offer::Inserted { evicted: 1 });
    assert_eq!(held(&cs), [1, 3, 4]); // 2 went
    assert_eq!(cs.offer(5, v(5)), Offer::Inserted { evicted: 1 });
    assert_eq!(held(&cs), [1, 4, 5]); // 3 went
    assert!(cs.get(&1).is_some()); // 1 5 4
    assert_eq!(cs.offer(4, v(40)), Offer::Replaced { evicted: 0 }); // a replacement is a use: 4 1 5
    assert_eq!(cs.offer(6, v(6)), Offer::Inserted { evicted: 1 });
    assert_eq!(held(&cs), [1, 4, 6]); // 5 went
    assert_eq!(cs.offer(7, v(7)), Offer::Inserted { evicted: 1 });
    assert_eq!(held(&cs), [4, 6, 7]); // 1 went
    cs.check();
}

#[test]
fn fifo_evicts_oldest_insertion_and_hits_do_not_reorder() {
    let mut cs = store(Replacement::Fifo, 3);
    for k in 1..=3 {
        cs.offer(k, v(k.into()));
    }
    for _ in 0..5 {
        assert!(cs.get(&1).is_some());
    }
    cs.offer(4, v(4));
    assert_eq!(held(&cs), [2, 3, 4]); // 1 went despite its hits
    cs.offer(2, v(20)); // a replacement is a new insertion: order 3 4 2
    cs.offer(5, v(5));
    assert_eq!(held(&cs), [2, 4, 5]);
    cs.offer(6, v(6));
    assert_eq!(held(&cs), [2, 5, 6]);
    cs.offer(7, v(7));
    assert_eq!(held(&cs), [5, 6, 7]);
    cs.check();
}

#[test]
fn lfu_evicts_least_frequent_and_admits_only_more_frequent_keys() {
    let mut cs = store(Replacement::Lfu, 3);
    // Lookups (then offers, as a router does): a ×3, b ×1, c ×2.
    for (k, n) in [(1, 3), (2, 1), (3, 2)] {
        for _ in 0..n {
            if cs.get(&k).is_none() {
                assert_eq!(cs.offer(k, v(k.into())), Offer::Inserted { evicted: 0 });
            }
        }
    }
    assert_eq!(held(&cs), [1, 2, 3]);
    // d looked up once: not more frequent than b (1) → rejected.
    assert!(cs.get(&4).is_none());
    assert_eq!(cs.offer(4, v(4)), Offer::Rejected(Rejection::Frequency));
    assert_eq!(cs.stats().frequency_rejects, 1);
    // d's second lookup: 2 > 1 → admitted, b (count 1) evicted.
    assert!(cs.get(&4).is_none());
    assert_eq!(cs.offer(4, v(4)), Offer::Inserted { evicted: 1 });
    assert_eq!(held(&cs), [1, 3, 4]);
    // Counts now a 3, c 2, d 2. e ×3 beats the count-2 entries; of those, c was touched
    // longer ago than d, so c goes first.
    for _ in 0..3 {
        assert!(cs.get(&5).is_none());
    }
    assert_eq!(cs.offer(5, v(5)), Offer::Inserted { evicted: 1 });
    assert_eq!(held(&cs), [1, 4, 5]);
    // A hit on d: a, e and d all have count 3, touched in that order, so a ×3 is the
    // victim when f ×4 comes.
    assert!(cs.get(&4).is_some());
    for _ in 0..4 {
        assert!(cs.get(&6).is_none());
    }
    assert_eq!(cs.offer(6, v(6)), Offer::Inserted { evicted: 1 });
    assert_eq!(held(&cs), [4, 5, 6]);
    cs.check();
}

#[test]
fn lfu_forgets_old_lookups_by_halving() {
    // One unit: the sample is W = LFU_SAMPLE_PER_UNIT lookups. Lookup number W halves every
    // count (5 → 2), and so does the count of lookups (W → W/2): the next halvings come at
    // lookups 3W/2 (2 → 1) and 2W (1 → 0).
    let mut cs = store(Replacement::Lfu, 1);
    for _ in 0..5 {
        if cs.get(&0).is_none() {
            cs.offer(0, v(0));
        }
    }
    let w = LFU_SAMPLE_PER_UNIT as u32;
    let estimate = |cs: &ContentStore<u32, Val>, k: u32| {
        let lfu = cs.lfu().expect("lfu");
        lfu.sketch.estimate(key_hash(cs.cfg.seed, &k))
    };
    assert_eq!(estimate(&cs, 0), 5);
    // Keys looked up once each cannot displace key 0 while its estimate is at least theirs…
    for k in 1..=(2 * w - 5) {
        assert!(cs.get(&k).is_none());
        assert_eq!(cs.offer(k, v(k.into())), Offer::Rejected(Rejection::Frequency), "key {k}");
        let expected = match k + 5 {
            n if n < w => 5,
            n if n < 3 * w / 2 => 2,
            n if n < 2 * w => 1,
            _ => 0,
        };
        assert_eq!(estimate(&cs, 0), expected, "after lookup {}", k + 5);
    }
    assert_eq!(held(&cs), [0]);
    cs.check();
    // …and can once the third halving has taken it to 0 (the key that completed that sample
    // was halved to 0 too, and tied).
    let k = 2 * w - 4;
    assert!(cs.get(&k).is_none());
    assert_eq!(cs.offer(k, v(k.into())), Offer::Inserted { evicted: 1 });
    assert_eq!(held(&cs), [k]);
    cs.check();
}

#[test]
fn lfu_survives_hash_collisions() {
    /// Every key hashes the same.
    #[derive(Clone, PartialEq, Eq, Debug)]
    struct Colliding(u32);
    impl Hash for Colliding {
        fn hash<H: Hasher>(&self, _: &mut H) {}
    }
    let mut cs: ContentStore<Colliding, Val> =
        ContentStore::new(CsConfig { capacity_units: 4, replacement: Replacement::Lfu, ..CsConfig::default() });
    assert!(cs.get(&Colliding(1)).is_none());
    assert_eq!(cs.offer(Colliding(1), v(1)), Offer::Inserted { evicted: 0 });
    for k in 2..10 {
        assert!(cs.get(&Colliding(k)).is_none());
        assert_eq!(cs.offer(Colliding(k), v(k.into())), Offer::Rejected(Rejection::Frequency));
    }
    assert_eq!(cs.offer(Colliding(1), v(11)), Offer::Replaced { evicted: 0 });
    assert_eq!(cs.remove(&Colliding(1)), Some(v(11)));
    assert_eq!(cs.offer(Colliding(2), v(2)), Offer::Inserted { evicted: 0 });
    assert_eq!(cs.len(), 1);
    cs.check();
}

#[test]
fn random_evicts_a_member_uniformly() {
    // Keep 4 entries; every new key evicts one. Tally the victims by age (0 = oldest): a
    // uniform choice hits each age about 1/4 of the time, whatever the policy's history.
    let mut cs = store(Replacement::Random, 4);
    let mut ages: VecDeque<u32> = (0..4).collect(); // oldest first
    for k in 0..4 {
        cs.offer(k, v(k.into()));
    }
    let trials = 8000;
    let mut tally = [0u32; 4];
    for k in 4..4 + trials {
        let before = held(&cs);
        assert_eq!(cs.offer(k, v(k.into())), Offer::Inserted { evicted: 1 });
        let after = held(&cs);
        let gone: Vec<u32> = before.iter().copied().filter(|x| !after.contains(x)).collect();
        assert_eq!(gone.len(), 1);
        assert!(after.contains(&k));
        let age = ages.iter().position(|&x| x == gone[0]).expect("the victim was a member");
        tally[age] += 1;
        ages.remove(age);
        ages.push_back(k);
    }
    let expected = f64::from(trials) / 4.0;
    // χ² with 3 degrees of freedom; 16.3 is its 0.1 % tail. The seed is fixed, so this is
    // deterministic; the bound only says the fixed outcome is unremarkable.
    let chi2: f64 = tally.iter().map(|&t| (f64::from(t) - expected).powi(2) / expected).sum();
    assert!(chi2 < 16.3, "victims by age {tally:?}, χ² = {chi2}");
    cs.check();
}

#[test]
fn random_is_reproducible_from_the_seed() {
    let run = |seed| {
        let mut cs: ContentStore<u32, Val> = ContentStore::new(CsConfig {
            capacity_units: 8,
            replacement: Replacement::Random,
            admission: Admission::Prob(0.5),
            seed,
            ..CsConfig::default()
        });
        (0..200).map(|k| cs.offer(k, v(k.into()))).collect::<Vec<_>>()
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
}

#[test]
fn byte_capacity_evicts_until_the_value_fits() {
    let mut cs: ContentStore<u32, Val> =
        ContentStore::new(CsConfig { capacity_units: 10, capacity_bytes: 100, ..CsConfig::default() });
    let big = |tag, size| Val { size, tag };
    assert_eq!(cs.offer(1, big(1, 40)), Offer::Inserted { evicted: 0 });
    assert_eq!(cs.offer(2, big(2, 40)), Offer::Inserted { evicted: 0 });
    assert_eq!(cs.offer(3, big(3, 40)), Offer::Inserted { evicted: 1 }); // 120 > 100: 1 went
    assert_eq!((held(&cs), cs.bytes()), (vec![2, 3], 80));
    assert_eq!(cs.offer(4, big(4, 20)), Offer::Inserted { evicted: 0 }); // exactly 100
    assert_eq!(cs.bytes(), 100);
    assert_eq!(cs.offer(5, big(5, 100)), Offer::Inserted { evicted: 3 });
    assert_eq!((held(&cs), cs.bytes()), (vec![5], 100));
    // Larger than the whole store: refused, nothing evicted.
    assert_eq!(cs.offer(6, big(6, 101)), Offer::Rejected(Rejection::TooBig));
    assert_eq!((held(&cs), cs.bytes()), (vec![5], 100));
    // Zero-byte values still take a unit.
    for k in 10..20 {
        cs.offer(k, big(k.into(), 0));
    }
    assert_eq!(cs.len(), 10);
    assert_eq!(cs.stats().too_big_rejects, 1);
    cs.check();
}

#[test]
fn replacing_a_key_updates_value_and_bytes() {
    let mut cs: ContentStore<u32, Val> =
        ContentStore::new(CsConfig { capacity_units: 3, capacity_bytes: 100, ..CsConfig::default() });
    cs.offer(1, Val { size: 30, tag: 1 });
    cs.offer(2, Val { size: 30, tag: 2 });
    cs.offer(3, Val { size: 30, tag: 3 });
    // Same key, new value: no new entry.
    assert_eq!(cs.offer(2, Val { size: 10, tag: 22 }), Offer::Replaced { evicted: 0 });
    assert_eq!(cs.peek(&2), Some(&Val { size: 10, tag: 22 }));
    assert_eq!((cs.len(), cs.bytes()), (3, 70));
    // Growing it past the byte capacity evicts others (LRU: 1 then 3), never itself.
    assert_eq!(cs.offer(2, Val { size: 90, tag: 23 }), Offer::Replaced { evicted: 2 });
    assert_eq!((held(&cs), cs.bytes()), (vec![2], 90));
    // Too large: refused, the old value stays.
    assert_eq!(cs.offer(2, Val { size: 101, tag: 24 }), Offer::Rejected(Rejection::TooBig));
    assert_eq!(cs.peek(&2).map(|v| v.tag), Some(23));
    let s = cs.stats();
    assert_eq!((s.inserts, s.replaced, s.evictions, s.too_big_rejects), (3, 2, 2, 1));
    cs.check();
}

#[test]
fn replacement_skips_admission() {
    let mut cs: ContentStore<u32, Val> =
        ContentStore::new(CsConfig { capacity_units: 2, admission: Admission::Prob(0.0), ..CsConfig::default() });
    assert_eq!(cs.offer(1, v(1)), Offer::Rejected(Rejection::Admission));
    cs.cfg.admission = Admission::Always;
    cs.offer(1, v(1));
    cs.cfg.admission = Admission::Never;
    assert_eq!(cs.offer(1, v(2)), Offer::Replaced { evicted: 0 });
    assert_eq!(cs.peek(&1), Some(&v(2)));
}

#[test]
fn capacity_zero_caches_nothing() {
    for r in [Replacement::Lru, Replacement::Lfu, Replacement::Fifo, Replacement::Random] {
        let mut cs = store(r, 0);
        for k in 0..10 {
            assert!(cs.get(&k).is_none());
            assert_eq!(cs.offer(k, Val { size: 0, tag: 0 }), Offer::Rejected(Rejection::TooBig));
        }
        assert!(cs.is_empty());
        assert_eq!(cs.stats().too_big_rejects, 10);
        assert_eq!(cs.stats().misses, 10);
        cs.check();
    }
}

#[test]
fn get_counts_hits_and_misses_peek_and_contains_do_not() {
    let mut cs = store(Replacement::Lru, 4);
    assert_eq!(cs.stats().hit_ratio(), None);
    assert!(cs.get(&1).is_none());
    cs.offer(1, v(1));
    assert_eq!(cs.get(&1), Some(&v(1)));
    assert_eq!(cs.get(&1), Some(&v(1)));
    assert!(cs.get(&2).is_none());
    assert!(cs.contains(&1) && !cs.contains(&2));
    assert_eq!(cs.peek(&1), Some(&v(1)));
    assert_eq!(cs.peek(&2), None);
    let s = *cs.stats();
    assert_eq!((s.hits, s.misses, s.lookups()), (2, 2, 4));
    assert_eq!(s.hit_ratio(), Some(0.5));
    assert_eq!(cs.remove(&1), Some(v(1)));
    assert_eq!(cs.remove(&1), None);
    assert!(cs.get(&1).is_none());
    let s = cs.stats();
    assert_eq!((s.hits, s.misses, s.removals, s.offers()), (2, 3, 1, 1));
}

#[test]
fn peek_does_not_touch_recency() {
    let mut cs = store(Replacement::Lru, 2);
    cs.offer(1, v(1));
    cs.offer(2, v(2));
    assert!(cs.peek(&1).is_some() && cs.contains(&1));
    cs.offer(3, v(3));
    assert_eq!(held(&cs), [2, 3]); // 1 was still the least recently used
}

#[test]
fn admission_policies() {
    let offers = |admission| {
        let mut cs: ContentStore<u32, Val> =
            ContentStore::new(CsConfig { capacity_units: 100_000, admission, seed: 3, ..CsConfig::default() });
        for k in 0..20_000 {
            cs.offer(k, v(k.into()));
        }
        (cs.len(), cs.stats().admission_rejects)
    };
    assert_eq!(offers(Admission::Always), (20_000, 0));
    assert_eq!(offers(Admission::Never), (0, 20_000));
    assert_eq!(offers(Admission::Prob(0.0)), (0, 20_000));
    assert_eq!(offers(Admission::Prob(1.0)), (20_000, 0));
    // Binomial(20 000, 0.125): mean 2 500, standard deviation 47.
    let (n, rejects) = offers(Admission::Prob(0.125));
    assert!((2_300..=2_700).contains(&n), "{n} admitted");
    assert_eq!(n as u64 + rejects, 20_000);
    // full:P admits everything while there is room.
    assert_eq!(offers(Admission::WhenFull(0.0)), (20_000, 0));
}

/// Hits of the second of two passes, in order, over `keys` keys through an `lru` store of
/// `units` units, each miss offering its key (as a router does with the Data it forwards).
fn second_pass_hits(admission: Admission, units: usize, keys: u32) -> usize {
    let mut cs: ContentStore<u32, Val> =
        ContentStore::new(CsConfig { capacity_units: units, admission, seed: 5, ..CsConfig::default() });
    let mut hits = 0;
    for pass in 0..2 {
        for k in 0..keys {
            match cs.get(&k) {
                Some(_) => hits += usize::from(pass == 1),
                None => drop(cs.offer(k, v(k.into()))),
            }
        }
    }
    hits
}

#[test]
fn full_p_admission_keeps_an_object_larger_than_the_store() {
    // An object of 3 000 units through a 1 000-unit store, fetched twice in order: LRU with
    // `always` evicts each unit just before it is asked for again.
    assert_eq!(second_pass_hits(Admission::Always, 1_000, 3_000), 0);
    // `full:0.125`: the first pass stores units 0..1000, and the 2 000 misses after it evict
    // ≈ 250 of them (the oldest); the second pass's first misses evict a few more before its
    // hits begin: about 700 hits, most of what the store holds.
    let hits = second_pass_hits(Admission::WhenFull(0.125), 1_000, 3_000);
    assert!((600..=1_000).contains(&hits), "{hits} hits");
    // An object that fits is stored whole on its first pass, as with `always`.
    assert_eq!(second_pass_hits(Admission::WhenFull(0.125), 1_000, 900), 900);
    assert_eq!(second_pass_hits(Admission::Always, 1_000, 900), 900);
}

#[test]
fn policies_parse_and_print() {
    for (s, r) in [
        ("lru", Replacement::Lru),
        ("lfu", Replacement::Lfu),
        ("fifo", Replacement::Fifo),
        ("random", Replacement::Random),
    ] {
        assert_eq!(s.parse::<Replacement>(), Ok(r));
        assert_eq!(r.to_string(), s);
    }
    assert_eq!("LRU".parse::<Replacement>(), Ok(Replacement::Lru));
    assert!("lru2".parse::<Replacement>().is_err());
    assert!("".parse::<Replacement>().is_err());

    for (s, a) in [
        ("always", Admission::Always),
        ("none", Admission::Never),
        ("prob:0.125", Admission::Prob(0.125)),
        ("full:0.125", Admission::WhenFull(0.125)),
    ] {
        assert_eq!(s.parse::<Admission>(), Ok(a));
        assert_eq!(a.to_string(), s);
    }
    assert_eq!("prob:0".parse::<Admission>(), Ok(Admission::Prob(0.0)));
    assert_eq!("prob:1".parse::<Admission>(), Ok(Admission::Prob(1.0)));
    assert_eq!("FULL:1".parse::<Admission>(), Ok(Admission::WhenFull(1.0)));
    for bad in
        ["prob:1.5", "prob:-0.1", "prob:NaN", "prob:", "prob", "prob:x", "never", "p:0.5", "always ", "full:2", "full"]
    {
        assert!(bad.parse::<Admission>().is_err(), "{bad:?} parsed");
    }
    assert_eq!(
        "prob:2".parse::<Admission>().unwrap_err().to_string(),
        "bad admission policy \"prob:2\" (expected always, none, prob:P or full:P with 0 <= P <= 1)"
    );
}

#[test]
fn default_config_is_nfds() {
    let c = CsConfig::default();
    assert_eq!(c.capacity_units, 65_536);
    assert_eq!(c.capacity_bytes, u64::MAX);
    assert_eq!((c.replacement, c.admission, c.seed), (Replacement::Lru, Admission::Always, 0));
}

#[derive(Clone, Debug)]
enum Op {
    Get(u32),
    Offer(u32, usize),
    Remove(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u32..16).prop_map(Op::Get),
        3 => (0u32..16, 0usize..40).prop_map(|(k, s)| Op::Offer(k, s)),
        1 => (0u32..16).prop_map(Op::Remove),
    ]
}

fn config() -> impl Strategy<Value = CsConfig> {
    let replacement =
        prop_oneof![Just(Replacement::Lru), Just(Replacement::Lfu), Just(Replacement::Fifo), Just(Replacement::Random)];
    let admission = prop_oneof![
        Just(Admission::Always),
        Just(Admission::Prob(0.5)),
        Just(Admission::WhenFull(0.5)),
        Just(Admission::Never)
    ];
    let bytes = prop_oneof![Just(u64::MAX), 0u64..120];
    (0usize..6, bytes, replacement, admission, any::<u64>()).prop_map(
        |(capacity_units, capacity_bytes, replacement, admission, seed)| CsConfig {
            capacity_units,
            capacity_bytes,
            replacement,
            admission,
            seed,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Any sequence of operations keeps both capacities, the counters add up, every
    /// internal structure stays consistent, a lookup finds exactly what the last
    /// successful offer stored, and a rejected offer changes nothing.
    #[test]
    fn operations_keep_the_invariants(cfg in config(), ops in proptest::collection::vec(op(), 0..300)) {
        let mut cs: ContentStore<u32, Val> = ContentStore::new(cfg);
        let mut model: HashMap<u32, Val> = HashMap::new(); // what is held, as far as we know
        let (mut gets, mut offers) = (0u64, 0u64);
        for (tag, op) in ops.into_iter().enumerate() {
            match op {
                Op::Get(k) => {
                    gets += 1;
                    let got = cs.get(&k).cloned();
                    prop_assert_eq!(got.as_ref(), model.get(&k).filter(|_| cs.contains(&k)));
                    if got.is_none() {
                        model.remove(&k);
                    }
                }
                Op::Offer(k, size) => {
                    offers += 1;
                    let value = Val { size, tag: tag as u64 };
                    let (len, bytes) = (cs.len(), cs.bytes());
                    match cs.offer(k, value.clone()) {
                        Offer::Inserted { evicted } => {
                            prop_assert_eq!(cs.len(), len + 1 - evicted);
                            model.insert(k, value);
                        }
                        Offer::Replaced { evicted } => {
                            prop_assert_eq!(cs.len(), len - evicted);
                            model.insert(k, value);
                        }
                        Offer::Rejected(_) => prop_assert_eq!((cs.len(), cs.bytes()), (len, bytes)),
                    }
                    prop_assert_eq!(cs.peek(&k).is_some(), model.contains_key(&k) && cs.contains(&k));
                }
                Op::Remove(k) => {
                    let held = cs.contains(&k);
                    prop_assert_eq!(cs.remove(&k).is_some(), held);
                    prop_assert!(!cs.contains(&k));
                    model.remove(&k);
                }
            }
            // Whatever the store holds is what was last stored under that key.
            model.retain(|k, _| cs.contains(k));
            for (k, val) in &model {
                prop_assert_eq!(cs.peek(k), Some(val));
            }
            prop_assert_eq!(model.len(), cs.len());
            cs.check();
            let s = cs.stats();
            prop_assert_eq!(s.hits + s.misses, gets);
            prop_assert_eq!(s.offers(), offers);
        }
    }
}

#[test]
fn shared_byte_slices_weigh_their_length() {
    // What a router is likely to hold: Data payloads shared with the packets that carry them.
    let mut cs: ContentStore<(crate::Eid, u64), Arc<[u8]>> =
        ContentStore::new(CsConfig { capacity_bytes: 2_000, ..CsConfig::default() });
    let eid = crate::Eid::of(b"object");
    for offset in [0u64, 1_000, 2_000] {
        cs.offer((eid, offset), Arc::from(vec![0u8; 1_000]));
    }
    assert_eq!((cs.len(), cs.bytes()), (2, 2_000));
    assert!(!cs.contains(&(eid, 0)) && cs.contains(&(eid, 2_000)));
    assert_eq!(vec![1u8; 3].bytes() + Box::<[u8]>::from([1u8; 2]).bytes(), 5);
}

#[test]
fn lfu_invariants_survive_halvings() {
    // Proptest's short runs rarely complete a sample: here, many samples with small stores,
    // byte limits that evict several entries at once, removals and replacements.
    let mut rng = Pcg64::seed_from_u64(11);
    for (units, capacity_bytes) in [(1, u64::MAX), (3, u64::MAX), (5, 60), (8, 30)] {
        let mut cs: ContentStore<u32, Val> = ContentStore::new(CsConfig {
            capacity_units: units,
            capacity_bytes,
            replacement: Replacement::Lfu,
            seed: 5,
            ..CsConfig::default()
        });
        let lookups = 6 * units * LFU_SAMPLE_PER_UNIT;
        for step in 0..lookups {
            let r = rng.next_u64();
            // Skewed keys: the low ones are looked up much more often.
            let key = ((r % 40) * (r % 40) / 40) as u32;
            if cs.get(&key).is_none() {
                cs.offer(key, Val { size: (r >> 8) as usize % 25, tag: step as u64 });
            }
            match r >> 60 {
                0 => drop(cs.remove(&key)),
                1 => drop(cs.offer(key, Val { size: (r >> 16) as usize % 25, tag: step as u64 })),
                _ => {}
            }
            cs.check();
        }
        assert!(cs.stats().evictions > 0 && cs.stats().frequency_rejects > 0);
    }
}

#[test]
fn lfu_bookkeeping_is_a_constant_per_unit() {
    // The stated bound, pinned: if the structures grow, this fails (and the docs are wrong).
    #[cfg(target_pointer_width = "64")]
    assert_eq!((LFU_BYTES_PER_UNIT, LFU_MIN_SKETCH_BYTES), (88, 4096));
    // NFD's default size, under a stream of distinct keys (which made Window-LFU's map of
    // counts grow with every key in its window): the bookkeeping stays within the bound.
    let units = CsConfig::DEFAULT_CAPACITY_UNITS;
    let mut cs: ContentStore<u64, Vec<u8>> =
        ContentStore::new(CsConfig { capacity_units: units, replacement: Replacement::Lfu, ..CsConfig::default() });
    let mut rng = Pcg64::seed_from_u64(1);
    let mut after_fill = 0;
    for i in 0..400_000 {
        let key = rng.next_u64();
        if cs.get(&key).is_none() {
            cs.offer(key, Vec::new());
        }
        if i == units {
            after_fill = cs.lfu_bookkeeping_bytes().expect("lfu");
        }
    }
    assert_eq!(cs.len(), units);
    let bytes = cs.lfu_bookkeeping_bytes().expect("lfu");
    assert_eq!(bytes, after_fill, "grew with the keys seen");
    assert!(bytes <= LFU_BYTES_PER_UNIT * units, "{bytes} bytes for {units} units");
    assert!(bytes <= 100 * units);
    // Small stores: the sketch's minimum on top.
    for units in [1, 7, 100, 1_000] {
        let mut cs: ContentStore<u64, Vec<u8>> =
            ContentStore::new(CsConfig { capacity_units: units, replacement: Replacement::Lfu, ..CsConfig::default() });
        for _ in 0..3 * units * LFU_SAMPLE_PER_UNIT {
            let key = rng.next_u64() % (20 * units as u64);
            if cs.get(&key).is_none() {
                cs.offer(key, Vec::new());
            }
        }
        let bytes = cs.lfu_bookkeeping_bytes().expect("lfu");
        assert!(bytes <= LFU_BYTES_PER_UNIT * units + LFU_MIN_SKETCH_BYTES, "{bytes} bytes for {units} units");
    }
    assert_eq!(store(Replacement::Lru, 10).lfu_bookkeeping_bytes(), None);
}

/// Handles on a shared store are one store: what one offers the other finds, and they share
/// counters and capacity.
#[test]
fn shared_handles_are_one_store() {
    let a: SharedStore<u32, Val> = SharedStore::new(CsConfig { capacity_units: 2, ..CsConfig::default() });
    let b = a.clone();
    assert!(a.same(&b) && !a.same(&SharedStore::new(CsConfig::default())));
    a.lock().offer(1, v(1));
    b.lock().offer(2, v(2));
    assert_eq!(a.lock().get(&2), Some(&v(2)));
    b.lock().offer(3, v(3)); // evicts 1, the least recently used
    assert_eq!(held(&a.lock()), vec![2, 3]);
    // (One guard at a time: the same lock.)
    let stats = *a.lock().stats();
    assert_eq!(stats, *b.lock().stats());
    assert_eq!((stats.hits, stats.evictions), (1, 1));
    assert!(format!("{a:?}").contains("ContentStore"));
}

/// What an entry costs besides its value covers at least its key, its index slot and list
/// links (a router's cached unit adds it to its weight).
#[test]
fn entry_overhead_counts_the_entry_and_its_index_slot() {
    let o = entry_overhead::<[u8; 40], Val>();
    assert!(o >= 2 * 40 + size_of::<Val>() + 2 * size_of::<usize>(), "{o}");
}

#[test]
fn specs_name_the_policy_then_keys() {
    let mut c = CsConfig::default();
    c.apply_spec("lfu:units=1000, bytes=64MiB,insert=prob:0.125").unwrap();
    assert_eq!(
        c,
        CsConfig {
            replacement: Replacement::Lfu,
            capacity_units: 1000,
            capacity_bytes: 64 << 20,
            admission: Admission::Prob(0.125),
            ..CsConfig::default()
        }
    );
    assert_eq!(c.to_spec_from(&CsConfig::default()), "lfu:units=1000,bytes=64MiB,insert=prob:0.125");
    let mut back = CsConfig::default();
    back.apply_spec(&c.to_spec_from(&CsConfig::default())).unwrap();
    assert_eq!(back, c);
    // Keys alone keep the policy; a policy alone keeps the keys.
    c.apply_spec("units=5").unwrap();
    assert_eq!((c.replacement, c.capacity_units), (Replacement::Lfu, 5));
    c.apply_spec("FIFO").unwrap();
    assert_eq!((c.replacement, c.capacity_units), (Replacement::Fifo, 5));
    assert_eq!(CsConfig::default().to_spec_from(&CsConfig::default()), "lru");
}

#[test]
fn bad_cs_specs_say_what_is_accepted() {
    let e = |s: &str| CsConfig::default().apply_spec(s).unwrap_err().to_string();
    assert_eq!(e("lifo"), "content store: policy=lifo: the value must be one of lru, lfu, fifo, random, clock");
    assert_eq!(
        e("lru:insert=maybe"),
        "content store: insert=maybe: the value must be always, none or prob:P with 0 <= P <= 1"
    );
    assert_eq!(e("lru:size=3"), "content store has no key 'size' (its keys: units, bytes, insert)");
    let h = CsConfig::help(&CsConfig::default());
    for name in ["lru", "lfu", "fifo", "random", "clock", "units=65536", "insert=always"] {
        assert!(h.contains(name), "{name}:\n{h}");
    }
}
