//! `rdtp-testbed` — real rdtp processes and real kernel TCP across one emulated network.
//!
//! ```text
//! rdtp-testbed EXPERIMENT.toml --out DIR [--set key=value]... [--dry-run]
//! rdtp-testbed cleanup [--all]      delete leftover rdtp-* namespaces
//! rdtp-testbed check                the prerequisites, without running anything
//! ```
//!
//! Each run of an experiment creates a network namespace for the server and for every
//! client group, each with a persistent tap; the real-time ns-3 emulator of rdtp-sim
//! (`rdtp-sim --emulate`) forwards between the taps across the same dumbbell bottleneck or
//! WiFi hop rdtp-sim simulates; `rdtp serve` / `rdtp serve --tcp` and `rdtp fetch` run inside
//! the namespaces. Everything is torn down after each run, on error, on SIGINT/SIGTERM and on
//! panic. When the runs end, the figure the file names (`[testbed] plot`) is drawn by
//! `experiments/plot.py` as rdtp-sim draws its own (crate `rdtp-plot`: without matplotlib a
//! hint, never another exit code). Exit codes: 0 ok, 1 a run failed, 2 usage or experiment
//! error, 3 a prerequisite is missing (root, ip, ethtool, ping, /dev/net/tun, rdtp, rdtp-sim
//! with ns-3), 130 interrupted. See the crate README.

mod experiment;
mod netns;
mod procs;
mod report;
mod results;
mod routers;
mod run;

use anyhow::{Context as _, Result, anyhow, bail};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use crate::run::{ContentStore, Context, RunResult, Tools};

const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_PREREQ: u8 = 3;
const EXIT_INTERRUPTED: u8 = 130;

#[derive(clap::Parser, Debug)]
#[command(
    name = "rdtp-testbed",
    version,
    about = "Real rdtp and kernel-TCP processes in network namespaces over a real-time ns-3 emulator",
    args_conflicts_with_subcommands = true,
    after_help = "Needs root (it creates network namespaces and tap devices), iproute2 (ip, ss), ethtool,\nping (iputils) and ns-3 3.44 (tools/setup.sh) for rdtp-sim.\nWhen the runs end it draws the figure the file names ([testbed] plot) with\nexperiments/plot.py and matplotlib (tools/setup.sh; RDTP_PYTHON picks the interpreter)."
)]
struct Options {
    #[command(subcommand)]
    command: Option<Command>,
    /// The experiment file.
    #[arg(required = true)]
    experiment: Option<PathBuf>,
    /// Output directory (default: rdtp-testbed-out/<experiment name>).
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Override a value before the sweep (dotted path: path.rate=200Mbps, flow.0.cc=bbrp,
    /// testbed.duration=10, flow.*.start=1).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = rdtp_scenario::parse_set)]
    sets: Vec<(String, String)>,
    /// Print the runs and the emulator arguments; needs no root.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    tools: ToolArgs,
}

/// Where the programs a run starts come from.
#[derive(clap::Args, Debug)]
struct ToolArgs {
    /// The rdtp binary (default: next to this program, then PATH).
    #[arg(long, value_name = "PATH", env = "RDTP_TESTBED_RDTP", global = true)]
    rdtp: Option<PathBuf>,
    /// rdtp-sim built with ns-3 (default: next to this program, then PATH).
    #[arg(long = "rdtp-sim", value_name = "PATH", env = "RDTP_TESTBED_SIM", global = true)]
    sim: Option<PathBuf>,
    /// The NDNts rig for `ndnts` flows and `ndn_producer = "ndnts"` (default: tests/ndnts
    /// of the checkout this program was built in, or of the current directory).
    #[arg(long, value_name = "DIR", env = "RDTP_TESTBED_NDNTS", global = true)]
    ndnts: Option<PathBuf>,
}

/// The NDNts rig: `explicit`, or `tests/ndnts` beside the current directory or above this
/// program (`target/release/..`), wherever its producer and node_modules are.
fn find_ndnts(explicit: &Option<PathBuf>) -> Option<PathBuf> {
    let usable = |d: &Path| d.join("producer.mjs").is_file() && d.join("node_modules").is_dir();
    if let Some(d) = explicit {
        return usable(d).then(|| d.clone());
    }
    let mut starts: Vec<PathBuf> = std::env::current_dir().into_iter().collect();
    starts.extend(std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)));
    starts.iter().flat_map(|s| s.ancestors().map(|a| a.join("tests").join("ndnts"))).find(|d| usable(d))
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Delete rdtp-* namespaces whose testbed process is gone.
    Cleanup {
        /// Every rdtp-* namespace, and kill what runs in them.
        #[arg(long)]
        all: bool,
    },
    /// Report whether this machine can run experiments.
    Check,
}

