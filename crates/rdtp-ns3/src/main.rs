//! `rdtp-sim` — runs rdtp (the real protocol core, through its C ABI) inside ns-3.
//!
//! ```text
//! rdtp-sim SCENARIO.toml --out DIR [--jobs N] [--set key=value]... [--shard I/N] [--resume] [--dry-run | --list]
//! rdtp-sim --merge DIR... --out DIR          combine the result directories of shards
//! rdtp-sim --run-one [--Name=value ...]     one simulation (ns-3 CommandLine arguments)
//! rdtp-sim --emulate [--Name=value ...]     the real-time emulator between tap devices in
//!                                           network namespaces (cpp/rdtp-emulate.cc; driven
//!                                           by rdtp-testbed)
//! ```
//!
//! A scenario expands (overrides, then the sweep's cartesian product) into runs; each run is
//! a child process `rdtp-sim --run-one …` (ns-3 keeps global state, so one simulation per
//! process), up to `--jobs` at once. Each writes `DIR/<run-id>/`; the parent then writes
//! `DIR/summary.csv` and `DIR/summary-mean.csv` ([`summary`]). `--shard I/N` runs only the
//! runs whose index is I modulo N, so N machines (a Slurm job array, GNU parallel over ssh)
//! share a sweep; each shard's directory records what it ran (`sweep.toml`, [`shard`]) and
//! `--merge` combines them into what one machine would have written; `--resume` finishes an
//! interrupted invocation, running only the runs without results. Exit codes: 0 ok, 1 a
//! run failed (or, merging, is missing), 2 usage or scenario error, 3 ns-3 not available in
//! this build.

mod error;
mod exports;
mod shard;
mod summary;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::error::Error;
use crate::shard::{Manifest, Shard};
use crate::summary::{RunResult, read_run, write_means, write_summary};
use rdtp_scenario::{Run, expand, run_args};

const NO_NS3: &str = "rdtp-sim: ns-3 is not installed (tools/setup.sh installs ns-3 3.44 into .venv-ns3/, \
                      then cargo build -p rdtp-ns3), cannot simulate";

/// Whether this binary contains the ns-3 simulator.
pub const HAS_NS3: bool = cfg!(rdtp_ns3);

/// The version of the ns-3 this binary is built with (build.rs), e.g. `3.44`.
#[cfg(rdtp_ns3)]
pub const NS3_VERSION: Option<&str> = Some(env!("RDTP_NS3_VERSION"));
/// The version of the ns-3 this binary is built with: none.
#[cfg(not(rdtp_ns3))]
pub const NS3_VERSION: Option<&str> = None;

#[cfg(rdtp_ns3)]
unsafe extern "C" {
    /// The C++ scenario runner (cpp/rdtp-scenario.cc): one simulation, ns-3 CommandLine args.
    fn rdtp_ns3_run(argc: std::ffi::c_int, argv: *mut *mut std::ffi::c_char) -> std::ffi::c_int;
    /// The C++ real-time emulator (cpp/rdtp-emulate.cc): taps in namespaces, ns-3 in between.
    fn rdtp_ns3_emulate(argc: std::ffi::c_int, argv: *mut *mut std::ffi::c_char) -> std::ffi::c_int;
}

