//! # rdtp-harness — a virtual-time network for the rdtp cores
//!
//! Runs real [`rdtp_proto::receiver::Receiver`]s, [`rdtp_proto::router::Router`]s and
//! [`rdtp_proto::server::Server`]s over emulated links: [`Net`] is any topology of nodes and
//! one-way links (rate, drop-tail buffer, delay, random loss, reordering, duplication —
//! [`LinkConfig`]), with datagrams routed hop by hop; [`Sim`] is the dumbbell most tests
//! need (one bottleneck, one server, [`PathConfig`]), built on it. Time is virtual and all
//! randomness is seeded, so a run is deterministic and takes a fraction of its simulated
//! duration. Tests use it to check byte-exact delivery under impairments, through routers,
//! and the controllers' steady-state behaviour.
//!
//! It models the network only; it contains no protocol logic of its own. For WiFi and
//! large topologies rdtp runs inside ns-3 instead.

// Safe Rust only: the C ABI (rdtp-ffi) and the runtimes hold every `unsafe` block of rdtp.
#![forbid(unsafe_code)]

pub mod link;
pub mod metrics;
pub mod net;
pub mod path;
pub mod sim;
pub mod suite;

pub use link::{LinkConfig, LinkStats};
pub use metrics::{DelayStats, Series, jain_index};
pub use net::{FlowSpec, FlowState, Net, NodeIx, NodeKind};
pub use path::PathConfig;
pub use sim::Sim;

use core::time::Duration;

use rdtp_proto::cc::CcConfig;
use rdtp_proto::receiver::ReceiverConfig;
use rdtp_proto::server::PatternCatalog;

/// Steady-state figures of one flow alone on a path.
#[derive(Clone, Debug)]
pub struct SingleFlowReport {
    pub controller: String,
    /// Bottleneck departures over the window / capacity.
    pub utilisation: f64,
    /// Flow goodput over the window, bit/s: payload delivered *in order* to the application.
    /// A unit that never arrives holds back everything after it, so this can be 0 while the
    /// bottleneck is full (`bbr-cd` re-requests lost units only after every new unit it may
    /// ask for, S1 §IV-D: see `bytes_received` against `bytes_read`).
    pub goodput_bps: f64,
    /// Distinct payload bytes that arrived over the whole run, in any order.
    pub bytes_received: u64,
    /// Payload bytes the application read (in order) over the whole run.
    pub bytes_read: u64,
    /// Mean queueing delay at the bottleneck over the window.
    pub mean_queue_delay: Duration,
    /// 99th percentile of that delay.
    pub p99_queue_delay: Duration,
    /// Mean RTT sample over the window.
    pub mean_rtt: Duration,
    /// Propagation RTT plus one unit's serialisation at the bottleneck.
    pub rtprop: Duration,
    pub units_requested: u64,
    pub units_rerequested: u64,
    /// Units declared lost over the whole run.
    pub units_lost: u64,
    /// Whether the controller asks for new units before lost ones (S1 §IV-D).
    pub new_units_first: bool,
    pub timeouts: u64,
    pub queue_drops: u64,
    pub byte_exact: bool,
}

/// Run one flow with controller `cc` for `duration` on `path`, measuring over
/// `[warmup, duration)`. The object is large enough never to run out.
pub fn single_flow(
    path: PathConfig,
    cc: CcConfig,
    duration: Duration,
    warmup: Duration,
    seed: u64,
) -> SingleFlowReport {
    single_flow_with(path, ReceiverConfig { cc, seed, ..ReceiverConfig::default() }, duration, warmup)
}

/// [`single_flow`] with a whole receiver configuration (e.g. ndnget's RTO `k = 8`); the
/// object's pattern seed is `cfg.seed`.
pub fn single_flow_with(
    path: PathConfig,
    cfg: ReceiverConfig,
    duration: Duration,
    warmup: Duration,
) -> SingleFlowReport {
    let seed = cfg.seed;
    let unit = cfg.unit;
    // 20 % more than the path can carry in `duration`.
    let size = (path.rate_bps / 8.0 * duration.as_secs_f64() * 1.2) as u64;
    let catalog = PatternCatalog::new([("object".to_string(), size, seed)]);
    let mut sim = Sim::new(path.clone(), catalog, Duration::from_millis(10));
    let id = sim.add_flow(FlowSpec::new("object", cfg));
    sim.run(duration);
    let f = &sim.flows[id];
    let stats = f.stats().unwrap_or_default();
    let capacity = path.rate_bps / 8.0 * (duration - warmup).as_secs_f64();
    SingleFlowReport {
        controller: f.rx.as_ref().map_or("?", |r| r.controller().name()).to_string(),
        utilisation: sim.bottleneck().departed.bytes_between(warmup, duration) as f64 / capacity,
        goodput_bps: f.goodput_bps(warmup, duration),
        bytes_received: stats.bytes_received,
        bytes_read: f.read_bytes,
        mean_queue_delay: sim.bottleneck().queue_delay.mean_between(warmup, duration).unwrap_or_default(),
        p99_queue_delay: sim.bottleneck().queue_delay.quantile_between(warmup, duration, 0.99).unwrap_or_default(),
        mean_rtt: f.rtt.mean_between(warmup, duration).unwrap_or_default(),
        rtprop: path.rtprop(unit),
        units_requested: stats.units_requested,
        units_rerequested: stats.units_rerequested,
        units_lost: stats.units_lost,
        new_units_first: f.rx.as_ref().is_some_and(|r| r.controller().new_units_first()),
        timeouts: stats.timeouts,
        queue_drops: sim.bottleneck().queue_drops,
        byte_exact: f.mismatch_at.is_none() && f.error.is_none(),
    }
}
