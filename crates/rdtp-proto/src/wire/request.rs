//! Request: the receiver asks for byte ranges of an object (seed 000 §3.1, §4.1).

use super::codec::{Reader, Writer};
use super::data::{MAX_UNIT, MIN_UNIT};
use super::header::{BufferTooSmall, DecodeError, PacketType};
use super::tlv::{ByteRange, Options};
use crate::eid::Eid;

/// Fixed part of a Request, in bytes.
pub const REQUEST_HEADER_LEN: usize = 66;

/// Hop limit a receiver puts in its requests: routers decrement it and refuse to forward a
/// request that arrives with 0 (Nack `HopLimit`), so a routing loop cannot circulate forever.
pub const DEFAULT_HOP_LIMIT: u8 = 32;

/// Request flag bits (byte 4). Unknown bits are carried, never interpreted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RequestFlags(pub u8);

impl RequestFlags {
    /// The receiver was application-limited when it sent this request: it asked for less
    /// than its congestion window and pacing allowed (the `app_limit` bit of seed 000 §3.1,
    /// in the sense of draft-cheng-iccrg-delivery-rate-estimation). On-path nodes may use it
    /// to tell demand-limited flows from congestion-limited ones.
    pub const APP_LIMITED: u8 = 0x01;
    /// At least one range re-requests data asked for before (a timeout or fast re-request).
    pub const RETRANSMISSION: u8 = 0x02;
    /// Bypass caches: routers forward this request upstream instead of answering it from
    /// their store (a block that failed verification is fetched again from the origin).
    pub const ORIGIN: u8 = 0x04;

    pub fn contains(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
    pub fn with(self, bit: u8, on: bool) -> Self {
        RequestFlags(if on { self.0 | bit } else { self.0 & !bit })
    }
}

/// A decoded or to-be-encoded Request.
///
/// The primary range is in the header; further ranges of the same object travel in the
/// `EXTRA_RANGES` option. Every range's length must be a positive multiple of `unit`; the
/// server answers each range with Data packets of `unit` payload bytes (the last one of the
/// object may be shorter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request<'a> {
    pub flags: RequestFlags,
    /// Payload bytes per Data packet the receiver wants (its `UNIT_MSS`).
    pub unit: u16,
    /// Routers that may still forward this request (see [`DEFAULT_HOP_LIMIT`]).
    pub hop_limit: u8,
    /// Opaque value echoed in every Data and Nack answering this request. Routers replace it
    /// hop by hop (each node's tag names its own request).
    pub tag: u32,
    /// Random value chosen by the receiver and carried unchanged by routers: a router that
    /// sees a nonce come back for a unit it already requested upstream has found a routing
    /// loop (Nack `Duplicate`), as NDN's Interest nonce.
    pub nonce: u64,
    pub eid: Eid,
    /// The primary range.
    pub range: ByteRange,
    pub options: Options<'a>,
}

