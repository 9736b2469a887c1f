//! Property test for every controller of the registry: random specs (any subset of the
//! controller's keys, values anywhere in their declared ranges) driven by arbitrary streams
//! of sends, arrivals and loss events never panic (BBR's `transition_to` asserts its legal
//! transitions in these debug builds) and keep the controller's outputs usable:
//!
//! * cwnd ≥ 1 (the floor every controller keeps: BBR's timeout window is in-flight + 1,
//!   AIMD's ⌊cwnd⌋ ≥ 1); `fixed` keeps exactly its window; BBR in ProbeRTT holds ≤ 4 units
//!   after an arrival; `bbr3` never goes below BBR.MinPipeCwnd = 4 units after an arrival
//!   (its ProbeRTT holds ½ BDP, at least 4);
//! * the pacing rate, when the controller paces, is finite and > 0;
//! * 1 ≤ aggregation ≤ L (seed 000 eq. 8);
//! * the reported name is the configuration's, and the spec round-trips through `Display`.
//!
//! The streams respect what the receiver guarantees: time never goes back, `delivered` grows
//! by the units acked, a rate sample covers ≥ 1 unit, RTTs are ≥ 1 µs.

use core::time::Duration;

use proptest::prelude::*;
use rdtp_proto::cc::bbr_cd::BbrCdConfig;
use rdtp_proto::cc::bbr3::Bbr3Config;
use rdtp_proto::cc::fixed::FixedConfig;
use rdtp_proto::cc::registry::CONTROLLERS;
use rdtp_proto::cc::spec::{Kind, Value};
use rdtp_proto::cc::{AckSample, CaState, CcConfig, CcParams, CongestionEvent, LossKind, RateSample};
use rdtp_proto::node::ServedBy;
use rdtp_proto::{NodeId, Time};

/// A value of `kind` from random material: often an end of the range, else inside it.
fn value_in(kind: Kind, pick: u64, u: f64) -> Value {
    match kind {
        Kind::Bool => Value::Bool(pick & 1 == 1),
        Kind::Int { min, max } => Value::Int(match pick % 4 {
            0 => min,
            1 => max,
            _ => min + (pick >> 2) % (max - min).min(1000).saturating_add(1),
        }),
        Kind::Float { min, max } => Value::Float(match pick % 4 {
            0 => min,
            1 => max,
            _ => min + u * (max.min(min + 1000.0) - min),
        }),
        other => panic!("no controller key is of kind {other}"),
    }
}

/// A registry entry with random keys: the spec text and what it parses to.
fn spec() -> impl Strategy<Value = (String, CcConfig)> {
    (0..CONTROLLERS.len(), prop::collection::vec((any::<bool>(), any::<u64>(), 0.0f64..=1.0), 12)).prop_map(
        |(i, picks)| {
            let entry = &CONTROLLERS[i];
            let mut text = entry.name.to_string();
            for (k, (on, pick, u)) in (entry.base)().knobs().key_values().iter().zip(picks) {
                if on {
                    text.push(if text.contains(':') { ',' } else { ':' });
                    text.push_str(&format!("{}={}", k.name, value_in(k.kind, pick, u)));
                }
            }
            let cc = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            (text, cc)
        },
    )
}

#[derive(Clone, Debug)]
enum Step {
    /// A request for `units` leaves; `inflight` were outstanding.
    Send { dt_us: u64, units: u64, inflight: u64, app_limited: bool },
    /// Units arrive.
    Ack {
        dt_us: u64,
        acked: u64,
        rate_units: u64,
        interval_us: Option<u64>,
        app_limited: bool,
        rtt_us: Option<u64>,
        losses: u64,
        inflight: u64,
        ca_state: u8,
        /// Who served the units: (node index, router hops, from a cache).
        source: (u8, u8, bool),
    },
    /// Loss detected.
    Loss { dt_us: u64, timeout: bool, inflight: u64, first_in_window: bool },
}

