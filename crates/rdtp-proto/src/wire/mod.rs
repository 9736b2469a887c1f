//! The rdtp wire format, version 3. Byte layouts and test vectors: `docs/PROTOCOL.md`.
//!
//! Every datagram starts with the same 4 bytes: the magic `"RD"`, the version and the
//! packet type, so a stray datagram is rejected after looking at 4 bytes. All integers are
//! big-endian. Decoding never panics and never allocates: decoded packets borrow the
//! datagram (payloads, names, option areas).
//!
//! | type | message | direction |
//! |---|---|---|
//! | 0x01 | [`Request`] — EID, byte range(s), unit size | receiver → server |
//! | 0x02 | [`Data`] — one unit of content | server → receiver |
//! | 0x03 | [`Nack`] — why a request cannot be served | server → receiver |
//! | 0x04 | [`ResolveRequest`] — name or EID → EID and size | receiver → server |
//! | 0x05 | [`ResolveResponse`] | server → receiver |
//! | 0x06 | [`ListRequest`] — page of the catalogue | client → server |
//! | 0x07 | [`ListResponse`] | server → client |
//! | 0x08 | [`Retry`] — a token instead of an answer (address validation) | server → receiver |
//! | 0x09 | [`ProofRequest`] — hash-tree siblings of one block (verified streaming) | receiver → server |
//! | 0x0A | [`Proof`] | server → receiver |

pub mod annotation;
mod attribute;
mod builder;
mod codec;
mod data;
mod list;
mod nack;
mod proof;
mod request;
mod resolve;
mod retry;
pub mod tlv;

pub use attribute::{Attribution, attribute};
pub use builder::OptionsWriter;
pub use data::{DATA_HEADER_LEN, Data, DataFlags};
pub use list::{
    LIST_MAX_DATAGRAM, LIST_REQUEST_LEN, ListEntry, ListEntryIter, ListRequest, ListResponse, ListResponseBuilder,
};
pub(crate) use nack::cut as cut_detail;
pub use nack::{NACK_HEADER_LEN, NACK_MAX_DETAIL, Nack, NackCode};
pub use proof::{PROOF_HEADER_LEN, PROOF_REQUEST_HEADER_LEN, Proof, ProofRequest};
pub use request::{DEFAULT_HOP_LIMIT, REQUEST_HEADER_LEN, Request, RequestFlags};
pub use resolve::{Query, RESOLVE_MAX_NAME, ResolveRequest, ResolveResponse, check_name};
pub use retry::{MAX_TOKEN_LEN, RETRY_HEADER_LEN, Retry};
pub use tlv::{ByteRange, Options, Ranges};

/// First two bytes of every rdtp datagram.
pub const MAGIC: [u8; 2] = *b"RD";
/// The version this crate speaks (2: routers — hop limits, nonces, served-by; see
/// `docs/PROTOCOL.md` for what changed from 1).
pub const VERSION: u8 = 3;
/// The detail of the `UnsupportedVersion` Nack servers and routers send.
pub(crate) const UNSUPPORTED_VERSION_DETAIL: &str = "this node speaks rdtp version 3";
/// Length of the common prefix (magic, version, type).
pub const PREFIX_LEN: usize = 4;

/// Smallest unit (payload bytes per Data packet) a server accepts.
pub const MIN_UNIT: u16 = 64;
/// Largest unit: a Data datagram (without options) must fit the 65 507-byte IPv4 UDP
/// payload limit.
pub const MAX_UNIT: u16 = (65_507 - DATA_HEADER_LEN) as u16;

/// IPv4 header (20) + UDP header (8).
pub const IPV4_UDP_OVERHEAD: usize = 28;
/// IPv6 header (40) + UDP header (8).
pub const IPV6_UDP_OVERHEAD: usize = 48;

/// The largest unit whose Data datagrams fit in one IP packet of `mtu` bytes.
///
/// For MTU 1500 this is 1402 bytes over IPv4 and 1382 over IPv6; for a 9000-byte jumbo
/// MTU, 8902 and 8882. Returns `None` if the MTU cannot carry [`MIN_UNIT`].
pub fn unit_for_mtu(mtu: usize, ipv6: bool) -> Option<u16> {
    let overhead = if ipv6 { IPV6_UDP_OVERHEAD } else { IPV4_UDP_OVERHEAD } + DATA_HEADER_LEN;
    let unit = mtu.checked_sub(overhead)?;
    let unit = unit.min(MAX_UNIT as usize);
    (unit >= MIN_UNIT as usize).then_some(unit as u16)
}