impl<'a> Request<'a> {
    /// Decode the structure of a Request datagram (prefix already checked or checked here).
    /// Semantic checks (unit bounds, range lengths) are in [`Request::validate`], so that a
    /// server can still echo the tag and EID of a request it refuses.
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        if super::header::check_prefix(datagram)? != PacketType::Request {
            return Err(DecodeError::Invalid("packet type"));
        }
        let mut r = Reader::after_prefix(datagram);
        let flags = RequestFlags(r.u8("flags")?);
        let hop_limit = r.u8("hop limit")?;
        let unit = r.u16("unit")?;
        let tag = r.u32("tag")?;
        let nonce = r.u64("nonce")?;
        let eid = r.eid()?;
        let offset = r.u64("offset")?;
        let length = r.u32("length")?;
        let opt_len = usize::from(r.u16("options length")?);
        let options = Options::parse(r.bytes(opt_len, "options")?)?;
        r.finish("trailing bytes after options")?;
        Ok(Request { flags, hop_limit, unit, tag, nonce, eid, range: ByteRange { offset, length }, options })
    }

    /// All ranges: the primary one, then those of `EXTRA_RANGES`.
    pub fn ranges(&self) -> impl Iterator<Item = ByteRange> + 'a {
        core::iter::once(self.range).chain(self.options.extra_ranges())
    }

    /// Total units asked for, counting every range (saturating).
    pub fn total_units(&self) -> u64 {
        let unit = u64::from(self.unit.max(1));
        self.ranges().fold(0u64, |acc, r| acc.saturating_add(u64::from(r.length).div_ceil(unit)))
    }

    /// Check the rules a server enforces; the error text goes into the Nack's detail.
    pub fn validate(&self) -> Result<(), &'static str> {
        if self.unit < MIN_UNIT || self.unit > MAX_UNIT {
            return Err("unit outside 64..=65447 bytes");
        }
        for r in self.ranges() {
            if r.length == 0 {
                return Err("zero-length range");
            }
            if r.length % u32::from(self.unit) != 0 {
                return Err("range length is not a multiple of the unit");
            }
            if r.offset.checked_add(u64::from(r.length)).is_none() {
                return Err("range overflows 64-bit offsets");
            }
        }
        // S3 §II-A: anticipated interests name whole units, at most 64 of them.
        let mut anticipated = 0u64;
        for r in self.options.anticipated() {
            if r.length == 0 || r.length % u32::from(self.unit) != 0 {
                return Err("anticipated range is not a positive multiple of the unit");
            }
            if r.offset.checked_add(u64::from(r.length)).is_none() {
                return Err("anticipated range overflows 64-bit offsets");
            }
            anticipated += u64::from(r.length / u32::from(self.unit));
        }
        if anticipated > super::annotation::MAX_ANTICIPATED_UNITS {
            return Err("more than 64 anticipated units");
        }
        Ok(())
    }

    /// Encoded size.
    pub fn encoded_len(&self) -> usize {
        REQUEST_HEADER_LEN + self.options.raw().len()
    }

    /// Encode into `out`.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        let raw = self.options.raw();
        let opt_len =
            u16::try_from(raw.len()).map_err(|_| BufferTooSmall { needed: usize::MAX, available: out.len() })?;
        let mut w = Writer::with_prefix(out, self.encoded_len(), PacketType::Request)?;
        w.u8(self.flags.0);
        w.u8(self.hop_limit);
        w.u16(self.unit);
        w.u32(self.tag);
        w.u64(self.nonce);
        w.eid(&self.eid);
        w.u64(self.range.offset);
        w.u32(self.range.length);
        w.u16(opt_len);
        w.bytes(raw);
        Ok(w.position())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tlv::{extra_ranges_len, write_extra_ranges};

    fn sample(opts: &[u8]) -> Request<'_> {
        Request {
            flags: RequestFlags(RequestFlags::RETRANSMISSION),
            hop_limit: DEFAULT_HOP_LIMIT,
            unit: 1412,
            tag: 7,
            nonce: 0x0102_0304_0506_0708,
            eid: Eid([0xab; 32]),
            range: ByteRange::new(1412 * 10, 1412 * 4),
            options: Options::parse(opts).unwrap(),
        }
    }

    #[test]
    fn round_trip_with_ranges() {
        let mut opts = [0u8; 64];
        let n = write_extra_ranges(&mut opts, &[ByteRange::new(0, 1412), ByteRange::new(1412 * 30, 2824)]);
        assert_eq!(n, extra_ranges_len(2));
        let req = sample(&opts[..n]);
        let mut buf = [0u8; 256];
        let len = req.encode(&mut buf).unwrap();
        assert_eq!(len, REQUEST_HEADER_LEN + n);
        let back = Request::decode(&buf[..len]).unwrap();
        assert_eq!(back, req);
        assert_eq!(back.ranges().count(), 3);
        assert_eq!(back.total_units(), 4 + 1 + 2);
        assert!(back.validate().is_ok());
    }

    #[test]
    fn structural_errors() {
        let req = sample(&[]);
        let mut buf = [0u8; 128];
        let len = req.encode(&mut buf).unwrap();
        assert!(Request::decode(&buf[..len - 1]).is_err());
        let mut longer = buf[..len].to_vec();
        longer.push(0);
        assert!(Request::decode(&longer).is_err());
        assert!(req.encode(&mut [0u8; 10]).is_err());
    }

    #[test]
    fn semantic_checks() {
        let mut req = sample(&[]);
        req.range.length = 1000;
        assert!(req.validate().is_err());
        req.range.length = 0;
        assert!(req.validate().is_err());
        req.range.length = 1412;
        req.unit = 10;
        assert!(req.validate().is_err());
        req.unit = 1412;
        req.range.offset = u64::MAX - 10;
        assert!(req.validate().is_err());
    }

    #[test]
    fn anticipated_units_are_whole_and_at_most_64() {
        use crate::wire::annotation::write_anticipated;
        let check = |ranges: &[ByteRange]| {
            let mut opts = [0u8; 128];
            let n = write_anticipated(&mut opts, ranges);
            sample(&opts[..n]).validate()
        };
        assert!(check(&[ByteRange::new(1412 * 14, 1412 * 60), ByteRange::new(0, 1412 * 4)]).is_ok());
        assert!(check(&[ByteRange::new(0, 1412 * 65)]).is_err(), "65 units");
        assert!(check(&[ByteRange::new(0, 1000)]).is_err(), "not a multiple of the unit");
        assert!(check(&[ByteRange::new(u64::MAX - 10, 1412)]).is_err(), "overflow");
    }
}