fn main() -> ExitCode {
    let o = match <Options as clap::Parser>::try_parse() {
        Ok(o) => o,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    match o.command {
        Some(Command::Cleanup { all }) => cleanup(all),
        Some(Command::Check) => match prerequisites(&o.tools, true) {
            Ok(t) => {
                eprintln!("rdtp-testbed: ready (rdtp: {}, rdtp-sim: {})", t.rdtp.display(), t.sim.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("rdtp-testbed: {e:#}");
                ExitCode::from(EXIT_PREREQ)
            }
        },
        None => run_experiment(&o),
    }
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn find_program(explicit: &Option<PathBuf>, name: &str) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return if p.is_file() { Ok(p.clone()) } else { Err(anyhow!("{} does not exist", p.display())) };
    }
    if let Some(dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
        let beside = dir.join(name);
        if beside.is_file() {
            return Ok(beside);
        }
    }
    std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|c| c.is_file()))
        .ok_or_else(|| {
            anyhow!("{name} not found next to rdtp-testbed or on PATH (cargo build --release -p rdtp -p rdtp-ns3; or --{name} PATH)")
        })
}

/// Root, tools, /dev/net/tun, and the two programs (rdtp-sim with ns-3 and the emulator).
/// Every prerequisite is checked, and the error names all that are missing, one per line
/// (with the Debian packages to install at the end), not only the first.
fn prerequisites(o: &ToolArgs, need_ping: bool) -> Result<Tools> {
    let mut missing: Vec<String> = Vec::new();
    let mut packages: Vec<&str> = Vec::new();
    if !is_root() {
        missing.push(
            "root: it creates network namespaces (ip netns add) and tap devices (/dev/net/tun) and \
             runs processes inside them; try sudo"
                .into(),
        );
    }
    let mut tools = vec![("ip", "iproute2"), ("ss", "iproute2"), ("ethtool", "ethtool")];
    if need_ping {
        tools.push(("ping", "iputils-ping"));
    }
    for (tool, package) in tools {
        if !procs::on_path(tool) {
            let or = if tool == "ping" { ", or set testbed.ping = false" } else { "" };
            missing.push(format!("{tool} (apt-get install {package}{or})"));
            if !packages.contains(&package) {
                packages.push(package);
            }
        }
    }
    if !Path::new("/dev/net/tun").exists() {
        missing.push("/dev/net/tun (modprobe tun)".into());
    }
    let rdtp = find_program(&o.rdtp, "rdtp").map_err(|e| missing.push(format!("{e:#}"))).ok();
    let sim = find_program(&o.sim, "rdtp-sim").map_err(|e| missing.push(format!("{e:#}"))).ok();
    if let Some(sim) = &sim {
        match std::process::Command::new(sim)
            .args(["--emulate", "--PrintHelp"])
            .stdin(std::process::Stdio::null())
            .output()
        {
            Ok(probe) => {
                let text =
                    String::from_utf8_lossy(&probe.stdout).into_owned() + &String::from_utf8_lossy(&probe.stderr);
                if !text.contains("--Taps") {
                    missing.push(format!(
                        "ns-3 in {}: {}",
                        sim.display(),
                        text.lines()
                            .find(|l| l.contains("ns-3"))
                            .unwrap_or("no --emulate mode (rebuild rdtp-ns3 with ns-3 installed)")
                    ));
                }
            }
            Err(e) => missing.push(format!("a runnable {}: {e}", sim.display())),
        }
    }
    match (rdtp, sim) {
        (Some(rdtp), Some(sim)) if missing.is_empty() => Ok(Tools { rdtp, sim, ndnts: find_ndnts(&o.ndnts) }),
        _ => {
            let mut text = format!("this machine cannot run the testbed; missing ({}):", missing.len());
            for m in &missing {
                text.push_str("\n  - ");
                text.push_str(m);
            }
            if !packages.is_empty() {
                text.push_str(&format!("\n(apt-get install {}, or tools/setup.sh)", packages.join(" ")));
            }
            bail!(text)
        }
    }
}

