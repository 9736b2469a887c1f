//! Definitions the C++ side (cpp/, through `cpp/rdtp-rust.h`) calls instead of writing them
//! again: each lives once, in Rust — the WiFi PHY-rate table and the testbed's address plan
//! (crate `rdtp-scenario`), the quantile definition (crate `rdtp-units`). They are defined
//! in this binary crate so the linker always has them when it resolves the C++ objects, and
//! run inside the C ABI's panic boundary (`rdtp_ffi::panic::guard`), as its own entry points do.

use std::ffi::{CStr, c_char};

use rdtp_ffi::panic::guard;

/// `rdtp_scenario::network::wifi_phy_max_bps` for the C++ topology code (bulk-object sizing).
///
/// # Safety
/// `standard` is null or a valid NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_wifi_phy_max_bps(standard: *const c_char, width_mhz: u32, spatial_streams: u32) -> f64 {
    guard("rdtp_wifi_phy_max_bps", f64::NAN, || {
        let standard = if standard.is_null() {
            String::new()
        } else {
            // SAFETY: the caller passes a valid NUL-terminated string.
            unsafe { CStr::from_ptr(standard) }.to_string_lossy().into_owned()
        };
        rdtp_scenario::network::wifi_phy_max_bps(&standard, width_mhz, spatial_streams)
    })
}

/// The gateway address (IPv4, host byte order) of the testbed's address plan for the server
/// (`client` < 0) or client `client` (`rdtp_scenario::network::subnet`); its prefix length
/// is [`rdtp_plan_prefix_len`].
#[unsafe(no_mangle)]
pub extern "C" fn rdtp_plan_gateway(client: i64) -> u32 {
    guard("rdtp_plan_gateway", 0, || {
        let client = usize::try_from(client).ok();
        rdtp_scenario::network::subnet(client).0.to_bits()
    })
}

/// The gateway address (IPv4, host byte order) of the caching router on the `slot`-th
/// router node in path order from the clients (`rdtp_scenario::network::router_subnet`).
#[unsafe(no_mangle)]
pub extern "C" fn rdtp_plan_router_gateway(slot: u32) -> u32 {
    guard("rdtp_plan_router_gateway", 0, || rdtp_scenario::network::router_subnet(slot as usize).0.to_bits())
}

/// Prefix length of the testbed's subnets.
#[unsafe(no_mangle)]
pub extern "C" fn rdtp_plan_prefix_len() -> u32 {
    guard("rdtp_plan_prefix_len", 0, || u32::from(rdtp_scenario::network::PREFIX_LEN))
}

/// `rdtp_units::quantile` of `n` ascending values (NaN for none).
///
/// # Safety
/// `sorted` points to `n` readable floats (or `n` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rdtp_quantile_f32(sorted: *const f32, n: usize, q: f64) -> f64 {
    guard("rdtp_quantile_f32", f64::NAN, || {
        if sorted.is_null() || n == 0 {
            return f64::NAN;
        }
        // SAFETY: the caller guarantees `n` readable values at `sorted`.
        let values = unsafe { std::slice::from_raw_parts(sorted, n) };
        rdtp_units::quantile(values, q).map_or(f64::NAN, f64::from)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_answer_as_the_rust_definitions() {
        assert_eq!(rdtp_plan_gateway(-1), u32::from_be_bytes([10, 200, 0, 1]));
        assert_eq!(rdtp_plan_gateway(257), u32::from_be_bytes([10, 202, 1, 1]));
        assert_eq!(rdtp_plan_router_gateway(2), u32::from_be_bytes([10, 199, 2, 1]));
        assert_eq!(rdtp_plan_prefix_len(), 24);
        let v = [1.0f32, 2.0, 3.0, 4.0];
        // SAFETY: a valid array and its length; a valid C string.
        unsafe {
            assert_eq!(rdtp_quantile_f32(v.as_ptr(), v.len(), 0.5), 2.0);
            assert!(rdtp_quantile_f32(v.as_ptr(), 0, 0.5).is_nan());
            assert_eq!(rdtp_wifi_phy_max_bps(c"80211ac".as_ptr(), 80, 1), 433.3e6);
        }
    }
}
