//! Reordering, verification and in-order delivery (seed 000 §3.2; issue 11): units that
//! arrive ahead of `req_una` wait in an ordered map keyed by unit; when the gap fills,
//! consecutive bytes are copied into per-block buffers (`pending`) where they wait until
//! their 16 KiB block verifies against the EID (`crate::tree`); a verified block's buffer
//! then moves, without a copy, to the receive queue the application reads from. A block
//! that fails is dropped and its units requested again.
//!
//! Blocks are verified [`MAX_GROUP_LEVEL`] levels up the tree at once, 16 blocks (256 KiB)
//! of them (fewer with a receive window under 1 MiB, see [`group_level`]): the group's subtree is hashed from its bytes, so only groups whose path needs a
//! sibling beyond the group ask the server for a proof — one ProofRequest and one Proof
//! per 512 KiB or so instead of one per 32 KiB (issue 12: each is a datagram both ways).
//! The proof asked for is still a block's in-order proof, as the wire format defines it;
//! its siblings inside the group are skipped.
//!
//! Each in-order byte is copied once here (datagram → block buffer) and once out
//! ([`Reassembly::read`]); buffers are recycled, so a steady transfer allocates nothing
//! (issue 12: the former single `Vec` drained from the front moved every waiting byte once
//! per block, and a second queue copied every byte again).

use std::collections::{BTreeMap, VecDeque};

use crate::eid::Eid;
use crate::tree::{BLOCK_LEN, Cv, Verifier, group_inner_depth, group_proof_depth};

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

