//! Reordering, verification and in-order delivery (seed 000 §3.2; issue 11): units that
//! arrive ahead of `req_una` wait in an ordered map keyed by unit; when the gap fills,
//! consecutive bytes are copied into per-block buffers (`pending`) where they wait until
//! their 16 KiB block verifies against the EID (`crate::tree`); a verified block's buffer
//! then moves, without a copy, to the receive queue the application reads from.
//!
//! Blocks are verified [`MAX_GROUP_LEVEL`] levels up the tree at once, 16 blocks (256 KiB)
//! of them (fewer with a receive window under 1 MiB, see [`group_level`]), after a ramp:
//! the first groups are blocks 0, 1, 2–3, 4–7 and 8–15 ([`Reassembly::group_at`]), so the
//! first bytes reach the application once one block has verified, not a whole group (at
//! 6 Mbit/s a 256 KiB group is a third of a second), and the ramp needs no proof beyond
//! block 0's, whose siblings cover it. The group's
//! subtree is hashed from its bytes, so only groups whose path needs a sibling beyond the
//! group ask the server for a proof — one ProofRequest and one Proof per 512 KiB or so
//! instead of one per 32 KiB (issue 12: each is a datagram both ways). The proof asked for
//! is still a block's in-order proof, as the wire format defines it; its siblings inside
//! the group are skipped.
//!
//! **A group that fails is narrowed to its bad blocks** (issue 23 item 7): its bytes stay,
//! and each of its blocks is checked alone ([`Verifier::check_block`]) with a proof of its
//! own up to a node the verifier knows (at most 4 + the group's siblings; asked of the
//! origin, all at once). Only the blocks that fail are dropped ([`Verdict::bad`]) and their
//! units fetched again — the blocks around them keep their bytes, and units wholly inside
//! them are not asked for again. The receiver counts failures per 16 KiB block. Once every
//! block of the group checked good, the group verifies with the upper part of its first
//! block's proof (which that block's check proved), and verification goes on in groups.
//! A one-block group that fails is that block.
//!
//! **A bad block is repaired from its earlier copies when it can be.** Corruption on the
//! way (a bad link, a flaky cache) changes whole Data packets — units — and rarely the
//! same one in every copy: the bytes of a block that failed are kept (the last
//! [`KEPT_COPIES`]), and when the copy fetched again fails too, the combinations of the
//! copies' differing units are checked (at most [`MAX_REPAIRS`] hashes of 16 KiB). A copy
//! that fails again with exactly the bytes of a kept one is a *repeat*: its source serves
//! those bytes ([`Verdict::bad`] says so, and the receiver fails the fetch after the third
//! such failure); one byte flipped in 5 % of Data packets (a block of 12–17 units is then
//! bad half the time) costs re-fetches, not the fetch.
//!
//! Each in-order byte is copied once here (datagram → block buffer) and once out
//! ([`Reassembly::read`]); buffers are recycled, so a steady transfer allocates nothing
//! (issue 12: the former single `Vec` drained from the front moved every waiting byte once
//! per block, and a second queue copied every byte again).

use std::collections::{BTreeMap, VecDeque};

use crate::eid::Eid;
use crate::tree::{BLOCK_LEN, Cv, Verifier, group_inner_depth, group_proof_depth};

/// What verification found, for the receiver to act on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// A group failed as a whole: these are its blocks, each to be checked alone, for which
    /// a proof is wanted ([`Reassembly::wanted_proof_depth`]).
    pub(crate) narrow: Vec<u64>,
    /// Blocks whose bytes did not match (their bytes are dropped): fetch their units
    /// ([`Reassembly::units_of_block`]) and their proofs again. With each, whether its bytes
    /// were those of an earlier failed copy (its source serves them).
    pub(crate) bad: Vec<(u64, bool)>,
}

impl Verdict {
    pub(crate) fn is_empty(&self) -> bool {
        self.narrow.is_empty() && self.bad.is_empty()
    }
}

/// A group being narrowed to its bad blocks.
#[derive(Clone, Copy, Debug)]
struct Narrowing {
    /// Its first block and its number of blocks (≤ 2^MAX_GROUP_LEVEL).
    first: u64,
    blocks: u64,
    /// Blocks of it that checked good alone (bit i: block `first + i`).
    good: u64,
}

/// Blocks are verified in groups of up to `2^MAX_GROUP_LEVEL` (16 blocks, 256 KiB)...
pub(crate) const MAX_GROUP_LEVEL: u32 = 4;
/// ... and at most a quarter of the receive window, which counts unverified bytes: a
/// group that could not fit would never verify.
const GROUPS_PER_WINDOW: u64 = 4;

/// The group level for a receive window of `recv_window` bytes.
pub(crate) fn group_level(recv_window: u64) -> u32 {
    (0..=MAX_GROUP_LEVEL).rev().find(|&l| (BLOCK_LEN << l) * GROUPS_PER_WINDOW <= recv_window).unwrap_or(0)
}

/// Most empty block buffers kept for reuse (1 MiB).
const SPARE_BUFFERS: usize = 64;

/// Failed copies of a block kept to repair it from.
pub(crate) const KEPT_COPIES: usize = 4;
/// Most combinations of a bad block's copies checked to repair it.
pub(crate) const MAX_REPAIRS: usize = 256;

