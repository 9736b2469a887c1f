//! Per-interval reports of a running fetch, as iperf3 and hICN's hiperf print them
//! (`rdtp fetch --interval SECS`).
//!
//! An [`IntervalMeter`] turns successive snapshots of the receiver's [`Stats`] and
//! controller state ([`CcSnapshot`]) into one [`IntervalReport`] per interval: the
//! differences of the cumulative counters, and the controller's state at the interval's
//! end. It holds no protocol logic and no clock; [`Reporter`] samples a fetch through a
//! [`FetchMonitor`] on the fetch's own clock, at `start + k · interval`, from a thread of its
//! own, and once more when the fetch ends.

use std::io::Write;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use rdtp_proto::Time;
use rdtp_proto::receiver::{CcSnapshot, Stats};
use serde::Serialize;

use crate::fetch::FetchMonitor;

/// What happened during one interval of a fetch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IntervalReport {
    /// Always `"interval"` (tells these JSON lines from the summary that follows them).
    pub event: &'static str,
    /// Start of the interval, seconds since the fetch started.
    pub start_s: f64,
    /// End of the interval, seconds since the fetch started.
    pub end_s: f64,
    /// Distinct payload bytes that arrived.
    pub bytes: u64,
    /// `bytes · 8 / (end_s − start_s)`.
    pub bits_per_second: f64,
    /// Units asked for again (iperf3's and hiperf's "Retr").
    pub retransmits: u64,
    /// Units declared lost.
    pub lost: u64,
    /// Retransmission-timer expiries.
    pub timeouts: u64,
    /// Nacks received.
    pub nacks: u64,
    /// RTT samples taken.
    pub rtt_samples: u64,
    /// Their mean, milliseconds (none if no sample).
    pub rtt_avg_ms: Option<f64>,
    /// Payload bytes served from routers' content stores.
    pub cached_bytes: u64,
    /// Congestion window at the end of the interval, in units.
    pub cwnd: u64,
    /// Units outstanding at the end of the interval.
    pub inflight: u64,
    /// Pacing rate at the end of the interval, bits per second (none if unpaced).
    pub pacing_bps: Option<f64>,
    /// Controller state at the end of the interval (`startup`, `probe_bw`, …).
    pub state: &'static str,
}

/// The counters an interval is the difference of.
#[derive(Clone, Copy, Debug, Default)]
struct Mark {
    time: Time,
    bytes: u64,
    retransmits: u64,
    lost: u64,
    timeouts: u64,
    nacks: u64,
    rtt_samples: u64,
    rtt_sum: Duration,
    cached_bytes: u64,
}

impl Mark {
    fn of(time: Time, s: &Stats) -> Mark {
        Mark {
            time,
            bytes: s.bytes_received,
            retransmits: s.units_rerequested,
            lost: s.units_lost,
            timeouts: s.timeouts,
            nacks: s.nacks,
            rtt_samples: s.rtt_samples,
            rtt_sum: s.rtt_sum,
            cached_bytes: s.sources.cached_bytes(),
        }
    }
}

/// Turns snapshots of a receiver into per-interval reports (differences of its counters).
#[derive(Clone, Debug)]
pub struct IntervalMeter {
    origin: Time,
    last: Mark,
}

impl IntervalMeter {
    /// Intervals are timed from `origin` (a fetch's [`Stats::started`]).
    pub fn new(origin: Time) -> Self {
        IntervalMeter { origin, last: Mark { time: origin, ..Mark::default() } }
    }

