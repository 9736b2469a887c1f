//! Data: one unit of an object, the server's answer to a request (seed 000 §3.1, §4.1).

use super::codec::{Reader, Writer};
use super::{BufferTooSmall, DecodeError, PacketType};
use crate::eid::Eid;

/// Fixed part of a Data packet, in bytes.
pub const DATA_HEADER_LEN: usize = 60;

/// Data flag bits (byte 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DataFlags(pub u8);

impl DataFlags {
    /// The sender's application could not supply more data at this point (seed 000 §3.1
    /// `app_limit`): a receiver must not read the resulting rate as congestion.
    pub const APP_LIMITED: u8 = 0x01;
    /// This packet carries the last byte of the object.
    pub const LAST: u8 = 0x02;

    pub fn contains(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
    pub fn with(self, bit: u8, on: bool) -> Self {
        DataFlags(if on { self.0 | bit } else { self.0 & !bit })
    }
}

/// A decoded or to-be-encoded Data packet; the payload borrows the datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Data<'a> {
    pub flags: DataFlags,
    /// The tag of the request this answers.
    pub tag: u32,
    pub eid: Eid,
    /// Offset of `payload[0]` in the object.
    pub offset: u64,
    /// Size of the whole object in bytes.
    pub total_size: u64,
    pub payload: &'a [u8],
}

impl<'a> Data<'a> {
    pub fn decode(datagram: &'a [u8]) -> Result<Self, DecodeError> {
        if super::check_prefix(datagram)? != PacketType::Data {
            return Err(DecodeError::Invalid("packet type"));
        }
        let mut r = Reader::after_prefix(datagram);
        let flags = DataFlags(r.u8("flags")?);
        let _reserved = r.u8("reserved")?;
        let len = usize::from(r.u16("payload length")?);
        let tag = r.u32("tag")?;
        let eid = r.eid()?;
        let offset = r.u64("offset")?;
        let total_size = r.u64("total size")?;
        let payload = r.bytes(len, "payload")?;
        r.finish("trailing bytes after payload")?;
        if offset.checked_add(len as u64).is_none_or(|end| end > total_size) {
            return Err(DecodeError::Invalid("payload beyond object end"));
        }
        Ok(Data { flags, tag, eid, offset, total_size, payload })
    }

    pub fn encoded_len(&self) -> usize {
        DATA_HEADER_LEN + self.payload.len()
    }

    pub fn encode(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        let mut w = Writer::with_prefix(out, self.encoded_len(), PacketType::Data)?;
        write_header_fields(
            &mut w,
            self.flags,
            self.payload.len() as u16,
            self.tag,
            &self.eid,
            self.offset,
            self.total_size,
        );
        w.bytes(self.payload);
        Ok(w.position())
    }

    /// Write only the header into `out[..DATA_HEADER_LEN]`, for a caller that reads the
    /// payload straight into `out[DATA_HEADER_LEN..]` (the server does, to avoid a copy).
    pub fn encode_header(
        out: &mut [u8],
        flags: DataFlags,
        payload_len: u16,
        tag: u32,
        eid: &Eid,
        offset: u64,
        total_size: u64,
    ) -> Result<(), BufferTooSmall> {
        let mut w = Writer::with_prefix(out, DATA_HEADER_LEN, PacketType::Data)?;
        write_header_fields(&mut w, flags, payload_len, tag, eid, offset, total_size);
        Ok(())
    }
}

fn write_header_fields(w: &mut Writer<'_>, flags: DataFlags, len: u16, tag: u32, eid: &Eid, offset: u64, total: u64) {
    w.u8(flags.0);
    w.u8(0);
    w.u16(len);
    w.u32(tag);
    w.eid(eid);
    w.u64(offset);
    w.u64(total);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let payload = [5u8; 100];
        let d = Data {
            flags: DataFlags(DataFlags::LAST),
            tag: 0xdead_beef,
            eid: Eid([1; 32]),
            offset: 900,
            total_size: 1000,
            payload: &payload,
        };
        let mut buf = [0u8; 200];
        let n = d.encode(&mut buf).unwrap();
        assert_eq!(n, DATA_HEADER_LEN + 100);
        assert_eq!(Data::decode(&buf[..n]).unwrap(), d);
        // Header-only encoding produces the same bytes.
        let mut hdr = [0u8; DATA_HEADER_LEN];
        Data::encode_header(&mut hdr, d.flags, 100, d.tag, &d.eid, d.offset, d.total_size).unwrap();
        assert_eq!(&hdr[..], &buf[..DATA_HEADER_LEN]);
    }

    #[test]
    fn rejects_payload_past_end() {
        let payload = [5u8; 100];
        let d =
            Data { flags: DataFlags(0), tag: 0, eid: Eid([1; 32]), offset: 950, total_size: 1000, payload: &payload };
        let mut buf = [0u8; 200];
        let n = d.encode(&mut buf).unwrap();
        assert_eq!(Data::decode(&buf[..n]), Err(DecodeError::Invalid("payload beyond object end")));
    }
}
