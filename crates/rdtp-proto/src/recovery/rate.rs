//! Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation; seed 000 §3.2, eq. 4).
//!
//! When a unit is requested, the receiver snapshots the connection's delivery state into
//! the unit's record ([`SendSnapshot`]); when the unit arrives, the snapshot and the
//! current state give a rate sample: units delivered since the request, over
//! `max(send_elapsed, ack_elapsed)`.

use core::time::Duration;

use super::samples::RateSample;
use crate::time::Time;

/// Delivery state copied into each unit's record when it is requested.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendSnapshot {
    /// `C.delivered` at send.
    pub delivered: u64,
    /// `C.delivered_time` at send (seed 000's `T_delivered`).
    pub delivered_time: Time,
    /// `C.first_sent_time` at send.
    pub first_sent_time: Time,
    /// The receiver was application-limited.
    pub is_app_limited: bool,
}

/// The connection-wide delivery state.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// 0 = not app-limited; else the `delivered` count at which the app-limited period ends.
    app_limited: u64,
}

impl RateSampler {
    /// Units delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Whether an app-limited period is in progress.
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// Snapshot for a unit requested at `now` while `inflight` units were outstanding.
    pub fn on_send(&mut self, now: Time, inflight: u64) -> SendSnapshot {
        if inflight == 0 {
            // Start of a flight: measure from here.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        SendSnapshot {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            is_app_limited: self.app_limited != 0,
        }
    }

    /// The receiver could have requested more but had nothing it was allowed to ask for:
    /// samples until the units now in flight are delivered are app-limited.
    pub fn mark_app_limited(&mut self, inflight: u64) {
        self.app_limited = (self.delivered + inflight).max(1);
    }

    /// A unit requested at `sent_at` with snapshot `snap` arrived at `now`. `min_rtt` is the
    /// smallest RTT seen: shorter intervals cannot be trusted (draft §3.3).
    pub fn on_delivered(
        &mut self,
        now: Time,
        sent_at: Time,
        snap: &SendSnapshot,
        min_rtt: Option<Duration>,
    ) -> RateSample {
        self.delivered += 1;
        self.delivered_time = now;
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let send_elapsed = sent_at - snap.first_sent_time;
        let ack_elapsed = now - snap.delivered_time;
        self.first_sent_time = sent_at;
        let interval = send_elapsed.max(ack_elapsed);
        let valid = !interval.is_zero() && min_rtt.is_none_or(|m| interval >= m);
        RateSample {
            delivered: self.delivered - snap.delivered,
            interval: valid.then_some(interval),
            prior_delivered: snap.delivered,
            is_app_limited: snap.is_app_limited,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_flight_measures_bottleneck_rate() {
        // 10 units per RTT of 10 ms, delivered 1 ms apart: rate = 1000 units/s. The first
        // flight's samples also span the first RTT; from the second flight on they are exact.
        let mut r = RateSampler::default();
        let ms = Time::from_millis;
        let min_rtt = Some(core::time::Duration::from_millis(10));
        let mut sent = vec![];
        for i in 0..10 {
            sent.push((ms(i), r.on_send(ms(i), i)));
        }
        let mut samples = vec![];
        for i in 0..20u64 {
            let (at, snap) = sent[i as usize];
            samples.push(r.on_delivered(ms(10 + i), at, &snap, min_rtt));
            // Request unit i + 10 now, keeping 10 in flight.
            sent.push((ms(10 + i), r.on_send(ms(10 + i), 10)));
        }
        let first = samples[9];
        assert_eq!((first.delivered, first.interval), (10, Some(core::time::Duration::from_millis(19))));
        let s = samples[19];
        assert_eq!(s.delivered, 10);
        assert_eq!(s.interval, Some(core::time::Duration::from_millis(10)));
        assert!((s.units_per_sec().unwrap() - 1000.0).abs() < 1e-6);
    }

    #[test]
    fn short_intervals_are_invalid_and_app_limited_marks_expire() {
        let mut r = RateSampler::default();
        let t0 = Time::from_millis(0);
        let snap = r.on_send(t0, 0);
        let s = r.on_delivered(Time::from_millis(1), t0, &snap, Some(core::time::Duration::from_millis(5)));
        assert_eq!(s.interval, None);
        r.mark_app_limited(2);
        assert!(r.is_app_limited());
        let snap = r.on_send(Time::from_millis(2), 0);
        assert!(snap.is_app_limited);
        r.on_delivered(Time::from_millis(9), Time::from_millis(2), &snap, None);
        r.on_delivered(Time::from_millis(9), Time::from_millis(2), &snap, None);
        assert!(r.is_app_limited(), "ends only once delivered passes the mark");
        r.on_delivered(Time::from_millis(9), Time::from_millis(2), &snap, None);
        assert!(!r.is_app_limited());
    }
}
