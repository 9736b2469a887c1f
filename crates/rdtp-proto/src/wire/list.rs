//! List: page through the names a server serves (`rdtp ls`).

use super::codec::{Reader, Writer};
use super::header::{BufferTooSmall, DecodeError, PacketType};
use super::resolve::RESOLVE_MAX_NAME;
use super::tlv::Options;
use crate::eid::{EID_LEN, Eid};

/// Size of a ListRequest without options.
pub const LIST_REQUEST_LEN: usize = 18;
/// Largest ListResponse a server sends: fits the IPv6 minimum MTU (1280 − 48).
pub const LIST_MAX_DATAGRAM: usize = 1232;
const LIST_RESPONSE_HEADER_LEN: usize = 20;
const ENTRY_FIXED_LEN: usize = EID_LEN + 8 + 2;

/// ListRequest (type 0x06): the page starting at catalogue index `cursor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListRequest<'a> {
    /// Routers that may still forward this request (as a Request's).
    pub hop_limit: u8,
    pub tag: u32,
    pub cursor: u32,
    /// TLV options (as a Request's): `ADDRESS_TOKEN`.
    pub options: Options<'a>,
}

impl<'a> ListRequest<'a> {
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        if super::header::check_prefix(datagram)? != PacketType::ListRequest {
            return Err(DecodeError::Invalid("packet type"));
        }
        let mut r = Reader::after_prefix(datagram);
        let hop_limit = r.u8("hop limit")?;
        let _reserved = r.bytes(3, "reserved")?;
        let tag = r.u32("tag")?;
        let cursor = r.u32("cursor")?;
        let opt_len = usize::from(r.u16("options length")?);
        let options = Options::parse(r.bytes(opt_len, "options")?)?;
        r.finish("trailing bytes after options")?;
        Ok(ListRequest { hop_limit, tag, cursor, options })
    }

    pub fn encoded_len(&self) -> usize {
        LIST_REQUEST_LEN + self.options.raw().len()
    }

    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        let raw = self.options.raw();
        let opt_len =
            u16::try_from(raw.len()).map_err(|_| BufferTooSmall { needed: usize::MAX, available: out.len() })?;
        let mut w = Writer::with_prefix(out, self.encoded_len(), PacketType::ListRequest)?;
        w.u8(self.hop_limit);
        w.bytes(&[0; 3]);
        w.u32(self.tag);
        w.u32(self.cursor);
        w.u16(opt_len);
        w.bytes(raw);
        Ok(w.position())
    }
}

/// One catalogue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListEntry<'a> {
    pub eid: Eid,
    pub size: u64,
    pub name: &'a str,
}

impl ListEntry<'_> {
    fn encoded_len(&self) -> usize {
        ENTRY_FIXED_LEN + self.name.len()
    }
}

/// ListResponse (type 0x07): entries `cursor .. cursor + count` of `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListResponse<'a> {
    /// More entries follow this page.
    pub more: bool,
    pub tag: u32,
    pub cursor: u32,
    pub total: u32,
    count: u16,
    entries: &'a [u8],
}

impl<'a> ListResponse<'a> {
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        if super::header::check_prefix(datagram)? != PacketType::ListResponse {
            return Err(DecodeError::Invalid("packet type"));
        }
        let mut r = Reader::after_prefix(datagram);
        let flags = r.u8("flags")?;
        let _reserved = r.u8("reserved")?;
        let count = r.u16("count")?;
        let tag = r.u32("tag")?;
        let cursor = r.u32("cursor")?;
        let total = r.u32("total")?;
        let entries = r.rest();
        // Validate every entry now so iteration cannot fail.
        let mut er = EntryReader { rest: entries };
        for _ in 0..count {
            er.next_entry()?;
        }
        if !er.rest.is_empty() {
            return Err(DecodeError::Invalid("trailing bytes after entries"));
        }
        Ok(ListResponse { more: flags & 1 != 0, tag, cursor, total, count, entries })
    }

    /// Number of entries in this page.
    pub fn len(&self) -> usize {
        usize::from(self.count)
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn entries(&self) -> ListEntryIter<'a> {
        ListEntryIter { inner: EntryReader { rest: self.entries }, left: self.count }
    }

    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        let len = LIST_RESPONSE_HEADER_LEN + self.entries.len();
        let mut w = Writer::with_prefix(out, len, PacketType::ListResponse)?;
        w.u8(u8::from(self.more));
        w.u8(0);
        w.u16(self.count);
        w.u32(self.tag);
        w.u32(self.cursor);
        w.u32(self.total);
        w.bytes(self.entries);
        Ok(w.position())
    }
}

/// Iterator over a decoded page.
pub struct ListEntryIter<'a> {
    inner: EntryReader<'a>,
    left: u16,
}

impl<'a> Iterator for ListEntryIter<'a> {
    type Item = ListEntry<'a>;
    fn next(&mut self) -> Option<ListEntry<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.inner.next_entry().ok()
    }
}

struct EntryReader<'a> {
    rest: &'a [u8],
}

