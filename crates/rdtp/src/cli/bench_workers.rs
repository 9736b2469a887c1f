//! `rdtp bench workers` — do `rdtp serve` and `rdtp route` use more cores when given more
//! workers? (issue 12: 16 concurrent fetches, 2 workers against 1.)
//!
//! Not a timed test. It writes `--objects` files of `--size` random bytes into a temporary
//! directory (page cache) and, for each run and each worker count of `--workers`, starts
//! `rdtp serve DIR --workers W` — or, with `--router`, `rdtp serve DIR --workers 1` behind
//! `rdtp route --workers W` whose store is first warmed by one fetch of every object — and
//! then `--fetches` concurrent `rdtp fetch … -o /dev/null` children, fetch *i* asking for
//! object *i* mod `--objects`. It reports the total goodput (all bytes over the time from
//! the first start to the last exit), its ratio to the first worker count's in the same
//! run, the daemon's CPU time during the fetches (from `/proc/PID/stat`: seconds per GiB
//! and in cores, CPU seconds over wall seconds), the clients' CPU per GiB (`wait4`) and the
//! daemon's peak RSS.
//!
//! Every process shares the machine's cores: the clients' CPU (hashing every byte to
//! verify it, copying it out of the socket) competes with the daemon's. A daemon that is
//! not using a whole core with one worker cannot go faster with two, whatever its
//! design: the "cores" column says which case a run is in.

use std::process::{Command, Stdio};
use std::time::Instant;

use rdtp::args::human_size;
use rdtp::error::{EXIT_OK, Error, Result};
use rdtp_proto::wire::DEFAULT_UNIT;

use super::bench::{BenchArgs, Daemon, Guard, table, temp_objects, write_json};
use super::bench_router::cpu_seconds;
use super::to_stdout;

/// Options of `rdtp bench workers`.
#[derive(clap::Args, Debug)]
pub struct WorkersArgs {
    #[command(flatten)]
    pub common: BenchArgs,
    /// Concurrent fetches.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub fetches: usize,
    /// Worker counts to compare, in this order (the first is the baseline of "× first").
    #[arg(long, value_name = "LIST", default_value = "1,2", value_delimiter = ',')]
    pub workers: Vec<usize>,
    /// Measure `rdtp route` (warm store) in front of a one-worker server instead of the server.
    #[arg(long)]
    pub router: bool,
    /// Distinct objects the fetches ask for, in turn (default: 1 for the server; as many
    /// as fetches through the router, which serves one object from one core).
    #[arg(long, value_name = "K")]
    pub objects: Option<usize>,
    /// Also write the rows as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,
}

/// One measurement.
#[derive(serde::Serialize)]
struct Row {
    run: u32,
    daemon: &'static str,
    workers: usize,
    fetches: usize,
    objects: usize,
    bytes: u64,
    elapsed_s: f64,
    goodput_mbps: f64,
    /// Goodput over the first worker count's in the same run.
    vs_first: Option<f64>,
    daemon_cpu_s: f64,
    daemon_cpu_s_per_gib: f64,
    /// Daemon CPU seconds over wall seconds: how many cores it kept busy.
    daemon_cores: f64,
    clients_cpu_s_per_gib: f64,
    daemon_max_rss_mib: f64,
}

/// Removes the temporary directory.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn run(a: WorkersArgs) -> Result<i32> {
    let bytes = a.common.check()?;
    if bytes == 0 {
        return Err(Error::Usage("--size must be above zero".into()));
    }
    if a.fetches == 0 {
        return Err(Error::Usage("--fetches must be at least 1".into()));
    }
    if a.workers.is_empty() || a.workers.contains(&0) {
        return Err(Error::Usage("--workers wants a list of counts ≥ 1, e.g. 1,2".into()));
    }
    let objects = a.objects.unwrap_or(if a.router { a.fetches } else { 1 });
    if objects == 0 {
        return Err(Error::Usage("--objects must be at least 1".into()));
    }
    let exe = std::env::current_exe().map_err(|e| Error::network("cannot find this executable", e))?;
    let (dir, names) = temp_objects(bytes, objects, "workers")?;
    let dir = TempDir(dir);
    let mut rows = Vec::new();
    for run in 1..=a.common.runs {
        let mut first = None;
        for &w in &a.workers {
            let mut row = one(&exe, &a, run, w, &dir.0, &names, bytes)?;
            let base = *first.get_or_insert(row.goodput_mbps);
            row.vs_first = (base > 0.0).then(|| row.goodput_mbps / base);
            rows.push(row);
        }
    }
    if let Some(path) = &a.json {
        write_json(path, &rows)?;
    }
    let header = [
        ("run", true),
        ("daemon", false),
        ("workers", true),
        ("fetches × size", true),
        ("objects", true),
        ("time (s)", true),
        ("goodput (Mbit/s)", true),
        ("× first", true),
        ("daemon CPU (s/GiB)", true),
        ("daemon cores", true),
        ("clients CPU (s/GiB)", true),
        ("daemon max RSS (MiB)", true),
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.run.to_string(),
                r.daemon.to_string(),
                r.workers.to_string(),
                format!("{} × {}", r.fetches, human_size(r.bytes / r.fetches as u64)),
                r.objects.to_string(),
                format!("{:.3}", r.elapsed_s),
                format!("{:.1}", r.goodput_mbps),
                r.vs_first.map_or_else(String::new, |x| format!("{x:.2}")),
                format!("{:.2}", r.daemon_cpu_s_per_gib),
                format!("{:.2}", r.daemon_cores),
                format!("{:.2}", r.clients_cpu_s_per_gib),
                format!("{:.1}", r.daemon_max_rss_mib),
            ]
        })
        .collect();
    to_stdout(&table(a.common.markdown, &header, &cells))?;
    Ok(EXIT_OK)
}

