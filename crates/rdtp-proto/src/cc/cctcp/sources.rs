//! CCTCP's per-source state (seed 003 §II-B, "S3"): one congestion window, one RTT estimator
//! and RTO, and one pacing clock per node expected to serve units, ordered by their distance
//! from the receiver (router hops), and the joint updates that keep eq. 2 and eq. 3.

use core::time::Duration;

use crate::cc::PathState;
use crate::node::NodeId;
use crate::recovery::{RtoConfig, RttEstimator};
use crate::time::Time;

/// Most sources one transfer keeps (one per cache on a path, and the origin; annotations
/// are attacker-controllable, so the table is bounded). A source beyond this is unknown.
pub const MAX_SOURCES: usize = 32;

/// Index of the pseudo-source of units whose source is unknown (S3 §II-D 1), or of the flow
/// when there is one window per flow (`cctcp-single`).
pub const UNKNOWN: usize = 0;

/// One source's state.
#[derive(Clone, Debug)]
pub struct Source {
    pub node: NodeId,
    /// Routers between it and the receiver, as last seen (the unknown pseudo-source is
    /// beyond every known node: 255).
    pub hops: u8,
    pub cwnd: f64,
    pub ssthresh: f64,
    pub rtt: RttEstimator,
    /// Eq. 4: the next request expected from it may leave at this instant.
    pub next_send: Time,
    /// When its window was last reduced: a unit requested before then was part of the
    /// window that reduction answered, and its loss does not reduce it again.
    pub reduced_at: Option<Time>,
    pub samples: u64,
}

/// Whether a window grows by slow start (below `ssthresh`) or congestion avoidance.
fn grow(cwnd: f64, ssthresh: f64) -> f64 {
    if cwnd < ssthresh { cwnd + 1.0 } else { cwnd + 1.0 / cwnd }
}

/// The sources of one transfer.
#[derive(Clone, Debug)]
pub struct SourceTable {
    list: Vec<Source>,
    rto: RtoConfig,
    init_cwnd: f64,
}

impl SourceTable {
    /// A table holding only [`UNKNOWN`] (a window of `init_cwnd`).
    pub fn new(rto: RtoConfig, init_cwnd: f64, unknown_hops: u8) -> Self {
        let mut s = SourceTable { list: Vec::new(), rto, init_cwnd: init_cwnd.max(1.0) };
        s.list.push(s.fresh(NodeId::UNKNOWN, unknown_hops));
        s
    }

    fn fresh(&self, node: NodeId, hops: u8) -> Source {
        Source {
            node,
            hops,
            cwnd: self.init_cwnd,
            ssthresh: f64::INFINITY,
            rtt: RttEstimator::new(self.rto),
            next_send: Time::ZERO,
            reduced_at: None,
            samples: 0,
        }
    }

    pub fn get(&self, ix: usize) -> &Source {
        &self.list[ix]
    }
    pub fn get_mut(&mut self, ix: usize) -> &mut Source {
        &mut self.list[ix]
    }
    pub fn len(&self) -> usize {
        self.list.len()
    }
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Source)> {
        self.list.iter().enumerate()
    }

    /// The index of `node`, seen `hops` routers away (its distance is updated), added if
    /// new; [`UNKNOWN`] if the table is full.
    pub fn index(&mut self, node: NodeId, hops: u8) -> usize {
        if let Some(i) = self.list.iter().skip(1).position(|s| s.node == node) {
            self.list[i + 1].hops = hops;
            return i + 1;
        }
        if self.list.len() >= MAX_SOURCES || node == NodeId::UNKNOWN {
            return UNKNOWN;
        }
        self.list.push(self.fresh(node, hops));
        self.list.len() - 1
    }

    /// The index of `node`, if known.
    pub fn find(&self, node: NodeId) -> Option<usize> {
        self.list.iter().skip(1).position(|s| s.node == node).map(|i| i + 1)
    }

    /// S3 eq. 3, `RTO(k) ≤ RTO(k + x)`: the timeout a unit expected from `ix` gets is the
    /// largest of its own and those of every source nearer the receiver that has an RTT
    /// estimate (the initial RTO of a source never measured says nothing about the path).
    pub fn rto(&self, ix: usize) -> Duration {
        let h = self.list[ix].hops;
        self.list
            .iter()
            .enumerate()
            .filter(|&(j, s)| j == ix || (j != UNKNOWN && s.hops < h && s.rtt.srtt().is_some()))
            .map(|(_, s)| s.rtt.rto())
            .max()
            .unwrap_or(self.rto.initial)
    }

    /// A unit from `k` arrived in time (S3 §II-B): `k`'s window grows (slow start or
    /// congestion avoidance); with `joint`, every source between the receiver and `k` is
    /// raised as far as needed for its rate `CWND/SRTT` to match `k`'s (eq. 2).
    pub fn on_delivered(&mut self, k: usize, joint: bool) {
        let s = &mut self.list[k];
        s.cwnd = grow(s.cwnd, s.ssthresh);
        if !joint {
            return;
        }
        let (hk, wk) = (self.list[k].hops, self.list[k].cwnd);
        let Some(rk) = self.list[k].rtt.srtt().filter(|r| !r.is_zero()) else { return };
        for (j, s) in self.list.iter_mut().enumerate() {
            if j == UNKNOWN || j == k || s.hops >= hk {
                continue;
            }
            if let Some(rj) = s.rtt.srtt() {
                let target = wk * rj.as_secs_f64() / rk.as_secs_f64();
                if target > s.cwnd {
                    s.cwnd = target;
                }
            }
        }
    }

    /// A unit expected from `e`, requested at `sent_at`, was lost, arrived late, or (virtual
    /// loss, S3 §II-C) showed that `e` is slower than its timeout: `e` and every source
    /// beyond it halve their windows (and continue in congestion avoidance) and double their
    /// RTOs (S3 §II-B) — once per window each (see [`Source::reduced_at`]). With `joint`
    /// false only `e`. Returns how many sources were reduced.
    pub fn on_loss(&mut self, e: usize, sent_at: Time, now: Time, joint: bool) -> usize {
        let he = self.list[e].hops;
        let mut n = 0;
        for (j, s) in self.list.iter_mut().enumerate() {
            // The unknown pseudo-source is no node: it keeps its window of 1 and its RTO.
            let beyond = joint && e != UNKNOWN && j != e && j != UNKNOWN && s.hops > he;
            if j != e && !beyond {
                continue;
            }
            if s.reduced_at.is_some_and(|t| sent_at < t) {
                continue;
            }
            s.cwnd = (s.cwnd / 2.0).max(1.0);
            s.ssthresh = s.cwnd;
            s.rtt.backoff();
            s.reduced_at = Some(now);
            n += 1;
        }
        n
    }

    /// The state of source `ix`, with `inflight` units outstanding from it.
    pub fn state(&self, ix: usize, inflight: u64) -> PathState {
        let s = &self.list[ix];
        PathState {
            node: s.node,
            hops: s.hops,
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            srtt: s.rtt.srtt(),
            rto: self.rto(ix),
            inflight,
            samples: s.samples,
        }
    }
}
