//! `rdtp route` — a caching router between receivers and servers (NFD's role in Hu et al.'s
//! BBR-CD and Saino et al.'s CCTCP): receivers point `rdtp fetch` at it as at a server.
//!
//! Prints `rdtp: routing on ADDR …` to stderr once listening (tests and scripts parse the
//! address from it), with the memory budget (content store and verification staging; the
//! pending table and buffers stay within 64 MiB more, `docs/SECURITY.md`), the counters on
//! exit and on SIGUSR1, every `--stats-interval`, and writes them as JSON with
//! `--stats-json` (from the start: a file that cannot be written is refused, exit code 4).

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rdtp::args::human_size;
use rdtp::error::{EXIT_OK, Error, Result};
use rdtp::router::{Next, RouteOptions, RouterRuntime, Snapshot};
use rdtp::signals::{self, Signal};
use rdtp_proto::NodeId;
use rdtp_proto::router::cs::{self, Admission, CsConfig, Replacement};
use rdtp_proto::router::fib::{Fib, Route, RouteKey};
use rdtp_proto::router::strategy::{self, RetxSuppression, StrategyName};
use rdtp_proto::router::{RouterConfig, SourceLimits};

use super::print_and_exit;

use super::to_stderr;

/// `--cs-insert`'s default, which `rdtp demo --router` uses too: full:0.125.
pub const DEFAULT_CS_INSERT: Admission = Admission::WhenFull(0.125);

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub validation: super::ValidationArgs,
    /// Address and port to listen on (default [::]:7447 dual-stack, else 0.0.0.0:7447; port 0 = any).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<String>,
    /// Default next hop: where requests go that no --route matches (a server or another
    /// router). Several, comma-separated, for a strategy to choose among (--strategy asf).
    #[arg(long, value_name = "ADDR:PORT[,ADDR:PORT…]")]
    pub upstream: Option<String>,
    /// A route KEY=ADDR:PORT, KEY an EID (64 hex digits) or a name prefix (whole /-separated
    /// components, longest match). Repeatable. An EID route may name several next hops,
    /// comma-separated, for a strategy to choose among.
    #[arg(long = "route", value_name = "KEY=ADDR:PORT[,ADDR:PORT…]")]
    pub routes: Vec<String>,
    /// Forwarding strategy: which of a route's next hops a request goes to. best-route (the
    /// first) or asf (the one with the lowest measured RTT, the others probed); `help` lists
    /// them.
    #[arg(long, value_name = "NAME", default_value = "best-route", value_parser = strategy_name)]
    pub strategy: StrategyName,
    /// When a re-request for a unit already pending upstream is forwarded again: fixed (10 ms
    /// after its last forwarding) or exponential (10 ms, doubled each time, at most 250 ms).
    #[arg(long, value_name = "KIND", default_value = "fixed")]
    pub retx_suppression: RetxSuppression,
    /// This router's node id, named in Data served from its store and in its refusals: 1-8
    /// printable characters, or 0x and 16 hex digits. Default: `:PORT`, the port it listens
    /// on (e.g. `:7448`), so routers on one host are told apart; routers on different hosts
    /// that listen on the same port each need an --id.
    #[arg(long, value_name = "ID")]
    pub id: Option<NodeId>,
    /// Content store capacity in units (0 = no caching): a second bound beside --cs-bytes,
    /// whichever is reached first. Default: as many units of the default size (1 402 bytes
    /// and their bookkeeping) as --cs-bytes holds, and at least NFD's 65536, so that the
    /// byte budget is what bounds the store (256MiB: ≈ 170 000 units, ≈ 238 MB of content).
    #[arg(long, value_name = "N")]
    pub cs_size: Option<usize>,
    /// Content store capacity in bytes of memory, e.g. 1GiB: each unit counts its payload
    /// plus its bookkeeping (≈ 180 bytes), so a 60 MB object takes ≈ 65 MiB at the default
    /// unit. The default, 256MiB, holds such an object with room to spare and bounds the
    /// memory whatever units are asked for (units can be 64 KiB and overlap). The memory
    /// budget printed at start is this plus verification staging (32 MiB, at least 4 MiB
    /// per worker); the pending table and buffers stay within 64 MiB more.
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub cs_bytes: String,
    /// Replacement policy of the content store: lru, lfu, fifo, random or clock; `help` lists
    /// them.
    #[arg(long, value_name = "POLICY", default_value = "lru", value_parser = cs_policy)]
    pub cs_policy: Replacement,
    /// Insertion policy: always, prob:P (cache a passing unit with probability P), full:P
    /// (always while the store has room, then with probability P) or none. The default,
    /// full:0.125, caches an object that fits whole on its first fetch, as `always` does, and
    /// keeps most of one larger than the store for the next fetch, which `always` with lru
    /// does not (each unit is evicted just before it is asked for again).
    #[arg(long, value_name = "POLICY", default_value_t = DEFAULT_CS_INSERT)]
    pub cs_insert: Admission,
    /// Most units pending upstream at once, in all (each worker holds 1/N of them, at least
    /// 4096; beyond, requests get Busy).
    #[arg(long, value_name = "N", default_value_t = RouterConfig::default().pit_capacity)]
    pub pit_size: usize,
    /// How long a pending unit waits for its Data, in milliseconds (NDN's Interest lifetime).
    #[arg(long, value_name = "MS", default_value_t = 4000)]
    pub lifetime: u64,
    /// A next hop that sends nothing at all back for MS milliseconds after being asked, and
    /// leaves three attempts unanswered (receivers re-ask: about 3 s at the default), is
    /// presumed dead: what waits on it gets Nack NoRoute naming it ("upstream ADDR did not
    /// answer within 2 s"), and until it answers again one request at a time probes it while
    /// the others are refused at once. 0: never (pending units just expire).
    #[arg(long, value_name = "MS", default_value_t = default_upstream_timeout_ms())]
    pub upstream_timeout: u64,
    /// Units per second each routing thread forwards upstream for all sources together (units
    /// not in the store, resolves, lists, proof requests). When sources (address and port)
    /// compete, each gets an equal share and the rest goes to those asking for more; a source
    /// beyond its share while the others use theirs gets Busy, as one holding more than its
    /// share of the pending units (the worker's share of --pit-size ÷ the sources asking
    /// it) while the others need room. 0: no rate limit.
    #[arg(long, value_name = "UNITS", default_value_t = SourceLimits::default().rate.unwrap_or(0.0) as u64)]
    pub forward_rate: u64,
    /// Print the counters (totals and per second) every SECS seconds.
    #[arg(long, value_name = "SECS")]
    pub stats_interval: Option<f64>,
    /// Write the counters as JSON to FILE at start, at exit and at every report (a FILE
    /// that cannot be written is refused at start, exit code 4).
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// Seed of the router's randomness (tags, random eviction, prob:P); default: random.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Router options as one spec, KEY=VALUE[,...] (e.g. cs_policy=lfu,cs_units=1000,
    /// strategy=asf,control_capacity=8192); `--router help` lists every key with its
    /// default. The options above are short for keys of it (--cs-size is cs_units,
    /// --lifetime is lifetime, …); this spec is applied after them and after --cs, and --set
    /// after it. `verify` is refused: blocks are always verified before they are cached
    /// (caching them unchecked, as NFD does, is a simulation-only baseline: rdtp sim's
    /// `[[topology.router]] verify = false`).
    #[arg(long, value_name = "SPEC", value_parser = router_spec)]
    pub router: Option<String>,
    /// The content store as one spec, POLICY[:KEY=VALUE,...] (e.g. lfu:units=1000,bytes=64MiB,
    /// insert=prob:0.125); `--cs help` lists the policies and keys. Applied after --cs-size,
    /// --cs-bytes, --cs-policy and --cs-insert, which are short for it.
    #[arg(long, value_name = "SPEC", value_parser = cs_spec)]
    pub cs: Option<String>,
    /// One router key, KEY=VALUE (repeatable, applied last in the order given); the keys are
    /// those of --router.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = super::key_value)]
    pub set: Vec<String>,
    /// Routing threads, each a router core with its own socket on the listening address.
    /// Requests are steered to them by object (EID), answers from upstream by the tag of
    /// the request they answer. How capacity is divided: the workers share one content
    /// store (the whole --cs-size and --cs-bytes: an object up to that size is cached
    /// whole on any number of cores); each worker has 1/N of --pit-size, of verification
    /// staging (32 MiB in all) and of the known tree nodes (65536 in all), but at least
    /// 4096 units, 4 MiB and 8192 nodes (one object's requests all go to one worker, and
    /// one fast fetch needs that much), so the staging and node totals grow beyond 8
    /// workers and, at the default --pit-size, the pending total beyond 16. Default:
    /// one per CPU core.
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
}

