//! One run, step by step: set-up ([`Bed`]: namespaces and taps, servers, the emulator; its
//! Drop tears everything down, also on error, signal and panic), time 0 and the pings, the
//! client processes on their [`schedule`] with the samples taken meanwhile, the measurements
//! at the end ([`Bed::finish`]), then the report (`crate::report`).

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result, anyhow, bail};

use crate::experiment::{self, FlowInstance, Kind, Layout, Run};
use crate::netns::{self, SocketMem, TapStats};
use crate::procs::{self, Proc, Usage};
use crate::report;

/// The programs a run starts.
#[derive(Clone, Debug)]
pub struct Tools {
    pub rdtp: PathBuf,
    pub sim: PathBuf,
}

/// Generated objects shared by the runs of one experiment (in a temporary directory,
/// removed on drop). Byte `i` of the object of size `n` is a pure function of `(n, i)`.
pub struct ContentStore {
    root: PathBuf,
    made: HashSet<u64>,
}

impl ContentStore {
    pub fn new(prefix: &str) -> Result<ContentStore> {
        let root = std::env::temp_dir().join(format!("{prefix}-content"));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("store")).with_context(|| format!("{}", root.display()))?;
        Ok(ContentStore { root, made: HashSet::new() })
    }

    fn object(&mut self, size: u64) -> Result<PathBuf> {
        let path = self.root.join("store").join(format!("{size}.bin"));
        if self.made.contains(&size) {
            return Ok(path);
        }
        write_pattern(&path, size)?;
        self.made.insert(size);
        Ok(path)
    }

    /// A directory holding exactly `objects` (hard links into the store).
    fn serve_dir(&mut self, run_id: &str, objects: &BTreeMap<String, u64>) -> Result<PathBuf> {
        let dir = self.root.join("serve").join(run_id);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).with_context(|| format!("{}", dir.display()))?;
        for (name, size) in objects {
            let src = self.object(*size)?;
            fs::hard_link(&src, dir.join(name)).with_context(|| format!("linking {name}"))?;
        }
        Ok(dir)
    }

    pub fn path(&self, size: u64) -> PathBuf {
        self.root.join("store").join(format!("{size}.bin"))
    }
}

impl Drop for ContentStore {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn write_pattern(path: &Path, size: u64) -> Result<()> {
    use std::io::Write;
    let f = fs::File::create(path).with_context(|| format!("{}", path.display()))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    let mut state = size ^ 0x9e37_79b9_7f4a_7c15;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        for chunk in buf.chunks_exact_mut(8) {
            // xorshift64*
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            chunk.copy_from_slice(&state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
        }
        let n = left.min(buf.len() as u64) as usize;
        w.write_all(&buf[..n]).with_context(|| format!("{}", path.display()))?;
        left -= n as u64;
    }
    w.flush().with_context(|| format!("{}", path.display()))
}

/// What every run shares.
pub struct Context {
    pub tools: Tools,
    /// Namespace name prefix, `rdtp-<pid>`.
    pub prefix: String,
    pub content: ContentStore,
}

/// A server process and what was measured about it.
pub(crate) struct Server {
    pub label: String,
    pub kind: Kind,
    pub port: u16,
    proc: Proc,
    pub idle_rss_kib: Option<u64>,
    pub cpu_warmup: Option<f64>,
    pub cpu_end: Option<f64>,
    pub hwm_kib: Option<u64>,
    pub rss_samples: Vec<u64>,
    pub flows: usize,
    /// wait4 of the stopped server.
    pub usage: Usage,
}

/// A client process of the schedule.
pub(crate) struct FlowRun {
    pub inst: FlowInstance,
    proc: Option<Proc>,
    pub started: Option<f64>,
    pub ended: Option<f64>,
    pub usage: Option<Usage>,
    pub output: Option<PathBuf>,
}

/// The per-run numbers that go into runs.csv / summary.csv.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    /// Column → value, run level.
    pub run: Vec<(String, String)>,
    /// One row per flow: column → value.
    pub flows: Vec<Vec<(String, String)>>,
    pub valid: bool,
}

