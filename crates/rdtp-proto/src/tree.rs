//! Verified streaming (issue 11): every 16 KiB block of an object is checked against the
//! object's EID before any byte of it is delivered, using BLAKE3's own hash tree (the
//! `blake3::hazmat` subtree API), not a hand-made one.
//!
//! An EID is the BLAKE3 hash of the content, and BLAKE3 hashes a binary tree of 1 KiB
//! chunks. A block of [`BLOCK_LEN`] bytes (16 chunks) at a multiple of `BLOCK_LEN` is a
//! subtree of that tree, so its chaining value (CV) can be computed from its bytes alone,
//! and the CVs of its siblings on the way to the root (the *proof*) rebuild the EID.
//!
//! - A server keeps an [`Outboard`] per object (the CVs of every tree node at block level and
//!   above: 64 bytes per block) and answers a `ProofRequest` with the siblings of one block.
//! - A receiver runs a [`Verifier`] and checks blocks **in order**. After blocks `0..b`
//!   verified, every node to their left is known, so block `b` needs only the siblings below
//!   its lowest known ancestor: [`proof_depth`] of them, `trailing_zeros(b)` levels at most
//!   (about one CV, 32 bytes, per block on average; the full path for block 0).
//! - An object of one block (≤ 16 KiB) needs no proof: its bytes hash to the EID directly.
//!
//! Node `(level, index)` covers blocks `index·2^level .. min((index+1)·2^level, blocks)`.
//! The tree is left-balanced as BLAKE3's is: a node whose right child would start past the
//! last block is the same subtree as its left child (no merge at that level).

use blake3::hazmat::{ChainingValue, HasherExt, Mode, merge_subtrees_non_root, merge_subtrees_root};

use crate::eid::Eid;

/// Bytes per verified block: 16 BLAKE3 chunks.
pub const BLOCK_LEN: u64 = 16 * 1024;

/// Most siblings a proof can carry: objects of up to 2^42 blocks (64 PiB), and a Proof
/// datagram of at most 1404 bytes.
pub const MAX_PROOF_DEPTH: usize = 42;

/// A chaining value: the non-root hash of a subtree.
pub type Cv = ChainingValue;

/// Blocks in an object of `size` bytes.
pub fn blocks(size: u64) -> u64 {
    size.div_ceil(BLOCK_LEN)
}

/// Nodes at `level` of the tree over `n` blocks.
fn count(n: u64, level: u32) -> u64 {
    if level >= 64 { 1 } else { n.div_ceil(1u64 << level).max(1) }
}

/// The chaining value of block `b` (non-root: only for objects of two blocks or more).
pub fn block_cv(b: u64, data: &[u8]) -> Cv {
    let mut h = blake3::Hasher::new();
    if b > 0 {
        h.set_input_offset(b * BLOCK_LEN);
    }
    h.update(data);
    h.finalize_non_root()
}

/// The levels whose sibling block `b`'s proof carries, bottom-up, for an object of `n`
/// blocks (n ≥ 2): every level below the root where the path node has a sibling.
fn path_levels(n: u64, b: u64) -> impl Iterator<Item = (u32, u64)> {
    (0u32..).take_while(move |&l| count(n, l) > 1).filter_map(move |l| {
        let j = b >> l;
        let sib = j ^ 1;
        (sib < count(n, l)).then_some((l, sib))
    })
}

/// How many siblings a [`Verifier`] that has checked blocks `0..b` in order needs to check
/// block `b` of an object of `size` bytes: those below the first level where `b`'s ancestor is
/// a right child (known, as the sibling of an earlier block's path). 0 for a one-block object
/// and for most odd blocks.
pub fn proof_depth(size: u64, b: u64) -> usize {
    let n = blocks(size);
    if n < 2 {
        return 0;
    }
    let known_at = if b == 0 { u32::MAX } else { b.trailing_zeros() };
    path_levels(n, b).filter(|&(l, _)| l < known_at).count()
}