fn default_upstream_timeout_ms() -> u64 {
    RouterConfig::default().upstream_timeout.map_or(0, |t| t.as_millis() as u64)
}

fn resolve(what: &str, s: &str) -> Result<SocketAddr> {
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    s.to_socket_addrs()
        .map_err(|e| Error::Usage(format!("invalid {what} {s:?} (want ADDR:PORT): {e}")))?
        .next()
        .ok_or_else(|| Error::Usage(format!("{what} {s:?} resolves to no address")))
}

fn strategy_name(text: &str) -> std::result::Result<StrategyName, String> {
    if text == "help" {
        print_and_exit(&strategy::help());
    }
    text.parse().map_err(|e: strategy::ParseStrategyError| e.to_string())
}

fn router_spec(text: &str) -> std::result::Result<String, String> {
    if text == "help" {
        print_and_exit(&RouterConfig::help());
    }
    refuse_unverified(text)?;
    RouterConfig::default().apply_spec(text).map(|_| text.to_string()).map_err(|e| e.to_string())
}

/// A spec that sets `verify` (caching without verification, as NFD does): refused with
/// what it is, where it exists and why not here. It is no key of the core's table: only
/// the ns-3 router can cache unchecked (`[[topology.router]] verify = false`, through
/// `rdtp-ffi`'s `experiments` feature), the baseline that measures what verify-before-caching
/// costs (docs/EXPERIMENTS.md §8f); no unverified byte may reach a cache on a real network
/// (docs/SECURITY.md, "Routers verify before caching").
fn refuse_unverified(spec: &str) -> std::result::Result<(), String> {
    let sets_verify = spec.split([',', ';']).any(|kv| kv.split('=').next().is_some_and(|k| k.trim() == "verify"));
    if sets_verify {
        return Err("verify: rdtp route always verifies blocks before caching them; caching unverified \
                    blocks is a simulation-only baseline (rdtp sim, [[topology.router]] verify = false)"
            .into());
    }
    Ok(())
}

