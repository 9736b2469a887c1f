//! Verify before caching (issue 11): a router keeps a unit only after every 16 KiB block it
//! overlaps has been checked against the object's EID.
//!
//! Data from upstream is forwarded at once (receivers verify for themselves), and a copy of
//! each unit that answered a pending entry goes to *staging*. Staging assembles the
//! [`BLOCK_LEN`] blocks the units cover; when a block is whole, its chaining value is
//! checked with [`check_block`] against the tree nodes this router already knows. If some
//! are missing, the router asks the node the Data came from for a proof of that block
//! (`ProofRequest`, [`sparse_depth`] siblings) and checks it when the Proof arrives. A
//! verified block releases the units that wait only on it into the content store, and its
//! path's nodes are remembered, so later blocks of the object need short proofs (about one
//! sibling each for a sequential fetch, as a receiver's). A block that fails — a wrong byte,
//! two units disagreeing where they overlap, a forged proof — takes every unit over it out
//! of staging: none of them is cached.
//!
//! Everything is bounded and nothing is per receiver: staging holds at most
//! [`VerifyConfig::staging_bytes`] (oldest blocks abandoned first: their units are simply not
//! cached), and the known nodes at most [`VerifyConfig::known_nodes`] (oldest forgotten: a
//! later block then needs a longer proof). No I/O here: the router sends the proof requests
//! this module asks for.
//!
//! The router's side of it is at the end of this file: `stage` puts a unit that answered a
//! pending entry into staging, `run_steps` does what staging asked (cache a unit, ask for a
//! proof: `request_proof`, timed and asked again by `proofs.rs`), and `on_own_proof` takes
//! the answer.

use std::collections::VecDeque;
use std::collections::hash_map::Entry;
use std::net::SocketAddr;

use crate::eid::Eid;
use crate::time::Time;
use crate::token::MAX_TOKEN_LEN;
use crate::tree::{BLOCK_LEN, Cv, block_cv, blocks, check_block, proof_nodes, sparse_depth};
use crate::wire::tlv::address_token_len;
use crate::wire::{self, OptionsWriter, ProofRequest, RequestFlags};

use super::hashing::{Map, TableHasher, map};
use super::proofs;
use super::{CachedUnit, Router};

/// Bounds of a router's verification state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyConfig {
    /// Most bytes of unverified blocks and the units waiting on them.
    pub staging_bytes: usize,
    /// Most tree nodes (chaining values) remembered across all objects.
    pub known_nodes: usize,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        // 32 MiB of staging holds ≈ 1000 blocks in flight (two copies each: the block and
        // its units); 65 536 nodes (≈ 5 MiB) cover the paths of a few thousand objects.
        VerifyConfig { staging_bytes: 32 << 20, known_nodes: 65_536 }
    }
}

/// What staging asks of the router.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// A unit whose blocks all verified: into the content store.
    Cache(Eid, u64, CachedUnit),
    /// Block `block` of `eid` is whole but its proof is missing: ask for `depth` siblings.
    Prove { eid: Eid, block: u64, depth: u8 },
}

/// Counters (reported in [`super::RouterStats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct VerifyStats {
    pub verified: u64,
    pub failed: u64,
    pub abandoned: u64,
}

/// A block being assembled from units.
#[derive(Debug)]
struct BlockBuf {
    /// The object's size the units claimed (all must agree).
    size: u64,
    data: Box<[u8]>,
    /// Byte intervals of `data` filled, sorted and disjoint.
    have: Vec<(usize, usize)>,
    /// Offsets of the units that put bytes here.
    units: Vec<u64>,
    /// Waiting for a proof: the block's CV.
    proving: Option<Cv>,
    /// Which opening of this block it is (a block may be opened again after it went).
    serial: u64,
}

impl BlockBuf {
    fn complete(&self) -> bool {
        self.have.first() == Some(&(0, self.data.len()))
    }

