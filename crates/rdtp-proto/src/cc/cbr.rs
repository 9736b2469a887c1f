//! `cbr`: requests at a constant rate, whatever the network says — the open-loop
//! constant-bit-rate source of network experiments, as a baseline for the controllers that
//! do react (how much a path gives a flow that never backs off, what a queue does under a
//! known load). Losses are repaired (the receiver's default detection) but change nothing.
//!
//! It is also the smallest complete controller, and the recipe for a new one: this file (the
//! config with its spec keys, `impl ControllerSpec`, `impl Controller`) and one row in
//! [`super::registry::CONTROLLERS`] are all it takes; the spec parser, the help text, the C
//! ABI, the front ends and every test that runs each controller pick it up from the registry.

use super::spec::{Key, Keyed, Kind, key};
use super::{AckSample, Built, CcParams, CongestionEvent, Controller, ControllerSpec, aggregation_count};

/// Parameters of `cbr`.
#[derive(Clone, Debug, PartialEq)]
pub struct CbrConfig {
    /// Requested payload, Mbit/s.
    pub rate: f64,
    /// Most units outstanding (a bound for a path that stops answering).
    pub window: u32,
}

impl Default for CbrConfig {
    fn default() -> Self {
        CbrConfig { rate: 8.0, window: 1024 }
    }
}

impl Keyed for CbrConfig {
    const KEYS: &'static [Key<Self>] = &[
        key!(rate, Kind::Float { min: 0.001, max: 100_000.0 }, "requested payload, Mbit/s, whatever the losses"),
        key!(window, Kind::Int { min: 1, max: u32::MAX as u64 }, "most units outstanding"),
    ];
}

impl ControllerSpec for CbrConfig {
    fn name(&self) -> &'static str {
        "cbr"
    }
    fn build(&self, params: CcParams) -> Built {
        Built::Standard(Box::new(Cbr::new(self, params)))
    }
}

/// The controller. See the module docs.
#[derive(Debug)]
pub struct Cbr {
    /// Bytes per second.
    rate: f64,
    window: u64,
    params: CcParams,
}

impl Cbr {
    pub fn new(cfg: &CbrConfig, params: CcParams) -> Self {
        Cbr { rate: cfg.rate * 1e6 / 8.0, window: u64::from(cfg.window.max(1)), params }
    }
}

impl Controller for Cbr {
    fn name(&self) -> &'static str {
        "cbr"
    }
    fn cwnd(&self) -> u64 {
        self.window
    }
    fn pacing_rate(&self) -> Option<f64> {
        Some(self.rate)
    }
    fn aggregation(&self) -> u32 {
        aggregation_count(self.rate, self.params.unit, self.params.max_aggregation)
    }
    fn state(&self) -> &'static str {
        "constant"
    }
    fn on_ack(&mut self, _s: &AckSample) {}
    fn on_congestion(&mut self, _e: &CongestionEvent) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcConfig;

    #[test]
    fn paces_at_its_rate_and_ignores_losses() {
        let cc: CcConfig = "cbr:rate=80".parse().unwrap();
        let mut built = cc.build(CcParams { unit: 1000, max_aggregation: 64, seed: 0 });
        let c = built.controller_mut();
        assert_eq!((c.name(), c.pacing_rate(), c.cwnd()), ("cbr", Some(10e6), 1024));
        // 10 MB/s is 10 units of 1000 bytes per millisecond (eq. 8).
        assert_eq!(c.aggregation(), 10);
        let loss = CongestionEvent {
            now: crate::Time::ZERO,
            kind: crate::cc::LossKind::Timeout,
            inflight: 0,
            first_in_window: true,
        };
        c.on_congestion(&loss);
        assert_eq!((c.pacing_rate(), c.cwnd()), (Some(10e6), 1024));
        assert_eq!(cc.to_string(), "cbr:rate=80.0");
    }
}
