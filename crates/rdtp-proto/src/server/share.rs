//! Fair share at the server (issue 11; seed 000 §6's future work: "a Token-Bucket based send
//! queue"). A global send budget, split evenly between the sources active right now, with
//! memory that does not grow with receivers.
//!
//! Sources are hashed (keyed BLAKE3 of the address, so nobody can aim at another's slot)
//! into a fixed array of token buckets ([`crate::fair`], shared with the router's
//! per-source limits). Every slot refills at `rate / active`, where `active`
//! counts the slots that asked for anything in the last [`ShareConfig::active_window`]; the
//! global bucket refills at `rate`. A request is served if both its slot and the global
//! bucket are not in debt, and then debits both by the bytes it will be answered with (so a
//! request larger than a bucket still goes, and its source waits until the debt is paid);
//! otherwise it gets `Busy` — which receivers treat as congestion and which costs the server
//! one small Nack. One greedy source therefore gets its share and no more, and the others
//! keep theirs; alone, a source gets the whole budget (the split is work-conserving within
//! one active window).
//!
//! Limits, said plainly: a source is an address (IP and port). A receiver that sends from
//! many ports takes many shares, and receivers behind one address share one; two sources
//! hashed into one slot share it (1024 slots by default). The state is the same size
//! whatever the number of receivers: [`ShareConfig::slots`] slots of 32 bytes.
//!
//! **One budget per server, whatever its cores** (issue 23, item 3): a server that runs
//! several cores on several threads ([`super::Server::worker`]) gives them one [`Budget`]
//! — the buckets behind a lock, taken once per request for Data — so `rate` is the
//! server's total and a lone source gets all of it on any worker count. Before, each
//! worker had `rate / workers` of its own, and since a source always reaches the same
//! worker, a lone receiver got half of `--max-rate` on two cores. Time still comes from
//! the caller: cores on different threads may pass instants slightly out of order, which
//! the buckets take as no time passing.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use core::time::Duration;

use crate::fair::{Bucket, SourceSlots};
use crate::time::Time;

/// The server's send budget and how it is shared.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareConfig {
    /// Bytes per second of Data the server sends at most, over all receivers and all its
    /// cores; `None` (the default) sends whatever is asked, as seed 000's server does.
    pub rate: Option<f64>,
    /// Token-bucket slots sources are hashed into.
    pub slots: usize,
    /// Tokens a bucket holds at most: this long at its rate.
    pub burst: Duration,
    /// A slot counts as active for this long after its last request.
    pub active_window: Duration,
    /// Key of the hash of addresses into slots.
    pub key: [u8; 32],
}

impl Default for ShareConfig {
    fn default() -> Self {
        ShareConfig {
            rate: None,
            slots: 1024,
            burst: Duration::from_millis(20),
            active_window: Duration::from_millis(200),
            key: [0x5a; 32],
        }
    }
}

/// The send budget of one server, shared by its cores: clones are handles on the same
/// buckets. Without a rate it holds nothing and admits everything without locking.
#[derive(Clone, Debug)]
pub(crate) struct Budget {
    shared: Option<Arc<Mutex<FairShare>>>,
}

impl Budget {
    pub(crate) fn new(cfg: ShareConfig) -> Self {
        Budget { shared: cfg.rate.is_some().then(|| Arc::new(Mutex::new(FairShare::new(cfg)))) }
    }

    /// May `from` be sent `bytes` now? Debits the buckets if so ([`FairShare::admit`]).
    pub(crate) fn admit(&self, now: Time, from: SocketAddr, bytes: u64) -> bool {
        // The buckets are never left half-updated, so a poisoned lock is still usable.
        self.shared.as_ref().is_none_or(|s| s.lock().unwrap_or_else(PoisonError::into_inner).admit(now, from, bytes))
    }

    /// Sources active now (as last counted; 0 without a rate).
    pub(crate) fn active(&self) -> usize {
        self.shared.as_ref().map_or(0, |s| s.lock().unwrap_or_else(PoisonError::into_inner).active())
    }
}