fn cs_spec(text: &str) -> std::result::Result<String, String> {
    if text == "help" {
        print_and_exit(&CsConfig::help(&RouterConfig::default().cs));
    }
    RouterConfig::default().cs.apply_spec(text).map(|_| text.to_string()).map_err(|e| e.to_string())
}

fn cs_policy(text: &str) -> std::result::Result<Replacement, String> {
    if text == "help" {
        print_and_exit(&cs::help());
    }
    text.parse().map_err(|e: cs::ParseReplacementError| e.to_string())
}

/// `--route KEY=ADDR[,ADDR…]`: the route to the first next hop, and the others.
fn route(s: &str) -> Result<Vec<Route>> {
    let (key, addrs) = s
        .rsplit_once('=')
        .ok_or_else(|| Error::Usage(format!("--route {s:?}: want KEY=ADDR:PORT (KEY an EID or a name prefix)")))?;
    let key = RouteKey::parse(key);
    if matches!(key, RouteKey::Name(_)) && addrs.contains(',') {
        return Err(Error::Usage(format!("--route {s:?}: a name prefix takes one next hop")));
    }
    addrs.split(',').map(|a| Ok(Route { key: key.clone(), next_hop: resolve("--route next hop", a)? })).collect()
}

/// The router's configuration from the command line.
pub fn config(a: &Args) -> Result<RouterConfig> {
    if a.upstream.is_none() && a.routes.is_empty() {
        return Err(Error::Usage("give an --upstream (default next hop) or at least one --route".into()));
    }
    let upstreams: Vec<SocketAddr> = match a.upstream.as_deref() {
        Some(u) => u.split(',').map(|u| resolve("--upstream", u)).collect::<Result<_>>()?,
        None => Vec::new(),
    };
    let mut fib = Fib::new(upstreams.first().copied());
    for &u in upstreams.iter().skip(1) {
        fib.add_default_next_hop(u);
    }
    for r in &a.routes {
        let mut hops = route(r)?.into_iter();
        if let Some(first) = hops.next() {
            fib.add(first);
        }
        for other in hops {
            fib.add_next_hop(other);
        }
    }
    let mut config = RouterConfig {
        // Unknown: the runtime names the router after its port once it is bound.
        id: NodeId::UNKNOWN,
        fib,
        validation: a.validation.config(),
        ..RouterConfig::default()
    };
    let cs_keys = format!("cs_bytes={},cs_policy={},cs_insert={}", a.cs_bytes, a.cs_policy, a.cs_insert);
    let mut keys = vec![
        format!("pit_size={},lifetime={}ms,upstream_timeout={}ms", a.pit_size, a.lifetime, a.upstream_timeout),
        format!("forward_rate={},strategy={},retx_suppression={}", a.forward_rate, a.strategy, a.retx_suppression),
        format!("seed={}", a.seed.unwrap_or_else(rdtp::random_seed)),
    ];
    keys.extend(a.id.map(|id| format!("id={id}")));
    let apply = |c: &mut RouterConfig, spec: &str| c.apply_spec(spec);
    let options = "the router options".to_string();
    super::apply_specs(&mut config, &[(options.clone(), &cs_keys)], apply)?;
    // Until every spec is applied, "not given" (a spec may still set units, or the bytes the
    // default is derived from).
    config.cs.capacity_units = a.cs_size.unwrap_or(UNITS_NOT_GIVEN);
    if let Some(cs) = &a.cs {
        config.cs.apply_spec(cs).map_err(|e| Error::Usage(format!("--cs {cs}: {e}")))?;
    }
    let mut specs = vec![(options, keys.join(","))];
    specs.extend(a.router.iter().map(|r| (format!("--router {r}"), r.clone())));
    specs.extend(a.set.iter().map(|kv| (format!("--set {kv}"), kv.clone())));
    for kv in &a.set {
        refuse_unverified(kv).map_err(|e| Error::Usage(format!("--set {kv}: {e}")))?;
    }
    let specs: Vec<(String, &str)> = specs.iter().map(|(o, s)| (o.clone(), s.as_str())).collect();
    super::apply_specs(&mut config, &specs, apply)?;
    if config.cs.capacity_units == UNITS_NOT_GIVEN {
        config.cs.capacity_units = rdtp_proto::router::units_for_budget(config.cs.capacity_bytes);
    }
    Ok(config)
}

