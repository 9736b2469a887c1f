//! Experiment files: the TOML schema, `--set` overrides, the sweep, and what one run needs
//! (namespaces, flows, objects, emulator arguments).
//!
//! `[path]` is rdtp-sim's `[topology]` table, deserialised and turned into ns-3 arguments by
//! rdtp-sim's own code (the `rdtp-scenario` crate), and
//! `[sweep]`/`--set` use its dotted-path and cartesian-product semantics, so an experiment
//! and a simulation scenario describe a network the same way. A `[[flow]]` is rdtp-sim's
//! own [`scenario::Flow`]: this module refuses the fields only rdtp-sim honours
//! ([`scenario::Flow::sim_only`]) and reads `[flow.testbed]` for its processes; the
//! spellings testbed files had before (`per_namespace`, `save`, `log`, `args` and `window`
//! at the flow's top level) are read this release with a warning ([`migrate_legacy`]).

use std::collections::BTreeMap;

use anyhow::{Context as _, Error, Result, anyhow, bail};
use rdtp_proto::cc::{CcConfig, spec};
use serde::Deserialize;
use toml::{Table, Value};

use rdtp_scenario as scenario;
use rdtp_scenario::network::capacity_bps;

/// An experiment file after overrides and one sweep assignment.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    pub testbed: General,
    pub path: scenario::Topology,
    #[serde(default, rename = "flow")]
    pub flows: Vec<scenario::Flow>,
    /// Removed before deserialising a run; declared so the schema is complete.
    #[serde(default)]
    #[allow(dead_code)]
    pub sweep: Table,
    /// Raw ns-3 attribute defaults for the emulator, passed as `--ns3::Name=value`; read
    /// from the run's document by [`topology_args`], declared so the schema is complete.
    #[serde(default)]
    #[allow(dead_code)]
    pub ns3: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct General {
    #[serde(default = "default_name")]
    pub name: String,
    /// Seconds each run lasts, from the first flow's time 0.
    pub duration: f64,
    /// Seconds excluded from steady-state numbers.
    #[serde(default)]
    pub warmup: f64,
    /// Link MTU of the taps, the emulator's devices and the rdtp unit.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    #[serde(default = "rdtp_scenario::one")]
    pub seed: u32,
    #[serde(default = "rdtp_scenario::one")]
    pub run: u32,
    /// timeseries.csv / lag.csv interval, seconds.
    #[serde(default = "rdtp_scenario::default_interval")]
    pub interval: f64,
    /// queue.csv interval, seconds.
    #[serde(default = "rdtp_scenario::default_queue_interval")]
    pub queue_interval: f64,
    /// Run `ping -i ping_interval` from every client namespace to the server (RTT under load).
    #[serde(default = "yes")]
    pub ping: bool,
    #[serde(default = "default_ping_interval")]
    pub ping_interval: f64,
    /// A run is valid only if the emulator's lag p99 over [warmup, end) is at most this.
    #[serde(default = "default_lag_threshold")]
    pub lag_threshold_ms: f64,
    /// FdNetDevice read queue (packets).
    #[serde(default = "default_rx_queue")]
    pub rx_queue: u32,
    /// Pin the emulator's simulator thread to this CPU.
    pub pin_cpu: Option<i32>,
    /// CPUs for the servers ("0", "0-1", "0,2"): the server processes are pinned there and
    /// the server tap's receive processing is steered there (RPS), so those CPUs' busy time
    /// is the server side's whole cost, kernel TCP included (see the README).
    pub server_cpus: Option<String>,
    /// CPUs for the emulator and for the clients (default with server_cpus: all others);
    /// the client taps' receive processing is steered to client_cpus.
    pub emulator_cpus: Option<String>,
    pub client_cpus: Option<String>,
    /// Scheduling of the emulator: "normal", "nice:N" (-20..19) or "fifo:P" (SCHED_FIFO,
    /// 1..99; the kernel's RT throttling still leaves 5 % to others).
    #[serde(default = "default_sched")]
    pub emulator_sched: String,
    /// Largest TCP socket buffer in the namespaces (tcp_rmem / tcp_wmem maximum).
    pub tcp_buffer: Option<scenario::Size>,
    /// Seconds between `ss` samples of the server's TCP socket memory (0 = off).
    #[serde(default = "default_ss_interval")]
    pub socket_sample_interval: f64,
    /// Seconds the emulator runs before time 0 (default: 0 dumbbell, 0.5 wifi).
    pub settle: Option<f64>,
    /// Figure to draw after the runs (`experiments/plot.py <plot> <out dir>`, e.g.
    /// "tb-fig7a"), as rdtp-sim's `[scenario] plot`: crate `rdtp-plot`.
    pub plot: Option<String>,
    /// The NDN producer that `ndn` and `ndnts` flows fetch from, in the server namespace:
    /// "rdtp" (`rdtp serve --ndn-listen`, the default) or "ndnts" (NDNts's producer,
    /// `tests/ndnts/producer.mjs`, one per object). Objects are published as
    /// `/testbed/<object>`, versioned, with RDR metadata; Data larger than the path MTU go
    /// in NDNLPv2 fragments.
    #[serde(default = "default_ndn_producer")]
    pub ndn_producer: String,
    /// Content bytes per NDN segment (ndnputchunks' 8000 by default; Hu et al. use 8600).
    #[serde(default = "default_ndn_segment")]
    pub ndn_segment: u32,
    /// More `rdtp serve` arguments for the rdtp server (e.g. ["--coalesce", "500us"]).
    #[serde(default)]
    pub server_args: Vec<String>,
}