/// The server's address in the plan (`rdtp_scenario::network::subnet`).
fn server_addr() -> Ipv4Addr {
    rdtp_scenario::network::subnet(None).1
}
const UDP_PORT: u16 = 7447;

pub(crate) fn ns_name(prefix: &str, client: Option<usize>) -> String {
    match client {
        None => format!("{prefix}-srv"),
        Some(i) => format!("{prefix}-c{i}"),
    }
}

fn log_file(dir: &Path, name: &str) -> Result<fs::File> {
    let p = dir.join(name);
    fs::File::create(&p).with_context(|| p.display().to_string())
}

fn since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64()
}

/// Run `run` with its outputs in `dir`: set up ([`Bed`], torn down by its Drop whatever
/// happens), start the clock, run the [`schedule`], measure the end ([`Bed::finish`]),
/// then write the report ([`report::write`]).
pub fn run_one(ctx: &mut Context, run: &Run, dir: &Path) -> Result<RunResult> {
    let layout: Layout = experiment::layout(&run.experiment)?;
    let logs = dir.join("logs");
    fs::create_dir_all(&logs).with_context(|| logs.display().to_string())?;
    let serve_dir = ctx.content.serve_dir(&run.id, &layout.objects)?;
    let cpus = Placement::of(&run.experiment.testbed)?;
    let mut bed = Bed::set_up(ctx, run, &layout, &cpus, &serve_dir, dir)?;
    let clock = bed.start_clock(&run.experiment.testbed, cpus.clients.as_deref())?;
    let during = schedule(ctx, run, &layout, &mut bed, &clock, &cpus, dir)?;
    let end = bed.finish(ctx, &run.experiment.testbed, &clock, &cpus)?;
    let result = report::write(ctx, run, &layout, &bed, &clock, &during, &end, dir)?;
    let _ = fs::remove_dir_all(&serve_dir);
    Ok(result)
}

/// CPU placement (optional): servers on server_cpus with their tap's receive processing,
/// the emulator and the clients elsewhere. The testbed itself stays unpinned: pinned next
/// to a SCHED_FIFO emulator it could be starved and miss its schedule.
pub(crate) struct Placement {
    pub server: Option<Vec<usize>>,
    emulator: Option<Vec<usize>>,
    clients: Option<Vec<usize>>,
}

impl Placement {
    fn of(g: &experiment::General) -> Result<Placement> {
        let all_cpus = procs::online_cpus();
        let list = |s: &Option<String>| s.as_deref().map(experiment::parse_cpus_opt).transpose().map(Option::flatten);
        let server = list(&g.server_cpus)?;
        let others: Option<Vec<usize>> =
            server.as_ref().map(|s| all_cpus.iter().copied().filter(|c| !s.contains(c)).collect());
        if others.as_ref().is_some_and(|o| o.is_empty()) {
            bail!("testbed.server_cpus leaves no CPU for the emulator and the clients");
        }
        let emulator = list(&g.emulator_cpus)?.or_else(|| others.clone());
        let clients = list(&g.client_cpus)?.or_else(|| others.clone());
        Ok(Placement { server, emulator, clients })
    }
}

/// What a run started: namespaces (server first) with their taps, servers, the emulator,
/// pings and clients. [`Bed::teardown`] (also its Drop: on error, signal and panic) stops the
/// clients, pings, servers and the emulator, then deletes the namespaces.
#[derive(Default)]
pub(crate) struct Bed {
    /// `rdtp-<pid>-srv`, then `rdtp-<pid>-c<i>` for every client namespace.
    pub namespaces: Vec<String>,
    pub servers: Vec<Server>,
    /// TCP server port per congestion control.
    tcp_ports: BTreeMap<String, u16>,
    emulator: Option<Proc>,
    pings: Vec<Proc>,
    pub flows: Vec<FlowRun>,
    /// Where the emulator learns the measurement window at exit.
    window_file: PathBuf,
    /// The run's `logs/` directory.
    logs: PathBuf,
}

