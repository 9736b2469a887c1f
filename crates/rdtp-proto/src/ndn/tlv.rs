//! NDN's TLV encoding ("NDN Packet Format Specification 0.3", "TLV Encoding"): VAR-NUMBER
//! TLV-TYPE and TLV-LENGTH of 1, 3, 5 or 9 bytes, nonNegativeInteger values of 1, 2, 4 or 8
//! bytes, a reader that refuses hostile input instead of panicking, and a writer.
//!
//! Encoding always uses the shortest form. On receipt, a longer-than-needed VAR-NUMBER is
//! accepted (the specification does not forbid it, and ndn-cxx accepts it); a
//! nonNegativeInteger of any length but 1, 2, 4 or 8 is refused (the specification does).

use super::Error;

/// TLV-TYPE numbers of NDN v0.3 and NDNLPv2 used by this codec (spec 0.3, "TLV-TYPE number
/// assignments"; NDNLPv2, "TLV-TYPE number assignments").
pub mod types {
    #![allow(missing_docs)]
    pub const IMPLICIT_SHA256_DIGEST: u64 = 1;
    pub const PARAMETERS_SHA256_DIGEST: u64 = 2;
    pub const INTEREST: u64 = 5;
    pub const DATA: u64 = 6;
    pub const NAME: u64 = 7;
    pub const GENERIC: u64 = 8;
    pub const NONCE: u64 = 10;
    pub const INTEREST_LIFETIME: u64 = 12;
    pub const MUST_BE_FRESH: u64 = 18;
    pub const META_INFO: u64 = 20;
    pub const CONTENT: u64 = 21;
    pub const SIGNATURE_INFO: u64 = 22;
    pub const SIGNATURE_VALUE: u64 = 23;
    pub const CONTENT_TYPE: u64 = 24;
    pub const FRESHNESS_PERIOD: u64 = 25;
    pub const FINAL_BLOCK_ID: u64 = 26;
    pub const SIGNATURE_TYPE: u64 = 27;
    pub const KEY_LOCATOR: u64 = 28;
    pub const KEY_DIGEST: u64 = 29;
    pub const FORWARDING_HINT: u64 = 30;
    pub const KEYWORD: u64 = 32;
    pub const CAN_BE_PREFIX: u64 = 33;
    pub const HOP_LIMIT: u64 = 34;
    pub const APPLICATION_PARAMETERS: u64 = 36;
    pub const SIGNATURE_NONCE: u64 = 38;
    pub const SIGNATURE_TIME: u64 = 40;
    pub const SIGNATURE_SEQ_NUM: u64 = 42;
    pub const INTEREST_SIGNATURE_INFO: u64 = 44;
    pub const INTEREST_SIGNATURE_VALUE: u64 = 46;
    pub const SEGMENT: u64 = 50;
    pub const BYTE_OFFSET: u64 = 52;
    pub const VERSION: u64 = 54;
    pub const TIMESTAMP: u64 = 56;
    pub const SEQUENCE_NUM: u64 = 58;
    pub const VALIDITY_PERIOD: u64 = 253;
    // NDNLPv2
    pub const LP_FRAGMENT: u64 = 80;
    pub const LP_SEQUENCE: u64 = 81;
    pub const LP_FRAG_INDEX: u64 = 82;
    pub const LP_FRAG_COUNT: u64 = 83;
    pub const LP_PIT_TOKEN: u64 = 98;
    pub const LP_PACKET: u64 = 100;
    pub const LP_NACK: u64 = 800;
    pub const LP_NACK_REASON: u64 = 801;
    pub const LP_CONGESTION_MARK: u64 = 832;
}

/// Spec 0.3, "Considerations for evolvability of TLV-based encoding": an unrecognised or
/// out-of-order element whose TLV-TYPE is below 32 (the grandfathered range) or odd is
/// critical, and the packet carrying it must be dropped; any other may be ignored.
pub fn is_critical(ty: u64) -> bool {
    ty < 32 || ty & 1 == 1
}

