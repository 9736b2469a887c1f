//! NDN names ("NDN Packet Format Specification 0.3", "Name"): a sequence of typed
//! components, their canonical order, prefix tests, and the NDN URI form both ways, with the
//! typed components of "NDN naming conventions" rev. 3 (`seg=`, `off=`, `v=`, `t=`, `seq=`)
//! and the digest components (`sha256digest=`, `params-sha256=`).

use core::cmp::Ordering;
use core::fmt;
use core::str::FromStr;

use super::Error;
use super::tlv::{self, Reader, types};

/// One name component: a TLV-TYPE in 1..=65535 and its value.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Component {
    ty: u16,
    value: Vec<u8>,
}

impl Component {
    /// A component of type `ty` (1..=65535); digest components must hold 32 bytes.
    pub fn new(ty: u64, value: impl Into<Vec<u8>>) -> Result<Self, Error> {
        let value = value.into();
        let ty = u16::try_from(ty).ok().filter(|&t| t != 0).ok_or(Error::Invalid("name component type"))?;
        let digest = matches!(u64::from(ty), types::IMPLICIT_SHA256_DIGEST | types::PARAMETERS_SHA256_DIGEST);
        if digest && value.len() != 32 {
            return Err(Error::Invalid("digest component length"));
        }
        Ok(Component { ty, value })
    }

    /// A GenericNameComponent (type 8).
    pub fn generic(value: impl Into<Vec<u8>>) -> Self {
        Component { ty: types::GENERIC as u16, value: value.into() }
    }

    /// A KeywordNameComponent (type 32), e.g. `32=metadata`.
    pub fn keyword(value: impl Into<Vec<u8>>) -> Self {
        Component { ty: types::KEYWORD as u16, value: value.into() }
    }

    /// A component of a numeric convention type (segment, version…) holding `n`.
    pub fn number(ty: u64, n: u64) -> Self {
        debug_assert!((1..=0xffff).contains(&ty));
        Component { ty: ty as u16, value: tlv::nni_bytes(n) }
    }

    /// SegmentNameComponent `seg=n` (type 50).
    pub fn segment(n: u64) -> Self {
        Self::number(types::SEGMENT, n)
    }

    /// VersionNameComponent `v=n` (type 54).
    pub fn version(n: u64) -> Self {
        Self::number(types::VERSION, n)
    }

    /// ImplicitSha256DigestComponent (type 1).
    pub fn implicit_digest(d: [u8; 32]) -> Self {
        Component { ty: types::IMPLICIT_SHA256_DIGEST as u16, value: d.to_vec() }
    }

    /// ParametersSha256DigestComponent (type 2).
    pub fn parameters_digest(d: [u8; 32]) -> Self {
        Component { ty: types::PARAMETERS_SHA256_DIGEST as u16, value: d.to_vec() }
    }

    /// TLV-TYPE.
    pub fn ty(&self) -> u64 {
        u64::from(self.ty)
    }

    /// TLV-VALUE.
    pub fn value(&self) -> &[u8] {
        &self.value
    }

    /// The number of a component of type `ty` whose value is a nonNegativeInteger.
    pub fn as_number(&self, ty: u64) -> Option<u64> {
        (self.ty() == ty).then(|| tlv::read_nni(&self.value).ok()).flatten()
    }

    /// `n` if this is `seg=n`.
    pub fn as_segment(&self) -> Option<u64> {
        self.as_number(types::SEGMENT)
    }

    /// `n` if this is `v=n`.
    pub fn as_version(&self) -> Option<u64> {
        self.as_number(types::VERSION)
    }

    /// Append the component's TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        tlv::write_tlv(out, self.ty(), &self.value);
    }

    /// The component's TLV.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.encode(&mut v);
        v
    }

    /// A component from its TLV (`FinalBlockId` holds one).
    pub fn decode(wire: &[u8]) -> Result<Self, Error> {
        let mut r = Reader::new(wire);
        let e = r.read()?;
        if !r.is_empty() {
            return Err(Error::Trailing);
        }
        Component::new(e.ty, e.value)
    }

    /// Bytes of the encoded component.
    pub fn encoded_len(&self) -> usize {
        tlv::tlv_len(self.ty(), self.value.len())
    }
}

/// Spec 0.3, "Canonical Order": by TLV-TYPE, then TLV-LENGTH, then the value's bytes.
impl Ord for Component {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.ty, self.value.len(), &self.value).cmp(&(other.ty, other.value.len(), &other.value))
    }
}

