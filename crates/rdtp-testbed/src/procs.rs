//! Child processes: spawned in their own process group (a Ctrl-C reaches only the testbed,
//! which then stops everything in order) with a parent-death signal (if the testbed dies
//! even by SIGKILL, the kernel sends them SIGTERM), reaped with `wait4` for their CPU time
//! and peak RSS; plus what `/proc` says about a running process. System calls go through nix
//! where it wraps them; `wait4` (for the rusage), `setpriority`, `sched_setscheduler` and
//! `_exit` are the libc calls it does not.

use anyhow::{Context as _, Result, anyhow, bail};
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::{Pid, SysconfVar, getppid, sysconf};
use rdtp_signals::{Flag, Signal};

/// Raised by SIGINT/SIGTERM/SIGHUP once [`install_signal_handlers`] ran; every wait in the
/// testbed polls it.
static INTERRUPTED: OnceLock<Flag> = OnceLock::new();

/// Route SIGINT, SIGTERM and SIGHUP to [`interrupted`] (rdtp's one signal module, crate
/// `rdtp-signals`).
pub fn install_signal_handlers() -> Result<()> {
    let flag = Flag::on(&[Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP]).context("sigaction")?;
    let _ = INTERRUPTED.set(flag);
    Ok(())
}

pub fn interrupted() -> bool {
    INTERRUPTED.get().is_some_and(Flag::raised)
}

pub const INTERRUPTED_MSG: &str = "interrupted";

/// Sleep up to `d`, waking early on a signal; `Err` if interrupted.
pub fn sleep(d: Duration) -> Result<()> {
    let end = Instant::now() + d;
    loop {
        if interrupted() {
            bail!(INTERRUPTED_MSG);
        }
        let now = Instant::now();
        if now >= end {
            return Ok(());
        }
        std::thread::sleep((end - now).min(Duration::from_millis(20)));
    }
}

/// CPU seconds and peak RSS of a reaped child.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    /// Raw wait status.
    pub status: i32,
    pub cpu_s: f64,
    pub max_rss_mib: f64,
}

impl Usage {
    pub fn exit_code(&self) -> Option<i32> {
        libc::WIFEXITED(self.status).then(|| libc::WEXITSTATUS(self.status))
    }
    pub fn signal(&self) -> Option<i32> {
        libc::WIFSIGNALED(self.status).then(|| libc::WTERMSIG(self.status))
    }
    pub fn describe(&self) -> String {
        match (self.exit_code(), self.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (_, Some(s)) => format!("signal {s}"),
            _ => format!("status {:#x}", self.status),
        }
    }
}

/// A child process; killed and reaped on drop if still running.
pub struct Proc {
    pub pid: i32,
    child: Option<Child>,
    pub usage: Option<Usage>,
}

/// Spawn `cmd` in its own process group with SIGTERM as parent-death signal.
pub fn spawn(name: &str, cmd: &mut Command) -> Result<Proc> {
    spawn_on(name, cmd, None, None)
}

/// Scheduling of a child: a nice value, or SCHED_FIFO with a priority (1..99).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sched {
    Nice(i32),
    Fifo(i32),
}

/// The CPUs this process may run on.
pub fn online_cpus() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

fn cpu_set(cpus: &[usize]) -> CpuSet {
    let mut set = CpuSet::new();
    for &c in cpus {
        // Only CPUs beyond the set's size are refused: those are left out.
        let _ = set.set(c);
    }
    set
}

/// [`spawn`], on the given CPUs, with the given scheduling (threads inherit both).
pub fn spawn_on(name: &str, cmd: &mut Command, cpus: Option<&[usize]>, sched: Option<Sched>) -> Result<Proc> {
    let parent = Pid::from_raw(std::process::id() as i32);
    let set = cpus.map(cpu_set);
    cmd.process_group(0);
    // SAFETY: only async-signal-safe calls (prctl, getppid, sched_setaffinity, setpriority,
    // sched_setscheduler, _exit) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM)?;
            // The parent may have died before prctl took effect.
            if getppid() != parent {
                libc::_exit(1);
            }
            if let Some(set) = &set {
                sched_setaffinity(Pid::from_raw(0), set)?;
            }
            let r = match sched {
                Some(Sched::Nice(n)) => libc::setpriority(libc::PRIO_PROCESS, 0, n),
                Some(Sched::Fifo(prio)) => {
                    let param = libc::sched_param { sched_priority: prio };
                    libc::sched_setscheduler(0, libc::SCHED_FIFO, &param)
                }
                None => 0,
            };
            if r != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().with_context(|| format!("cannot start {name} ({:?})", cmd.get_program()))?;
    Ok(Proc { pid: child.id() as i32, child: Some(child), usage: None })
}

impl Proc {
    pub fn take_stdout(&mut self) -> Option<std::process::ChildStdout> {
        self.child.as_mut().and_then(|c| c.stdout.take())
    }
    pub fn take_stderr(&mut self) -> Option<std::process::ChildStderr> {
        self.child.as_mut().and_then(|c| c.stderr.take())
    }