    /// Copy `piece` to `at`; false if it disagrees with bytes already there.
    fn fill(&mut self, at: usize, piece: &[u8]) -> bool {
        let end = at + piece.len();
        for &(s, e) in &self.have {
            let (from, to) = (s.max(at), e.min(end));
            if from < to && self.data[from..to] != piece[from - at..to - at] {
                return false;
            }
        }
        self.data[at..end].copy_from_slice(piece);
        self.have.push((at, end));
        self.have.sort_unstable();
        // Merge touching and overlapping intervals in place (no allocation per unit).
        let mut kept = 0usize;
        for i in 0..self.have.len() {
            let (s, e) = self.have[i];
            match kept.checked_sub(1).map(|k| &mut self.have[k]) {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => {
                    self.have[kept] = (s, e);
                    kept += 1;
                }
            }
        }
        self.have.truncate(kept);
        true
    }
}

/// A unit waiting for its blocks.
#[derive(Debug)]
struct Waiting {
    unit: CachedUnit,
    /// Blocks it overlaps that have not verified yet.
    remaining: u8,
}

/// Staging and the known tree nodes of one router.
#[derive(Debug)]
pub(crate) struct Staging {
    cfg: VerifyConfig,
    blocks: Map<(Eid, u64), BlockBuf>,
    /// Blocks in the order they were opened, with their serial (may name blocks gone).
    order: VecDeque<((Eid, u64), u64)>,
    serial: u64,
    units: Map<(Eid, u64), Waiting>,
    bytes: usize,
    known: Map<(Eid, u32, u64), Cv>,
    known_order: VecDeque<(Eid, u32, u64)>,
    /// Sizes of the objects with known nodes (to answer proof requests from them).
    sizes: Map<Eid, u64>,
    /// Buffers of whole blocks that went, for new ones (at most [`SPARE_BLOCKS`]).
    spare: Vec<BlockLists>,
    pub(crate) stats: VerifyStats,
}

/// A whole block's buffers: its bytes, the intervals filled, the units over it.
type BlockLists = (Box<[u8]>, Vec<(usize, usize)>, Vec<u64>);

/// Whole blocks' buffers kept for reuse, beyond [`VerifyConfig::staging_bytes`]: 256 KiB.
const SPARE_BLOCKS: usize = 16;

impl Staging {
    pub(crate) fn new(cfg: VerifyConfig, h: &TableHasher) -> Self {
        Staging {
            cfg,
            blocks: map(h),
            order: VecDeque::new(),
            serial: 0,
            units: map(h),
            bytes: 0,
            known: map(h),
            known_order: VecDeque::new(),
            sizes: map(h),
            spare: Vec::new(),
            stats: VerifyStats::default(),
        }
    }

    /// Bytes held (blocks and waiting units).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Tree nodes remembered.
    pub(crate) fn known_len(&self) -> usize {
        self.known.len()
    }

    /// The `depth` lowest siblings of block `b` of `eid`, bottom-up, 32 bytes each, if this
    /// router knows them all (from blocks it verified): a proof it can answer itself.
    pub(crate) fn siblings(&self, eid: Eid, b: u64, depth: u8) -> Option<Vec<u8>> {
        let size = *self.sizes.get(&eid)?;
        let nodes = proof_nodes(size, b, depth.into())?;
        let mut out = Vec::with_capacity(nodes.len() * 32);
        for (l, j) in nodes {
            out.extend_from_slice(self.known.get(&(eid, l, j))?);
        }
        Some(out)
    }