impl PartialOrd for Component {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The URI form's short names of numeric conventions (naming conventions rev. 3).
const NUMBER_PREFIXES: [(&str, u64); 5] = [
    ("seg", types::SEGMENT),
    ("off", types::BYTE_OFFSET),
    ("v", types::VERSION),
    ("t", types::TIMESTAMP),
    ("seq", types::SEQUENCE_NUM),
];
const DIGEST_PREFIXES: [(&str, u64); 2] =
    [("sha256digest", types::IMPLICIT_SHA256_DIGEST), ("params-sha256", types::PARAMETERS_SHA256_DIGEST)];

/// Percent-escape `value` as spec 0.3 "NDN URI Scheme" does: unreserved characters
/// (ALPHA, DIGIT, `-._~`) as they are, others `%XX`; a value of periods only (or empty)
/// gets three more periods.
fn escape(value: &[u8], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if value.iter().all(|&b| b == b'.') {
        for _ in 0..value.len() + 3 {
            f.write_str(".")?;
        }
        return Ok(());
    }
    for &b in value {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            write!(f, "{}", b as char)?;
        } else {
            write!(f, "%{b:02X}")?;
        }
    }
    Ok(())
}

fn unescape(s: &str) -> Result<Vec<u8>, Error> {
    if !s.is_empty() && s.bytes().all(|b| b == b'.') {
        return match s.len() {
            0..=2 => Err(Error::Uri("'.' and '..' are not name components")),
            n => Ok(vec![b'.'; n - 3]),
        };
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3).ok_or(Error::Uri("truncated %-escape"))?;
            let hex = core::str::from_utf8(hex).map_err(|_| Error::Uri("bad %-escape"))?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| Error::Uri("bad %-escape"))?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

fn hex_value(s: &str) -> Result<Vec<u8>, Error> {
    if s.len() != 64 || !s.is_ascii() {
        return Err(Error::Uri("a digest is 64 hexadecimal digits"));
    }
    (0..32).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| Error::Uri("bad hex digit"))).collect()
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ty = self.ty();
        // The short form only for the shortest encoding, so that it parses back to the same.
        if let Some((p, _)) = NUMBER_PREFIXES.iter().find(|(_, t)| *t == ty)
            && let Some(n) = self.as_number(ty).filter(|&n| tlv::nni_bytes(n) == self.value)
        {
            return write!(f, "{p}={n}");
        }
        if let Some((p, _)) = DIGEST_PREFIXES.iter().find(|(_, t)| *t == ty) {
            write!(f, "{p}=")?;
            return self.value.iter().try_for_each(|b| write!(f, "{b:02x}"));
        }
        if ty != types::GENERIC {
            write!(f, "{ty}=")?;
        }
        escape(&self.value, f)
    }
}

impl fmt::Debug for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Component {
    type Err = Error;

    /// One component of an NDN URI: `value` (generic), `TYPE=value`, or a convention's
    /// short form (`seg=3`, `v=7`, `sha256digest=<64 hex digits>`…).
    fn from_str(s: &str) -> Result<Self, Error> {
        if s.is_empty() {
            return Err(Error::Uri("empty component"));
        }
        let Some((head, rest)) = s.split_once('=') else { return Ok(Component::generic(unescape(s)?)) };
        if let Some((_, ty)) = NUMBER_PREFIXES.iter().find(|(p, _)| *p == head) {
            let n = rest.parse::<u64>().map_err(|_| Error::Uri("a number component needs a decimal number"))?;
            return Ok(Component::number(*ty, n));
        }
        if let Some((_, ty)) = DIGEST_PREFIXES.iter().find(|(p, _)| *p == head) {
            return Component::new(*ty, hex_value(rest)?);
        }
        if !head.is_empty() && head.bytes().all(|b| b.is_ascii_digit()) {
            let ty = head.parse::<u64>().map_err(|_| Error::Uri("component type out of range"))?;
            if !(1..=0xffff).contains(&ty) {
                return Err(Error::Uri("component type out of range"));
            }
            if matches!(ty, types::IMPLICIT_SHA256_DIGEST | types::PARAMETERS_SHA256_DIGEST) {
                return Component::new(ty, unescape(rest)?).map_err(|_| Error::Uri("digest component length"));
            }
            return Component::new(ty, unescape(rest)?);
        }
        Err(Error::Uri("unknown component type name"))
    }
}

/// A name: zero or more components. Ordered canonically (component by component; a prefix
/// sorts before the names it is a prefix of).
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name(Vec<Component>);

