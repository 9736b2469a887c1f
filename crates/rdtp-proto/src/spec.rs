//! Key tables: the one parser behind every configuration string of rdtp — controller specs
//! ([`crate::cc::spec`], `bbr:probe_gain=2`), receiver specs
//! ([`crate::receiver::ReceiverConfig::apply_spec`], `rto_k=8,idle_timeout=30s`), router
//! specs ([`crate::router::RouterConfig::apply_spec`], `cs_policy=lfu,pit_size=4096`) and
//! content-store specs ([`crate::router::cs::CsConfig`]'s `FromStr`, `lfu:units=1000`).
//!
//! ```text
//! keys  = key "=" value *( "," key "=" value )
//! key   = a key the configuration declares next to its struct (its `Keyed::KEYS`)
//! value = true | false                 for switches
//!       | unsigned integer             for counts
//!       | number (Rust f64 syntax)     for ratios and rates (`inf` where the range allows)
//!       | size: 1500, 64KiB, 256MiB    (rdtp_units::parse_size)
//!       | duration: 4s, 200ms, 250us   (rdtp_units::parse_duration; a unit is required)
//!       | a name or keyword            (a policy, a strategy, a node id, `prob:0.125`)
//! ```
//!
//! Blanks around keys and values are ignored; a key may appear once per string. A node's
//! spec may be several such lists separated by `;`, applied in order, so that a later one
//! overrides an earlier one (a host's own keys, then the user's: `seed=7;seed=9` is seed 9). A
//! configuration declares its keys once ([`Keyed`], with the [`key!`] macro: the key's name,
//! the field it sets, its [`Kind`] — type and accepted range — and one line saying what it
//! does). From that table come the parser ([`apply`]), validation (errors name the key and
//! what it accepts), the help text ([`help`]) and the canonical form ([`changed`]: the keys
//! that differ from a base, which parse back to the same configuration). A new option is
//! therefore its field, one `key!` line, and the code where it acts; every front end (CLI,
//! scenario files, testbed, C ABI, ns-3) passes the string through unchanged.
//!
//! This module must not know any particular configuration: the tables live beside the
//! structs they describe.

use core::fmt;
use core::time::Duration;

/// How a named value (a policy, a strategy, a node id) is checked: what is accepted, as help
/// and errors say it, and the check itself, which returns the value's canonical text (or
/// why it is refused).
#[derive(Clone, Copy, Debug)]
pub struct Text {
    pub expected: fn() -> String,
    pub check: fn(&str) -> Result<String, String>,
}

impl Text {
    /// The [`Text`] kind of a type read with `FromStr` and written with `Display`.
    pub const fn of<T: Named>() -> Kind {
        Kind::Text(Text { expected: T::expected, check: check_text::<T> })
    }
}

/// A type a key holds as text: what it accepts, for help and errors.
pub trait Named: core::str::FromStr<Err: fmt::Display> + fmt::Display {
    fn expected() -> String;
}

fn check_text<T: Named>(text: &str) -> Result<String, String> {
    text.parse::<T>().map(|v| v.to_string()).map_err(|e| e.to_string())
}

/// The type and accepted range of a key's value (ranges are inclusive).
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Bool,
    Int {
        min: u64,
        max: u64,
    },
    Float {
        min: f64,
        max: f64,
    },
    /// A byte count, written with or without a unit (`65536`, `64KiB`).
    Size {
        min: u64,
        max: u64,
    },
    /// A duration with its unit (`4s`, `10ms`).
    Duration {
        min: Duration,
        max: Duration,
    },
    Text(Text),
}

/// A key's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(u64),
    Float(f64),
    Size(u64),
    Duration(Duration),
    /// The canonical text of a named value.
    Text(String),
}

/// A config field type a key can hold: its [`Value`] and back (a value of the key's kind).
pub trait Field: Sized {
    fn to_value(&self) -> Value;
    fn from_value(v: Value) -> Self;
}

impl Field for bool {
    fn to_value(&self) -> Value {
        Value::Bool(*self)
    }
    fn from_value(v: Value) -> bool {
        matches!(v, Value::Bool(true))
    }
}