fn cleanup(all: bool) -> ExitCode {
    if !is_root() {
        eprintln!("rdtp-testbed: cleanup must run as root (it deletes network namespaces)");
        return ExitCode::from(EXIT_PREREQ);
    }
    let mut removed = 0;
    let mut failed = 0;
    for ns in netns::list("rdtp-") {
        let stale = match netns::owner_pid(&ns) {
            Some(pid) => !netns::pid_alive(pid),
            None => false,
        };
        if !(stale || all) {
            eprintln!("rdtp-testbed: keeping {ns} (its testbed is still running; --all removes it anyway)");
            continue;
        }
        match netns::delete(&ns) {
            Ok(()) => {
                eprintln!("rdtp-testbed: deleted {ns}");
                removed += 1;
            }
            Err(e) => {
                eprintln!("rdtp-testbed: {ns}: {e:#}");
                failed += 1;
            }
        }
    }
    remove_stale_content(all);
    eprintln!("rdtp-testbed: {removed} namespace(s) deleted, {} rdtp-* left", netns::list("rdtp-").len());
    if failed > 0 { ExitCode::from(EXIT_FAILED) } else { ExitCode::SUCCESS }
}

/// Remove the generated-content directories (`$TMPDIR/rdtp-<pid>-content`) of testbeds
/// that are no longer running (`all`: of every testbed).
fn remove_stale_content(all: bool) {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix("-content") else { continue };
        let Some(pid) = netns::owner_pid(stem) else { continue };
        if all || !netns::pid_alive(pid) {
            match fs::remove_dir_all(e.path()) {
                Ok(()) => eprintln!("rdtp-testbed: removed stale content {}", e.path().display()),
                Err(err) => eprintln!("rdtp-testbed: cannot remove {}: {err}", e.path().display()),
            }
        }
    }
}

/// Delete namespaces of testbeds that are no longer running (say so).
fn remove_stale() {
    remove_stale_content(false);
    for ns in netns::list("rdtp-") {
        if let Some(pid) = netns::owner_pid(&ns)
            && !netns::pid_alive(pid)
        {
            match netns::delete(&ns) {
                Ok(()) => eprintln!("rdtp-testbed: removed stale namespace {ns}"),
                Err(e) => eprintln!("rdtp-testbed: cannot remove stale namespace {ns}: {e:#}"),
            }
        }
    }
}

fn run_experiment(o: &Options) -> ExitCode {
    let Some(path) = &o.experiment else { return ExitCode::from(EXIT_USAGE) };
    let (text, keys, runs) = match load_runs(o, path) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let name = runs.first().map(|r| r.experiment.testbed.name.clone()).unwrap_or_default();
    let out = o.out.clone().unwrap_or_else(|| PathBuf::from("rdtp-testbed-out").join(&name));
    if o.dry_run {
        print_runs(&runs);
        return ExitCode::SUCCESS;
    }
    let mut ctx = match prepare(o, path, &text, &runs, &out) {
        Ok(ctx) => ctx,
        Err(code) => return code,
    };
    let prefix = ctx.prefix.clone();
    eprintln!("rdtp-testbed: {} run(s) of '{name}' into {}", runs.len(), out.display());
    let started = Instant::now();
    let (results, mut failed) = run_all(&mut ctx, &keys, &runs, &out);
    drop(ctx);
    let left = netns::list(&format!("{prefix}-"));
    if !left.is_empty() {
        eprintln!("rdtp-testbed: namespaces left behind: {} (rdtp-testbed cleanup removes them)", left.join(", "));
        failed += 1;
    }
    eprintln!(
        "rdtp-testbed: {} of {} run(s) done in {:.1} s; summary: {}",
        results.iter().filter(|r| r.is_some()).count(),
        runs.len(),
        started.elapsed().as_secs_f64(),
        out.join("summary.csv").display()
    );
    if procs::interrupted() {
        eprintln!("rdtp-testbed: interrupted; everything it started was stopped and removed");
        return ExitCode::from(EXIT_INTERRUPTED);
    }
    // The figure, as rdtp-sim draws its own (crate rdtp-plot); it never changes the exit status.
    if let Some(kind) = runs.first().and_then(|r| r.experiment.testbed.plot.clone())
        && results.iter().any(Option::is_some)
    {
        let _ = rdtp_plot::draw("rdtp-testbed", path, &kind, &out);
    }
    if failed > 0 { ExitCode::from(EXIT_FAILED) } else { ExitCode::SUCCESS }
}

