//! Observation sources for the core's passive WiFi estimator (seed 002,
//! `rdtp_proto::wifi`): radiotap 802.11 captures, read from a pcap file with the `pcap-file`
//! crate and its radiotap header with the `radiotap` crate, or taken live from a monitor
//! interface with libpcap (`pcap` crate, cargo feature `live`). The 802.11 header itself is
//! read by the core, as for ns-3's monitor trace, so both sources count frames the same way.
//!
//! Rates come from radiotap's legacy Rate field (802.11a/b/g); frames without one (HT/VHT
//! MCS) are counted as skipped, not guessed.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use pcap_file::DataLink;
use pcap_file::pcap::PcapReader;
use radiotap::Radiotap;
use rdtp_proto::Time;
use rdtp_proto::wifi::{Estimator, EstimatorConfig, Model, Observation, Snapshot};

use crate::error::{Error, Result};

/// What one captured packet was.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Captured {
    /// A data frame the estimator takes.
    Frame(Observation),
    /// A management, control or null frame (or one whose header is cut short).
    NotData,
    /// No legacy Rate field in its radiotap header.
    NoRate,
    /// The receiver flagged a bad FCS (not delivered: not counted).
    BadFcs,
    /// Not a valid radiotap header.
    Malformed,
}

/// One radiotap packet captured at `time`: `data` as captured, `orig_len` its length on the
/// wire (a capture may be truncated; lengths count from the original).
pub fn parse_radiotap(time: Time, data: &[u8], orig_len: usize) -> Captured {
    let Ok((rt, mpdu)) = Radiotap::parse(data) else { return Captured::Malformed };
    let header_len = data.len() - mpdu.len();
    let (fcs, bad_fcs) = rt.flags.map_or((false, false), |f| (f.fcs, f.bad_fcs));
    if bad_fcs {
        return Captured::BadFcs;
    }
    let Some(rate) = rt.rate.filter(|r| r.value > 0.0) else { return Captured::NoRate };
    let len = orig_len.saturating_sub(header_len);
    match Observation::from_mpdu(time, mpdu, len, fcs, f64::from(rate.value) * 1e6) {
        Some(o) => Captured::Frame(o),
        None => Captured::NotData,
    }
}

/// Counts of what a capture held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CaptureCounts {
    /// Packets read.
    pub packets: u64,
    /// Data frames the estimator took.
    pub data_frames: u64,
    /// Management, control and null frames.
    pub not_data: u64,
    /// Frames without a legacy rate (HT/VHT).
    pub no_rate: u64,
    /// Frames with a bad FCS.
    pub bad_fcs: u64,
    /// Packets that were not radiotap.
    pub malformed: u64,
}

impl CaptureCounts {
    fn add(&mut self, c: &Captured) {
        self.packets += 1;
        match c {
            Captured::Frame(_) => self.data_frames += 1,
            Captured::NotData => self.not_data += 1,
            Captured::NoRate => self.no_rate += 1,
            Captured::BadFcs => self.bad_fcs += 1,
            Captured::Malformed => self.malformed += 1,
        }
    }
}

/// Feed every packet of a radiotap pcap stream to `on_packet` (time, what it was); returns the
/// counts and the time of the last packet.
pub fn read_pcap(input: impl Read, mut on_packet: impl FnMut(&Captured)) -> Result<(CaptureCounts, Option<Time>)> {
    let bad = |e: pcap_file::PcapError| Error::Usage(format!("not a readable pcap capture: {e}"));
    let mut reader = PcapReader::new(input).map_err(bad)?;
    let link = reader.header().datalink;
    if link != DataLink::IEEE802_11_RADIOTAP {
        return Err(Error::Usage(format!(
            "the capture's link type is {link:?}; `rdtp wifi estimate` reads 802.11 with radiotap headers \
             (monitor mode, DLT 127)"
        )));
    }
    let mut counts = CaptureCounts::default();
    let mut last = None;
    while let Some(packet) = reader.next_packet() {
        let packet = packet.map_err(bad)?;
        let time = Time::from_nanos(u64::try_from(packet.timestamp.as_nanos()).unwrap_or(u64::MAX));
        let c = parse_radiotap(time, &packet.data, packet.orig_len as usize);
        counts.add(&c);
        on_packet(&c);
        last = Some(time);
    }
    Ok((counts, last))
}

/// Snapshots at each multiple of an interval after the first data frame, taken as frames
/// go by (shared by files and live captures).
struct Periodic<F: FnMut(&Snapshot, Duration)> {
    interval: Option<Duration>,
    first: Option<Time>,
    next: Option<Time>,
    every: F,
}

