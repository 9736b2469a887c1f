//! Data: one unit of an object, the server's answer to a request (seed 000 §3.1, §4.1).

use super::codec::{Reader, Writer};
use super::header::{BufferTooSmall, DecodeError, PacketType};
use super::tlv::Options;
use crate::eid::Eid;
use crate::node::NodeId;

/// Smallest unit (payload bytes per Data packet) a server accepts.
pub const MIN_UNIT: u16 = 64;
/// Largest unit: a Data datagram (without options) must fit the 65 507-byte IPv4 UDP
/// payload limit.
pub const MAX_UNIT: u16 = (65_507 - DATA_HEADER_LEN) as u16;

/// Fixed part of a Data packet, in bytes (without options).
pub const DATA_HEADER_LEN: usize = 70;

/// Data flag bits (byte 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DataFlags(pub u8);

impl DataFlags {
    /// The sender's application could not supply more data at this point (seed 000 §3.1
    /// `app_limit`): a receiver must not read the resulting rate as congestion.
    pub const APP_LIMITED: u8 = 0x01;
    /// This packet carries the last byte of the object.
    pub const LAST: u8 = 0x02;
    /// Served from a router's content store: `served_by` is that router (else the origin).
    pub const CACHED: u8 = 0x04;
    /// Set by a router on the copy it sends a downstream whose request joined a unit
    /// requested upstream well before (coalescing, seed 001 §III-B; see `docs/PROTOCOL.md`):
    /// the Data left for an earlier request, so the time since this request is shorter than
    /// its round trip and must not be taken as an RTT sample (as Karn's rule keeps samples
    /// that do not measure a request's round trip out, RFC 6298 §3).
    pub const COALESCED: u8 = 0x08;

    pub fn contains(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
    pub fn with(self, bit: u8, on: bool) -> Self {
        DataFlags(if on { self.0 | bit } else { self.0 & !bit })
    }
}

/// A decoded or to-be-encoded Data packet; payload and options borrow the datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Data<'a> {
    pub flags: DataFlags,
    /// Routers this packet crossed on its way back from `served_by` (each forwarding router
    /// adds one, saturating at 255; the router that served it from its store counts 0).
    pub hops: u8,
    /// The tag of the request this answers.
    pub tag: u32,
    pub eid: Eid,
    /// Offset of `payload[0]` in the object.
    pub offset: u64,
    /// Size of the whole object in bytes.
    pub total_size: u64,
    /// The node that produced this packet: the origin, or the router whose store held it.
    pub served_by: NodeId,
    /// TLV options (same encoding as a Request's): the anticipated-interest list, the
    /// request's nonce and routers' annotations copied from the request ([`super::annotation`]).
    pub options: Options<'a>,
    pub payload: &'a [u8],
}

