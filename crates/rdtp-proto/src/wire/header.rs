//! The 4-byte prefix every rdtp datagram starts with (magic, version, packet type), the
//! decoding errors, and the fixed offsets routers rewrite in place. Every codec of this
//! directory builds on it; it imports none of them.

/// First two bytes of every rdtp datagram.
pub const MAGIC: [u8; 2] = *b"RD";
/// The version this crate speaks (2: routers — hop limits, nonces, served-by; see
/// `docs/PROTOCOL.md` for what changed from 1).
pub const VERSION: u8 = 3;
/// The detail of the `UnsupportedVersion` Nack servers and routers send.
pub(crate) const UNSUPPORTED_VERSION_DETAIL: &str = "this node speaks rdtp version 3";
/// Length of the common prefix (magic, version, type).
pub const PREFIX_LEN: usize = 4;

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

/// Offset of the tag in every response (Data, Nack, ResolveResponse, ListResponse, Retry,
/// Proof).
pub const RESPONSE_TAG_AT: usize = 8;
/// Offset of the hop count in Data, Nack and Proof.
pub const HOPS_AT: usize = 5;

/// Replace, in place, the tag of a response datagram that [`super::Packet::decode`] accepted as
/// Data, Nack, ResolveResponse or ListResponse: a router forwarding a response downstream
/// gives it the tag of the downstream's request.
pub fn rewrite_response(datagram: &mut [u8], tag: u32) {
    datagram[RESPONSE_TAG_AT..RESPONSE_TAG_AT + 4].copy_from_slice(&tag.to_be_bytes());
}

/// Set, in place, the hop count of a Data or Nack datagram that [`super::Packet::decode`] accepted.
pub fn set_hops(datagram: &mut [u8], hops: u8) {
    datagram[HOPS_AT] = hops;
}

/// Offset of the flags in Data.
pub const DATA_FLAGS_AT: usize = 4;

/// Set, in place, flag bits `bits` ([`super::data::DataFlags`]) of a Data datagram that [`super::Packet::decode`]
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
