//! What a server serves: the [`Catalog`] trait, and [`Index`], the catalogue of named
//! objects whose bytes come from any [`Content`].
//!
//! [`MemoryCatalog`] holds objects in memory, [`PatternCatalog`] generates them; the
//! runtime's directory catalogue is an `Index` over open files (pread).

use std::collections::HashMap;

use crate::eid::Eid;
use crate::tree::{Outboard, OutboardBuilder};
use crate::wire::ListEntry;

/// Why reading content failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The read itself failed (the runtime's I/O error, reduced to a message). The server
    /// answers `Internal`.
    #[error("content read failed: {0}")]
    Failed(String),
    /// The object is no longer served: its EID is unknown, or the bytes behind it changed
    /// (a file modified in place) so they are not the EID's any more. The server answers
    /// `UnknownContent`, never the changed bytes.
    #[error("the object is gone or changed")]
    Gone,
}

/// A set of named objects, each immutable under its EID.
///
/// Implementations must be cheap to query: the server calls [`Catalog::size_of`] once per
/// request and [`Catalog::read_at`] once per Data packet. A catalogue whose objects can
/// change (files) must never return bytes that are not its EID's: it answers
/// [`ReadError::Gone`] instead, and stops knowing the EID.
pub trait Catalog {
    /// Size in bytes of the object `eid`, if this catalogue has it.
    fn size_of(&self, eid: &Eid) -> Option<u64>;
    /// Fill `buf` with bytes `offset .. offset + buf.len()` of `eid`. The server only asks
    /// for ranges inside the object.
    fn read_at(&self, eid: &Eid, offset: u64, buf: &mut [u8]) -> Result<(), ReadError>;
    /// The server is about to read bytes `offset .. offset + len` of `eid`: one range of a
    /// request, read one datagram's payload at a time with [`Catalog::read_at`]. A
    /// catalogue reading from storage may read the range at once and no more than it (a
    /// one-unit request at a random offset then costs a small read, not a large window).
    /// Default: nothing.
    fn will_read(&self, eid: &Eid, offset: u64, len: u64) {
        let _ = (eid, offset, len);
    }
    /// EID and size of the object called `name`.
    fn resolve(&self, name: &str) -> Option<(Eid, u64)>;
    /// Whether `name` (which [`Catalog::resolve`] does not know now) is being indexed: a
    /// file just added or changed, being hashed. The server answers a resolve with `Busy`
    /// (ask again shortly) instead of `UnknownContent`. Default: never.
    fn is_pending(&self, name: &str) -> bool {
        let _ = name;
        false
    }
    /// The name of `eid`, if it has one.
    fn name_of(&self, eid: &Eid) -> Option<&str>;
    /// Number of entries (for listing).
    fn len(&self) -> usize;
    /// Whether the catalogue is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Entry `index` in a stable order (for listing).
    fn entry(&self, index: usize) -> Option<ListEntry<'_>>;
    /// The hash tree of `eid` (verified streaming, `crate::tree`): without one the server
    /// cannot answer proof requests, and receivers cannot verify objects over 16 KiB.
    fn outboard(&self, eid: &Eid) -> Option<&Outboard> {
        let _ = eid;
        None
    }
}

/// The bytes of one object, readable at any offset.
pub trait Content {
    /// Fill `buf` with bytes `offset .. offset + buf.len()`; [`Index`] only asks for ranges
    /// inside the object.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), ReadError>;
}

impl Content for Vec<u8> {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), ReadError> {
        let start = usize::try_from(offset).map_err(|_| ReadError::Failed("offset".into()))?;
        let src = self
            .get(start..start.saturating_add(buf.len()))
            .ok_or_else(|| ReadError::Failed("range outside object".into()))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// Generated content: byte `i` is a pure function of `(seed, i)` (see [`fill_pattern`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub seed: u64,
}