impl Field for u64 {
    fn to_value(&self) -> Value {
        Value::Int(*self)
    }
    fn from_value(v: Value) -> u64 {
        match v {
            Value::Int(i) | Value::Size(i) => i,
            other => f64::from_value(other) as u64,
        }
    }
}

impl Field for u32 {
    fn to_value(&self) -> Value {
        Value::Int(u64::from(*self))
    }
    fn from_value(v: Value) -> u32 {
        u32::try_from(u64::from_value(v)).unwrap_or(u32::MAX)
    }
}

impl Field for u16 {
    fn to_value(&self) -> Value {
        Value::Int(u64::from(*self))
    }
    fn from_value(v: Value) -> u16 {
        u16::try_from(u64::from_value(v)).unwrap_or(u16::MAX)
    }
}

impl Field for usize {
    fn to_value(&self) -> Value {
        Value::Int(*self as u64)
    }
    fn from_value(v: Value) -> usize {
        usize::try_from(u64::from_value(v)).unwrap_or(usize::MAX)
    }
}

impl Field for f64 {
    fn to_value(&self) -> Value {
        Value::Float(*self)
    }
    fn from_value(v: Value) -> f64 {
        match v {
            Value::Float(f) => f,
            Value::Int(i) | Value::Size(i) => i as f64,
            Value::Bool(b) => f64::from(u8::from(b)),
            Value::Duration(d) => d.as_secs_f64(),
            Value::Text(_) => 0.0,
        }
    }
}

impl Field for Duration {
    fn to_value(&self) -> Value {
        Value::Duration(*self)
    }
    fn from_value(v: Value) -> Duration {
        match v {
            Value::Duration(d) => d,
            _ => Duration::ZERO,
        }
    }
}

/// An optional duration: `0s` is "none" (as `--upstream-timeout 0` is "never").
impl Field for Option<Duration> {
    fn to_value(&self) -> Value {
        Value::Duration(self.unwrap_or(Duration::ZERO))
    }
    fn from_value(v: Value) -> Option<Duration> {
        Some(Duration::from_value(v)).filter(|d| !d.is_zero())
    }
}

/// `0` is "none" (as the receiver's `max_inflight=0`: no cap).
impl Field for Option<u64> {
    fn to_value(&self) -> Value {
        Value::Int(self.unwrap_or(0))
    }
    fn from_value(v: Value) -> Option<u64> {
        Some(u64::from_value(v)).filter(|&n| n != 0)
    }
}

/// An optional number: `0` is "none" (as `--forward-rate 0` is "no limit").
impl Field for Option<f64> {
    fn to_value(&self) -> Value {
        Value::Float(self.unwrap_or(0.0))
    }
    fn from_value(v: Value) -> Option<f64> {
        Some(f64::from_value(v)).filter(|&x| x != 0.0)
    }
}

/// [`Field`] for a type read and written as text (its `FromStr` and `Display`).
macro_rules! text_field {
    ($($t:ty),+ $(,)?) => {$(
        impl $crate::spec::Field for $t {
            fn to_value(&self) -> $crate::spec::Value {
                $crate::spec::Value::Text(self.to_string())
            }
            fn from_value(v: $crate::spec::Value) -> $t {
                match v {
                    $crate::spec::Value::Text(t) => t.parse().unwrap_or_default(),
                    _ => <$t>::default(),
                }
            }
        }
    )+};
}
pub(crate) use text_field;

/// Declare a [`Key`] that is a field of the config: `key!(field, kind, "meaning")`, or
/// `key!("name" => field.sub, kind, "meaning")` when the key is not called like the field
/// (or sets a field of a field).
macro_rules! key {
    ($name:expr => $($field:ident).+, $kind:expr, $meaning:expr $(,)?) => {
        $crate::spec::Key {
            name: $name,
            kind: $kind,
            meaning: $meaning,
            get: |c| $crate::spec::Field::to_value(&c.$($field).+),
            set: |c, v| c.$($field).+ = $crate::spec::Field::from_value(v),
        }
    };
    ($field:ident, $kind:expr, $meaning:expr $(,)?) => {
        $crate::spec::key!(stringify!($field) => $field, $kind, $meaning)
    };
}
pub(crate) use key;

