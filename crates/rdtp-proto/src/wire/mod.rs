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
mod header;
mod list;
mod nack;
mod proof;
mod request;
mod resolve;
mod retry;
pub mod tlv;

pub use attribute::{Attribution, attribute};
pub use builder::OptionsWriter;
pub use data::{DATA_HEADER_LEN, Data, DataFlags, MAX_UNIT, MIN_UNIT};
pub(crate) use header::UNSUPPORTED_VERSION_DETAIL;
pub use header::{
    BufferTooSmall, DATA_FLAGS_AT, DecodeError, HOPS_AT, MAGIC, PREFIX_LEN, PacketType, RESPONSE_TAG_AT, VERSION,
    check_prefix, rewrite_response, set_data_flags, set_hops,
};
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
