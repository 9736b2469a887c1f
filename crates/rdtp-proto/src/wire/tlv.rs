//! Request options: type-length-value items after the fixed Request header (seed 000 §3.1).
//!
//! Each item is `type: u8, length: u16, value: [u8; length]`. Types below 0x80 that a
//! node does not know are skipped; types 0x80 and above are *critical*: a node that does
//! not know one must reject the request (Nack `Malformed`). This lets later versions add
//! options without breaking old servers, and lets an option demand to be understood.

use super::header::DecodeError;

/// Registered option types.
pub mod types {
    /// Further byte ranges of the same object: `n × (offset: u64, length: u32)`.
    /// Lets one request ask for discrete fragments, e.g. several lost units (seed 000 §3.1).
    pub const EXTRA_RANGES: u8 = 0x01;
    /// Anticipated interests (seed 003 §II-A): `n × (offset: u64, length: u32)`, the units a
    /// receiver intends to ask for next (in a Request; copied into the Data answering it).
    /// See [`super::super::annotation`].
    pub const ANTICIPATED: u8 = 0x02;
    /// In a Data: the nonce of the request whose `ANTICIPATED` list and annotations it
    /// carries (8 bytes).
    pub const REQUEST_NONCE: u8 = 0x03;
    /// A caching router's annotation (seed 003 §II-A): node id, time, held units, hops.
    pub const ROUTER_ANNOTATION: u8 = 0x40;
    /// An address-validation token the node this request goes to issued to its sender
    /// (1–64 bytes, opaque; see [`crate::token`]): with it the node answers in full, without
    /// it at most three times the request's size (RFC 9000 §8).
    pub const ADDRESS_TOKEN: u8 = 0x41;
    /// First critical type: unknown types at or above this value make a request malformed.
    pub const CRITICAL_MIN: u8 = 0x80;
}

/// Size of one range inside [`types::EXTRA_RANGES`].
pub const RANGE_LEN: usize = 12;
/// Size of an option's type and length fields.
pub const TLV_HEADER_LEN: usize = 3;

/// A byte range of an object: `[offset, offset + length)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ByteRange {
    pub offset: u64,
    pub length: u32,
}

impl ByteRange {
    pub const fn new(offset: u64, length: u32) -> Self {
        ByteRange { offset, length }
    }
    /// One past the last byte (saturating).
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(u64::from(self.length))
    }
}

/// A validated option area, borrowed from the datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Options<'a> {
    pub(super) raw: &'a [u8],
    /// The values of the items that may appear at most once, found by [`Options::parse`]:
    /// looking one up costs nothing, however many other items the area holds (issue 23: a
    /// request's cost is linear in its size).
    pub(super) once: Once<'a>,
}

/// Values of `EXTRA_RANGES`, `ADDRESS_TOKEN`, `ANTICIPATED` and `REQUEST_NONCE`, if present.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) struct Once<'a> {
    extra_ranges: Option<&'a [u8]>,
    address_token: Option<&'a [u8]>,
    anticipated: Option<&'a [u8]>,
    request_nonce: Option<&'a [u8]>,
}

impl<'a> Once<'a> {
    pub(super) const NONE: Once<'static> =
        Once { extra_ranges: None, address_token: None, anticipated: None, request_nonce: None };

    /// Whether items of type `ty` have a slot (may appear at most once).
    pub(super) const fn holds(ty: u8) -> bool {
        matches!(ty, types::EXTRA_RANGES | types::ADDRESS_TOKEN | types::ANTICIPATED | types::REQUEST_NONCE)
    }

    /// The slot of item type `ty`, if it is one of the four.
    pub(super) fn slot(&mut self, ty: u8) -> Option<&mut Option<&'a [u8]>> {
        match ty {
            types::EXTRA_RANGES => Some(&mut self.extra_ranges),
            types::ADDRESS_TOKEN => Some(&mut self.address_token),
            types::ANTICIPATED => Some(&mut self.anticipated),
            types::REQUEST_NONCE => Some(&mut self.request_nonce),
            _ => None,
        }
    }
}

impl<'a> Options<'a> {
    /// No options.
    pub const EMPTY: Options<'static> = Options { raw: &[], once: Once::NONE };

