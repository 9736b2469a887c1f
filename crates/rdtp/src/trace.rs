//! Where a fetch's trace events go: ndnget-format TSV logs (`--log-cwnd`, `--log-rtt`),
//! ndnget-style verbose lines on stderr, and an optional callback.
//!
//! * cwnd log: header `time\tcwndsize`, then seconds since the start of the fetch and the
//!   window in units, one line per change;
//! * RTT log: header `segment\trtt\trttvar\tsrtt\trto`, then the unit index and the four
//!   values in milliseconds, one line per RTT sample.

use std::io::{self, Write};

use rdtp_proto::Time;
use rdtp_proto::receiver::{Event, SourceStats};

/// A callback for every event of a fetch (runs on the driver thread; keep it short).
pub type EventCallback = Box<dyn FnMut(&Event) + Send>;

/// Destinations for trace events. Empty by default.
#[derive(Default)]
pub struct TraceSinks {
    cwnd: Option<Box<dyn Write + Send>>,
    rtt: Option<Box<dyn Write + Send>>,
    verbose: Option<Box<dyn Write + Send>>,
    callback: Option<EventCallback>,
    origin: Time,
    /// RTO of the latest RTT sample, for the verbose "Received" line.
    last_rto: std::time::Duration,
}

impl std::fmt::Debug for TraceSinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceSinks")
            .field("cwnd", &self.cwnd.is_some())
            .field("rtt", &self.rtt.is_some())
            .field("verbose", &self.verbose.is_some())
            .field("callback", &self.callback.is_some())
            .finish()
    }
}

impl TraceSinks {
    /// Write the cwnd log (ndnget `--log-cwnd` format) to `w` (buffered here).
    pub fn set_cwnd_log(&mut self, w: impl Write + Send + 'static) {
        self.cwnd = Some(Box::new(io::BufWriter::new(w)));
    }
    /// Write the RTT log (ndnget `--log-rtt` format) to `w` (buffered here).
    pub fn set_rtt_log(&mut self, w: impl Write + Send + 'static) {
        self.rtt = Some(Box::new(io::BufWriter::new(w)));
    }
    /// Write ndnget-style verbose lines to `w`.
    pub fn set_verbose(&mut self, w: impl Write + Send + 'static) {
        self.verbose = Some(Box::new(w));
    }
    /// Call `f` for every event.
    pub fn set_callback(&mut self, f: EventCallback) {
        self.callback = Some(f);
    }

    /// Whether the receiver must emit RTT and congestion trace events for these sinks.
    pub fn needs_trace(&self) -> bool {
        self.cwnd.is_some() || self.rtt.is_some() || self.verbose.is_some() || self.callback.is_some()
    }

    /// Write the TSV headers; times are reported relative to `origin`.
    pub fn start(&mut self, origin: Time) -> io::Result<()> {
        self.origin = origin;
        if let Some(w) = self.cwnd.as_mut() {
            w.write_all(b"time\tcwndsize\n")?;
        }
        if let Some(w) = self.rtt.as_mut() {
            w.write_all(b"segment\trtt\trttvar\tsrtt\trto\n")?;
        }
        Ok(())
    }

    /// Record one event.
    pub fn on_event(&mut self, ev: &Event) -> io::Result<()> {
        if let Some(cb) = self.callback.as_mut() {
            cb(ev);
        }
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        match ev {
            Event::Congestion(s) => {
                if let Some(w) = self.cwnd.as_mut() {
                    writeln!(w, "{:.6}\t{}", (s.time - self.origin).as_secs_f64(), s.cwnd)?;
                }
            }
            Event::RttSample(r) => {
                if let Some(w) = self.rtt.as_mut() {
                    writeln!(
                        w,
                        "{}\t{:.3}\t{:.3}\t{:.3}\t{:.3}",
                        r.unit,
                        ms(r.rtt),
                        ms(r.rttvar),
                        ms(r.srtt),
                        ms(r.rto)
                    )?;
                }
                self.last_rto = r.rto;
            }
            Event::Received { unit, source, rtt, .. } => {
                if let Some(w) = self.verbose.as_mut() {
                    let from = SourceStats { node: source.node, cached: source.cached, ..SourceStats::default() };
                    write!(w, "Received segment #{unit} from {}", from.label())?;
                    if source.hops > 0 {
                        write!(w, " ({} hops)", source.hops)?;
                    }
                    match rtt {
                        Some(r) => writeln!(w, ", rtt={:.3}ms, rto={:.3}ms", ms(*r), ms(self.last_rto))?,
                        None => writeln!(w)?,
                    }
                }
            }
            Event::Resolved { eid, size, name } => {
                if let Some(w) = self.verbose.as_mut() {
                    let shown = if name.is_empty() { "(unnamed)" } else { name.as_str() };
                    writeln!(w, "Resolved {shown}: EID {eid}, {size} bytes")?;
                }
            }
            Event::Requested { units, retransmission, .. } => {
                if let Some(w) = self.verbose.as_mut() {
                    let verb = if *retransmission { "Retransmitting" } else { "Requesting" };
                    for u in units {
                        writeln!(w, "{verb} segment #{u}")?;
                    }
                }
            }
            Event::Finished | Event::Failed(_) => {}
        }
        Ok(())
    }

    /// Flush the logs.
    pub fn finish(&mut self) -> io::Result<()> {
        for w in [self.cwnd.as_mut(), self.rtt.as_mut(), self.verbose.as_mut()].into_iter().flatten() {
            w.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdtp_proto::receiver::{CcSnapshot, RttSampleEvent};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn ndnget_log_formats() {
        let (cwnd, rtt) = (Shared::default(), Shared::default());
        let mut t = TraceSinks::default();
        assert!(!t.needs_trace());
        t.set_cwnd_log(cwnd.clone());
        t.set_rtt_log(rtt.clone());
        assert!(t.needs_trace());
        t.start(Time::from_millis(1000)).unwrap();
        t.on_event(&Event::Congestion(CcSnapshot {
            time: Time::from_millis(1500),
            cwnd: 42,
            pacing_rate: None,
            aggregation: 1,
            inflight: 0,
            state: "startup",
        }))
        .unwrap();
        t.on_event(&Event::RttSample(RttSampleEvent {
            time: Time::from_millis(1600),
            unit: 7,
            rtt: Duration::from_micros(1500),
            srtt: Duration::from_millis(2),
            rttvar: Duration::from_micros(250),
            rto: Duration::from_millis(200),
        }))
        .unwrap();
        t.finish().unwrap();
        assert_eq!(String::from_utf8(cwnd.0.lock().unwrap().clone()).unwrap(), "time\tcwndsize\n0.500000\t42\n");
        assert_eq!(
            String::from_utf8(rtt.0.lock().unwrap().clone()).unwrap(),
            "segment\trtt\trttvar\tsrtt\trto\n7\t1.500\t0.250\t2.000\t200.000\n"
        );
    }
}
