//! Byte sizes, durations and bit rates as people type them, the one quantile definition, and means
//! with confidence intervals ([`stats`]).
//!
//! One parser for each quantity, used by every tool that reads one (the `rdtp` command
//! line, rdtp-sim's scenarios, the testbed's experiments), accepting the union of the
//! spellings those tools accepted before they shared it. Pure functions, no I/O; not
//! protocol (so not in `rdtp-proto`).

// Safe Rust only: the C ABI (rdtp-ffi) and the runtimes hold every `unsafe` block of rdtp.
#![forbid(unsafe_code)]

pub mod stats;

use std::fmt;

/// A size or rate that does not parse; the message names the input and the unit problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    /// The input as given.
    pub input: String,
    /// What is wrong with it.
    pub problem: Problem,
}

/// What is wrong with a size or rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// No number in front (or not a number, or not finite / out of range).
    Number,
    /// A unit suffix that is not one of the known ones.
    Unit,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problem {
            Problem::Number => write!(f, "bad number in '{}'", self.input),
            Problem::Unit => write!(f, "bad unit in '{}'", self.input),
        }
    }
}

impl std::error::Error for UnitError {}

impl UnitError {
    /// What follows the number in the input (the unit as given), trimmed.
    pub fn suffix(&self) -> &str {
        let t = self.input.trim();
        t[t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len())..].trim()
    }
}

/// Split `s` (trimmed) into its leading decimal number and the rest (trimmed).
fn split_number(s: &str) -> Result<(f64, &str), UnitError> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let err = || UnitError { input: s.to_string(), problem: Problem::Number };
    let value: f64 = num.parse().map_err(|_| err())?;
    Ok((value, unit.trim()))
}

/// Decimal (`k`, `M`, `G`, `T`: powers of 1000) and binary (`Ki`, `Mi`, `Gi`, `Ti`: powers of
/// 1024) prefixes, as written in rates; sizes match them ignoring case.
const PREFIXES: &[(&str, f64)] = &[
    ("", 1.0),
    ("k", 1e3),
    ("K", 1e3),
    ("M", 1e6),
    ("G", 1e9),
    ("T", 1e12),
    ("Ki", 1024.0),
    ("Mi", 1024.0 * 1024.0),
    ("Gi", 1024.0 * 1024.0 * 1024.0),
    ("Ti", 1024.0 * 1024.0 * 1024.0 * 1024.0),
];

/// A byte count: a number (fractions allowed) with an optional suffix — `K`, `M`, `G`, `T`
/// (powers of 1000, also `kB`, `MB`, …) or `Ki`, `Mi`, `Gi`, `Ti` / `KiB`, `MiB`, `GiB`,
/// `TiB` (powers of 1024); `B` or nothing means bytes. Case-insensitive, blanks allowed
/// around the number and the suffix. Rounded to the nearest byte.
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let (value, unit) = split_number(s)?;
    let unit = unit.to_ascii_lowercase();
    let prefix = unit.strip_suffix('b').unwrap_or(&unit);
    let mult = PREFIXES
        .iter()
        .find(|(p, _)| p.eq_ignore_ascii_case(prefix))
        .map(|(_, m)| *m)
        .ok_or_else(|| UnitError { input: s.to_string(), problem: Problem::Unit })?;
    let bytes = value * mult;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(UnitError { input: s.to_string(), problem: Problem::Number });
    }
    Ok(bytes.round() as u64)
}

/// A rate in bit/s, spelt as ns-3's `DataRate`: a number, then a prefix (`k`/`K`, `M`, `G`,
/// `T`, or `Ki`, `Mi`, `Gi`, `Ti`), then `b` (bits) or `B` (bytes), then `ps` or `/s`:
/// `100Mbps`, `1.5Gb/s`, `800kbps`, `10MBps`, `2KiB/s`. Case matters (`b` is a bit, `B` a
/// byte); a bare number is not a rate.
pub fn parse_rate(s: &str) -> Result<f64, UnitError> {
    let (value, unit) = split_number(s)?;
    let bad = || UnitError { input: s.to_string(), problem: Problem::Unit };
    let per_second = unit.strip_suffix("ps").or_else(|| unit.strip_suffix("/s")).ok_or_else(bad)?;
    let (prefix, bits) = if let Some(p) = per_second.strip_suffix('b') {
        (p, 1.0)
    } else if let Some(p) = per_second.strip_suffix('B') {
        (p, 8.0)
    } else {
        return Err(bad());
    };
    let mult = PREFIXES.iter().find(|(p, _)| *p == prefix).map(|(_, m)| *m).ok_or_else(bad)?;
    Ok(value * mult * bits)
}