    /// Validate an option area: every item complete, known items well-formed, no unknown
    /// critical item, at most one `EXTRA_RANGES`, `ADDRESS_TOKEN`, `ANTICIPATED` and
    /// `REQUEST_NONCE`, at most 8 `ROUTER_ANNOTATION`s. One pass over the area.
    pub fn parse(raw: &'a [u8]) -> Result<Self, DecodeError> {
        let mut once = Once::NONE;
        let mut seen_annotation = [0usize; 3];
        for item in (TlvIter { rest: raw }) {
            let (ty, value) = item?;
            match ty {
                types::EXTRA_RANGES => {
                    if once.extra_ranges.is_some() {
                        return Err(DecodeError::Invalid("duplicate EXTRA_RANGES option"));
                    }
                    if value.is_empty() || value.len() % RANGE_LEN != 0 {
                        return Err(DecodeError::Invalid("EXTRA_RANGES length"));
                    }
                }
                types::ADDRESS_TOKEN => {
                    if once.address_token.is_some() {
                        return Err(DecodeError::Invalid("duplicate ADDRESS_TOKEN option"));
                    }
                    if value.is_empty() || value.len() > super::retry::MAX_TOKEN_LEN {
                        return Err(DecodeError::Invalid("ADDRESS_TOKEN length"));
                    }
                }
                types::ANTICIPATED | types::REQUEST_NONCE | types::ROUTER_ANNOTATION => {
                    super::annotation::check_item(ty, value, &mut seen_annotation).map_err(DecodeError::Invalid)?;
                }
                t if t >= types::CRITICAL_MIN => return Err(DecodeError::Invalid("unknown critical option")),
                _ => {}
            }
            if let Some(slot) = once.slot(ty) {
                *slot = Some(value);
            }
        }
        Ok(Options { raw, once })
    }

    /// The raw option bytes (for re-encoding).
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// All items as `(type, value)`.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &'a [u8])> + 'a {
        // Validated in `parse`, so errors cannot occur here.
        TlvIter { rest: self.raw }.map_while(Result::ok)
    }

    /// The value of the first item of type `ty` (without a scan for the types that may
    /// appear once).
    pub fn get(&self, ty: u8) -> Option<&'a [u8]> {
        let mut once = self.once;
        match once.slot(ty) {
            Some(v) => *v,
            None => self.iter().find(|(t, _)| *t == ty).map(|(_, v)| v),
        }
    }

    /// Ranges carried in `EXTRA_RANGES`, in order. The option area is searched once, when
    /// this is called; the iterator then steps through the item's value.
    pub fn extra_ranges(&self) -> Ranges<'a> {
        ranges_of(self.get(types::EXTRA_RANGES).unwrap_or(&[]))
    }

    /// The `ADDRESS_TOKEN`, if any.
    pub fn address_token(&self) -> Option<&'a [u8]> {
        self.get(types::ADDRESS_TOKEN)
    }

    /// Number of ranges in `EXTRA_RANGES`.
    pub fn extra_range_count(&self) -> usize {
        self.get(types::EXTRA_RANGES).map_or(0, |v| v.len() / RANGE_LEN)
    }
}

/// The ranges of an item value made of `offset (8) · length (4)` entries.
pub(crate) fn ranges_of(value: &[u8]) -> Ranges<'_> {
    Ranges { rest: value }
}

/// The ranges of a range-list option (`EXTRA_RANGES`, `ANTICIPATED`), in order: each step
/// decodes the next 12 bytes, so walking a list costs its length, once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ranges<'a> {
    rest: &'a [u8],
}

impl Ranges<'_> {
    /// No ranges.
    pub const EMPTY: Ranges<'static> = Ranges { rest: &[] };
}

impl Iterator for Ranges<'_> {
    type Item = ByteRange;
    fn next(&mut self) -> Option<ByteRange> {
        let (c, rest) = self.rest.split_first_chunk::<RANGE_LEN>()?;
        self.rest = rest;
        let offset = u64::from_be_bytes(*c.first_chunk::<8>()?);
        let length = u32::from_be_bytes(*c.last_chunk::<4>()?);
        Some(ByteRange { offset, length })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.rest.len() / RANGE_LEN;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Ranges<'_> {}

/// The first well-formed `ADDRESS_TOKEN` (1–64 bytes) in `raw`, walking items until one
/// is cut off: for a request that does not decode, whose sender may still have proved its
/// address ([`super::attribute`]).
pub(crate) fn find_address_token(raw: &[u8]) -> Option<&[u8]> {
    (TlvIter { rest: raw })
        .map_while(Result::ok)
        .find(|(t, v)| *t == types::ADDRESS_TOKEN && (1..=super::retry::MAX_TOKEN_LEN).contains(&v.len()))
        .map(|(_, v)| v)
}

pub(super) struct TlvIter<'a> {
    pub(super) rest: &'a [u8],
}

