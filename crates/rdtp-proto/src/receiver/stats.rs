//! Counters a fetch reports (what ndnget prints, and more).

use core::time::Duration;

use super::sources::Sources;
use crate::time::Time;

/// Statistics of one receiver.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// When the receiver was created.
    pub started: Time,
    /// When the object's size became known and requesting began.
    pub transfer_started: Option<Time>,
    /// When the last unit arrived.
    pub finished: Option<Time>,
    /// Distinct units received.
    pub units_received: u64,
    /// Distinct payload bytes received.
    pub bytes_received: u64,
    /// Units received again after they had already arrived.
    pub duplicates: u64,
    /// Units that arrived after they had been declared lost, before they were asked for
    /// again: losses that were not (spurious timeouts). A loss whose unit was asked for
    /// again and then arrived twice counts as a duplicate instead.
    pub late_arrivals: u64,
    /// Datagrams that were not valid answers for this transfer.
    pub invalid: u64,
    /// Request datagrams sent (including resolves).
    pub requests_sent: u64,
    /// Units asked for, counting every re-request.
    pub units_requested: u64,
    /// Units asked for again (ndnget's "retransmitted segments").
    pub units_rerequested: u64,
    /// Units declared lost (fast or timeout).
    pub units_lost: u64,
    /// Retransmission-timer expiries.
    pub timeouts: u64,
    /// Expiries after which the congestion window was smaller.
    pub timeout_window_decreases: u64,
    /// Loss-recovery episodes entered by fast re-request.
    pub fast_recoveries: u64,
    /// Nacks received (answering our requests; `Busy` ones included).
    pub nacks: u64,
    /// `Busy` Nacks received: a server over its send budget, or a router whose table is
    /// full, refused a request (the receiver backs off, [`super::refusals`]).
    pub busy: u64,
    /// Units those `Busy` Nacks refused. They are asked for again, but not counted as
    /// re-requested (`units_rerequested`) or lost: they were answered, not lost.
    pub units_refused: u64,
    /// Retries received (the first hop had not validated our address yet).
    pub retries: u64,
    /// Proof requests sent and proofs accepted (verified streaming, 16 KiB blocks).
    pub proof_requests: u64,
    pub proofs_received: u64,
    /// 16 KiB blocks that failed verification (dropped and fetched again from the origin).
    pub bad_blocks: u64,
    /// Verification groups (up to 16 blocks, 256 KiB) that failed as a whole and were
    /// narrowed to their bad blocks (each block checked alone with a proof of its own).
    pub bad_groups: u64,
    /// Bad blocks repaired from the units of their earlier failed copies (a combination of
    /// them matched the EID), without fetching them again.
    pub blocks_repaired: u64,
    /// RTT samples taken.
    pub rtt_samples: u64,
    pub rtt_min: Option<Duration>,
    pub rtt_avg: Option<Duration>,
    pub rtt_max: Option<Duration>,
    /// Sum of the RTT samples: the difference of two snapshots over the difference of
    /// their `rtt_samples` is the mean RTT between them (per-interval reports).
    pub rtt_sum: Duration,
    /// What each source (the origin, routers' content stores) delivered.
    pub sources: Sources,
}

impl Stats {
    /// Time from creation to the last unit (or to `now` if unfinished).
    pub fn elapsed(&self, now: Time) -> Duration {
        self.finished.unwrap_or(now) - self.started
    }

    /// Goodput in bits per second over [`Stats::elapsed`].
    pub fn goodput_bps(&self, now: Time) -> f64 {
        let secs = self.elapsed(now).as_secs_f64();
        if secs > 0.0 { self.bytes_received as f64 * 8.0 / secs } else { 0.0 }
    }
}
