//! Where CCTCP expects each unit to come from (seed 003 §II-A, §II-D, "S3"): learned from
//! the annotations a Data carries back about the units its request anticipated.
//!
//! For each anticipated unit, in a Data that answered the request listing it:
//! * some router annotated it → the nearest such router (fewest hops): requests travel
//!   towards the origin, so the first cache holding the unit answers;
//! * none did and the origin served the Data → the origin (no cache on the path has it);
//! * none did and a router served the Data → somewhere beyond that router, unknown: the
//!   entry is dropped, and the unit gets the default (see [`super::Cctcp`]).
//!
//! The map is bounded ([`MAX_ENTRIES`]); an entry is dropped when its unit arrives.

use std::collections::BTreeMap;

/// Most units whose location is remembered (a few windows' worth).
pub const MAX_ENTRIES: usize = 4096;

/// Unit → index of the source expected to serve it.
#[derive(Clone, Debug, Default)]
pub struct Locations {
    map: BTreeMap<u64, usize>,
}

impl Locations {
    pub fn get(&self, unit: u64) -> Option<usize> {
        self.map.get(&unit).copied()
    }

    /// `unit` is expected from `source`, or (None) from an unknown node.
    pub fn set(&mut self, unit: u64, source: Option<usize>) {
        match source {
            Some(s) => {
                self.map.insert(unit, s);
                while self.map.len() > MAX_ENTRIES {
                    self.map.pop_last();
                }
            }
            None => {
                self.map.remove(&unit);
            }
        }
    }

    /// `unit` arrived: forget it.
    pub fn arrived(&mut self, unit: u64) {
        self.map.remove(&unit);
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn clear(&mut self) {
        self.map.clear();
    }
}