    /// A unit that answered a pending entry. Pushes what the router must do to `out`.
    pub(crate) fn add(&mut self, eid: Eid, offset: u64, unit: CachedUnit, out: &mut Vec<Step>) {
        let len = unit.payload.len() as u64;
        let size = unit.total_size;
        let Some(end) = offset.checked_add(len).filter(|&e| len > 0 && e <= size) else { return };
        if self.units.contains_key(&(eid, offset)) {
            return; // the same unit again (another pending entry's unit size): staged once
        }
        let (first, last) = (offset / BLOCK_LEN, (end - 1) / BLOCK_LEN);
        let cost = len as usize + (first..=last).map(|b| self.block_cost(eid, b, size)).sum::<usize>();
        if cost > self.cfg.staging_bytes {
            return;
        }
        while self.bytes + cost > self.cfg.staging_bytes {
            let Some((k, serial)) = self.order.pop_front() else { break };
            if self.blocks.get(&k).is_some_and(|b| b.serial == serial) {
                self.drop_block(k);
                self.stats.abandoned += 1;
            }
        }
        if self.order.len() > 2 * self.blocks.len() + 64 {
            let blocks = &self.blocks;
            self.order.retain(|(k, serial)| blocks.get(k).is_some_and(|b| b.serial == *serial));
        }
        let mut ok = true;
        for b in first..=last {
            let buf = match self.blocks.entry((eid, b)) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    let n = (size - b * BLOCK_LEN).min(BLOCK_LEN) as usize;
                    self.bytes += n;
                    self.serial += 1;
                    self.order.push_back(((eid, b), self.serial));
                    // A whole block's buffers come from those of blocks that went (its
                    // bytes are written before they are read: `have` says which are).
                    let (data, have, units) = match self.spare.pop() {
                        Some(s) if n == BLOCK_LEN as usize => s,
                        other => {
                            self.spare.extend(other);
                            (vec![0; n].into_boxed_slice(), Vec::new(), Vec::new())
                        }
                    };
                    let buf = BlockBuf { size, data, have, units, proving: None, serial: self.serial };
                    e.insert(buf)
                }
            };
            if !buf.units.contains(&offset) {
                buf.units.push(offset);
            }
            let (from, to) = (offset.max(b * BLOCK_LEN), end.min((b + 1) * BLOCK_LEN));
            let piece = &unit.payload[(from - offset) as usize..(to - offset) as usize];
            if buf.size != size || !buf.fill((from - b * BLOCK_LEN) as usize, piece) {
                ok = false;
                break;
            }
        }
        self.bytes += len as usize;
        self.units.insert((eid, offset), Waiting { unit, remaining: (last - first + 1) as u8 });
        if !ok {
            // Two units disagree (or claim different sizes): one of them is forged.
            self.fail(eid, first..=last);
            return;
        }
        for b in first..=last {
            self.try_verify(eid, b, out);
        }
    }

    /// The siblings of `block` of `eid` arrived (the answer to a [`Step::Prove`]).
    pub(crate) fn proof(&mut self, eid: Eid, block: u64, siblings: &[Cv], out: &mut Vec<Step>) {
        let Some(buf) = self.blocks.get_mut(&(eid, block)) else { return };
        let Some(cv) = buf.proving.take() else { return };
        let size = buf.size;
        let known = &self.known;
        match check_block(&eid, size, block, cv, siblings, |l, j| known.get(&(eid, l, j)).copied()) {
            Ok(learned) => self.verified(eid, block, learned, out),
            // Nodes this router knew when it asked were forgotten since: ask again.
            Err(crate::tree::VerifyError::ProofLength(_)) => self.try_verify(eid, block, out),
            Err(_) => self.fail(eid, block..=block),
        }
    }

    /// Whether `block` of `eid` is whole and waiting for its proof.
    pub(crate) fn is_proving(&self, eid: Eid, block: u64) -> bool {
        self.blocks.get(&(eid, block)).is_some_and(|b| b.proving.is_some())
    }

    /// The proof request for `block` went unanswered (refused or expired): the block waits
    /// in staging until abandoned.
    pub(crate) fn proof_refused(&mut self, eid: Eid, block: u64) {
        if let Some(buf) = self.blocks.get_mut(&(eid, block)) {
            buf.proving = None;
        }
    }

    /// Bytes a new block of `eid` would take (0 if it is already open).
    fn block_cost(&self, eid: Eid, b: u64, size: u64) -> usize {
        if self.blocks.contains_key(&(eid, b)) || b * BLOCK_LEN >= size {
            0
        } else {
            (size - b * BLOCK_LEN).min(BLOCK_LEN) as usize
        }
    }

    fn try_verify(&mut self, eid: Eid, b: u64, out: &mut Vec<Step>) {
        let Some(buf) = self.blocks.get_mut(&(eid, b)) else { return };
        if !buf.complete() || buf.proving.is_some() {
            return;
        }
        let size = buf.size;
        if blocks(size) == 1 {
            // S0's EID: a one-block object hashes to its EID directly.
            if Eid::of(&buf.data) == eid {
                self.verified(eid, b, Vec::new(), out);
            } else {
                self.fail(eid, b..=b);
            }
            return;
        }
        let cv = block_cv(b, &buf.data);
        let known = &self.known;
        let look = |l, j| known.get(&(eid, l, j)).copied();
        let depth = sparse_depth(size, b, look);
        if depth > 0 {
            buf.proving = Some(cv);
            out.push(Step::Prove { eid, block: b, depth: depth as u8 });
            return;
        }
        match check_block(&eid, size, b, cv, &[], look) {
            Ok(learned) => self.verified(eid, b, learned, out),
            Err(_) => self.fail(eid, b..=b),
        }
    }

    fn verified(&mut self, eid: Eid, b: u64, learned: Vec<(u32, u64, Cv)>, out: &mut Vec<Step>) {
        self.stats.verified += 1;
        if let Some(size) = self.blocks.get(&(eid, b)).map(|buf| buf.size)
            && !learned.is_empty()
        {
            if self.sizes.len() >= self.cfg.known_nodes && !self.sizes.contains_key(&eid) {
                // Forget one: its proofs are forwarded again instead of answered here.
                let victim = *self.sizes.keys().next().expect("non-empty");
                self.sizes.remove(&victim);
            }
            self.sizes.insert(eid, size);
        }
        for (l, j, cv) in learned {
            self.learn((eid, l, j), cv);
        }
        let Some(buf) = self.remove_block((eid, b)) else { return };
        for &offset in &buf.units {
            let Entry::Occupied(mut w) = self.units.entry((eid, offset)) else { continue };
            w.get_mut().remaining -= 1;
            if w.get().remaining == 0 {
                let w = w.remove();
                self.bytes -= w.unit.payload.len();
                out.push(Step::Cache(eid, offset, w.unit));
            }
        }
        self.recycle(buf);
    }

    fn learn(&mut self, key: (Eid, u32, u64), cv: Cv) {
        if self.cfg.known_nodes == 0 {
            return;
        }
        if self.known.insert(key, cv).is_none() {
            self.known_order.push_back(key);
            while self.known.len() > self.cfg.known_nodes {
                let Some(old) = self.known_order.pop_front() else { break };
                self.known.remove(&old);
            }
        }
    }

    /// Blocks `range` of `eid` failed: drop them and every unit over them.
    fn fail(&mut self, eid: Eid, range: std::ops::RangeInclusive<u64>) {
        self.stats.failed += 1;
        for b in range {
            self.drop_block((eid, b));
        }
    }

    fn drop_block(&mut self, k: (Eid, u64)) {
        let Some(buf) = self.remove_block(k) else { return };
        for &offset in &buf.units {
            let Some(w) = self.units.remove(&(k.0, offset)) else { continue };
            self.bytes -= w.unit.payload.len();
            // The unit's other blocks stop waiting for it: a unit staged later at the same
            // offset must not be counted down by them (its bytes there stay, and are checked
            // with the rest of the block).
            let end = offset + w.unit.payload.len() as u64;
            for b in offset / BLOCK_LEN..=(end - 1) / BLOCK_LEN {
                if let Some(other) = self.blocks.get_mut(&(k.0, b)) {
                    other.units.retain(|&o| o != offset);
                }
            }
        }
        self.recycle(buf);
    }

    fn remove_block(&mut self, k: (Eid, u64)) -> Option<BlockBuf> {
        let buf = self.blocks.remove(&k)?;
        self.bytes -= buf.data.len();
        Some(buf)
    }

    /// Keep the buffers of a whole block that went (verified or dropped) for the next one.
    fn recycle(&mut self, buf: BlockBuf) {
        if buf.data.len() == BLOCK_LEN as usize && self.spare.len() < SPARE_BLOCKS {
            let BlockBuf { data, mut have, mut units, .. } = buf;
            have.clear();
            units.clear();
            self.spare.push((data, have, units));
        }
    }
}

