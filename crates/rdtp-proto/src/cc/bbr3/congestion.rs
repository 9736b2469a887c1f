//! Which rounds were congested — rdtp's two signals beyond the draft's (docs/CONTROLLER.md):
//! random loss below the path's base rate is not congestion, and a standing queue is.
//!
//! **Loss that is not congestion** (`random_loss`). BBRv3 takes
//! every loss above 2 % of in-flight as a full queue (draft §5.5.10.2), so on a path that
//! drops a share of packets at random (a radio link, Hu et al.'s Fig. 7 at 12 %) it cuts
//! `inflight_hi`, `bw_lo` and `inflight_lo` round after round and ends far below the path's
//! rate. With `random_loss` on, the controller learns the loss rate the path has when no
//! queue is building — rounds outside a bandwidth probe whose largest RTT sample stays within
//! [`QUIET_RTT`] of the minimum — and only loss *above* that base counts as congestion.
//! Random loss is binomial: a round of `n` units loses `n·p ± √(n·p(1−p))`, so the test is
//! "more than the base explains": a probe is too high when it lost more than
//! `(2 % + p)·n + Z·√(n·p(1−p))` of its in-flight `n`, and a round lowers the short-term
//! bounds only when it lost more than `n·p + Z·√(n·p(1−p))`. A queue that overflows builds
//! delay first, so loss at a full drop-tail queue never feeds the base; with no random loss
//! the base stays 0, both tests are the draft's (more than 2 %; any loss in the round), and
//! the controller is BBRv3.
//!
//! **A standing queue** (`queue_signal`). BBR's bandwidth filter keeps the largest delivery
//! rate of two ProbeBW cycles, so flows sharing a bottleneck together pace above its rate and
//! the surplus sits in the queue until the window stops it (four `bbr3` flows in the harness
//! suite: mean RTT 1.2–2.1 × RTprop, Jain 0.80–0.97). A steady round — ProbeBW_CRUISE,
//! or DOWN after [`DOWN_DRAIN_ROUNDS`] rounds, when this flow's own probe has drained — whose
//! *smallest* RTT sample stays `queue_signal` above the minimum — and at least `queue_floor`
//! seconds above it (with `burst_floor`, `burst_periods` (6) aggregation periods while [`super::bursts`] sees
//! aggregated delivery), so that loopback's scheduling jitter and a WiFi MAC's aggregation
//! delay, which sit on every round of a short path, do not count — never saw the queue empty; after
//! `queue_rounds` such rounds in a row (1: every one) it counts as congested, and the
//! short-term bounds go to [`QUEUE_CUT`] × what the path delivered in it, below it, so the
//! queue drains. Like the loss response it only lowers
//! the short-term model, which REFILL resets before each probe.
//!
//! **A queue that is not this flow's** (`queue_patience`). A delay signal alone yields to a
//! flow that fills the buffer whatever the delay (TCP CUBIC, a BBR without ProbeRTT): each
//! cut leaves room the other flow takes, the queue stays, and the signal cuts again (ns-3,
//! 50 Mbit/s, 20 ms: 28 % of the link beside CUBIC, 11 % beside TCP BBR). Flows that all cut
//! drain their queue within a few rounds (four `bbr3-rdtp` flows: from 19 ms above the
//! minimum to 3 ms in eight). So when [`QUEUE_PATIENCE`] cut rounds in a row leave the queue
//! above [`QUEUE_DRAINED`] of the episode's largest, the signal stands down: the cuts are
//! lifted, and no more come until a steady round sees the queue empty again (the other flow
//! backed off or left). Loss still counts, so beside a loss-based flow this is `bbr3`.

use core::time::Duration;

use super::{Bbr3, LOSS_THRESH, Sample};

