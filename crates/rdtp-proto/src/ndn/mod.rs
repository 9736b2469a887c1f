//! # NDN packets (v0.3): a codec beside rdtp's own wire format
//!
//! What lets rdtp speak to Named Data Networking nodes (forwarders, producers, consumers):
//! the packet encodings and naming conventions, and nothing of the forwarding or fetching
//! logic. Specifications followed, by name:
//!
//! * "NDN Packet Format Specification 0.3" (named-data.net): the TLV encoding
//!   ([`tlv`]: VAR-NUMBER, nonNegativeInteger, the critical/non-critical rule of
//!   "Considerations for evolvability of TLV-based encoding"), Name ([`name`]), Interest
//!   ([`interest`]) and Data with DigestSha256 ([`data`]);
//! * "NDNLPv2" (the NDN link protocol): LpPacket, Nack, PIT tokens and hop-by-hop
//!   fragmentation and reassembly ([`lp`]);
//! * "NDN naming conventions" rev. 3 (NDN-TR-0022): typed components for segments,
//!   versions, byte offsets, timestamps, sequence numbers, keywords ([`name`]);
//! * RDR, "Realtime Data Retrieval" (the `32=metadata` discovery of the latest version) and
//!   segmented objects as ndnputchunks and NDNts publish them ([`segmented`]).
//!
//! Beside the codec, [`consumer`] fetches a segmented object from an NDN node with rdtp's
//! receiver (every controller): a translator between the receiver's requests and Interests,
//! and between NDN Data and Nacks and rdtp's.
//!
//! Signature types other than DigestSha256 (Ed25519, ECDSA, RSA, HMAC) are decoded (type,
//! KeyLocator) and reported unverified ([`data::Verification`]), unless a trust anchor is
//! given ([`trust`]: Ed25519 and ECDSA P-256 signatures checked against a certificate's key).
//!
//! Beside the packets, one node: the producer ([`producer`]) that `rdtp serve --ndn-listen`
//! runs, answering Interests from a server's catalogue (`server::Catalog`) as
//! ndnputchunks publishes files.
//!
//! ## What this module must not do
//!
//! The same as the whole crate: no sockets, no clock reads (the reassembler is given `now`),
//! no randomness (nonces are passed in), no file access. It must never panic on bytes from
//! the network: every decoder returns [`Error`] on truncation, lengths past the end,
//! unknown critical elements and malformed values, and the reassembler's memory is bounded
//! whatever fragments arrive. Of the rest of the crate the codec imports only `Time`; the
//! consumer also imports the receiver it wraps and rdtp's wire format it speaks to it, the
//! producer the server's catalogue and send budget (`server`); never the reverse.

pub mod consumer;
pub mod data;
pub mod interest;
pub mod lp;
pub mod name;
pub mod producer;
pub mod segmented;
pub mod tlv;
pub mod trust;

pub use consumer::{Consumer, ConsumerConfig, NdnStats};
pub use data::{Data, KeyLocator, MetaInfo, SignatureInfo, SignatureType, Verification};
pub use interest::Interest;
pub use lp::{LpPacket, Nack, NackReason, Reassembler, ReassemblerLimits};
pub use name::{Component, Name};

/// Why bytes were refused as an NDN packet (or a name as an NDN URI).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The bytes end inside a TLV-TYPE, a TLV-LENGTH or a TLV-VALUE.
    #[error("truncated TLV")]
    Truncated,
    /// A TLV-TYPE of 0 or above 2^32 − 1 (reserved / invalid in every NDN number space).
    #[error("invalid TLV-TYPE {0}")]
    InvalidType(u64),
    /// A different element where the grammar requires one (e.g. the outermost TLV is not an
    /// Interest, or the first element of an Interest is not its Name).
    #[error("expected {expected}, found TLV-TYPE {found}")]
    Unexpected {
        /// What the grammar requires here.
        expected: &'static str,
        /// The TLV-TYPE found instead.
        found: u64,
    },
    /// An unrecognised or out-of-order element whose TLV-TYPE is critical (spec 0.3:
    /// types below 32 or odd), or an LpPacket header field that cannot be ignored.
    #[error("unrecognised critical element of TLV-TYPE {0}")]
    Critical(u64),
    /// A required element is absent.
    #[error("{0} is missing")]
    Missing(&'static str),
    /// An element is present but its value is not allowed (wrong length, bad number…).
    #[error("invalid {0}")]
    Invalid(&'static str),
    /// Bytes after the outermost TLV.
    #[error("bytes after the packet")]
    Trailing,
    /// An Interest's ParametersSha256DigestComponent does not match its parameters (or one
    /// of the two is there without the other).
    #[error("ParametersSha256Digest does not match")]
    ParametersDigest,
    /// A name in URI form could not be parsed.
    #[error("bad NDN URI: {0}")]
    Uri(&'static str),
    /// A packet too large for the link and no room to fragment it.
    #[error("{0}")]
    TooLarge(&'static str),
}

/// SHA-256 of `parts` concatenated (the only hash NDN v0.3's digests use).
pub(crate) fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// Hexadecimal (whitespace ignored) to bytes, for the tests' vectors.
#[cfg(test)]
pub(crate) fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}