// ----- the router's side: staging what arrives, asking for proofs ------------------------

impl Router {
    /// **Experiments only** (feature `unverified-cache`, which only the ns-3 build turns on,
    /// through `rdtp-ffi`'s `experiments`): cache every unit that answers a pending entry as
    /// it arrives, unchecked and without proof requests — the baseline that measures what
    /// verify-before-caching costs (docs/EXPERIMENTS.md §8). A router that does this can be
    /// made to serve forged bytes from its store; `rdtp route` cannot be built to call it
    /// (its crate does not enable the feature, so the method does not exist for it).
    #[cfg(feature = "unverified-cache")]
    pub fn cache_unverified_for_experiments(&mut self, on: bool) {
        self.cache_unverified = on;
    }

    /// A unit that answered a pending entry: to staging, which caches it once its blocks
    /// verified — unless the store caches nothing (switched off: no unit would ever be
    /// cached, so no proof is worth asking for).
    pub(super) fn stage(
        &mut self,
        now: Time,
        from: SocketAddr,
        eid: Eid,
        offset: u64,
        total_size: u64,
        payload: &[u8],
    ) {
        #[cfg(feature = "unverified-cache")]
        if self.cache_unverified {
            self.cs.lock().offer((eid, offset), CachedUnit { total_size, payload: payload.into() });
            return;
        }
        if self.stores_nothing {
            return;
        }
        // The store's own copy of the unit (it moves into the store once verified).
        let value = CachedUnit { total_size, payload: payload.into() };
        let mut steps = std::mem::take(&mut self.steps);
        self.staging.add(eid, offset, value, &mut steps);
        self.run_steps(now, from, &mut steps);
        self.steps = steps;
    }