#[derive(Debug)]
pub(crate) struct Reassembly {
    unit: u64,
    size: u64,
    /// Next unit expected in order (`req_una`): every unit before it is in place (or, while
    /// a block is fetched again, every unit before it that is not in a dropped block).
    una: u64,
    /// End of the contiguous bytes received (without verification; with it, each block's
    /// buffer holds the block's first bytes).
    have: u64,
    ofo: BTreeMap<u64, Box<[u8]>>,
    ofo_bytes: u64,
    /// Contiguous bytes from the verified prefix to `have`, not yet verified: one buffer
    /// per block, `pending[i]` holding (the first bytes of) block `next_block + i`.
    pending: VecDeque<Vec<u8>>,
    /// Proofs that arrived for blocks not yet verified.
    proofs: BTreeMap<u64, Vec<Cv>>,
    /// Verified (or, without verification, in-order) bytes for the application: whole
    /// buffers, the first `ready_off` bytes of the front one already read.
    ready: VecDeque<Vec<u8>>,
    ready_off: usize,
    ready_len: usize,
    spare: Vec<Vec<u8>>,
    /// `None`: delivered unverified (verification off).
    verifier: Option<Verifier>,
    /// Blocks verify in groups of `2^level`.
    level: u32,
    /// The group being narrowed to its bad blocks, if one failed.
    narrow: Option<Narrowing>,
    /// Earlier copies of blocks that failed, by block (at most [`KEPT_COPIES`] each).
    copies: BTreeMap<u64, Vec<Vec<u8>>>,
    /// Blocks repaired from their copies so far.
    repaired: u64,
    /// Bytes moved into `ready` so far.
    delivered: u64,
}

impl Reassembly {
    pub(crate) fn new(unit: u16, eid: Eid, size: u64, verify: bool, recv_window: u64) -> Self {
        Reassembly {
            unit: u64::from(unit),
            size,
            una: 0,
            have: 0,
            ofo: BTreeMap::new(),
            ofo_bytes: 0,
            pending: VecDeque::new(),
            proofs: BTreeMap::new(),
            ready: VecDeque::new(),
            ready_off: 0,
            ready_len: 0,
            spare: Vec::new(),
            verifier: verify.then(|| Verifier::new(eid, size)),
            level: group_level(recv_window),
            narrow: None,
            copies: BTreeMap::new(),
            repaired: 0,
            delivered: 0,
        }
    }

    /// First unit not received in order.
    pub(crate) fn una(&self) -> u64 {
        self.una
    }

    /// First unit not wholly verified (all of them once the object is): the window may
    /// forget units below it.
    pub(crate) fn verified_una(&self) -> u64 {
        match &self.verifier {
            None => self.una,
            Some(v) if v.verified_bytes() == self.size => self.units(),
            Some(v) => v.verified_bytes() / self.unit,
        }
    }

    /// Number of units in the object.
    pub(crate) fn units(&self) -> u64 {
        self.size.div_ceil(self.unit)
    }

    /// Payload length of unit `u`.
    pub(crate) fn unit_len(&self, u: u64) -> u64 {
        (self.size - u * self.unit).min(self.unit)
    }

    /// How many siblings to ask the server for in block `b`'s proof: 0 if the block does not
    /// start a group, if its group needs no sibling from outside (most groups do not), or
    /// if verification is off; else block `b`'s whole in-order proof
    /// ([`crate::tree::proof_depth`]), of which the group uses the upper part.
    pub(crate) fn proof_depth(&self, b: u64) -> usize {
        if self.verifier.is_none() {
            return 0;
        }
        let Some(level) = self.group_at(b) else { return 0 };
        match group_proof_depth(self.size, b, level) {
            0 => 0,
            d => d + group_inner_depth(self.size, b, level),
        }
    }

    /// The level of the group that starts at block `b`, `None` if none starts there. Groups
    /// ramp up to `2^level` blocks: blocks 0, 1, 2–3, 4–7, … (each a power of two long and
    /// aligned to it, as [`Verifier::verify_group`] needs), then every `2^level` blocks.
    pub(crate) fn group_at(&self, b: u64) -> Option<u32> {
        let full = 1u64 << self.level;
        if b >= full {
            b.is_multiple_of(full).then_some(self.level)
        } else if b == 0 {
            Some(0)
        } else {
            b.is_power_of_two().then(|| b.trailing_zeros())
        }
    }

    /// The level of the group starting at block `b`, the next to verify (always a group's
    /// first block).
    fn level_of(&self, b: u64) -> u32 {
        debug_assert!(self.group_at(b).is_some(), "block {b} does not start a group");
        self.group_at(b).unwrap_or(0)
    }

    /// The proof wanted for block `b` now, as a number of siblings (0: none): while its group
    /// is narrowed and it has not checked good, its own proof up to a node the verifier knows
    /// ([`Verifier::check_depth`]); else its group's ([`Reassembly::proof_depth`]).
    pub(crate) fn wanted_proof_depth(&self, b: u64) -> usize {
        match (&self.verifier, &self.narrow) {
            (Some(v), Some(n)) if (n.first..n.first + n.blocks).contains(&b) => {
                if n.good & (1 << (b - n.first)) != 0 {
                    0
                } else {
                    v.check_depth(b)
                }
            }
            _ => self.proof_depth(b),
        }
    }