    /// The interval from the previous report (or the origin) to `now`, given the receiver's
    /// counters and controller state at `now`. A finished fetch's interval ends at its last
    /// unit ([`Stats::finished`]) if that is earlier. `None` if the interval would be empty:
    /// no time has passed since the previous report.
    pub fn report(&mut self, now: Time, stats: &Stats, cc: &CcSnapshot) -> Option<IntervalReport> {
        let end = stats.finished.filter(|&f| f < now).map_or(now, |f| f.max(self.last.time));
        let next = Mark::of(end, stats);
        if end <= self.last.time && next.bytes == self.last.bytes {
            return None;
        }
        let prev = std::mem::replace(&mut self.last, next);
        let secs = (end - prev.time).as_secs_f64();
        let bytes = next.bytes - prev.bytes;
        let rtt_samples = next.rtt_samples - prev.rtt_samples;
        let rtt_avg_ms = (rtt_samples > 0)
            .then(|| next.rtt_sum.saturating_sub(prev.rtt_sum).as_secs_f64() * 1e3 / rtt_samples as f64);
        Some(IntervalReport {
            event: "interval",
            start_s: (prev.time - self.origin).as_secs_f64(),
            end_s: (end - self.origin).as_secs_f64(),
            bytes,
            bits_per_second: if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 },
            retransmits: next.retransmits - prev.retransmits,
            lost: next.lost - prev.lost,
            timeouts: next.timeouts - prev.timeouts,
            nacks: next.nacks - prev.nacks,
            rtt_samples,
            rtt_avg_ms,
            cached_bytes: next.cached_bytes - prev.cached_bytes,
            cwnd: cc.cwnd,
            inflight: cc.inflight,
            pacing_bps: cc.pacing_rate.map(|r| r * 8.0),
            state: cc.state,
        })
    }
}

impl IntervalReport {
    /// The column header of [`IntervalReport::to_text`] lines (hiperf's columns, plus the
    /// share of the interval's bytes that came from routers' content stores).
    pub const HEADER: &'static str =
        "   Interval[ms]  Transfer[MB]  Bandwidth[Mbps]  Retr[unit]  Cwnd[unit]  AvgRtt[ms]  Cached[%]\n";

    /// One line under [`IntervalReport::HEADER`] (base-1000 units, as ndnget and iperf3).
    pub fn to_text(&self) -> String {
        let rtt = self.rtt_avg_ms.map_or_else(|| "-".to_string(), |r| format!("{r:.3}"));
        let interval = format!("{:.0}-{:.0}", self.start_s * 1e3, self.end_s * 1e3);
        format!(
            "{interval:>15}  {:>12.3}  {:>15.3}  {:>10}  {:>10}  {rtt:>10}  {:>9.1}\n",
            self.bytes as f64 / 1e6,
            self.bits_per_second / 1e6,
            self.retransmits,
            self.cwnd,
            crate::summary::percent(self.cached_bytes, self.bytes),
        )
    }

    /// One JSON line (no newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// How a [`Reporter`] prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// [`IntervalReport::HEADER`] once, then one [`IntervalReport::to_text`] line each.
    Text,
    /// One [`IntervalReport::to_json`] line each.
    Json,
}

/// Reports a running fetch every interval from a thread of its own; [`Reporter::finish`]
/// reports the last (partial) interval and waits for the thread.
pub struct Reporter {
    stop: Sender<()>,
    thread: JoinHandle<()>,
}