/// Written so that [`Kind::read`] reads it back exactly (floats in Rust's shortest
/// round-trip form: `1.25`, `2.0`, `inf`; sizes and durations in the largest unit that
/// holds them exactly: `256MiB`, `10ms`).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Size(b) => f.write_str(&rdtp_units::format_size(*b)),
            Value::Duration(d) => f.write_str(&rdtp_units::format_duration(*d)),
            Value::Text(t) => f.write_str(t),
        }
    }
}

impl Kind {
    /// Read a value of this kind; `None` if it is not one or out of range.
    pub fn parse(self, text: &str) -> Option<Value> {
        self.read(text).ok()
    }

    /// Read a value of this kind, or say what it must be.
    pub fn read(self, text: &str) -> Result<Value, String> {
        let found = match self {
            Kind::Bool => match text {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            Kind::Int { min, max } => text.parse().ok().filter(|v| (min..=max).contains(v)).map(Value::Int),
            Kind::Float { min, max } => text.parse().ok().filter(|v| (min..=max).contains(v)).map(Value::Float),
            Kind::Size { min, max } => text
                .parse::<u64>()
                .ok()
                .or_else(|| rdtp_units::parse_size(text).ok())
                .filter(|v| (min..=max).contains(v))
                .map(Value::Size),
            Kind::Duration { min, max } => {
                rdtp_units::parse_duration(text).ok().filter(|v| (min..=max).contains(v)).map(Value::Duration)
            }
            Kind::Text(t) => (t.check)(text).ok().map(Value::Text),
        };
        found.ok_or_else(|| self.to_string())
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
            Kind::Size { min, max: u64::MAX } => {
                write!(f, "a size ≥ {} (bytes, or with a unit: 64KiB, 256MiB, 1GB)", rdtp_units::format_size(min))
            }
            Kind::Size { min, max } => write!(
                f,
                "a size in {}..={} (bytes, or with a unit: 64KiB, 256MiB, 1GB)",
                rdtp_units::format_size(min),
                rdtp_units::format_size(max)
            ),
            Kind::Duration { min, max } => write!(
                f,
                "a duration in {}..={} (with its unit: s, ms, us, ns)",
                rdtp_units::format_duration(min),
                rdtp_units::format_duration(max)
            ),
            Kind::Text(t) => f.write_str(&(t.expected)()),
        }
    }
}

/// One key of a configuration, declared next to the configuration's struct.
pub struct Key<C> {
    pub name: &'static str,
    pub kind: Kind,
    /// One line: what the key does (and where it comes from).
    pub meaning: &'static str,
    pub get: fn(&C) -> Value,
    /// Called only with values of `kind`, in range.
    pub set: fn(&mut C, Value),
}

/// A configuration whose parameters are spec keys. A controller's config has every field
/// as a key, so its canonical spec describes it whole; a node's ([`crate::receiver::ReceiverConfig`],
/// [`crate::router::RouterConfig`]) leaves out what only a host can supply (the controller,
/// which has its own spec, routes, secrets, address tokens).
pub trait Keyed: Sized + 'static {
    /// The keys, in the order help texts and canonical specs list them.
    const KEYS: &'static [Key<Self>];
}

/// A key of a configuration, with its value in that configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyValue {
    pub name: &'static str,
    pub kind: Kind,
    pub meaning: &'static str,
    pub value: Value,
}

impl PartialEq for Kind {
    /// Same type and range (two [`Kind::Text`]s are equal if they accept the same, as
    /// their `expected` text says).
    fn eq(&self, other: &Kind) -> bool {
        match (self, other) {
            (Kind::Text(a), Kind::Text(b)) => (a.expected)() == (b.expected)(),
            _ => self.to_string() == other.to_string(),
        }
    }
}

/// A config's keys without its type, so that [`crate::cc::CcConfig`] can hand out any
/// variant's.
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
            .map(|k| KeyValue { name: k.name, kind: k.kind, meaning: k.meaning, value: sized(k.kind, (k.get)(self)) })
            .collect()
    }
    fn set_key(&mut self, key: &str, value: Value) {
        if let Some(k) = C::KEYS.iter().find(|k| k.name == key) {
            (k.set)(self, value);
        }
    }
}

