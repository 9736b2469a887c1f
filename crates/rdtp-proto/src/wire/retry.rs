//! Retry: a server or router answers a request from an address it has not validated with a
//! token instead of the content (RFC 9000 §8.1: a Retry carries a token the client echoes);
//! the requester sends the request again with the token in `ADDRESS_TOKEN`. The answer is
//! small, so it cannot be used to amplify a spoofed request.

use super::codec::{Reader, Writer};
use super::header::{BufferTooSmall, DecodeError, PacketType};

/// Fixed part of a Retry, in bytes.
pub const RETRY_HEADER_LEN: usize = 12;
/// Longest address token the wire carries, in a Retry or a request's token option (64
/// bytes, so that schemes other than `crate::token`'s 20-byte one fit).
pub const MAX_TOKEN_LEN: usize = 64;

/// Retry (type 0x08).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retry<'a> {
    /// The tag of the request that was not answered.
    pub tag: u32,
    /// The token to send the request again with (1–64 bytes, opaque to the requester).
    pub token: &'a [u8],
}

impl<'a> Retry<'a> {
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        if super::header::check_prefix(datagram)? != PacketType::Retry {
            return Err(DecodeError::Invalid("packet type"));
        }
        let mut r = Reader::after_prefix(datagram);
        let _reserved = r.u16("reserved")?;
        let len = usize::from(r.u16("token length")?);
        let tag = r.u32("tag")?;
        if len == 0 || len > MAX_TOKEN_LEN {
            return Err(DecodeError::Invalid("token length"));
        }
        let token = r.bytes(len, "token")?;
        r.finish("trailing bytes after token")?;
        Ok(Retry { tag, token })
    }

    pub fn encoded_len(&self) -> usize {
        RETRY_HEADER_LEN + self.token.len()
    }

    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        if self.token.is_empty() || self.token.len() > MAX_TOKEN_LEN {
            return Err(BufferTooSmall { needed: usize::MAX, available: out.len() });
        }
        let mut w = Writer::with_prefix(out, self.encoded_len(), PacketType::Retry)?;
        w.u16(0);
        w.u16(self.token.len() as u16);
        w.u32(self.tag);
        w.bytes(self.token);
        Ok(w.position())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bounds() {
        let r = Retry { tag: 9, token: &[1; 20] };
        let mut buf = [0u8; 64];
        let n = r.encode(&mut buf).unwrap();
        assert_eq!(n, RETRY_HEADER_LEN + 20);
        assert_eq!(Retry::decode(&buf[..n]).unwrap(), r);
        assert!(Retry { tag: 9, token: &[] }.encode(&mut buf).is_err());
        assert!(Retry::decode(&buf[..n - 1]).is_err());
    }
}