    /// Do what staging asked: cache verified units, ask `from` (where the Data came from)
    /// for the proofs of whole blocks.
    fn run_steps(&mut self, now: Time, from: SocketAddr, steps: &mut Vec<Step>) {
        for step in steps.drain(..) {
            match step {
                Step::Cache(eid, offset, unit) => {
                    self.cs.lock().offer((eid, offset), unit);
                }
                Step::Prove { eid, block, depth } => self.request_proof(now, from, eid, block, depth),
            }
        }
        let v = self.staging.stats;
        (self.stats.blocks_verified, self.stats.blocks_failed, self.stats.blocks_abandoned) =
            (v.verified, v.failed, v.abandoned);
    }

    /// Ask `to` (where the block's Data came from) for the proof of `block` of `eid`:
    /// `depth` siblings (the first attempt; [`proofs`] times it and asks again).
    pub(super) fn request_proof(&mut self, now: Time, to: SocketAddr, eid: Eid, block: u64, depth: u8) {
        if self.own_proofs.is_asking(eid, block) {
            return;
        }
        if let Some((eid, block)) = self.own_proofs.make_room() {
            // Forget the request with the earliest timeout: its block waits in staging
            // until abandoned.
            self.staging.proof_refused(eid, block);
        }
        let tag = self.send_proof(to, eid, block, depth);
        self.own_proofs.first(now, eid, block, to, depth, tag);
    }

    /// Send another attempt of a request [`proofs`] gave back (after a timeout or a Retry).
    pub(super) fn send_proof_request(&mut self, now: Time, key: (Eid, u64), a: proofs::Asking) {
        let tag = self.send_proof(a.next_hop, key.0, key.1, a.depth);
        self.own_proofs.again(now, key, a, tag);
    }

    /// One ProofRequest to `to`, under a new tag (returned), with the token `to` issued.
    fn send_proof(&mut self, to: SocketAddr, eid: Eid, block: u64, depth: u8) -> u32 {
        let mut tag = self.new_tag();
        while self.own_proofs.uses_tag(tag) {
            tag = self.new_tag();
        }
        let mut opts = [0u8; address_token_len(Some(&[0; MAX_TOKEN_LEN]))];
        let options = OptionsWriter::new(&mut opts).address_token(self.tokens.get(to)).finish();
        let p = ProofRequest {
            flags: RequestFlags(0),
            hop_limit: wire::DEFAULT_HOP_LIMIT,
            tag,
            eid,
            block,
            depth,
            options,
        };
        self.enqueue(to, p.encoded_len(), |b| p.encode(b).ok());
        self.stats.proofs_requested += 1;
        tag
    }