fn step() -> impl Strategy<Value = Step> {
    // Mostly sub-millisecond gaps; sometimes seconds (idle periods, the 10 s min-RTT window).
    let dt = prop_oneof![8 => 0u64..2_000, 1 => 0u64..15_000_000];
    prop_oneof![
        1 => (dt.clone(), 1u64..=64, 0u64..5_000, any::<bool>())
            .prop_map(|(dt_us, units, inflight, app_limited)| Step::Send { dt_us, units, inflight, app_limited }),
        12 => (
            dt.clone(),
            1u64..=8,
            1u64..=20_000,
            prop::option::weighted(0.9, 1u64..=10_000_000),
            prop::bool::weighted(0.1),
            prop::option::weighted(0.9, 1u64..=5_000_000),
            prop_oneof![9 => Just(0u64), 1 => 1u64..=20],
            0u64..10_000,
            0u8..3,
            (0u8..4, 0u8..4, any::<bool>()),
        )
            .prop_map(
                |(dt_us, acked, rate_units, interval_us, app_limited, rtt_us, losses, inflight, ca_state, source)| {
                    Step::Ack {
                        dt_us,
                        acked,
                        rate_units,
                        interval_us,
                        app_limited,
                        rtt_us,
                        losses,
                        inflight,
                        ca_state,
                        source,
                    }
                },
            ),
        1 => (dt, any::<bool>(), 0u64..5_000, any::<bool>())
            .prop_map(|(dt_us, timeout, inflight, first_in_window)| Step::Loss { dt_us, timeout, inflight, first_in_window }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_controller_holds_its_invariants(
        (text, cc) in spec(),
        unit in 1u16..=9000,
        max_aggregation in 1u32..=64,
        seed in any::<u64>(),
        start_us in 0u64..30_000_000,
        steps in prop::collection::vec(step(), 1..1500),
    ) {
        prop_assert_eq!(cc.to_string().parse::<CcConfig>(), Ok(cc.clone()), "{} → {}", text, cc);
        let mut built = cc.build(CcParams { unit, max_aggregation, seed });
        let c = built.controller_mut();
        prop_assert_eq!(c.name(), cc.name());
        let fixed_window = cc.get::<FixedConfig>().map(|f| u64::from(f.window));
        let is_bbr3 = cc.get::<Bbr3Config>().is_some();
        let (mut now, mut delivered, mut lost_total, mut srtt) = (Time::from_micros(start_us), 0u64, 0u64, None);
        for s in &steps {
            let mut after_ack = false;
            match *s {
                Step::Send { dt_us, units, inflight, app_limited } => {
                    now += Duration::from_micros(dt_us);
                    c.on_send(now, units, inflight, app_limited);
                }
                Step::Ack {
                    dt_us,
                    acked,
                    rate_units,
                    interval_us,
                    app_limited,
                    rtt_us,
                    losses,
                    inflight,
                    ca_state,
                    source: (node, hops, cached),
                } => {
                    now += Duration::from_micros(dt_us);
                    delivered += acked;
                    lost_total += losses;
                    let rtt = rtt_us.map(Duration::from_micros);
                    if let Some(r) = rtt {
                        srtt = Some(srtt.map_or(r, |s: Duration| (s * 7 + r) / 8));
                    }
                    c.on_ack(&AckSample {
                        now,
                        unit: delivered,
                        source: ServedBy { node: NodeId::from_u64(u64::from(node)), hops, cached },
                        cookie: 0,
                        delivered,
                        acked,
                        rate: RateSample {
                            delivered: rate_units,
                            interval: interval_us.map(Duration::from_micros),
                            prior_delivered: delivered.saturating_sub(rate_units),
                            is_app_limited: app_limited,
                        },
                        rtt,
                        srtt,
                        losses,
                        lost_total,
                        prior_inflight: inflight + acked,
                        inflight,
                        ca_state: [CaState::Open, CaState::Recovery, CaState::Loss][usize::from(ca_state)],
                    });
                    after_ack = true;
                }
                Step::Loss { dt_us, timeout, inflight, first_in_window } => {
                    now += Duration::from_micros(dt_us);
                    let kind = if timeout { LossKind::Timeout } else { LossKind::Fast };
                    c.on_congestion(&CongestionEvent { now, kind, inflight, first_in_window });
                }
            }
            let ctx = format!("{cc} after {s:?}: state {}, cwnd {}", c.state(), c.cwnd());
            prop_assert!(c.cwnd() >= 1, "{}", ctx);
            if let Some(w) = fixed_window {
                prop_assert_eq!(c.cwnd(), w, "{}", ctx);
            }
            if after_ack && c.state() == "probe_rtt" && !is_bbr3 {
                match cc.get::<BbrCdConfig>() {
                    // S1 §III-C d: BBR-CD's ProbeRTT lowers the request rate to k units/s,
                    // not the window.
                    Some(b) => {
                        let k = b.probe_rtt_rate * f64::from(unit);
                        prop_assert_eq!(c.pacing_rate(), Some(k), "{}", ctx);
                    }
                    None => prop_assert!(c.cwnd() <= 4, "{}", ctx),
                }
            }
            if after_ack && is_bbr3 {
                prop_assert!(c.cwnd() >= 4, "{}", ctx);
            }
            if let Some(rate) = c.pacing_rate() {
                prop_assert!(rate.is_finite() && rate > 0.0, "{}: pacing rate {}", ctx, rate);
            }
            prop_assert!((1..=max_aggregation).contains(&c.aggregation()), "{}: aggregation {}", ctx, c.aggregation());
            prop_assert!(!c.state().is_empty());
        }
    }

    #[test]
    fn any_text_parses_or_is_refused_without_panic(text in "[a-z_:=,.0-9 -]{0,40}") {
        if let Ok(cc) = text.parse::<CcConfig>() {
            prop_assert_eq!(cc.to_string().parse::<CcConfig>(), Ok(cc));
        }
    }
}
