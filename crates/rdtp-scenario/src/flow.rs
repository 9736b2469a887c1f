//! One `[[flow]]` for both front ends: what `rdtp sim` runs in ns-3 (a scenario file's
//! `[[flow]]`) and what `rdtp testbed` runs as real processes (an experiment file's
//! `[[flow]]`) is the same [`Flow`], so a flow's text can be pasted between
//! `experiments/*.toml` and `testbed/*.toml`, and a flow option added here is read by both.
//!
//! The rule for what each front end reads:
//! * the fields every flow has (`kind`, `cc`, `count`, `start`, `stop`, `size`, `label`) and
//!   the receiver options (`config` and the fields short for its keys, [`Flow::receiver_spec`])
//!   mean the same in both; a new receiver option is a field and a line of `receiver_spec`;
//! * [`Flow::sim_only`] names the fields only rdtp-sim can honour (client placement, UDP
//!   rates, graph servers, directions, informed start, workloads): the testbed refuses a flow
//!   that sets one rather than ignore it;
//! * `[flow.testbed]` ([`TestbedFlow`]) holds what only the testbed's processes have: how many
//!   share a client namespace, the fetched bytes kept, logs, more `rdtp fetch` arguments.
//!   rdtp-sim checks its keys (a typo is still an error) and ignores its values.
//!
//! This module holds the schema and the checks that need only the flow; the checks that need
//! the whole file (topology, duration) stay with each front end (`validate` in lib.rs, the
//! testbed's `experiment::validate`). It runs nothing and reads no files.

use rdtp_proto::cc::spec;
use serde::Deserialize;
use toml::{Table, Value};

use crate::{Error, Quantity, Size, one};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// "rdtp", "tcp" (with `cc`), "tcp-bbr", "tcp-cubic", "tcp-reno"; rdtp-sim only: "udp",
    /// "workload".
    pub kind: String,
    /// rdtp: a controller spec (bbr, bbr-wifi, bbrp:probe_gain=2, fixed:window=32, …;
    /// `rdtp fetch --cc help`; default the receivers' default, bbr3-rdtp, or fixed with
    /// `fixed_window`, bbr with `probe_gain`); tcp: the congestion control (default cubic):
    /// bbr, cubic or reno in ns-3, any kernel TCP_CONGESTION name on the testbed.
    pub cc: Option<String>,
    /// rdtp-sim: client / station index (default: the next unused one).
    pub client: Option<u32>,
    #[serde(default)]
    pub start: f64,
    /// Default: the end of the run.
    pub stop: Option<f64>,
    /// rdtp: object size (default: bulk, never runs out); tcp/udp: bytes to send (default
    /// unlimited; the testbed's TCP flows fetch an object of this size, default bulk too).
    pub size: Option<Size>,
    /// udp (rdtp-sim): sending rate.
    pub rate: Option<Quantity>,
    pub max_aggregation: Option<u32>,
    /// rdtp: short for the cc key probe_gain. Deprecated (removed in the next release): write
    /// the key in `cc` (`cc = "bbrp:probe_gain=2"`); [`Flow::legacy_warning`] says so.
    pub probe_gain: Option<f64>,
    /// rdtp: short for the cc key window (of fixed). Deprecated as `probe_gain`
    /// (`cc = "fixed:window=32"`).
    pub fixed_window: Option<u32>,
    pub unit: Option<u32>,
    /// rdtp: RTTVAR multiplier K of the RTO (default 4, RFC 6298; ndnget's is 8).
    pub rto_k: Option<u32>,
    /// rdtp: seconds without a valid answer before the fetch gives up (default 10).
    pub idle_timeout: Option<f64>,
    /// rdtp, workload: any other receiver options, as a receiver spec `KEY=VALUE,...` handed
    /// unchanged to the core (ns-3's consumer; `rdtp fetch --receiver` on the testbed;
    /// `rdtp fetch --receiver help` lists the keys: `rto_min=1s`,
    /// `max_inflight=100`, …). `max_aggregation`, `unit`, `rto_k` and `idle_timeout` above
    /// are short for keys of it and apply first; a key given here too wins.
    pub config: Option<String>,
    /// Replicate this flow on `count` consecutive clients (the testbed: `count` processes,
    /// `testbed.per_namespace` of them to a client namespace).
    #[serde(default = "one")]
    pub count: u32,
    /// Name of this flow definition in run ids, labels and plots (e.g. "bbrp-2"); read
    /// from the TOML value by `show`, not from here.
    pub label: Option<String>,
    /// Graph topologies (rdtp-sim): the server node it fetches from or is sent by (default: the first).
    pub server: Option<String>,
    /// tcp/udp: "down" (server → client, default) or "up" (client → server: seed 002's
    /// stations sending to the wired node).
    pub direction: Option<String>,
    /// rdtp: informed start (seed 002): "auto" (the rate the receiver's station predicts from
    /// what it overhears; WiFi only; normal start when there is no estimate) or a rate.
    pub initial_rate: Option<Quantity>,
    /// workload (seed 003 §III; graph topologies): fetches started per second on the client
    /// (a Poisson process), each for an object of a catalogue of `objects` objects of `size`
    /// bytes spread over every server in turn, drawn from a Zipf(`alpha`) popularity.
    pub requests: Option<f64>,
    pub alpha: Option<f64>,
    pub objects: Option<u32>,
    /// workload: no fetch starts after this time (scenario seconds; default: none until the
    /// flow stops). The fetches running then go on until the flow stops, so that the last
    /// measured ones finish instead of being cut short by the end of the run (which would
    /// leave the slowest out of the completion times).
    pub last_start: Option<f64>,
    /// workload: fetches replayed through the caching routers before the run, without
    /// packets (Icarus' warm-up: each router on the way looks each unit up, those that miss
    /// cache it as its Data passes back), drawn from this flow's popularity on a random
    /// stream of their own; the run's own warm-up (`scenario.warmup`) follows. Needs `unit`.
    pub prewarm: Option<u32>,
    /// `[flow.testbed]` (or `testbed = { … }` inline): read by rdtp-testbed only.
    #[serde(default)]
    pub testbed: TestbedFlow,
}