/// Units of a duration, longest first (what [`format_duration`] writes and [`parse_duration`]
/// reads; `µs` is read as `us`).
const DURATION_UNITS: &[(&str, u128)] = &[("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1)];

/// A duration: a number (fractions allowed) and a unit, `s`, `ms`, `us` (or `µs`) or `ns`:
/// `4s`, `1.5s`, `200ms`, `250us`. A bare number is refused (`Problem::Unit`): seconds and
/// milliseconds are both common, so the unit must be said. Rounded to the nanosecond.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, UnitError> {
    let (value, unit) = split_number(s)?;
    let unit = if unit == "µs" { "us" } else { unit };
    let nanos = DURATION_UNITS
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|(_, n)| *n as f64)
        .ok_or_else(|| UnitError { input: s.to_string(), problem: Problem::Unit })?;
    let total = (value * nanos).round();
    if !total.is_finite() || total < 0.0 || total > u64::MAX as f64 {
        return Err(UnitError { input: s.to_string(), problem: Problem::Number });
    }
    Ok(std::time::Duration::from_nanos(total as u64))
}

/// `d` in the longest unit that holds it exactly (`4s`, `10ms`, `250us`, `7ns`, `0s`):
/// [`parse_duration`] reads it back to the same nanosecond.
pub fn format_duration(d: std::time::Duration) -> String {
    let nanos = d.as_nanos();
    let (unit, per) = DURATION_UNITS.iter().find(|(_, n)| nanos.is_multiple_of(*n)).copied().unwrap_or(("ns", 1));
    format!("{}{unit}", nanos / per)
}

