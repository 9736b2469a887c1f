//! The discrete-event simulation: receivers ↔ one bottleneck ↔ one stateless server.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use core::time::Duration;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg32;
use rdtp_proto::receiver::{Event, FetchError, MAX_DATAGRAM, Receiver, ReceiverConfig, Stats, Target};
use rdtp_proto::server::{Catalog, Server};
use rdtp_proto::{Eid, Time};

use crate::metrics::{DelayStats, Series};
use crate::path::PathConfig;

/// A flow to start.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    /// When the flow starts.
    pub start: Duration,
    /// What it fetches.
    pub target: Target,
    pub config: ReceiverConfig,
    /// Stop the flow (abandon the fetch) at this time, if it has not finished.
    pub stop: Option<Duration>,
}

impl FlowSpec {
    /// Fetch `name` from time zero with `config` (trace events on).
    pub fn new(name: &str, config: ReceiverConfig) -> Self {
        FlowSpec { start: Duration::ZERO, target: Target::Name(name.to_string()), config, stop: None }
    }
}

/// What happened to one flow.
#[derive(Debug)]
pub struct FlowState {
    pub spec: FlowSpec,
    /// The receiver (present once started).
    pub rx: Option<Receiver>,
    /// Bytes the application read, binned by time.
    pub goodput: Series,
    /// RTT samples the receiver took.
    pub rtt: DelayStats,
    /// `(time, cwnd units, pacing rate bytes/s, state)` at every controller change.
    pub cc_trace: Vec<(Time, u64, Option<f64>, &'static str)>,
    /// Bytes read by the application so far.
    pub read_bytes: u64,
    /// First offset whose byte differed from the catalogue's content, if any.
    pub mismatch_at: Option<u64>,
    pub finished_at: Option<Time>,
    pub error: Option<FetchError>,
    pub stopped: bool,
    eid: Option<Eid>,
    timer: Option<Time>,
    /// Consecutive wake-ups at the same instant without progress (a receiver bug).
    spins: u32,
}

impl FlowState {
    pub fn stats(&self) -> Option<Stats> {
        self.rx.as_ref().map(Receiver::stats)
    }
    /// Goodput in bit/s over `[from, to)`.
    pub fn goodput_bps(&self, from: Duration, to: Duration) -> f64 {
        self.goodput.bytes_between(from, to) as f64 * 8.0 / (to - from).as_secs_f64()
    }
    /// Finished with every byte identical to the catalogue's content.
    pub fn is_byte_exact(&self) -> bool {
        self.finished_at.is_some()
            && self.mismatch_at.is_none()
            && Some(self.read_bytes) == self.rx.as_ref().and_then(|r| r.size())
    }
}

/// Bottleneck counters.
#[derive(Debug)]
pub struct LinkStats {
    /// Bytes (with headers) that left the bottleneck, binned.
    pub departed: Series,
    /// Queueing delay of every datagram that entered the queue.
    pub queue_delay: DelayStats,
    /// Datagrams dropped by the full buffer.
    pub queue_drops: u64,
    /// Datagrams dropped by random loss.
    pub random_drops: u64,
    pub requests_lost: u64,
    pub reordered: u64,
    pub duplicated: u64,
}

#[derive(Debug)]
enum Ev {
    ToServer { flow: usize, data: Vec<u8> },
    ToReceiver { flow: usize, data: Vec<u8> },
    Timer { flow: usize },
    Start { flow: usize },
    Stop { flow: usize },
    Rate { bps: f64 },
}

/// A simulation of flows over one path to one server.
pub struct Sim<C: Catalog> {
    path: PathConfig,
    catalog: C,
    server: Server,
    now: Time,
    queue: BinaryHeap<Reverse<(Time, u64)>>,
    events: std::collections::HashMap<u64, Ev>,
    next_id: u64,
    rng: Pcg32,
    rate_bps: f64,
    /// When the bottleneck finishes sending what is queued.
    link_free_at: Time,
    pub flows: Vec<FlowState>,
    pub link: LinkStats,
    buf: Vec<u8>,
    read_buf: Vec<u8>,
    check_buf: Vec<u8>,
}

impl<C: Catalog> Sim<C> {
    /// A simulation over `path` serving `catalog`; series use `bin`-long bins.
    pub fn new(path: PathConfig, catalog: C, bin: Duration) -> Self {
        let mut sim = Sim {
            rng: Pcg32::seed_from_u64(path.seed),
            rate_bps: path.rate_bps,
            catalog,
            server: Server::default(),
            now: Time::ZERO,
            queue: BinaryHeap::new(),
            events: Default::default(),
            next_id: 0,
            link_free_at: Time::ZERO,
            flows: Vec::new(),
            link: LinkStats {
                departed: Series::new(bin),
                queue_delay: DelayStats::default(),
                queue_drops: 0,
                random_drops: 0,
                requests_lost: 0,
                reordered: 0,
                duplicated: 0,
            },
            buf: vec![0u8; 65536],
            read_buf: vec![0u8; 1 << 16],
            check_buf: vec![0u8; 1 << 16],
            path,
        };
        for (at, bps) in sim.path.rate_schedule.clone() {
            sim.schedule(Time::ZERO + at, Ev::Rate { bps });
        }
        sim
    }

