//! Resolve: a name or an EID → EID and size (the role of seed 000's Name Resolution
//! System, answered by the server that holds the content).

use super::codec::{Reader, Writer};
use super::header::{BufferTooSmall, DecodeError, PacketType};
use super::tlv::Options;
use crate::eid::{EID_LEN, Eid};

/// Longest name, in bytes of UTF-8.
pub const RESOLVE_MAX_NAME: usize = 1024;
const RESOLVE_REQUEST_HEADER_LEN: usize = 14;
const RESOLVE_RESPONSE_HEADER_LEN: usize = 52;

/// What to resolve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query<'a> {
    /// A name from the server's catalogue (e.g. a path relative to the served directory).
    Name(&'a str),
    /// An EID: asks for the object's size (and name).
    Eid(Eid),
}

/// ResolveRequest (type 0x04).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolveRequest<'a> {
    /// Routers that may still forward this request (as a Request's).
    pub hop_limit: u8,
    pub tag: u32,
    pub query: Query<'a>,
    /// TLV options (as a Request's): `ADDRESS_TOKEN`.
    pub options: Options<'a>,
}

/// Whether a server can be asked for `name`: 1 to [`RESOLVE_MAX_NAME`] bytes of UTF-8, as
/// a ResolveRequest requires. The error says which limit it breaks (a server's `Malformed`
/// Nack says the same); clients check before sending (`rdtp fetch`, issue 23).
pub fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("empty name");
    }
    if name.len() > RESOLVE_MAX_NAME {
        return Err("name longer than 1024 bytes");
    }
    Ok(())
}

fn name_from(bytes: &[u8]) -> Result<&str, DecodeError> {
    if bytes.len() > RESOLVE_MAX_NAME {
        return Err(DecodeError::Invalid("name longer than 1024 bytes"));
    }
    core::str::from_utf8(bytes).map_err(|_| DecodeError::Invalid("name is not UTF-8"))
}

impl<'a> ResolveRequest<'a> {
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        if super::header::check_prefix(datagram)? != PacketType::ResolveRequest {
            return Err(DecodeError::Invalid("packet type"));
        }
        let mut r = Reader::after_prefix(datagram);
        let qtype = r.u8("query type")?;
        let hop_limit = r.u8("hop limit")?;
        let qlen = usize::from(r.u16("query length")?);
        let tag = r.u32("tag")?;
        let opt_len = usize::from(r.u16("options length")?);
        let q = r.bytes(qlen, "query")?;
        let options = Options::parse(r.bytes(opt_len, "options")?)?;
        r.finish("trailing bytes after options")?;
        let query = match qtype {
            1 => {
                let name = name_from(q)?;
                check_name(name).map_err(DecodeError::Invalid)?;
                Query::Name(name)
            }
            2 => {
                let arr: [u8; EID_LEN] = q.try_into().map_err(|_| DecodeError::Invalid("EID query length"))?;
                Query::Eid(Eid(arr))
            }
            _ => return Err(DecodeError::Invalid("query type")),
        };
        Ok(ResolveRequest { hop_limit, tag, query, options })
    }

    fn query_bytes(&self) -> (u8, &[u8]) {
        match &self.query {
            Query::Name(n) => (1, n.as_bytes()),
            Query::Eid(e) => (2, &e.0),
        }
    }

    pub fn encoded_len(&self) -> usize {
        RESOLVE_REQUEST_HEADER_LEN + self.query_bytes().1.len() + self.options.raw().len()
    }

    /// Encode; names longer than [`RESOLVE_MAX_NAME`] are refused as a too-small buffer
    /// would be, since no peer could decode them.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        let (qtype, q) = self.query_bytes();
        if q.len() > RESOLVE_MAX_NAME {
            return Err(BufferTooSmall {
                needed: self.encoded_len(),
                available: RESOLVE_REQUEST_HEADER_LEN + RESOLVE_MAX_NAME,
            });
        }
        let raw = self.options.raw();
        let opt_len =
            u16::try_from(raw.len()).map_err(|_| BufferTooSmall { needed: usize::MAX, available: out.len() })?;
        let mut w = Writer::with_prefix(out, self.encoded_len(), PacketType::ResolveRequest)?;
        w.u8(qtype);
        w.u8(self.hop_limit);
        w.u16(q.len() as u16);
        w.u32(self.tag);
        w.u16(opt_len);
        w.bytes(q);
        w.bytes(raw);
        Ok(w.position())
    }
}

/// ResolveResponse (type 0x05).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResolveResponse<'a> {
    pub tag: u32,
    pub eid: Eid,
    pub size: u64,
    pub name: &'a str,
}

impl<'a> ResolveResponse<'a> {
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        if super::header::check_prefix(datagram)? != PacketType::ResolveResponse {
            return Err(DecodeError::Invalid("packet type"));
        }
        let mut r = Reader::after_prefix(datagram);
        let _reserved = r.u16("reserved")?;
        let name_len = usize::from(r.u16("name length")?);
        let tag = r.u32("tag")?;
        let eid = r.eid()?;
        let size = r.u64("size")?;
        let name = name_from(r.bytes(name_len, "name")?)?;
        r.finish("trailing bytes after name")?;
        Ok(ResolveResponse { tag, eid, size, name })
    }

    pub fn encoded_len(&self) -> usize {
        RESOLVE_RESPONSE_HEADER_LEN + self.name.len()
    }

    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        if self.name.len() > RESOLVE_MAX_NAME {
            return Err(BufferTooSmall {
                needed: self.encoded_len(),
                available: RESOLVE_RESPONSE_HEADER_LEN + RESOLVE_MAX_NAME,
            });
        }
        let mut w = Writer::with_prefix(out, self.encoded_len(), PacketType::ResolveResponse)?;
        w.u16(0);
        w.u16(self.name.len() as u16);
        w.u32(self.tag);
        w.eid(&self.eid);
        w.u64(self.size);
        w.bytes(self.name.as_bytes());
        Ok(w.position())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut buf = [0u8; 2048];
        for q in [Query::Name("videos/a.mp4"), Query::Eid(Eid([4; 32]))] {
            let r = ResolveRequest {
                hop_limit: 7,
                tag: 11,
                query: q,
                options: Options::parse(&[0x41, 0, 2, 1, 2]).unwrap(),
            };
            let n = r.encode(&mut buf).unwrap();
            assert_eq!(ResolveRequest::decode(&buf[..n]).unwrap(), r);
        }
        let resp = ResolveResponse { tag: 11, eid: Eid([4; 32]), size: 1 << 33, name: "videos/a.mp4" };
        let n = resp.encode(&mut buf).unwrap();
        assert_eq!(ResolveResponse::decode(&buf[..n]).unwrap(), resp);
    }

    #[test]
    fn rejects_bad_queries() {
        let long = "x".repeat(RESOLVE_MAX_NAME + 1);
        let mut buf = [0u8; 2048];
        let long_query = ResolveRequest { hop_limit: 7, tag: 0, query: Query::Name(&long), options: Options::EMPTY };
        assert!(long_query.encode(&mut buf).is_err());
        // EID query with the wrong length.
        let bad = [b'R', b'D', super::super::VERSION, 4, 2, 0, 0, 3, 0, 0, 0, 0, 0, 0, 1, 2, 3];
        assert!(ResolveRequest::decode(&bad).is_err());
        // Empty name.
        let empty = [b'R', b'D', super::super::VERSION, 4, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert!(ResolveRequest::decode(&empty).is_err());
    }
}