fn default_ndn_producer() -> String {
    "rdtp".into()
}
fn default_ndn_segment() -> u32 {
    8000
}

fn default_name() -> String {
    "testbed".into()
}
fn default_mtu() -> u32 {
    1500
}
fn yes() -> bool {
    true
}
fn default_ping_interval() -> f64 {
    0.2
}
fn default_lag_threshold() -> f64 {
    1.0
}
fn default_rx_queue() -> u32 {
    1000
}
fn default_ss_interval() -> f64 {
    1.0
}
fn default_sched() -> String {
    "normal".into()
}

/// `emulator_sched`: "normal", "nice:N", "fifo:P".
pub fn parse_sched(s: &str) -> Result<Option<crate::procs::Sched>> {
    let bad = || anyhow!("testbed.emulator_sched '{s}' (normal, nice:-10, fifo:10)");
    match s.split_once(':') {
        None if s == "normal" => Ok(None),
        Some(("nice", n)) => {
            let n: i32 = n.trim().parse().map_err(|_| bad())?;
            if !(-20..=19).contains(&n) {
                return Err(bad());
            }
            Ok(Some(crate::procs::Sched::Nice(n)))
        }
        Some(("fifo", p)) => {
            let p: i32 = p.trim().parse().map_err(|_| bad())?;
            if !(1..=99).contains(&p) {
                return Err(bad());
            }
            Ok(Some(crate::procs::Sched::Fifo(p)))
        }
        _ => Err(bad()),
    }
}

/// One expanded run.
#[derive(Debug, Clone)]
pub struct Run {
    pub id: String,
    pub label: String,
    pub assignment: Vec<(String, Value)>,
    pub experiment: Experiment,
    /// The document this run was deserialised from (for [`topology_args`]).
    pub doc: Table,
    /// What in the file goes in the next release, each naming what to write instead
    /// ([`deprecations`]).
    pub warnings: Vec<String>,
}

/// A key as shown in labels: without `path.` / `testbed.`.
pub fn short_key(k: &str) -> String {
    k.strip_prefix("path.").or_else(|| k.strip_prefix("testbed.")).unwrap_or(k).to_string()
}

/// Apply overrides, expand the sweep (rdtp-sim's [`scenario::sweep_points`]: cartesian
/// product in file order, last key fastest), deserialise and validate every run.
pub fn expand(text: &str, overrides: &[(String, String)]) -> Result<(Vec<String>, Vec<Run>)> {
    let (keys, points) = scenario::sweep_points(text, overrides, "experiment", short_key).map_err(Error::msg)?;
    let mut runs = Vec::with_capacity(points.len());
    for mut p in points {
        let (mut warnings, window) = migrate_legacy(&mut p.doc)?;
        scenario::flow::check_tables(&p.doc).map_err(Error::msg)?;
        let experiment: Experiment = Value::Table(p.doc.clone()).try_into().context("experiment")?;
        validate(&experiment)?;
        for (i, f) in experiment.flows.iter().enumerate() {
            let names = [if window.contains(&i) { "window" } else { "fixed_window" }, "probe_gain"];
            warnings.extend(f.legacy_warning(i, names));
        }
        runs.push(Run { id: p.id, label: p.label, assignment: p.assignment, experiment, doc: p.doc, warnings });
    }
    Ok((keys, runs))
}

/// The keys a testbed `[[flow]]` had at its top level before it became rdtp-sim's
/// [`scenario::Flow`]: they are `[flow.testbed]` keys now.
const MOVED_TO_TESTBED: [&str; 4] = ["per_namespace", "save", "log", "args"];