/// The CVs of every node of an object's tree at block level and above (the root excepted):
/// what a server needs to answer proof requests. 64 bytes per block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outboard {
    size: u64,
    root: Eid,
    /// `levels[l][j]` = CV of node `(l, j)`, for the levels below the root.
    levels: Vec<Vec<Cv>>,
}

impl Outboard {
    /// Build from the object's bytes.
    pub fn of(data: &[u8]) -> Outboard {
        let mut b = OutboardBuilder::new();
        b.update(data);
        b.finish()
    }

    /// The object's size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The EID the tree hashes to.
    pub fn root(&self) -> Eid {
        self.root
    }

    /// Bytes of memory the CVs take.
    pub fn heap_bytes(&self) -> usize {
        self.levels.iter().map(|l| l.len() * 32).sum()
    }

    /// The lowest `depth` siblings of block `b`'s path, bottom-up; `None` if `b` is not a
    /// block of a multi-block object or `depth` exceeds its path.
    pub fn proof(&self, b: u64, depth: usize) -> Option<Vec<Cv>> {
        let nodes = proof_nodes(self.size, b, depth)?;
        Some(nodes.into_iter().map(|(l, sib)| self.levels[l as usize][sib as usize]).collect())
    }
}

/// Builds an [`Outboard`] from an object's bytes fed in order (in pieces of any size), so
/// a file is hashed once, streaming.
#[derive(Debug)]
pub struct OutboardBuilder {
    hasher: blake3::Hasher,
    /// Bytes fed into `hasher` (the current block).
    in_block: u64,
    size: u64,
    cvs: Vec<Cv>,
    /// Whole-object hasher while the object is still one block (its root is a plain hash).
    first: Option<blake3::Hasher>,
}

impl Default for OutboardBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl OutboardBuilder {
    pub fn new() -> Self {
        OutboardBuilder {
            hasher: blake3::Hasher::new(),
            in_block: 0,
            size: 0,
            cvs: Vec::new(),
            first: Some(blake3::Hasher::new()),
        }
    }

    pub fn update(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.in_block == BLOCK_LEN {
                self.cvs.push(self.hasher.finalize_non_root());
                self.hasher = blake3::Hasher::new();
                self.hasher.set_input_offset(self.size);
                self.in_block = 0;
                self.first = None;
            }
            let n = ((BLOCK_LEN - self.in_block) as usize).min(data.len());
            self.hasher.update(&data[..n]);
            if let Some(f) = self.first.as_mut() {
                f.update(&data[..n]);
            }
            self.in_block += n as u64;
            self.size += n as u64;
            data = &data[n..];
        }
    }

    pub fn finish(mut self) -> Outboard {
        if let Some(f) = self.first.take() {
            // One block or none: no tree above the chunks' own.
            return Outboard { size: self.size, root: Eid::from_hasher(&f), levels: Vec::new() };
        }
        self.cvs.push(self.hasher.finalize_non_root());
        let n = self.cvs.len() as u64;
        let mut levels = vec![self.cvs];
        let mut l = 0u32;
        while count(n, l + 1) > 1 {
            let below = &levels[l as usize];
            let up: Vec<Cv> = below
                .chunks(2)
                .map(|p| if p.len() == 2 { merge_subtrees_non_root(&p[0], &p[1], Mode::Hash) } else { p[0] })
                .collect();
            levels.push(up);
            l += 1;
        }
        let top = levels.last().expect("two blocks or more");
        let root = Eid(*merge_subtrees_root(&top[0], &top[1], Mode::Hash).as_bytes());
        Outboard { size: self.size, root, levels }
    }
}

/// Why a block did not verify.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("block {0} is not the next to verify")]
    OutOfOrder(u64),
    #[error("block {0} has the wrong length")]
    Length(u64),
    #[error("the proof of block {0} has the wrong number of hashes")]
    ProofLength(u64),
    #[error("block {0} does not hash to the EID (its bytes or its proof are wrong)")]
    Mismatch(u64),
}