/// `--cs-size` and the specs left the unit bound unset: it is derived from the byte budget.
const UNITS_NOT_GIVEN: usize = usize::MAX;

pub fn run(a: Args) -> Result<i32> {
    let config = config(&a)?;
    let listen = a.listen.as_deref().map(|l| resolve("--listen", l)).transpose()?;
    let interval = match a.stats_interval {
        Some(s) if !(s.is_finite() && s > 0.0) => return Err(Error::Usage("--stats-interval must be positive".into())),
        s => s.map(Duration::from_secs_f64),
    };
    let upstream = match config.fib.default_next_hops() {
        [] => "none".to_string(),
        hops => hops.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
    };
    let strategy = config.strategy;
    if a.workers == Some(0) {
        return Err(Error::Usage("--workers must be at least 1".into()));
    }
    let workers = a.workers.unwrap_or_else(rdtp::server::default_workers);
    let staging = rdtp::router::staging_bytes(&config, workers);
    let cs = format!(
        "{} or {} units, {}, insert {}; verification staging {}: memory budget {}",
        human_size(config.cs.capacity_bytes),
        config.cs.capacity_units,
        config.cs.replacement,
        config.cs.admission,
        human_size(staging),
        human_size(config.cs.capacity_bytes.saturating_add(staging)),
    );
    map_large_allocations();
    let mut rt = RouterRuntime::bind(RouteOptions { listen, config, workers })?;
    let mut reports = Reports::new(a.stats_json.clone(), rt.snapshot());
    // A statistics file that cannot be written is refused now, not found out at exit.
    reports.write_json()?;
    let id = rt.id();
    let threads = match rt.workers() {
        1 => String::new(),
        n => format!(", {n} workers"),
    };
    to_stderr(&format!(
        "rdtp: routing on {} (id {id}, upstream {upstream}, strategy {strategy}, content store {cs}{threads})\n",
        rt.local_addr()
    ));

    let stop = signals::Flag::on(&signals::STOP).map_err(|e| Error::network("sigaction", e))?;
    let usr1 = signals::Flag::on(&[Signal::SIGUSR1]).map_err(|e| Error::network("sigaction", e))?;
    let mut all = signals::STOP.to_vec();
    all.push(Signal::SIGUSR1);
    let blocked = signals::Blocked::new(&all).map_err(|e| Error::network("sigprocmask", e))?;

    let mut next_tick = interval.map(|i| Instant::now() + i);
    let result = rt.run_with(Some(&blocked), |rt| {
        if stop.raised() {
            return Next::Stop;
        }
        let due = next_tick.is_some_and(|t| Instant::now() >= t);
        if usr1.take() || due {
            reports.report(rt.snapshot(), due);
            if let (true, Some(i)) = (due, interval) {
                next_tick = Some(Instant::now() + i);
            }
        }
        Next::Continue(next_tick.map(|t| t.saturating_duration_since(Instant::now())))
    });
    let last = result?;
    to_stderr("rdtp: shutting down\n");
    reports.report(last, false);
    Ok(EXIT_OK)
}

