//! `rdtp bench router` — what a caching router costs and gives on loopback.
//!
//! Not a timed test. For each run it starts `rdtp serve --pattern SIZE` and `rdtp route`
//! (`--workers` as given, default one per core; a content store sized for the object, in
//! units and in bytes) as child processes, then fetches the object three times with
//! `rdtp fetch … -o /dev/null --json`: through the router with a cold store (every unit a
//! miss, forwarded to the server), through it again with a warm store (every unit a hit;
//! 300 ms later, for the proofs of the last blocks to come back), and directly from the
//! server. Per fetch it reports goodput and the CPU seconds each process spent during it
//! (client from `wait4`, router and server from `/proc/PID/stat`), and at the end the
//! router's peak RSS.

use rdtp::args::human_size;
use rdtp::error::{EXIT_OK, Error, Result};
use rdtp_proto::router::CACHED_UNIT_OVERHEAD;
use rdtp_proto::wire::DEFAULT_UNIT;

use super::bench::{BenchArgs, Daemon, fetch, table};
use super::serve::PATTERN_NAME;
use super::to_stdout;

/// Options of `rdtp bench router`.
#[derive(clap::Args, Debug)]
pub struct RouterArgs {
    #[command(flatten)]
    pub common: BenchArgs,
    /// Worker threads of the router (default: its own, one per CPU core).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
}

/// `rdtp route` options for a store that holds `objects` objects of `size` bytes fetched in
/// units of `unit` bytes, whole: their units (and 16 more each), in units and in bytes
/// (payload and bookkeeping each).
pub(super) fn store_for(size: u64, unit: u16, objects: u64) -> [String; 4] {
    let units = (size.div_ceil(u64::from(unit)) + 16) * objects;
    let bytes = units * (u64::from(unit) + CACHED_UNIT_OVERHEAD as u64);
    ["--cs-size".into(), units.to_string(), "--cs-bytes".into(), bytes.to_string()]
}

/// CPU seconds (user + system) process `pid` has used so far.
pub(super) fn cpu_seconds(pid: libc::pid_t) -> Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| Error::network("/proc/PID/stat", e))?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Ok((ticks(11) + ticks(12)) / hz)
}

struct Phase {
    case: &'static str,
    elapsed_s: f64,
    goodput_mbps: f64,
    client_cpu: f64,
    router_cpu: Option<f64>,
    server_cpu: f64,
    served_by: String,
}

fn one_run(exe: &std::path::Path, size: u64, cc: &str, workers: Option<usize>) -> Result<(Vec<Phase>, f64)> {
    let server = Daemon::start(exe, &["serve", "--listen", "127.0.0.1:0", "--pattern", &size.to_string()])?;
    let mut args: Vec<String> =
        ["route", "--listen", "127.0.0.1:0", "--upstream", &server.addr, "--id", "bench"].map(String::from).to_vec();
    args.extend(store_for(size, DEFAULT_UNIT, 1));
    if let Some(w) = workers {
        args.extend(["--workers".to_string(), w.to_string()]);
    }
    let router = Daemon::start(exe, &args.iter().map(String::as_str).collect::<Vec<_>>())?;
    let (s_pid, r_pid) = (server.guard.pid(), router.guard.pid());
    let mut phases = Vec::new();
    for (case, via_router) in [("router, cold store", true), ("router, warm store", true), ("direct", false)] {
        if case == "router, warm store" {
            // The last blocks enter the store once their proofs are back (verify before caching).
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        let addr = if via_router { &router.addr } else { &server.addr };
        let (s0, r0) = (cpu_seconds(s_pid)?, cpu_seconds(r_pid)?);
        let (usage, v) = fetch(exe, addr, cc)?;
        let (s1, r1) = (cpu_seconds(s_pid)?, cpu_seconds(r_pid)?);
        phases.push(Phase {
            case,
            elapsed_s: v["elapsed_s"].as_f64().unwrap_or(0.0),
            goodput_mbps: v["goodput_bps"].as_f64().unwrap_or(0.0) / 1e6,
            client_cpu: usage.cpu_s,
            router_cpu: via_router.then_some(r1 - r0),
            server_cpu: s1 - s0,
            served_by: v["served_by"].as_str().unwrap_or("").to_string(),
        });
    }
    let (router_usage, _) = router.stop()?;
    server.stop()?;
    if phases[1].served_by != "router bench 100.0 %" {
        return Err(Error::Runtime(format!("the warm fetch was not all hits: served by {}", phases[1].served_by)));
    }
    Ok((phases, router_usage.max_rss_mib))
}

pub fn run(r: RouterArgs) -> Result<i32> {
    let a = &r.common;
    let bytes = a.check()?;
    if r.workers == Some(0) {
        return Err(Error::Usage("--workers must be at least 1".into()));
    }
    let exe = std::env::current_exe().map_err(|e| Error::network("cannot find this executable", e))?;
    let mut rows = Vec::new();
    let mut rss = Vec::new();
    for run in 1..=a.runs {
        let (phases, router_rss) = one_run(&exe, bytes, &a.cc, r.workers)?;
        rss.push(router_rss);
        for p in phases {
            rows.push(vec![
                run.to_string(),
                p.case.to_string(),
                human_size(bytes),
                a.cc.clone(),
                format!("{:.3}", p.elapsed_s),
                format!("{:.1}", p.goodput_mbps),
                format!("{:.2}", p.client_cpu),
                p.router_cpu.map_or_else(|| "–".to_string(), |c| format!("{c:.2}")),
                format!("{:.2}", p.server_cpu),
                p.served_by,
            ]);
        }
    }
    let header = [
        ("run", true),
        ("case", false),
        ("size", true),
        ("cc", false),
        ("time (s)", true),
        ("goodput (Mbit/s)", true),
        ("client CPU (s)", true),
        ("router CPU (s)", true),
        ("server CPU (s)", true),
        ("served by", false),
    ];
    let mut s = table(a.markdown, &header, &rows);
    s.push_str(&format!(
        "\nrouter peak RSS: {} MiB (content store holding the whole {} object {PATTERN_NAME:?})\n",
        rss.iter().map(|r| format!("{r:.1}")).collect::<Vec<_>>().join(", "),
        human_size(bytes)
    ));
    to_stdout(&s)?;
    Ok(EXIT_OK)
}
