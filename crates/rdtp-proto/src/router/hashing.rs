//! The hash behind every table a router keeps (pending entries, upstream requests, staging,
//! known tree nodes, the content store's index, liveness, tokens, the forwarding table):
//! foldhash's fast variant (a folded-multiply hash, the default of `hashbrown`), keyed with
//! 128 bits derived from what the router's caller passes in, so that it reads no ambient
//! randomness and a run is reproducible from its configuration.
//!
//! Why keyed, and why this hash: the keys (EIDs, offsets, tags, addresses) come from the
//! network, so a sender who could compute the hash could forge EIDs that all fall into one
//! bucket and make every lookup a scan (hash flooding). std's SipHash with its `RandomState`
//! resists that, but costs ≈ 20 ns per 40-byte key and draws its keys from the OS (ambient
//! randomness, which this crate does not use); on a cold router it was ≈ 5 % of the
//! process's CPU (docs/BENCHMARKS.md). foldhash with secret seeds is not a cryptographic
//! PRF, but its output depends on the seeds through multiplications an attacker cannot undo
//! without them — the "minimal DoS resistance" its authors claim, and the same bargain as
//! `hashbrown`'s default — and it hashes such a key in a few nanoseconds. The seeds:
//! [`TableHasher::for_router`] derives them with BLAKE3 from the router's token secret
//! (random in the `rdtp` runtime) and its seed; [`TableHasher::from_seed`], for a content
//! store, from its seed alone (random in `rdtp route` unless `--seed` is given: a user who
//! fixes the seed makes the hash predictable to whoever knows it).
//!
//! It must not draw randomness of its own or change what any table holds: only where in a
//! table an entry lives, and the order of the few scans that iterate a table.

use core::hash::BuildHasher;

use foldhash::SharedSeed;
use foldhash::fast::FoldHasher;

/// A keyed [`BuildHasher`] (see the module docs). Cloning keeps the keys.
#[derive(Clone)]
pub struct TableHasher {
    per_hasher: u64,
    shared: SharedSeed,
}

impl core::fmt::Debug for TableHasher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("TableHasher(<keyed>)")
    }
}

impl TableHasher {
    /// Keys from 32 bytes of key material.
    fn from_key(key: [u8; 32]) -> Self {
        let word = |i: usize| u64::from_le_bytes(key[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        TableHasher { per_hasher: word(0), shared: SharedSeed::from_u64(word(1)) }
    }

    /// The hasher of a router's tables: keyed by its token `secret` and its `seed`.
    pub fn for_router(secret: &[u8; 32], seed: u64) -> Self {
        let mut material = [0u8; 40];
        material[..32].copy_from_slice(secret);
        material[32..].copy_from_slice(&seed.to_le_bytes());
        Self::from_key(blake3::derive_key("rdtp router table hash keys v1", &material))
    }

    /// The hasher of a table whose owner has only a seed (a content store, `CsConfig::seed`).
    pub fn from_seed(seed: u64) -> Self {
        Self::from_key(blake3::derive_key("rdtp content store index hash keys v1", &seed.to_le_bytes()))
    }
}

impl Default for TableHasher {
    /// Fixed keys (those of seed 0): for tables whose keys no sender chooses (a strategy's
    /// next hops) and for tables built before their router, which keys them again
    /// ([`super::fib::Fib`]).
    fn default() -> Self {
        Self::from_seed(0)
    }
}

impl BuildHasher for TableHasher {
    type Hasher = FoldHasher;

    fn build_hasher(&self) -> FoldHasher {
        FoldHasher::with_seed(self.per_hasher, &self.shared)
    }
}

/// A hash map with the router's keyed hash.
pub type Map<K, V> = std::collections::HashMap<K, V, TableHasher>;

/// An empty [`Map`] hashing with `h`.
pub fn map<K, V>(h: &TableHasher) -> Map<K, V> {
    Map::with_hasher(h.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_by_what_the_caller_passes_in_and_nothing_else() {
        let key = (crate::Eid::of(b"x"), 7u64);
        let h = |t: &TableHasher| t.hash_one(key);
        let a = TableHasher::for_router(&[1; 32], 5);
        assert_eq!(h(&a), h(&TableHasher::for_router(&[1; 32], 5)), "reproducible");
        assert_ne!(h(&a), h(&TableHasher::for_router(&[2; 32], 5)), "the secret keys it");
        assert_ne!(h(&a), h(&TableHasher::for_router(&[1; 32], 6)), "so does the seed");
        assert_eq!(h(&TableHasher::from_seed(3)), h(&TableHasher::from_seed(3)));
        assert_ne!(h(&TableHasher::from_seed(3)), h(&TableHasher::from_seed(4)));
    }
}
