//! `fifo`, first in, first out: evicts the entry inserted longest ago; hits do not reorder
//! (a replacement of an existing key counts as a new insertion). NFD's `priority-fifo`
//! without its priorities (rdtp caches only verified units, none unsolicited or stale).

use super::{CsConfig, Policy, Table};

pub(super) const ABOUT: &str = "first in, first out: the entry inserted longest ago is evicted, hits change nothing";

pub(super) fn build<K, V>(_: &CsConfig) -> Box<dyn Policy<K, V>> {
    Box::new(Fifo)
}

struct Fifo;

impl<K, V> Policy<K, V> for Fifo {
    fn uses_list(&self) -> bool {
        true
    }
    fn victim(&mut self, t: &mut Table<'_, K, V>) -> usize {
        *t.tail
    }
}