/// Checks an object's blocks in order against its EID, keeping the CVs later blocks need
/// (a few per level: memory is O(log blocks)).
#[derive(Clone, Debug)]
pub struct Verifier {
    eid: Eid,
    size: u64,
    n: u64,
    next: u64,
    /// Known CVs per level: `(index, cv)` of nodes right of the verified prefix.
    known: Vec<Vec<(u64, Cv)>>,
}

impl Verifier {
    pub fn new(eid: Eid, size: u64) -> Self {
        Verifier { eid, size, n: blocks(size), next: 0, known: Vec::new() }
    }

    /// The next block to verify (blocks before it are verified).
    pub fn next_block(&self) -> u64 {
        self.next
    }

    /// Bytes verified so far (a prefix of the object).
    pub fn verified_bytes(&self) -> u64 {
        (self.next * BLOCK_LEN).min(self.size)
    }

    /// Length of block `b`.
    pub fn block_len(&self, b: u64) -> u64 {
        (self.size - b * BLOCK_LEN).min(BLOCK_LEN)
    }

    fn known(&self, l: u32, j: u64) -> Option<&Cv> {
        self.known.get(l as usize)?.iter().find(|(i, _)| *i == j).map(|(_, c)| c)
    }

    /// How many siblings [`Verifier::check_block`] needs for block `b`: those below its lowest
    /// ancestor this verifier knows ([`sparse_depth`]; the whole path if none).
    pub fn check_depth(&self, b: u64) -> usize {
        sparse_depth(self.size, b, |l, j| self.known(l, j).copied())
    }

    /// Check block `b` alone, in any order and without advancing the verifier: its bytes
    /// and `proof` (its [`Verifier::check_depth`] lowest siblings, bottom-up, as
    /// [`Outboard::proof`] gives them) must climb to a node this verifier knows, or to the
    /// EID. A receiver whose group of blocks failed checks each block of it this way to
    /// find the bad ones (issue 23: a 256 KiB group is narrowed to its bad 16 KiB blocks).
    pub fn check_block(&self, b: u64, data: &[u8], proof: &[Cv]) -> Result<(), VerifyError> {
        if b >= self.n {
            return Err(VerifyError::OutOfOrder(b));
        }
        if data.len() as u64 != self.block_len(b) {
            return Err(VerifyError::Length(b));
        }
        if self.n < 2 {
            return if Eid::of(data) == self.eid { Ok(()) } else { Err(VerifyError::Mismatch(b)) };
        }
        if proof.len() != self.check_depth(b) {
            return Err(VerifyError::ProofLength(b));
        }
        check_block(&self.eid, self.size, b, block_cv(b, data), proof, |l, j| self.known(l, j).copied()).map(|_| ())
    }

    /// Check block `b` (which must be [`Self::next_block`]) with its proof
    /// ([`proof_depth`] siblings, bottom-up).
    pub fn verify(&mut self, b: u64, data: &[u8], proof: &[Cv]) -> Result<(), VerifyError> {
        // Level 0: a group of one block, whose proof is the whole in-order one.
        self.verify_group(b, 0, &[data], proof)
    }

    /// Blocks covered by the group of `2^level` blocks starting at block `b`.
    pub fn group_blocks(&self, b: u64, level: u32) -> u64 {
        (1u64 << level).min(self.n.saturating_sub(b))
    }