    /// The answer to one of this router's own proof requests (any attempt of it).
    pub(super) fn on_own_proof(&mut self, now: Time, from: SocketAddr, p: &wire::Proof<'_>) {
        let Some(((eid, block), _)) = self.own_proofs.answered(now, p.tag) else { return };
        if p.eid != eid || p.block != block {
            self.stats.unsolicited += 1;
            self.staging.proof_refused(eid, block);
            return;
        }
        let siblings: Vec<crate::tree::Cv> =
            p.siblings.chunks_exact(32).map(|c| c.try_into().expect("32-byte chunks")).collect();
        let mut steps = std::mem::take(&mut self.steps);
        self.staging.proof(eid, block, &siblings, &mut steps);
        self.run_steps(now, from, &mut steps);
        self.steps = steps;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::Outboard;

    fn object(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + i / 5000) as u8).collect()
    }

    fn unit(data: &[u8], offset: usize, len: usize) -> CachedUnit {
        let end = (offset + len).min(data.len());
        CachedUnit { total_size: data.len() as u64, payload: data[offset..end].into() }
    }

    /// Feed `data` in units of `u` bytes in `order`, answering proofs from the outboard
    /// (with `tamper` applied); returns the offsets cached.
    fn run(data: &[u8], u: usize, order: &[usize], cfg: VerifyConfig, tamper: impl Fn(&mut Vec<Cv>)) -> Vec<u64> {
        let eid = Eid::of(data);
        let ob = Outboard::of(data);
        let mut s = Staging::new(cfg, &TableHasher::default());
        let mut cached = vec![];
        for &k in order {
            let mut out = vec![];
            s.add(eid, (k * u) as u64, unit(data, k * u, u), &mut out);
            while let Some(step) = out.pop() {
                match step {
                    Step::Cache(e, o, c) => {
                        assert_eq!(e, eid);
                        assert_eq!(&data[o as usize..o as usize + c.payload.len()], &c.payload[..]);
                        cached.push(o);
                    }
                    Step::Prove { block, depth, .. } => {
                        let mut p = ob.proof(block, depth.into()).unwrap();
                        tamper(&mut p);
                        s.proof(eid, block, &p, &mut out);
                    }
                }
            }
        }
        assert!(s.bytes() <= cfg.staging_bytes);
        cached.sort_unstable();
        cached
    }

    #[test]
    fn every_unit_is_cached_once_its_blocks_verify_in_any_order() {
        let data = object(10 * BLOCK_LEN as usize + 333);
        let u = 1402;
        let n = data.len().div_ceil(u);
        let all: Vec<u64> = (0..n).map(|k| (k * u) as u64).collect();
        let forward: Vec<usize> = (0..n).collect();
        let backward: Vec<usize> = (0..n).rev().collect();
        let interleaved: Vec<usize> = (0..n).step_by(2).chain((1..n).step_by(2)).collect();
        for order in [forward, backward, interleaved] {
            assert_eq!(run(&data, u, &order, VerifyConfig::default(), |_| {}), all);
        }
        // A one-block object: no proof, the bytes hash to the EID.
        let small = object(5000);
        assert_eq!(run(&small, 1000, &[4, 0, 2, 1, 3], VerifyConfig::default(), |_| {}), [0, 1000, 2000, 3000, 4000]);
        // Half the units: no block whole except those fully covered.
        let some: Vec<usize> = (0..n / 2).collect();
        let cached = run(&data, u, &some, VerifyConfig::default(), |_| {});
        let whole_blocks = ((n / 2) * u) as u64 / BLOCK_LEN;
        assert!(cached.iter().all(|&o| o + u as u64 <= whole_blocks * BLOCK_LEN), "only units of whole blocks");
        assert!(!cached.is_empty());
    }

    #[test]
    fn a_forged_proof_or_byte_caches_nothing_of_its_block() {
        let data = object(4 * BLOCK_LEN as usize);
        let u = 1024;
        let order: Vec<usize> = (0..data.len() / u).collect();
        let cached = run(&data, u, &order, VerifyConfig::default(), |p| p[0][0] ^= 1);
        assert!(cached.is_empty(), "every proof forged: nothing verified, {cached:?}");
        // One wrong byte in block 2's units.
        let eid = Eid::of(&data);
        let ob = Outboard::of(&data);
        let mut s = Staging::new(VerifyConfig::default(), &TableHasher::default());
        let mut cached = vec![];
        for k in 0..data.len() / u {
            let mut c = unit(&data, k * u, u);
            if k == 2 * (BLOCK_LEN as usize / u) + 3 {
                c.payload[7] ^= 0x20;
            }
            let mut out = vec![];
            s.add(eid, (k * u) as u64, c, &mut out);
            while let Some(step) = out.pop() {
                match step {
                    Step::Cache(_, o, _) => cached.push(o),
                    Step::Prove { block, depth, .. } => {
                        s.proof(eid, block, &ob.proof(block, depth.into()).unwrap(), &mut out)
                    }
                }
            }
        }
        let block_of = |o: u64| o / BLOCK_LEN;
        assert!(cached.iter().all(|&o| block_of(o) != 2));
        assert_eq!(cached.len(), 3 * (BLOCK_LEN as usize / u));
        assert_eq!(s.stats.failed, 1);
        assert_eq!(s.bytes(), 0);
    }

    #[test]
    fn units_that_disagree_where_they_overlap_are_dropped() {
        let data = object(3 * BLOCK_LEN as usize);
        let eid = Eid::of(&data);
        let mut s = Staging::new(VerifyConfig::default(), &TableHasher::default());
        let mut out = vec![];
        s.add(eid, 0, unit(&data, 0, 1000), &mut out);
        // Another unit size, overlapping the first, with a different byte in the overlap.
        let mut c = unit(&data, 500, 1000);
        c.payload[0] ^= 1;
        s.add(eid, 500, c, &mut out);
        assert_eq!(s.stats.failed, 1);
        assert_eq!(s.bytes(), 0);
        // A unit claiming another object size for the same EID.
        s.add(eid, 0, unit(&data, 0, 1000), &mut out);
        let mut c = unit(&data, 1000, 1000);
        c.total_size += 1;
        s.add(eid, 1000, c, &mut out);
        assert_eq!(s.stats.failed, 2);
        assert!(out.is_empty());
    }

    #[test]
    fn a_unit_dropped_with_one_block_is_not_counted_down_by_another() {
        let data = object(3 * BLOCK_LEN as usize);
        let eid = Eid::of(&data);
        let ob = Outboard::of(&data);
        let b = BLOCK_LEN as usize;
        let mut s = Staging::new(VerifyConfig::default(), &TableHasher::default());
        let mut cached = vec![];
        let mut add = |s: &mut Staging, offset: usize, c: CachedUnit| {
            let mut out = vec![];
            s.add(eid, offset as u64, c, &mut out);
            while let Some(st) = out.pop() {
                match st {
                    Step::Cache(_, o, _) => cached.push(o),
                    Step::Prove { block, depth, .. } => {
                        s.proof(eid, block, &ob.proof(block, depth.into()).unwrap(), &mut out)
                    }
                }
            }
        };
        // A straddler over blocks 0 and 1, then a wrong rest of block 0: block 0 fails its
        // proof and takes the straddler with it; block 1 stays open.
        add(&mut s, b - 100, unit(&data, b - 100, 200));
        let mut bad = unit(&data, 0, b - 100);
        bad.payload[5] ^= 1;
        add(&mut s, 0, bad);
        assert_eq!(s.stats.failed, 1);
        // A shorter unit at the straddler's offset (block 0 only), then the rest of block 1:
        // block 1 verifies, and must not release the new unit, which waits on block 0.
        add(&mut s, b - 100, unit(&data, b - 100, 100));
        add(&mut s, b + 100, unit(&data, b + 100, b - 100));
        assert_eq!(s.stats.verified, 1, "block 1");
        assert_eq!(cached, [(b + 100) as u64], "only the unit inside block 1");
    }

    #[test]
    fn staging_and_known_nodes_stay_within_their_bounds() {
        let data = object(64 * BLOCK_LEN as usize);
        let u = 1000;
        // Every other unit: no block is ever whole, staging fills and abandons the oldest.
        let order: Vec<usize> = (0..data.len() / u).step_by(2).collect();
        let cfg = VerifyConfig { staging_bytes: 4 * BLOCK_LEN as usize, known_nodes: 8 };
        assert!(run(&data, u, &order, cfg, |_| {}).is_empty());
        // All units with a tiny memory of nodes: longer proofs, still every unit cached.
        let order: Vec<usize> = (0..data.len().div_ceil(u)).collect();
        let cached = run(&data, u, &order, cfg, |_| {});
        assert_eq!(cached.len(), order.len());
        let eid = Eid::of(&data);
        let mut s = Staging::new(cfg, &TableHasher::default());
        for b in 0..64u64 {
            let mut out = vec![];
            let start = (b * BLOCK_LEN) as usize;
            s.add(eid, start as u64, unit(&data, start, BLOCK_LEN as usize), &mut out);
            for st in out {
                if let Step::Prove { block, depth, .. } = st {
                    s.proof(eid, block, &Outboard::of(&data).proof(block, depth.into()).unwrap(), &mut vec![]);
                }
            }
            assert!(s.known_len() <= 8);
        }
    }
}