/// Where time 0 is.
pub(crate) struct Clock {
    pub t0: Instant,
    pub t0_unix: f64,
    /// Emulator time of testbed time 0 (emulator time = testbed time + offset).
    pub offset: f64,
    /// Tap counters at time 0, one per namespace.
    pub taps_before: Vec<TapStats>,
}

/// What the schedule sampled while the clients ran.
#[derive(Default)]
pub(crate) struct During {
    pub socket_samples: Vec<SocketMem>,
    /// /proc/stat at warm-up: the whole system and the server CPUs.
    pub sys_warmup: Option<(u64, u64, u64)>,
    pub server_cores_warmup: Option<(u64, u64, u64)>,
}

/// What was measured at the end of the schedule, before and while everything stopped.
pub(crate) struct End {
    /// Testbed time the schedule ended.
    pub at: f64,
    pub sys: Option<(u64, u64, u64)>,
    pub server_cores: Option<(u64, u64, u64)>,
    /// How many CPUs `server_cores` sums (1 without server_cpus).
    pub server_cpus: usize,
    /// Tap counters since time 0, one per namespace.
    pub tap_delta: Vec<TapStats>,
    pub emulator: Option<Usage>,
}

impl Bed {
    /// Namespaces and taps, receive steering, servers, then the emulator up to its READY.
    fn set_up(
        ctx: &Context,
        run: &Run,
        layout: &Layout,
        cpus: &Placement,
        serve_dir: &Path,
        dir: &Path,
    ) -> Result<Bed> {
        let g = &run.experiment.testbed;
        let tcp_buffer = match &g.tcp_buffer {
            Some(s) => s.bytes().map_err(anyhow::Error::msg)?,
            None => 64 << 20,
        };
        let mut bed = Bed::default();
        bed.window_file = dir.join("window.txt");
        bed.logs = dir.join("logs");
        let taps = bed.create_namespaces(&ctx.prefix, layout.namespaces.len(), g.mtu, tcp_buffer)?;
        bed.steer_receive(cpus)?;
        bed.start_servers(ctx, layout, serve_dir, cpus.server.as_deref())?;
        bed.start_emulator(ctx, run, &taps, dir, cpus.emulator.as_deref())?;
        Ok(bed)
    }

    /// The server's and every client's namespace with its tap; returns the emulator's
    /// `--Taps` entries.
    fn create_namespaces(&mut self, prefix: &str, clients: usize, mtu: u32, tcp_buffer: u64) -> Result<Vec<String>> {
        let mut taps = Vec::new();
        for client in std::iter::once(None).chain((0..clients).map(Some)) {
            let ns = ns_name(prefix, client);
            let (gw, host) = rdtp_scenario::network::subnet(client);
            self.namespaces.push(ns.clone());
            netns::create(&ns, host, gw, mtu, tcp_buffer)?;
            let label = client.map_or("server".to_string(), |i| format!("client{i}"));
            taps.push(format!("{label}:{ns}/{}:{gw}/{}", netns::TAP, rdtp_scenario::network::PREFIX_LEN));
            if procs::interrupted() {
                bail!(procs::INTERRUPTED_MSG);
            }
        }
        Ok(taps)
    }

    /// Receive steering: what the emulator writes into a tap is processed (softirq: the
    /// whole kernel TCP/UDP receive path, and for TCP the sending it clocks) on the host's
    /// CPUs instead of inside the emulator's write().
    fn steer_receive(&self, cpus: &Placement) -> Result<()> {
        if let Some(c) = &cpus.server {
            netns::set_rps(&self.namespaces[0], c)?;
        }
        if let Some(c) = &cpus.clients {
            for ns in &self.namespaces[1..] {
                netns::set_rps(ns, c)?;
            }
        }
        Ok(())
    }