impl<'a> Iterator for TlvIter<'a> {
    type Item = Result<(u8, &'a [u8]), DecodeError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        #[cfg(test)]
        work::count_item();
        if self.rest.len() < TLV_HEADER_LEN {
            self.rest = &[];
            return Some(Err(DecodeError::Truncated("option header")));
        }
        let ty = self.rest[0];
        let len = usize::from(u16::from_be_bytes([self.rest[1], self.rest[2]]));
        let Some(value) = self.rest.get(TLV_HEADER_LEN..TLV_HEADER_LEN + len) else {
            self.rest = &[];
            return Some(Err(DecodeError::Truncated("option value")));
        };
        self.rest = &self.rest[TLV_HEADER_LEN + len..];
        Some(Ok((ty, value)))
    }
}

/// Byte ranges covering the units that start at `offsets`, each `unit` bytes long: units in
/// a row merge into one range. At most `max_ranges` ranges and `max_units` units; returns
/// the ranges and how many of `offsets` they cover (a prefix).
pub fn unit_ranges(
    offsets: impl IntoIterator<Item = u64>,
    unit: u32,
    max_ranges: usize,
    max_units: usize,
) -> (Vec<ByteRange>, usize) {
    let mut ranges: Vec<ByteRange> = Vec::with_capacity(4);
    let used = unit_ranges_into(offsets, unit, max_ranges, max_units, &mut ranges);
    (ranges, used)
}

/// [`unit_ranges`] into `ranges` (cleared first; a caller's scratch list, so that a router
/// forwarding requests allocates nothing): returns how many of `offsets` they cover.
pub fn unit_ranges_into(
    offsets: impl IntoIterator<Item = u64>,
    unit: u32,
    max_ranges: usize,
    max_units: usize,
    ranges: &mut Vec<ByteRange>,
) -> usize {
    ranges.clear();
    let mut used = 0;
    for o in offsets.into_iter().take(max_units) {
        let full = ranges.len() >= max_ranges.max(1);
        match ranges.last_mut() {
            Some(r) if r.end() == o && r.length.checked_add(unit).is_some() => r.length += unit,
            _ if full => break,
            _ => ranges.push(ByteRange::new(o, unit)),
        }
        used += 1;
    }
    used
}

/// Bytes an `ADDRESS_TOKEN` item for `token` occupies (0 for none).
pub const fn address_token_len(token: Option<&[u8]>) -> usize {
    match token {
        Some(t) => TLV_HEADER_LEN + t.len(),
        None => 0,
    }
}

/// Write an `ADDRESS_TOKEN` item for `token` (if any) into `out`; returns bytes written.
/// `out` must hold [`address_token_len`] bytes and the token at most 64.
pub fn write_address_token(out: &mut [u8], token: Option<&[u8]>) -> usize {
    let Some(t) = token else { return 0 };
    out[0] = types::ADDRESS_TOKEN;
    out[1..3].copy_from_slice(&(t.len() as u16).to_be_bytes());
    out[TLV_HEADER_LEN..TLV_HEADER_LEN + t.len()].copy_from_slice(t);
    TLV_HEADER_LEN + t.len()
}

/// Bytes an `EXTRA_RANGES` item with `n` ranges occupies (0 for none).
pub const fn extra_ranges_len(n: usize) -> usize {
    if n == 0 { 0 } else { TLV_HEADER_LEN + n * RANGE_LEN }
}

/// Write an `EXTRA_RANGES` item for `ranges` into `out`; returns bytes written.
///
/// Panics if `out` is shorter than [`extra_ranges_len`] or the item exceeds 65 535 bytes;
/// callers size both from the range count.
pub fn write_extra_ranges(out: &mut [u8], ranges: &[ByteRange]) -> usize {
    write_ranges_item(out, types::EXTRA_RANGES, ranges)
}