#[derive(Debug)]
pub(crate) struct Reassembly {
    unit: u64,
    size: u64,
    /// Next unit expected in order (`req_una`).
    una: u64,
    /// End of the contiguous bytes received.
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
        match group_proof_depth(self.size, b, self.level) {
            0 => 0,
            d => d + group_inner_depth(self.size, b, self.level),
        }
    }

    /// Whether every byte of the group starting at block `b` (the next to verify) is here.
    fn group_complete(&self, v: &Verifier, b: u64) -> bool {
        let m = v.group_blocks(b, self.level) as usize;
        m > 0 && self.pending.len() >= m && self.pending[m - 1].len() as u64 == v.block_len(b + m as u64 - 1)
    }

    /// The block verification waits for, if its group's bytes are all here but its proof is not.
    pub(crate) fn waiting_for_proof(&self) -> Option<u64> {
        let v = self.verifier.as_ref()?;
        let b = v.next_block();
        let complete = b < crate::tree::blocks(self.size) && self.group_complete(v, b);
        (complete && self.proof_depth(b) > 0 && !self.proofs.contains_key(&b)).then_some(b)
    }

    /// Store unit `u` (not yet received). Returns whether it was the next in order, and
    /// the block that failed verification, if one did.
    pub(crate) fn insert(&mut self, u: u64, payload: &[u8]) -> (bool, Option<u64>) {
        if u != self.una {
            self.ofo_bytes += payload.len() as u64;
            self.ofo.insert(u, payload.into());
            return (false, None);
        }
        self.append(u, payload);
        self.una += 1;
        while let Some(p) = self.ofo.remove(&self.una) {
            self.ofo_bytes -= p.len() as u64;
            self.append(self.una, &p);
            self.una += 1;
        }
        (true, self.verify())
    }

    /// A proof for block `b` arrived (checked for length by the caller). Returns the block
    /// that failed verification, if one did.
    pub(crate) fn add_proof(&mut self, b: u64, cvs: Vec<Cv>) -> Option<u64> {
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
        // After a failed block the first unit may hold bytes already verified.
        let start = u * self.unit;
        let skip = (self.have.saturating_sub(start) as usize).min(payload.len());
        let mut fresh = &payload[skip..];
        let mut at = start + skip as u64;
        self.have = start + payload.len() as u64;
        let verifying = self.verifier.is_some();
        while !fresh.is_empty() {
            // Bytes go to the buffer of their block: a block's buffer is never longer
            // than the block, so the buffers stay aligned with the blocks.
            let room = (BLOCK_LEN - at % BLOCK_LEN) as usize;
            let queue = if verifying { &mut self.pending } else { &mut self.ready };
            if at.is_multiple_of(BLOCK_LEN) || queue.is_empty() {
                let b = self.spare.pop().unwrap_or_else(|| Vec::with_capacity(BLOCK_LEN as usize));
                let queue = if verifying { &mut self.pending } else { &mut self.ready };
                queue.push_back(b);
            }
            let n = fresh.len().min(room);
            let queue = if verifying { &mut self.pending } else { &mut self.ready };
            queue.back_mut().expect("a buffer was pushed").extend_from_slice(&fresh[..n]);
            if !verifying {
                self.ready_len += n;
                self.delivered += n as u64;
            }
            fresh = &fresh[n..];
            at += n as u64;
        }
    }

    /// Verify every group whose bytes and proof are here, in order. Returns the first
    /// block of a group that failed, if one did.
    fn verify(&mut self) -> Option<u64> {
        loop {
            let v = self.verifier.as_ref()?;
            let b = v.next_block();
            if b >= crate::tree::blocks(self.size) || !self.group_complete(v, b) {
                return None;
            }
            let m = v.group_blocks(b, self.level) as usize;
            let proof = if self.proof_depth(b) == 0 { Vec::new() } else { self.proofs.remove(&b)? };
            let inner = group_inner_depth(self.size, b, self.level).min(proof.len());
            let pieces: Vec<&[u8]> = self.pending.iter().take(m).map(Vec::as_slice).collect();
            let v = self.verifier.as_mut()?;
            if v.verify_group(b, self.level, &pieces, &proof[inner..]).is_err() {
                return Some(b);
            }
            for block in self.pending.drain(..m) {
                self.ready_len += block.len();
                self.delivered += block.len() as u64;
                self.ready.push_back(block);
            }
        }
    }

    /// Block verification failed: drop every unverified contiguous byte. Returns the units
    /// to request again (they were received but their bytes are gone).
    pub(crate) fn rollback(&mut self) -> core::ops::Range<u64> {
        let verified = self.verifier.as_ref().map_or(self.have, Verifier::verified_bytes);
        let first = verified / self.unit;
        let old = self.una;
        while let Some(b) = self.pending.pop_front() {
            self.recycle(b);
        }
        self.have = verified;
        self.una = first;
        first..old
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
        assert_eq!(r.insert(2, &content[20..]), (false, None));
        assert_eq!(r.insert(1, &content[10..20]), (false, None));
        assert_eq!(r.readable(), 0);
        assert_eq!(r.ofo_bytes, 15);
        assert_eq!(r.insert(0, &content[..10]), (true, None));
        assert!(r.is_complete());
        assert_eq!(drain(&mut r), content);
    }

    #[test]
    fn nothing_unverified_is_readable_and_a_bad_group_rolls_back() {
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
            assert_eq!(r.insert(u, unit_bytes(u)).1, None);
        }
        assert_eq!(r.readable(), 0, "unverified bytes are not readable");
        assert_eq!(r.waiting_for_proof(), Some(0));
        assert_eq!(r.add_proof(0, ob.proof(0, 6).unwrap()), None);
        assert_eq!(r.readable(), g as usize);
        assert_eq!(r.verified_una(), g / unit);
        // Group 1 needs no proof (group 0's brought its CV); corrupt one of its units.
        let bad_unit = g / unit + 20;
        let mut bad = unit_bytes(bad_unit).to_vec();
        bad[3] ^= 0xff;
        for u in end_of_group(0)..units {
            let (_, failed) = r.insert(u, if u == bad_unit { &bad } else { unit_bytes(u) });
            if u + 1 < end_of_group(1) {
                assert_eq!(failed, None);
            } else {
                assert_eq!(failed, Some(16), "group 1 ends in unit {u}");
                break;
            }
        }
        let again = r.rollback();
        assert_eq!(again, g / unit..end_of_group(1));
        assert_eq!(r.una(), g / unit);
        // Received again correctly: the unit straddling groups 0 and 1 keeps its verified part.
        for u in g / unit..units {
            let (_, failed) = r.insert(u, unit_bytes(u));
            assert_eq!(failed, None);
        }
        assert_eq!(r.waiting_for_proof(), None);
        assert!(r.is_complete());
        assert_eq!(drain(&mut r), content);
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
                    assert_eq!(r.add_proof(b, ob.proof(b, r.proof_depth(b)).unwrap()), None);
                }
            }
            for u in order {
                let s = (u * unit) as usize;
                assert_eq!(r.insert(u, &content[s..(s + unit as usize).min(size)]).1, None);
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

    #[test]
    fn groups_fit_four_times_in_the_receive_window() {
        assert_eq!(group_level(64 << 20), MAX_GROUP_LEVEL);
        assert_eq!(group_level(1 << 20), 4);
        assert_eq!(group_level((1 << 20) - 1), 3);
        assert_eq!(group_level(50_000), 0);
        assert_eq!(group_level(0), 0);
    }
}
