//! Segmented objects as ndnputchunks (ndn-tools) and NDNts publish them, and RDR
//! ("Realtime Data Retrieval") version discovery, in "NDN naming conventions" rev. 3:
//!
//! * segment `n` of version `v` of the object named `/prefix` is the Data
//!   `/prefix/v=<v>/seg=<n>`, and every segment's FinalBlockId is `seg=<last>`;
//! * a consumer that does not know the version asks for `/prefix/32=metadata` (CanBePrefix,
//!   MustBeFresh); the producer answers with a Data named
//!   `/prefix/32=metadata/v=<t>/seg=0` whose Content is the Name TLV of the versioned name
//!   `/prefix/v=<v>` (NDNts leaves it unsigned unless its producer is given a signer:
//!   SignatureType 200, [`SignatureType::Null`](super::SignatureType::Null); a consumer
//!   decides whether to accept that);
//! * without metadata, a consumer fetches the name as given.
//!
//! Only names and packets: fetching and publishing belong to the receiver and server.

use super::Error;
use super::data::Data;
use super::interest::Interest;
use super::name::{Component, Name};
use super::tlv::{self, types};

/// RDR's keyword component, `32=metadata`.
pub fn metadata_component() -> Component {
    Component::keyword(*b"metadata")
}

/// `/prefix/v=<version>/seg=<segment>`.
pub fn segment_name(prefix: &Name, version: u64, segment: u64) -> Name {
    prefix.clone().with(Component::version(version)).with(Component::segment(segment))
}

/// Split a segment's name into the versioned name (`/prefix/v=<v>` or, without a version
/// component, `/prefix`) and the segment number.
pub fn split_segment(name: &Name) -> Option<(Name, u64)> {
    let seg = name.last()?.as_segment()?;
    Some((name.prefix(name.len() - 1), seg))
}

/// The version of a versioned name (its last component, `v=<v>`).
pub fn version_of(versioned: &Name) -> Option<u64> {
    versioned.last()?.as_version()
}

/// The last segment number a Data's FinalBlockId announces.
pub fn final_segment(data: &Data) -> Option<u64> {
    data.meta.final_block.as_ref()?.as_segment()
}

/// The segments of `content` under `versioned` (`/prefix/v=<v>`), `segment_size` bytes each
/// (the last may be shorter; empty content is one empty segment), each with FinalBlockId
/// and `freshness_ms`, unsigned (sign each with [`Data::encode_signed`] or another key).
pub fn segments(versioned: &Name, content: &[u8], segment_size: usize, freshness_ms: u64) -> Vec<Data> {
    assert!(segment_size > 0, "segment size 0");
    let count = content.len().div_ceil(segment_size).max(1) as u64;
    (0..count)
        .map(|i| {
            let start = (i as usize) * segment_size;
            let piece = &content[start.min(content.len())..(start + segment_size).min(content.len())];
            let mut d = Data::new(versioned.clone().with(Component::segment(i)), piece.to_vec());
            d.meta.freshness_ms = Some(freshness_ms);
            d.meta.final_block = Some(Component::segment(count - 1));
            d
        })
        .collect()
}

/// RDR's discovery Interest for `prefix`: `/prefix/32=metadata`, CanBePrefix, MustBeFresh.
pub fn metadata_interest(prefix: &Name, nonce: [u8; 4]) -> Interest {
    Interest {
        can_be_prefix: true,
        must_be_fresh: true,
        nonce: Some(nonce),
        ..Interest::new(prefix.clone().with(metadata_component()))
    }
}

/// If `interest_name` is an RDR discovery name (`/prefix/32=metadata`), its prefix.
pub fn metadata_prefix(interest_name: &Name) -> Option<Name> {
    (interest_name.last()? == &metadata_component()).then(|| interest_name.prefix(interest_name.len() - 1))
}

/// RDR's metadata Data for `versioned` (`/prefix/v=<v>`): named
/// `/prefix/32=metadata/v=<metadata_version>/seg=0`, its Content the versioned Name TLV.
pub fn metadata_data(versioned: &Name, metadata_version: u64, freshness_ms: u64) -> Data {
    let prefix = versioned.prefix(versioned.len().saturating_sub(1));
    let name = segment_name(&prefix.with(metadata_component()), metadata_version, 0);
    let mut d = Data::new(name, versioned.to_bytes());
    d.meta.freshness_ms = Some(freshness_ms);
    d
}