/// Write an item of type `ty` whose value is `ranges` (none: nothing written).
pub(crate) fn write_ranges_item(out: &mut [u8], ty: u8, ranges: &[ByteRange]) -> usize {
    if ranges.is_empty() {
        return 0;
    }
    let value_len = ranges.len() * RANGE_LEN;
    let len = u16::try_from(value_len).expect("a range list larger than 65535 bytes");
    out[0] = ty;
    out[1..3].copy_from_slice(&len.to_be_bytes());
    for (i, r) in ranges.iter().enumerate() {
        let at = TLV_HEADER_LEN + i * RANGE_LEN;
        out[at..at + 8].copy_from_slice(&r.offset.to_be_bytes());
        out[at + 8..at + 12].copy_from_slice(&r.length.to_be_bytes());
    }
    TLV_HEADER_LEN + value_len
}

/// Work counters for tests that hold a cost to its bound without timing it (issue 23).
#[cfg(test)]
pub(crate) mod work {
    use core::cell::Cell;

    std::thread_local! {
        static ITEMS: Cell<u64> = const { Cell::new(0) };
    }

    pub(super) fn count_item() {
        ITEMS.with(|c| c.set(c.get() + 1));
    }

    /// Option items this thread has stepped over so far, by any scan of any option area.
    pub(crate) fn items_visited() -> u64 {
        ITEMS.with(Cell::get)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_units_merge_and_the_limits_hold() {
        let offs = [300, 400, 500, 900, 1100, 1200];
        let (r, used) = unit_ranges(offs, 100, 32, usize::MAX);
        assert_eq!(r, [ByteRange::new(300, 300), ByteRange::new(900, 100), ByteRange::new(1100, 200)]);
        assert_eq!(used, 6);
        let (r, used) = unit_ranges(offs, 100, 2, usize::MAX);
        assert_eq!(r, [ByteRange::new(300, 300), ByteRange::new(900, 100)]);
        assert_eq!(used, 4);
        let (r, used) = unit_ranges(offs, 100, 32, 2);
        assert_eq!((r, used), (vec![ByteRange::new(300, 200)], 2));
        // Offsets need not be multiples of the unit.
        assert_eq!(unit_ranges([7, 107], 100, 32, 9).0, [ByteRange::new(7, 200)]);
    }

    #[test]
    fn ranges_round_trip() {
        let ranges = [ByteRange::new(0, 1412), ByteRange::new(1 << 40, 2824)];
        let mut buf = [0u8; 64];
        let n = write_extra_ranges(&mut buf, &ranges);
        assert_eq!(n, extra_ranges_len(2));
        let opts = Options::parse(&buf[..n]).unwrap();
        assert_eq!(opts.extra_ranges().collect::<Vec<_>>(), ranges);
        assert_eq!(opts.extra_range_count(), 2);
    }

    #[test]
    fn unknown_items_skipped_unless_critical() {
        assert!(Options::parse(&[0x22, 0, 2, 9, 9]).is_ok());
        assert!(Options::parse(&[0x3f, 0, 1, 7]).is_ok());
        let mut buf = [0u8; 32];
        let n = write_address_token(&mut buf, Some(b"tok"));
        assert_eq!(n, address_token_len(Some(b"tok")));
        assert_eq!(Options::parse(&buf[..n]).unwrap().address_token(), Some(&b"tok"[..]));
        assert!(Options::parse(&[types::ADDRESS_TOKEN, 0, 0]).is_err(), "empty token");
        let twice = [types::ADDRESS_TOKEN, 0, 1, 7, types::ADDRESS_TOKEN, 0, 1, 7];
        assert!(Options::parse(&twice).is_err());
        assert_eq!(Options::parse(&[0x80, 0, 0]), Err(DecodeError::Invalid("unknown critical option")));
    }

    #[test]
    fn malformed_items_rejected() {
        assert!(Options::parse(&[0x01]).is_err());
        assert!(Options::parse(&[0x01, 0, 12, 0]).is_err());
        assert!(Options::parse(&[0x01, 0, 0]).is_err()); // empty range list
        assert!(Options::parse(&[0x01, 0, 5, 1, 2, 3, 4, 5]).is_err()); // not a multiple of 12
        let mut two = vec![];
        for _ in 0..2 {
            two.extend_from_slice(&[0x01, 0, 12]);
            two.extend_from_slice(&[0u8; 12]);
        }
        assert!(Options::parse(&two).is_err());
    }
}