    /// Check the `2^level` blocks from block `b` at once (fewer at the object's end): `b`
    /// must be [`Self::next_block`] and a multiple of `2^level`, `data` the group's bytes
    /// in pieces of any size, and `proof` the siblings of the group's path above `level`
    /// ([`group_proof_depth`] of them, bottom-up). The group's subtree is hashed from its
    /// bytes (BLAKE3's wide SIMD path over `2^level` blocks), so siblings inside the group
    /// need no proof.
    pub fn verify_group(&mut self, b: u64, level: u32, data: &[&[u8]], proof: &[Cv]) -> Result<(), VerifyError> {
        if b != self.next || b >= self.n || level >= 64 || !b.is_multiple_of(1u64 << level) {
            return Err(VerifyError::OutOfOrder(b));
        }
        let m = self.group_blocks(b, level);
        let len = ((b + m) * BLOCK_LEN).min(self.size) - b * BLOCK_LEN;
        if data.iter().map(|d| d.len() as u64).sum::<u64>() != len {
            return Err(VerifyError::Length(b));
        }
        if proof.len() != group_proof_depth(self.size, b, level) {
            return Err(VerifyError::ProofLength(b));
        }
        if count(self.n, level) == 1 {
            // The group is the whole object: its bytes hash to the EID.
            let mut h = blake3::Hasher::new();
            data.iter().for_each(|d| {
                h.update(d);
            });
            if Eid(*h.finalize().as_bytes()) != self.eid {
                return Err(VerifyError::Mismatch(b));
            }
            self.next = self.n;
            return Ok(());
        }
        let mut h = blake3::Hasher::new();
        if b > 0 {
            h.set_input_offset(b * BLOCK_LEN);
        }
        data.iter().for_each(|d| {
            h.update(d);
        });
        let mut cv = h.finalize_non_root();
        let mut learned: Vec<(u32, u64, Cv)> = Vec::new();
        let mut proof = proof.iter();
        let mut l = level;
        let ok = loop {
            let j = b >> l;
            if let Some(k) = self.known(l, j) {
                break *k == cv;
            }
            let sib = j ^ 1;
            if sib < count(self.n, l) {
                let Some(s) = proof.next().or_else(|| self.known(l, sib)).copied() else {
                    return Err(VerifyError::ProofLength(b));
                };
                learned.push((l, sib, s));
                let (left, right) = if j & 1 == 0 { (cv, s) } else { (s, cv) };
                if count(self.n, l) == 2 {
                    break *merge_subtrees_root(&left, &right, Mode::Hash).as_bytes() == self.eid.0;
                }
                cv = merge_subtrees_non_root(&left, &right, Mode::Hash);
            }
            l += 1;
        };
        if !ok {
            return Err(VerifyError::Mismatch(b));
        }
        // Keep the siblings right of the verified prefix; forget what is left of it.
        self.next = b + m;
        for (l, j, c) in learned {
            if self.known.len() <= l as usize {
                self.known.resize(l as usize + 1, Vec::new());
            }
            self.known[l as usize].push((j, c));
        }
        let next = self.next;
        for (l, level) in self.known.iter_mut().enumerate() {
            level.retain(|(j, _)| (j + 1) << l > next);
        }
        Ok(())
    }
}

/// Receivers that verify groups of `2^level` blocks at once ([`Verifier::verify_group`]):
/// how many siblings the group starting at block `b` needs, i.e. those of [`proof_depth`]
/// above `level` (the ones below are inside the group). 0 when none are needed — most
/// groups — and for blocks that do not start a group.
pub fn group_proof_depth(size: u64, b: u64, level: u32) -> usize {
    let n = blocks(size);
    if n < 2 || level >= 64 || !b.is_multiple_of(1u64 << level) {
        return 0;
    }
    let known_at = if b == 0 { u32::MAX } else { b.trailing_zeros() };
    path_levels(n, b).filter(|&(l, _)| l >= level && l < known_at).count()
}

/// The siblings inside the group: how many of a [`proof_depth`] proof of block `b` come
/// before those [`group_proof_depth`] counts (a receiver verifying groups asks servers
/// for the whole in-order proof, as the wire format has it, and skips these).
pub fn group_inner_depth(size: u64, b: u64, level: u32) -> usize {
    let n = blocks(size);
    if n < 2 {
        return 0;
    }
    path_levels(n, b).filter(|&(l, _)| l < level).count()
}

