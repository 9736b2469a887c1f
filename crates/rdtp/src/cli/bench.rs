//! `rdtp bench loopback` — goodput and resource use of the real processes.
//!
//! Not a timed test: for each run it starts `rdtp serve --pattern SIZE` (a generated
//! object, no disk) and `rdtp fetch ... -o /dev/null --json` as child processes of this
//! executable on 127.0.0.1, reaps the client with `wait4` to get its rusage, then stops
//! the server with SIGTERM and reaps it too. It prints goodput, CPU seconds (user + sys)
//! and peak RSS of both sides.

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
    /// `rdtp serve` and `rdtp fetch` as child processes over 127.0.0.1.
    Loopback(BenchArgs),
    /// A fetch through `rdtp route` (cold store, then warm) beside a direct fetch, over 127.0.0.1.
    Router(BenchArgs),
}

/// What every benchmark takes.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Size of the object fetched in each run.
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub size: String,
    /// Congestion controller of the fetch (a spec, as `rdtp fetch --cc`; `--cc help` lists them).
    #[arg(long, value_name = "SPEC", default_value = "bbr", value_parser = cc_spec)]
    pub cc: String,
    /// Number of runs (fresh processes each).
    #[arg(long, default_value_t = 1)]
    pub runs: u32,
    /// Print Markdown table rows (with the command line) for docs/BENCHMARKS.md.
    #[arg(long)]
    pub markdown: bool,
}

pub fn run(cmd: BenchCommand) -> Result<i32> {
    match cmd {
        BenchCommand::Loopback(a) => loopback(a),
        BenchCommand::Router(a) => super::bench_router::run(a),
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

struct Row {
    goodput_mbps: f64,
    elapsed_s: f64,
    client: Usage,
    server: Usage,
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
    let client = Command::new(exe)
        .args(["fetch", addr, PATTERN_NAME, "-o", "/dev/null", "--json", "-q", "--cc", cc])
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

fn one_run(exe: &std::path::Path, size: &str, cc: &str) -> Result<Row> {
    let server = Daemon::start(exe, &["serve", "--listen", "127.0.0.1:0", "--pattern", size])?;
    let fetched = fetch(exe, &server.addr, cc);
    let (server_usage, _) = server.stop()?;
    let (client_usage, v) = fetched?;
    Ok(Row {
        goodput_mbps: v["goodput_bps"].as_f64().unwrap_or(0.0) / 1e6,
        elapsed_s: v["elapsed_s"].as_f64().unwrap_or(0.0),
        client: client_usage,
        server: server_usage,
    })
}

fn loopback(a: BenchArgs) -> Result<i32> {
    let bytes = a.check()?;
    let exe = std::env::current_exe().map_err(|e| Error::network("cannot find this executable", e))?;
    let mut rows = Vec::new();
    for i in 0..a.runs {
        let r = one_run(&exe, &bytes.to_string(), &a.cc)?;
        rows.push(vec![
            (i + 1).to_string(),
            human_size(bytes),
            a.cc.clone(),
            format!("{:.3}", r.elapsed_s),
            format!("{:.1}", r.goodput_mbps),
            format!("{:.2}", r.client.cpu_s),
            format!("{:.1}", r.client.max_rss_mib),
            format!("{:.2}", r.server.cpu_s),
            format!("{:.1}", r.server.max_rss_mib),
        ]);
        std::thread::sleep(Duration::from_millis(100));
    }
    let header = [
        ("run", true),
        ("size", true),
        ("cc", false),
        ("time (s)", true),
        ("goodput (Mbit/s)", true),
        ("client CPU (s)", true),
        ("client max RSS (MiB)", true),
        ("server CPU (s)", true),
        ("server max RSS (MiB)", true),
    ];
    to_stdout(&table(a.markdown, &header, &rows))?;
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