/// If `interest` is an RDR discovery Interest (`/prefix/32=metadata` with CanBePrefix and
/// MustBeFresh, as NDNts's producer requires), its prefix.
pub fn discovery_prefix(interest: &Interest) -> Option<Name> {
    metadata_prefix(&interest.name).filter(|_| interest.can_be_prefix && interest.must_be_fresh)
}

/// The versioned name a metadata Data announces (the first Name in its Content; RDR allows
/// other elements after it).
pub fn parse_metadata(data: &Data) -> Result<Name, Error> {
    let cs = data.name.components();
    let versioned_segment =
        cs.len() >= 3 && cs[cs.len() - 2].as_version().is_some() && cs[cs.len() - 1].as_segment().is_some();
    if !versioned_segment || metadata_prefix(&data.name.prefix(cs.len() - 2)).is_none() {
        return Err(Error::Invalid("not an RDR metadata name"));
    }
    let mut r = tlv::Reader::new(data.content());
    while let Some(e) = r.next_element() {
        let e = e?;
        if e.ty == types::NAME {
            return Name::decode_value(e.value);
        }
    }
    Err(Error::Missing("Name in RDR metadata"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Name {
        s.parse().unwrap()
    }

    #[test]
    fn segment_names() {
        let name = segment_name(&n("/files/a.txt"), 7, 3);
        assert_eq!(name.to_string(), "/files/a.txt/v=7/seg=3");
        assert_eq!(split_segment(&name), Some((n("/files/a.txt/v=7"), 3)));
        assert_eq!(version_of(&n("/files/a.txt/v=7")), Some(7));
        assert_eq!(split_segment(&n("/files/a.txt")), None);
    }

    #[test]
    fn segments_carry_the_final_block_id() {
        let content: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
        let segs = segments(&n("/o/v=1"), &content, 1000, 10_000);
        assert_eq!(segs.len(), 3);
        assert_eq!(segs.iter().map(|d| d.content().len()).collect::<Vec<_>>(), [1000, 1000, 500]);
        assert!(segs.iter().all(|d| final_segment(d) == Some(2)));
        assert_eq!(segs.iter().flat_map(|d| d.content().to_vec()).collect::<Vec<_>>(), content);
        assert_eq!(segs[2].name.to_string(), "/o/v=1/seg=2");
        let empty = segments(&n("/o/v=1"), &[], 1000, 0);
        assert_eq!((empty.len(), empty[0].content().len(), final_segment(&empty[0])), (1, 0, Some(0)));
        // Through the codec, signed.
        let mut d = segs[1].clone();
        let wire = d.encode_signed();
        let (back, v) = Data::decode_verified(&wire).unwrap();
        assert_eq!((final_segment(&back), v), (Some(2), super::super::Verification::DigestValid));
    }

    #[test]
    fn rdr_metadata() {
        let i = metadata_interest(&n("/files/a.txt"), [1, 2, 3, 4]);
        assert_eq!(i.name.to_string(), "/files/a.txt/32=metadata");
        assert!(i.can_be_prefix && i.must_be_fresh);
        let back = Interest::decode(&i.encode()).unwrap();
        assert_eq!(discovery_prefix(&back), Some(n("/files/a.txt")));
        assert_eq!(discovery_prefix(&Interest::new(back.name.clone())), None);
        assert_eq!(metadata_prefix(&n("/files/a.txt")), None);
        let mut d = metadata_data(&n("/files/a.txt/v=1700000000000"), 42, 1000);
        assert_eq!(d.name.to_string(), "/files/a.txt/32=metadata/v=42/seg=0");
        assert!(i.matches_name(&d.name));
        let d = Data::decode(&d.encode_signed()).unwrap();
        assert_eq!(parse_metadata(&d), Ok(n("/files/a.txt/v=1700000000000")));
        for name in ["/files/a.txt/v=1/seg=0", "/files/32=metadata/x/seg=0", "/32=metadata/v=1/seg=0/x"] {
            let plain = Data::new(n(name), d.content().to_vec());
            assert!(parse_metadata(&plain).is_err(), "{name}");
        }
    }
}