impl Content for Pattern {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), ReadError> {
        fill_pattern(self.seed, offset, buf);
        Ok(())
    }
}

/// A catalogue: named objects with their EIDs and sizes, sorted by name, found by name or
/// by EID, whose bytes come from a [`Content`] each. Objects with the same content keep the
/// first name for EID lookups; every name still resolves.
#[derive(Debug, Default, Clone)]
pub struct Index<T> {
    entries: Vec<(String, Eid, u64, T)>,
    /// The hash tree of each entry (same order), if known.
    outboards: Vec<Option<Outboard>>,
    by_eid: HashMap<Eid, usize>,
    by_name: HashMap<String, usize>,
}

impl<T> Index<T> {
    /// Build from `(name, eid, size, content)`. The caller vouches that each EID is the
    /// BLAKE3 hash of its content (receivers will check).
    /// Without hash trees, the server cannot answer proof requests: prefer
    /// [`Index::from_outboards`].
    pub fn from_entries(entries: Vec<(String, Eid, u64, T)>) -> Self {
        Self::build(entries.into_iter().map(|e| (e, None)).collect())
    }

    /// Build from `(name, hash tree, content)`: EIDs and sizes come from the trees.
    pub fn from_outboards(entries: Vec<(String, Outboard, T)>) -> Self {
        Self::build(entries.into_iter().map(|(n, o, t)| ((n, o.root(), o.size(), t), Some(o))).collect())
    }

    #[allow(clippy::type_complexity)]
    fn build(mut both: Vec<((String, Eid, u64, T), Option<Outboard>)>) -> Self {
        both.sort_by(|a, b| a.0.0.cmp(&b.0.0));
        let (entries, outboards): (Vec<_>, Vec<_>) = both.into_iter().unzip();
        let mut by_eid = HashMap::with_capacity(entries.len());
        let mut by_name = HashMap::with_capacity(entries.len());
        for (i, (name, eid, _, _)) in entries.iter().enumerate() {
            by_eid.entry(*eid).or_insert(i);
            by_name.insert(name.clone(), i);
        }
        Index { entries, outboards, by_eid, by_name }
    }
    /// The entry for `eid`: `(name, size, content)`.
    pub fn get(&self, eid: &Eid) -> Option<(&str, u64, &T)> {
        self.by_eid.get(eid).map(|&i| {
            let e = &self.entries[i];
            (e.0.as_str(), e.2, &e.3)
        })
    }
    /// Sum of the objects' sizes.
    pub fn total_size(&self) -> u64 {
        self.entries.iter().map(|e| e.2).sum()
    }
}

impl<T: Content> Catalog for Index<T> {
    fn size_of(&self, eid: &Eid) -> Option<u64> {
        self.get(eid).map(|(_, s, _)| s)
    }
    fn read_at(&self, eid: &Eid, offset: u64, buf: &mut [u8]) -> Result<(), ReadError> {
        let (_, size, content) = self.get(eid).ok_or(ReadError::Gone)?;
        if offset.checked_add(buf.len() as u64).is_none_or(|end| end > size) {
            return Err(ReadError::Failed("range outside object".into()));
        }
        content.read_at(offset, buf)
    }
    fn resolve(&self, name: &str) -> Option<(Eid, u64)> {
        self.by_name.get(name).map(|&i| (self.entries[i].1, self.entries[i].2))
    }
    fn name_of(&self, eid: &Eid) -> Option<&str> {
        self.get(eid).map(|(n, _, _)| n)
    }
    fn len(&self) -> usize {
        self.entries.len()
    }
    fn entry(&self, index: usize) -> Option<ListEntry<'_>> {
        self.entries.get(index).map(|e| ListEntry { eid: e.1, size: e.2, name: e.0.as_str() })
    }
    fn outboard(&self, eid: &Eid) -> Option<&Outboard> {
        self.by_eid.get(eid).and_then(|&i| self.outboards[i].as_ref())
    }
}