    /// rdtp over UDP if any rdtp flow, one TCP server per congestion control.
    fn start_servers(
        &mut self,
        ctx: &Context,
        layout: &Layout,
        serve_dir: &Path,
        cpus: Option<&[usize]>,
    ) -> Result<()> {
        let srv_ns = self.namespaces[0].clone();
        let logs = &self.logs;
        if layout.flows.iter().any(|f| f.kind == Kind::Rdtp) {
            self.servers.push(start_server(ctx, &srv_ns, serve_dir, Kind::Rdtp, None, UDP_PORT, logs, cpus)?);
        }
        for f in layout.flows.iter().filter(|f| f.kind == Kind::Tcp) {
            if !self.tcp_ports.contains_key(&f.cc) {
                let port = UDP_PORT + self.tcp_ports.len() as u16;
                self.tcp_ports.insert(f.cc.clone(), port);
                self.servers.push(start_server(ctx, &srv_ns, serve_dir, Kind::Tcp, Some(&f.cc), port, logs, cpus)?);
            }
        }
        for s in &mut self.servers {
            s.idle_rss_kib = procs::status_kib(s.proc.pid, "VmRSS");
            s.flows = layout
                .flows
                .iter()
                .filter(|f| f.kind == s.kind && (f.kind == Kind::Rdtp || self.tcp_ports.get(&f.cc) == Some(&s.port)))
                .count();
        }
        Ok(())
    }

