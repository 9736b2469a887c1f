//! What ndnget's window pipelines share: ndn-tools' `PipelineInterestsAdaptive`, the base of
//! its AIMD (`aimd.rs`) and CUBIC (`cubic.rs`) pipelines. It holds the window and the
//! slow-start threshold, the smoothed RTT they are sized with, conservative window
//! adaptation (one decrease per window, `--disable-cwa`) and the choice of loss detection
//! (ndnget's per-unit timers, `rto_only`); how the window grows in slow start and congestion
//! avoidance and how a loss shrinks it is each pipeline's own.

use core::time::Duration;

use super::{Built, CcParams, CongestionEvent, Controller, aggregation_count};
use crate::recovery::NdngetTimers;

/// The window state of an ndnget pipeline. See the module docs.
#[derive(Debug)]
pub(crate) struct Pipeline {
    params: CcParams,
    /// The window, units (ndnget's `m_cwnd`, a real number).
    pub cwnd: f64,
    /// The slow-start threshold, units (`m_ssthresh`).
    pub ssthresh: f64,
    /// The receiver's SRTT as of the last arrival.
    pub srtt: Option<Duration>,
}

impl Pipeline {
    /// A pipeline starting at `init_cwnd` (at least 1) with the threshold `init_ssthresh`.
    pub fn new(init_cwnd: f64, init_ssthresh: f64, params: CcParams) -> Self {
        Pipeline { params, cwnd: init_cwnd.max(1.0), ssthresh: init_ssthresh, srtt: None }
    }

    /// Whether the window is below the slow-start threshold.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Units that may be outstanding: the whole units of the window, at least 1.
    pub fn cwnd(&self) -> u64 {
        self.cwnd.floor().max(1.0) as u64
    }

    /// Seed 000 eq. 8's units per request at the window's rate, `cwnd / SRTT` (ndnget sends
    /// one Interest per segment; rdtp's requests carry 1 ms of that rate); 1 before an RTT.
    pub fn aggregation(&self) -> u32 {
        match self.srtt {
            Some(s) if !s.is_zero() => {
                let rate = self.cwnd * f64::from(self.params.unit) / s.as_secs_f64();
                aggregation_count(rate, self.params.unit, self.params.max_aggregation)
            }
            _ => 1,
        }
    }

    /// The state's name for traces.
    pub fn state(&self) -> &'static str {
        if self.in_slow_start() { "slow_start" } else { "congestion_avoidance" }
    }

    /// Whether a loss event may shrink the window: once per window of requests (ndnget's
    /// conservative window adaptation: the receiver's `first_in_window`, ndnget's recovery
    /// point), or every time with `disable_cwa`.
    pub fn decreases_on(e: &CongestionEvent, disable_cwa: bool) -> bool {
        e.first_in_window || disable_cwa
    }

    /// The pipeline `cc` with its loss detection: ndnget's per-unit retransmission timers
    /// ([`NdngetTimers`]) if `rto_only`; otherwise the receiver's default (Liu et al.'s).
    pub fn built(cc: Box<dyn Controller>, rto_only: bool) -> Built {
        if rto_only { Built::Detector(cc, Box::new(NdngetTimers::new())) } else { Built::Standard(cc) }
    }
}
