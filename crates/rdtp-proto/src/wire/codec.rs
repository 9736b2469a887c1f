//! Bounds-checked big-endian cursors used by every message codec.

use super::header::{BufferTooSmall, DecodeError, MAGIC, PacketType, VERSION};
use crate::eid::{EID_LEN, Eid};
use crate::node::{NODE_ID_LEN, NodeId};

/// Reads fields from a datagram; every read is bounds-checked.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader positioned after the 4-byte prefix (already checked by the caller).
    pub(crate) fn after_prefix(buf: &'a [u8]) -> Self {
        Reader { buf, pos: super::header::PREFIX_LEN.min(buf.len()) }
    }

    pub(crate) fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or(DecodeError::Truncated(what))?;
        let s = self.buf.get(self.pos..end).ok_or(DecodeError::Truncated(what))?;
        self.pos = end;
        Ok(s)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.bytes(1, what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, DecodeError> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, DecodeError> {
        let b = self.bytes(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }

    pub(crate) fn eid(&mut self) -> Result<Eid, DecodeError> {
        let b = self.bytes(EID_LEN, "EID")?;
        let mut a = [0u8; EID_LEN];
        a.copy_from_slice(b);
        Ok(Eid(a))
    }

    pub(crate) fn node(&mut self) -> Result<NodeId, DecodeError> {
        let b = self.bytes(NODE_ID_LEN, "node id")?;
        let mut a = [0u8; NODE_ID_LEN];
        a.copy_from_slice(b);
        Ok(NodeId(a))
    }

    /// Everything not yet read.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    /// Fail unless the whole datagram has been consumed.
    pub(crate) fn finish(&self, what: &'static str) -> Result<(), DecodeError> {
        if self.pos == self.buf.len() { Ok(()) } else { Err(DecodeError::Invalid(what)) }
    }
}

/// Writes fields into an output buffer whose size was checked up front.
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    /// Check that `out` holds `len` bytes and write the common prefix.
    pub(crate) fn with_prefix(out: &'a mut [u8], len: usize, ty: PacketType) -> Result<Self, BufferTooSmall> {
        if out.len() < len {
            return Err(BufferTooSmall { needed: len, available: out.len() });
        }
        let mut w = Writer { buf: out, pos: 0 };
        w.bytes(&MAGIC);
        w.u8(VERSION);
        w.u8(ty as u8);
        Ok(w)
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.buf[self.pos..self.pos + b.len()].copy_from_slice(b);
        self.pos += b.len();
    }
    pub(crate) fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }
    pub(crate) fn u16(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.bytes(&v.to_be_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.bytes(&v.to_be_bytes());
    }
    pub(crate) fn eid(&mut self, e: &Eid) {
        self.bytes(&e.0);
    }
    pub(crate) fn node(&mut self, n: &NodeId) {
        self.bytes(&n.0);
    }
    pub(crate) fn position(&self) -> usize {
        self.pos
    }
}