impl Name {
    /// The empty name `/`.
    pub fn new() -> Self {
        Name(Vec::new())
    }

    /// Its components.
    pub fn components(&self) -> &[Component] {
        &self.0
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for `/`.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The last component.
    pub fn last(&self) -> Option<&Component> {
        self.0.last()
    }

    /// Add a component at the end.
    pub fn push(&mut self, c: Component) {
        self.0.push(c);
    }

    /// This name with `c` added at the end.
    pub fn with(mut self, c: Component) -> Self {
        self.push(c);
        self
    }

    /// This name followed by one generic component per `/`-separated part of `path` (empty
    /// parts skipped): how a file path becomes a name (`/prefix` + `data/a.bin` →
    /// `/prefix/data/a.bin`).
    pub fn with_path(mut self, path: &str) -> Self {
        for part in path.split('/').filter(|p| !p.is_empty()) {
            self.push(Component::generic(part.as_bytes().to_vec()));
        }
        self
    }

    /// The first `n` components (all of them if `n` is larger).
    pub fn prefix(&self, n: usize) -> Name {
        Name(self.0[..n.min(self.0.len())].to_vec())
    }

    /// True if every component of `self` starts `other` (a name is a prefix of itself).
    pub fn is_prefix_of(&self, other: &Name) -> bool {
        other.0.starts_with(&self.0)
    }

    /// Append the Name TLV.
    pub fn encode(&self, out: &mut Vec<u8>) {
        tlv::write_varnum(out, types::NAME);
        tlv::write_varnum(out, self.value_len() as u64);
        for c in &self.0 {
            c.encode(out);
        }
    }

    /// The Name TLV.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.value_len() + 4);
        self.encode(&mut v);
        v
    }

    /// Bytes of the Name's TLV-VALUE.
    pub fn value_len(&self) -> usize {
        self.0.iter().map(Component::encoded_len).sum()
    }

    /// A name from a Name's TLV-VALUE (the components' TLVs).
    pub fn decode_value(value: &[u8]) -> Result<Self, Error> {
        let mut r = Reader::new(value);
        let mut out = Vec::new();
        while let Some(e) = r.next_element() {
            let e = e?;
            out.push(Component::new(e.ty, e.value)?);
        }
        Ok(Name(out))
    }

    /// The Name that must open a packet's TLV-VALUE (Interest, Data): the first element
    /// `el` gives, at offset 0 (a non-critical element skipped before it is refused too).
    pub(crate) fn decode_leading(el: &mut tlv::Ordered<'_>) -> Result<Self, Error> {
        match el.next()? {
            Some(first) if first.ty == types::NAME && first.offset == 0 => Self::decode_value(first.value),
            _ => Err(Error::Missing("Name")),
        }
    }

    /// A name from its whole Name TLV.
    pub fn decode(wire: &[u8]) -> Result<Self, Error> {
        Self::decode_value(tlv::read_single(wire, types::NAME, "Name")?.value)
    }
}

impl From<Vec<Component>> for Name {
    fn from(c: Vec<Component>) -> Self {
        Name(c)
    }
}