/// A round is quiet (no queue) when its largest RTT sample is at most this factor of the
/// minimum RTT.
pub const QUIET_RTT: f64 = 1.125;
/// The base loss rate is the ratio of units lost to units sent in quiet rounds, both counts
/// decayed by this factor per quiet round (a memory of about ten rounds).
pub const BASE_DECAY: f64 = 0.9;
/// A round that kept a queue throughout (`queue_signal`) sets the short-term bounds to this
/// share of what the path delivered in it, so the queue drains (0.9 cost 2–6 % of goodput
/// among four flows in the harness suite, 0.95 1–3 %, with the same RTT and fairness).
pub const QUEUE_CUT: f64 = 0.95;
/// `queue_patience`: a cut round whose queue is above this share of the episode's largest
/// has not drained (the queue of flows that all cut halves within a few rounds).
pub const QUEUE_DRAINED: f64 = 0.5;
/// `queue_patience` of `bbr3-rdtp`: cut rounds in a row with the queue above
/// [`QUEUE_DRAINED`] of its largest before the signal stands down. Four `bbr3-rdtp` flows
/// sharing a queue never went so long (harness suite, seeds 1–3, before the aggregation keys
/// were on: every four-flow row as with no limit), while beside ns-3's TCP CUBIC the queue stayed for 14 and more cuts in a
/// row (docs/CONTROLLER.md: 12 already moved the four flows on 1 BDP from 1.31 to 1.42 ×
/// RTprop; 24 left more of the link to TCP BBR).
pub const QUEUE_PATIENCE: u64 = 16;
/// Rounds of ProbeBW_DOWN the queue of this flow's own probe may take to drain: UP stops
/// at in-flight 1.25 × BDP (or a little above), and DOWN's 0.9 drains 0.1 BDP a round.
pub const DOWN_DRAIN_ROUNDS: u64 = 3;
/// Standard deviations of binomial noise a round's loss may exceed the base by before it
/// counts as congestion (3: about one round in 700 of pure random loss).
pub const Z: f64 = 3.0;
/// The base loss rate is never taken above this: beyond it, loss is not "random" but a
/// path that cannot carry the flow.
pub const BASE_MAX: f64 = 0.25;

/// The base loss rate and what the current round showed so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct RandomLoss {
    /// Loss rate of quiet rounds.
    pub(super) base: f64,
    /// Decayed units lost and units sent (lost + arrived) of quiet rounds.
    quiet_lost: f64,
    quiet_sent: f64,
    lost: u64,
    acked: u64,
    max_rtt: Option<Duration>,
    min_rtt: Option<Duration>,
    probed: bool,
    /// Consecutive steady rounds, up to the last one ended, that kept a standing queue.
    queue_streak: u64,
    /// The current episode of the queue signal (`queue_patience`), carried from round to
    /// round until a steady round sees the queue empty.
    episode: QueueEpisode,
    /// Some of the round was not steady ProbeBW: outside DOWN and CRUISE, or in DOWN's first
    /// [`DOWN_DRAIN_ROUNDS`] rounds (where this flow's own probe may still be draining).
    unsteady: bool,
}

/// The queue signal since a steady round last saw the queue empty (`queue_patience`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct QueueEpisode {
    /// Cut rounds in a row, up to this one, whose queue stayed above `queue_drained` of
    /// the episode's largest.
    undrained: u64,
    /// The most a cut round's least RTT sat above the minimum in this episode, s.
    max_excess: f64,
    /// The queue did not drain under the cuts: another flow's (a loss-based TCP's, which
    /// fills whatever this flow leaves). The signal stands down until a steady round sees
    /// the queue empty.
    yielded: bool,
}