/// Most bytes of Data (headers included) a server or router answers one request with by
/// default (1 MiB: 64 units even of a 9000-byte jumbo MTU); receivers size their requests
/// to fit it.
pub const DEFAULT_MAX_REPLY_BYTES: u64 = 1 << 20;

/// Default unit: fits a 1500-byte MTU over IPv4 (seed 000's `UNIT_MSS`, sized for our headers).
pub const DEFAULT_UNIT: u16 = 1500 - (IPV4_UDP_OVERHEAD + DATA_HEADER_LEN) as u16;

/// Packet type codes (byte 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketType {
    Request = 0x01,
    Data = 0x02,
    Nack = 0x03,
    ResolveRequest = 0x04,
    ResolveResponse = 0x05,
    ListRequest = 0x06,
    ListResponse = 0x07,
    Retry = 0x08,
    ProofRequest = 0x09,
    Proof = 0x0A,
}

impl PacketType {
    /// Whether this type is a request (answered by servers and routers) rather than a
    /// response (never answered).
    pub fn is_request(self) -> bool {
        matches!(
            self,
            PacketType::Request | PacketType::ResolveRequest | PacketType::ListRequest | PacketType::ProofRequest
        )
    }

    /// Whether byte 3 of a datagram, `t`, names a request type (even in a version this
    /// node does not speak: such requests get an `UnsupportedVersion` Nack).
    pub fn is_request_byte(t: u8) -> bool {
        Self::from_u8(t).is_some_and(Self::is_request)
    }

    fn from_u8(b: u8) -> Option<Self> {
        Some(match b {
            0x01 => Self::Request,
            0x02 => Self::Data,
            0x03 => Self::Nack,
            0x04 => Self::ResolveRequest,
            0x05 => Self::ResolveResponse,
            0x06 => Self::ListRequest,
            0x07 => Self::ListResponse,
            0x08 => Self::Retry,
            0x09 => Self::ProofRequest,
            0x0A => Self::Proof,
            _ => return None,
        })
    }
}

