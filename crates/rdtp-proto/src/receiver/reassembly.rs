//! Reordering and in-order delivery (seed 000 §3.2): units that arrive ahead of
//! `req_una` wait in an ordered map keyed by unit; when the gap fills, consecutive units
//! move to the receive queue the application reads from. Delivered bytes are hashed on
//! the way so the object can be checked against its EID at the end.

use std::collections::{BTreeMap, VecDeque};

use crate::eid::Eid;

#[derive(Debug)]
pub(crate) struct Reassembly {
    unit: u64,
    size: u64,
    /// Next unit expected in order (`req_una`).
    una: u64,
    ofo: BTreeMap<u64, Box<[u8]>>,
    ofo_bytes: u64,
    ready: VecDeque<u8>,
    hasher: Option<blake3::Hasher>,
    /// Bytes moved into `ready` so far.
    delivered: u64,
}

impl Reassembly {
    pub(crate) fn new(unit: u16, size: u64, verify: bool) -> Self {
        Reassembly {
            unit: u64::from(unit),
            size,
            una: 0,
            ofo: BTreeMap::new(),
            ofo_bytes: 0,
            ready: VecDeque::new(),
            hasher: verify.then(blake3::Hasher::new),
            delivered: 0,
        }
    }

    pub(crate) fn una(&self) -> u64 {
        self.una
    }

    /// Number of units in the object.
    pub(crate) fn units(&self) -> u64 {
        self.size.div_ceil(self.unit)
    }

    /// Payload length of unit `u`.
    pub(crate) fn unit_len(&self, u: u64) -> u64 {
        (self.size - u * self.unit).min(self.unit)
    }

    /// Store unit `u` (not yet received). Returns true if it was the next in order.
    pub(crate) fn insert(&mut self, u: u64, payload: &[u8]) -> bool {
        if u != self.una {
            self.ofo_bytes += payload.len() as u64;
            self.ofo.insert(u, payload.into());
            return false;
        }
        self.append(payload);
        self.una += 1;
        while let Some(p) = self.ofo.remove(&self.una) {
            self.ofo_bytes -= p.len() as u64;
            self.append(&p);
            self.una += 1;
        }
        true
    }

    fn append(&mut self, payload: &[u8]) {
        if let Some(h) = self.hasher.as_mut() {
            h.update(payload);
        }
        self.ready.extend(payload);
        self.delivered += payload.len() as u64;
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

    /// Bytes delivered in order so far.
    pub(crate) fn delivered(&self) -> u64 {
        self.delivered
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.una >= self.units()
    }

    /// The EID of what was delivered, if hashing was on.
    pub(crate) fn content_eid(&self) -> Option<Eid> {
        self.hasher.as_ref().map(Eid::from_hasher)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reorders_and_hashes() {
        let content: Vec<u8> = (0..25u8).collect();
        let mut r = Reassembly::new(10, 25, true);
        assert_eq!(r.units(), 3);
        assert_eq!(r.unit_len(2), 5);
        assert!(!r.insert(2, &content[20..]));
        assert!(!r.insert(1, &content[10..20]));
        assert_eq!(r.readable(), 0);
        assert_eq!(r.ofo_bytes, 15);
        assert!(r.insert(0, &content[..10]));
        assert!(r.is_complete());
        let mut out = vec![0u8; 7];
        let mut all = vec![];
        loop {
            let n = r.read(&mut out);
            if n == 0 {
                break;
            }
            all.extend_from_slice(&out[..n]);
        }
        assert_eq!(all, content);
        assert_eq!(r.content_eid(), Some(Eid::of(&content)));
    }
}