/// A count held by a [`Kind::Size`] key is a size (written with units).
fn sized(kind: Kind, value: Value) -> Value {
    match (kind, value) {
        (Kind::Size { .. }, Value::Int(b)) => Value::Size(b),
        (_, v) => v,
    }
}

/// Why one `key=value` list was refused (the caller says whose list it was).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemError {
    /// An item without `=` (or an empty item).
    NotKeyValue {
        item: String,
    },
    UnknownKey {
        key: String,
        known: String,
    },
    Duplicate {
        key: String,
    },
    /// `expected` says what the key accepts.
    BadValue {
        key: String,
        value: String,
        expected: String,
    },
}

/// Set the keys of `items` (`key=value,key=value`; blanks ignored, each key at most once)
/// on `config`, in order; on the first bad item nothing more is set.
pub fn apply_items(config: &mut dyn Knobs, items: &str) -> Result<(), ItemError> {
    let mut seen: Vec<&str> = Vec::new();
    for item in items.split(',') {
        let Some((key, text)) = item.split_once('=').map(|(k, v)| (k.trim(), v.trim())) else {
            return Err(ItemError::NotKeyValue { item: item.trim().to_string() });
        };
        let declared = config.key_values();
        let Some(k) = declared.iter().find(|k| k.name == key) else {
            let known = declared.iter().map(|k| k.name).collect::<Vec<_>>().join(", ");
            return Err(ItemError::UnknownKey { key: key.to_string(), known });
        };
        if seen.contains(&key) {
            return Err(ItemError::Duplicate { key: key.to_string() });
        }
        seen.push(key);
        let value = k.kind.read(text).map_err(|expected| ItemError::BadValue {
            key: key.to_string(),
            value: text.to_string(),
            expected,
        })?;
        config.set_key(key, value);
    }
    Ok(())
}

/// Why a node's spec (receiver, router, content store) was refused: whose it was, the spec,
/// and what is wrong. Each message names the key and says what would have been accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct ConfigError {
    /// Whose spec: "receiver", "router", "content store".
    pub what: &'static str,
    pub spec: String,
    pub error: ItemError,
}

impl ConfigError {
    fn message(&self) -> String {
        let (what, spec) = (self.what, &self.spec);
        match &self.error {
            ItemError::NotKeyValue { item } => {
                format!("'{item}' in {what} spec '{spec}' is not key=value (spec: KEY=VALUE[,...])")
            }
            ItemError::UnknownKey { key, known } => format!("{what} has no key '{key}' (its keys: {known})"),
            ItemError::Duplicate { key } => format!("key '{key}' given twice in {what} spec '{spec}'"),
            ItemError::BadValue { key, value, expected } => {
                format!("{what}: {key}={value}: the value must be {expected}")
            }
        }
    }
}

/// The keys `spec` names, in order (whether or not it is valid): for a host that must know
/// whether a key was given (a fetch sizes its unit to the MTU unless `unit` is given).
pub fn names(spec: &str) -> impl Iterator<Item = &str> {
    spec.split(',').filter_map(|item| item.split_once('=')).map(|(k, _)| k.trim())
}

/// Apply the spec `spec` (see the module docs; blank for none) of `what` ("receiver", …) to
/// `config`. A node's spec may be several, separated by `;`, applied in order: a later one
/// may set a key an earlier one set (a host's own keys, then a user's), while within one a
/// key may appear once.
pub fn apply<C: Keyed>(config: &mut C, what: &'static str, spec: &str) -> Result<(), ConfigError> {
    for part in spec.split(';').filter(|p| !p.trim().is_empty()) {
        apply_items(config, part).map_err(|error| ConfigError { what, spec: part.to_string(), error })?;
    }
    Ok(())
}