/// Bytes a VAR-NUMBER of value `n` takes (1, 3, 5 or 9).
pub fn varnum_len(n: u64) -> usize {
    match n {
        0..=252 => 1,
        253..=0xffff => 3,
        0x1_0000..=0xffff_ffff => 5,
        _ => 9,
    }
}

/// Append `n` as a VAR-NUMBER in its shortest form.
pub fn write_varnum(out: &mut Vec<u8>, n: u64) {
    match varnum_len(n) {
        1 => out.push(n as u8),
        3 => {
            out.push(253);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        5 => {
            out.push(254);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
        _ => {
            out.push(255);
            out.extend_from_slice(&n.to_be_bytes());
        }
    }
}

/// A VAR-NUMBER at the start of `buf`: its value and how many bytes it took.
pub fn read_varnum(buf: &[u8]) -> Result<(u64, usize), Error> {
    let (&first, rest) = buf.split_first().ok_or(Error::Truncated)?;
    let width = match first {
        0..=252 => return Ok((u64::from(first), 1)),
        253 => 2,
        254 => 4,
        _ => 8,
    };
    let bytes = rest.get(..width).ok_or(Error::Truncated)?;
    let n = bytes.iter().fold(0u64, |n, &b| n << 8 | u64::from(b));
    Ok((n, 1 + width))
}

/// Bytes a nonNegativeInteger of value `n` takes (1, 2, 4 or 8: the shortest that holds it).
pub fn nni_len(n: u64) -> usize {
    match n {
        0..=0xff => 1,
        0x100..=0xffff => 2,
        0x1_0000..=0xffff_ffff => 4,
        _ => 8,
    }
}

/// Append `n` as a nonNegativeInteger (no TLV-TYPE or TLV-LENGTH).
pub fn write_nni(out: &mut Vec<u8>, n: u64) {
    let len = nni_len(n);
    out.extend_from_slice(&n.to_be_bytes()[8 - len..]);
}

/// `n` as nonNegativeInteger bytes.
pub fn nni_bytes(n: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(8);
    write_nni(&mut v, n);
    v
}

/// A nonNegativeInteger value: 1, 2, 4 or 8 bytes, big-endian (anything else is refused).
pub fn read_nni(value: &[u8]) -> Result<u64, Error> {
    match value.len() {
        1 | 2 | 4 | 8 => Ok(value.iter().fold(0u64, |n, &b| n << 8 | u64::from(b))),
        _ => Err(Error::Invalid("nonNegativeInteger length")),
    }
}

/// Bytes a whole TLV with a value of `len` bytes takes.
pub fn tlv_len(ty: u64, len: usize) -> usize {
    varnum_len(ty) + varnum_len(len as u64) + len
}

/// Append a TLV: `ty`, the length of `value`, `value`.
pub fn write_tlv(out: &mut Vec<u8>, ty: u64, value: &[u8]) {
    write_varnum(out, ty);
    write_varnum(out, value.len() as u64);
    out.extend_from_slice(value);
}

/// Append a TLV whose value is the nonNegativeInteger `n`.
pub fn write_nni_tlv(out: &mut Vec<u8>, ty: u64, n: u64) {
    write_varnum(out, ty);
    write_varnum(out, nni_len(n) as u64);
    write_nni(out, n);
}

/// Append a TLV whose value `fill` writes (the value is built first, then framed).
pub fn write_nested(out: &mut Vec<u8>, ty: u64, fill: impl FnOnce(&mut Vec<u8>)) {
    let mut value = Vec::new();
    fill(&mut value);
    write_tlv(out, ty, &value);
}

/// One TLV element as found in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Element<'a> {
    /// TLV-TYPE.
    pub ty: u64,
    /// TLV-VALUE.
    pub value: &'a [u8],
    /// The whole element: TLV-TYPE, TLV-LENGTH and TLV-VALUE.
    pub wire: &'a [u8],
    /// Where `wire` starts in the buffer the [`Reader`] was made from.
    pub offset: usize,
}

impl<'a> Element<'a> {
    /// The value as a nonNegativeInteger.
    pub fn nni(&self) -> Result<u64, Error> {
        read_nni(self.value)
    }

    /// A reader over the value's sub-elements.
    pub fn reader(&self) -> Reader<'a> {
        Reader::new(self.value)
    }
}

