//! Controller specs: the one parser for the strings every front end passes through unchanged
//! (CLI `--cc`, the C ABI's `RdtpReceiverConfig.cc`, the ns-3 consumer's `Controller`
//! attribute, scenario and testbed files), their canonical form, and the help text.
//!
//! ```text
//! spec  = name [ ":" key "=" value *( "," key "=" value ) ]
//! name  = a name of the registry (super::registry::CONTROLLERS; `rdtp fetch --cc help`
//!         lists them): bbr, bbr-wifi, aimd, fixed, …
//! key   = a key the controller declares next to its config struct (its `Keyed::KEYS`)
//! value = true | false            for switches
//!       | unsigned integer        for counts
//!       | number (Rust f64 syntax, `inf` where the range allows it)
//! ```
//!
//! Blanks around names, keys and values are ignored; a key may appear once. The name picks
//! a base configuration (an alias such as `bbrp` is `bbr` with other defaults) and the keys
//! change it: `bbrp:probe_gain=2`, `fixed:window=32`, `aimd:beta=0.7,disable_cwa=true`.
//! `CcConfig`'s `Display` writes the canonical spec — the name the receiver reports plus the
//! keys that differ from that name's base — and parsing it gives the same configuration.

use core::fmt;
use core::str::FromStr;

use super::CcConfig;
use super::registry::{self, CONTROLLERS};
use crate::spec::ItemError;
pub(crate) use crate::spec::key;
/// The key tables are [`crate::spec`]'s, shared with the receiver's, router's and content
/// store's specs; controllers name them from here.
pub use crate::spec::{Field, Key, KeyValue, Keyed, Kind, Knobs, Value};

/// Why a spec was refused. Each message says what would have been accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("unknown controller '{name}' (controllers: {known})")]
    UnknownController { name: String, known: String },
    #[error("controller '{controller}' has no key '{key}' (its keys: {known})")]
    UnknownKey { controller: String, key: String, known: String },
    #[error("'{item}' in controller spec '{spec}' is not key=value (spec: NAME[:KEY=VALUE,...])")]
    NotKeyValue { spec: String, item: String },
    #[error("key '{key}' given twice in controller spec '{spec}'")]
    Duplicate { spec: String, key: String },
    #[error("{controller}: {key}={value}: the value must be {expected}")]
    BadValue { controller: String, key: String, value: String, expected: String },
}

impl FromStr for CcConfig {
    type Err = SpecError;

    /// Parse a spec (see the module docs).
    fn from_str(spec: &str) -> Result<CcConfig, SpecError> {
        let (name, keys) = match spec.split_once(':') {
            Some((name, keys)) => (name.trim(), Some(keys)),
            None => (spec.trim(), None),
        };
        let entry = registry::lookup(name).ok_or_else(|| SpecError::UnknownController {
            name: name.to_string(),
            known: CcConfig::NAMES.join(", "),
        })?;
        let mut cc = (entry.base)();
        let Some(keys) = keys else { return Ok(cc) };
        crate::spec::apply_items(cc.knobs_mut(), keys).map_err(|e| match e {
            ItemError::NotKeyValue { item } => SpecError::NotKeyValue { spec: spec.to_string(), item },
            ItemError::UnknownKey { key, known } => SpecError::UnknownKey { controller: name.to_string(), key, known },
            ItemError::Duplicate { key } => SpecError::Duplicate { spec: spec.to_string(), key },
            ItemError::BadValue { key, value, expected } => {
                SpecError::BadValue { controller: name.to_string(), key, value, expected }
            }
        })?;
        Ok(cc)
    }
}

/// `key=value` for every key of `cc` whose value differs from `base`, comma-separated, after
/// `lead` (":" in a spec); nothing if none differs.
fn write_changed_keys(f: &mut impl fmt::Write, lead: &str, cc: &CcConfig, base: Option<&CcConfig>) -> fmt::Result {
    let defaults = base.map(|b| b.knobs().key_values()).unwrap_or_default();
    let mut sep = lead;
    for k in cc.knobs().key_values() {
        if !defaults.iter().any(|d| d.name == k.name && d.value == k.value) {
            write!(f, "{sep}{}={}", k.name, k.value)?;
            sep = ",";
        }
    }
    Ok(())
}

/// The canonical spec: the name the receiver reports, then the keys that differ from that
/// name's base configuration (`bbr`, `bbrp:probe_gain=2.0`, `fixed:window=32`).
impl fmt::Display for CcConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name();
        f.write_str(name)?;
        let base = registry::lookup(name).map(|e| (e.base)());
        write_changed_keys(f, ":", self, base.as_ref())
    }
}