    /// Reap if it has exited (`block`: wait for it).
    pub fn reap(&mut self, block: bool) -> Option<Usage> {
        if let Some(u) = self.usage {
            return Some(u);
        }
        let mut status = 0;
        // SAFETY: rusage is plain data; zero is valid.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            let flags = if block { 0 } else { libc::WNOHANG };
            // SAFETY: valid pointers to locals; pid is our own unreaped child.
            let r = unsafe { libc::wait4(self.pid, &mut status, flags, &mut ru) };
            if r == self.pid {
                break;
            }
            if r == 0 {
                return None;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                if block {
                    continue;
                }
                return None;
            }
            // ECHILD: someone else reaped it; nothing more to learn.
            self.usage = Some(Usage::default());
            self.child = None;
            return self.usage;
        }
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        self.usage =
            Some(Usage { status, cpu_s: tv(ru.ru_utime) + tv(ru.ru_stime), max_rss_mib: ru.ru_maxrss as f64 / 1024.0 });
        // The std Child must not wait again; dropping it does not.
        self.child = None;
        self.usage
    }

    pub fn signal(&self, sig: Signal) {
        // Our own child, not yet reaped: the pid is not reused.
        if self.usage.is_none() && self.pid > 0 {
            let _ = nix::sys::signal::kill(Pid::from_raw(self.pid), sig);
        }
    }

    /// `sig`, then wait up to `grace`, then SIGKILL; returns the usage.
    pub fn stop(&mut self, sig: Signal, grace: Duration) -> Usage {
        if let Some(u) = self.usage {
            return u;
        }
        self.signal(sig);
        let end = Instant::now() + grace;
        while Instant::now() < end {
            if let Some(u) = self.reap(false) {
                return u;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        self.signal(Signal::SIGKILL);
        self.reap(true).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.usage.is_none() {
            self.stop(Signal::SIGTERM, Duration::from_secs(2));
        }
    }
}

/// Copy a child's output to `log` line by line, forwarding each line to the returned channel.
pub fn forward_lines(stream: impl Read + Send + 'static, log: &Path) -> Result<mpsc::Receiver<String>> {
    let mut file = fs::File::create(log).with_context(|| format!("{}", log.display()))?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        use std::io::Write;
        let mut r = BufReader::new(stream);
        let mut line = String::new();
        loop {
            line.clear();
            match r.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let _ = file.write_all(line.as_bytes());
                    let _ = tx.send(line.trim_end().to_string());
                }
            }
        }
    });
    Ok(rx)
}

/// Wait for a line for which `pick` returns something, up to `timeout`.
pub fn wait_line<T>(
    rx: &mpsc::Receiver<String>,
    timeout: Duration,
    what: &str,
    mut pick: impl FnMut(&str) -> Option<T>,
) -> Result<T> {
    let end = Instant::now() + timeout;
    loop {
        if interrupted() {
            bail!(INTERRUPTED_MSG);
        }
        let now = Instant::now();
        if now >= end {
            bail!("timed out after {:.0} s waiting for {what}", timeout.as_secs_f64());
        }
        match rx.recv_timeout((end - now).min(Duration::from_millis(50))) {
            Ok(line) => {
                if let Some(v) = pick(&line) {
                    return Ok(v);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => bail!("the process exited before {what}"),
        }
    }
}

fn clock_ticks() -> f64 {
    match sysconf(SysconfVar::CLK_TCK) {
        Ok(Some(t)) if t > 0 => t as f64,
        _ => 100.0,
    }
}

/// utime + stime of a live process, seconds (`/proc/PID/stat`).
pub fn cpu_seconds(pid: i32) -> Option<f64> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: split after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After ")": state(0) ppid(1) … utime is field 14 of stat, i.e. index 11 here.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / clock_ticks())
}

/// Seconds a live process's threads have run on a CPU and waited on a run queue, summed
/// over its threads (`/proc/PID/task/*/schedstat`: the scheduler's own nanosecond counts).
pub fn sched_seconds(pid: i32) -> Option<(f64, f64)> {
    let (mut run, mut wait) = (0u64, 0u64);
    for task in fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten() {
        let Ok(text) = fs::read_to_string(task.path().join("schedstat")) else { continue };
        let mut f = text.split_whitespace().map(|x| x.parse::<u64>().unwrap_or(0));
        run += f.next().unwrap_or(0);
        wait += f.next().unwrap_or(0);
    }
    Some((run as f64 / 1e9, wait as f64 / 1e9))
}

/// A `kB` field of `/proc/PID/status` (VmRSS, VmHWM), in KiB.
pub fn status_kib(pid: i32, field: &str) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))?;
    line[field.len() + 1..].split_whitespace().next()?.parse().ok()
}

/// Busy and softirq jiffies and the total, from `/proc/stat`: the whole system (`None`) or
/// the sum over some CPUs.
pub fn system_cpu_of(cpus: Option<&[usize]>) -> Option<(u64, u64, u64)> {
    let text = fs::read_to_string("/proc/stat").ok()?;
    let mut acc = (0u64, 0u64, 0u64);
    let mut found = false;
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let Some(name) = it.next() else { continue };
        let wanted = match cpus {
            None => name == "cpu",
            Some(list) => {
                name.strip_prefix("cpu").and_then(|n| n.parse::<usize>().ok()).is_some_and(|n| list.contains(&n))
            }
        };
        if !wanted {
            continue;
        }
        let v: Vec<u64> = it.filter_map(|x| x.parse().ok()).collect();
        if v.len() < 8 {
            continue;
        }
        let total: u64 = v.iter().take(8).sum();
        let idle = v[3] + v[4];
        acc = (acc.0 + total - idle, acc.1 + v[6], acc.2 + total);
        found = true;
    }
    found.then_some(acc)
}

pub fn system_cpu() -> Option<(u64, u64, u64)> {
    system_cpu_of(None)
}

/// Run a command to completion; stdout on success, a message with stderr otherwise.
pub fn output(program: &str, args: &[&str]) -> Result<String> {
    let o = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("cannot run {program}"))?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(anyhow!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// Whether `program` is on PATH (or an existing path).
pub fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}