/// Reads consecutive TLV elements from a buffer. Never panics and never reads past the
/// buffer: a TLV-LENGTH that goes past the end is [`Error::Truncated`]. Nesting is only
/// followed where the caller asks ([`Element::reader`]), so its depth is the grammar's.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// True when every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// The next element (an error if the bytes left do not hold a whole one).
    pub fn read(&mut self) -> Result<Element<'a>, Error> {
        let start = self.pos;
        let rest = &self.buf[start..];
        let (ty, a) = read_varnum(rest)?;
        if ty == 0 || ty > u64::from(u32::MAX) {
            return Err(Error::InvalidType(ty));
        }
        let (len, b) = read_varnum(&rest[a..])?;
        let header = a + b;
        let avail = (rest.len() - header) as u64;
        if len > avail {
            return Err(Error::Truncated);
        }
        let end = header + len as usize;
        self.pos = start + end;
        Ok(Element { ty, value: &rest[header..end], wire: &rest[..end], offset: start })
    }

    /// The next element, or `None` at the end.
    pub fn next_element(&mut self) -> Option<Result<Element<'a>, Error>> {
        if self.is_empty() { None } else { Some(self.read()) }
    }

    /// The TLV-TYPE of the next element without consuming it (`None` at the end or if
    /// it does not decode).
    pub fn peek_type(&self) -> Option<u64> {
        self.clone().read().ok().map(|e| e.ty)
    }
}

/// The single TLV of `buf` (bytes after it are [`Error::Trailing`]), which must be of type `ty`.
pub fn read_single<'a>(buf: &'a [u8], ty: u64, what: &'static str) -> Result<Element<'a>, Error> {
    let mut r = Reader::new(buf);
    let e = r.read()?;
    if e.ty != ty {
        return Err(Error::Unexpected { expected: what, found: e.ty });
    }
    if !r.is_empty() {
        return Err(Error::Trailing);
    }
    Ok(e)
}

/// Walks the elements of a TLV-VALUE against a grammar that lists its recognised elements
/// in the order they must appear, each at most once ("rank" = its position in that list),
/// applying the evolvability rule to the others: an unrecognised element, or a recognised
/// one out of order or repeated, is skipped if its type is non-critical and refused if it
/// is critical.
pub(crate) struct Ordered<'a> {
    reader: Reader<'a>,
    order: &'static [u64],
    next_rank: usize,
}

impl<'a> Ordered<'a> {
    pub(crate) fn new(value: &'a [u8], order: &'static [u64]) -> Self {
        Ordered { reader: Reader::new(value), order, next_rank: 0 }
    }