impl Reporter {
    /// Start reporting `monitor`'s fetch every `interval` to `out`.
    pub fn start(monitor: FetchMonitor, interval: Duration, format: Format, mut out: Box<dyn Write + Send>) -> Self {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let origin = monitor.sample().0.started;
            let mut meter = IntervalMeter::new(origin);
            if format == Format::Text {
                let _ = out.write_all(IntervalReport::HEADER.as_bytes());
            }
            let mut k = 1u32;
            loop {
                let due = origin + interval * k;
                let last = match stopped.recv_timeout(monitor.until(due)) {
                    Err(RecvTimeoutError::Timeout) => false,
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
                };
                let (stats, cc, now) = monitor.sample();
                // A late wake-up reports up to now and skips the boundaries it missed.
                while origin + interval * k <= now {
                    k += 1;
                }
                if let Some(r) = meter.report(now, &stats, &cc) {
                    let line = match format {
                        Format::Text => r.to_text(),
                        Format::Json => r.to_json() + "\n",
                    };
                    let _ = out.write_all(line.as_bytes()).and_then(|_| out.flush());
                }
                if last {
                    return;
                }
            }
        });
        Reporter { stop, thread }
    }

    /// Report the interval up to now and stop.
    pub fn finish(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdtp_proto::receiver::Sources;

    fn cc(cwnd: u64) -> CcSnapshot {
        CcSnapshot {
            time: Time::ZERO,
            cwnd,
            pacing_rate: Some(1.25e6),
            aggregation: 1,
            inflight: cwnd / 2,
            state: "probe_bw",
        }
    }

    fn stats(bytes: u64, rerequested: u64, samples: u64, rtt_sum_ms: u64) -> Stats {
        Stats {
            started: Time::from_millis(500),
            bytes_received: bytes,
            units_rerequested: rerequested,
            rtt_samples: samples,
            rtt_sum: Duration::from_millis(rtt_sum_ms),
            sources: Sources::default(),
            ..Stats::default()
        }
    }

    #[test]
    fn intervals_are_differences_of_the_counters() {
        let mut m = IntervalMeter::new(Time::from_millis(500));
        let a = m.report(Time::from_millis(1500), &stats(1_000_000, 2, 10, 200), &cc(40)).unwrap();
        assert_eq!((a.start_s, a.end_s), (0.0, 1.0));
        assert_eq!(a.bytes, 1_000_000);
        assert_eq!(a.bits_per_second, 8e6);
        assert_eq!(a.retransmits, 2);
        assert_eq!(a.rtt_avg_ms, Some(20.0));
        assert_eq!((a.cwnd, a.inflight, a.pacing_bps), (40, 20, Some(1e7)));
        let b = m.report(Time::from_millis(2000), &stats(1_250_000, 2, 15, 400), &cc(50)).unwrap();
        assert_eq!((b.start_s, b.end_s), (1.0, 1.5));
        assert_eq!(b.bytes, 250_000);
        assert_eq!(b.bits_per_second, 4e6);
        assert_eq!(b.retransmits, 0);
        assert_eq!(b.rtt_avg_ms, Some(40.0), "(400 − 200) ms over 5 samples");
        assert_eq!(b.cwnd, 50);
        // No RTT sample in an interval: no mean.
        let c = m.report(Time::from_millis(2100), &stats(1_250_000, 2, 15, 400), &cc(50)).unwrap();
        assert_eq!((c.bytes, c.rtt_avg_ms), (0, None));
    }

    #[test]
    fn the_last_interval_ends_at_the_last_unit() {
        let mut m = IntervalMeter::new(Time::from_millis(500));
        m.report(Time::from_millis(1500), &stats(1000, 0, 0, 0), &cc(4)).unwrap();
        let mut done = stats(3000, 0, 0, 0);
        done.finished = Some(Time::from_millis(1750));
        let r = m.report(Time::from_millis(1900), &done, &cc(4)).unwrap();
        assert_eq!((r.start_s, r.end_s, r.bytes), (1.0, 1.25, 2000));
        assert_eq!(r.bits_per_second, 64_000.0);
        // Nothing more after it.
        assert_eq!(m.report(Time::from_millis(2000), &done, &cc(4)), None);
    }

    #[test]
    fn text_lines_line_up_under_the_header() {
        let mut m = IntervalMeter::new(Time::ZERO);
        let r = m.report(Time::from_millis(1000), &stats(11_216_000, 3, 4, 86), &cc(64)).unwrap();
        let line = r.to_text();
        assert_eq!(
            line,
            "         0-1000        11.216           89.728           3          64      21.500        0.0\n"
        );
        assert_eq!(line.len(), IntervalReport::HEADER.len(), "{line}{}", IntervalReport::HEADER);
        let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(json["event"], "interval");
        assert_eq!(json["bytes"], 11_216_000);
        assert_eq!(json["retransmits"], 3);
        assert_eq!(json["rtt_avg_ms"], 21.5);
        assert_eq!(json["state"], "probe_bw");
    }
}