    /// `rdtp-sim --emulate` between the taps, up to its READY line.
    fn start_emulator(
        &mut self,
        ctx: &Context,
        run: &Run,
        taps: &[String],
        dir: &Path,
        cpus: Option<&[usize]>,
    ) -> Result<()> {
        let g = &run.experiment.testbed;
        let logs = self.logs.clone();
        let _ = fs::remove_file(&self.window_file);
        let mut args = vec![
            "--emulate".to_string(),
            format!("--Taps={}", taps.join(",")),
            format!("--Out={}", dir.display()),
            format!("--Duration={}", g.duration + 120.0),
            format!("--Warmup={}", g.warmup),
            format!("--Interval={}", g.interval),
            format!("--QueueInterval={}", g.queue_interval),
            format!("--LagThreshold={}", g.lag_threshold_ms / 1e3),
            format!("--RxQueueSize={}", g.rx_queue),
            format!("--Mtu={}", g.mtu),
            format!("--Seed={}", g.seed),
            format!("--Run={}", g.run),
            format!("--WindowFile={}", self.window_file.display()),
        ];
        if let Some(c) = g.pin_cpu {
            args.push(format!("--PinCpu={c}"));
        }
        if let Some(s) = g.settle {
            args.push(format!("--Settle={s}"));
        }
        args.extend(experiment::topology_args(run)?);
        fs::write(dir.join("emulator-args.txt"), args.join("\n") + "\n")?;
        let mut cmd = Command::new(&ctx.tools.sim);
        cmd.args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file(&logs, "emulator.err")?));
        let sched = experiment::parse_sched(&g.emulator_sched)?;
        let mut emu = procs::spawn_on("emulator", &mut cmd, cpus, sched)?;
        let stdout = emu.take_stdout().context("no emulator stdout")?;
        self.emulator = Some(emu);
        let lines = procs::forward_lines(stdout, &logs.join("emulator.log"))?;
        procs::wait_line(&lines, Duration::from_secs(60), "the emulator's READY line (see logs/emulator.err)", |l| {
            l.starts_with("READY").then_some(())
        })
        .map_err(|err| {
            let tail = fs::read_to_string(logs.join("emulator.err")).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(3).collect();
            anyhow!("{err:#}: {}", tail.join(" | "))
        })?;
        Ok(())
    }

    /// Warm-up (ARP both ways before the clock starts), tap counters, time 0, and the pings.
    fn start_clock(&mut self, g: &experiment::General, cpus: Option<&[usize]>) -> Result<Clock> {
        let ready = Instant::now();
        warm_up(&self.namespaces[1..])?;
        let mut taps_before = Vec::new();
        for ns in &self.namespaces {
            taps_before.push(netns::tap_stats(ns)?);
        }
        let t0 = Instant::now();
        let t0_unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
        let offset = (t0 - ready).as_secs_f64();
        if g.ping {
            let logs = &self.logs;
            for (i, ns) in self.namespaces[1..].iter().enumerate() {
                let mut cmd = Command::new("ip");
                cmd.args(["netns", "exec", ns, "ping", "-D", "-n", "-i"])
                    .arg(format!("{}", g.ping_interval))
                    .arg("-w")
                    .arg(format!("{}", (g.duration + 1.0).ceil() as u64))
                    .arg(server_addr().to_string())
                    .stdin(Stdio::null())
                    .stdout(Stdio::from(log_file(logs, &format!("ping-c{i}.txt"))?))
                    .stderr(Stdio::null());
                self.pings.push(procs::spawn_on(&format!("ping c{i}"), &mut cmd, cpus, None)?);
            }
        }
        Ok(Clock { t0, t0_unix, offset, taps_before })
    }

    /// The end of the schedule: measure, then stop clients, pings and servers, hand the
    /// emulator its window, stop it (it writes its outputs) and tear everything down.
    fn finish(&mut self, ctx: &Context, g: &experiment::General, clock: &Clock, cpus: &Placement) -> Result<End> {
        let at = since(clock.t0);
        let sys = procs::system_cpu();
        let server_cores = cpus.server.as_deref().and_then(|c| procs::system_cpu_of(Some(c)));
        for s in &mut self.servers {
            s.cpu_end = procs::cpu_seconds(s.proc.pid);
            s.hwm_kib = procs::status_kib(s.proc.pid, "VmHWM");
        }
        for f in self.flows.iter_mut() {
            if let Some(p) = &mut f.proc
                && f.usage.is_none()
            {
                f.usage = Some(p.stop(libc::SIGTERM, Duration::from_secs(2)));
                f.ended = Some(at);
            }
        }
        for p in &mut self.pings {
            p.stop(libc::SIGINT, Duration::from_secs(2));
        }
        let mut tap_delta = Vec::new();
        for (ns, before) in self.namespaces.iter().zip(&clock.taps_before) {
            tap_delta.push(netns::tap_stats(ns)?.since(before));
        }
        for s in &mut self.servers {
            s.usage = s.proc.stop(libc::SIGTERM, Duration::from_secs(5));
        }
        fs::write(&self.window_file, format!("{} {}\n", g.warmup + clock.offset, at + clock.offset))?;
        let emulator = self.emulator.as_mut().map(|p| p.stop(libc::SIGTERM, Duration::from_secs(30)));
        self.teardown()?;
        let left = netns::list(&format!("{}-", ctx.prefix));
        if !left.is_empty() {
            bail!("namespaces left after teardown: {}", left.join(", "));
        }
        let server_cpus = cpus.server.as_ref().map_or(1, |c| c.len());
        Ok(End { at, sys, server_cores, server_cpus, tap_delta, emulator })
    }

    /// Stop whatever still runs (clients, pings, servers, the emulator: SIGTERM, then
    /// SIGKILL), then delete the namespaces (with their taps).
    fn teardown(&mut self) -> Result<()> {
        for f in &mut self.flows {
            if let Some(p) = &mut f.proc {
                p.stop(libc::SIGTERM, Duration::from_secs(2));
            }
        }
        for p in &mut self.pings {
            p.stop(libc::SIGTERM, Duration::from_secs(2));
        }
        for s in &mut self.servers {
            s.proc.stop(libc::SIGTERM, Duration::from_secs(2));
        }
        if let Some(e) = &mut self.emulator {
            e.stop(libc::SIGTERM, Duration::from_secs(30));
        }
        let mut errors = Vec::new();
        for ns in std::mem::take(&mut self.namespaces) {
            if let Err(e) = netns::delete(&ns) {
                errors.push(format!("{e:#}"));
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(anyhow!(errors.join("; "))) }
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!("rdtp-testbed: teardown: {e:#}");
        }
    }
}

