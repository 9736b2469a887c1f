//! `random`: evicts an entry drawn uniformly at random from the store's seeded PCG (the same
//! stream as `prob:P` admission draws from, so a run is reproducible from its seed). Under
//! the independent reference model its hit ratio equals FIFO's (Gelenbe 1973).

use rand_core::Rng;

use super::{CsConfig, Policy, Table};

pub(super) const ABOUT: &str = "an entry drawn uniformly at random (seeded) is evicted";

pub(super) fn build<K, V>(_: &CsConfig) -> Box<dyn Policy<K, V>> {
    Box::new(Random)
}

struct Random;

impl<K, V> Policy<K, V> for Random {
    fn victim(&mut self, t: &mut Table<'_, K, V>) -> usize {
        // Multiply-shift maps 64 random bits onto 0..len (bias below len / 2^64).
        let r = t.rng.next_u64();
        ((u128::from(r) * t.entries.len() as u128) >> 64) as usize
    }
}
