//! What rdtp-sim and the testbed know about the network beyond the [`Topology`] schema,
//! defined here once: the WiFi PHY rates (bulk-object sizing, also for the C++ topology
//! code through `rdtp-sim`'s exported `rdtp_wifi_phy_max_bps`) and the testbed's address
//! plan (also the emulator's default gateways, through `rdtp_plan_gateway` and
//! `rdtp_plan_router_gateway`).

use crate::Error;
use std::net::Ipv4Addr;

use crate::Topology;

/// Highest PHY rate (bit/s) of a WiFi hop: `standard` "80211g" (54), "80211ac" (else 802.11n), channel
/// `width` in MHz, `spatial_streams` (at least 1). Long guard interval, the top MCS of the
/// standard (HT MCS 7, VHT MCS 9). Only sizes objects so that bulk flows never run out.
pub fn wifi_phy_max_bps(standard: &str, width: u32, spatial_streams: u32) -> f64 {
    if standard == "80211g" {
        return 54e6; // one stream, 20 MHz
    }
    let per_stream = if standard == "80211ac" {
        match width {
            w if w >= 160 => 866.7e6,
            w if w >= 80 => 433.3e6,
            w if w >= 40 => 200e6,
            _ => 86.7e6,
        }
    } else if width >= 40 {
        150e6
    } else {
        72.2e6
    };
    per_stream * spatial_streams.max(1) as f64
}

/// The 802.11g ERP-OFDM rates, Mbit/s (IEEE 802.11-2016 §18).
pub const ERP_OFDM_MBPS: [f64; 8] = [6.0, 9.0, 12.0, 18.0, 24.0, 36.0, 48.0, 54.0];

/// The most the path can carry (bit/s): the largest bottleneck rate (of `rate` and every
/// step of `rate_schedule`), the WiFi PHY rate capped by the wired link, or a graph's
/// fastest link. Only sizes bulk objects.
pub fn capacity_bps(t: &Topology) -> Result<f64, Error> {
    let rate = |q: Option<&crate::Quantity>, default: &str| parse_rate(&q.map_or(default.to_string(), |q| q.rate()));
    if t.kind == "graph" {
        let mut rates = t.links.iter().map(|l| rate(l.rate.as_ref(), crate::graph::DEFAULT_RATE));
        return rates.try_fold(0.0, |max: f64, r| Ok(max.max(r?)));
    }
    if t.kind == "wifi" {
        let standard = t.standard.as_deref().unwrap_or("80211n");
        let width = t.channel_width.unwrap_or(if standard == "80211ac" { 80 } else { 20 });
        let phy = wifi_phy_max_bps(standard, width, t.spatial_streams.unwrap_or(1));
        if t.server_link.as_deref() == Some("wifi") {
            return Ok(phy);
        }
        return Ok(phy.min(rate(t.wired_rate.as_ref(), "1Gbps")?));
    }
    let mut max = rate(t.rate.as_ref(), "100Mbps")?;
    if let Some(s) = &t.rate_schedule {
        for item in s.to_arg().split(',').filter(|i| !i.trim().is_empty()) {
            let (_, r) =
                item.split_once(':').ok_or_else(|| Error::Invalid(format!("bad rate_schedule entry '{item}'")))?;
            max = max.max(parse_rate(r)?);
        }
    }
    Ok(max)
}

/// [`rdtp_units::parse_rate`] with the messages experiment files have always had.
pub(crate) fn parse_rate(s: &str) -> Result<f64, Error> {
    rdtp_units::parse_rate(s).map_err(|e| {
        Error::Invalid(match e.problem {
            rdtp_units::Problem::Number => format!("bad rate '{s}'"),
            rdtp_units::Problem::Unit => format!("bad rate unit '{}' in '{s}' (e.g. 100Mbps, 1Gbps)", e.suffix()),
        })
    })
}

/// The testbed's address plan: the server's tap is on 10.200.0.0/24, client namespace `i`'s
/// on 10.(201 + i/256).(i%256).0/24; the emulator's gateway is .1, the host .2. Returns
/// (gateway, host) for the server (`None`) or client `i`. Routers: [`router_subnet`].
pub fn subnet(client: Option<usize>) -> (Ipv4Addr, Ipv4Addr) {
    match client {
        None => plan(200, 0),
        Some(i) => plan(201 + (i / 256) as u32, (i % 256) as u32),
    }
}

/// The subnet of the caching router on the `slot`-th node of [`crate::router_nodes`] (path
/// order from the clients: `r1` is slot 0, `r{k}` slot k − 1; WiFi's `ap` slot 0):
/// 10.199.slot.0/24, the emulator's gateway .1, the router's namespace .2. A topology has
/// at most 201 router nodes (`hops` ≤ 200), so one octet holds every slot.
pub fn router_subnet(slot: usize) -> (Ipv4Addr, Ipv4Addr) {
    plan(199, slot as u32 % 256)
}

/// (gateway .1, host .2) of 10.b.c.0/24.
fn plan(b: u32, c: u32) -> (Ipv4Addr, Ipv4Addr) {
    let base = (10u32 << 24) | (b << 16) | (c << 8);
    (Ipv4Addr::from(base | 1), Ipv4Addr::from(base | 2))
}

/// Prefix length of every subnet of the plan.
pub const PREFIX_LEN: u8 = 24;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_plan() {
        assert_eq!(subnet(None), (Ipv4Addr::new(10, 200, 0, 1), Ipv4Addr::new(10, 200, 0, 2)));
        assert_eq!(subnet(Some(0)).1, Ipv4Addr::new(10, 201, 0, 2));
        assert_eq!(subnet(Some(257)).0, Ipv4Addr::new(10, 202, 1, 1));
        assert_eq!(router_subnet(0), (Ipv4Addr::new(10, 199, 0, 1), Ipv4Addr::new(10, 199, 0, 2)));
        assert_eq!(router_subnet(200).1, Ipv4Addr::new(10, 199, 200, 2));
    }

    #[test]
    fn phy_rates() {
        assert_eq!(wifi_phy_max_bps("80211ac", 80, 1), 433.3e6);
        assert_eq!(wifi_phy_max_bps("80211ac", 160, 2), 2.0 * 866.7e6);
        assert_eq!(wifi_phy_max_bps("80211n", 20, 0), 72.2e6);
        assert_eq!(wifi_phy_max_bps("80211n", 40, 1), 150e6);
        assert_eq!(wifi_phy_max_bps("80211g", 20, 1), 54e6);
    }
}