/// The experiment file's text, the sweep's keys and its runs, each checked to lay out and
/// to give emulator arguments; the exit code (usage) after saying what is wrong otherwise.
fn load_runs(o: &Options, path: &Path) -> Result<(String, Vec<String>, Vec<experiment::Run>), ExitCode> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("rdtp-testbed: {}: {e:#}", path.display());
            return Err(ExitCode::from(EXIT_USAGE));
        }
    };
    let (keys, runs) = match experiment::expand(&text, &o.sets) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("rdtp-testbed: {}: {e:#}", path.display());
            return Err(ExitCode::from(EXIT_USAGE));
        }
    };
    let mut warned = Vec::new();
    for w in runs.iter().flat_map(experiment::deprecations) {
        if !warned.contains(&w) {
            eprintln!("rdtp-testbed: warning: {}: {w}", path.display());
            warned.push(w);
        }
    }
    for r in &runs {
        if let Err(e) = experiment::layout(&r.experiment).and_then(|_| experiment::topology_args(r)) {
            eprintln!("rdtp-testbed: run {}: {e:#}", r.id);
            return Err(ExitCode::from(EXIT_USAGE));
        }
    }
    Ok((text, keys, runs))
}

/// `--dry-run`: each run, its layout and the emulator's arguments.
fn print_runs(runs: &[experiment::Run]) {
    for r in runs {
        let l = experiment::layout(&r.experiment).unwrap_or_else(|_| unreachable_layout());
        let args = experiment::topology_args(r).unwrap_or_default();
        println!(
            "{} [{} flow(s) in {} client namespace(s); objects {:?}{}] rdtp-sim --emulate {}",
            r.id,
            l.flows.len(),
            l.namespaces.len(),
            l.objects,
            routers::describe(&r.experiment.path),
            args.join(" ")
        );
    }
}

/// Everything before the first run: the tools, the signal handlers, leftovers of earlier
/// testbeds removed, `out` with the experiment as run, the content store. The exit code
/// after saying what is wrong otherwise.
fn prepare(o: &Options, path: &Path, text: &str, runs: &[experiment::Run], out: &Path) -> Result<Context, ExitCode> {
    let need_ping = runs.iter().any(|r| r.experiment.testbed.ping);
    let tools = match prerequisites(&o.tools, need_ping) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("rdtp-testbed: {e:#}");
            return Err(ExitCode::from(EXIT_PREREQ));
        }
    };
    if let Err(e) = procs::install_signal_handlers() {
        eprintln!("rdtp-testbed: {e:#}");
        return Err(ExitCode::from(EXIT_FAILED));
    }
    remove_stale();
    if let Err(e) = fs::create_dir_all(out) {
        eprintln!("rdtp-testbed: {}: {e:#}", out.display());
        return Err(ExitCode::from(EXIT_USAGE));
    }
    let mut record = format!("# {} as run", path.display());
    for (k, v) in &o.sets {
        record.push_str(&format!(" --set {k}={v}"));
    }
    let _ = fs::write(out.join("experiment.toml"), format!("{record}\n{text}"));

    let prefix = format!("rdtp-{}", std::process::id());
    let content = match ContentStore::new(&prefix) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rdtp-testbed: {e:#}");
            return Err(ExitCode::from(EXIT_FAILED));
        }
    };
    Ok(Context { tools, prefix, content })
}

/// Run each run in its own directory under `out`, rewriting the summaries after each, until
/// done or interrupted: the results (`None` for a failed run) and how many failed.
fn run_all(ctx: &mut Context, keys: &[String], runs: &[experiment::Run], out: &Path) -> (Vec<Option<RunResult>>, u32) {
    let mut results: Vec<Option<RunResult>> = Vec::new();
    let mut failed = 0;
    for (i, r) in runs.iter().enumerate() {
        let dir = out.join(&r.id);
        let _ = fs::remove_dir_all(&dir);
        if let Err(e) = fs::create_dir_all(&dir) {
            eprintln!("rdtp-testbed: {}: {e:#}", dir.display());
            failed += 1;
            results.push(None);
            continue;
        }
        let label = if r.label.is_empty() { r.id.clone() } else { r.label.clone() };
        let t = Instant::now();
        let at = format!("[{}/{}] {label}", i + 1, runs.len());
        eprintln!("{at} …");
        match run::run_one(ctx, r, &dir) {
            Ok(res) => {
                report_run(&at, t.elapsed().as_secs_f64(), &res);
                results.push(Some(res));
            }
            Err(e) => {
                eprintln!("{at} … FAILED after {:.1} s: {e:#}", t.elapsed().as_secs_f64());
                failed += 1;
                results.push(None);
            }
        }
        if let Err(e) = write_summaries(out, keys, runs, &results) {
            eprintln!("rdtp-testbed: {e:#}");
        }
        if procs::interrupted() {
            break;
        }
    }
    (results, failed)
}

