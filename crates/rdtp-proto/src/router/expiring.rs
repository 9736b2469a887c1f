//! A bounded map whose entries expire: the shape of every table a router keeps besides its
//! content store (pending requests, upstream requests, forwarded resolves).
//!
//! Lookups are O(1) (hash map); insertion, removal and changing an entry's expiry are
//! O(log n) amortized (a binary heap of expiry stamps). Memory is bounded by the capacity
//! given at creation: a full map refuses new keys.
//!
//! The heap keeps a stamp `(time, sequence)` per insertion or change of expiry; an entry
//! removed or given a new expiry leaves its old stamp behind, which is dropped when it
//! reaches the top (the top is always a live entry's current stamp) or when stale stamps
//! outnumber the live entries (then all are swept at once). Stamps are unique and ordered as
//! an ordered index of them would be, so entries expire in the same order; unlike an
//! ordered tree, the heap's storage is reused, so a table whose size is steady allocates
//! nothing (a router's pending table inserts and removes an entry per unit forwarded).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::collections::hash_map::Entry;
use std::hash::Hash;

use super::hashing::{Map, TableHasher};

use crate::time::Time;

#[derive(Debug)]
struct Slot<V> {
    value: V,
    expires: (Time, u64),
}

/// A key's expiry stamp in the heap, ordered by the stamp alone (earliest on top).
#[derive(Debug)]
struct Stamp<K> {
    at: Reverse<(Time, u64)>,
    key: K,
}

impl<K> PartialEq for Stamp<K> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at
    }
}
impl<K> Eq for Stamp<K> {}
impl<K> PartialOrd for Stamp<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<K> Ord for Stamp<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.at.cmp(&other.at)
    }
}

/// A map of at most `capacity` entries, each with an expiry time.
#[derive(Debug)]
pub(crate) struct ExpiringMap<K, V> {
    map: Map<K, Slot<V>>,
    order: BinaryHeap<Stamp<K>>,
    seq: u64,
    capacity: usize,
}

impl<K: Hash + Eq + Clone, V> ExpiringMap<K, V> {
    /// An empty map of at most `capacity` entries, hashing keys with `h`.
    pub(crate) fn new(capacity: usize, h: &TableHasher) -> Self {
        ExpiringMap { map: Map::with_hasher(h.clone()), order: BinaryHeap::new(), seq: 0, capacity }
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    pub(crate) fn is_full(&self) -> bool {
        self.map.len() >= self.capacity
    }

    pub(crate) fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k).map(|s| &s.value)
    }

    pub(crate) fn get_mut(&mut self, k: &K) -> Option<&mut V> {
        self.map.get_mut(k).map(|s| &mut s.value)
    }

    fn stamp(&mut self, at: Time) -> (Time, u64) {
        self.seq += 1;
        (at, self.seq)
    }

    /// The stamp `gone` is no longer an entry's: keep the top a live entry's stamp (no look-up
    /// unless `gone` was on top), and sweep the stale stamps once they outnumber the live
    /// entries.
    fn settle(&mut self, gone: (Time, u64)) {
        if self.order.len() > 2 * self.map.len() + 64 {
            let map = &self.map;
            self.order.retain(|s| map.get(&s.key).is_some_and(|slot| slot.expires == s.at.0));
        } else if self.order.peek().is_some_and(|s| s.at.0 == gone) {
            self.order.pop();
            self.settle_top();
        }
    }

    /// Drop stale stamps from the top until it is a live entry's.
    fn settle_top(&mut self) {
        let map = &self.map;
        while self.order.peek().is_some_and(|s| map.get(&s.key).is_none_or(|slot| slot.expires != s.at.0)) {
            self.order.pop();
        }
    }

    /// Insert a new key expiring at `at`; gives the value back if the map is full or the key
    /// is present. One hash of the key.
    pub(crate) fn insert(&mut self, k: K, value: V, at: Time) -> Result<&mut V, V> {
        if self.is_full() {
            return Err(value);
        }
        match self.map.entry(k) {
            Entry::Occupied(_) => Err(value),
            Entry::Vacant(e) => {
                self.seq += 1;
                let expires = (at, self.seq);
                self.order.push(Stamp { at: Reverse(expires), key: e.key().clone() });
                Ok(&mut e.insert(Slot { value, expires }).value)
            }
        }
    }

    /// Move the expiry of `k` to `at`.
    pub(crate) fn set_expiry(&mut self, k: &K, at: Time) {
        let stamp = self.stamp(at);
        if let Some(slot) = self.map.get_mut(k) {
            let gone = std::mem::replace(&mut slot.expires, stamp);
            self.order.push(Stamp { at: Reverse(stamp), key: k.clone() });
            self.settle(gone);
        }
    }

    pub(crate) fn remove(&mut self, k: &K) -> Option<V> {
        let slot = self.map.remove(k)?;
        self.settle(slot.expires);
        Some(slot.value)
    }

    /// Remove the entry at `k` if `pred` says so (one look-up).
    pub(crate) fn remove_if(&mut self, k: &K, pred: impl FnOnce(&V) -> bool) -> Option<V> {
        match self.map.entry(k.clone()) {
            Entry::Occupied(e) if pred(&e.get().value) => {
                let slot = e.remove();
                self.settle(slot.expires);
                Some(slot.value)
            }
            _ => None,
        }
    }

    /// The earliest expiry, if any entry exists.
    pub(crate) fn next_expiry(&self) -> Option<Time> {
        self.order.peek().map(|s| s.at.0.0)
    }

    /// Keys of the entries `pred` picks, in no particular order (a scan of the whole map).
    pub(crate) fn keys_where(&self, mut pred: impl FnMut(&K, &V) -> bool) -> Vec<K> {
        self.map.iter().filter(|(k, s)| pred(k, &s.value)).map(|(k, _)| k.clone()).collect()
    }

    /// Remove and return one entry that expired at or before `now`.
    pub(crate) fn pop_expired(&mut self, now: Time) -> Option<(K, V)> {
        if self.order.peek()?.at.0.0 > now {
            return None;
        }
        let Stamp { key, .. } = self.order.pop()?;
        let slot = self.map.remove(&key)?;
        self.settle_top();
        Some((key, slot.value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_and_expires_in_order() {
        let mut m = ExpiringMap::new(2, &TableHasher::default());
        assert!(m.insert("a", 1, Time::from_millis(30)).is_ok());
        assert!(m.insert("b", 2, Time::from_millis(10)).is_ok());
        assert_eq!(m.insert("c", 3, Time::from_millis(5)).unwrap_err(), 3, "full");
        assert_eq!(m.insert("a", 4, Time::from_millis(5)).unwrap_err(), 4, "present");
        assert_eq!(m.next_expiry(), Some(Time::from_millis(10)));
        m.set_expiry(&"b", Time::from_millis(50));
        assert_eq!(m.next_expiry(), Some(Time::from_millis(30)));
        assert_eq!(m.pop_expired(Time::from_millis(29)), None);
        assert_eq!(m.pop_expired(Time::from_millis(30)), Some(("a", 1)));
        assert_eq!(m.remove_if(&"b", |&v| v == 3), None);
        assert_eq!(m.remove_if(&"b", |&v| v == 2), Some(2));
        assert_eq!(m.remove_if(&"z", |_| true), None);
        assert_eq!((m.len(), m.next_expiry()), (0, None));
    }
}