/// Rewrite the spellings testbed flows had before one Flow schema into today's, in `doc` (a
/// run's document, so sweeps and `--set` are rewritten too): [`MOVED_TO_TESTBED`] keys go into
/// the flow's `testbed` table, `window` becomes `fixed_window` (the scenario files' name).
/// Returns a warning for each moved key (they go in the next release) and the flows that
/// spelled `window`, for the warning about controller specs to name it as written.
fn migrate_legacy(doc: &mut Table) -> Result<(Vec<String>, Vec<usize>)> {
    let (mut warnings, mut window) = (Vec::new(), Vec::new());
    let Some(Value::Array(flows)) = doc.get_mut("flow") else { return Ok((warnings, window)) };
    for (i, flow) in flows.iter_mut().enumerate() {
        let Value::Table(f) = flow else { continue };
        for key in MOVED_TO_TESTBED {
            let Some(v) = f.remove(key) else { continue };
            let Value::Table(t) = f.entry("testbed").or_insert_with(|| Value::Table(Table::new())) else {
                bail!("flow {i}: testbed must be a table ([flow.testbed])");
            };
            if t.contains_key(key) {
                bail!("flow {i}: {key} and testbed.{key} both given (write testbed.{key} only)");
            }
            warnings.push(format!(
                "flow {i}: {key} is deprecated and will be removed in the next release: write it in the flow's \
                 [flow.testbed] table (testbed = {{ {key} = {v} }}), as rdtp sim reads the same [[flow]]"
            ));
            t.insert(key.to_string(), v);
        }
        if let Some(v) = f.remove("window") {
            if f.contains_key("fixed_window") {
                bail!("flow {i}: window and fixed_window both given (write cc = \"fixed:window=N\")");
            }
            f.insert("fixed_window".to_string(), v);
            window.push(i);
        }
    }
    Ok((warnings, window))
}

/// A warning for everything `run`'s file spells as before (the flow keys now in
/// `[flow.testbed]`, `probe_gain`, `window`), naming what to write instead (they go in the
/// next release).
pub fn deprecations(run: &Run) -> Vec<String> {
    run.warnings.clone()
}

fn validate(e: &Experiment) -> Result<()> {
    let g = &e.testbed;
    if !(g.duration.is_finite() && g.duration > 0.0) {
        bail!("testbed.duration must be > 0");
    }
    if !(g.warmup >= 0.0 && g.warmup < g.duration) {
        bail!("testbed.warmup must be in [0, duration)");
    }
    if g.seed == 0 {
        bail!("testbed.seed must be > 0");
    }
    parse_sched(&g.emulator_sched)?;
    for (k, v) in
        [("server_cpus", &g.server_cpus), ("emulator_cpus", &g.emulator_cpus), ("client_cpus", &g.client_cpus)]
    {
        if let Some(list) = v {
            parse_cpus_opt(list).with_context(|| format!("testbed.{k}"))?;
        }
    }
    if !(576..=65000).contains(&g.mtu) {
        bail!("testbed.mtu must be 576..65000");
    }
    if !(g.interval > 0.0 && g.queue_interval > 0.0 && g.ping_interval >= 0.2 && g.lag_threshold_ms > 0.0) {
        bail!("testbed.interval, queue_interval and lag_threshold_ms must be > 0, ping_interval >= 0.2");
    }
    if g.socket_sample_interval.is_nan() || g.socket_sample_interval < 0.0 {
        bail!("testbed.socket_sample_interval must be >= 0");
    }
    scenario::validate_topology(&e.path, "path").map_err(Error::msg)?;
    if e.path.kind == "wifi" && g.mtu > 2296 {
        bail!("a WiFi path carries at most a 2296-byte MTU");
    }
    if e.path.clients.is_some() {
        bail!("path.clients: the testbed derives the clients from the [[flow]] entries");
    }
    if e.path.tcp_buffer.is_some() {
        bail!("path.tcp_buffer is an ns-3 TCP setting; use testbed.tcp_buffer for the kernel");
    }
    if e.flows.is_empty() {
        bail!("no [[flow]]");
    }
    if !matches!(g.ndn_producer.as_str(), "rdtp" | "ndnts") {
        bail!("testbed.ndn_producer must be \"rdtp\" (rdtp serve --ndn-listen) or \"ndnts\" (NDNts's producer)");
    }
    if !(64..=8800).contains(&g.ndn_segment) {
        bail!("testbed.ndn_segment must be 64..8800 bytes");
    }
    let ndn = e.flows.iter().any(|f| kind_and_cc(f).is_ok_and(|(k, _)| k.is_ndn()));
    if ndn && !e.path.routers.is_empty() {
        bail!("ndn and ndnts flows fetch from the NDN producer directly: rdtp's routers do not forward NDN");
    }
    for (i, f) in e.flows.iter().enumerate() {
        match kind_and_cc(f) {
            Ok((Kind::Rdtp | Kind::Ndn, cc)) => {
                // As `rdtp fetch` will read --cc, --window and --probe-gain.
                spec::with_legacy_options(&cc, f.fixed_window, f.probe_gain)
                    .parse::<CcConfig>()
                    .map_err(|e| anyhow!("flow {i}: rdtp cc: {e}"))?;
                // As `rdtp fetch --receiver` will read it.
                scenario::flow::validate_receiver(i, f).map_err(Error::msg)?;
            }
            Ok((kind @ (Kind::Tcp | Kind::Ndnts), cc)) => {
                if cc.is_empty() || !cc.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                    bail!("flow {i}: tcp cc '{cc}'");
                }
                if kind == Kind::Ndnts && !f.testbed.args.is_empty() {
                    bail!("flow {i}: testbed.args are `rdtp fetch` arguments; kind 'ndnts' runs NDNts's consumer");
                }
                if f.probe_gain.is_some()
                    || f.fixed_window.is_some()
                    || f.testbed.log
                    || f.config.is_some()
                    || !f.receiver_spec().is_empty()
                {
                    bail!(
                        "flow {i}: probe_gain, fixed_window, config (and the receiver keys max_aggregation, unit, \
                         rto_k, idle_timeout) and testbed.log apply to rdtp and ndn flows only"
                    );
                }
            }
            Err(e) => bail!("flow {i}: {e:#}"),
        }
        let sim_only = f.sim_only();
        if !sim_only.is_empty() {
            bail!(
                "flow {i}: {} {} for rdtp sim only (the testbed runs rdtp and kernel TCP fetches in client namespaces it \
                 places itself: testbed.per_namespace)",
                sim_only.join(", "),
                if sim_only.len() == 1 { "is" } else { "are" }
            );
        }
        if f.count == 0 || f.testbed.per_namespace == 0 {
            bail!("flow {i}: count and testbed.per_namespace must be >= 1");
        }
        if !(f.start >= 0.0 && f.start < g.duration) {
            bail!("flow {i}: start must be in [0, duration)");
        }
        if let Some(s) = f.stop
            && (s.is_nan() || s <= f.start)
        {
            bail!("flow {i}: stop must be after start");
        }
        if let Some(s) = &f.size {
            s.bytes().map_err(|e| anyhow!("flow {i}: {e}"))?;
        }
    }
    Ok(())
}

