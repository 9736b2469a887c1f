//! `clock`, second chance (Corbató, "A Paging Experiment with the Multics System", 1968):
//! FIFO order, but a hit marks the entry referenced, and a referenced entry at the back of
//! the list gets a second chance (its mark cleared, it goes to the front) instead of being
//! evicted. It approximates LRU without reordering anything on a hit: a hit only sets a
//! word, which matters for a store shared by several router cores under one lock.
//!
//! The reference mark is the entry's policy word (`Entry::pos`: 1 = referenced). Choosing a
//! victim passes each referenced entry at most once (it comes back unmarked), so it is
//! O(1) amortized: every mark cleared was set by one hit.
//!
//! This policy is the demonstration that a policy is one file plus one registry row.

use super::{CsConfig, Policy, Table};

pub(super) const ABOUT: &str = "second chance (CLOCK): FIFO, but a unit hit since it reached the back goes round again";

pub(super) fn build<K, V>(_: &CsConfig) -> Box<dyn Policy<K, V>> {
    Box::new(Clock)
}

/// The mark of an entry hit since it last came to the front.
const REFERENCED: usize = 1;

struct Clock;

impl<K, V> Policy<K, V> for Clock {
    fn uses_list(&self) -> bool {
        true
    }
    fn after_lookup(&mut self, t: &mut Table<'_, K, V>, _: u64, slot: Option<usize>) {
        if let Some(i) = slot {
            t.entries[i].pos = REFERENCED;
        }
    }
    fn after_insert(&mut self, t: &mut Table<'_, K, V>, slot: usize) {
        t.entries[slot].pos = 0;
    }
    fn victim(&mut self, t: &mut Table<'_, K, V>) -> usize {
        loop {
            let back = *t.tail;
            if t.entries[back].pos != REFERENCED {
                return back;
            }
            t.entries[back].pos = 0;
            t.move_to_front(back);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ContentStore, CsConfig, Offer};

    fn store(units: usize) -> ContentStore<u32, Vec<u8>> {
        ContentStore::new(CsConfig {
            capacity_units: units,
            replacement: "clock".parse().unwrap(),
            ..CsConfig::default()
        })
    }

    fn held(cs: &ContentStore<u32, Vec<u8>>) -> Vec<u32> {
        let mut k: Vec<u32> = (0..16).filter(|k| cs.contains(k)).collect();
        k.sort_unstable();
        k
    }

    #[test]
    fn a_hit_unit_gets_a_second_chance() {
        let mut cs = store(3);
        for k in 1..=3 {
            cs.offer(k, vec![0]);
        }
        assert!(cs.get(&1).is_some(), "1 is referenced");
        // FIFO would evict 1; clock passes it (unmarked, to the front) and evicts 2.
        assert_eq!(cs.offer(4, vec![0]), Offer::Inserted { evicted: 1 });
        assert_eq!(held(&cs), vec![1, 3, 4]);
        // 1's mark was used up: now the order is 3, 1, 4 (oldest first).
        cs.offer(5, vec![0]);
        assert_eq!(held(&cs), vec![1, 4, 5]);
        cs.offer(6, vec![0]);
        cs.offer(7, vec![0]);
        assert_eq!(held(&cs), vec![5, 6, 7]);
    }

    #[test]
    fn all_referenced_is_fifo_after_one_pass() {
        let mut cs = store(2);
        cs.offer(1, vec![0]);
        cs.offer(2, vec![0]);
        cs.get(&1);
        cs.get(&2);
        cs.offer(3, vec![0]);
        assert_eq!(held(&cs), vec![2, 3]);
        assert_eq!(cs.config().replacement.to_string(), "clock");
    }
}
