//! What can be read of a request that does not decode: enough to say whose it is (issue 23,
//! item 12). Every request type carries its tag at bytes 8–11, so a server or router can
//! answer a malformed request with a Nack `Malformed` carrying that tag — which the sender
//! can attribute to its request and act on at once — instead of silence or a blank Nack
//! (tag 0) that no receiver may trust. What such a Nack may cost toward an address that
//! did not prove it receives is decided by [`crate::token::Validator::answer_malformed`].

use super::header::{PacketType, check_prefix};
use super::request::REQUEST_HEADER_LEN;
use super::tlv::{ByteRange, find_address_token};
use crate::eid::{EID_LEN, Eid};

/// Offset of the tag in every request type.
const TAG_AT: usize = 8;

/// The readable fields of a request datagram that failed to decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attribution<'a> {
    /// The request's type.
    pub ty: PacketType,
    /// Its tag, to echo.
    pub tag: u32,
    /// Its EID (Request, ProofRequest), zeros if it has none or it is cut off.
    pub eid: Eid,
    /// Its primary range (Request), zeros otherwise or if it is cut off.
    pub range: ByteRange,
    /// An `ADDRESS_TOKEN` found in its option area, walked as far as it is well formed (the
    /// token's MAC, not its position, is what a node trusts).
    pub token: Option<&'a [u8]>,
}

/// The attributable part of a request datagram of this version, or `None` when it is not
/// a request or too short to carry its tag. Meant for datagrams that failed to decode;
/// reads only what is there and never panics.
pub fn attribute(datagram: &[u8]) -> Option<Attribution<'_>> {
    let ty = check_prefix(datagram).ok().filter(|t| t.is_request())?;
    fn chunk<const N: usize>(d: &[u8], at: usize) -> Option<[u8; N]> {
        d.get(at..).and_then(<[u8]>::first_chunk::<N>).copied()
    }
    let tag = u32::from_be_bytes(chunk(datagram, TAG_AT)?);
    let u16_at = |at: usize| chunk(datagram, at).map_or(0, |b| usize::from(u16::from_be_bytes(b)));
    let eid_at = |at: usize| chunk::<EID_LEN>(datagram, at).map_or(Eid::default(), Eid);
    // Where the option area starts, and its length as the datagram says it.
    let (eid, range, options_at, options_len) = match ty {
        // Flags, hop limit, unit, tag (8), nonce, EID (20), offset (52), length (60),
        // options length (64), options (66).
        PacketType::Request => {
            let range = match (chunk(datagram, 52), chunk(datagram, 60)) {
                (Some(o), Some(l)) => ByteRange::new(u64::from_be_bytes(o), u32::from_be_bytes(l)),
                _ => ByteRange::new(0, 0),
            };
            (eid_at(20), range, REQUEST_HEADER_LEN, u16_at(64))
        }
        // Query type, hop limit, query length (6), tag (8), options length (12), query (14).
        PacketType::ResolveRequest => (Eid::default(), ByteRange::new(0, 0), 14 + u16_at(6), u16_at(12)),
        // Hop limit, reserved, tag (8), cursor (12), options length (16), options (18).
        PacketType::ListRequest => (Eid::default(), ByteRange::new(0, 0), super::list::LIST_REQUEST_LEN, u16_at(16)),
        // Flags, hop limit, options length (6), tag (8), EID (12), block, depth (54).
        _ => (eid_at(12), ByteRange::new(0, 0), super::proof::PROOF_REQUEST_HEADER_LEN, u16_at(6)),
    };
    let area = datagram.get(options_at..).unwrap_or(&[]);
    let token = find_address_token(&area[..options_len.min(area.len())]);
    Some(Attribution { ty, tag, eid, range, token })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tlv::write_address_token;
    use crate::wire::{ListRequest, Options, ProofRequest, Query, Request, RequestFlags, ResolveRequest};

    #[test]
    fn every_request_type_names_its_tag_and_token() {
        let mut opts = [0u8; 32];
        let n = write_address_token(&mut opts, Some(b"tok"));
        let options = Options::parse(&opts[..n]).unwrap();
        let mut buf = [0u8; 256];
        let eid = Eid([5; 32]);
        let range = ByteRange::new(1402, 2804);
        let r = Request { flags: RequestFlags(0), hop_limit: 3, unit: 1402, tag: 11, nonce: 1, eid, range, options };
        let len = r.encode(&mut buf).unwrap();
        let a = attribute(&buf[..len]).unwrap();
        assert_eq!((a.ty, a.tag, a.eid, a.range, a.token), (PacketType::Request, 11, eid, range, Some(&b"tok"[..])));
        // Cut in its EID: the tag still, the rest zeros.
        let a = attribute(&buf[..30]).unwrap();
        assert_eq!((a.tag, a.eid, a.range, a.token), (11, Eid::default(), ByteRange::new(0, 0), None));

        let len =
            ResolveRequest { hop_limit: 1, tag: 12, query: Query::Name("a/b"), options }.encode(&mut buf).unwrap();
        let a = attribute(&buf[..len]).unwrap();
        assert_eq!((a.ty, a.tag, a.token), (PacketType::ResolveRequest, 12, Some(&b"tok"[..])));
        let len = ListRequest { hop_limit: 1, tag: 13, cursor: 4, options }.encode(&mut buf).unwrap();
        assert_eq!(attribute(&buf[..len]).map(|a| (a.tag, a.token)), Some((13, Some(&b"tok"[..]))));
        let p = ProofRequest { flags: RequestFlags(0), hop_limit: 1, tag: 14, eid, block: 2, depth: 1, options };
        let len = p.encode(&mut buf).unwrap();
        let a = attribute(&buf[..len]).unwrap();
        assert_eq!((a.tag, a.eid, a.token), (14, eid, Some(&b"tok"[..])));

        // Not a request, or too short for a tag: nothing to attribute.
        assert_eq!(attribute(b"RD\x03\x02 a Data"), None);
        assert_eq!(attribute(&buf[..11]), None);
        assert_eq!(attribute(b"hello, world"), None);
    }

    #[test]
    fn a_token_is_found_as_far_as_the_options_are_well_formed() {
        // An unknown critical option before the token makes the request malformed; the
        // token after it is still found. A truncated item ends the walk.
        let mut raw = vec![0x80, 0, 1, 9];
        let mut t = [0u8; 8];
        let n = write_address_token(&mut t, Some(b"tok"));
        raw.extend_from_slice(&t[..n]);
        assert_eq!(find_address_token(&raw), Some(&b"tok"[..]));
        assert_eq!(find_address_token(&[0x22, 0, 9, 1]), None);
        assert_eq!(find_address_token(&[0x41, 0, 0]), None, "an empty token is none");
    }
}