impl<F: FnMut(&Snapshot, Duration)> Periodic<F> {
    fn new(interval: Option<Duration>, every: F) -> Self {
        Periodic { interval, first: None, next: None, every }
    }

    /// Feed one captured packet: the snapshots due before it, then the frame itself.
    fn feed(&mut self, est: &mut Estimator, c: &Captured) {
        let Captured::Frame(o) = c else { return };
        let t0 = *self.first.get_or_insert(o.time);
        if let Some(iv) = self.interval {
            let mut due = *self.next.get_or_insert(o.time + iv);
            while o.time >= due {
                (self.every)(&est.snapshot(due), due - t0);
                due += iv;
            }
            self.next = Some(due);
        }
        est.observe(*o);
    }
}

/// A capture run through an estimator; the snapshot is at its last packet (live: at the
/// end of listening).
pub struct FileEstimate {
    /// What the capture held.
    pub counts: CaptureCounts,
    /// The medium over the window ending at the last packet.
    pub snapshot: Snapshot,
}

/// Estimate the medium from the radiotap pcap at `path`, calling `every` with a snapshot at
/// each multiple of `interval` after the first data frame (and that multiple), and returning
/// the one at the last packet.
pub fn estimate_file(
    path: &Path,
    cfg: EstimatorConfig,
    interval: Option<Duration>,
    every: impl FnMut(&Snapshot, Duration),
) -> Result<FileEstimate> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
    let mut est = Estimator::new(cfg);
    let mut periodic = Periodic::new(interval, every);
    let (counts, last) = read_pcap(std::io::BufReader::new(file), |c| periodic.feed(&mut est, c))?;
    Ok(FileEstimate { counts, snapshot: est.snapshot(last.unwrap_or(Time::ZERO)) })
}

/// The rate informed start uses, bit/s: the model's prediction for a newcomer at
/// `newcomer_phy_bps` (default: the stations' mean rate), else the N + 1 rule; `None` when
/// the medium gave no estimate (S2 §II: with nobody overheard there is nothing to be
/// informed by, and the controller keeps its normal start).
pub fn informed_rate(s: &Snapshot, model: &Model, newcomer_phy_bps: Option<f64>) -> Option<f64> {
    let n1 = s.n_plus_one();
    n1?;
    s.features(newcomer_phy_bps, None).map(|f| model.predict(&f)).filter(|r| *r > 0.0).or(n1)
}

/// Live capture through libpcap (cargo feature `live`): a monitor interface's radiotap
/// frames, read by the same [`parse_radiotap`] as capture files.
#[cfg(feature = "live")]
pub mod live {
    use super::*;

