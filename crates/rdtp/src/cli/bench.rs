//! `rdtp bench loopback` — goodput and resource use of the real processes, rdtp beside
//! kernel TCP in the same run.
//!
//! Not a timed test. It writes a file of `--size` random bytes into a temporary directory
//! (so it sits in the page cache; `--file` serves a file of yours instead, `--pattern`
//! the generated pattern, which costs the server CPU to generate) and, for each run,
//! starts `rdtp serve DIR` and `rdtp fetch ... -o /dev/null --json` as child processes of
//! this executable on 127.0.0.1, then the kernel-TCP baseline (`rdtp serve --tcp
//! --tcp-cc bbr` and `rdtp fetch --tcp`, which verifies the content against its EID too)
//! unless `--no-tcp`. The clients' CPU time (user + sys) and peak RSS come from `wait4`;
//! the servers' CPU time from `/proc/PID/stat` just before and after the fetch, so the
//! hashing of the directory at start-up is not counted. `--json FILE` writes the rows.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::Duration;

use clap::Subcommand;
use rdtp::args::{human_size, parse_size};
use rdtp::error::{EXIT_OK, Error, Result};

use super::serve::PATTERN_NAME;
use super::{cc_config, cc_spec, to_stdout};

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// `rdtp serve` and `rdtp fetch` as child processes over 127.0.0.1, beside kernel TCP.
    Loopback(LoopbackArgs),
    /// A fetch through `rdtp route` (cold store, then warm) beside a direct fetch, over 127.0.0.1.
    Router(super::bench_router::RouterArgs),
    /// Many concurrent fetches from `rdtp serve` (or through `rdtp route`) with 1, 2, … workers.
    Workers(super::bench_workers::WorkersArgs),
}

/// What every benchmark takes.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Size of the object fetched in each run.
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub size: String,
    /// Congestion controller of the fetch (a spec, as `rdtp fetch --cc`; `--cc help` lists them).
    #[arg(long, value_name = "SPEC", default_value = rdtp_proto::cc::registry::DEFAULT, value_parser = cc_spec)]
    pub cc: String,
    /// Number of runs (fresh processes each).
    #[arg(long, default_value_t = 1)]
    pub runs: u32,
    /// Print Markdown table rows (with the command line) for docs/BENCHMARKS.md.
    #[arg(long)]
    pub markdown: bool,
}

/// Options of `rdtp bench loopback`.
#[derive(clap::Args, Debug)]
pub struct LoopbackArgs {
    #[command(flatten)]
    pub common: BenchArgs,
    /// Serve this file (fetched by name) instead of a temporary file of `--size` random bytes.
    #[arg(long, value_name = "FILE", conflicts_with = "pattern")]
    pub file: Option<std::path::PathBuf>,
    /// Serve the generated pattern (`serve --pattern`) instead of a file: the server then
    /// spends CPU generating the bytes it sends.
    #[arg(long)]
    pub pattern: bool,
    /// Skip the kernel-TCP baseline.
    #[arg(long)]
    pub no_tcp: bool,
    /// Congestion control of the kernel-TCP baseline.
    #[arg(long, value_name = "CC", default_value = "bbr")]
    pub tcp_cc: String,
    /// Link MTU the rdtp fetch sizes its unit for (`rdtp fetch --mtu`; default: its own,
    /// 1500). Loopback's MTU is 65536, and kernel TCP's segments on it are that large.
    #[arg(long, value_name = "N")]
    pub mtu: Option<u32>,
    /// Also write the rows as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,
}

pub fn run(cmd: BenchCommand) -> Result<i32> {
    match cmd {
        BenchCommand::Loopback(a) => loopback(a),
        BenchCommand::Router(a) => super::bench_router::run(a),
        BenchCommand::Workers(a) => super::bench_workers::run(a),
    }
}

impl BenchArgs {
    /// Check the options; returns the object size in bytes.
    pub(super) fn check(&self) -> Result<u64> {
        let bytes = parse_size(&self.size)?;
        cc_config(&self.cc, None, None)?;
        if self.runs == 0 {
            return Err(Error::Usage("--runs must be at least 1".into()));
        }
        Ok(bytes)
    }
}

/// What `wait4` reports about one child.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Usage {
    pub(super) status: i32,
    pub(super) cpu_s: f64,
    pub(super) max_rss_mib: f64,
}

pub(super) fn wait4(pid: libc::pid_t) -> Result<Usage> {
    let mut status = 0;
    // SAFETY: rusage is plain old data; zero is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to locals; `pid` is our own child.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(Error::network("wait4", e));
        }
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Ok(Usage {
        status,
        cpu_s: tv(ru.ru_utime) + tv(ru.ru_stime),
        // Linux reports ru_maxrss in KiB.
        max_rss_mib: ru.ru_maxrss as f64 / 1024.0,
    })
}