/// `[flow.testbed]`: how rdtp-testbed runs a flow's client processes. rdtp-sim reads the
/// keys (unknown ones are errors there too) and ignores the values: ns-3 runs no processes.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TestbedFlow {
    /// Client processes per client namespace (default 1: each process has its own).
    #[serde(default = "one")]
    pub per_namespace: u32,
    /// Keep the fetched bytes and compare them with the served object (byte-exact check).
    #[serde(default)]
    pub save: bool,
    /// rdtp: write `rdtp fetch --log-rtt` / `--log-cwnd` files.
    #[serde(default)]
    pub log: bool,
    /// More `rdtp fetch` arguments.
    #[serde(default)]
    pub args: Vec<String>,
}

impl Default for TestbedFlow {
    fn default() -> Self {
        TestbedFlow { per_namespace: 1, save: false, log: false, args: Vec::new() }
    }
}

impl Flow {
    /// An rdtp or workload flow's receiver spec, as the core reads it: the keys the fields
    /// are short for, then `;` and `config` (which may override them). A workload's fetches
    /// take only `unit` of the fields (as they always did) and `config`.
    pub fn receiver_spec(&self) -> String {
        let mut keys = Vec::new();
        if self.kind != "workload" {
            keys.extend(self.max_aggregation.map(|v| format!("max_aggregation={v}")));
        }
        keys.extend(self.unit.map(|v| format!("unit={v}")));
        if self.kind != "workload" {
            keys.extend(self.rto_k.map(|v| format!("rto_k={v}")));
            keys.extend(self.idle_timeout.filter(|t| t.is_finite() && *t > 0.0 && *t <= 86_400.0).map(|t| {
                format!("idle_timeout={}", rdtp_units::format_duration(std::time::Duration::from_secs_f64(t)))
            }));
        }
        let mut spec = keys.join(",");
        if let Some(c) = self.config.as_deref().filter(|c| !c.trim().is_empty()) {
            if !spec.is_empty() {
                spec.push(';');
            }
            spec.push_str(c);
        }
        spec
    }

    /// The fields set on this flow that only rdtp-sim honours (ns-3 places clients, sends
    /// UDP, routes graphs and runs workloads; the testbed's client processes do none of
    /// these), by their names in the file. A field added for rdtp-sim only is listed here.
    pub fn sim_only(&self) -> Vec<&'static str> {
        let set = [
            ("client", self.client.is_some()),
            ("rate", self.rate.is_some()),
            ("server", self.server.is_some()),
            ("direction", self.direction.is_some()),
            ("initial_rate", self.initial_rate.is_some()),
            ("requests", self.requests.is_some()),
            ("alpha", self.alpha.is_some()),
            ("objects", self.objects.is_some()),
            ("last_start", self.last_start.is_some()),
            ("prewarm", self.prewarm.is_some()),
        ];
        set.into_iter().filter_map(|(name, given)| given.then_some(name)).collect()
    }

    /// The deprecation warning of flow `i` if it uses the options that predate controller
    /// specs, `names` being what the file calls them (`["fixed_window", "probe_gain"]`),
    /// naming the spec to write instead (they go in the next release).
    pub fn legacy_warning(&self, i: usize, names: [&str; 2]) -> Option<String> {
        let cc = default_cc(self);
        spec::legacy_warning(cc, self.fixed_window, self.probe_gain, names)
            .map(|w| format!("flow {i}: {w} (cc = \"…\")"))
    }
}

/// Flow `i`'s receiver options ([`Flow::receiver_spec`]), checked by the core's parser.
pub fn validate_receiver(i: usize, f: &Flow) -> Result<(), Error> {
    if f.idle_timeout.is_some_and(|t| !(t.is_finite() && t > 0.0 && t <= 86_400.0)) {
        return Err(Error::Invalid(format!("flow {i}: idle_timeout must be in (0, 86400] seconds")));
    }
    let spec = f.receiver_spec();
    rdtp_proto::receiver::ReceiverConfig::from_spec(&spec)
        .map(|_| ())
        .map_err(|e| Error::Invalid(format!("flow {i}: {e} (the fields and config = \"{spec}\")")))
}

/// An rdtp flow's controller spec, with `probe_gain`/`fixed_window` folded in as keys.
pub(crate) fn rdtp_cc(f: &Flow) -> String {
    spec::with_legacy_options(default_cc(f), f.fixed_window, f.probe_gain)
}

/// A flow's `cc`, or without one the controller its legacy options belong to, else the
/// receivers' default ([`spec::legacy_base`]).
pub fn default_cc(f: &Flow) -> &str {
    f.cc.as_deref().unwrap_or_else(|| spec::legacy_base(f.fixed_window, f.probe_gain))
}

/// Each `[[flow]]` table of `doc` read alone, so that a key the schema does not have is
/// refused naming its flow ("flow 2: unknown field `windw`, expected one of …"): the whole
/// file's error would name the key only.
pub fn check_tables(doc: &Table) -> Result<(), Error> {
    let Some(Value::Array(flows)) = doc.get("flow") else { return Ok(()) };
    for (i, f) in flows.iter().enumerate() {
        f.clone().try_into::<Flow>().map_err(|e| Error::Toml { context: format!("flow {i}"), source: Box::new(e) })?;
    }
    Ok(())
}