impl<'a> EntryReader<'a> {
    fn next_entry(&mut self) -> Result<ListEntry<'a>, DecodeError> {
        let fixed = self.rest.get(..ENTRY_FIXED_LEN).ok_or(DecodeError::Truncated("list entry"))?;
        let mut eid = [0u8; EID_LEN];
        eid.copy_from_slice(&fixed[..EID_LEN]);
        let mut size = [0u8; 8];
        size.copy_from_slice(&fixed[EID_LEN..EID_LEN + 8]);
        let name_len = usize::from(u16::from_be_bytes([fixed[EID_LEN + 8], fixed[EID_LEN + 9]]));
        if name_len > RESOLVE_MAX_NAME {
            return Err(DecodeError::Invalid("name longer than 1024 bytes"));
        }
        let name = self
            .rest
            .get(ENTRY_FIXED_LEN..ENTRY_FIXED_LEN + name_len)
            .ok_or(DecodeError::Truncated("list entry name"))?;
        let name = core::str::from_utf8(name).map_err(|_| DecodeError::Invalid("name is not UTF-8"))?;
        self.rest = &self.rest[ENTRY_FIXED_LEN + name_len..];
        Ok(ListEntry { eid: Eid(eid), size: u64::from_be_bytes(size), name })
    }
}

/// Builds a ListResponse in place, adding entries while they fit in
/// [`LIST_MAX_DATAGRAM`] (or the buffer, if smaller).
pub struct ListResponseBuilder<'b> {
    buf: &'b mut [u8],
    len: usize,
    count: u16,
    limit: usize,
}

impl<'b> ListResponseBuilder<'b> {
    /// Start a page. `buf` must hold at least the 20-byte header.
    pub fn new(buf: &'b mut [u8]) -> Result<Self, BufferTooSmall> {
        if buf.len() < LIST_RESPONSE_HEADER_LEN {
            return Err(BufferTooSmall { needed: LIST_RESPONSE_HEADER_LEN, available: buf.len() });
        }
        let limit = buf.len().min(LIST_MAX_DATAGRAM);
        Ok(ListResponseBuilder { buf, len: LIST_RESPONSE_HEADER_LEN, count: 0, limit })
    }

    /// Append `entry` if it fits; returns false (and leaves the page unchanged) if not.
    pub fn push(&mut self, entry: &ListEntry<'_>) -> bool {
        let need = entry.encoded_len();
        if entry.name.len() > RESOLVE_MAX_NAME || self.len + need > self.limit || self.count == u16::MAX {
            return false;
        }
        let b = &mut self.buf[self.len..self.len + need];
        b[..EID_LEN].copy_from_slice(&entry.eid.0);
        b[EID_LEN..EID_LEN + 8].copy_from_slice(&entry.size.to_be_bytes());
        b[EID_LEN + 8..ENTRY_FIXED_LEN].copy_from_slice(&(entry.name.len() as u16).to_be_bytes());
        b[ENTRY_FIXED_LEN..].copy_from_slice(entry.name.as_bytes());
        self.len += need;
        self.count += 1;
        true
    }

    /// Entries added so far.
    pub fn count(&self) -> u16 {
        self.count
    }

    /// Write the header; returns the datagram length.
    pub fn finish(self, tag: u32, cursor: u32, total: u32, more: bool) -> usize {
        let mut w = Writer::with_prefix(self.buf, LIST_RESPONSE_HEADER_LEN, PacketType::ListResponse)
            .expect("size checked in new()");
        w.u8(u8::from(more));
        w.u8(0);
        w.u16(self.count);
        w.u32(tag);
        w.u32(cursor);
        w.u32(total);
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_round_trip() {
        let r = ListRequest { hop_limit: 3, tag: 1, cursor: 40, options: Options::EMPTY };
        let mut buf = [0u8; LIST_REQUEST_LEN];
        assert_eq!(r.encode(&mut buf).unwrap(), LIST_REQUEST_LEN);
        assert_eq!(ListRequest::decode(&buf).unwrap(), r);
    }

    #[test]
    fn builder_fills_until_full() {
        let mut buf = [0u8; 4096];
        let name = "n".repeat(200);
        let mut b = ListResponseBuilder::new(&mut buf).unwrap();
        let mut pushed = 0;
        while b.push(&ListEntry { eid: Eid([pushed as u8; 32]), size: pushed, name: &name }) {
            pushed += 1;
        }
        // 20 + k * 242 <= 1232  →  k = 5
        assert_eq!(pushed, 5);
        let n = b.finish(9, 0, 12, true);
        assert!(n <= LIST_MAX_DATAGRAM);
        let resp = ListResponse::decode(&buf[..n]).unwrap();
        assert!(resp.more);
        assert_eq!(resp.len(), 5);
        let entries: Vec<_> = resp.entries().collect();
        assert_eq!(entries[3].size, 3);
        assert_eq!(entries[3].name, name);
        let mut again = [0u8; 2048];
        let m = resp.encode(&mut again).unwrap();
        assert_eq!(&again[..m], &buf[..n]);
    }
}