/// The tree nodes `(level, index)` a proof of `depth` siblings for block `b` of an object
/// of `size` bytes carries, bottom-up; `None` if `b` is not a block of a multi-block object
/// or `depth` exceeds its path.
pub fn proof_nodes(size: u64, b: u64, depth: usize) -> Option<Vec<(u32, u64)>> {
    let n = blocks(size);
    if n < 2 || b >= n || depth > MAX_PROOF_DEPTH {
        return None;
    }
    let v: Vec<(u32, u64)> = path_levels(n, b).take(depth).collect();
    (v.len() == depth).then_some(v)
}

/// Blocks in any order (a router, seed 003's caches): how many siblings block `b` of an
/// object of `size` bytes needs when the CVs `known` returns are verified — those below its
/// lowest known ancestor (the whole path if none is known). 0 for one-block objects.
pub fn sparse_depth(size: u64, b: u64, known: impl Fn(u32, u64) -> Option<Cv>) -> usize {
    let n = blocks(size);
    if n < 2 || b >= n {
        return 0;
    }
    let mut depth = 0;
    for l in (0u32..).take_while(|&l| count(n, l) > 1) {
        if known(l, b >> l).is_some() {
            break;
        }
        if (b >> l) ^ 1 < count(n, l) {
            depth += 1;
        }
    }
    depth
}

