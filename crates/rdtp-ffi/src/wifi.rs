//! Passive WiFi rate estimation (seed 002) for C hosts: the ns-3 runner feeds every MPDU a
//! listening node's PHY decodes (its monitor trace) into `rdtp_proto::wifi`'s estimator and
//! asks it for the number of active stations and the predicted newcomer rate; the
//! consumer hands that rate to `rdtp_receiver_informed_start`. No estimation logic here.

use crate::panic::guard;
use std::ffi::{CStr, c_char};
use std::slice;

use core::time::Duration;

use rdtp_proto::Time;
use rdtp_proto::wifi::{Estimator, EstimatorConfig, Model, Observation};

use crate::node::{RdtpNode, view_mut};
use rdtp_proto::receiver::Receiver;

/// Opaque estimator handle (the estimator and the newcomer-rate model it predicts with).
pub struct RdtpWifiEstimator {
    est: Estimator,
    model: Model,
}

/// What the estimator says at one instant (rates in bit/s).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RdtpWifiEstimate {
    /// Active transmitters N in the window.
    pub n_active: u32,
    /// Their throughput together.
    pub total_bps: f64,
    /// Fraction of the window their exchanges took.
    pub busy: f64,
    /// The N + 1 rule, total / (N + 1); 0 without active stations (`has_n_plus_one` false).
    pub n_plus_one_bps: f64,
    pub has_n_plus_one: bool,
    /// The learned model's prediction (`has_model` false without a newcomer rate or stations).
    pub model_bps: f64,
    pub has_model: bool,
    /// The model's inputs: equal-opportunity (anomaly) and equal-airtime shares.
    pub anomaly_bps: f64,
    pub airtime_share_bps: f64,
}

/// One transmitter in the window.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RdtpWifiStation {
    pub mac: [u8; 6],
    pub active: bool,
    pub frames: u64,
    pub retries: u64,
    pub throughput_bps: f64,
    pub airtime_share: f64,
    pub phy_rate_bps: f64,
}

/// A new estimator: sliding window `window_ns` (0 = 1 s), activity threshold
/// `min_active_bps` (≤ 0 = 500 kbit/s), model file text `model` (null = the built-in
/// model). Null if the model text is refused.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_wifi_estimator_new(
    window_ns: u64,
    min_active_bps: f64,
    model: *const c_char,
) -> *mut RdtpWifiEstimator {
    guard("rdtp_wifi_estimator_new", core::ptr::null_mut(), || {
        let mut cfg = EstimatorConfig::default();
        if window_ns > 0 {
            cfg.window = Duration::from_nanos(window_ns);
        }
        if min_active_bps > 0.0 {
            cfg.min_active_bps = min_active_bps;
        }
        let model = if model.is_null() {
            Model::builtin()
        } else {
            let Ok(text) = unsafe { CStr::from_ptr(model) }.to_str() else { return core::ptr::null_mut() };
            match Model::parse(text) {
                Ok(m) => m,
                Err(_) => return core::ptr::null_mut(),
            }
        };
        Box::into_raw(Box::new(RdtpWifiEstimator { est: Estimator::new(cfg), model }))
    })
}

/// Free an estimator (null is ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_wifi_estimator_free(e: *mut RdtpWifiEstimator) {
    guard("rdtp_wifi_estimator_free", (), || {
        if !e.is_null() {
            drop(unsafe { Box::from_raw(e) });
        }
    })
}

/// Feed one overheard MPDU: `caplen` bytes at `mpdu` of an MPDU `len` bytes long (`has_fcs`:
/// `len` includes the FCS), received at `now_ns`, sent at `phy_rate_bps`. Returns whether it
/// was a data frame the estimator counted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_wifi_observe_mpdu(
    e: *mut RdtpWifiEstimator,
    now_ns: u64,
    mpdu: *const u8,
    caplen: usize,
    len: usize,
    has_fcs: bool,
    phy_rate_bps: f64,
) -> bool {
    guard("rdtp_wifi_observe_mpdu", false, || {
        let Some(e) = (unsafe { e.as_mut() }) else { return false };
        if mpdu.is_null() {
            return false;
        }
        let bytes = unsafe { slice::from_raw_parts(mpdu, caplen) };
        match Observation::from_mpdu(Time::from_nanos(now_ns), bytes, len, has_fcs, phy_rate_bps) {
            Some(o) => {
                e.est.observe(o);
                true
            }
            None => false,
        }
    })
}