/// Per-source token buckets, hashed, bounded.
#[derive(Debug)]
pub(crate) struct FairShare {
    cfg: ShareConfig,
    global: Bucket,
    sources: SourceSlots,
}

impl FairShare {
    pub(crate) fn new(cfg: ShareConfig) -> Self {
        let n = if cfg.rate.is_some() { cfg.slots } else { 1 };
        FairShare { sources: SourceSlots::new(n, cfg.key, cfg.active_window), cfg, global: Bucket::default() }
    }

    /// Sources active now (as last counted).
    pub(crate) fn active(&self) -> usize {
        self.sources.active()
    }

    /// May `from` be sent `bytes` now? Debits the buckets if so.
    pub(crate) fn admit(&mut self, now: Time, from: SocketAddr, bytes: u64) -> bool {
        let Some(rate) = self.cfg.rate else { return true };
        let burst = self.cfg.burst;
        let asked = self.sources.ask(now, from, Some(rate), burst);
        self.global.refill(now, rate, burst);
        let slot = self.sources.bucket_mut(asked.slot);
        if slot.tokens < 0.0 || self.global.tokens < 0.0 {
            return false;
        }
        slot.tokens -= bytes as f64;
        self.global.tokens -= bytes as f64;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(n: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 1], 4000 + n))
    }

    /// Two sources ask as fast as they like for 2 s (one 10× as often); returns the bytes
    /// each was granted.
    fn run(cfg: ShareConfig, asks: &[(u16, Duration, u64)]) -> Vec<u64> {
        let mut s = FairShare::new(cfg);
        let mut got = vec![0u64; asks.len()];
        let mut next: Vec<Time> = vec![Time::ZERO; asks.len()];
        let end = Time::ZERO + Duration::from_secs(2);
        loop {
            let (i, &t) = next.iter().enumerate().min_by_key(|(_, t)| **t).unwrap();
            if t >= end {
                break;
            }
            let (src, every, bytes) = asks[i];
            if s.admit(t, addr(src), bytes) {
                got[i] += bytes;
            }
            next[i] = t + every;
        }
        got
    }

    #[test]
    fn a_greedy_source_gets_its_share_and_the_other_keeps_its_own() {
        let cfg = ShareConfig { rate: Some(10e6), ..ShareConfig::default() };
        // Greedy: 64 KB every 1 ms (64 MB/s asked); normal: 64 KB every 10 ms (6.4 MB/s).
        let got = run(cfg.clone(), &[(1, Duration::from_millis(1), 65_536), (2, Duration::from_millis(10), 65_536)]);
        let total: u64 = got.iter().sum();
        // The budget holds (2 s at 10 MB/s, plus a burst and one request of debt each).
        assert!(total <= 20_000_000 + 2 * 200_000 + 2 * 65_536, "{got:?}");
        // An equal split is 5 MB/s each: the normal source asks for 6.4 and keeps ≥ 80 % of 5.
        assert!(got[1] as f64 >= 0.8 * 10e6, "{got:?}");
        assert!(got[0] as f64 <= 1.2 * 10e6, "greedy held to its share: {got:?}");
        // Alone, the greedy source gets the whole budget.
        let alone = run(cfg.clone(), &[(1, Duration::from_millis(1), 65_536)]);
        assert!(alone[0] as f64 >= 0.9 * 20e6, "{alone:?}");
        // No budget configured: everything is granted.
        let open = run(ShareConfig::default(), &[(1, Duration::from_millis(1), 65_536)]);
        assert_eq!(open[0], 2000 * 65_536);
    }

    #[test]
    fn memory_does_not_grow_with_sources() {
        let mut s = FairShare::new(ShareConfig { rate: Some(1e6), slots: 64, ..ShareConfig::default() });
        for i in 0..10_000u32 {
            let from = SocketAddr::from(([10, (i >> 16) as u8, (i >> 8) as u8, i as u8], 7000));
            s.admit(Time::ZERO + Duration::from_micros(u64::from(i)), from, 1000);
        }
        assert_eq!(s.sources.len(), 64);
        assert!(s.active() <= 64);
    }
}