/// Have glibc give every allocation of 32 KiB or more (units of up to 64 KiB, in the store,
/// in staging, in flight) its own mapping, returned to the system when freed. Otherwise a
/// store whose large units are allocated by one worker thread and evicted by another leaves
/// the freed memory in the first thread's arena, where the second cannot reuse it: under
/// the store flood of `docs/SECURITY.md` with `--cs-bytes 64MiB` on two workers, 180 MiB
/// of RSS instead of 148. Units of the default size are far below the threshold.
fn map_large_allocations() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of the allocator (under its lock).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 10);
    }
}

/// The reports of one run: lines to stderr, and the JSON file rewritten each time.
struct Reports {
    json: Option<PathBuf>,
    start: Snapshot,
    last: Snapshot,
    intervals: Vec<serde_json::Value>,
}

impl Reports {
    fn new(json: Option<PathBuf>, start: Snapshot) -> Self {
        Reports { json, last: start.clone(), start, intervals: Vec::new() }
    }

    /// Print `now` (totals, and per second since the last report); `interval` if this is a
    /// periodic report (kept in the JSON's series).
    fn report(&mut self, now: Snapshot, interval: bool) {
        let rates = now.rates_since(&self.last);
        let r = |k: &str| rates["router"][k].as_f64().unwrap_or(0.0);
        to_stderr(&format!("rdtp route: {now}\n"));
        to_stderr(&format!(
            "rdtp route: per second over the last {:.1} s: {:.0} requests, {:.0} units, {:.0} hits, {:.0} misses, \
             {:.0} coalesced, {:.2} Mbit/s from upstream, {:.2} Mbit/s to downstreams\n",
            now.elapsed_s - self.last.elapsed_s,
            r("requests"),
            r("units_requested"),
            r("cs_hits"),
            r("cs_misses"),
            r("coalesced"),
            r("bytes_in") * 8e-6,
            r("bytes_out") * 8e-6,
        ));
        if interval {
            self.intervals.push(serde_json::json!({ "t": now.elapsed_s, "per_second": rates }));
        }
        self.last = now;
        if let Err(e) = self.write_json() {
            to_stderr(&format!("rdtp route: {e}\n"));
        }
    }

    /// Rewrite the JSON file (if any) with the last report.
    fn write_json(&self) -> Result<()> {
        let Some(path) = &self.json else { return Ok(()) };
        write_json(path, &self.last, &self.last.rates_since(&self.start), &self.intervals)
            .map_err(|e| Error::io(format!("cannot write the statistics file {}", path.display()), e))
    }
}

/// Write the report atomically (a temporary file renamed over `path`).
fn write_json(
    path: &Path,
    totals: &Snapshot,
    per_second: &serde_json::Value,
    intervals: &[serde_json::Value],
) -> std::io::Result<()> {
    let v = serde_json::json!({ "totals": totals, "per_second": per_second, "intervals": intervals });
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(&v)?)?;
    std::fs::rename(&tmp, path)
}
