//! The 802.11 MAC header of an observed frame (IEEE 802.11-2016 §9.2): who sent it to whom,
//! whether it is a retransmission, and how many payload bytes it carries. Shared by every
//! observation source (ns-3's monitor trace hands the MPDU bytes over the C ABI; radiotap
//! captures hand the bytes after the radiotap header), so both read frames the same way.

use core::fmt;
use core::str::FromStr;

/// A MAC address.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Mac(pub [u8; 6]);

impl Mac {
    /// Group (multicast/broadcast) address.
    pub fn is_group(&self) -> bool {
        self.0[0] & 1 == 1
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5])
    }
}

impl fmt::Debug for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Mac {
    type Err = &'static str;
    /// `00:11:22:33:44:55` (also with `-`).
    fn from_str(s: &str) -> Result<Mac, Self::Err> {
        let mut out = [0u8; 6];
        let mut parts = s.split([':', '-']);
        for b in &mut out {
            let p = parts.next().ok_or("a MAC address has six bytes")?;
            *b = u8::from_str_radix(p, 16).map_err(|_| "MAC address bytes are two hex digits")?;
        }
        if parts.next().is_some() {
            return Err("a MAC address has six bytes");
        }
        Ok(Mac(out))
    }
}

/// Frame type (frame control bits 2–3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameType {
    Management,
    Control,
    Data,
    Extension,
}

/// What the estimator needs from one MPDU's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacFrame {
    pub kind: FrameType,
    /// Subtype (frame control bits 4–7).
    pub subtype: u8,
    /// Address 1 (receiver).
    pub rx: Mac,
    /// Address 2 (transmitter); control frames such as ACK and CTS have none.
    pub tx: Option<Mac>,
    /// Retry bit: a retransmission of an earlier MPDU.
    pub retry: bool,
    /// Sequence number (data and management frames): a retry repeats its MPDU's.
    pub seq: Option<u16>,
    /// Header length in bytes (24, 26 with QoS, 30/32 with four addresses, +4 with HT control).
    pub header_len: usize,
    /// Bytes after the header, without the FCS (for data frames: the LLC/SNAP header and the
    /// packet).
    pub body_len: usize,
}

/// LLC/SNAP header in front of an IP packet in a data frame body.
pub const LLC_SNAP: usize = 8;
/// Frame check sequence.
pub const FCS: usize = 4;

impl MacFrame {
    /// A data frame that carries a packet (not a null/QoS-null frame).
    pub fn carries_data(&self) -> bool {
        // Subtypes with bit 2 set (4 null, 12 QoS null, …) carry no body.
        self.kind == FrameType::Data && self.subtype & 0b0100 == 0 && self.body_len > LLC_SNAP
    }

    /// Bytes delivered above the MAC (the packet, without LLC/SNAP); 0 for non-data frames.
    pub fn payload(&self) -> usize {
        if self.carries_data() { self.body_len - LLC_SNAP } else { 0 }
    }
}