impl fmt::Display for Name {
    /// The NDN URI: `/` for the empty name, else `/c1/c2…`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("/");
        }
        self.0.iter().try_for_each(|c| write!(f, "/{c}"))
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Name {
    type Err = Error;

    /// An NDN URI: an optional `ndn:` scheme, then `/`-separated components (one trailing
    /// `/` is allowed; an empty component in the middle is not).
    fn from_str(s: &str) -> Result<Self, Error> {
        let s = s.strip_prefix("ndn:").unwrap_or(s);
        let s = s.strip_prefix('/').ok_or(Error::Uri("a name starts with '/'"))?;
        let s = s.strip_suffix('/').unwrap_or(s);
        if s.is_empty() {
            return Ok(Name::new());
        }
        s.split('/').map(Component::from_str).collect::<Result<Vec<_>, _>>().map(Name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn uri_round_trips() {
        for s in [
            "/",
            "/a/b/v=3/seg=0",
            "/prefix/32=metadata",
            "/hello%20world/%00%FF/-._~",
            "/.../..../.....",
            "/100=%01%02/off=7/t=1600000000000/seq=9",
            "/sha256digest=28bad4b5275bd392dbb670c75cf0b66f13f7942b21e80f55c0e86b374753a548",
            "/params-sha256=ff9100e04eaadcf30674d98026a051ba25f56b69bfa026dcccd72c6ea0f7315a",
        ] {
            assert_eq!(n(s).to_string(), s);
        }
        assert_eq!(n("ndn:/a/").to_string(), "/a");
        assert_eq!(n("/8=x/%41").to_string(), "/x/A");
        assert_eq!(n("/.../a").components()[0].value(), b"");
        // A convention type whose value is not a number is shown by its type number.
        let odd = Name::from(vec![Component::new(50, vec![1, 2, 3]).unwrap()]);
        assert_eq!(odd.to_string(), "/50=%01%02%03");
        assert_eq!(n(&odd.to_string()), odd);
        let odd = Name::from(vec![Component::new(54, vec![0, 3]).unwrap()]);
        assert_eq!(odd.to_string(), "/54=%00%03");
        assert_eq!(n(&odd.to_string()), odd);
    }

    /// NDNts packages/naming-convention2/tests/convention.t.ts (yoursunny/NDNts): each
    /// convention's component in `TYPE=%XX` form and its short form are the same component.
    #[test]
    fn ndnts_naming_convention_vectors() {
        for (typed, short) in [
            ("/32=hello", "/32=hello"),
            ("/50=%01%01", "/seg=257"),
            ("/52=%01%02/52=%FF%FF%FF%FF%FF%FF%01%02", "/off=258/off=18446744073709486338"),
            ("/54=%01%03", "/v=259"),
            ("/56=%00%01%eb%47%85%ff%0a%00/56=%00%05%94%1f%d7%45%d1%d7", "/t=540167400000000/t=1570239360127447"),
            ("/58=%01%05", "/seq=261"),
        ] {
            assert_eq!(n(typed), n(short), "{typed}");
            assert_eq!(n(typed).to_string(), short);
        }
    }

    #[test]
    fn uri_errors() {
        for s in ["", "a/b", "/a//b", "/./a", "/../a", "/%4", "/%zz", "/seg=x", "/0=a", "/65536=a", "/foo=1", "/1=ab"] {
            assert!(s.parse::<Name>().is_err(), "{s} parses");
        }
    }

    #[test]
    fn typed_components() {
        let name = n("/a/v=3/seg=258");
        assert_eq!(name.components()[1].as_version(), Some(3));
        assert_eq!(name.components()[2].as_segment(), Some(258));
        assert_eq!(name.components()[2].to_bytes(), [0x32, 0x02, 0x01, 0x02]);
        assert_eq!(name.components()[1].as_segment(), None);
        assert_eq!(n("/32=metadata").components()[0], Component::keyword(*b"metadata"));
    }

    #[test]
    fn encode_decode() {
        let name = n("/local/ndn/prefix");
        // ndn-cxx tests/unit/interest.t.cpp "Basic": the Name of /local/ndn/prefix.
        let wire = [
            0x07, 0x14, 0x08, 0x05, b'l', b'o', b'c', b'a', b'l', 0x08, 0x03, b'n', b'd', b'n', 0x08, 0x06, b'p', b'r',
            b'e', b'f', b'i', b'x',
        ];
        assert_eq!(name.to_bytes(), wire);
        assert_eq!(Name::decode(&wire), Ok(name));
        assert_eq!(Name::decode(&[0x07, 0x02, 0x00, 0x00]), Err(Error::InvalidType(0)));
        assert_eq!(Name::decode(&[0x07, 0x02, 0x01, 0x00]), Err(Error::Invalid("digest component length")));
        assert!(Name::decode(&[0x07, 0x03, 0x08, 0x05, 0x41]).is_err());
    }

    #[test]
    fn canonical_order_and_prefixes() {
        // Type first, then length, then bytes; a prefix before its extensions.
        let sorted = [
            "/",
            "/sha256digest=0000000000000000000000000000000000000000000000000000000000000000",
            "/a",
            "/z",
            "/aa",
            "/aa/b",
            "/ab",
            "/seg=0",
            "/seg=255",
            "/seg=256",
        ];
        let names: Vec<Name> = sorted.iter().map(|s| n(s)).collect();
        let mut shuffled = names.clone();
        shuffled.reverse();
        shuffled.sort();
        assert_eq!(shuffled, names);
        assert!(n("/a").is_prefix_of(&n("/a/b")) && n("/a").is_prefix_of(&n("/a")) && n("/").is_prefix_of(&n("/x")));
        assert!(!n("/a/b").is_prefix_of(&n("/a")) && !n("/a").is_prefix_of(&n("/aa")));
        assert_eq!(n("/a/b/c").prefix(2), n("/a/b"));
    }
}
