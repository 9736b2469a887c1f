//! Nack: the server cannot serve (part of) a request, and says why.

use super::codec::{Reader, Writer};
use super::header::{BufferTooSmall, DecodeError, PacketType};
use crate::eid::Eid;
use crate::node::NodeId;

/// Fixed part of a Nack, in bytes.
pub const NACK_HEADER_LEN: usize = 64;
/// Longest detail text a Nack carries; longer texts are cut at a character boundary.
pub const NACK_MAX_DETAIL: usize = 512;

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NackCode {
    /// No object with this EID (or, answering a Resolve, this name).
    UnknownContent,
    /// The range starts at or after the end of the object.
    RangeBeyondEnd,
    /// The request breaks a rule of the format (detail says which).
    Malformed,
    /// The server is overloaded; retry later, more slowly.
    Busy,
    /// The request asks for more units than the server serves per request.
    TooLarge,
    /// The server failed to read the content.
    Internal,
    /// The datagram's version is not one the server speaks.
    UnsupportedVersion,
    /// A router has no route towards the content (no FIB entry and no default route).
    NoRoute,
    /// A router saw a request's nonce come back for a unit it already requested: a routing
    /// loop.
    Duplicate,
    /// A router got a request whose hop limit was 0: a routing loop, or a path too long.
    HopLimit,
    /// A code this implementation does not know.
    Other(u8),
}

impl NackCode {
    pub fn to_u8(self) -> u8 {
        match self {
            NackCode::UnknownContent => 1,
            NackCode::RangeBeyondEnd => 2,
            NackCode::Malformed => 3,
            NackCode::Busy => 4,
            NackCode::TooLarge => 5,
            NackCode::Internal => 6,
            NackCode::UnsupportedVersion => 7,
            NackCode::NoRoute => 8,
            NackCode::Duplicate => 9,
            NackCode::HopLimit => 10,
            NackCode::Other(c) => c,
        }
    }
    pub fn from_u8(c: u8) -> Self {
        match c {
            1 => NackCode::UnknownContent,
            2 => NackCode::RangeBeyondEnd,
            3 => NackCode::Malformed,
            4 => NackCode::Busy,
            5 => NackCode::TooLarge,
            6 => NackCode::Internal,
            7 => NackCode::UnsupportedVersion,
            8 => NackCode::NoRoute,
            9 => NackCode::Duplicate,
            10 => NackCode::HopLimit,
            c => NackCode::Other(c),
        }
    }
}

/// A decoded or to-be-encoded Nack. It echoes the tag, EID and range it refuses (zeros when
/// the request could not be parsed that far).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nack<'a> {
    pub code: NackCode,
    /// Routers this Nack crossed on its way back from `from`.
    pub hops: u8,
    pub tag: u32,
    pub eid: Eid,
    pub offset: u64,
    pub length: u32,
    /// The node that refused: the origin, or a router (busy, no route, loop).
    pub from: NodeId,
    /// Human-readable reason (UTF-8), possibly empty.
    pub detail: &'a str,
}

impl<'a> Nack<'a> {
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        if super::header::check_prefix(datagram)? != PacketType::Nack {
            return Err(DecodeError::Invalid("packet type"));
        }
        let mut r = Reader::after_prefix(datagram);
        let code = NackCode::from_u8(r.u8("code")?);
        let hops = r.u8("hops")?;
        let detail_len = usize::from(r.u16("detail length")?);
        let tag = r.u32("tag")?;
        let eid = r.eid()?;
        let offset = r.u64("offset")?;
        let length = r.u32("length")?;
        let from = r.node()?;
        if detail_len > NACK_MAX_DETAIL {
            return Err(DecodeError::Invalid("detail longer than 512 bytes"));
        }
        let detail = core::str::from_utf8(r.bytes(detail_len, "detail")?)
            .map_err(|_| DecodeError::Invalid("detail is not UTF-8"))?;
        r.finish("trailing bytes after detail")?;
        Ok(Nack { code, hops, tag, eid, offset, length, from, detail })
    }

    /// The detail as it will be encoded (cut to [`NACK_MAX_DETAIL`] bytes).
    fn detail_bytes(&self) -> &'a [u8] {
        cut(self.detail, NACK_MAX_DETAIL).as_bytes()
    }

    /// This Nack with its detail cut so the datagram is at most `max_len` bytes; `None` if
    /// even an empty detail does not fit (a node answering an unvalidated address sends
    /// nothing rather than more than its budget).
    pub fn fitting(self, max_len: usize) -> Option<Nack<'a>> {
        let room = max_len.checked_sub(NACK_HEADER_LEN)?;
        Some(Nack { detail: cut(self.detail, room.min(NACK_MAX_DETAIL)), ..self })
    }

    pub fn encoded_len(&self) -> usize {
        NACK_HEADER_LEN + self.detail_bytes().len()
    }

    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        let detail = self.detail_bytes();
        let mut w = Writer::with_prefix(out, self.encoded_len(), PacketType::Nack)?;
        w.u8(self.code.to_u8());
        w.u8(self.hops);
        w.u16(detail.len() as u16);
        w.u32(self.tag);
        w.eid(&self.eid);
        w.u64(self.offset);
        w.u32(self.length);
        w.node(&self.from);
        w.bytes(detail);
        Ok(w.position())
    }
}

/// `s` cut to at most `max` bytes at a character boundary.
pub(crate) fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_detail_cut() {
        let n = Nack {
            code: NackCode::Busy,
            hops: 1,
            tag: 3,
            eid: Eid([9; 32]),
            offset: 5,
            length: 6,
            from: NodeId::label("r1").unwrap(),
            detail: "slow down",
        };
        let mut buf = [0u8; 700];
        let len = n.encode(&mut buf).unwrap();
        assert_eq!(Nack::decode(&buf[..len]).unwrap(), n);
        let long = "é".repeat(400); // 800 bytes
        let n2 = Nack { detail: &long, ..n };
        let len = n2.encode(&mut buf).unwrap();
        let back = Nack::decode(&buf[..len]).unwrap();
        assert_eq!(back.detail.len(), 512);
        assert!(long.starts_with(back.detail));
    }

    #[test]
    fn codes_round_trip() {
        for c in 0..=255u8 {
            assert_eq!(NackCode::from_u8(c).to_u8(), c);
        }
    }
}