impl<'a> Data<'a> {
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        if super::header::check_prefix(datagram)? != PacketType::Data {
            return Err(DecodeError::Invalid("packet type"));
        }
        let mut r = Reader::after_prefix(datagram);
        let flags = DataFlags(r.u8("flags")?);
        let hops = r.u8("hops")?;
        let len = usize::from(r.u16("payload length")?);
        let tag = r.u32("tag")?;
        let eid = r.eid()?;
        let offset = r.u64("offset")?;
        let total_size = r.u64("total size")?;
        let served_by = r.node()?;
        let opt_len = usize::from(r.u16("options length")?);
        let options = Options::parse(r.bytes(opt_len, "options")?)?;
        let payload = r.bytes(len, "payload")?;
        r.finish("trailing bytes after payload")?;
        if offset.checked_add(len as u64).is_none_or(|end| end > total_size) {
            return Err(DecodeError::Invalid("payload beyond object end"));
        }
        Ok(Data { flags, hops, tag, eid, offset, total_size, served_by, options, payload })
    }

    pub fn encoded_len(&self) -> usize {
        DATA_HEADER_LEN + self.options.raw().len() + self.payload.len()
    }

    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        let raw = self.options.raw();
        let too_big = BufferTooSmall { needed: usize::MAX, available: out.len() };
        let payload_len = u16::try_from(self.payload.len()).map_err(|_| too_big)?;
        let opt_len = u16::try_from(raw.len()).map_err(|_| too_big)?;
        let mut w = Writer::with_prefix(out, self.encoded_len(), PacketType::Data)?;
        self.write_header_fields(&mut w, payload_len, opt_len);
        w.bytes(raw);
        w.bytes(self.payload);
        Ok(w.position())
    }

    /// Write only the header and the options into `out`, announcing `payload_len` payload
    /// bytes, for a caller that reads the payload straight into the buffer after them (the
    /// server does, to avoid a copy). `self.payload` is not written (leave it empty).
    /// Returns where the payload goes (`DATA_HEADER_LEN` + options).
    pub fn encode_header(&self, out: &mut [u8], payload_len: u16) -> Result<usize, BufferTooSmall> {
        let raw = self.options.raw();
        let too_big = BufferTooSmall { needed: usize::MAX, available: out.len() };
        let opt_len = u16::try_from(raw.len()).map_err(|_| too_big)?;
        let mut w = Writer::with_prefix(out, DATA_HEADER_LEN + raw.len(), PacketType::Data)?;
        self.write_header_fields(&mut w, payload_len, opt_len);
        w.bytes(raw);
        Ok(w.position())
    }

    fn write_header_fields(&self, w: &mut Writer<'_>, payload_len: u16, opt_len: u16) {
        w.u8(self.flags.0);
        w.u8(self.hops);
        w.u16(payload_len);
        w.u32(self.tag);
        w.eid(&self.eid);
        w.u64(self.offset);
        w.u64(self.total_size);
        w.node(&self.served_by);
        w.u16(opt_len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(payload: &[u8]) -> Data<'_> {
        Data {
            flags: DataFlags(DataFlags::LAST | DataFlags::CACHED),
            hops: 2,
            tag: 0xdead_beef,
            eid: Eid([1; 32]),
            offset: 900,
            total_size: 1000,
            served_by: NodeId::label("ap").unwrap(),
            options: Options::EMPTY,
            payload,
        }
    }

    #[test]
    fn round_trip() {
        let payload = [5u8; 100];
        let d = sample(&payload);
        let mut buf = [0u8; 200];
        let n = d.encode(&mut buf).unwrap();
        assert_eq!(n, DATA_HEADER_LEN + 100);
        assert_eq!(Data::decode(&buf[..n]).unwrap(), d);
        // Header-only encoding produces the same bytes.
        let mut hdr = [0u8; DATA_HEADER_LEN];
        assert_eq!(Data { payload: &[], ..d }.encode_header(&mut hdr, 100), Ok(DATA_HEADER_LEN));
        assert_eq!(&hdr[..], &buf[..DATA_HEADER_LEN]);
        // A router's in-place rewrite changes the tag and hops only.
        super::super::rewrite_response(&mut buf[..n], 77);
        super::super::set_hops(&mut buf[..n], 3);
        let back = Data::decode(&buf[..n]).unwrap();
        assert_eq!(back, Data { tag: 77, hops: 3, ..d });
    }

    #[test]
    fn options_before_payload() {
        let payload = [5u8; 10];
        let opts = [0x22, 0, 2, 9, 9];
        let d = Data { options: Options::parse(&opts).unwrap(), ..sample(&payload) };
        let mut buf = [0u8; 200];
        let n = d.encode(&mut buf).unwrap();
        assert_eq!(n, DATA_HEADER_LEN + 5 + 10);
        assert_eq!(Data::decode(&buf[..n]).unwrap(), d);
        // Header and options alone, the payload read in after them: the same bytes.
        let mut two = [0u8; 200];
        let at = Data { payload: &[], ..d }.encode_header(&mut two, 10).unwrap();
        assert_eq!(at, DATA_HEADER_LEN + 5);
        two[at..at + 10].copy_from_slice(&payload);
        assert_eq!(two[..n], buf[..n]);
    }

    #[test]
    fn rejects_payload_past_end() {
        let payload = [5u8; 100];
        let d = Data { offset: 950, ..sample(&payload) };
        let mut buf = [0u8; 200];
        let n = d.encode(&mut buf).unwrap();
        assert_eq!(Data::decode(&buf[..n]), Err(DecodeError::Invalid("payload beyond object end")));
    }
}