/// `bytes` in the largest binary unit that holds it exactly (`256MiB`, `64KiB`, `1500`):
/// [`parse_size`] reads it back to the same byte.
pub fn format_size(bytes: u64) -> String {
    for (unit, shift) in [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes != 0 && bytes.trailing_zeros() >= shift && (bytes >> shift) < (1 << 53) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// The index [`quantile`] picks in `n` sorted values (`None` for none): nearest rank,
/// `ceil(q·n) − 1` clamped to `0..n`.
pub fn quantile_index(n: usize, q: f64) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let rank = (q.clamp(0.0, 1.0) * n as f64).ceil() as usize;
    Some(rank.clamp(1, n) - 1)
}

/// The `q`-quantile (0..=1) of `sorted` (ascending): the **nearest-rank** definition, the
/// smallest value that at least a fraction `q` of the values do not exceed, i.e. element
/// `ceil(q·n) − 1`. `None` for no values.
///
/// Why this one: it is always a value that was observed (no interpolation between samples),
/// and "p99 ≤ 1 ms" then means exactly "at least 99 % of the samples were at most 1 ms",
/// which is how the testbed's validity rule (lag p99 ≤ 1 ms) is stated. The harness's queueing
/// delay, the testbed's ping statistics and the emulator's lag statistics all use it.
pub fn quantile<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    quantile_index(sorted.len(), q).map(|i| sorted[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_accept_every_spelling_the_tools_accepted() {
        // rdtp's command line (crates/rdtp/src/args.rs tests the rest of its spellings)
        assert_eq!(parse_size("64Mi").unwrap(), 64 << 20);
        assert_eq!(parse_size("2TB").unwrap(), 2_000_000_000_000);
        assert_eq!(parse_size("1TiB").unwrap(), 1 << 40);
        // scenario and experiment files
        assert_eq!(parse_size("20MB").unwrap(), 20_000_000);
        assert_eq!(parse_size("1.5 GiB").unwrap(), 1_610_612_736);
        assert_eq!(parse_size("64KiB").unwrap(), 65536);
        assert_eq!(parse_size("7b").unwrap(), 7);
        for bad in ["", "MiB", "12XB", "-1", "1.2.3M", "1e400", "3 parsecs", "1Mbps"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_size("x").unwrap_err().problem, Problem::Number);
        assert_eq!(parse_size("1 XB").unwrap_err().problem, Problem::Unit);
        assert_eq!(parse_size("1 XB").unwrap_err().suffix(), "XB");
    }

    #[test]
    fn rates_accept_ns3_spellings() {
        assert_eq!(parse_rate("100Mbps").unwrap(), 100e6);
        assert_eq!(parse_rate("1.5Gbps").unwrap(), 1.5e9);
        assert_eq!(parse_rate("800kb/s").unwrap(), 800e3);
        assert_eq!(parse_rate("800Kbps").unwrap(), 800e3);
        assert_eq!(parse_rate("12bps").unwrap(), 12.0);
        assert_eq!(parse_rate("3 b/s").unwrap(), 3.0);
        assert_eq!(parse_rate("10MBps").unwrap(), 80e6);
        assert_eq!(parse_rate("1KB/s").unwrap(), 8e3);
        assert_eq!(parse_rate("2GB/s").unwrap(), 16e9);
        assert_eq!(parse_rate("1KiBps").unwrap(), 8192.0);
        assert_eq!(parse_rate("1MiB/s").unwrap(), 8.0 * 1024.0 * 1024.0);
        for bad in ["fast", "100", "100Mb", "100mbps", "100Mbit", ""] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations_need_a_unit_and_round_trip() {
        use std::time::Duration;
        assert_eq!(parse_duration("4s").unwrap(), Duration::from_secs(4));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration(" 200 ms ").unwrap(), Duration::from_millis(200));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("250µs").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("7ns").unwrap(), Duration::from_nanos(7));
        assert_eq!(parse_duration("4").unwrap_err().problem, Problem::Unit);
        assert_eq!(parse_duration("4 h").unwrap_err().problem, Problem::Unit);
        assert_eq!(parse_duration("ms").unwrap_err().problem, Problem::Number);
        for (d, text) in [
            (Duration::from_secs(4), "4s"),
            (Duration::from_millis(10), "10ms"),
            (Duration::from_millis(1500), "1500ms"),
            (Duration::from_micros(250), "250us"),
            (Duration::from_nanos(7), "7ns"),
            (Duration::ZERO, "0s"),
        ] {
            assert_eq!(format_duration(d), text);
            assert_eq!(parse_duration(text).unwrap(), d);
        }
    }

    #[test]
    fn sizes_format_exactly() {
        for (b, text) in [(256 << 20, "256MiB"), (65536, "64KiB"), (1500, "1500"), (0, "0"), (3 << 40, "3TiB")] {
            assert_eq!(format_size(b), text);
            assert_eq!(parse_size(text).unwrap(), b);
        }
        assert_eq!(format_size(u64::MAX), u64::MAX.to_string());
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), Some(2.0));
        assert_eq!(quantile(&v, 0.51), Some(3.0));
        assert_eq!(quantile(&v, 0.0), Some(1.0));
        assert_eq!(quantile(&v, 1.0), Some(4.0));
        assert_eq!(quantile::<f64>(&[], 0.5), None);
        // 100 values 1..=100: p99 is the 99th, p99.9 the 100th.
        let h: Vec<u32> = (1..=100).collect();
        assert_eq!(quantile(&h, 0.99), Some(99));
        assert_eq!(quantile(&h, 0.999), Some(100));
        assert_eq!(quantile(&h, 0.95), Some(95));
        // Not the rounded (n − 1)·q rank, which gives the 3rd of 4 values for the median
        // (and 9.9 → the 100th of 1..=100 for p90).
        assert_eq!(quantile(&h, 0.9), Some(90));
    }
}
