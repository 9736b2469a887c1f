//! Accounting per source: which nodes served the units of a transfer.
//!
//! Every Data names the node that served it (the origin or a router's content store). The
//! receiver counts units, bytes and RTT samples per node, so a user sees where the bytes
//! came from (`Served by: origin 61.2 %, router ap 38.8 %`) and experiments can tell cache
//! hits from origin fetches. There are few sources per transfer (one per cache on the
//! path), so a short vector searched linearly is the right structure.

use core::time::Duration;

use crate::node::{NodeId, ServedBy};

/// What one source delivered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceStats {
    pub node: NodeId,
    /// A router's content store (else the origin).
    pub cached: bool,
    /// Router hops between the source and the receiver, as last seen.
    pub hops: u8,
    /// Distinct units it delivered.
    pub units: u64,
    /// Distinct payload bytes it delivered.
    pub bytes: u64,
    /// RTT samples taken from its units, and their minimum and sum.
    pub rtt_samples: u64,
    pub rtt_min: Option<Duration>,
    pub rtt_sum: Duration,
}

impl SourceStats {
    /// Mean RTT of its samples.
    pub fn rtt_avg(&self) -> Option<Duration> {
        (self.rtt_samples > 0).then(|| self.rtt_sum / self.rtt_samples as u32)
    }

    /// How a summary names it: `origin`, `origin s2`, `router ap`.
    pub fn label(&self) -> String {
        match (self.cached, self.node == NodeId::ORIGIN) {
            (true, _) => format!("router {}", self.node),
            (false, true) => "origin".to_string(),
            (false, false) => format!("origin {}", self.node),
        }
    }
}

/// Per-source statistics of one transfer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sources(Vec<SourceStats>);

impl Sources {
    /// A unit of `bytes` arrived from `from`, with an RTT sample if it gave one.
    pub(crate) fn on_unit(&mut self, from: ServedBy, bytes: u64, rtt: Option<Duration>) {
        let i = match self.0.iter().position(|s| s.node == from.node && s.cached == from.cached) {
            Some(i) => i,
            None => {
                self.0.push(SourceStats { node: from.node, cached: from.cached, ..SourceStats::default() });
                self.0.len() - 1
            }
        };
        let s = &mut self.0[i];
        s.hops = from.hops;
        s.units += 1;
        s.bytes += bytes;
        if let Some(r) = rtt {
            s.rtt_samples += 1;
            s.rtt_min = Some(s.rtt_min.map_or(r, |m| m.min(r)));
            s.rtt_sum += r;
        }
    }

    /// Sources in the order they first delivered.
    pub fn iter(&self) -> impl Iterator<Item = &SourceStats> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Bytes served by routers' content stores.
    pub fn cached_bytes(&self) -> u64 {
        self.0.iter().filter(|s| s.cached).map(|s| s.bytes).sum()
    }

    /// `origin 61.2 %, router ap 38.8 %`: share of bytes per source, largest first.
    pub fn summary(&self) -> String {
        let total: u64 = self.0.iter().map(|s| s.bytes).sum();
        let mut v: Vec<&SourceStats> = self.0.iter().collect();
        v.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.node.cmp(&b.node)));
        v.iter()
            .map(|s| {
                format!("{} {:.1} %", s.label(), if total > 0 { s.bytes as f64 * 100.0 / total as f64 } else { 0.0 })
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_labels() {
        let mut s = Sources::default();
        let origin = ServedBy { node: NodeId::ORIGIN, hops: 1, cached: false };
        let ap = ServedBy { node: NodeId::label("ap").unwrap(), hops: 0, cached: true };
        for _ in 0..612 {
            s.on_unit(origin, 1000, Some(Duration::from_millis(20)));
        }
        for _ in 0..388 {
            s.on_unit(ap, 1000, None);
        }
        s.on_unit(ap, 1000, Some(Duration::from_millis(2)));
        s.on_unit(ap, 1000, Some(Duration::from_millis(4)));
        assert_eq!(s.summary(), "origin 61.1 %, router ap 38.9 %");
        let ap_stats = s.iter().find(|x| x.cached).unwrap();
        assert_eq!((ap_stats.units, ap_stats.rtt_samples), (390, 2));
        assert_eq!(ap_stats.rtt_avg(), Some(Duration::from_millis(3)));
        assert_eq!(ap_stats.rtt_min, Some(Duration::from_millis(2)));
        assert_eq!(s.cached_bytes(), 390_000);
        let other = SourceStats { node: NodeId::label("s2").unwrap(), ..SourceStats::default() };
        assert_eq!(other.label(), "origin s2");
    }
}