    pub fn now(&self) -> Time {
        self.now
    }
    pub fn path(&self) -> &PathConfig {
        &self.path
    }
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Add a flow; returns its index.
    pub fn add_flow(&mut self, spec: FlowSpec) -> usize {
        let id = self.flows.len();
        let bin = self.link.departed.bin();
        self.schedule(Time::ZERO + spec.start, Ev::Start { flow: id });
        if let Some(stop) = spec.stop {
            self.schedule(Time::ZERO + stop, Ev::Stop { flow: id });
        }
        self.flows.push(FlowState {
            spec,
            rx: None,
            goodput: Series::new(bin),
            rtt: DelayStats::default(),
            cc_trace: Vec::new(),
            read_bytes: 0,
            mismatch_at: None,
            finished_at: None,
            error: None,
            stopped: false,
            eid: None,
            timer: None,
            spins: 0,
        });
        id
    }

    fn schedule(&mut self, at: Time, ev: Ev) {
        let id = self.next_id;
        self.next_id += 1;
        self.events.insert(id, ev);
        self.queue.push(Reverse((at, id)));
    }

    /// Whether every flow has finished, failed or stopped.
    pub fn all_done(&self) -> bool {
        self.flows.iter().all(|f| f.finished_at.is_some() || f.error.is_some() || f.stopped)
    }

    /// Run until `until` (simulated time since start) or until all flows are done.
    pub fn run(&mut self, until: Duration) {
        let end = Time::ZERO + until;
        while let Some(Reverse((at, id))) = self.queue.peek().copied() {
            if at > end || self.all_done() {
                break;
            }
            self.queue.pop();
            let ev = self.events.remove(&id).expect("event stored");
            self.now = self.now.max(at);
            self.dispatch(ev);
        }
        if !self.all_done() {
            self.now = self.now.max(end);
        }
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Rate { bps } => self.rate_bps = bps,
            Ev::Start { flow } => {
                let f = &mut self.flows[flow];
                let mut cfg = f.spec.config.clone();
                cfg.trace = true;
                f.rx = Some(Receiver::new(cfg, f.spec.target.clone(), self.now));
                self.service(flow);
            }
            Ev::Stop { flow } => {
                let f = &mut self.flows[flow];
                if f.finished_at.is_none() && f.error.is_none() {
                    f.stopped = true;
                    f.timer = None;
                }
            }
            Ev::ToServer { flow, data } => {
                let mut replies = Vec::new();
                let mut reply = self.server.handle(&self.catalog, &data);
                while let Some(n) = reply.next_datagram(&mut self.buf) {
                    replies.push(self.buf[..n].to_vec());
                }
                for r in replies {
                    self.enqueue_data(flow, r);
                }
            }
            Ev::ToReceiver { flow, data } => {
                let f = &mut self.flows[flow];
                if f.stopped {
                    return;
                }
                if let Some(rx) = f.rx.as_mut() {
                    rx.handle_datagram(self.now, &data);
                }
                self.service(flow);
            }
            Ev::Timer { flow } => {
                let f = &mut self.flows[flow];
                if f.stopped || f.timer != Some(self.now) {
                    return; // superseded
                }
                f.timer = None;
                if let Some(rx) = f.rx.as_mut() {
                    rx.handle_timeout(self.now);
                }
                self.service(flow);
            }
        }
    }

