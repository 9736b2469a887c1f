//! The dumbbell most experiments need: receivers ↔ one bottleneck ↔ one stateless server,
//! built on [`crate::Net`].
//!
//! The bottleneck is in the data direction (server → receivers): a drop-tail queue at the
//! path's rate, then the one-way delay and the data impairments. Requests cross the same
//! delay the other way, with their own loss, and no queue. Receivers attach to the far end
//! of the bottleneck with no delay of their own.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use core::time::Duration;

use rdtp_proto::server::{Catalog, Server, ServerConfig};
use rdtp_proto::token::ValidationConfig;

use crate::link::{LinkConfig, LinkStats};
use crate::net::{FlowSpec, Net, NodeIx};
use crate::path::PathConfig;

/// A simulation of flows over one path to one server. Dereferences to the [`Net`] it is
/// built on (`sim.flows`, `sim.run(..)`, `sim.now()`).
pub struct Sim<C: Catalog> {
    net: Net,
    path: PathConfig,
    server: NodeIx,
    switch: NodeIx,
    /// Links server → switch (the bottleneck) and switch → server (requests).
    down: usize,
    up: usize,
    _catalog: PhantomData<C>,
}

impl<C: Catalog + 'static> Sim<C> {
    /// A simulation over `path` serving `catalog`; series use `bin`-long bins.
    pub fn new(path: PathConfig, catalog: C, bin: Duration) -> Self {
        let mut net = Net::new(path.seed, bin);
        // No spoofers on a simulated path: the server answers without address validation,
        // so the first request is not delayed by a Retry round trip (seed 000 has none).
        let validation = ValidationConfig { enabled: false, ..ValidationConfig::default() };
        let server = net.add_server("origin", ServerConfig { validation, ..ServerConfig::default() }, catalog);
        let switch = net.add_switch("bottleneck");
        let down = net.link(
            server,
            switch,
            LinkConfig {
                rate_bps: Some(path.rate_bps),
                delay: path.one_way_delay,
                queue_bytes: path.queue_bytes,
                loss: path.data_loss,
                reorder: path.reorder,
                reorder_delay: path.reorder_delay,
                duplicate: path.duplicate,
                corrupt: 0.0,
                header_overhead: path.header_overhead,
            },
        );
        let up = net.link(
            switch,
            server,
            LinkConfig {
                loss: path.request_loss,
                header_overhead: path.header_overhead,
                ..LinkConfig::wire(path.one_way_delay)
            },
        );
        for &(at, bps) in &path.rate_schedule {
            net.schedule_rate(down, at, bps);
        }
        Sim { net, path, server, switch, down, up, _catalog: PhantomData }
    }

    pub fn path(&self) -> &PathConfig {
        &self.path
    }
    pub fn server(&self) -> &Server {
        self.net.server(self.server)
    }
    /// The bottleneck's counters.
    pub fn bottleneck(&self) -> &LinkStats {
        &self.net.links[self.down].stats
    }
    /// Requests lost on the way to the server.
    pub fn requests_lost(&self) -> u64 {
        self.net.links[self.up].stats.random_drops
    }

    /// Add a flow; returns its index in `flows`.
    pub fn add_flow(&mut self, spec: FlowSpec) -> usize {
        let f = self.net.add_flow(spec, self.server);
        let node = self.net.flows[f].node;
        self.net.link_both(self.switch, node, LinkConfig::wire(Duration::ZERO));
        f
    }
}

impl<C: Catalog> Deref for Sim<C> {
    type Target = Net;
    fn deref(&self) -> &Net {
        &self.net
    }
}

impl<C: Catalog> DerefMut for Sim<C> {
    fn deref_mut(&mut self) -> &mut Net {
        &mut self.net
    }
}
