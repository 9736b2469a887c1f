//! Content identifiers (EIDs).
//!
//! An EID names a whole object and certifies it: it is the BLAKE3 hash of the object's
//! bytes (seed 000 §3.1 places an "EID layer" under the transport; we make the identifier
//! self-certifying so a receiver can check what it got against what it asked for).

use core::fmt;
use core::str::FromStr;

/// Length of an EID on the wire, in bytes.
pub const EID_LEN: usize = 32;

/// A content identifier: BLAKE3-256 of the content.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Eid(pub [u8; EID_LEN]);

impl Eid {
    /// The EID of `content`.
    pub fn of(content: &[u8]) -> Eid {
        Eid(*blake3::hash(content).as_bytes())
    }

    /// The EID a finished incremental hash stands for.
    pub fn from_hasher(h: &blake3::Hasher) -> Eid {
        Eid(*h.finalize().as_bytes())
    }

    /// Lower-case hex, 64 characters (BLAKE3's own encoding, `blake3::Hash::to_hex`).
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    /// First 8 bytes in hex, for logs.
    pub fn short(&self) -> String {
        self.to_hex()[..16].to_string()
    }
}

/// Why a string is not an EID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an EID is 64 hexadecimal digits")]
pub struct ParseEidError;

impl FromStr for Eid {
    type Err = ParseEidError;
    /// 64 hexadecimal digits, either case (`blake3::Hash::from_hex`).
    fn from_str(s: &str) -> Result<Eid, ParseEidError> {
        blake3::Hash::from_hex(s).map(|h| Eid(*h.as_bytes())).map_err(|_| ParseEidError)
    }
}

impl fmt::Display for Eid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Eid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Eid({})", self.short())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_known_hash() {
        // BLAKE3 of the empty input (from the BLAKE3 specification's test vectors).
        let e = Eid::of(b"");
        assert_eq!(e.to_hex(), "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
        assert_eq!(e.to_hex().parse::<Eid>().unwrap(), e);
        assert_eq!("AF1349B9F5F9A1A6A0404DEA36DCC9499BCB25C9ADC112B7CC9A93CAE41F3262".parse::<Eid>().unwrap(), e);
        assert!("xyz".parse::<Eid>().is_err());
        assert!("g".repeat(64).parse::<Eid>().is_err());
    }
}