/// A child process that is killed and reaped if still running when dropped.
pub(super) struct Guard {
    pub(super) child: Option<Child>,
}

impl Guard {
    pub(super) fn pid(&self) -> libc::pid_t {
        self.child.as_ref().map_or(0, |c| c.id() as libc::pid_t)
    }
    /// Reap it with `wait4`; the guard no longer owns it.
    pub(super) fn reap(&mut self) -> Result<Usage> {
        let pid = self.pid();
        let u = wait4(pid);
        if u.is_ok() {
            self.child = None;
        }
        u
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// One fetch of the loopback bench.
#[derive(serde::Serialize)]
struct Row {
    run: u32,
    transport: String,
    bytes: u64,
    elapsed_s: f64,
    goodput_mbps: f64,
    /// Goodput over the kernel-TCP fetch's of the same run.
    vs_tcp: Option<f64>,
    client_cpu_s: f64,
    client_cpu_s_per_gib: f64,
    client_max_rss_mib: f64,
    server_cpu_s: f64,
    server_cpu_s_per_gib: f64,
    server_max_rss_mib: f64,
}

/// Read `stderr` up to the "rdtp: serving … on ADDR" (or "rdtp: routing on ADDR …") line.
pub(super) fn read_listen_line(stderr: ChildStderr) -> Result<(String, BufReader<ChildStderr>)> {
    let mut r = BufReader::new(stderr);
    let mut line = String::new();
    loop {
        line.clear();
        let n = r.read_line(&mut line).map_err(|e| Error::network("reading the server's stderr", e))?;
        if n == 0 {
            return Err(Error::Runtime("the server exited before listening".into()));
        }
        if line.starts_with("rdtp: serving")
            && let Some((_, addr)) = line.trim_end().rsplit_once(" on ")
        {
            return Ok((addr.to_string(), r));
        }
        if let Some(rest) = line.strip_prefix("rdtp: routing on ")
            && let Some(addr) = rest.split_whitespace().next()
        {
            return Ok((addr.to_string(), r));
        }
    }
}

/// The command as typed, with the program's directory left out (no machine paths).
pub(super) fn command_line() -> String {
    let mut cmdline: Vec<String> = std::env::args().collect();
    if let Some(first) = cmdline.first_mut()
        && let Some(name) = std::path::Path::new(first.as_str()).file_name()
    {
        *first = name.to_string_lossy().into_owned();
    }
    cmdline.join(" ")
}

/// A running `rdtp serve` or `rdtp route` child, with its address.
pub(super) struct Daemon {
    pub(super) guard: Guard,
    pub(super) addr: String,
    stderr: BufReader<ChildStderr>,
}

impl Daemon {
    /// Start `exe ARGS` and wait for its listening line.
    pub(super) fn start(exe: &std::path::Path, args: &[&str]) -> Result<Daemon> {
        let child = Command::new(exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::network(format!("cannot start rdtp {}", args.first().unwrap_or(&"")), e))?;
        let mut guard = Guard { child: Some(child) };
        let stderr = guard
            .child
            .as_mut()
            .and_then(|c| c.stderr.take())
            .ok_or_else(|| Error::Runtime("no daemon stderr".into()))?;
        let (addr, stderr) = read_listen_line(stderr)?;
        Ok(Daemon { guard, addr, stderr })
    }

    /// Stop it with SIGTERM and reap it; returns its usage and the rest of its stderr.
    pub(super) fn stop(mut self) -> Result<(Usage, String)> {
        // SAFETY: kill(2) on our own, not yet reaped, child.
        unsafe {
            libc::kill(self.guard.pid(), libc::SIGTERM);
        }
        let usage = self.guard.reap()?;
        let mut rest = String::new();
        let _ = self.stderr.read_to_string(&mut rest);
        Ok((usage, rest))
    }
}

/// Run `rdtp fetch ADDR pattern -o /dev/null --json --cc CC` to completion: its usage and
/// the JSON summary it printed.
pub(super) fn fetch(exe: &std::path::Path, addr: &str, cc: &str) -> Result<(Usage, serde_json::Value)> {
    fetch_with(exe, addr, PATTERN_NAME, &["--cc", cc])
}

/// Run `rdtp fetch ADDR NAME -o /dev/null --json -q EXTRA…` to completion: its usage and
/// the JSON summary it printed.
pub(super) fn fetch_with(
    exe: &std::path::Path,
    addr: &str,
    name: &str,
    extra: &[&str],
) -> Result<(Usage, serde_json::Value)> {
    let client = Command::new(exe)
        .args(["fetch", addr, name, "-o", "/dev/null", "--json", "-q"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::network("cannot start the client", e))?;
    let mut client = Guard { child: Some(client) };
    let mut out =
        client.child.as_mut().and_then(|c| c.stdout.take()).ok_or_else(|| Error::Runtime("no client stdout".into()))?;
    let mut err =
        client.child.as_mut().and_then(|c| c.stderr.take()).ok_or_else(|| Error::Runtime("no client stderr".into()))?;
    // The client writes a few hundred bytes at most: it cannot block on a full pipe.
    let usage = client.reap()?;
    let mut json = String::new();
    let _ = out.read_to_string(&mut json);
    let mut errors = String::new();
    let _ = err.read_to_string(&mut errors);
    if !libc::WIFEXITED(usage.status) || libc::WEXITSTATUS(usage.status) != 0 {
        return Err(Error::Runtime(format!("the client failed (status {:#x}): {}", usage.status, errors.trim())));
    }
    let v = serde_json::from_str(json.trim())
        .map_err(|e| Error::Runtime(format!("the client printed no JSON summary: {e}")))?;
    Ok((usage, v))
}

/// What the loopback bench serves, and the name to fetch.
struct Served {
    args: Vec<String>,
    name: String,
    bytes: u64,
    /// The temporary directory to remove at the end, if we made one.
    temp: Option<std::path::PathBuf>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(d) = &self.temp {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Write `bytes` pseudo-random bytes (BLAKE3's output stream: incompressible, and fast
/// to make) to a file in a new temporary directory.
fn temp_object(bytes: u64) -> Result<Served> {
    let (dir, names) = temp_objects(bytes, 1, "object")?;
    Ok(Served { args: vec![dir.to_string_lossy().into_owned()], name: names[0].clone(), bytes, temp: Some(dir) })
}

/// A new temporary directory (removed by the caller) holding `count` files of `bytes`
/// pseudo-random bytes each, all different; their names.
pub(super) fn temp_objects(bytes: u64, count: usize, what: &str) -> Result<(std::path::PathBuf, Vec<String>)> {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("rdtp-bench-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create the bench directory", e))?;
    let names: Vec<String> =
        if count == 1 { vec![format!("{what}.bin")] } else { (0..count).map(|i| format!("{what}-{i}.bin")).collect() };
    let mut buf = vec![0u8; 1 << 20];
    for name in &names {
        let f = std::fs::File::create(dir.join(name)).map_err(|e| Error::io("cannot create a bench file", e))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        let mut xof = blake3::Hasher::new().update(b"rdtp bench").update(name.as_bytes()).finalize_xof();
        let mut left = bytes;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            xof.fill(&mut buf[..n]);
            w.write_all(&buf[..n]).map_err(|e| Error::io("cannot write a bench file", e))?;
            left -= n as u64;
        }
        w.flush().map_err(|e| Error::io("cannot write a bench file", e))?;
    }
    Ok((dir, names))
}

fn served(a: &LoopbackArgs, bytes: u64) -> Result<Served> {
    if a.pattern {
        return Ok(Served {
            args: vec!["--pattern".into(), bytes.to_string()],
            name: PATTERN_NAME.into(),
            bytes,
            temp: None,
        });
    }
    let Some(file) = &a.file else { return temp_object(bytes) };
    let meta = std::fs::metadata(file).map_err(|e| Error::io(format!("cannot use --file {}", file.display()), e))?;
    let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
        return Err(Error::Usage(format!("--file {} is not a file in a directory", file.display())));
    };
    if !meta.is_file() {
        return Err(Error::Usage(format!("--file {} is not a regular file", file.display())));
    }
    let dir = if dir.as_os_str().is_empty() { std::path::Path::new(".") } else { dir };
    Ok(Served {
        args: vec![dir.to_string_lossy().into_owned()],
        name: name.to_string_lossy().into_owned(),
        bytes: meta.len(),
        temp: None,
    })
}

/// One fetch: start the server, fetch, stop it.
fn one_fetch(
    exe: &std::path::Path,
    run: u32,
    what: &Served,
    tcp_cc: Option<&str>,
    cc: &str,
    mtu: Option<u32>,
) -> Result<Row> {
    let mut args: Vec<&str> = vec!["serve", "--listen", "127.0.0.1:0"];
    if let Some(tcc) = tcp_cc {
        args.extend(["--tcp", "--tcp-cc", tcc]);
    }
    args.extend(what.args.iter().map(String::as_str));
    let server = Daemon::start(exe, &args)?;
    let pid = server.guard.pid();
    let before = super::bench_router::cpu_seconds(pid)?;
    let mtu_arg = mtu.map(|m| m.to_string());
    let mut extra: Vec<&str> = if tcp_cc.is_some() { vec!["--tcp"] } else { vec!["--cc", cc] };
    if let (None, Some(m)) = (tcp_cc, &mtu_arg) {
        extra.extend(["--mtu", m]);
    }
    let fetched = fetch_with(exe, &server.addr, &what.name, &extra);
    let after = super::bench_router::cpu_seconds(pid);
    let (server_usage, _) = server.stop()?;
    let (client, v) = fetched?;
    let server_cpu = after? - before;
    let gib = what.bytes as f64 / f64::from(1u32 << 30);
    Ok(Row {
        run,
        transport: match tcp_cc {
            Some(t) => format!("kernel TCP {t}"),
            None => match mtu {
                Some(m) => format!("rdtp {cc}, MTU {m}"),
                None => format!("rdtp {cc}"),
            },
        },
        bytes: what.bytes,
        elapsed_s: v["elapsed_s"].as_f64().unwrap_or(0.0),
        goodput_mbps: v["goodput_bps"].as_f64().unwrap_or(0.0) / 1e6,
        vs_tcp: None,
        client_cpu_s: client.cpu_s,
        client_cpu_s_per_gib: client.cpu_s / gib,
        client_max_rss_mib: client.max_rss_mib,
        server_cpu_s: server_cpu,
        server_cpu_s_per_gib: server_cpu / gib,
        server_max_rss_mib: server_usage.max_rss_mib,
    })
}

fn loopback(a: LoopbackArgs) -> Result<i32> {
    let bytes = a.common.check()?;
    let exe = std::env::current_exe().map_err(|e| Error::network("cannot find this executable", e))?;
    let what = served(&a, bytes)?;
    if what.bytes == 0 {
        return Err(Error::Usage("the object to fetch is empty".into()));
    }
    let mut rows = Vec::new();
    for run in 1..=a.common.runs {
        let mut r = one_fetch(&exe, run, &what, None, &a.common.cc, a.mtu)?;
        std::thread::sleep(Duration::from_millis(100));
        if !a.no_tcp {
            let t = one_fetch(&exe, run, &what, Some(&a.tcp_cc), &a.common.cc, None)?;
            if t.goodput_mbps > 0.0 {
                r.vs_tcp = Some(r.goodput_mbps / t.goodput_mbps);
            }
            rows.push(r);
            rows.push(t);
            std::thread::sleep(Duration::from_millis(100));
        } else {
            rows.push(r);
        }
    }
    if let Some(path) = &a.json {
        write_json(path, &rows)?;
    }
    let header = [
        ("run", true),
        ("transport", false),
        ("size", true),
        ("time (s)", true),
        ("goodput (Mbit/s)", true),
        ("× TCP", true),
        ("client CPU (s/GiB)", true),
        ("client max RSS (MiB)", true),
        ("server CPU (s/GiB)", true),
        ("server max RSS (MiB)", true),
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.run.to_string(),
                r.transport.clone(),
                human_size(r.bytes),
                format!("{:.3}", r.elapsed_s),
                format!("{:.1}", r.goodput_mbps),
                r.vs_tcp.map_or_else(String::new, |x| format!("{x:.2}")),
                format!("{:.2}", r.client_cpu_s_per_gib),
                format!("{:.1}", r.client_max_rss_mib),
                format!("{:.2}", r.server_cpu_s_per_gib),
                format!("{:.1}", r.server_max_rss_mib),
            ]
        })
        .collect();
    to_stdout(&table(a.common.markdown, &header, &cells))?;
    Ok(EXIT_OK)
}

/// A table of `rows` under `header` (`(title, right-aligned)`): Markdown (with the command
/// line above it) for docs/BENCHMARKS.md, or aligned text for a terminal.
pub(super) fn table(markdown: bool, header: &[(&str, bool)], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    if markdown {
        s.push_str(&format!("Command: `{}`\n\n", command_line()));
        let titles: Vec<&str> = header.iter().map(|h| h.0).collect();
        s.push_str(&format!("| {} |\n", titles.join(" | ")));
        let rules: Vec<&str> = header.iter().map(|&(_, right)| if right { "---:" } else { "---" }).collect();
        s.push_str(&format!("|{}|\n", rules.join("|")));
        for r in rows {
            s.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        return s;
    }
    let widths: Vec<usize> = header
        .iter()
        .enumerate()
        .map(|(i, h)| rows.iter().map(|r| r[i].chars().count()).chain([h.0.chars().count()]).max().unwrap_or(0))
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .zip(header)
            .map(|((c, &w), &(_, right))| if right { format!("{c:>w$}") } else { format!("{c:<w$}") })
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    s.push_str(&line(header.iter().map(|h| h.0).collect()));
    for r in rows {
        s.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    s
}

/// `--json FILE`: the rows of a bench table as pretty JSON (shared by every bench subcommand).
pub(super) fn write_json<T: serde::Serialize>(path: &std::path::Path, rows: &[T]) -> Result<()> {
    let text = serde_json::to_string_pretty(rows).map_err(|e| Error::Runtime(format!("JSON: {e}")))?;
    std::fs::write(path, text + "\n").map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}