/// The line of a finished run (`at` is `[I/N] LABEL`): validity, goodput, utilisation,
/// ping RTT, emulator lag.
fn report_run(at: &str, secs: f64, res: &RunResult) {
    let get = |k: &str| res.run.iter().find(|(c, _)| c == k).map_or("", |(_, v)| v.as_str()).to_string();
    eprintln!(
        "{at} … done in {secs:.1} s: {} goodput {} Mbit/s, utilisation {}, ping RTT {} ms, lag p99 {} ms max {} ms{}",
        if res.valid { "valid," } else { "INVALID," },
        get("total_goodput_mbps"),
        get("utilisation"),
        get("ping_rtt_mean_ms"),
        get("lag_p99_ms"),
        get("lag_max_ms"),
        if res.valid { String::new() } else { format!(" ({})", get("invalid_reason")) }
    );
}

fn unreachable_layout() -> experiment::Layout {
    experiment::Layout { flows: Vec::new(), namespaces: Vec::new(), objects: Default::default() }
}

/// runs.csv (one row per run) and summary.csv (one row per flow, with the run's columns).
fn write_summaries(
    out: &Path,
    keys: &[String],
    runs: &[experiment::Run],
    results: &[Option<RunResult>],
) -> anyhow::Result<()> {
    let sweep_cols: Vec<String> = keys.iter().map(|k| experiment::short_key(k)).collect();
    let mut run_header: Vec<String> = Vec::new();
    let mut flow_header: Vec<String> = Vec::new();
    for r in results.iter().flatten() {
        for (k, _) in &r.run {
            if !run_header.contains(k) {
                run_header.push(k.clone());
            }
        }
        for f in &r.flows {
            for (k, _) in f {
                if !flow_header.contains(k) {
                    flow_header.push(k.clone());
                }
            }
        }
    }
    const RUN_IN_SUMMARY: &[&str] = &["valid", "lag_p99_ms", "lag_max_ms", "utilisation", "mean_queue_delay_ms"];
    let with_run_id = |rest: &[String]| std::iter::once("run_id".to_string()).chain(rest.to_vec());
    let mut runs_csv = csv::Writer::from_path(out.join("runs.csv")).context("runs.csv")?;
    let mut summary = csv::Writer::from_path(out.join("summary.csv")).context("summary.csv")?;
    runs_csv.write_record(with_run_id(&sweep_cols).chain(run_header.iter().cloned()))?;
    summary.write_record(
        with_run_id(&sweep_cols).chain(flow_header.iter().cloned()).chain(RUN_IN_SUMMARY.iter().map(|s| s.to_string())),
    )?;
    for (run, res) in runs.iter().zip(results) {
        let Some(res) = res else { continue };
        let start: Vec<String> =
            std::iter::once(run.id.clone()).chain(run.assignment.iter().map(|(_, v)| rdtp_scenario::show(v))).collect();
        let lookup = |cols: &[(String, String)], k: &str| {
            cols.iter().find(|(c, _)| c == k).map_or(String::new(), |(_, v)| v.clone())
        };
        runs_csv.write_record(start.iter().cloned().chain(run_header.iter().map(|h| lookup(&res.run, h))))?;
        for f in &res.flows {
            summary.write_record(
                start
                    .iter()
                    .cloned()
                    .chain(flow_header.iter().map(|h| lookup(f, h)))
                    .chain(RUN_IN_SUMMARY.iter().map(|h| lookup(&res.run, h))),
            )?;
        }
    }
    runs_csv.flush().context("runs.csv")?;
    summary.flush().context("summary.csv")?;
    Ok(())
}