    /// Feed every packet of an activated libpcap capture (a live interface, or a file opened
    /// with `pcap::Capture::from_file`) to `on_packet` until `stop()` or the file's end.
    /// Returns the counts and the last packet's time (libpcap's microsecond timestamps).
    pub fn read<T: pcap::Activated + ?Sized>(
        cap: &mut pcap::Capture<T>,
        mut stop: impl FnMut() -> bool,
        mut on_packet: impl FnMut(&Captured),
    ) -> Result<(CaptureCounts, Option<Time>)> {
        if cap.get_datalink() != pcap::Linktype::IEEE802_11_RADIOTAP {
            return Err(Error::Usage(format!(
                "link type {:?}: want 802.11 with radiotap headers (monitor mode, DLT 127)",
                cap.get_datalink()
            )));
        }
        let mut counts = CaptureCounts::default();
        let mut last = None;
        while !stop() {
            match cap.next_packet() {
                Ok(p) => {
                    let (sec, usec) = (p.header.ts.tv_sec, p.header.ts.tv_usec);
                    let nanos =
                        u64::try_from(sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(usec).unwrap_or(0) * 1000;
                    let time = Time::from_nanos(nanos);
                    let c = parse_radiotap(time, p.data, p.header.len as usize);
                    counts.add(&c);
                    on_packet(&c);
                    last = Some(time);
                }
                Err(pcap::Error::TimeoutExpired) => {}
                Err(pcap::Error::NoMorePackets) => break,
                Err(e) => return Err(Error::Runtime(format!("capture: {e}"))),
            }
        }
        Ok((counts, last))
    }

    /// Open `iface` for capture: radiotap headers (switching the link type if the interface
    /// offers it among others), the first 256 bytes of each frame (radiotap and MAC headers;
    /// lengths are read from the original), delivered at once.
    pub fn open(iface: &str) -> Result<pcap::Capture<pcap::Active>> {
        let bad = |e: pcap::Error| Error::Runtime(format!("live capture on {iface}: {e}"));
        let mut cap = pcap::Capture::from_device(iface)
            .map_err(bad)?
            .promisc(true)
            .snaplen(256)
            .immediate_mode(true)
            .timeout(100)
            .open()
            .map_err(bad)?;
        if cap.get_datalink() != pcap::Linktype::IEEE802_11_RADIOTAP {
            let offered = cap.list_datalinks().unwrap_or_default();
            if offered.contains(&pcap::Linktype::IEEE802_11_RADIOTAP) {
                cap.set_datalink(pcap::Linktype::IEEE802_11_RADIOTAP).map_err(bad)?;
            } else {
                return Err(Error::Usage(format!(
                    "{iface} is not a monitor interface (link types {offered:?}, no 802.11 radiotap); \
                     make one with e.g. `iw dev wlan0 interface add mon0 type monitor && ip link set mon0 up`"
                )));
            }
        }
        Ok(cap)
    }
}

/// Listen on the monitor interface `iface` for `duration`, feeding the estimator (and
/// `every`, at each multiple of `interval` after the first data frame); the snapshot is at
/// the end of listening.
#[cfg(feature = "live")]
pub fn estimate_live(
    iface: &str,
    duration: Duration,
    cfg: EstimatorConfig,
    interval: Option<Duration>,
    every: impl FnMut(&Snapshot, Duration),
) -> Result<FileEstimate> {
    let mut cap = live::open(iface)?;
    let mut est = Estimator::new(cfg);
    let mut periodic = Periodic::new(interval, every);
    let start = std::time::Instant::now();
    let (counts, last) = live::read(&mut cap, || start.elapsed() >= duration, |c| periodic.feed(&mut est, c))?;
    // The window ends now: the packets' clock is the host's (wall) clock.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let now = Time::from_nanos(u64::try_from(now.as_nanos()).unwrap_or(u64::MAX)).max(last.unwrap_or(Time::ZERO));
    Ok(FileEstimate { counts, snapshot: est.snapshot(now) })
}

/// Without the `live` feature there is no libpcap: say how to get it.
#[cfg(not(feature = "live"))]
pub fn estimate_live(
    iface: &str,
    _duration: Duration,
    _cfg: EstimatorConfig,
    _interval: Option<Duration>,
    _every: impl FnMut(&Snapshot, Duration),
) -> Result<FileEstimate> {
    Err(Error::Usage(format!(
        "live capture on {iface} needs rdtp built with libpcap: apt-get install libpcap-dev, \
         then cargo build --release --features live"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A radiotap header with Flags (FCS present) and Rate, then `mpdu`.
    fn radiotap(rate_500k: u8, flags: u8, mpdu: &[u8]) -> Vec<u8> {
        // version 0, pad, length 10, present = Flags (bit 1) | Rate (bit 2).
        let mut v = vec![0, 0, 10, 0, 0b110, 0, 0, 0, flags, rate_500k];
        v.extend_from_slice(mpdu);
        v
    }

    fn data_mpdu(retry: bool) -> Vec<u8> {
        let mut f = vec![0x88, if retry { 0x09 } else { 0x01 }, 0, 0];
        f.extend_from_slice(&[2, 0, 0, 0, 0, 0xff, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0xff, 0, 0, 0, 0]);
        f.resize(26 + 8 + 1500 + 4, 0);
        f
    }

    #[test]
    fn radiotap_frames_become_observations() {
        let pkt = radiotap(108, 0x10, &data_mpdu(true));
        // Captured truncated to 60 bytes: lengths come from the original.
        let Captured::Frame(o) = parse_radiotap(Time::from_millis(1), &pkt[..60], pkt.len()) else { panic!() };
        assert_eq!((o.phy_rate_bps, o.bytes, o.payload, o.retry), (54e6, 1538, 1500, true));
        assert_eq!(parse_radiotap(Time::ZERO, &radiotap(108, 0x10 | 0x40, &data_mpdu(false)), 1548), Captured::BadFcs);
        assert_eq!(parse_radiotap(Time::ZERO, &[0, 0, 10, 0, 0, 0, 0, 0], 8), Captured::Malformed);
        let no_rate = [0u8, 0, 8, 0, 0, 0, 0, 0, 0x88, 0x01];
        assert_eq!(parse_radiotap(Time::ZERO, &no_rate, 10), Captured::NoRate);
        let beacon = radiotap(2, 0x10, &[0x80, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 0xff]);
        assert_eq!(parse_radiotap(Time::ZERO, &beacon, beacon.len() + 100), Captured::NotData);
    }
}