/// Parse the MAC header of an MPDU of `len` bytes (`bytes` may be a truncated capture of it;
/// the header must be there). `has_fcs`: the last 4 bytes of `len` are the FCS. `None` if
/// the header is cut short or the protocol version is not 0.
pub fn parse(bytes: &[u8], len: usize, has_fcs: bool) -> Option<MacFrame> {
    if bytes.len() < 10 {
        return None;
    }
    let fc = u16::from_le_bytes([bytes[0], bytes[1]]);
    if fc & 0b11 != 0 {
        return None; // protocol version
    }
    let kind = match (fc >> 2) & 0b11 {
        0 => FrameType::Management,
        1 => FrameType::Control,
        2 => FrameType::Data,
        _ => FrameType::Extension,
    };
    let subtype = ((fc >> 4) & 0xf) as u8;
    let flags = (fc >> 8) as u8;
    let (to_ds, from_ds) = (flags & 0x01 != 0, flags & 0x02 != 0);
    let retry = flags & 0x08 != 0;
    let order = flags & 0x80 != 0;
    let addr = |at: usize| -> Option<Mac> { bytes.get(at..at + 6).map(|s| Mac(s.try_into().unwrap())) };
    let rx = addr(4)?;
    let (tx, header_len) = match kind {
        FrameType::Control => {
            // ACK and CTS carry only address 1 (10 bytes); the others (RTS, Block Ack, …) two.
            let short = matches!(subtype, 12 | 13);
            if short { (None, 10) } else { (Some(addr(10)?), 16) }
        }
        FrameType::Data => {
            let mut h = 24;
            if to_ds && from_ds {
                h += 6;
            }
            let qos = subtype & 0b1000 != 0;
            if qos {
                h += 2;
                if order {
                    h += 4;
                }
            }
            (Some(addr(10)?), h)
        }
        FrameType::Management => (Some(addr(10)?), if order { 28 } else { 24 }),
        FrameType::Extension => (None, 10),
    };
    let trailer = if has_fcs { FCS } else { 0 };
    let body_len = len.saturating_sub(header_len + trailer);
    let seq = match kind {
        FrameType::Data | FrameType::Management => bytes.get(22..24).map(|s| u16::from_le_bytes([s[0], s[1]]) >> 4),
        _ => None,
    };
    Some(MacFrame { kind, subtype, rx, tx, retry, seq, header_len, body_len })
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::FCS;

    /// A data frame STA → AP (to-DS) of `body` bytes, with FCS.
    pub(crate) fn data_frame_qos(tx: [u8; 6], rx: [u8; 6], body: usize, retry: bool, qos: bool) -> Vec<u8> {
        let subtype: u16 = if qos { 8 } else { 0 };
        let fc: u16 = (2 << 2) | (subtype << 4) | (0x01 << 8) | (if retry { 0x08 << 8 } else { 0 });
        let mut f = fc.to_le_bytes().to_vec();
        f.extend_from_slice(&[0, 0]); // duration
        f.extend_from_slice(&rx);
        f.extend_from_slice(&tx);
        f.extend_from_slice(&rx); // address 3 (BSSID)
        f.extend_from_slice(&[0, 0]); // sequence control: fragment 0, sequence 0
        if qos {
            f.extend_from_slice(&[0, 0]);
        }
        f.resize(f.len() + body + FCS, 0xaa);
        f
    }

    /// A non-QoS data frame.
    pub(crate) fn data_frame(tx: [u8; 6], rx: [u8; 6], body: usize, retry: bool) -> Vec<u8> {
        data_frame_qos(tx, rx, body, retry, false)
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::data_frame_qos as data_frame;
    use super::*;

    #[test]
    fn data_frames() {
        let f = data_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 9], 1508, true, false);
        let h = parse(&f, f.len(), true).unwrap();
        assert_eq!(h.kind, FrameType::Data);
        assert_eq!(h.seq, Some(0));
        assert_eq!(h.tx, Some(Mac([2, 0, 0, 0, 0, 1])));
        assert_eq!(h.rx.to_string(), "02:00:00:00:00:09");
        assert!(h.retry);
        assert_eq!((h.header_len, h.body_len, h.payload()), (24, 1508, 1500));
        let q = data_frame([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 9], 100, false, true);
        let h = parse(&q[..30], q.len(), true).unwrap(); // a truncated capture: header only
        assert_eq!((h.header_len, h.payload(), h.retry), (26, 92, false));
        // Without FCS the last four bytes are body.
        assert_eq!(parse(&q, q.len(), false).unwrap().payload(), 96);
    }

    #[test]
    fn control_and_bad_frames() {
        // ACK: frame control 0xd4 0x00, duration, RA.
        let ack = [0xd4, 0x00, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0];
        let h = parse(&ack, ack.len(), true).unwrap();
        assert_eq!((h.kind, h.tx, h.payload()), (FrameType::Control, None, 0));
        assert!(parse(&ack[..8], 8, true).is_none());
        assert!(parse(&[0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0], 10, false).is_none()); // version 1
    }

    #[test]
    fn mac_text() {
        let m: Mac = "00:1A:2b:3c:4d:5e".parse().unwrap();
        assert_eq!(m.to_string(), "00:1a:2b:3c:4d:5e");
        assert!("00:11:22".parse::<Mac>().is_err());
        assert!("ff:ff:ff:ff:ff:ff".parse::<Mac>().unwrap().is_group());
    }
}
