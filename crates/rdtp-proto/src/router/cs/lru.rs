//! `lru`, least recently used: a hit (or a replacement) moves the entry to the front of the
//! store's recency list; the back is evicted. Under the independent reference model its hit
//! ratio follows Che's approximation (Che, Tung & Wang, IEEE JSAC 2002). NFD's `lru` policy
//! (`table/cs-policy-lru.cpp`) does the same with its own queue.

use super::{CsConfig, Policy, Table};

pub(super) const ABOUT: &str =
    "least recently used: a hit moves the entry to the front, the back is evicted (the default)";

pub(super) fn build<K, V>(_: &CsConfig) -> Box<dyn Policy<K, V>> {
    Box::new(Lru)
}

struct Lru;

impl<K, V> Policy<K, V> for Lru {
    fn uses_list(&self) -> bool {
        true
    }
    fn after_lookup(&mut self, t: &mut Table<'_, K, V>, _: u64, slot: Option<usize>) {
        if let Some(i) = slot {
            t.move_to_front(i);
        }
    }
    fn victim(&mut self, t: &mut Table<'_, K, V>) -> usize {
        *t.tail
    }
}