    /// A datagram from the server enters the bottleneck.
    fn enqueue_data(&mut self, flow: usize, data: Vec<u8>) {
        let size = data.len() as u64 + u64::from(self.path.header_overhead);
        let backlog_secs = (self.link_free_at - self.now).as_secs_f64();
        let backlog = (backlog_secs * self.rate_bps / 8.0) as u64;
        if backlog > 0 && backlog + size > self.path.queue_bytes {
            self.link.queue_drops += 1;
            return;
        }
        let start = self.link_free_at.max(self.now);
        let done = start + Duration::from_secs_f64(size as f64 * 8.0 / self.rate_bps);
        self.link_free_at = done;
        self.link.queue_delay.push(self.now, start - self.now);
        self.link.departed.add(done, size);
        if self.chance(self.path.data_loss) {
            self.link.random_drops += 1;
            return;
        }
        let mut at = done + self.path.one_way_delay;
        if self.chance(self.path.reorder) {
            self.link.reordered += 1;
            at += self.path.reorder_delay;
        }
        if self.chance(self.path.duplicate) {
            self.link.duplicated += 1;
            self.schedule(at + Duration::from_micros(1), Ev::ToReceiver { flow, data: data.clone() });
        }
        self.schedule(at, Ev::ToReceiver { flow, data });
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && (f64::from(self.rng.next_u32()) / f64::from(u32::MAX)) < p
    }

    /// Let flow `id` send what is due, take its events and bytes, and set its timer.
    fn service(&mut self, id: usize) {
        let now = self.now;
        let mut out = Vec::new();
        {
            let f = &mut self.flows[id];
            let Some(rx) = f.rx.as_mut() else { return };
            let mut buf = [0u8; MAX_DATAGRAM];
            while let Some(n) = rx.poll_transmit(now, &mut buf) {
                out.push(buf[..n].to_vec());
            }
            while let Some(ev) = rx.poll_event() {
                match ev {
                    Event::Resolved { eid, .. } => f.eid = Some(eid),
                    Event::RttSample(s) => f.rtt.push(s.time, s.rtt),
                    Event::Congestion(c) => f.cc_trace.push((c.time, c.cwnd, c.pacing_rate, c.state)),
                    Event::Finished => f.finished_at = Some(now),
                    Event::Failed(e) => f.error = Some(e),
                    Event::Requested { .. } | Event::Received { .. } => {}
                }
            }
        }
        for data in out {
            if self.chance(self.path.request_loss) {
                self.link.requests_lost += 1;
                continue;
            }
            self.schedule(now + self.path.one_way_delay, Ev::ToServer { flow: id, data });
        }
        self.drain_reads(id);
        let f = &mut self.flows[id];
        let Some(rx) = f.rx.as_ref() else { return };
        match rx.poll_timeout() {
            Some(t) if f.timer != Some(t.max(now)) => {
                let at = if t <= now {
                    f.spins += 1;
                    assert!(f.spins < 1000, "flow {id}: receiver keeps asking to be woken at {now:?} without progress");
                    now
                } else {
                    f.spins = 0;
                    t
                };
                f.timer = Some(at);
                self.schedule(at, Ev::Timer { flow: id });
            }
            Some(_) => {}
            None => f.timer = None,
        }
    }

    /// Read everything the receiver has in order and compare it with the catalogue.
    fn drain_reads(&mut self, id: usize) {
        let now = self.now;
        let f = &mut self.flows[id];
        let Some(rx) = f.rx.as_mut() else { return };
        loop {
            let n = rx.read(&mut self.read_buf);
            if n == 0 {
                break;
            }
            if f.mismatch_at.is_none() {
                let eid = f.eid.unwrap_or_default();
                let check = &mut self.check_buf[..n];
                let same = self.catalog.read_at(&eid, f.read_bytes, check).is_ok() && *check == self.read_buf[..n];
                if !same {
                    f.mismatch_at = Some(f.read_bytes);
                }
            }
            f.read_bytes += n as u64;
            f.goodput.add(now, n as u64);
        }
    }
}