    /// The buffer of block `b` (at or after the next to verify), if it has one yet.
    fn block_buf(&self, v: &Verifier, b: u64) -> Option<&Vec<u8>> {
        b.checked_sub(v.next_block()).and_then(|i| self.pending.get(i as usize))
    }

    /// Whether every byte of block `b` is here (or it verified already).
    fn block_full(&self, v: &Verifier, b: u64) -> bool {
        b < v.next_block() || self.block_buf(v, b).is_some_and(|p| p.len() as u64 == v.block_len(b))
    }

    /// Whether every byte of the group starting at block `b` (the next to verify) is here.
    fn group_complete(&self, v: &Verifier, b: u64) -> bool {
        let m = v.group_blocks(b, self.level_of(b));
        // Blocks fill in order, so the last one is the first to test: while a group is
        // arriving (most calls, one per in-order unit) this answers in one look.
        m > 0 && self.block_full(v, b + m - 1) && (b..b + m - 1).all(|k| self.block_full(v, k))
    }

    /// The block verification waits for, if its bytes are all here but its proof is not: the
    /// next group's first block, or while a group is narrowed, one of its blocks.
    pub(crate) fn waiting_for_proof(&self) -> Option<u64> {
        let v = self.verifier.as_ref()?;
        if let Some(n) = &self.narrow {
            return (n.first..n.first + n.blocks).find(|&b| {
                n.good & (1 << (b - n.first)) == 0 && self.block_full(v, b) && !self.proofs.contains_key(&b)
            });
        }
        let b = v.next_block();
        let complete = b < crate::tree::blocks(self.size) && self.group_complete(v, b);
        (complete && self.proof_depth(b) > 0 && !self.proofs.contains_key(&b)).then_some(b)
    }

    /// Whether every byte of unit `u` is in place (with verification: in verified blocks or
    /// in the buffers of the blocks it overlaps).
    fn present(&self, u: u64) -> bool {
        let Some(v) = self.verifier.as_ref() else { return u < self.una };
        let start = u * self.unit;
        let end = (start + self.unit).min(self.size);
        (start / BLOCK_LEN..end.div_ceil(BLOCK_LEN)).all(|k| {
            let need = end.min((k + 1) * BLOCK_LEN) - k * BLOCK_LEN;
            k < v.next_block() || self.block_buf(v, k).is_some_and(|p| p.len() as u64 >= need)
        })
    }

    /// Store unit `u` (not yet received). Returns whether it was the next in order, and
    /// what verification found.
    pub(crate) fn insert(&mut self, u: u64, payload: &[u8]) -> (bool, Verdict) {
        if u != self.una {
            self.ofo_bytes += payload.len() as u64;
            self.ofo.insert(u, payload.into());
            return (false, Verdict::default());
        }
        self.append(u, payload);
        self.una += 1;
        loop {
            // Units whose bytes are all in place (around a block fetched again) are passed.
            while self.una < self.units() && self.verifier.is_some() && self.present(self.una) {
                if let Some(p) = self.ofo.remove(&self.una) {
                    self.ofo_bytes -= p.len() as u64;
                }
                self.una += 1;
            }
            let Some(p) = self.ofo.remove(&self.una) else { break };
            self.ofo_bytes -= p.len() as u64;
            self.append(self.una, &p);
            self.una += 1;
        }
        (true, self.verify())
    }

    /// A proof for block `b` arrived (checked for length by the caller). Returns what
    /// verification found.
    pub(crate) fn add_proof(&mut self, b: u64, cvs: Vec<Cv>) -> Verdict {
        if self.verifier.as_ref().is_some_and(|v| b >= v.next_block()) {
            self.proofs.insert(b, cvs);
        }
        self.verify()
    }

    fn recycle(&mut self, mut b: Vec<u8>) {
        if self.spare.len() < SPARE_BUFFERS && b.capacity() == BLOCK_LEN as usize {
            b.clear();
            self.spare.push(b);
        }
    }