/// The clients on their schedule from time 0 to the run's duration: start each at its
/// start, SIGTERM it at its stop, reap what exits; sample server CPU at warm-up and RSS and
/// TCP socket memory every `socket_sample_interval`.
fn schedule(
    ctx: &Context,
    run: &Run,
    layout: &Layout,
    bed: &mut Bed,
    clock: &Clock,
    cpus: &Placement,
    dir: &Path,
) -> Result<During> {
    let g = &run.experiment.testbed;
    let logs = bed.logs.clone();
    // Hidden test hook: prove that a panic mid-run still tears everything down.
    let panic_at = std::env::var("RDTP_TESTBED_PANIC_AT").ok().and_then(|v| v.parse::<f64>().ok());
    bed.flows = layout
        .flows
        .iter()
        .map(|f| FlowRun { inst: f.clone(), proc: None, started: None, ended: None, usage: None, output: None })
        .collect();
    let mut during = During::default();
    let mut next_sample = g.warmup;
    let mut cpu_warmup_taken = false;
    loop {
        if procs::interrupted() {
            bail!(procs::INTERRUPTED_MSG);
        }
        let now = since(clock.t0);
        if now >= g.duration {
            break;
        }
        if panic_at.is_some_and(|p| now >= p) {
            panic!("RDTP_TESTBED_PANIC_AT reached (teardown test)");
        }
        if let Some(u) = bed.emulator.as_mut().and_then(|p| p.reap(false)) {
            bail!("the emulator exited during the run ({}); see logs/emulator.err", u.describe());
        }
        for f in bed.flows.iter_mut() {
            if f.proc.is_none() && now >= f.inst.start {
                let (proc, output) =
                    start_flow(ctx, g, &f.inst, &bed.namespaces, &bed.tcp_ports, dir, &logs, cpus.clients.as_deref())?;
                f.proc = Some(proc);
                f.output = output;
                f.started = Some(since(clock.t0));
            }
            if let Some(p) = &mut f.proc
                && f.usage.is_none()
            {
                if let Some(u) = p.reap(false) {
                    f.usage = Some(u);
                    f.ended = Some(since(clock.t0));
                } else if now >= f.inst.stop {
                    p.signal(libc::SIGTERM);
                }
            }
        }
        if !cpu_warmup_taken && now >= g.warmup {
            cpu_warmup_taken = true;
            during.sys_warmup = procs::system_cpu();
            during.server_cores_warmup = cpus.server.as_deref().and_then(|c| procs::system_cpu_of(Some(c)));
            for s in &mut bed.servers {
                s.cpu_warmup = procs::cpu_seconds(s.proc.pid);
            }
        }
        if g.socket_sample_interval > 0.0 && now >= next_sample {
            next_sample += g.socket_sample_interval;
            for s in &mut bed.servers {
                if let Some(r) = procs::status_kib(s.proc.pid, "VmRSS") {
                    s.rss_samples.push(r);
                }
            }
            if !bed.tcp_ports.is_empty() {
                match netns::tcp_socket_memory(&bed.namespaces[0]) {
                    Ok(m) => during.socket_samples.push(m),
                    Err(err) => eprintln!("rdtp-testbed: ss: {err:#}"),
                }
            }
        }
        let next_start = bed.flows.iter().filter(|f| f.proc.is_none()).map(|f| f.inst.start).fold(g.duration, f64::min);
        let wait = (next_start - since(clock.t0)).clamp(0.0, 0.02);
        std::thread::sleep(Duration::from_secs_f64(wait));
    }
    Ok(during)
}