/// The C++ applications call the rdtp C ABI, which lives in the `rdtp-ffi` rlib. Rust code
/// never calls it, so without a reference rustc would not link that crate at all and the
/// linker would not pull its objects in. Referencing every entry point from a `#[used]`
/// static makes both happen regardless of link order.
#[allow(dead_code)] // never read: it exists to be linked
struct KeepFfi([*const (); 36]);
// SAFETY: the table is never read; it only holds addresses of functions.
unsafe impl Sync for KeepFfi {}
#[used]
static KEEP_RDTP_FFI: KeepFfi = KeepFfi([
    rdtp_ffi::rdtp_receiver_new_from_spec as *const (),
    rdtp_ffi::rdtp_receiver_new_known_from_spec as *const (),
    rdtp_ffi::rdtp_receiver_help as *const (),
    rdtp_ffi::rdtp_receiver_read as *const (),
    rdtp_ffi::rdtp_receiver_poll_event as *const (),
    rdtp_ffi::rdtp_receiver_status as *const (),
    rdtp_ffi::rdtp_receiver_stats as *const (),
    rdtp_ffi::rdtp_receiver_bytes_received as *const (),
    rdtp_ffi::rdtp_server_new_pattern as *const (),
    rdtp_ffi::rdtp_server_resolve as *const (),
    rdtp_ffi::rdtp_server_stats as *const (),
    rdtp_ffi::rdtp_server_set_id as *const (),
    rdtp_ffi::rdtp_cc_help as *const (),
    rdtp_ffi::rdtp_cc_error as *const (),
    rdtp_ffi::sources::rdtp_receiver_sources as *const (),
    rdtp_ffi::node::rdtp_addr_v4 as *const (),
    rdtp_ffi::node::rdtp_node_kind as *const (),
    rdtp_ffi::node::rdtp_node_free as *const (),
    rdtp_ffi::node::rdtp_node_handle_datagram as *const (),
    rdtp_ffi::node::rdtp_node_poll_transmit as *const (),
    rdtp_ffi::node::rdtp_node_poll_timeout as *const (),
    rdtp_ffi::node::rdtp_node_handle_timeout as *const (),
    rdtp_ffi::node::rdtp_node_max_datagram as *const (),
    rdtp_ffi::router::rdtp_node_id as *const (),
    rdtp_ffi::router::rdtp_node_id_label as *const (),
    rdtp_ffi::router::rdtp_router_new_from_spec as *const (),
    rdtp_ffi::router::rdtp_router_help as *const (),
    rdtp_ffi::router::rdtp_router_cache_unverified as *const (),
    rdtp_ffi::router::rdtp_router_set_default_route as *const (),
    rdtp_ffi::router::rdtp_router_add_route as *const (),
    rdtp_ffi::router::rdtp_router_add_next_hop as *const (),
    rdtp_ffi::router::rdtp_router_counter_count as *const (),
    rdtp_ffi::router::rdtp_router_counter_name as *const (),
    rdtp_ffi::router::rdtp_router_counters as *const (),
    rdtp_ffi::panic::rdtp_set_panic_handler as *const (),
    rdtp_ffi::panic::rdtp_take_panic as *const (),
]);