/// A CPU list: "0", "0-3", "0,2,4-5" (`None` for "" or "none", so a sweep can turn it off).
pub fn parse_cpus_opt(s: &str) -> Result<Option<Vec<usize>>> {
    if s.trim().is_empty() || s.trim() == "none" { Ok(None) } else { parse_cpus(s).map(Some) }
}

/// A CPU list: "0", "0-3", "0,2,4-5".
pub fn parse_cpus(s: &str) -> Result<Vec<usize>> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || anyhow!("bad CPU list '{s}' (e.g. \"0\", \"0-1\", \"0,2\")");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) =
                    (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
                if a > b || b >= 1024 {
                    return Err(bad());
                }
                v.extend(a..=b);
            }
            None => {
                let c: usize = part.parse().map_err(|_| bad())?;
                if c >= 1024 {
                    return Err(bad());
                }
                v.push(c);
            }
        }
    }
    if v.is_empty() {
        bail!("empty CPU list '{s}'");
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Rdtp,
    Tcp,
    /// rdtp's NDN consumer (`rdtp fetch --ndn`) fetching from the run's NDN producer.
    Ndn,
    /// NDNts's own consumer (`tests/ndnts/consumer.mjs`: its `fetch`, a TCP CUBIC window)
    /// fetching from the run's NDN producer.
    Ndnts,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Rdtp => "rdtp",
            Kind::Tcp => "tcp",
            Kind::Ndn => "ndn",
            Kind::Ndnts => "ndnts",
        }
    }

    /// A consumer of the run's NDN producer ([`General::ndn_producer`]).
    pub fn is_ndn(self) -> bool {
        matches!(self, Kind::Ndn | Kind::Ndnts)
    }
}

/// A testbed flow's kind and congestion control (a controller spec for rdtp and ndn, the
/// server's TCP_CONGESTION for tcp; `tcp-NAME` is short for `tcp` with `cc = NAME`; NDNts's
/// consumer has its own, "ndnts").
pub fn kind_and_cc(f: &scenario::Flow) -> Result<(Kind, String)> {
    match f.kind.as_str() {
        "rdtp" => Ok((Kind::Rdtp, scenario::flow::default_cc(f).to_string())),
        "ndn" => Ok((Kind::Ndn, scenario::flow::default_cc(f).to_string())),
        "ndnts" if f.cc.is_some() => {
            Err(anyhow!("kind 'ndnts' is NDNts's own consumer with its own TCP CUBIC window: it takes no cc"))
        }
        "ndnts" => Ok((Kind::Ndnts, "ndnts".into())),
        "tcp" => Ok((Kind::Tcp, f.cc.clone().unwrap_or_else(|| "cubic".into()))),
        "tcp-bbr" | "tcp-cubic" | "tcp-reno" => Ok((Kind::Tcp, f.kind[4..].to_string())),
        k @ ("udp" | "workload") => {
            Err(anyhow!("kind '{k}' is for rdtp sim only (the testbed: rdtp, tcp, ndn, ndnts)"))
        }
        k => Err(anyhow!("kind '{k}' (rdtp, tcp, tcp-bbr, tcp-cubic, tcp-reno, ndn, ndnts)")),
    }
}

