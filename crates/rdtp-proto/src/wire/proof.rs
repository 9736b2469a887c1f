//! Proofs for verified streaming (issue 11, `crate::tree`): a receiver asks the server for
//! the hash-tree siblings of one 16 KiB block, and checks the block against the EID before
//! delivering any of its bytes.

use super::codec::{Reader, Writer};
use super::header::{BufferTooSmall, DecodeError, PacketType};
use super::request::RequestFlags;
use super::tlv::Options;
use crate::eid::Eid;
use crate::node::NodeId;
use crate::tree::{Cv, MAX_PROOF_DEPTH};

/// Fixed part of a ProofRequest, in bytes.
pub const PROOF_REQUEST_HEADER_LEN: usize = 54;
/// Fixed part of a Proof, in bytes (followed by 32 bytes per sibling).
pub const PROOF_HEADER_LEN: usize = 60;

/// ProofRequest (type 0x09): the lowest `depth` siblings of block `block`'s path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProofRequest<'a> {
    /// As a Request's; [`RequestFlags::ORIGIN`] keeps routers from answering it.
    pub flags: RequestFlags,
    pub hop_limit: u8,
    pub tag: u32,
    pub eid: Eid,
    pub block: u64,
    /// 1 ..= [`MAX_PROOF_DEPTH`].
    pub depth: u8,
    /// TLV options: `ADDRESS_TOKEN`.
    pub options: Options<'a>,
}

impl<'a> ProofRequest<'a> {
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        if super::header::check_prefix(datagram)? != PacketType::ProofRequest {
            return Err(DecodeError::Invalid("packet type"));
        }
        let mut r = Reader::after_prefix(datagram);
        let flags = RequestFlags(r.u8("flags")?);
        let hop_limit = r.u8("hop limit")?;
        let opt_len = usize::from(r.u16("options length")?);
        let tag = r.u32("tag")?;
        let eid = r.eid()?;
        let block = r.u64("block")?;
        let depth = r.u8("depth")?;
        let _reserved = r.u8("reserved")?;
        let options = Options::parse(r.bytes(opt_len, "options")?)?;
        r.finish("trailing bytes after options")?;
        if depth == 0 || usize::from(depth) > MAX_PROOF_DEPTH {
            return Err(DecodeError::Invalid("proof depth"));
        }
        Ok(ProofRequest { flags, hop_limit, tag, eid, block, depth, options })
    }

    pub fn encoded_len(&self) -> usize {
        PROOF_REQUEST_HEADER_LEN + self.options.raw().len()
    }

    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        let raw = self.options.raw();
        let opt_len =
            u16::try_from(raw.len()).map_err(|_| BufferTooSmall { needed: usize::MAX, available: out.len() })?;
        let mut w = Writer::with_prefix(out, self.encoded_len(), PacketType::ProofRequest)?;
        w.u8(self.flags.0);
        w.u8(self.hop_limit);
        w.u16(opt_len);
        w.u32(self.tag);
        w.eid(&self.eid);
        w.u64(self.block);
        w.u8(self.depth);
        w.u8(0);
        w.bytes(raw);
        Ok(w.position())
    }
}

/// Proof (type 0x0A): siblings of a block's path, bottom-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof<'a> {
    /// Routers it crossed (as a Data's).
    pub hops: u8,
    pub tag: u32,
    pub eid: Eid,
    pub block: u64,
    /// Who answered (as a Data's `served by`).
    pub served_by: NodeId,
    /// 32 bytes per sibling, at most [`MAX_PROOF_DEPTH`].
    pub siblings: &'a [u8],
}

impl<'a> Proof<'a> {
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        if super::header::check_prefix(datagram)? != PacketType::Proof {
            return Err(DecodeError::Invalid("packet type"));
        }
        let mut r = Reader::after_prefix(datagram);
        let _reserved = r.u8("reserved")?;
        let hops = r.u8("hops")?;
        let count = usize::from(r.u8("count")?);
        let _reserved = r.u8("reserved")?;
        let tag = r.u32("tag")?;
        let eid = r.eid()?;
        let block = r.u64("block")?;
        let served_by = r.node()?;
        if count > MAX_PROOF_DEPTH {
            return Err(DecodeError::Invalid("proof depth"));
        }
        let siblings = r.bytes(count * 32, "siblings")?;
        r.finish("trailing bytes after siblings")?;
        Ok(Proof { hops, tag, eid, block, served_by, siblings })
    }

    /// The siblings as chaining values.
    pub fn cvs(&self) -> impl Iterator<Item = Cv> + 'a {
        self.siblings.chunks_exact(32).map(|c| c.try_into().expect("32 bytes"))
    }

    pub fn encoded_len(&self) -> usize {
        PROOF_HEADER_LEN + self.siblings.len()
    }

    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        let count = self.siblings.len() / 32;
        if !self.siblings.len().is_multiple_of(32) || count > MAX_PROOF_DEPTH {
            return Err(BufferTooSmall { needed: usize::MAX, available: out.len() });
        }
        let mut w = Writer::with_prefix(out, self.encoded_len(), PacketType::Proof)?;
        w.u8(0);
        w.u8(self.hops);
        w.u8(count as u8);
        w.u8(0);
        w.u32(self.tag);
        w.eid(&self.eid);
        w.u64(self.block);
        w.node(&self.served_by);
        w.bytes(self.siblings);
        Ok(w.position())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_bounds() {
        let q = ProofRequest {
            flags: RequestFlags(RequestFlags::ORIGIN),
            hop_limit: 9,
            tag: 7,
            eid: Eid([3; 32]),
            block: 12,
            depth: 2,
            options: Options::EMPTY,
        };
        let mut buf = [0u8; 2000];
        let n = q.encode(&mut buf).unwrap();
        assert_eq!(n, PROOF_REQUEST_HEADER_LEN);
        assert_eq!(ProofRequest::decode(&buf[..n]).unwrap(), q);
        assert!(ProofRequest::decode(&buf[..n - 1]).is_err());
        buf[52] = 0;
        assert_eq!(ProofRequest::decode(&buf[..n]), Err(DecodeError::Invalid("proof depth")));

        let sib = [5u8; 64];
        let p = Proof { hops: 1, tag: 7, eid: Eid([3; 32]), block: 12, served_by: NodeId::ORIGIN, siblings: &sib };
        let n = p.encode(&mut buf).unwrap();
        assert_eq!(n, PROOF_HEADER_LEN + 64);
        let d = Proof::decode(&buf[..n]).unwrap();
        assert_eq!(d, p);
        assert_eq!(d.cvs().count(), 2);
        assert!(Proof::decode(&buf[..n - 1]).is_err());
        assert_eq!(buf[super::super::RESPONSE_TAG_AT..][..4], 7u32.to_be_bytes());
        assert_eq!(buf[super::super::HOPS_AT], 1);
        // The largest proof fits a 1500-byte MTU.
        const { assert!(PROOF_HEADER_LEN + 32 * MAX_PROOF_DEPTH <= 1472) };
    }
}