/// Why a datagram could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not an rdtp datagram (too short for the prefix, or wrong magic). Drop silently.
    #[error("not an rdtp datagram")]
    NotRdtp,
    /// An rdtp datagram of a version we do not speak.
    #[error("unsupported rdtp version {0}")]
    UnsupportedVersion(u8),
    /// An unknown packet type.
    #[error("unknown packet type {0:#04x}")]
    UnknownType(u8),
    /// The datagram ends before a field it announces.
    #[error("truncated {0}")]
    Truncated(&'static str),
    /// A field has a value the format forbids.
    #[error("invalid {0}")]
    Invalid(&'static str),
}

/// The output buffer is too small for the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("buffer too small: need {needed} bytes, have {available}")]
pub struct BufferTooSmall {
    pub needed: usize,
    pub available: usize,
}

/// Any decoded rdtp packet, borrowing the datagram it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet<'a> {
    Request(Request<'a>),
    Data(Data<'a>),
    Nack(Nack<'a>),
    ResolveRequest(ResolveRequest<'a>),
    ResolveResponse(ResolveResponse<'a>),
    ListRequest(ListRequest<'a>),
    ListResponse(ListResponse<'a>),
    Retry(Retry<'a>),
    ProofRequest(ProofRequest<'a>),
    Proof(Proof<'a>),
}

impl<'a> Packet<'a> {
    /// Decode one datagram. Never panics, whatever the bytes.
    pub fn decode(datagram: &'a [u8]) -> Result<Packet<'a>, DecodeError> {
        let ty = check_prefix(datagram)?;
        Ok(match ty {
            PacketType::Request => Packet::Request(Request::decode(datagram)?),
            PacketType::Data => Packet::Data(Data::decode(datagram)?),
            PacketType::Nack => Packet::Nack(Nack::decode(datagram)?),
            PacketType::ResolveRequest => Packet::ResolveRequest(ResolveRequest::decode(datagram)?),
            PacketType::ResolveResponse => Packet::ResolveResponse(ResolveResponse::decode(datagram)?),
            PacketType::ListRequest => Packet::ListRequest(ListRequest::decode(datagram)?),
            PacketType::ListResponse => Packet::ListResponse(ListResponse::decode(datagram)?),
            PacketType::Retry => Packet::Retry(Retry::decode(datagram)?),
            PacketType::ProofRequest => Packet::ProofRequest(ProofRequest::decode(datagram)?),
            PacketType::Proof => Packet::Proof(Proof::decode(datagram)?),
        })
    }

    /// Encode into `out`, returning the number of bytes written.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        match self {
            Packet::Request(p) => p.encode(out),
            Packet::Data(p) => p.encode(out),
            Packet::Nack(p) => p.encode(out),
            Packet::ResolveRequest(p) => p.encode(out),
            Packet::ResolveResponse(p) => p.encode(out),
            Packet::ListRequest(p) => p.encode(out),
            Packet::ListResponse(p) => p.encode(out),
            Packet::Retry(p) => p.encode(out),
            Packet::ProofRequest(p) => p.encode(out),
            Packet::Proof(p) => p.encode(out),
        }
    }
}

/// Offset of the tag in every response (Data, Nack, ResolveResponse, ListResponse, Retry,
/// Proof).
pub const RESPONSE_TAG_AT: usize = 8;
/// Offset of the hop count in Data, Nack and Proof.
pub const HOPS_AT: usize = 5;

/// Replace, in place, the tag of a response datagram that [`Packet::decode`] accepted as
/// Data, Nack, ResolveResponse or ListResponse: a router forwarding a response downstream
/// gives it the tag of the downstream's request.
pub fn rewrite_response(datagram: &mut [u8], tag: u32) {
    datagram[RESPONSE_TAG_AT..RESPONSE_TAG_AT + 4].copy_from_slice(&tag.to_be_bytes());
}

/// Set, in place, the hop count of a Data or Nack datagram that [`Packet::decode`] accepted.
pub fn set_hops(datagram: &mut [u8], hops: u8) {
    datagram[HOPS_AT] = hops;
}

/// Offset of the flags in Data.
pub const DATA_FLAGS_AT: usize = 4;

/// Set, in place, flag bits `bits` ([`DataFlags`]) of a Data datagram that [`Packet::decode`]
/// accepted (the others are unchanged).
pub fn set_data_flags(datagram: &mut [u8], bits: u8) {
    datagram[DATA_FLAGS_AT] |= bits;
}

/// Check magic and version; return the packet type.
pub fn check_prefix(datagram: &[u8]) -> Result<PacketType, DecodeError> {
    if datagram.len() < PREFIX_LEN || datagram[..2] != MAGIC {
        return Err(DecodeError::NotRdtp);
    }
    if datagram[2] != VERSION {
        return Err(DecodeError::UnsupportedVersion(datagram[2]));
    }
    PacketType::from_u8(datagram[3]).ok_or(DecodeError::UnknownType(datagram[3]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_sizes_for_common_mtus() {
        assert_eq!(unit_for_mtu(1500, false), Some(1402));
        assert_eq!(unit_for_mtu(1500, true), Some(1382));
        assert_eq!(unit_for_mtu(9000, false), Some(8902));
        assert_eq!(unit_for_mtu(100, false), None);
        assert_eq!(unit_for_mtu(100_000, false), Some(MAX_UNIT));
        assert_eq!(DEFAULT_UNIT, 1402);
        // A maximal Data datagram fits the IPv4 UDP payload limit exactly.
        assert_eq!(MAX_UNIT as usize + DATA_HEADER_LEN, 65_507);
    }

    #[test]
    fn prefix_rejects_strays_cheaply() {
        assert_eq!(Packet::decode(b""), Err(DecodeError::NotRdtp));
        assert_eq!(Packet::decode(b"GET / HTTP/1.1"), Err(DecodeError::NotRdtp));
        assert_eq!(Packet::decode(b"RD\x01\x01"), Err(DecodeError::UnsupportedVersion(1)));
        assert_eq!(Packet::decode(b"RD\x02\x01"), Err(DecodeError::UnsupportedVersion(2)));
        assert_eq!(Packet::decode(b"RD\x03\x7f"), Err(DecodeError::UnknownType(0x7f)));
        assert!(matches!(Packet::decode(b"RD\x03\x01"), Err(DecodeError::Truncated(_))));
        assert!(UNSUPPORTED_VERSION_DETAIL.ends_with(&VERSION.to_string()));
    }
}