/// One client process of a run.
#[derive(Debug, Clone)]
pub struct FlowInstance {
    pub index: usize,
    /// Index of its `[[flow]]` entry.
    pub def: usize,
    pub kind: Kind,
    pub cc: String,
    /// Client namespace index.
    pub ns: usize,
    pub start: f64,
    pub stop: f64,
    /// Object name served for it.
    pub object: String,
    pub size: u64,
    /// Keep the fetched bytes and compare them with the object.
    pub save: bool,
    /// rdtp: --log-rtt / --log-cwnd.
    pub log: bool,
    /// More `rdtp fetch` arguments (--probe-gain, --window, `args`).
    pub extra_args: Vec<String>,
}

/// Client namespaces and the processes in them.
#[derive(Debug, Clone)]
pub struct Layout {
    pub flows: Vec<FlowInstance>,
    /// For each client namespace, the flow indices in it.
    pub namespaces: Vec<Vec<usize>>,
    /// Objects to serve: name → size.
    pub objects: BTreeMap<String, u64>,
}

/// Bulk objects: this much bigger than the most the bottleneck could carry to one flow.
const BULK_MARGIN: f64 = 1.3;

pub fn layout(e: &Experiment) -> Result<Layout> {
    let g = &e.testbed;
    let capacity = capacity_bps(&e.path).map_err(Error::msg)?;
    let mut flows = Vec::new();
    let mut namespaces: Vec<Vec<usize>> = Vec::new();
    let mut objects = BTreeMap::new();
    let mut bulk = 0u64;
    for (d, f) in e.flows.iter().enumerate() {
        let (kind, cc) = kind_and_cc(f)?;
        let stop = f.stop.unwrap_or(g.duration).min(g.duration);
        for c in 0..f.count {
            if c % f.testbed.per_namespace == 0 {
                namespaces.push(Vec::new());
            }
            let ns = namespaces.len() - 1;
            let (object, size) = match &f.size {
                Some(s) => {
                    let b = s.bytes().map_err(Error::msg)?;
                    (format!("obj-{b}"), b)
                }
                None => {
                    let need = capacity / 8.0 * (stop - f.start) * BULK_MARGIN + 1e6;
                    bulk = bulk.max((need / 1e6).ceil() as u64 * 1_000_000);
                    ("bulk".to_string(), 0)
                }
            };
            let index = flows.len();
            namespaces[ns].push(index);
            let mut extra_args = Vec::new();
            if let Some(g) = f.probe_gain {
                extra_args.extend(["--probe-gain".to_string(), g.to_string()]);
            }
            if let Some(w) = f.fixed_window {
                extra_args.extend(["--window".to_string(), w.to_string()]);
            }
            let receiver = f.receiver_spec();
            if !receiver.is_empty() {
                extra_args.extend(["--receiver".to_string(), receiver]);
            }
            extra_args.extend(f.testbed.args.iter().cloned());
            flows.push(FlowInstance {
                index,
                def: d,
                kind,
                cc: cc.clone(),
                ns,
                start: f.start,
                stop,
                object,
                size,
                save: f.testbed.save,
                log: f.testbed.log,
                extra_args,
            });
        }
    }
    for f in &mut flows {
        if f.object == "bulk" {
            f.size = bulk;
        }
        objects.insert(f.object.clone(), f.size);
    }
    Ok(Layout { flows, namespaces, objects })
}