/// `key=value` for every key of `config` whose value differs from `base`'s, comma-separated
/// (empty if none differs): applied to `base`, it gives `config` back (as far as keys go).
pub fn changed(config: &dyn Knobs, base: &dyn Knobs) -> String {
    let defaults = base.key_values();
    let mut out = String::new();
    for k in config.key_values() {
        if !defaults.iter().any(|d| d.name == k.name && d.value == k.value) {
            if !out.is_empty() {
                out.push(',');
            }
            out.push_str(&format!("{}={}", k.name, k.value));
        }
    }
    out
}

/// Every key of `base` with its value there (the default), its meaning and what it accepts,
/// after `title` (`--receiver help`, `--router help`, `--cs help`).
pub fn help(title: &str, base: &dyn Knobs) -> String {
    let mut out = String::from(title);
    for k in base.key_values() {
        let setting = format!("{}={}", k.name, k.value);
        out.push_str(&format!("  {setting:<26} {}\n  {:<26} {}\n", k.meaning, "", k.kind));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Demo {
        on: bool,
        count: u32,
        wait: Duration,
        room: u64,
        limit: Option<Duration>,
    }

    impl Keyed for Demo {
        const KEYS: &'static [Key<Demo>] = &[
            key!(on, Kind::Bool, "a switch"),
            key!(count, Kind::Int { min: 1, max: 10 }, "a count"),
            key!(wait, Kind::Duration { min: Duration::from_millis(1), max: Duration::from_secs(60) }, "a wait"),
            key!("bytes" => room, Kind::Size { min: 0, max: u64::MAX }, "a size"),
            key!(limit, Kind::Duration { min: Duration::ZERO, max: Duration::from_secs(60) }, "0s: none"),
        ];
    }

    fn demo() -> Demo {
        Demo { on: false, count: 3, wait: Duration::from_secs(1), room: 1 << 20, limit: None }
    }

    #[test]
    fn keys_parse_validate_and_print_back() {
        let mut d = demo();
        apply(&mut d, "demo", " on = true, wait=250ms,bytes=64KiB ,limit=2s").unwrap();
        assert_eq!(
            d,
            Demo {
                on: true,
                wait: Duration::from_millis(250),
                room: 65536,
                limit: Some(Duration::from_secs(2)),
                ..demo()
            }
        );
        assert_eq!(changed(&d, &demo()), "on=true,wait=250ms,bytes=64KiB,limit=2s");
        let mut back = demo();
        apply(&mut back, "demo", &changed(&d, &demo())).unwrap();
        assert_eq!(back, d);
        apply(&mut d, "demo", "limit=0s,bytes=1000").unwrap();
        assert_eq!((d.limit, d.room), (None, 1000));
        apply(&mut d, "demo", "").unwrap();
        // Specs in sequence: the later sets a key again.
        apply(&mut d, "demo", "count=4,on=false; count=5;").unwrap();
        assert_eq!((d.count, d.on), (5, false));
        assert_eq!(apply(&mut d, "demo", "count=4;count=11").unwrap_err().spec, "count=11");
    }

    #[test]
    fn errors_name_the_key_and_what_it_accepts() {
        let e = |s: &str| apply(&mut demo(), "demo", s).unwrap_err().to_string();
        assert_eq!(e("count=11"), "demo: count=11: the value must be an integer in 1..=10");
        assert_eq!(
            e("wait=5"),
            "demo: wait=5: the value must be a duration in 1ms..=60s (with its unit: s, ms, us, ns)"
        );
        assert_eq!(e("size=1"), "demo has no key 'size' (its keys: on, count, wait, bytes, limit)");
        assert_eq!(e("on=true,on=false"), "key 'on' given twice in demo spec 'on=true,on=false'");
        assert_eq!(e("on"), "'on' in demo spec 'on' is not key=value (spec: KEY=VALUE[,...])");
        assert!(e("bytes=12XB").contains("a size ≥ 0"), "{}", e("bytes=12XB"));
    }

    #[test]
    fn help_lists_defaults_and_kinds() {
        let h = help("Demo keys:\n", &demo());
        assert!(h.starts_with("Demo keys:\n  on=false"), "{h}");
        assert!(h.contains("wait=1s"), "{h}");
        assert!(h.contains("bytes=1MiB"), "{h}");
        assert!(h.contains("limit=0s"), "{h}");
    }
}