impl Bbr3 {
    /// Count one arrival into the current loss round.
    pub(super) fn note_random_loss_sample(&mut self, s: &Sample) {
        let r = &mut self.random_loss;
        r.lost += s.newly_lost;
        r.acked += s.newly_acked;
        r.max_rtt = r.max_rtt.max(s.rtt);
        if let Some(rtt) = s.rtt {
            r.min_rtt = Some(r.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        r.probed |= self.state.mode().is_probing_bw() || !self.full_bw_reached;
        let steady = match self.state.mode() {
            super::Mode::ProbeBwCruise => true,
            super::Mode::ProbeBwDown => self.rounds.count() >= self.cycle.down_round + DOWN_DRAIN_ROUNDS,
            _ => false,
        };
        r.unsteady |= !steady;
    }

    /// The most units a probe with `n` in flight may lose (`IsInflightTooHigh`): 2 % of
    /// them, plus what the base loss rate explains.
    pub(super) fn tolerated_loss(&self, n: u64) -> f64 {
        let n = n as f64;
        if !self.cfg.random_loss {
            return n * LOSS_THRESH;
        }
        let p = self.random_loss.base;
        n * (LOSS_THRESH + p) + Z * (n * p * (1.0 - p)).sqrt()
    }

    /// At the end of a loss round: was it congested (for the short-term bounds)? Then learn
    /// the base from it if it was quiet, and start counting the next round.
    pub(super) fn end_loss_round(&mut self) -> bool {
        let r = self.random_loss;
        let (n, p) = ((r.lost + r.acked) as f64, r.base);
        let mut congested = if self.cfg.random_loss {
            r.lost as f64 > n * p + Z * (n * p * (1.0 - p)).sqrt()
        } else {
            self.is_loss_in_round // the draft: any loss in the round
        };
        let floor = self.queue_floor();
        let standing = self.cfg.queue_signal > 0.0
            && !r.unsteady
            && match (r.min_rtt, self.min_rtt) {
                (Some(round_min), Some(min)) => {
                    let (round_min, min) = (round_min.as_secs_f64(), min.as_secs_f64());
                    round_min > min * (1.0 + self.cfg.queue_signal) && round_min > min + floor
                }
                _ => false,
            };
        let streak = if standing { r.queue_streak + 1 } else { 0 };
        let mut episode = r.episode;
        if standing && streak >= self.cfg.queue_rounds && !episode.yielded {
            // The queue did not empty once in a steady round: not this flow's probe (DOWN's
            // first round drains that), so flows together ask for more than the path carries.
            let excess = match (r.min_rtt, self.min_rtt) {
                (Some(round_min), Some(min)) => round_min.as_secs_f64() - min.as_secs_f64(),
                _ => 0.0,
            };
            episode.max_excess = episode.max_excess.max(excess);
            let patience = self.cfg.queue_patience;
            if excess > self.cfg.queue_drained * episode.max_excess {
                episode.undrained += 1;
            } else {
                episode.undrained = 0;
            }
            if patience > 0 && episode.undrained > patience {
                // `patience` cuts in a row left the queue above half its largest: it is not
                // ours to drain (a loss-based flow fills what this one leaves). Stand down
                // and lift the cuts, to share as `bbr3` does; loss still counts.
                episode.yielded = true;
                self.reset_short_term_model();
            } else {
                congested = true;
                self.queue_round = true;
            }
        } else if !standing && !r.unsteady {
            // A steady round saw the queue empty: the episode is over, and a signal that
            // stood down is armed again (the competing flow backed off, or left).
            episode = QueueEpisode::default();
        }
        let quiet = match (r.max_rtt, self.min_rtt) {
            (Some(max), Some(min)) => {
                let (max, min) = (max.as_secs_f64(), min.as_secs_f64());
                max <= min * QUIET_RTT || (self.cfg.quiet_floor && max <= min + floor)
            }
            _ => false,
        };
        let mut next = RandomLoss {
            base: r.base,
            quiet_lost: r.quiet_lost,
            quiet_sent: r.quiet_sent,
            queue_streak: streak,
            episode,
            ..RandomLoss::default()
        };
        if self.cfg.random_loss && quiet && !r.probed && n > 0.0 {
            next.quiet_lost = BASE_DECAY * r.quiet_lost + r.lost as f64;
            next.quiet_sent = BASE_DECAY * r.quiet_sent + n;
            next.base = (next.quiet_lost / next.quiet_sent).min(BASE_MAX);
        }
        self.random_loss = next;
        congested
    }
}