/// The emulator's topology arguments, made by rdtp-sim's own `run_args` from the run's
/// `[path]` (and `[ns3]`) tables, without the offline-only ones.
pub fn topology_args(run: &Run) -> Result<Vec<String>> {
    let mut doc = Table::new();
    let mut general = Table::new();
    general.insert("duration".into(), Value::Float(run.experiment.testbed.duration));
    doc.insert("scenario".into(), Value::Table(general));
    let path = run.doc.get("path").cloned().context("no [path]")?;
    doc.insert("topology".into(), path);
    let mut flow = Table::new();
    flow.insert("kind".into(), Value::String("udp".into()));
    flow.insert("rate".into(), Value::Integer(1));
    doc.insert("flow".into(), Value::Array(vec![Value::Table(flow)]));
    if let Some(ns3) = run.doc.get("ns3") {
        doc.insert("ns3".into(), ns3.clone());
    }
    let s: scenario::Scenario = Value::Table(doc).try_into().context("path")?;
    const OFFLINE_ONLY: &[&str] = &[
        "--Duration=",
        "--Warmup=",
        "--Interval=",
        "--QueueInterval=",
        "--Seed=",
        "--Run=",
        "--Clients=",
        "--Flows=",
        "--Out=",
        "--Pcap=",
        "--TcpBuf=",
        // The testbed runs real `rdtp route` processes instead (crate::routers).
        "--Routers=",
    ];
    let args = scenario::run_args(&s, "-").map_err(Error::msg)?;
    Ok(args.into_iter().filter(|a| !OFFLINE_ONLY.iter().any(|p| a.starts_with(p))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole message, contexts included, as the testbed prints it.
    fn msg(e: Error) -> String {
        format!("{e:#}")
    }

    const FILE: &str = r#"
[testbed]
name = "t"
duration = 20.0
warmup = 5.0

[path]
kind = "dumbbell"
rate = "100Mbps"
rtt = "20ms"
queue = "1bdp"

[[flow]]
kind = "rdtp"
cc = "bbr"

[[flow]]
kind = "tcp"
cc = "cubic"
count = 5
per_namespace = 2
start = 2.0
stop = 12.0

[sweep]
"path.rate" = ["50Mbps", "100Mbps"]
"flow.0.cc" = ["bbr", "bbrp"]
"#;

    #[test]
    fn sweep_and_ids_follow_rdtp_sim() {
        let (keys, runs) = expand(FILE, &[]).unwrap();
        assert_eq!(keys, vec!["path.rate", "flow.0.cc"]);
        assert_eq!(runs.len(), 4);
        assert_eq!(runs[1].label, "rate=50Mbps flow.0.cc=bbrp");
        assert_eq!(runs[3].id, "003_rate=100Mbps_flow.0.cc=bbrp");
        let (_, runs) = expand(FILE, &[("testbed.mtu".into(), "9000".into())]).unwrap();
        assert!(runs.iter().all(|r| r.experiment.testbed.mtu == 9000));
    }

    #[test]
    fn layout_spreads_processes_over_namespaces_and_sizes_bulk_objects() {
        let (_, runs) = expand(FILE, &[]).unwrap();
        let l = layout(&runs[2].experiment).unwrap(); // 100 Mbit/s
        assert_eq!(l.flows.len(), 6);
        // flow 0 alone; 5 tcp processes two per namespace: 2 + 2 + 1.
        assert_eq!(l.namespaces, vec![vec![0], vec![1, 2], vec![3, 4], vec![5]]);
        assert_eq!(l.flows[3].stop, 12.0);
        assert_eq!(l.flows[3].cc, "cubic");
        // 100 Mbit/s × 20 s × 1.3 + 1 MB.
        assert_eq!(l.objects["bulk"], 326_000_000);
    }

    #[test]
    fn topology_arguments_come_from_rdtp_sim() {
        let (_, runs) = expand(FILE, &[]).unwrap();
        let a = topology_args(&runs[0]).unwrap();
        assert!(a.contains(&"--Topology=dumbbell".to_string()), "{a:?}");
        assert!(a.contains(&"--Rate=50Mbps".to_string()));
        assert!(a.contains(&"--QueueBdp=1".to_string()));
        assert!(!a.iter().any(|x| x.starts_with("--Flows") || x.starts_with("--Duration")), "{a:?}");
    }

    /// One flow text, pasted into a scenario file and into an experiment file: both read it,
    /// the testbed its `[flow.testbed]` and the receiver keys, rdtp-sim ignoring the former.
    #[test]
    fn a_flow_reads_the_same_in_scenario_and_experiment_files() {
        let flow = "[[flow]]\nkind = \"rdtp\"\ncc = \"bbr:init_cwnd=20\"\ncount = 3\nstart = 1.0\nsize = \"5MB\"\n\
                    rto_k = 8\nconfig = \"max_inflight=100\"\n[flow.testbed]\nper_namespace = 2\nsave = true\n\
                    args = [\"--timeout\", \"30\"]\n";
        let experiment = FILE.split("[[flow]]").next().unwrap().to_string() + flow;
        let (_, runs) = expand(&experiment, &[]).unwrap();
        assert!(deprecations(&runs[0]).is_empty());
        let l = layout(&runs[0].experiment).unwrap();
        assert_eq!(l.namespaces, vec![vec![0, 1], vec![2]]);
        let f = &l.flows[2];
        assert_eq!((f.cc.as_str(), f.start, f.size, f.save), ("bbr:init_cwnd=20", 1.0, 5_000_000, true));
        assert_eq!(f.extra_args, ["--receiver", "rto_k=8;max_inflight=100", "--timeout", "30"]);
        let sim = "[scenario]\nduration = 20\n[topology]\nkind = \"dumbbell\"\n".to_string() + flow;
        let (_, sims) = scenario::expand(&sim, &[]).unwrap();
        let specs = scenario::flow_specs(&sims[0].scenario).unwrap().0;
        assert_eq!(
            specs[2],
            "kind=rdtp,client=2,start=1,cc=bbr:init_cwnd=20,config=rto_k=8%3Bmax_inflight=100,size=5000000"
        );
        // ... and without its testbed table, rdtp-sim's arguments are the same.
        let bare = scenario::expand(sim.split("[flow.testbed]").next().unwrap(), &[]).unwrap().1;
        assert_eq!(scenario::flow_specs(&bare[0].scenario).unwrap().0, specs);
    }

    /// NDN flows: rdtp's NDN consumer takes a controller, NDNts's none; they need a producer
    /// this testbed starts and no rdtp router between.
    #[test]
    fn ndn_flows_are_checked() {
        let ndn = FILE
            .replacen("kind = \"rdtp\"\ncc = \"bbr\"", "kind = \"ndn\"\ncc = \"bbr-cd\"", 1)
            .replace("kind = \"tcp\"\ncc = \"cubic\"", "kind = \"ndnts\"")
            .replace("\"flow.0.cc\" = [\"bbr\", \"bbrp\"]", "\"flow.0.cc\" = [\"bbr-cd\", \"cubic\"]")
            .replace("warmup = 5.0", "warmup = 5.0\nndn_producer = \"ndnts\"\nndn_segment = 8600");
        let (_, runs) = expand(&ndn, &[]).unwrap();
        let l = layout(&runs[1].experiment).unwrap();
        assert_eq!((l.flows[0].kind, l.flows[0].cc.as_str()), (Kind::Ndn, "cubic"));
        assert_eq!((l.flows[1].kind, l.flows[1].cc.as_str()), (Kind::Ndnts, "ndnts"));
        assert_eq!(runs[0].experiment.testbed.ndn_segment, 8600);
        for (bad, says) in [
            (ndn.replace("kind = \"ndnts\"", "kind = \"ndnts\"\ncc = \"bbr\""), "it takes no cc"),
            (ndn.replace("\"ndnts\"\nndn_segment", "\"nfd\"\nndn_segment"), "testbed.ndn_producer must be"),
            (ndn.replace("ndn_segment = 8600", "ndn_segment = 9000"), "testbed.ndn_segment must be"),
            (ndn.replace("queue = \"1bdp\"", "queue = \"1bdp\"\n[[path.router]]\nnode = \"r1\""), "do not forward NDN"),
            (ndn.replace("[\"bbr-cd\", \"cubic\"]", "[\"nope\"]"), "flow 0: rdtp cc"),
        ] {
            let e = msg(expand(&bad, &[]).map(|_| ()).unwrap_err());
            assert!(e.contains(says), "{says}: {e}");
        }
    }

    /// Testbed files written before one Flow schema still run, with a warning naming the new
    /// spelling; a key given both ways, a typo and a field only rdtp-sim honours are refused.
    #[test]
    fn old_flow_keys_warn_and_bad_ones_are_refused() {
        let old = FILE.replace("per_namespace = 2", "per_namespace = 2\nsave = true\nargs = [\"-v\"]").replacen(
            "cc = \"bbr\"\n",
            "cc = \"fixed\"\nwindow = 16\nlog = true\n",
            1,
        );
        let (_, runs) = expand(&old.replace("\"flow.0.cc\" = [\"bbr\", \"bbrp\"]\n", ""), &[]).unwrap();
        let l = layout(&runs[0].experiment).unwrap();
        assert_eq!(l.namespaces, vec![vec![0], vec![1, 2], vec![3, 4], vec![5]]);
        assert!(l.flows[0].log && !l.flows[0].save && l.flows[1].save);
        assert_eq!(l.flows[0].extra_args, ["--window", "16"]);
        assert_eq!(l.flows[1].extra_args, ["-v"]);
        let w = deprecations(&runs[0]);
        assert_eq!(w.len(), 5, "{w:?}");
        assert!(w[0].starts_with("flow 0: log is deprecated") && w[0].contains("testbed = { log = true }"), "{w:?}");
        assert!(w[1].starts_with("flow 1: per_namespace is deprecated"), "{w:?}");
        assert!(w[4].starts_with("flow 0: window is deprecated") && w[4].contains("fixed:window=16"), "{w:?}");
        // With a sweep replacing the flow, the sweep's old spelling is rewritten too.
        let (_, runs) =
            expand(&FILE.replace("\"flow.0.cc\" = [\"bbr\", \"bbrp\"]", "\"flow.1.per_namespace\" = [5]"), &[])
                .unwrap();
        assert_eq!(runs[0].experiment.flows[1].testbed.per_namespace, 5);
        for (bad, says) in [
            (FILE.replace("per_namespace = 2", "per_namespace = 2\ntestbed = { per_namespace = 3 }"), "both given"),
            (FILE.replace("start = 2.0", "strat = 2.0"), "flow 1: unknown field `strat`"),
            (
                FILE.replace("per_namespace = 2", "testbed = { per_namespce = 2 }"),
                "flow 1: unknown field `per_namespce`",
            ),
            (
                FILE.replace("start = 2.0", "start = 2.0\nclient = 3\ndirection = \"up\""),
                "flow 1: client, direction are",
            ),
            (FILE.replace("kind = \"tcp\"", "kind = \"udp\""), "'udp' is for rdtp sim only"),
            (FILE.replace("cc = \"cubic\"", "cc = \"cubic\"\nrto_k = 8"), "apply to rdtp and ndn flows only"),
            (
                FILE.replacen("cc = \"bbr\"\n", "cc = \"bbr\"\nconfig = \"nope=1\"\n", 1),
                "flow 0: receiver has no key 'nope'",
            ),
        ] {
            let e = msg(expand(&bad, &[]).map(|_| ()).unwrap_err());
            assert!(e.contains(says), "want '{says}': {e}");
        }
    }

    #[test]
    fn errors_are_clear() {
        assert!(msg(expand(&FILE.replace("rtt =", "rrt ="), &[]).unwrap_err()).contains("rrt"));
        assert!(msg(expand(&FILE.replace("kind = \"tcp\"", "kind = \"quic\""), &[]).unwrap_err()).contains("quic"));
        assert!(expand(&FILE.replace("warmup = 5.0", "warmup = 25.0"), &[]).is_err());
        let wifi = FILE.replace("kind = \"dumbbell\"", "kind = \"wifi\"").replace("rate = \"100Mbps\"\n", "");
        assert!(msg(expand(&wifi, &[("testbed.mtu".into(), "9000".into())]).unwrap_err()).contains("MTU"));
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpus("0").unwrap(), vec![0]);
        assert_eq!(parse_cpus("2,0-1").unwrap(), vec![0, 1, 2]);
        assert!(parse_cpus("1-0").is_err());
        assert!(parse_cpus("x").is_err());
    }

    #[test]
    fn rates_and_capacity() {
        use rdtp_units::parse_rate;
        assert_eq!(parse_rate("100Mbps").unwrap(), 100e6);
        assert_eq!(parse_rate("1.5Gbps").unwrap(), 1.5e9);
        assert!(parse_rate("fast").is_err());
        let t: scenario::Topology = toml::from_str("kind = \"wifi\"\nstandard = \"80211ac\"\n").unwrap();
        assert!((capacity_bps(&t).unwrap() - 433.3e6).abs() < 1.0);
    }

    /// Every experiment shipped in `testbed/` expands, validates and lays out (its routers
    /// placed too), so a user's first run does not fail on a typo after minutes of setup.
    #[test]
    fn shipped_experiments_are_valid() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testbed");
        let server = rdtp_scenario::network::subnet(None).1;
        let (mut checked, mut with_routers) = (0, 0);
        for (path, text) in rdtp_scenario::toml_files(&dir).unwrap() {
            let (_, runs) = expand(&text, &[]).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
            assert!(!runs.is_empty(), "{}", path.display());
            for run in &runs {
                // Written in today's spelling: nothing that goes in the next release.
                assert_eq!(deprecations(run), Vec::<String>::new(), "{} {}", path.display(), run.id);
                layout(&run.experiment).unwrap_or_else(|e| panic!("{} {}: {e:#}", path.display(), run.id));
                let args = topology_args(run).unwrap_or_else(|e| panic!("{} {}: {e:#}", path.display(), run.id));
                assert!(!args.iter().any(|a| a.starts_with("--Routers=")), "{} {}: {args:?}", path.display(), run.id);
                let routers = crate::routers::plan(&run.experiment.path, "rdtp-1", server)
                    .unwrap_or_else(|e| panic!("{} {}: {e:#}", path.display(), run.id));
                with_routers += usize::from(!routers.is_empty());
            }
            checked += 1;
        }
        assert!(checked >= 8, "only {checked} experiment files found in {}", dir.display());
        assert!(with_routers >= 2, "testbed/routers.toml places routers in two of its runs");
    }

    /// Every figure a shipped experiment names is one `experiments/plot.py` draws (a key of
    /// its `KINDS`), so the drawing at the end of a long run does not fail on a typo.
    #[test]
    fn shipped_experiments_name_figures_plot_py_draws() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let script = std::fs::read_to_string(root.join("experiments/plot.py")).expect("experiments/plot.py");
        let mut named = 0;
        for (path, text) in rdtp_scenario::toml_files(&root.join("testbed")).unwrap() {
            let (_, runs) = expand(&text, &[]).unwrap();
            if let Some(kind) = &runs[0].experiment.testbed.plot {
                assert!(script.contains(&format!("\"{kind}\": ")), "{}: plot.py has no kind {kind}", path.display());
                named += 1;
            }
        }
        assert!(named >= 8, "only {named} testbed files name a figure");
    }
}