/// The estimate over the window ending at `now_ns`, for a newcomer sending at
/// `newcomer_phy_bps` (≤ 0: the active stations' mean rate).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_wifi_estimate(
    e: *const RdtpWifiEstimator,
    now_ns: u64,
    newcomer_phy_bps: f64,
    out: *mut RdtpWifiEstimate,
) {
    guard("rdtp_wifi_estimate", (), || {
        let (Some(e), Some(out)) = (unsafe { e.as_ref() }, unsafe { out.as_mut() }) else { return };
        let s = e.est.snapshot(Time::from_nanos(now_ns));
        let n1 = s.n_plus_one();
        let f = s.features((newcomer_phy_bps > 0.0).then_some(newcomer_phy_bps), None);
        *out = RdtpWifiEstimate {
            n_active: s.n_active() as u32,
            total_bps: s.total_bps(),
            busy: s.busy(),
            n_plus_one_bps: n1.unwrap_or(0.0),
            has_n_plus_one: n1.is_some(),
            model_bps: f.map_or(0.0, |f| e.model.predict(&f)),
            has_model: f.is_some(),
            anomaly_bps: f.map_or(0.0, |f| f.anomaly_bps),
            airtime_share_bps: f.map_or(0.0, |f| f.airtime_share_bps),
        };
    })
}

/// Copy the transmitters of the window ending at `now_ns` (by MAC address) into
/// `out[0..cap)`; returns how many there are (may exceed `cap`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_wifi_stations(
    e: *const RdtpWifiEstimator,
    now_ns: u64,
    out: *mut RdtpWifiStation,
    cap: usize,
) -> usize {
    guard("rdtp_wifi_stations", 0, || {
        let Some(e) = (unsafe { e.as_ref() }) else { return 0 };
        let s = e.est.snapshot(Time::from_nanos(now_ns));
        if !out.is_null() {
            let dst = unsafe { slice::from_raw_parts_mut(out, cap) };
            for (d, st) in dst.iter_mut().zip(&s.stations) {
                *d = RdtpWifiStation {
                    mac: st.mac.0,
                    active: st.active,
                    frames: st.frames,
                    retries: st.retries,
                    throughput_bps: st.throughput_bps,
                    airtime_share: st.airtime_share,
                    phy_rate_bps: st.phy_rate_bps,
                };
            }
        }
        s.stations.len()
    })
}

/// Informed start (seed 002): before the first request, tell the receiver's controller that
/// about `bytes_per_sec` of payload is attainable. Returns whether the controller starts
/// from it (false: its normal start).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_receiver_informed_start(rx: *mut RdtpNode, now_ns: u64, bytes_per_sec: f64) -> bool {
    guard("rdtp_receiver_informed_start", false, || match unsafe { view_mut::<Receiver>(rx) } {
        Some(rx) => rx.informed_start(Time::from_nanos(now_ns), bytes_per_sec),
        None => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(tx: u8, body: usize) -> Vec<u8> {
        // Data frame, to-DS, no retry; addresses 02:..:tx → 02:..:ff; + FCS.
        let mut f = vec![0x08, 0x01, 0, 0];
        f.extend_from_slice(&[2, 0, 0, 0, 0, 0xff, 2, 0, 0, 0, 0, tx, 2, 0, 0, 0, 0, 0xff, 0, 0]);
        f.resize(24 + body + 4, 0);
        f
    }

    #[test]
    fn estimator_through_the_c_abi() {
        unsafe {
            let e = rdtp_wifi_estimator_new(0, 0.0, core::ptr::null());
            assert!(!e.is_null());
            // Two stations, one 1508-byte body each per ms for 1 s: 12 Mbit/s of payload each.
            for k in 0..1000u64 {
                for tx in [1u8, 2] {
                    let f = frame(tx, 1508);
                    assert!(rdtp_wifi_observe_mpdu(e, k * 1_000_000, f.as_ptr(), f.len(), f.len(), true, 54e6));
                }
            }
            let ack = [0xd4u8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0];
            assert!(!rdtp_wifi_observe_mpdu(e, 999_000_000, ack.as_ptr(), ack.len(), ack.len(), true, 24e6));
            let mut est = RdtpWifiEstimate::default();
            rdtp_wifi_estimate(e, 999_000_000, 54e6, &mut est);
            assert_eq!(est.n_active, 2);
            assert!((est.total_bps - 24e6).abs() < 0.05e6, "{est:?}"); // 2000 frames in 0.999 s
            assert!(est.has_n_plus_one && (est.n_plus_one_bps - est.total_bps / 3.0).abs() < 1.0);
            assert!(est.has_model && est.model_bps > 0.0);
            let mut st = [RdtpWifiStation::default(); 4];
            assert_eq!(rdtp_wifi_stations(e, 999_000_000, st.as_mut_ptr(), st.len()), 2);
            assert_eq!(st[1].mac, [2, 0, 0, 0, 0, 2]);
            assert!(st[1].active);
            rdtp_wifi_estimator_free(e);
            assert!(rdtp_wifi_estimator_new(0, 0.0, c"version = 9".as_ptr()).is_null());
        }
    }
}