/// One worker count: start the daemon(s), warm a router's store, run the fetches.
fn one(
    exe: &std::path::Path,
    a: &WorkersArgs,
    run: u32,
    workers: usize,
    dir: &std::path::Path,
    names: &[String],
    size: u64,
) -> Result<Row> {
    let dir = dir.to_string_lossy();
    let server_workers = if a.router { 1 } else { workers }.to_string();
    let server = Daemon::start(exe, &["serve", "--listen", "127.0.0.1:0", "--workers", &server_workers, &dir])?;
    let router = if a.router {
        // The workers share one store: room for every object.
        let mut args: Vec<String> = ["route", "--listen", "127.0.0.1:0", "--upstream", &server.addr, "--id", "bench"]
            .map(String::from)
            .to_vec();
        args.extend(super::bench_router::store_for(size, DEFAULT_UNIT, names.len() as u64));
        args.extend(["--workers".to_string(), workers.to_string()]);
        let r = Daemon::start(exe, &args.iter().map(String::as_str).collect::<Vec<_>>())?;
        for name in names {
            fetch_all(exe, &r.addr, std::slice::from_ref(name), &a.common.cc, a.fetches.min(1))?;
        }
        // Blocks enter the store once their proofs are back (verify before caching).
        std::thread::sleep(std::time::Duration::from_millis(500));
        Some(r)
    } else {
        None
    };
    let measured = router.as_ref().unwrap_or(&server);
    let pid = measured.guard.pid();
    let before = cpu_seconds(pid)?;
    let t0 = Instant::now();
    let clients = fetch_all(exe, &measured.addr, names, &a.common.cc, a.fetches);
    let elapsed = t0.elapsed().as_secs_f64();
    let after = cpu_seconds(pid);
    let (router_usage, server_usage) = match router {
        Some(r) => (Some(r.stop()?.0), server.stop()?.0),
        None => (None, server.stop()?.0),
    };
    let (clients_cpu, served) = clients?;
    if a.router && served.iter().any(|s| s != "router bench 100.0 %") {
        return Err(Error::Runtime(format!("a fetch through the warm router was not all hits: {served:?}")));
    }
    let daemon_cpu = after? - before;
    let total = size * a.fetches as u64;
    let gib = total as f64 / f64::from(1u32 << 30);
    Ok(Row {
        run,
        daemon: if a.router { "route" } else { "serve" },
        workers,
        fetches: a.fetches,
        objects: names.len(),
        bytes: total,
        elapsed_s: elapsed,
        goodput_mbps: total as f64 * 8.0 / elapsed / 1e6,
        vs_first: None,
        daemon_cpu_s: daemon_cpu,
        daemon_cpu_s_per_gib: daemon_cpu / gib,
        daemon_cores: daemon_cpu / elapsed,
        clients_cpu_s_per_gib: clients_cpu / gib,
        daemon_max_rss_mib: router_usage.unwrap_or(server_usage).max_rss_mib,
    })
}

/// Run `n` fetches at once from `addr`, fetch *i* asking for `names[i % len]`; their CPU
/// seconds in all and what each said served it. Every fetch must succeed.
fn fetch_all(exe: &std::path::Path, addr: &str, names: &[String], cc: &str, n: usize) -> Result<(f64, Vec<String>)> {
    let mut children = Vec::with_capacity(n);
    for i in 0..n {
        let child = Command::new(exe)
            .args(["fetch", addr, &names[i % names.len()], "-o", "/dev/null", "--json", "-q", "--cc", cc])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Error::network("cannot start a client", e))?;
        children.push(Guard { child: Some(child) });
    }
    let (mut cpu, mut served) = (0.0, Vec::with_capacity(n));
    for mut g in children {
        let mut out = g.child.as_mut().and_then(|c| c.stdout.take());
        let usage = g.reap()?;
        let mut json = String::new();
        if let Some(o) = out.as_mut() {
            use std::io::Read;
            let _ = o.read_to_string(&mut json);
        }
        if !libc::WIFEXITED(usage.status) || libc::WEXITSTATUS(usage.status) != 0 {
            return Err(Error::Runtime(format!("a client failed (status {:#x})", usage.status)));
        }
        let v: serde_json::Value = serde_json::from_str(json.trim())
            .map_err(|e| Error::Runtime(format!("a client printed no JSON summary: {e}")))?;
        cpu += usage.cpu_s;
        served.push(v["served_by"].as_str().unwrap_or("").to_string());
    }
    Ok((cpu, served))
}