/// `rdtp-sim SCENARIO.toml …`: expand a scenario's sweep and run every simulation.
/// (`rdtp-sim --run-one` and `--emulate` hand their ns-3 arguments to C++ unparsed.)
#[derive(clap::Parser, Debug)]
#[command(
    name = "rdtp-sim",
    version,
    about = "ns-3 simulations driving the real rdtp core",
    after_help = "Also: rdtp-sim --run-one [--Name=value …]   one simulation (--run-one --PrintHelp lists the names)\n      rdtp-sim --emulate [--Name=value …]   the real-time emulator between tap devices (used by rdtp-testbed)"
)]
struct Options {
    /// The scenario file.
    #[arg(required_unless_present = "merge", conflicts_with = "merge")]
    scenario: Option<PathBuf>,
    /// Output directory (default: rdtp-sim-out/<scenario name>).
    #[arg(short, long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Simulations at once (default: number of CPUs).
    #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
    /// Override a scenario value before the sweep (dotted path, e.g. topology.rate=200Mbps,
    /// flow.0.cc=bbr-wifi, flow.*.start=1, scenario.seed=3, scenario.repeat=5).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = rdtp_scenario::parse_set)]
    sets: Vec<(String, String)>,
    /// Only the runs whose index is I modulo N (0 ≤ I < N): one of N shards of the sweep,
    /// e.g. --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT. Combine the shards'
    /// directories with --merge.
    #[arg(long, value_name = "I/N", value_parser = shard::parse)]
    shard: Option<Shard>,
    /// Print the expanded runs and their arguments, run nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print the expanded runs (of the shard, with --shard), one per line: index, id, label
    /// (tab-separated); run nothing.
    #[arg(long, conflicts_with = "dry_run")]
    list: bool,
    /// Combine the result directories of a sweep's shards (or of interrupted runs of it)
    /// into --out: its runs, summary.csv, summary-mean.csv and figure, as one machine running
    /// the whole sweep would have written them. Missing runs are listed (exit 1).
    #[arg(long, value_name = "DIR", num_args = 1.., conflicts_with_all = ["jobs", "sets", "shard", "dry_run", "list"])]
    merge: Vec<PathBuf>,
    /// Continue an interrupted invocation: keep the runs already in --out that finished with
    /// results and run only the others. --out must hold the same scenario text and --set
    /// values (its scenario.toml); anything else is refused, so no stale run is reused.
    #[arg(long, conflicts_with_all = ["dry_run", "list"])]
    resume: bool,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    #[cfg(rdtp_ns3)]
    let c_main = match args.first().map(String::as_str) {
        Some("--run-one") => Some(rdtp_ns3_run as CMain),
        Some("--emulate") => Some(rdtp_ns3_emulate as CMain),
        _ => None,
    };
    #[cfg(rdtp_ns3)]
    if let Some(f) = c_main {
        return ExitCode::from(call_c_main(f, &args[1..]) as u8);
    }
    #[cfg(not(rdtp_ns3))]
    if matches!(args.first().map(String::as_str), Some("--run-one" | "--emulate")) {
        eprintln!("{NO_NS3}");
        return ExitCode::from(3);
    }
    let o = <Options as clap::Parser>::parse();
    match scenario_main(&o) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("rdtp-sim: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(rdtp_ns3)]
type CMain = unsafe extern "C" fn(std::ffi::c_int, *mut *mut std::ffi::c_char) -> std::ffi::c_int;

/// Run a C++ entry point (one simulation, or the emulator) in this process with `args` as
/// its ns-3 CommandLine arguments.
#[cfg(rdtp_ns3)]
fn call_c_main(f: CMain, args: &[String]) -> i32 {
    use std::ffi::{CString, c_char};
    let mut owned = vec![CString::from(c"rdtp-sim")];
    for a in args {
        match CString::new(a.as_str()) {
            Ok(c) => owned.push(c),
            Err(_) => {
                eprintln!("rdtp-sim: an argument contains a NUL byte");
                return 2;
            }
        }
    }
    let mut argv: Vec<*mut c_char> = owned.iter().map(|c| c.as_ptr() as *mut c_char).collect();
    argv.push(std::ptr::null_mut());
    // SAFETY: argv holds argc valid NUL-terminated strings (kept alive by `owned`) and a
    // terminating null, as a C main expects.
    unsafe { f(owned.len() as std::ffi::c_int, argv.as_mut_ptr()) }
}

fn scenario_main(o: &Options) -> Result<u8, Error> {
    if !o.merge.is_empty() {
        let out = o.out.as_deref().ok_or_else(|| Error::Usage("--merge needs --out DIR".into()))?;
        return merge_main(&o.merge, out);
    }
    let scenario = o.scenario.as_deref().ok_or_else(|| Error::Usage("a scenario file is required".into()))?;
    let jobs = o.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize);
    let text = fs::read_to_string(scenario).map_err(|e| Error::file(scenario, e))?;
    let (keys, all) = expand(&text, &o.sets)?;
    let mut warned = Vec::new();
    for w in all.iter().flat_map(|r| rdtp_scenario::deprecations(&r.scenario)) {
        if !warned.contains(&w) {
            eprintln!("rdtp-sim: warning: {}: {w}", scenario.display());
            warned.push(w);
        }
    }
    let name = all.first().map(|r| r.scenario.scenario.name.clone()).unwrap_or_default();
    let out = o.out.clone().unwrap_or_else(|| PathBuf::from("rdtp-sim-out").join(&name));
    let runs: Vec<Run> = all.iter().filter(|r| o.shard.is_none_or(|s| s.has(r.index))).cloned().collect();
    if o.list {
        for r in &runs {
            println!("{}\t{}\t{}", r.index, r.id, r.label);
        }
        return Ok(0);
    }
    let mut argv = Vec::with_capacity(runs.len());
    for r in &runs {
        let dir = out.join(&r.id);
        argv.push(
            run_args(&r.scenario, &dir.to_string_lossy()).map_err(|source| Error::Run { run: r.id.clone(), source })?,
        );
    }
    if o.dry_run {
        for (r, a) in runs.iter().zip(&argv) {
            println!("{} {}", r.id, a.join(" "));
        }
        return Ok(0);
    }
    if !HAS_NS3 {
        eprintln!("{NO_NS3}");
        return Ok(3);
    }
    fs::create_dir_all(&out).map_err(|e| Error::file(&out, e))?;
    let mut record = format!("# {} as run", scenario.display());
    for (k, v) in &o.sets {
        record.push_str(&format!(" --set {k}={v}"));
    }
    let record = format!("{record}\n{text}");
    let kept = if o.resume { finished_runs(&out, &record, &runs)? } else { vec![None; runs.len()] };
    fs::write(out.join("scenario.toml"), &record)?;
    let manifest = Manifest::new(scenario, &o.sets, &all, o.shard)?;
    manifest.write(&out)?;

    let of = o.shard.map(|s| format!(" (shard {s}: {} of {})", runs.len(), all.len())).unwrap_or_default();
    let reused = kept.iter().filter(|k| k.is_some()).count();
    let resumed = if o.resume { format!(", {reused} kept from the interrupted invocation") } else { String::new() };
    eprintln!(
        "rdtp-sim: {} run(s) of '{name}'{of} into {}{resumed} with {} job(s), ns-3 {}",
        runs.len(),
        out.display(),
        jobs.min(runs.len() - reused).max(1),
        NS3_VERSION.unwrap_or("?")
    );
    let started = Instant::now();
    let results = run_all(&runs, &argv, &out, jobs, kept);
    let failed = results.iter().filter(|r| r.is_none()).count();
    write_summaries(&out, &keys, &runs, &results)?;
    eprintln!(
        "rdtp-sim: {} of {} run(s) done in {:.1} s; summary: {}",
        runs.len() - failed,
        runs.len(),
        started.elapsed().as_secs_f64(),
        out.join("summary.csv").display()
    );
    match (o.shard, all.first().and_then(|r| r.scenario.scenario.plot.clone())) {
        (Some(_), _) => eprintln!("rdtp-sim: a shard; combine all shards with: rdtp sim --merge DIR... --out DIR"),
        (None, Some(kind)) => plot(scenario, &kind, &out),
        (None, None) => {}
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

/// `--resume`: the results of the runs in `out` that an earlier invocation of the same
/// scenario (`record`: the scenario.toml it wrote) finished; `None` for the others.
fn finished_runs(out: &Path, record: &str, runs: &[Run]) -> Result<Vec<Option<RunResult>>, Error> {
    let path = out.join("scenario.toml");
    let before = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![None; runs.len()]),
        Err(e) => return Err(Error::file(&path, e)),
    };
    if before != record {
        return Err(Error::Shards(format!(
            "--resume: {} was written for another scenario text or other --set values; \
             resume only what was interrupted, or use a new --out",
            path.display()
        )));
    }
    let ran = Manifest::read(out)?;
    if ran.ns3_version() != NS3_VERSION.unwrap_or("?") {
        return Err(Error::Shards(format!(
            "--resume: the runs in {} were simulated with ns-3 {}, this rdtp-sim has {}; use a new --out",
            out.display(),
            ran.ns3_version(),
            NS3_VERSION.unwrap_or("?")
        )));
    }
    Ok(runs.iter().map(|r| read_run(&out.join(&r.id)).ok()).collect())
}

/// `summary.csv` and `summary-mean.csv` of `runs` in `out`.
fn write_summaries(out: &Path, keys: &[String], runs: &[Run], results: &[Option<RunResult>]) -> Result<(), Error> {
    write_summary(&out.join("summary.csv"), keys, runs, results)?;
    write_means(&out.join("summary-mean.csv"), keys, runs, results)
}

/// `--merge DIR... --out OUT`: check that the directories hold parts of one sweep, bring
/// each run's directory into OUT (hard links, or copies across file systems), and write the
/// summaries and figure of the whole sweep.
fn merge_main(dirs: &[PathBuf], out: &Path) -> Result<u8, Error> {
    let (manifest, text) = Manifest::read_all(dirs)?;
    let (keys, runs) = expand(&text, &manifest.sets())?;
    manifest.check(&runs)?;
    fs::create_dir_all(out).map_err(|e| Error::file(out, e))?;
    let mut results = Vec::with_capacity(runs.len());
    let mut missing = Vec::new();
    for r in &runs {
        let found = dirs.iter().map(|d| d.join(&r.id)).find(|d| read_run(d).is_ok());
        let Some(src) = found else {
            missing.push(r.id.clone());
            results.push(None);
            continue;
        };
        let dst = out.join(&r.id);
        if fs::canonicalize(&src).ok() != fs::canonicalize(&dst).ok() {
            shard::link_tree(&src, &dst)?;
        }
        results.push(Some(read_run(&dst)?));
    }
    let record = format!(
        "# merged by rdtp-sim --merge from {}\n",
        dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" ")
    );
    let first = dirs[0].join("scenario.toml");
    let as_run = fs::read_to_string(&first).map_err(|e| Error::file(&first, e))?;
    fs::write(out.join("scenario.toml"), record + &as_run)?;
    manifest.whole().write(out)?;
    write_summaries(out, &keys, &runs, &results)?;
    eprintln!(
        "rdtp-sim: merged {} of {} run(s) from {} director{} into {}",
        runs.len() - missing.len(),
        runs.len(),
        dirs.len(),
        if dirs.len() == 1 { "y" } else { "ies" },
        out.display()
    );
    if !missing.is_empty() {
        eprintln!("rdtp-sim: {} run(s) missing (not found with results in any directory):", missing.len());
        for id in &missing {
            eprintln!("  {id}");
        }
        return Ok(1);
    }
    if let Some(kind) = runs.first().and_then(|r| r.scenario.scenario.plot.clone()) {
        plot(&manifest.scenario_path(), &kind, out);
    }
    Ok(0)
}

