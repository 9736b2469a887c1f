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

/// The type and accepted range of a key's value (ranges are inclusive).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Bool,
    Int { min: u64, max: u64 },
    Float { min: f64, max: f64 },
}

/// A key's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(u64),
    Float(f64),
}

/// A config field type a key can hold: its [`Value`] and back (a value of the key's kind).
pub trait Field: Copy {
    fn to_value(self) -> Value;
    fn from_value(v: Value) -> Self;
}

impl Field for bool {
    fn to_value(self) -> Value {
        Value::Bool(self)
    }
    fn from_value(v: Value) -> bool {
        matches!(v, Value::Bool(true))
    }
}

impl Field for u64 {
    fn to_value(self) -> Value {
        Value::Int(self)
    }
    fn from_value(v: Value) -> u64 {
        match v {
            Value::Int(i) => i,
            other => f64::from_value(other) as u64,
        }
    }
}

impl Field for u32 {
    fn to_value(self) -> Value {
        Value::Int(u64::from(self))
    }
    fn from_value(v: Value) -> u32 {
        u32::try_from(u64::from_value(v)).unwrap_or(u32::MAX)
    }
}

impl Field for f64 {
    fn to_value(self) -> Value {
        Value::Float(self)
    }
    fn from_value(v: Value) -> f64 {
        match v {
            Value::Float(f) => f,
            Value::Int(i) => i as f64,
            Value::Bool(b) => f64::from(u8::from(b)),
        }
    }
}

/// Declare a [`Key`] that is a field of the config: `key!(field, kind, "meaning")`, or
/// `key!("name" => field, kind, "meaning")` when the key is not called like the field.
macro_rules! key {
    ($name:expr => $field:ident, $kind:expr, $meaning:expr $(,)?) => {
        $crate::cc::spec::Key {
            name: $name,
            kind: $kind,
            meaning: $meaning,
            get: |c| $crate::cc::spec::Field::to_value(c.$field),
            set: |c, v| c.$field = $crate::cc::spec::Field::from_value(v),
        }
    };
    ($field:ident, $kind:expr, $meaning:expr $(,)?) => {
        $crate::cc::spec::key!(stringify!($field) => $field, $kind, $meaning)
    };
}
pub(crate) use key;

/// Written so that [`Kind::parse`] reads it back exactly (floats in Rust's shortest
/// round-trip form: `1.25`, `2.0`, `inf`).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
        }
    }
}

impl Kind {
    /// Read a value of this kind; `None` if it is not one or out of range.
    pub fn parse(self, text: &str) -> Option<Value> {
        match self {
            Kind::Bool => match text {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            Kind::Int { min, max } => text.parse().ok().filter(|v| (min..=max).contains(v)).map(Value::Int),
            Kind::Float { min, max } => text.parse().ok().filter(|v| (min..=max).contains(v)).map(Value::Float),
        }
    }
}

/// What a value must be, as error messages and the help text say it.
impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Kind::Bool => f.write_str("true or false"),
            Kind::Int { min, max: u64::MAX } => write!(f, "an integer ≥ {min}"),
            Kind::Int { min, max } => write!(f, "an integer in {min}..={max}"),
            Kind::Float { min, max } if max == f64::INFINITY => write!(f, "a number ≥ {min:?} (inf allowed)"),
            Kind::Float { min, max } => write!(f, "a number in {min:?}..={max:?}"),
        }
    }
}

/// One key of a controller's spec, declared next to the controller's config struct.
pub struct Key<C> {
    pub name: &'static str,
    pub kind: Kind,
    /// One line: what the key does (and where it comes from).
    pub meaning: &'static str,
    pub get: fn(&C) -> Value,
    /// Called only with values of `kind`, in range.
    pub set: fn(&mut C, Value),
}

/// A controller configuration whose parameters are spec keys. Every field of the config is
/// a key, so the canonical spec describes the whole configuration.
pub trait Keyed: Sized + 'static {
    /// The keys, in the order help texts and canonical specs list them.
    const KEYS: &'static [Key<Self>];
}

/// A key of a configuration, with its value in that configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyValue {
    pub name: &'static str,
    pub kind: Kind,
    pub meaning: &'static str,
    pub value: Value,
}

/// A config's keys without its type, so that [`CcConfig`] can hand out any variant's.
pub trait Knobs {
    /// Every key with its current value, in declaration order.
    fn key_values(&self) -> Vec<KeyValue>;
    /// Set `key` (which must be declared) to `value` (which must be of its kind).
    fn set_key(&mut self, key: &str, value: Value);
}

impl<C: Keyed> Knobs for C {
    fn key_values(&self) -> Vec<KeyValue> {
        C::KEYS
            .iter()
            .map(|k| KeyValue { name: k.name, kind: k.kind, meaning: k.meaning, value: (k.get)(self) })
            .collect()
    }
    fn set_key(&mut self, key: &str, value: Value) {
        if let Some(k) = C::KEYS.iter().find(|k| k.name == key) {
            (k.set)(self, value);
        }
    }
}

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
        let mut seen: Vec<&str> = Vec::new();
        for item in keys.into_iter().flat_map(|k| k.split(',')) {
            let Some((key, text)) = item.split_once('=').map(|(k, v)| (k.trim(), v.trim())) else {
                return Err(SpecError::NotKeyValue { spec: spec.to_string(), item: item.trim().to_string() });
            };
            let declared = cc.knobs().key_values();
            let Some(k) = declared.iter().find(|k| k.name == key) else {
                let known = declared.iter().map(|k| k.name).collect::<Vec<_>>().join(", ");
                return Err(SpecError::UnknownKey { controller: name.to_string(), key: key.to_string(), known });
            };
            if seen.contains(&key) {
                return Err(SpecError::Duplicate { spec: spec.to_string(), key: key.to_string() });
            }
            seen.push(key);
            let value = k.kind.parse(text).ok_or_else(|| SpecError::BadValue {
                controller: name.to_string(),
                key: key.to_string(),
                value: text.to_string(),
                expected: k.kind.to_string(),
            })?;
            cc.knobs_mut().set_key(key, value);
        }
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
        assert!(e.contains("bbr, bbr-wifi, bbrp, bbr3, aimd, fixed"), "{e}");
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
