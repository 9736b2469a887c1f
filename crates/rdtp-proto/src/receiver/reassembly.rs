//! Reordering, verification and in-order delivery (seed 000 §3.2; issue 11): units that
//! arrive ahead of `req_una` wait in an ordered map keyed by unit; when the gap fills,
//! consecutive bytes wait in `pending` until their 16 KiB block verifies against the EID
//! (`crate::tree`), and only verified bytes move to the receive queue the application
//! reads from. A block that fails is dropped and its units requested again.

use std::collections::{BTreeMap, VecDeque};

use crate::eid::Eid;
use crate::tree::{Cv, Verifier, proof_depth};

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
    /// Contiguous bytes from the verified prefix to `have`, not yet verified.
    pending: Vec<u8>,
    /// Proofs that arrived for blocks not yet verified.
    proofs: BTreeMap<u64, Vec<Cv>>,
    ready: VecDeque<u8>,
    /// `None`: delivered unverified (verification off).
    verifier: Option<Verifier>,
    /// Bytes moved into `ready` so far.
    delivered: u64,
}

impl Reassembly {
    pub(crate) fn new(unit: u16, eid: Eid, size: u64, verify: bool) -> Self {
        Reassembly {
            unit: u64::from(unit),
            size,
            una: 0,
            have: 0,
            ofo: BTreeMap::new(),
            ofo_bytes: 0,
            pending: Vec::new(),
            proofs: BTreeMap::new(),
            ready: VecDeque::new(),
            verifier: verify.then(|| Verifier::new(eid, size)),
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

    /// Whether block `b` needs a proof from the server (it does not when earlier blocks'
    /// proofs already cover it, or when verification is off).
    pub(crate) fn proof_depth(&self, b: u64) -> usize {
        if self.verifier.is_some() { proof_depth(self.size, b) } else { 0 }
    }

    /// The block verification waits for, if its bytes are all here but its proof is not.
    pub(crate) fn waiting_for_proof(&self) -> Option<u64> {
        let v = self.verifier.as_ref()?;
        let b = v.next_block();
        let complete = b < crate::tree::blocks(self.size) && self.pending.len() as u64 >= v.block_len(b);
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

    fn append(&mut self, u: u64, payload: &[u8]) {
        // After a failed block the first unit may hold bytes already verified.
        let start = u * self.unit;
        let skip = (self.have.saturating_sub(start) as usize).min(payload.len());
        let fresh = &payload[skip..];
        self.have = start + payload.len() as u64;
        if self.verifier.is_some() {
            self.pending.extend_from_slice(fresh);
        } else {
            self.ready.extend(fresh);
            self.delivered += fresh.len() as u64;
        }
    }

    /// Verify every block whose bytes and proof are here, in order.
    fn verify(&mut self) -> Option<u64> {
        let v = self.verifier.as_mut()?;
        loop {
            let b = v.next_block();
            if b >= crate::tree::blocks(self.size) {
                return None;
            }
            let len = v.block_len(b) as usize;
            if self.pending.len() < len {
                return None;
            }
            let proof = if proof_depth(self.size, b) == 0 { Vec::new() } else { self.proofs.remove(&b)? };
            if v.verify(b, &self.pending[..len], &proof).is_err() {
                return Some(b);
            }
            self.ready.extend(&self.pending[..len]);
            self.pending.drain(..len);
            self.delivered += len as u64;
        }
    }

    /// Block verification failed: drop every unverified contiguous byte. Returns the units
    /// to request again (they were received but their bytes are gone).
    pub(crate) fn rollback(&mut self) -> core::ops::Range<u64> {
        let verified = self.verifier.as_ref().map_or(self.have, Verifier::verified_bytes);
        let first = verified / self.unit;
        let old = self.una;
        self.pending.clear();
        self.have = verified;
        self.una = first;
        first..old
    }

    /// Copy in-order bytes into `buf`.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> usize {
        let (a, b) = self.ready.as_slices();
        let n1 = a.len().min(buf.len());
        buf[..n1].copy_from_slice(&a[..n1]);
        let n2 = b.len().min(buf.len() - n1);
        buf[n1..n1 + n2].copy_from_slice(&b[..n2]);
        self.ready.drain(..n1 + n2);
        n1 + n2
    }

    /// Bytes ready for the application.
    pub(crate) fn readable(&self) -> usize {
        self.ready.len()
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
        let mut r = Reassembly::new(10, Eid::of(&content), 25, true);
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
    fn nothing_unverified_is_readable_and_a_bad_block_rolls_back() {
        let size = 3 * BLOCK_LEN as usize + 100;
        let content: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let ob = Outboard::of(&content);
        let unit = 1000u64;
        let mut r = Reassembly::new(unit as u16, Eid::of(&content), size as u64, true);
        let units = r.units();
        let unit_bytes = |u: u64| &content[(u * unit) as usize..((u + 1) * unit).min(size as u64) as usize];
        // Block 0 needs the full path (2 siblings); its bytes alone are not enough.
        assert_eq!(r.proof_depth(0), 2);
        for u in 0..17 {
            assert_eq!(r.insert(u, unit_bytes(u)).1, None);
        }
        assert_eq!(r.readable(), 0, "unverified bytes are not readable");
        assert_eq!(r.waiting_for_proof(), Some(0));
        assert_eq!(r.add_proof(0, ob.proof(0, 2).unwrap()), None);
        assert_eq!(r.readable(), BLOCK_LEN as usize);
        assert_eq!(r.verified_una(), BLOCK_LEN / unit);
        // Block 1 needs no proof (its CV came with block 0's); corrupt one of its units.
        let mut bad = unit_bytes(20).to_vec();
        bad[3] ^= 0xff;
        for u in 17..units {
            let (_, failed) = r.insert(u, if u == 20 { &bad } else { unit_bytes(u) });
            if u < 32 {
                assert_eq!(failed, None);
            } else if u == 32 {
                assert_eq!(failed, Some(1), "block 1 ends in unit 32");
                break;
            }
        }
        let again = r.rollback();
        assert_eq!(again, BLOCK_LEN / unit..33);
        assert_eq!(r.una(), 16);
        // Re-received correctly: unit 16 straddles blocks 0 and 1; its verified part is kept.
        for u in 16..units {
            let (_, failed) = r.insert(u, unit_bytes(u));
            assert_eq!(failed, None);
        }
        assert_eq!(r.waiting_for_proof(), Some(2));
        assert_eq!(r.add_proof(2, ob.proof(2, 1).unwrap()), None);
        assert!(r.is_complete());
        assert_eq!(drain(&mut r), content);
    }
}