/// Check the CV `cv` of block `b` (of an object of `size` ≥ 2 blocks with EID `eid`) in any
/// order: climb with `proof` (siblings bottom-up, as [`Outboard::proof`] gives them) until a
/// node `known` returns — or the root, which must hash to `eid`. On success, returns every
/// node the climb proved (path nodes and the siblings used) as `(level, index, cv)`, for
/// the caller to remember; siblings the proof carries beyond what was needed are ignored.
pub fn check_block(
    eid: &Eid,
    size: u64,
    b: u64,
    cv: Cv,
    proof: &[Cv],
    known: impl Fn(u32, u64) -> Option<Cv>,
) -> Result<Vec<(u32, u64, Cv)>, VerifyError> {
    let n = blocks(size);
    if n < 2 || b >= n {
        return Err(VerifyError::OutOfOrder(b));
    }
    let mut learned = Vec::new();
    let mut proof = proof.iter();
    let mut cv = cv;
    let mut l = 0u32;
    let ok = loop {
        let j = b >> l;
        if let Some(k) = known(l, j) {
            break k == cv;
        }
        learned.push((l, j, cv));
        let sib = j ^ 1;
        if sib < count(n, l) {
            let Some(&s) = proof.next() else { return Err(VerifyError::ProofLength(b)) };
            learned.push((l, sib, s));
            let (left, right) = if j & 1 == 0 { (cv, s) } else { (s, cv) };
            if count(n, l) == 2 {
                break *merge_subtrees_root(&left, &right, Mode::Hash).as_bytes() == eid.0;
            }
            cv = merge_subtrees_non_root(&left, &right, Mode::Hash);
        }
        l += 1;
    };
    if ok { Ok(learned) } else { Err(VerifyError::Mismatch(b)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 + i / 1000) as u8).collect()
    }

    fn sizes() -> Vec<usize> {
        let b = BLOCK_LEN as usize;
        vec![0, 1, 1024, b - 1, b, b + 1, 2 * b, 2 * b + 5, 3 * b, 5 * b - 7, 8 * b, 9 * b + 1, 33 * b + 100]
    }

    #[test]
    fn outboard_root_is_the_blake3_hash() {
        for n in sizes() {
            let data = content(n);
            let ob = Outboard::of(&data);
            assert_eq!(ob.root(), Eid::of(&data), "size {n}");
            // Fed in odd pieces: the same.
            let mut b = OutboardBuilder::new();
            for piece in data.chunks(1402) {
                b.update(piece);
            }
            assert_eq!(b.finish(), ob, "size {n}");
        }
    }

    #[test]
    fn every_block_verifies_in_order_with_its_proof() {
        for n in sizes() {
            let data = content(n);
            let ob = Outboard::of(&data);
            let mut v = Verifier::new(Eid::of(&data), n as u64);
            let mut cvs = 0;
            for b in 0..blocks(n as u64) {
                let d = proof_depth(n as u64, b);
                cvs += d;
                let proof = if d == 0 { vec![] } else { ob.proof(b, d).unwrap() };
                let s = (b * BLOCK_LEN) as usize;
                let e = (s + BLOCK_LEN as usize).min(n);
                v.verify(b, &data[s..e], &proof).unwrap_or_else(|e| panic!("size {n}: {e}"));
            }
            assert_eq!(v.verified_bytes(), n as u64);
            // About one CV per block (the full path for block 0).
            assert!(cvs as u64 <= blocks(n as u64) + 8, "size {n}: {cvs} CVs");
            // Only the frontier is remembered.
            assert!(v.known.iter().map(Vec::len).sum::<usize>() <= 8, "size {n}");
        }
    }

    #[test]
    fn a_wrong_byte_or_a_wrong_proof_fails_and_can_be_retried() {
        let n = 9 * BLOCK_LEN as usize + 1;
        let data = content(n);
        let ob = Outboard::of(&data);
        let mut v = Verifier::new(Eid::of(&data), n as u64);
        let block = |b: u64| &data[(b * BLOCK_LEN) as usize..((b + 1) * BLOCK_LEN).min(n as u64) as usize];
        for b in 0..blocks(n as u64) {
            let d = proof_depth(n as u64, b);
            let proof = if d == 0 { vec![] } else { ob.proof(b, d).unwrap() };
            let mut bad = block(b).to_vec();
            let mid = bad.len() / 2;
            bad[mid] ^= 1;
            assert_eq!(v.verify(b, &bad, &proof), Err(VerifyError::Mismatch(b)), "block {b}");
            if d > 0 {
                let mut forged = proof.clone();
                forged[0][0] ^= 1;
                assert_eq!(v.verify(b, block(b), &forged), Err(VerifyError::Mismatch(b)), "block {b}");
                assert_eq!(v.verify(b, block(b), &proof[1..]), Err(VerifyError::ProofLength(b)));
            }
            assert_eq!(v.verify(b + 1, block(b), &proof), Err(VerifyError::OutOfOrder(b + 1)));
            v.verify(b, block(b), &proof).unwrap();
        }
        // A one-block object: the bytes hash to the EID, no proof.
        let small = content(100);
        let mut v = Verifier::new(Eid::of(&small), 100);
        assert_eq!(v.verify(0, &small[..99], &[]), Err(VerifyError::Length(0)));
        let mut bad = small.clone();
        bad[0] ^= 1;
        assert_eq!(v.verify(0, &bad, &[]), Err(VerifyError::Mismatch(0)));
        v.verify(0, &small, &[]).unwrap();
    }

    #[test]
    fn blocks_check_in_any_order_and_known_nodes_shorten_proofs() {
        use std::collections::HashMap;
        for n in [2 * BLOCK_LEN as usize, 5 * BLOCK_LEN as usize - 7, 33 * BLOCK_LEN as usize + 100] {
            let data = content(n);
            let eid = Eid::of(&data);
            let ob = Outboard::of(&data);
            let nb = blocks(n as u64);
            let block = |b: u64| &data[(b * BLOCK_LEN) as usize..((b + 1) * BLOCK_LEN).min(n as u64) as usize];
            let mut known: HashMap<(u32, u64), Cv> = HashMap::new();
            // A scrambled order: odd blocks backwards, then even ones forwards.
            let order: Vec<u64> = (0..nb).filter(|b| b % 2 == 1).rev().chain((0..nb).filter(|b| b % 2 == 0)).collect();
            let mut total = 0;
            for (i, &b) in order.iter().enumerate() {
                let look = |l: u32, j: u64| known.get(&(l, j)).copied();
                let d = sparse_depth(n as u64, b, look);
                if i == 0 {
                    assert_eq!(d, path_levels(nb, b).count(), "nothing known yet: the whole path");
                }
                let proof = ob.proof(b, d).unwrap();
                let cv = block_cv(b, block(b));
                // A forged sibling or a wrong byte fails, and teaches nothing.
                if d > 0 {
                    let mut forged = proof.clone();
                    forged[d - 1][3] ^= 1;
                    assert_eq!(check_block(&eid, n as u64, b, cv, &forged, look), Err(VerifyError::Mismatch(b)));
                    assert_eq!(
                        check_block(&eid, n as u64, b, cv, &proof[..d - 1], look),
                        Err(VerifyError::ProofLength(b))
                    );
                }
                let mut bad = block(b).to_vec();
                bad[0] ^= 1;
                let bad_cv = block_cv(b, &bad);
                assert_eq!(check_block(&eid, n as u64, b, bad_cv, &proof, look), Err(VerifyError::Mismatch(b)));
                let learned = check_block(&eid, n as u64, b, cv, &proof, look).unwrap();
                total += d;
                for (l, j, c) in learned {
                    assert_eq!(ob.levels[l as usize][j as usize], c, "a learned node is the outboard's");
                    known.insert((l, j), c);
                }
                // Once its path is known, a block needs no proof at all.
                assert_eq!(sparse_depth(n as u64, b, |l, j| known.get(&(l, j)).copied()), 0);
            }
            // Known nodes made the proofs short: far fewer siblings than a full path each.
            let full: usize = (0..nb).map(|b| path_levels(nb, b).count()).sum();
            assert!(total < full, "{total} siblings with knowledge vs {full} without");
        }
    }

    /// A group verified in order leaves the verifier knowing nodes right of it; a failed
    /// group's blocks can each be checked alone against them (or the EID), so the bad ones
    /// are found without trusting the others.
    #[test]
    fn blocks_of_a_failed_group_are_checked_alone_against_what_the_verifier_knows() {
        let n = 40 * BLOCK_LEN as usize + 777;
        let data = content(n);
        let ob = Outboard::of(&data);
        let block = |b: u64| &data[(b * BLOCK_LEN) as usize..((b + 1) * BLOCK_LEN).min(n as u64) as usize];
        let mut v = Verifier::new(Eid::of(&data), n as u64);
        let level = 4;
        // Group 0 (blocks 0–15) verified with the upper part of block 0's proof.
        let inner = group_inner_depth(n as u64, 0, level);
        let proof = ob.proof(0, proof_depth(n as u64, 0)).unwrap();
        let pieces: Vec<&[u8]> = (0..16).map(block).collect();
        v.verify_group(0, level, &pieces, &proof[inner..]).unwrap();
        // Group 1 (16–31) is the right sibling of group 0: its node is known, so each of its
        // blocks needs only the siblings inside the group (4); group 2 (32–40) is the
        // last, its blocks climb to the root's known children as well.
        for b in 16..41 {
            let d = v.check_depth(b);
            assert!(d <= 4, "block {b}: {d} siblings");
            let p = ob.proof(b, d).unwrap();
            v.check_block(b, block(b), &p).unwrap_or_else(|e| panic!("block {b}: {e}"));
            let mut bad = block(b).to_vec();
            bad[7] ^= 0x20;
            assert_eq!(v.check_block(b, &bad, &p), Err(VerifyError::Mismatch(b)));
            if d > 0 {
                let mut forged = p.clone();
                forged[d - 1][0] ^= 1;
                assert_eq!(v.check_block(b, block(b), &forged), Err(VerifyError::Mismatch(b)));
            }
            assert_eq!(v.check_block(b, &block(b)[1..], &p), Err(VerifyError::Length(b)));
        }
        assert_eq!(v.next_block(), 16, "checking alone does not advance");
        // Without any known node (block 0 of a fresh verifier) the climb goes to the EID.
        let fresh = Verifier::new(Eid::of(&data), n as u64);
        let d = fresh.check_depth(5);
        assert_eq!(d, path_levels(blocks(n as u64), 5).count());
        fresh.check_block(5, block(5), &ob.proof(5, d).unwrap()).unwrap();
        // A one-block object: the bytes against the EID.
        let small = content(100);
        let v = Verifier::new(Eid::of(&small), 100);
        assert_eq!(v.check_depth(0), 0);
        v.check_block(0, &small, &[]).unwrap();
        assert_eq!(v.check_block(0, &small[..99], &[]), Err(VerifyError::Length(0)));
    }

    #[test]
    fn proof_depth_is_the_path_for_block_zero_and_trailing_zeros_after() {
        let size = 8 * BLOCK_LEN;
        assert_eq!((0..8).map(|b| proof_depth(size, b)).collect::<Vec<_>>(), [3, 0, 1, 0, 2, 0, 1, 0]);
        // 5 blocks: block 4 has no sibling below the root's children.
        let size = 5 * BLOCK_LEN;
        assert_eq!((0..5).map(|b| proof_depth(size, b)).collect::<Vec<_>>(), [3, 0, 1, 0, 0]);
        assert_eq!(proof_depth(BLOCK_LEN, 0), 0);
    }

    #[test]
    fn groups_verify_in_order_with_the_upper_part_of_the_in_order_proof() {
        let mut sizes = sizes();
        sizes.extend([16 * BLOCK_LEN as usize, 16 * BLOCK_LEN as usize + 1, 100 * BLOCK_LEN as usize + 3]);
        for n in sizes {
            let data = content(n);
            let ob = Outboard::of(&data);
            for level in 0..6u32 {
                let mut v = Verifier::new(Eid::of(&data), n as u64);
                let mut asked = 0;
                let mut b = 0;
                while b < blocks(n as u64) {
                    let d = group_proof_depth(n as u64, b, level);
                    let inner = group_inner_depth(n as u64, b, level);
                    let proof = if d == 0 {
                        vec![]
                    } else {
                        asked += 1;
                        // What a receiver asks a server for: the in-order proof of block b.
                        assert_eq!(inner + d, proof_depth(n as u64, b), "size {n} level {level} block {b}");
                        ob.proof(b, inner + d).unwrap()[inner..].to_vec()
                    };
                    let m = v.group_blocks(b, level);
                    let s = (b * BLOCK_LEN) as usize;
                    let e = (s + (m * BLOCK_LEN) as usize).min(n);
                    // In pieces of odd sizes: the result must not depend on them.
                    let pieces: Vec<&[u8]> = data[s..e].chunks(1402 * 3).collect();
                    if e - s > 1 {
                        // A flipped bit fails and leaves the verifier where it was.
                        let mut bad = data[s..e].to_vec();
                        bad[(e - s) / 2] ^= 1;
                        assert!(v.clone().verify_group(b, level, &[&bad], &proof).is_err());
                    }
                    v.verify_group(b, level, &pieces, &proof)
                        .unwrap_or_else(|e| panic!("size {n} level {level} block {b}: {e}"));
                    b += m;
                }
                assert_eq!(v.verified_bytes(), n as u64);
                // Proofs needed: one per 2^(level+1) blocks or so, none for objects within one group.
                if blocks(n as u64) <= 1 << level {
                    assert_eq!(asked, 0, "size {n} level {level}");
                } else {
                    assert!(asked as u64 <= blocks(n as u64).div_ceil(1 << level), "size {n} level {level}: {asked}");
                }
            }
        }
    }
}
