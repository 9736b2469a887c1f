//! A bounded map whose entries expire: the shape of every table a router keeps besides its
//! content store (pending requests, upstream requests, forwarded resolves).
//!
//! Lookups are O(1) (hash map); insertion, removal and changing an entry's expiry are
//! O(log n) (an ordered index of expiry times). Memory is bounded by the capacity given at
//! creation: a full map refuses new keys.

use std::collections::BTreeMap;
use std::collections::hash_map::Entry;
use std::hash::Hash;

use super::hashing::{Map, TableHasher};

use crate::time::Time;

#[derive(Debug)]
struct Slot<V> {
    value: V,
    expires: (Time, u64),
}

/// A map of at most `capacity` entries, each with an expiry time.
#[derive(Debug)]
pub(crate) struct ExpiringMap<K, V> {
    map: Map<K, Slot<V>>,
    order: BTreeMap<(Time, u64), K>,
    seq: u64,
    capacity: usize,
}

impl<K: Hash + Eq + Clone, V> ExpiringMap<K, V> {
    /// An empty map of at most `capacity` entries, hashing keys with `h`.
    pub(crate) fn new(capacity: usize, h: &TableHasher) -> Self {
        ExpiringMap { map: Map::with_hasher(h.clone()), order: BTreeMap::new(), seq: 0, capacity }
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
                self.order.insert(expires, e.key().clone());
                Ok(&mut e.insert(Slot { value, expires }).value)
            }
        }
    }

    /// Move the expiry of `k` to `at`.
    pub(crate) fn set_expiry(&mut self, k: &K, at: Time) {
        let stamp = self.stamp(at);
        if let Some(slot) = self.map.get_mut(k) {
            self.order.remove(&slot.expires);
            slot.expires = stamp;
            self.order.insert(stamp, k.clone());
        }
    }

    pub(crate) fn remove(&mut self, k: &K) -> Option<V> {
        let slot = self.map.remove(k)?;
        self.order.remove(&slot.expires);
        Some(slot.value)
    }

    /// Remove the entry at `k` if `pred` says so (one look-up).
    pub(crate) fn remove_if(&mut self, k: &K, pred: impl FnOnce(&V) -> bool) -> Option<V> {
        match self.map.entry(k.clone()) {
            Entry::Occupied(e) if pred(&e.get().value) => {
                let slot = e.remove();
                self.order.remove(&slot.expires);
                Some(slot.value)
            }
            _ => None,
        }
    }

    /// The earliest expiry, if any entry exists.
    pub(crate) fn next_expiry(&self) -> Option<Time> {
        self.order.first_key_value().map(|((t, _), _)| *t)
    }

    /// Keys of the entries `pred` picks, in no particular order (a scan of the whole map).
    pub(crate) fn keys_where(&self, mut pred: impl FnMut(&K, &V) -> bool) -> Vec<K> {
        self.map.iter().filter(|(k, s)| pred(k, &s.value)).map(|(k, _)| k.clone()).collect()
    }

    /// Remove and return one entry that expired at or before `now`.
    pub(crate) fn pop_expired(&mut self, now: Time) -> Option<(K, V)> {
        let (&(t, _), _) = self.order.first_key_value()?;
        if t > now {
            return None;
        }
        let (_, k) = self.order.pop_first()?;
        let slot = self.map.remove(&k)?;
        Some((k, slot.value))
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