#[allow(clippy::too_many_arguments)]
fn start_server(
    ctx: &Context,
    ns: &str,
    serve_dir: &Path,
    kind: Kind,
    cc: Option<&str>,
    port: u16,
    logs: &Path,
    cpus: Option<&[usize]>,
) -> Result<Server> {
    let label = match (kind, cc) {
        (Kind::Rdtp, _) => "rdtp_server".to_string(),
        (Kind::Tcp, Some(c)) => format!("tcp_{c}_server"),
        (Kind::Tcp, None) => "tcp_server".to_string(),
    };
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns]).arg(&ctx.tools.rdtp).arg("serve").arg(serve_dir);
    cmd.arg("--listen").arg(format!("0.0.0.0:{port}"));
    if kind == Kind::Tcp {
        cmd.arg("--tcp");
        if let Some(c) = cc {
            cmd.args(["--tcp-cc", c]);
        }
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    // If anything below fails, dropping `proc` stops the server.
    let mut proc = procs::spawn_on(&label, &mut cmd, cpus, None)?;
    let stderr = proc.take_stderr().context("no server stderr")?;
    let lines = procs::forward_lines(stderr, &logs.join(format!("{label}.log")))?;
    procs::wait_line(&lines, Duration::from_secs(600), &format!("{label} to listen"), |l| {
        l.starts_with("rdtp: serving").then_some(())
    })
    .map_err(|e| anyhow!("{e:#} (see logs/{label}.log)"))?;
    Ok(Server {
        label,
        kind,
        port,
        proc,
        idle_rss_kib: None,
        cpu_warmup: None,
        cpu_end: None,
        hwm_kib: None,
        rss_samples: Vec::new(),
        flows: 0,
        usage: Usage::default(),
    })
}

fn warm_up(client_ns: &[String]) -> Result<()> {
    let mut pending: Vec<&String> = client_ns.iter().collect();
    for _ in 0..10 {
        if pending.is_empty() {
            return Ok(());
        }
        let mut procs = Vec::new();
        for ns in &pending {
            let mut cmd = Command::new("ip");
            cmd.args(["netns", "exec", ns, "ping", "-c", "1", "-W", "1", "-n", "-q"])
                .arg(server_addr().to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            procs.push((*ns, procs::spawn("warm-up ping", &mut cmd)?));
        }
        let mut failed = Vec::new();
        for (ns, mut p) in procs {
            let u = p.reap(true).unwrap_or_default();
            if u.exit_code() != Some(0) {
                failed.push(ns);
            }
        }
        pending = failed;
        procs::sleep(Duration::from_millis(200))?;
    }
    if pending.is_empty() {
        Ok(())
    } else {
        Err(anyhow!(
            "the server is unreachable through the emulator from {} (ping failed for 10 s)",
            pending.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ))
    }
}

#[allow(clippy::too_many_arguments)]
fn start_flow(
    ctx: &Context,
    g: &experiment::General,
    f: &FlowInstance,
    all_ns: &[String],
    tcp_ports: &BTreeMap<String, u16>,
    dir: &Path,
    logs: &Path,
    cpus: Option<&[usize]>,
) -> Result<(Proc, Option<PathBuf>)> {
    let ns = &all_ns[f.ns + 1];
    let output = if f.save { Some(dir.join(format!("flow-{}.bin", f.index))) } else { None };
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns]).arg(&ctx.tools.rdtp).arg("fetch");
    match f.kind {
        Kind::Rdtp => {
            cmd.arg(format!("{}:{UDP_PORT}", server_addr())).arg(&f.object);
            cmd.args(["--cc", &f.cc]).arg("--mtu").arg(g.mtu.to_string());
        }
        Kind::Tcp => {
            let port = tcp_ports.get(&f.cc).copied().unwrap_or(UDP_PORT);
            cmd.arg(format!("{}:{port}", server_addr())).arg(&f.object).arg("--tcp");
        }
    }
    let out_arg = output.as_ref().map_or("/dev/null".to_string(), |p| p.display().to_string());
    cmd.args(["-o", &out_arg, "--json", "-q"]);
    for a in flow_extra_args(f, logs) {
        cmd.arg(a);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(log_file(logs, &format!("flow-{}.json", f.index))?))
        .stderr(Stdio::from(log_file(logs, &format!("flow-{}.err", f.index))?));
    let p = procs::spawn_on(&format!("flow {}", f.index), &mut cmd, cpus, None)?;
    Ok((p, output))
}

fn flow_extra_args(f: &FlowInstance, logs: &Path) -> Vec<String> {
    let mut v = f.extra_args.clone();
    if f.log {
        v.push("--log-rtt".into());
        v.push(logs.join(format!("flow-{}-rtt.tsv", f.index)).display().to_string());
        v.push("--log-cwnd".into());
        v.push(logs.join(format!("flow-{}-cwnd.tsv", f.index)).display().to_string());
    }
    v
}