/// Objects held in memory.
pub type MemoryCatalog = Index<Vec<u8>>;

impl Index<Vec<u8>> {
    /// A catalogue of `(name, content)`; EIDs are computed here.
    pub fn new(objects: impl IntoIterator<Item = (String, Vec<u8>)>) -> Self {
        Index::from_outboards(objects.into_iter().map(|(name, data)| (name, Outboard::of(&data), data)).collect())
    }
}

/// Generated objects of given sizes whose bytes are a pure function of `(seed, offset)`:
/// large objects for simulations and benchmarks without holding them in memory. The EID
/// is still the BLAKE3 hash of the generated content (computed once, at construction).
pub type PatternCatalog = Index<Pattern>;

impl Index<Pattern> {
    /// Objects `(name, size, seed)`.
    pub fn new(objects: impl IntoIterator<Item = (String, u64, u64)>) -> Self {
        let entries = objects
            .into_iter()
            .map(|(name, size, seed)| {
                let mut h = OutboardBuilder::new();
                let mut buf = vec![0u8; 1 << 16];
                let mut off = 0u64;
                while off < size {
                    let n = (size - off).min(buf.len() as u64) as usize;
                    fill_pattern(seed, off, &mut buf[..n]);
                    h.update(&buf[..n]);
                    off += n as u64;
                }
                (name, h.finish(), Pattern { seed })
            })
            .collect();
        Index::from_outboards(entries)
    }
}

/// Fill `buf` with bytes `offset..` of the pattern object with `seed`.
///
/// Byte `i` is byte `i % 8` (little-endian) of `splitmix64(seed + i / 8)`, so every 8-byte
/// word differs and misplaced data is detected by content, not only by the final hash.
pub fn fill_pattern(seed: u64, offset: u64, buf: &mut [u8]) {
    let mut i = 0usize;
    while i < buf.len() {
        let pos = offset + i as u64;
        let word = splitmix64(seed.wrapping_add(pos / 8)).to_le_bytes();
        let start = (pos % 8) as usize;
        let n = (8 - start).min(buf.len() - i);
        buf[i..i + n].copy_from_slice(&word[start..start + n]);
        i += n;
    }
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_consistent_at_any_offset() {
        let mut whole = vec![0u8; 1000];
        fill_pattern(7, 0, &mut whole);
        for start in [0usize, 1, 7, 8, 9, 333] {
            let mut part = vec![0u8; 100];
            fill_pattern(7, start as u64, &mut part);
            assert_eq!(&part[..], &whole[start..start + 100]);
        }
        let mut other = vec![0u8; 1000];
        fill_pattern(8, 0, &mut other);
        assert_ne!(whole, other);
    }

    #[test]
    fn pattern_catalog_eid_is_hash_of_content() {
        let c = PatternCatalog::new([("x".to_string(), 100_000, 3)]);
        let (eid, size) = c.resolve("x").unwrap();
        assert_eq!(size, 100_000);
        let mut all = vec![0u8; 100_000];
        c.read_at(&eid, 0, &mut all).unwrap();
        assert_eq!(Eid::of(&all), eid);
        assert!(c.read_at(&eid, 99_999, &mut [0u8; 2]).is_err());
    }

    #[test]
    fn memory_catalog_lookups() {
        let c = MemoryCatalog::new([("b".to_string(), b"bbb".to_vec()), ("a".to_string(), b"aa".to_vec())]);
        assert_eq!(c.len(), 2);
        assert_eq!(c.entry(0).unwrap().name, "a");
        let (eid, size) = c.resolve("b").unwrap();
        assert_eq!(size, 3);
        assert_eq!(c.name_of(&eid), Some("b"));
        let mut buf = [0u8; 2];
        c.read_at(&eid, 1, &mut buf).unwrap();
        assert_eq!(&buf, b"bb");
        assert!(c.resolve("c").is_none());
    }
}
