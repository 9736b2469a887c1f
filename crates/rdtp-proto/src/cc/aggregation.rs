//! Request aggregation (seed 000 §4.2, eq. 8).

/// Units per request for a request rate (bytes/s), unit size and limit L:
///
/// `count = max(min(rate / (UNIT_MSS · 1000), L), 1)`  — seed 000 eq. 8,
///
/// i.e. about one millisecond of data per request, at least 1, at most L.
pub fn aggregation_count(rate_bytes_per_sec: f64, unit: u16, limit: u32) -> u32 {
    let per_ms = rate_bytes_per_sec / (f64::from(unit) * 1000.0);
    if !per_ms.is_finite() || per_ms < 1.0 {
        return 1;
    }
    (per_ms.floor().min(f64::from(limit)) as u32).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq8_examples() {
        // 60 Mbit/s with 1400-byte units: 7.5 MB/s / 1.4 MB/s·ms ≈ 5 units (seed 000 §4.2).
        assert_eq!(aggregation_count(60e6 / 8.0, 1400, 64), 5);
        // 100 Mbit/s, 1412-byte units: 12.5e6 / 1.412e6 = 8.85 → 8.
        assert_eq!(aggregation_count(12.5e6, 1412, 64), 8);
        // 1 Gbit/s: 88 → clipped to L.
        assert_eq!(aggregation_count(125e6, 1412, 64), 64);
        assert_eq!(aggregation_count(1000.0, 1412, 64), 1);
        assert_eq!(aggregation_count(f64::NAN, 1412, 64), 1);
        assert_eq!(aggregation_count(f64::INFINITY, 1412, 64), 1);
    }
}