    /// The next recognised element in order, or `None` at the end.
    pub(crate) fn next(&mut self) -> Result<Option<Element<'a>>, Error> {
        while let Some(e) = self.reader.next_element() {
            let e = e?;
            match self.order.iter().position(|&t| t == e.ty) {
                Some(rank) if rank >= self.next_rank => {
                    self.next_rank = rank + 1;
                    return Ok(Some(e));
                }
                _ if is_critical(e.ty) => return Err(Error::Critical(e.ty)),
                _ => {}
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varnum_forms_of_the_specification() {
        // Spec 0.3 "Variable Size Encoding for type (T) and length (L)": 1, 3, 5, 9 bytes.
        for (n, hex) in [
            (0u64, "00"),
            (252, "fc"),
            (253, "fd00fd"),
            (0xffff, "fdffff"),
            (0x1_0000, "fe00010000"),
            (0xffff_ffff, "feffffffff"),
            (0x1_0000_0000, "ff0000000100000000"),
        ] {
            let mut out = Vec::new();
            write_varnum(&mut out, n);
            assert_eq!(hex_of(&out), hex, "{n}");
            assert_eq!(read_varnum(&out), Ok((n, out.len())));
            assert_eq!(varnum_len(n), out.len());
        }
        // Longer than needed is accepted on receipt.
        assert_eq!(read_varnum(&[253, 0, 5]), Ok((5, 3)));
        for cut in [&[][..], &[253, 0], &[254, 0, 0, 0], &[255, 0, 0, 0, 0, 0, 0, 0]] {
            assert_eq!(read_varnum(cut), Err(Error::Truncated), "{cut:?}");
        }
    }

    #[test]
    fn nni_examples_of_the_specification() {
        // Spec 0.3 "Non Negative Integer Encoding": 0 => TT0100 … 65536 => TT0400010000.
        for (n, hex) in
            [(0u64, "0100"), (1, "0101"), (255, "01ff"), (256, "020100"), (65535, "02ffff"), (65536, "0400010000")]
        {
            let mut out = Vec::new();
            write_nni_tlv(&mut out, 0x19, n);
            assert_eq!(hex_of(&out[1..]), hex);
            assert_eq!(read_nni(&out[2..]), Ok(n));
        }
        for bad in [&[][..], &[0, 0, 1], &[0; 5], &[0; 9]] {
            assert_eq!(read_nni(bad), Err(Error::Invalid("nonNegativeInteger length")));
        }
    }

    #[test]
    fn reader_refuses_what_is_not_there() {
        assert_eq!(Reader::new(&[7, 3, 8, 1]).read(), Err(Error::Truncated));
        assert_eq!(Reader::new(&[7]).read(), Err(Error::Truncated));
        assert_eq!(Reader::new(&[7, 255, 255, 255, 255, 255, 255, 255, 255, 255]).read(), Err(Error::Truncated));
        assert_eq!(Reader::new(&[0, 0]).read(), Err(Error::InvalidType(0)));
        assert_eq!(Reader::new(&[255, 0, 0, 0, 1, 0, 0, 0, 0, 0]).read(), Err(Error::InvalidType(1 << 32)));
        let mut r = Reader::new(&[7, 0, 8, 1, 0x41]);
        assert_eq!(r.read().map(|e| (e.ty, e.value.len(), e.offset)), Ok((7, 0, 0)));
        assert_eq!(r.read().map(|e| (e.ty, e.value, e.wire.len(), e.offset)), Ok((8, &[0x41][..], 3, 2)));
        assert!(r.is_empty() && r.next_element().is_none());
        assert_eq!(read_single(&[7, 2, 0], 7, "Name"), Err(Error::Truncated));
        assert_eq!(read_single(&[7, 0, 8, 0], 7, "Name"), Err(Error::Trailing));
    }

    #[test]
    fn critical_types() {
        // Grandfathered 0–31 all critical; above, odd critical and even not.
        assert!((0..32).all(is_critical));
        assert!(is_critical(33) && !is_critical(34) && is_critical(251) && !is_critical(252));
    }

    #[test]
    fn ordered_skips_non_critical_and_refuses_critical() {
        const ORDER: &[u64] = &[7, 10, 34];
        // FC00 (252, even) skipped; a second HopLimit (34, non-critical) skipped.
        let v = [7, 0, 0xfc, 0, 10, 1, 1, 34, 1, 2, 34, 1, 3];
        let mut o = Ordered::new(&v, ORDER);
        let got: Vec<u64> = std::iter::from_fn(|| o.next().unwrap()).map(|e| e.ty).collect();
        assert_eq!(got, [7, 10, 34]);
        // FB00 (251, odd) refused; a Nonce (10) after HopLimit refused.
        for v in [&[7, 0, 0xfb, 0][..], &[7, 0, 34, 1, 1, 10, 1, 1]] {
            let mut o = Ordered::new(v, ORDER);
            let r = std::iter::from_fn(|| o.next().transpose()).find_map(Result::err);
            assert!(matches!(r, Some(Error::Critical(_))), "{v:?}: {r:?}");
        }
    }

    fn hex_of(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}