/// Fold the options that predate specs into `spec`: `--window N` (scenario files'
/// `fixed_window`, testbed files' `window`) is the key `window` (of `fixed`), `--probe-gain G`
/// (`probe_gain` in both files) is the key `probe_gain` (of the BBR family). This is the one
/// place they become keys; the result parses like any spec, so a controller without the key
/// gets the usual unknown-key error.
pub fn with_legacy_options(spec: &str, window: Option<u32>, probe_gain: Option<f64>) -> String {
    let mut out = spec.to_string();
    let keys =
        [window.map(|w| ("window", Value::Int(u64::from(w)))), probe_gain.map(|g| ("probe_gain", Value::Float(g)))];
    for (key, value) in keys.into_iter().flatten() {
        out.push(if out.contains(':') { ',' } else { ':' });
        out.push_str(&format!("{key}={value}"));
    }
    out
}

/// The controller a flow without a spec runs: the one its options that predate specs belong
/// to (`window`: `fixed`; `probe_gain`: `bbr`; both: `fixed`, whose unknown-key error then
/// names `probe_gain`), else the receivers' default ([`registry::DEFAULT`]).
pub fn legacy_base(window: Option<u32>, probe_gain: Option<f64>) -> &'static str {
    match (window, probe_gain) {
        (Some(_), _) => "fixed",
        (None, Some(_)) => "bbr",
        (None, None) => registry::DEFAULT,
    }
}

/// The deprecation warning for the options that predate specs, if any is given: `names` are
/// what the front end calls them (`["--window", "--probe-gain"]`, a scenario file's
/// `["fixed_window", "probe_gain"]`), and the warning names the spec to write instead. They
/// still work for this release ([`with_legacy_options`]) and go in the next.
pub fn legacy_warning(spec: &str, window: Option<u32>, probe_gain: Option<f64>, names: [&str; 2]) -> Option<String> {
    let given: Vec<&str> = [window.map(|_| names[0]), probe_gain.map(|_| names[1])].into_iter().flatten().collect();
    let verb = match given.len() {
        0 => return None,
        1 => "is",
        _ => "are",
    };
    Some(format!(
        "{} {verb} deprecated and will be removed in the next release: give the controller spec {} instead",
        given.join(" and "),
        with_legacy_options(spec, window, probe_gain)
    ))
}

