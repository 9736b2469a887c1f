//! `fixed`: a constant window of N units, unpaced (ndnget's `-p fixed -s N`).

use super::spec::{Key, Keyed, Kind, key};
use super::{AckSample, Built, CcParams, CongestionEvent, Controller, ControllerSpec, aggregation_count};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedConfig {
    /// Window in units.
    pub window: u32,
}

impl Keyed for FixedConfig {
    const KEYS: &'static [Key<Self>] =
        &[key!(window, Kind::Int { min: 1, max: u32::MAX as u64 }, "the window, units (ndnget -p fixed -s N)")];
}

impl ControllerSpec for FixedConfig {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn build(&self, params: CcParams) -> Built {
        Built::Standard(Box::new(Fixed::new(self.clone(), params)))
    }
}

impl Default for FixedConfig {
    fn default() -> Self {
        FixedConfig { window: 64 }
    }
}

#[derive(Debug)]
pub struct Fixed {
    window: u64,
    params: CcParams,
    srtt_secs: Option<f64>,
}

impl Fixed {
    pub fn new(cfg: FixedConfig, params: CcParams) -> Self {
        Fixed { window: u64::from(cfg.window.max(1)), params, srtt_secs: None }
    }
}

impl Controller for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn cwnd(&self) -> u64 {
        self.window
    }
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    fn aggregation(&self) -> u32 {
        // Eq. 8 applied to the window's rate, window / srtt.
        match self.srtt_secs {
            Some(s) if s > 0.0 => {
                let rate = self.window as f64 * f64::from(self.params.unit) / s;
                aggregation_count(rate, self.params.unit, self.params.max_aggregation)
            }
            _ => 1,
        }
    }
    fn state(&self) -> &'static str {
        "fixed"
    }
    fn on_ack(&mut self, s: &AckSample) {
        self.srtt_secs = s.srtt.map(|d| d.as_secs_f64());
    }
    fn on_congestion(&mut self, _e: &CongestionEvent) {}
}