/// Draw the scenario's figure with `experiments/plot.py` if Python 3 with matplotlib is
/// there; otherwise say how to draw it later (crate `rdtp-plot`, shared with the testbed).
/// The exit status does not depend on it.
fn plot(scenario: &Path, kind: &str, out: &Path) {
    let _ = rdtp_plot::draw("rdtp-sim", scenario, kind, out);
}

/// Run every simulation as a child process, `jobs` at a time; those with a result in
/// `kept` (`--resume`) are not run again.
fn run_all(
    runs: &[Run],
    argv: &[Vec<String>],
    out: &Path,
    jobs: usize,
    kept: Vec<Option<RunResult>>,
) -> Vec<Option<RunResult>> {
    let exe = std::env::current_exe().expect("the path of this executable");
    let todo: Vec<usize> = (0..runs.len()).filter(|&i| kept[i].is_none()).collect();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(runs.len() - todo.len());
    let results: Mutex<Vec<Option<RunResult>>> = Mutex::new(kept);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(todo.len()).max(1) {
            s.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    let Some(&i) = todo.get(k) else {
                        break;
                    };
                    let run = &runs[i];
                    let dir = out.join(&run.id);
                    let t0 = Instant::now();
                    let outcome = run_child(&exe, &argv[i], &dir);
                    let secs = t0.elapsed().as_secs_f64();
                    let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                    let label = if run.label.is_empty() { run.id.clone() } else { run.label.clone() };
                    match outcome {
                        Ok(res) => {
                            let mut extra = String::new();
                            if let Some(u) = res.utilisation {
                                extra.push_str(&format!(", utilisation {:.3}", u));
                            }
                            if let (Some(sim), Some(wall)) = (res.simulated_s, res.wall_s)
                                && wall > 0.0
                            {
                                extra.push_str(&format!(", {:.2} sim-s/s", sim / wall));
                            }
                            eprintln!("[{n}/{}] {label} … done in {secs:.1} s{extra}", runs.len());
                            results.lock().unwrap()[i] = Some(res);
                        }
                        Err(e) => eprintln!("[{n}/{}] {label} … FAILED after {secs:.1} s: {e}", runs.len()),
                    }
                }
            });
        }
    });
    results.into_inner().unwrap()
}

fn run_child(exe: &Path, args: &[String], dir: &Path) -> Result<RunResult, Error> {
    fs::create_dir_all(dir).map_err(|e| Error::file(dir, e))?;
    let log_path = dir.join("log.txt");
    let log = fs::File::create(&log_path).map_err(|e| Error::file(&log_path, e))?;
    let log2 = log.try_clone()?;
    let status = Command::new(exe)
        .arg("--run-one")
        .args(args)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2)
        .status()
        .map_err(|e| Error::Child(format!("cannot start {}: {e}", exe.display())))?;
    if !status.success() {
        let tail: String =
            fs::read_to_string(&log_path).unwrap_or_default().lines().rev().take(3).collect::<Vec<_>>().join(" | ");
        return Err(Error::Child(format!("exit {:?} (see {}): {tail}", status.code(), log_path.display())));
    }
    read_run(dir)
}