/// Every controller with its keys, their defaults and meaning (`rdtp fetch --cc help`,
/// `rdtp_cc_help()`).
pub fn help() -> String {
    let mut out = String::from(
        "Controller specs: NAME[:KEY=VALUE,...], e.g. bbr:probe_gain=1.5, fixed:window=32,\n\
         aimd:beta=0.7,disable_cwa=true. Keys not given keep the defaults shown.\n",
    );
    for entry in CONTROLLERS {
        let base = (entry.base)();
        out.push_str(&format!("\n{:<14}{}\n", entry.name, entry.about));
        let family = registry::family(&base);
        if family.name != entry.name {
            // An alias: say which keys make it, rather than repeat the family's list.
            let mut same = format!("  = {}", family.name);
            let _ = write_changed_keys(&mut same, ":", &base, Some(&(family.base)()));
            out.push_str(&same);
            out.push('\n');
            continue;
        }
        for k in base.knobs().key_values() {
            let setting = format!("{}={}", k.name, k.value);
            out.push_str(&format!("  {setting:<20} {}\n  {:<20} {}\n", k.meaning, "", k.kind));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{aimd::AimdConfig, bbr::BbrConfig, fixed::FixedConfig};

    fn parse(s: &str) -> Result<CcConfig, SpecError> {
        s.parse()
    }

    #[test]
    fn names_and_keys() {
        assert_eq!(parse("bbr").unwrap(), CcConfig::new(BbrConfig::default()));
        assert_eq!(parse(" bbr-wifi ").unwrap(), CcConfig::new(BbrConfig::wifi()));
        assert_eq!(parse("bbrp").unwrap(), CcConfig::new(BbrConfig::bbrp(1.5)));
        assert_eq!(parse("bbr:probe_gain=1.5").unwrap(), CcConfig::new(BbrConfig::bbrp(1.5)));
        assert_eq!(parse("bbrp:probe_gain=2").unwrap(), CcConfig::new(BbrConfig::bbrp(2.0)));
        assert_eq!(parse("fixed:window=32").unwrap(), CcConfig::new(FixedConfig { window: 32 }));
        assert_eq!(
            parse("aimd: beta = 0.7 , disable_cwa=true,init_ssthresh=inf").unwrap(),
            CcConfig::new(AimdConfig { beta: 0.7, disable_cwa: true, ..AimdConfig::default() })
        );
        assert_eq!(
            parse("bbr:init_cwnd=20,probe_rtt=false,lt_bw=false,wifi=true").unwrap(),
            CcConfig::new(BbrConfig { init_cwnd: 20, probe_rtt: false, lt_bw: false, ..BbrConfig::wifi() })
        );
    }

    #[test]
    fn errors_say_what_is_accepted() {
        let e = parse("reno").unwrap_err().to_string();
        assert_eq!(e, format!("unknown controller 'reno' (controllers: {})", CcConfig::NAMES.join(", ")));
        assert!(e.contains("bbr, bbr-wifi, bbrp, bbr3, bbr3-rdtp, aimd, fixed"), "{e}");
        assert!(e.contains("cctcp, cctcp-single, icp"), "{e}");
        let e = parse("aimd:probe_gain=2").unwrap_err().to_string();
        assert_eq!(
            e,
            "controller 'aimd' has no key 'probe_gain' \
             (its keys: init_cwnd, init_ssthresh, step, beta, reset_to_init, disable_cwa, rto_only)"
        );
        let e = parse("bbr:probe_gain=0.5").unwrap_err().to_string();
        assert_eq!(e, "bbr: probe_gain=0.5: the value must be a number in 1.0..=4.0");
        let e = parse("fixed:window=0").unwrap_err().to_string();
        assert_eq!(e, "fixed: window=0: the value must be an integer in 1..=4294967295");
        assert!(
            matches!(parse("bbr:wifi=yes"), Err(SpecError::BadValue { expected, .. }) if expected == "true or false")
        );
        assert!(matches!(parse("bbr:probe_gain=nan"), Err(SpecError::BadValue { .. })));
        assert!(matches!(parse("bbr:"), Err(SpecError::NotKeyValue { .. })));
        assert!(matches!(parse("bbr:wifi"), Err(SpecError::NotKeyValue { .. })));
        assert!(matches!(parse("bbr:wifi=true,"), Err(SpecError::NotKeyValue { .. })));
        assert!(matches!(parse("bbr:wifi=true,wifi=false"), Err(SpecError::Duplicate { .. })));
        assert!(matches!(parse(""), Err(SpecError::UnknownController { .. })));
    }

    #[test]
    fn canonical_form_round_trips() {
        for (spec, canonical) in [
            ("bbr", "bbr"),
            ("bbr:wifi=true", "bbr-wifi"),
            ("bbr:probe_gain=1.5", "bbrp"),
            ("bbrp:probe_gain=2", "bbrp:probe_gain=2.0"),
            ("bbr-wifi:probe_gain=1.5", "bbr-wifi:probe_gain=1.5"),
            ("bbr-wifi:wifi=false", "bbr"),
            ("fixed:window=32", "fixed:window=32"),
            ("aimd:disable_cwa=true,beta=0.7", "aimd:beta=0.7,disable_cwa=true"),
            ("bbr:init_cwnd=1", "bbr-orig"),
            ("bbr-orig:init_cwnd=10", "bbr"),
            ("bbr-cd", "bbr-cd"),
            ("bbr-cd:alpha=4,new_first=false", "bbr-cd:alpha=4.0,new_first=false"),
            ("cubic:beta=0.5,fast_conv=false", "cubic:beta=0.5,fast_conv=false"),
            ("sirc:gaps=20", "sirc:gaps=20"),
        ] {
            let cc = parse(spec).unwrap();
            assert_eq!(cc.to_string(), canonical, "{spec}");
            assert_eq!(parse(&cc.to_string()).unwrap(), cc, "{spec}");
        }
    }

    #[test]
    fn legacy_options_become_keys() {
        assert_eq!(with_legacy_options("fixed", Some(10), None), "fixed:window=10");
        assert_eq!(with_legacy_options("bbrp", None, Some(2.0)), "bbrp:probe_gain=2.0");
        assert_eq!(with_legacy_options("bbr:wifi=true", None, Some(1.5)), "bbr:wifi=true,probe_gain=1.5");
        assert_eq!(with_legacy_options("aimd", None, None), "aimd");
        assert_eq!(parse(&with_legacy_options("bbrp", None, Some(2.0))).unwrap(), CcConfig::new(BbrConfig::bbrp(2.0)));
    }

    #[test]
    fn legacy_options_are_deprecated_naming_the_spec() {
        assert_eq!(legacy_warning("bbr", None, None, ["--window", "--probe-gain"]), None);
        assert_eq!(
            legacy_warning("bbrp", None, Some(2.0), ["fixed_window", "probe_gain"]).unwrap(),
            "probe_gain is deprecated and will be removed in the next release: give the controller spec \
             bbrp:probe_gain=2.0 instead"
        );
        let w = legacy_warning("fixed", Some(8), Some(1.5), ["--window", "--probe-gain"]).unwrap();
        assert!(w.starts_with("--window and --probe-gain are deprecated"), "{w}");
    }

    #[test]
    fn help_lists_every_controller_and_key() {
        let h = help();
        for entry in CONTROLLERS {
            assert!(h.contains(&format!("\n{:<14}{}", entry.name, entry.about)), "{h}");
            for k in (entry.base)().knobs().key_values() {
                assert!(h.contains(&format!("{}=", k.name)), "{} missing:\n{h}", k.name);
            }
        }
        assert!(h.contains("  = bbr:wifi=true\n"), "{h}");
        assert!(h.contains("= bbr:probe_gain=1.5"), "{h}");
        assert!(h.contains("window=64"), "{h}");
    }
}
