//! Writing option areas: the one place a node builds the options of a request it sends.
//!
//! A node that sends a request writes its option items (docs/PROTOCOL.md "Options") into a
//! buffer of its own and hands the packet an [`Options`] over those bytes. [`OptionsWriter`]
//! writes the items and returns that [`Options`] directly, already indexed, instead of
//! parsing back what was just written (which used to be an `expect` at every call site).
//!
//! It must not accept bytes from the network: [`OptionsWriter::items`] copies items that
//! came out of an [`Options`] that [`Options::parse`] validated.

use super::tlv::{ByteRange, Options};
use super::tlv::{Once, TlvIter, address_token_len, extra_ranges_len, types, write_address_token, write_ranges_item};

/// Writes option items into a caller's buffer; [`OptionsWriter::finish`] yields them as
/// [`Options`]. Items are written in the order of the calls.
///
/// Each method panics if the buffer cannot hold the item: callers size the buffer from what
/// they write ([`address_token_len`], [`extra_ranges_len`], [`crate::receiver::MAX_DATAGRAM`]).
#[derive(Debug)]
pub struct OptionsWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
    /// Where the items that may appear once were written: `(type, start, length)` of the value.
    once: [(u8, usize, usize); 4],
    once_len: usize,
}

impl<'a> OptionsWriter<'a> {
    /// A writer filling `buf` from its start.
    pub fn new(buf: &'a mut [u8]) -> Self {
        OptionsWriter { buf, len: 0, once: [(0, 0, 0); 4], once_len: 0 }
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Nothing written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// An `ADDRESS_TOKEN` item for `token`, if there is one (at most 64 bytes).
    pub fn address_token(mut self, token: Option<&[u8]>) -> Self {
        let n = write_address_token(&mut self.buf[self.len..self.len + address_token_len(token)], token);
        self.wrote(types::ADDRESS_TOKEN, n);
        self
    }

    /// An `EXTRA_RANGES` item for `ranges` (nothing if there are none).
    pub fn extra_ranges(mut self, ranges: &[ByteRange]) -> Self {
        let end = self.len + extra_ranges_len(ranges.len());
        let n = write_ranges_item(&mut self.buf[self.len..end], types::EXTRA_RANGES, ranges);
        self.wrote(types::EXTRA_RANGES, n);
        self
    }

    /// An `ANTICIPATED` item for `ranges` (nothing if there are none; S3 §II-A).
    pub fn anticipated(mut self, ranges: &[ByteRange]) -> Self {
        let end = self.len + extra_ranges_len(ranges.len());
        let n = write_ranges_item(&mut self.buf[self.len..end], types::ANTICIPATED, ranges);
        self.wrote(types::ANTICIPATED, n);
        self
    }

    /// Copies of the items in `items`, which must be whole items taken from an area
    /// [`Options::parse`] accepted (e.g. the annotations a router passes on).
    pub fn items(mut self, items: &[u8]) -> Self {
        self.buf[self.len..self.len + items.len()].copy_from_slice(items);
        let mut at = self.len;
        for (ty, value) in (TlvIter { rest: items }).map_while(Result::ok) {
            let item = super::tlv::TLV_HEADER_LEN + value.len();
            if Once::holds(ty) {
                self.note(ty, at, item);
            }
            at += item;
        }
        self.len += items.len();
        self
    }

    /// The options written, indexed as [`Options::parse`] would have indexed them.
    pub fn finish(self) -> Options<'a> {
        let OptionsWriter { buf, len, once, once_len } = self;
        let raw: &'a [u8] = &buf[..len];
        let mut index = Once::NONE;
        for &(ty, start, n) in &once[..once_len] {
            if let Some(slot) = index.slot(ty) {
                *slot = Some(&raw[start + super::tlv::TLV_HEADER_LEN..start + n]);
            }
        }
        Options { raw, once: index }
    }

    fn wrote(&mut self, ty: u8, n: usize) {
        if n > 0 {
            self.note(ty, self.len, n);
            self.len += n;
        }
    }

    fn note(&mut self, ty: u8, start: usize, n: usize) {
        debug_assert!(self.once[..self.once_len].iter().all(|&(t, ..)| t != ty), "option {ty:#x} written twice");
        self.once[self.once_len] = (ty, start, n);
        self.once_len += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::annotation::write_request_nonce;

    /// What the writer yields is exactly what parsing its bytes yields.
    fn same_as_parsed(o: Options<'_>) {
        assert_eq!(Options::parse(o.raw()).unwrap(), o);
    }

    #[test]
    fn written_options_equal_their_parse() {
        let mut buf = [0u8; 512];
        same_as_parsed(OptionsWriter::new(&mut buf).finish());
        let mut buf = [0u8; 512];
        same_as_parsed(OptionsWriter::new(&mut buf).address_token(Some(&[7; 32])).finish());
        let ranges = [ByteRange::new(1200, 1200), ByteRange::new(9600, 2400)];
        let mut buf = [0u8; 512];
        let o = OptionsWriter::new(&mut buf)
            .extra_ranges(&ranges)
            .address_token(Some(b"tok"))
            .anticipated(&ranges[..1])
            .finish();
        same_as_parsed(o);
        assert_eq!(o.extra_ranges().collect::<Vec<_>>(), ranges);
        assert_eq!(o.address_token(), Some(&b"tok"[..]));
        let mut buf = [0u8; 512];
        same_as_parsed(OptionsWriter::new(&mut buf).extra_ranges(&[]).address_token(None).anticipated(&[]).finish());
    }

    #[test]
    fn copied_items_are_indexed() {
        let mut area = [0u8; 64];
        let mut n = OptionsWriter::new(&mut area).anticipated(&[ByteRange::new(0, 100)]).len();
        n += write_request_nonce(&mut area[n..], 42);
        let items = Options::parse(&area[..n]).unwrap();
        let mut buf = [0u8; 512];
        let o = OptionsWriter::new(&mut buf).extra_ranges(&[ByteRange::new(5, 5)]).items(items.raw()).finish();
        same_as_parsed(o);
        assert_eq!(o.anticipated().count(), 1);
    }
}