    fn append(&mut self, u: u64, payload: &[u8]) {
        if self.verifier.is_none() {
            return self.append_ready(u, payload);
        }
        // Bytes go to the buffer of their block, each block filled from its start; bytes
        // already there (verified, or in a block kept while a neighbour is fetched again)
        // are skipped.
        let next = self.verifier.as_ref().map_or(0, Verifier::next_block);
        let mut at = u * self.unit;
        let mut rest = payload;
        self.have = self.have.max(at + payload.len() as u64);
        while !rest.is_empty() {
            let k = at / BLOCK_LEN;
            let off = (at % BLOCK_LEN) as usize;
            let n = rest.len().min(BLOCK_LEN as usize - off);
            if k >= next {
                let i = (k - next) as usize;
                while self.pending.len() <= i {
                    let b = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(BLOCK_LEN as usize));
                    self.pending.push_back(b);
                }
                let buf = &mut self.pending[i];
                let have = buf.len();
                // `have < off` cannot happen: units join a block in order, and a unit is
                // appended only once the units before it are in place.
                if have >= off && have < off + n {
                    buf.extend_from_slice(&rest[have - off..n]);
                }
            }
            rest = &rest[n..];
            at += n as u64;
        }
    }

    /// Without verification: bytes go straight to the application's queue, in order.
    fn append_ready(&mut self, u: u64, payload: &[u8]) {
        let start = u * self.unit;
        let skip = (self.have.saturating_sub(start) as usize).min(payload.len());
        let mut fresh = &payload[skip..];
        let mut at = start + skip as u64;
        self.have = start + payload.len() as u64;
        while !fresh.is_empty() {
            // A buffer is never longer than its block, so the buffers stay aligned with them.
            let room = (BLOCK_LEN - at % BLOCK_LEN) as usize;
            if at.is_multiple_of(BLOCK_LEN) || self.ready.is_empty() {
                let b = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(BLOCK_LEN as usize));
                self.ready.push_back(b);
            }
            let n = fresh.len().min(room);
            self.ready.back_mut().expect("a buffer was pushed").extend_from_slice(&fresh[..n]);
            self.ready_len += n;
            self.delivered += n as u64;
            fresh = &fresh[n..];
            at += n as u64;
        }
    }

    /// The siblings inside block `b`'s group, which its in-order proof carries first and
    /// group verification skips: a walk up the tree, so asked for only once the group is
    /// ready to verify (not on each in-order unit).
    fn inner_depth(&self, b: u64) -> usize {
        group_inner_depth(self.size, b, self.level_of(b))
    }

    /// Verify every group whose bytes and proof are here, in order; narrow a group that
    /// fails to its bad blocks.
    fn verify(&mut self) -> Verdict {
        let mut verdict = Verdict::default();
        loop {
            let Some(v) = self.verifier.as_ref() else { return verdict };
            let b = v.next_block();
            if b >= crate::tree::blocks(self.size) {
                return verdict;
            }
            let level = self.level_of(b);
            let m = v.group_blocks(b, level);
            let proof = if let Some(n) = self.narrow {
                if !self.check_narrowed(n, &mut verdict) {
                    return verdict;
                }
                // Every block checked good: the first one's proof (which its check proved)
                // carries the group's siblings above it.
                self.narrow = None;
                let p = self.proofs.remove(&b).unwrap_or_default();
                p[self.inner_depth(b).min(p.len())..].to_vec()
            } else {
                if !self.group_complete(v, b) {
                    return verdict;
                }
                match self.proof_depth(b) {
                    0 => Vec::new(),
                    _ => match self.proofs.remove(&b) {
                        Some(p) => p[self.inner_depth(b).min(p.len())..].to_vec(),
                        None => return verdict,
                    },
                }
            };
            let pieces: Vec<&[u8]> = self.pending.iter().take(m as usize).map(Vec::as_slice).collect();
            let v = self.verifier.as_mut().expect("verifying");
            if v.verify_group(b, level, &pieces, &proof).is_err() {
                // A group of one block: its proof is the block's own, so its earlier
                // copies may repair it.
                if m == 1
                    && let Some(fixed) = self.repair(b, &proof)
                {
                    self.pending[0] = fixed;
                    self.repaired += 1;
                    self.proofs.insert(b, proof);
                    continue;
                }
                if m == 1 {
                    // A group of one block: that block (or its proof) is bad.
                    let repeat = self.drop_block(b);
                    verdict.bad.push((b, repeat));
                } else {
                    self.narrow = Some(Narrowing { first: b, blocks: m, good: 0 });
                    for k in b..b + m {
                        self.proofs.remove(&k);
                    }
                    verdict.narrow.extend(b..b + m);
                }
                return verdict;
            }
            for k in b..b + m {
                self.proofs.remove(&k);
            }
            for block in self.pending.drain(..m as usize) {
                self.ready_len += block.len();
                self.delivered += block.len() as u64;
                self.ready.push_back(block);
            }
        }
    }

    /// Check alone every block of the narrowed group whose bytes and proof are here; drop
    /// those that fail. Returns whether every block of the group has checked good.
    fn check_narrowed(&mut self, mut n: Narrowing, verdict: &mut Verdict) -> bool {
        let Some(v) = self.verifier.as_ref() else { return false };
        let mut bad = Vec::new();
        for k in n.first..n.first + n.blocks {
            let bit = 1u64 << (k - n.first);
            if n.good & bit != 0 || !self.block_full(v, k) {
                continue;
            }
            let Some(proof) = self.proofs.get(&k) else { continue };
            let bytes = self.block_buf(v, k).expect("a full block has a buffer");
            if v.check_block(k, bytes, proof).is_ok() {
                n.good |= bit;
            } else if let Some(fixed) = self.repair(k, proof) {
                let i = (k - v.next_block()) as usize;
                self.pending[i] = fixed;
                self.repaired += 1;
                n.good |= bit;
            } else {
                bad.push(k);
            }
        }
        for k in bad {
            self.proofs.remove(&k);
            let repeat = self.drop_block(k);
            verdict.bad.push((k, repeat));
        }
        self.narrow = Some(n);
        n.good.count_ones() as u64 == n.blocks
    }

    /// Block `b` (not verified) is bad: drop its bytes, keeping them as a copy to repair it
    /// from; the units overlapping it are to be received again
    /// ([`Reassembly::units_of_block`]). Returns whether these bytes were those of an
    /// earlier failed copy.
    fn drop_block(&mut self, b: u64) -> bool {
        let Some(v) = self.verifier.as_ref() else { return false };
        let Some(i) = b.checked_sub(v.next_block()) else { return false };
        let next = v.next_block();
        // Copies of blocks verified since are of no more use.
        self.copies.retain(|&k, _| k >= next);
        let mut repeat = false;
        if let Some(buf) = self.pending.get_mut(i as usize) {
            let copies = self.copies.entry(b).or_default();
            repeat = copies.contains(buf);
            if !repeat {
                if copies.len() == KEPT_COPIES {
                    copies.remove(0);
                }
                copies.push(buf.clone());
            }
            buf.clear();
        }
        self.una = self.una.min(b * BLOCK_LEN / self.unit);
        repeat
    }

    /// Block `b`'s bytes failed with `proof`: check the combinations of its units from its
    /// earlier failed copies (where they differ from these bytes), at most
    /// [`MAX_REPAIRS`]; the first that checks good is the block.
    fn repair(&self, b: u64, proof: &[Cv]) -> Option<Vec<u8>> {
        let v = self.verifier.as_ref()?;
        let copies = self.copies.get(&b)?;
        let now = self.block_buf(v, b)?;
        let start = b * BLOCK_LEN;
        let len = now.len();
        // The block's pieces, one per unit it overlaps, and their distinct versions.
        let mut cuts: Vec<usize> = vec![0];
        cuts.extend(self.units_of_block(b).skip(1).map(|u| (u * self.unit - start) as usize));
        cuts.push(len);
        let mut choices: Vec<(usize, usize, Vec<&[u8]>)> = Vec::new();
        let mut combos = 1usize;
        for w in cuts.windows(2) {
            let (a, z) = (w[0], w[1]);
            let mut versions: Vec<&[u8]> = vec![&now[a..z]];
            for c in copies.iter().filter(|c| c.len() == len) {
                if !versions.contains(&&c[a..z]) {
                    versions.push(&c[a..z]);
                }
            }
            if versions.len() > 1 {
                combos = combos.saturating_mul(versions.len());
                choices.push((a, z, versions));
            }
        }
        if choices.is_empty() || combos > MAX_REPAIRS {
            return None;
        }
        let mut candidate = now.clone();
        // Every combination but the one checked already (all pieces from `now`).
        for mut i in 1..combos {
            for (a, z, versions) in &choices {
                candidate[*a..*z].copy_from_slice(versions[i % versions.len()]);
                i /= versions.len();
            }
            if v.check_block(b, &candidate, proof).is_ok() {
                return Some(candidate);
            }
        }
        None
    }

    /// Blocks repaired from their earlier copies so far.
    pub(crate) fn repaired(&self) -> u64 {
        self.repaired
    }

    /// The units overlapping block `b`.
    pub(crate) fn units_of_block(&self, b: u64) -> core::ops::Range<u64> {
        let start = b * BLOCK_LEN;
        let end = ((b + 1) * BLOCK_LEN).min(self.size);
        start / self.unit..end.div_ceil(self.unit)
    }

    /// Copy in-order bytes into `buf`.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> usize {
        let mut n = 0;
        while n < buf.len() {
            let Some(front) = self.ready.front() else { break };
            let from = &front[self.ready_off..];
            let k = from.len().min(buf.len() - n);
            buf[n..n + k].copy_from_slice(&from[..k]);
            n += k;
            self.ready_off += k;
            // Without verification the back buffer may still grow: keep it until full.
            let growing = self.verifier.is_none() && self.ready.len() == 1 && front.len() < BLOCK_LEN as usize;
            if self.ready_off == front.len() && !growing {
                let done = self.ready.pop_front().expect("front exists");
                self.ready_off = 0;
                self.recycle(done);
            } else if k == 0 {
                break;
            }
        }
        self.ready_len -= n;
        n
    }

    /// Move ready bytes, as whole buffers and without copying them, into `out`: at least
    /// one buffer if any is ready, then more while the total stays within `max`. Returns
    /// the bytes moved. The buffers `out` held are taken back for reuse first.
    pub(crate) fn take(&mut self, max: usize, out: &mut Vec<Vec<u8>>) -> usize {
        for b in out.drain(..) {
            self.recycle(b);
        }
        let mut n = 0;
        while let Some(front) = self.ready.front() {
            let len = front.len() - self.ready_off;
            if n > 0 && n + len > max {
                break;
            }
            let mut b = self.ready.pop_front().expect("front exists");
            if self.ready_off > 0 {
                b.drain(..self.ready_off);
                self.ready_off = 0;
            }
            if b.is_empty() {
                self.recycle(b);
                continue;
            }
            n += b.len();
            out.push(b);
        }
        self.ready_len -= n;
        n
    }

    /// Bytes ready for the application.
    pub(crate) fn readable(&self) -> usize {
        self.ready_len
    }
    /// Bytes delivered (verified, when verifying) so far.
    pub(crate) fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Every byte arrived, and verified when verifying.
    pub(crate) fn is_complete(&self) -> bool {
        match &self.verifier {
            Some(v) => v.verified_bytes() == self.size,
            None => self.una >= self.units(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{BLOCK_LEN, Outboard};

    fn drain(r: &mut Reassembly) -> Vec<u8> {
        let mut out = vec![0u8; 7];
        let mut all = vec![];
        loop {
            let n = r.read(&mut out);
            if n == 0 {
                break;
            }
            all.extend_from_slice(&out[..n]);
        }
        all
    }

    #[test]
    fn reorders_and_verifies_a_small_object() {
        let content: Vec<u8> = (0..25u8).collect();
        let mut r = Reassembly::new(10, Eid::of(&content), 25, true, 1 << 30);
        assert_eq!(r.units(), 3);
        assert_eq!(r.unit_len(2), 5);
        assert_eq!(r.insert(2, &content[20..]), (false, Verdict::default()));
        assert_eq!(r.insert(1, &content[10..20]), (false, Verdict::default()));
        assert_eq!(r.readable(), 0);
        assert_eq!(r.ofo_bytes, 15);
        assert_eq!(r.insert(0, &content[..10]), (true, Verdict::default()));
        assert!(r.is_complete());
        assert_eq!(drain(&mut r), content);
    }

    #[test]
    fn nothing_unverified_is_readable_and_a_bad_group_is_narrowed_to_its_bad_blocks() {
        // Three groups: blocks 0–15, 16–31 and 32–40 (the last one 100 bytes).
        let g = 16 * BLOCK_LEN;
        let size = (2 * g + 8 * BLOCK_LEN + 100) as usize;
        let content: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let ob = Outboard::of(&content);
        let unit = 1000u64;
        let mut r = Reassembly::new(unit as u16, Eid::of(&content), size as u64, true, 1 << 30);
        let units = r.units();
        let unit_bytes = |u: u64| &content[(u * unit) as usize..((u + 1) * unit).min(size as u64) as usize];
        // Group 0 needs a proof (its sibling, group 1, and group 2 above it: 2 of the 6
        // siblings of block 0's in-order proof); groups 1 and 2 none; no other block either.
        assert_eq!(r.proof_depth(0), 6);
        assert_eq!((1..41).filter(|&b| r.proof_depth(b) > 0).count(), 0);
        let end_of_group = |k: u64| ((k + 1) * g).div_ceil(unit);
        for u in 0..end_of_group(0) {
            assert!(r.insert(u, unit_bytes(u)).1.is_empty());
        }
        assert_eq!(r.readable(), 0, "unverified bytes are not readable");
        assert_eq!(r.waiting_for_proof(), Some(0));
        assert!(r.add_proof(0, ob.proof(0, 6).unwrap()).is_empty());
        assert_eq!(r.readable(), g as usize);
        assert_eq!(r.verified_una(), g / unit);
        // Group 1 needs no proof (group 0's brought its CV); corrupt a unit in block 18 and
        // one in block 25 (unit 409 straddles blocks 24 and 25; its corrupted last byte is
        // in block 25).
        let bad_units = [18 * BLOCK_LEN / unit + 3, 409];
        let mut verdict = Verdict::default();
        for u in end_of_group(0)..units {
            let mut bytes = unit_bytes(u).to_vec();
            if bad_units.contains(&u) {
                let last = bytes.len() - 1;
                bytes[last] ^= 0xff;
            }
            let (_, v) = r.insert(u, &bytes);
            if u + 1 < end_of_group(1) {
                assert!(v.is_empty());
            } else if u + 1 == end_of_group(1) {
                verdict = v;
            }
        }
        // The group failed as a whole: each of its blocks is to be checked alone, each with
        // its 4 siblings inside the group (the group's node is known).
        assert_eq!(verdict, Verdict { narrow: (16..32).collect(), bad: vec![] });
        assert!((16..32).all(|b| r.wanted_proof_depth(b) == 4));
        assert_eq!(r.waiting_for_proof(), Some(16));
        let mut bad = Vec::new();
        for b in 16..32 {
            let v = r.add_proof(b, ob.proof(b, 4).unwrap());
            assert!(v.narrow.is_empty());
            bad.extend(v.bad);
        }
        assert_eq!(bad, [(18, false), (25, false)], "only the bad blocks are dropped");
        assert_eq!(r.readable(), g as usize, "nothing of the group is readable yet");
        // Only the units overlapping them are fetched again: unit 294 straddles blocks 17
        // and 18, unit 311 blocks 18 and 19, unit 409 blocks 24 and 25.
        assert_eq!(r.units_of_block(18), 294..312);
        assert_eq!(r.units_of_block(25), 409..426);
        assert_eq!(r.una(), 294);
        assert_eq!((r.wanted_proof_depth(18), r.wanted_proof_depth(17)), (4, 0), "good blocks need nothing more");
        // They arrive again, block 25's first (out of order), with their proofs: the group
        // verifies, and the rest of the object follows.
        for u in r.units_of_block(25).chain(r.units_of_block(18)) {
            assert!(r.insert(u, unit_bytes(u)).1.is_empty());
        }
        assert_eq!(r.una(), units, "units in the blocks kept were not needed again");
        assert!(r.add_proof(18, ob.proof(18, 4).unwrap()).is_empty());
        assert_eq!(r.readable(), g as usize);
        assert!(r.add_proof(25, ob.proof(25, 4).unwrap()).is_empty());
        assert_eq!(r.waiting_for_proof(), None);
        assert!(r.is_complete());
        assert_eq!(drain(&mut r), content);
    }

    /// With a large receive window groups are 16 blocks, but the first ones ramp up (blocks 0,
    /// 1, 2–3, 4–7, 8–15): the application reads the first block once it is here and
    /// verified, with one proof (block 0's) for the whole ramp.
    #[test]
    fn the_first_groups_ramp_up_so_the_first_block_is_readable_alone() {
        let size = 40 * BLOCK_LEN as usize;
        let content: Vec<u8> = (0..size).map(|i| (i * 13 % 251) as u8).collect();
        let ob = Outboard::of(&content);
        let unit = 1000u64;
        let mut r = Reassembly::new(unit as u16, Eid::of(&content), size as u64, true, 64 << 20);
        assert_eq!(r.level, MAX_GROUP_LEVEL);
        let starts: Vec<(u64, u32)> = (0..40).filter_map(|b| r.group_at(b).map(|l| (b, l))).collect();
        assert_eq!(starts, [(0, 0), (1, 0), (2, 1), (4, 2), (8, 3), (16, 4), (32, 4)]);
        let proofs: Vec<u64> = (0..40).filter(|&b| r.proof_depth(b) > 0).collect();
        // Block 0's proof carries every sibling the ramp and the later groups need (on an
        // object of 40 blocks the siblings above the groups are all on block 0's path).
        assert_eq!(proofs, [0], "the ramp needs block 0's proof only");
        assert!(r.add_proof(0, ob.proof(0, r.proof_depth(0)).unwrap()).is_empty());
        let mut readable_after = Vec::new();
        for u in 0..r.units() {
            let s = (u * unit) as usize;
            assert!(r.insert(u, &content[s..(s + unit as usize).min(size)]).1.is_empty());
            if readable_after.last().is_none_or(|&(_, n)| n != r.readable()) {
                readable_after.push((u, r.readable()));
            }
            if u * unit >= 16 * BLOCK_LEN {
                break;
            }
        }
        let block = BLOCK_LEN as usize;
        // Unit 16 completes block 0 (bytes 16 000–16 999), unit 32 block 1, unit 65 blocks 2–3 …
        assert_eq!(
            readable_after.iter().map(|&(_, n)| n).collect::<Vec<_>>(),
            [0, block, 2 * block, 4 * block, 8 * block, 16 * block]
        );
        assert_eq!(readable_after[1].0, 16, "block 0 is readable as soon as its last unit is here");
    }

    /// A block that fails alone again (its bytes are bad at the source) is reported again,
    /// each time with its units; a group of one block is that block.
    #[test]
    fn a_block_bad_at_the_source_fails_each_time_and_one_block_groups_need_no_narrowing() {
        let size = 3 * BLOCK_LEN as usize;
        let content: Vec<u8> = (0..size).map(|i| (i % 241) as u8).collect();
        let mut corrupt = content.clone();
        corrupt[BLOCK_LEN as usize + 5] ^= 1; // block 1
        let ob = Outboard::of(&content);
        let unit = 1024u64;
        // A receive window of 64 KiB: groups of one block.
        let mut r = Reassembly::new(unit as u16, Eid::of(&content), size as u64, true, 64 << 10);
        assert_eq!(r.level, 0);
        r.add_proof(0, ob.proof(0, r.proof_depth(0)).unwrap());
        let bytes = |u: u64| &corrupt[(u * unit) as usize..((u + 1) * unit) as usize];
        let mut verdicts = Vec::new();
        for u in 0..r.units() {
            verdicts.push(r.insert(u, bytes(u)).1);
        }
        assert_eq!(
            verdicts.iter().filter(|v| !v.is_empty()).cloned().collect::<Vec<_>>(),
            [Verdict { narrow: vec![], bad: vec![(1, false)] }]
        );
        assert_eq!(r.readable(), BLOCK_LEN as usize);
        for _ in 0..3 {
            let mut v = Verdict::default();
            for u in r.units_of_block(1) {
                v = r.insert(u, bytes(u)).1;
            }
            assert_eq!(v.bad, [(1, true)], "bad again, with the same bytes");
        }
    }

    /// Any arrival order, unit size and read sizes, with and without verification: the
    /// bytes read are the object's, whole blocks or not, reads interleaved with arrivals.
    #[test]
    fn any_order_and_read_sizes_give_the_object() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for case in 0..40 {
            let size = 1 + rnd(5 * BLOCK_LEN) as usize;
            let unit = 100 + rnd(9000);
            let verify = case % 2 == 0;
            let content: Vec<u8> = (0..size).map(|i| (i * 7 % 253) as u8).collect();
            let ob = Outboard::of(&content);
            // Receive windows from 16 KiB to 2 MiB: groups of 1 to 16 blocks.
            let window = 1u64 << (14 + rnd(8));
            let mut r = Reassembly::new(unit as u16, Eid::of(&content), size as u64, verify, window);
            let mut order: Vec<u64> = (0..r.units()).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, rnd(i as u64 + 1) as usize);
            }
            let mut got = Vec::new();
            let mut buf = vec![0u8; 1 + rnd(40_000) as usize];
            for b in 0..crate::tree::blocks(size as u64) {
                if r.proof_depth(b) > 0 {
                    assert!(r.add_proof(b, ob.proof(b, r.proof_depth(b)).unwrap()).is_empty());
                }
            }
            for u in order {
                let s = (u * unit) as usize;
                assert!(r.insert(u, &content[s..(s + unit as usize).min(size)]).1.is_empty());
                if rnd(3) == 0 {
                    let n = r.read(&mut buf);
                    got.extend_from_slice(&buf[..n]);
                }
            }
            assert!(r.is_complete());
            assert_eq!(r.readable(), size - got.len());
            got.extend(drain(&mut r));
            assert_eq!(got, content, "case {case}: size {size}, unit {unit}, verify {verify}, window {window}");
            assert_eq!(r.readable(), 0);
        }
    }

    #[test]
    fn taking_buffers_moves_whole_blocks_after_a_partial_read() {
        let size = 3 * BLOCK_LEN as usize + 10;
        let content: Vec<u8> = (0..size).map(|i| (i % 249) as u8).collect();
        for verify in [true, false] {
            let ob = Outboard::of(&content);
            let mut r = Reassembly::new(4000, Eid::of(&content), size as u64, verify, 1 << 30);
            if verify {
                r.add_proof(0, ob.proof(0, r.proof_depth(0)).unwrap());
                r.add_proof(2, ob.proof(2, r.proof_depth(2)).unwrap());
            }
            for u in 0..r.units() {
                let s = (u * 4000) as usize;
                r.insert(u, &content[s..(s + 4000).min(size)]);
            }
            let mut head = [0u8; 100];
            assert_eq!(r.read(&mut head), 100);
            let mut out = Vec::new();
            assert_eq!(r.take(2 * BLOCK_LEN as usize, &mut out), 2 * BLOCK_LEN as usize - 100);
            assert_eq!(out.len(), 2, "the read front block's rest, then one whole block");
            let mut got: Vec<u8> = head.iter().copied().chain(out.iter().flatten().copied()).collect();
            assert_eq!(r.take(1, &mut out), BLOCK_LEN as usize, "at least one buffer");
            assert_eq!(out.len(), 1, "the buffers given back are not handed out again as data");
            got.extend(out.iter().flatten());
            assert_eq!(r.take(usize::MAX, &mut out), 10);
            got.extend(out.iter().flatten());
            assert_eq!(r.readable(), 0);
            assert_eq!(got, content);
        }
    }

    /// Two failed copies of a block with different units corrupted: a combination of them
    /// is the block, found without fetching it a third time — in a one-block group and in a
    /// narrowed group.
    #[test]
    fn a_bad_block_is_repaired_from_the_differing_units_of_its_copies() {
        let size = 20 * BLOCK_LEN as usize;
        let content: Vec<u8> = (0..size).map(|i| (i * 13 % 239) as u8).collect();
        let ob = Outboard::of(&content);
        let unit = 1000u64;
        for window in [64u64 << 10, 1 << 30] {
            let mut r = Reassembly::new(unit as u16, Eid::of(&content), size as u64, true, window);
            let bytes = |u: u64, bad: &[u64]| {
                let mut b = content[(u * unit) as usize..((u + 1) * unit).min(size as u64) as usize].to_vec();
                if bad.contains(&u) {
                    b[17] ^= 4;
                }
                b
            };
            for b in 0..20 {
                if r.proof_depth(b) > 0 {
                    r.add_proof(b, ob.proof(b, r.proof_depth(b)).unwrap());
                }
            }
            // Block 1 (units 16–32): copy 1 has unit 20 wrong, copy 2 units 25 and 32.
            let mut bad = Vec::new();
            let mut narrow = Vec::new();
            for u in 0..r.units() {
                let v = r.insert(u, &bytes(u, &[20])).1;
                bad.extend(v.bad);
                narrow.extend(v.narrow);
            }
            for b in narrow {
                let v = r.add_proof(b, ob.proof(b, r.wanted_proof_depth(b)).unwrap());
                bad.extend(v.bad);
            }
            assert_eq!(bad, [(1, false)], "window {window}");
            let mut v = Verdict::default();
            for u in r.units_of_block(1) {
                v = r.insert(u, &bytes(u, &[25, 32])).1;
            }
            if r.wanted_proof_depth(1) > 0 {
                v = r.add_proof(1, ob.proof(1, r.wanted_proof_depth(1)).unwrap());
            }
            assert!(v.is_empty(), "window {window}: {v:?}");
            assert_eq!(r.repaired(), 1, "window {window}");
            assert!(r.is_complete(), "window {window}");
            assert_eq!(drain(&mut r), content);
        }
    }

    #[test]
    fn groups_fit_four_times_in_the_receive_window() {
        assert_eq!(group_level(64 << 20), MAX_GROUP_LEVEL);
        assert_eq!(group_level(1 << 20), 4);
        assert_eq!(group_level((1 << 20) - 1), 3);
        assert_eq!(group_level(50_000), 0);
        assert_eq!(group_level(0), 0);
    }
}
