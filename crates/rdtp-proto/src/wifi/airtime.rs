//! Airtime of a frame exchange on an 802.11g (ERP) channel: what a transmitter holds the
//! medium for per MPDU under the DCF (S2 §II: the DCF is the bottleneck; Heusse et al.'s
//! performance anomaly, S2 ref. [13], follows from every station getting the same number
//! of such exchanges). IEEE 802.11-2016 §17.4 (OFDM PPDU), §18 (ERP), §16 (DSSS/HR-DSSS).

use core::time::Duration;

/// ERP short slot (µs).
pub const SLOT_US: f64 = 9.0;
/// SIFS on 2.4 GHz (µs).
pub const SIFS_US: f64 = 10.0;
/// DIFS = SIFS + 2 slots (µs).
pub const DIFS_US: f64 = SIFS_US + 2.0 * SLOT_US;
/// Mean backoff of a first attempt: CWmin / 2 slots (CWmin 15).
pub const MEAN_BACKOFF_US: f64 = 7.5 * SLOT_US;
/// ACK frame length with FCS.
pub const ACK_BYTES: usize = 14;

/// The basic (control-response) rate an ACK to a frame at `rate_bps` is sent at: the
/// highest of 6, 12, 24 Mbit/s (OFDM) or 1, 2 Mbit/s (DSSS) not above the data rate.
pub fn control_rate_bps(rate_bps: f64) -> f64 {
    if is_dsss(rate_bps) {
        if rate_bps >= 2e6 { 2e6 } else { 1e6 }
    } else {
        [24e6, 12e6, 6e6].into_iter().find(|&r| r <= rate_bps).unwrap_or(6e6)
    }
}

fn is_dsss(rate_bps: f64) -> bool {
    [1e6, 2e6, 5.5e6, 11e6].iter().any(|&r| (rate_bps - r).abs() < 1.0)
}

/// Duration (µs) of one PPDU of `bytes` (MPDU with FCS) at `rate_bps`: OFDM (ERP-OFDM with
/// its 6 µs signal extension) or, for 1/2/5.5/11 Mbit/s, DSSS with the long preamble.
pub fn ppdu_us(bytes: usize, rate_bps: f64) -> f64 {
    let rate_bps = rate_bps.max(1e6);
    if is_dsss(rate_bps) {
        192.0 + 8.0 * bytes as f64 / (rate_bps / 1e6)
    } else {
        // 16 µs preamble + 4 µs SIGNAL + 4 µs symbols of N_DBPS = 4 µs × rate bits each,
        // holding SERVICE (16 bits) + data + tail (6 bits); + 6 µs ERP signal extension.
        let ndbps = rate_bps / 1e6 * 4.0;
        let symbols = ((16.0 + 8.0 * bytes as f64 + 6.0) / ndbps).ceil();
        16.0 + 4.0 + 4.0 * symbols + 6.0
    }
}

/// Medium time of one successful exchange: DIFS, mean first backoff, the data PPDU, SIFS,
/// the ACK at the control rate.
pub fn exchange_us(bytes: usize, rate_bps: f64) -> f64 {
    DIFS_US + MEAN_BACKOFF_US + ppdu_us(bytes, rate_bps) + SIFS_US + ppdu_us(ACK_BYTES, control_rate_bps(rate_bps))
}

/// [`exchange_us`] as a `Duration`.
pub fn exchange(bytes: usize, rate_bps: f64) -> Duration {
    Duration::from_nanos((exchange_us(bytes, rate_bps) * 1e3).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ofdm_and_dsss_ppdus() {
        // 1536-byte MPDU at 54 Mbit/s: ceil((16 + 12288 + 6) / 216) = 57 symbols → 20 + 228 + 6.
        assert_eq!(ppdu_us(1536, 54e6), 254.0);
        // ACK at 24 Mbit/s: ceil(134 / 96) = 2 symbols → 34 µs.
        assert_eq!(ppdu_us(ACK_BYTES, 24e6), 34.0);
        assert_eq!(ppdu_us(100, 1e6), 992.0);
        assert_eq!(control_rate_bps(54e6), 24e6);
        assert_eq!(control_rate_bps(18e6), 12e6);
        assert_eq!(control_rate_bps(9e6), 6e6);
        assert_eq!(control_rate_bps(11e6), 2e6);
    }

    #[test]
    fn saturation_throughput_of_one_station_is_the_textbook_one() {
        // One station alone at 54 Mbit/s, 1472-byte UDP payloads: ≈ 30 Mbit/s of UDP payload
        // (S2 Fig. 1's "almost 30 Mbps").
        let mpdu = 1472 + 28 + 8 + 24 + 4;
        let t = exchange_us(mpdu, 54e6);
        let goodput = 1472.0 * 8.0 / t; // Mbit/s
        assert!((29.0..31.5).contains(&goodput), "{goodput}");
        assert_eq!(exchange(mpdu, 54e6), Duration::from_nanos((t * 1e3) as u64));
    }
}
