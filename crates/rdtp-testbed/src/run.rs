//! One run: namespaces and taps, servers, the emulator, the client processes on their
//! schedule, measurements, and teardown (also on error, signal and panic: [`Bed`]'s Drop).

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::fs;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::experiment::{self, FlowInstance, Kind, Layout, Run};
use crate::netns::{self, SocketMem, TapStats};
use crate::procs::{self, Proc, Usage};
use crate::results::{self, Stats, cell, fmt};

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
    pub fn new(prefix: &str) -> Result<ContentStore, String> {
        let root = std::env::temp_dir().join(format!("{prefix}-content"));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("store")).map_err(|e| format!("{}: {e}", root.display()))?;
        Ok(ContentStore { root, made: HashSet::new() })
    }

    fn object(&mut self, size: u64) -> Result<PathBuf, String> {
        let path = self.root.join("store").join(format!("{size}.bin"));
        if self.made.contains(&size) {
            return Ok(path);
        }
        write_pattern(&path, size)?;
        self.made.insert(size);
        Ok(path)
    }

    /// A directory holding exactly `objects` (hard links into the store).
    fn serve_dir(&mut self, run_id: &str, objects: &BTreeMap<String, u64>) -> Result<PathBuf, String> {
        let dir = self.root.join("serve").join(run_id);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (name, size) in objects {
            let src = self.object(*size)?;
            fs::hard_link(&src, dir.join(name)).map_err(|e| format!("linking {name}: {e}"))?;
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

fn write_pattern(path: &Path, size: u64) -> Result<(), String> {
    use std::io::Write;
    let f = fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
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
        w.write_all(&buf[..n]).map_err(|e| format!("{}: {e}", path.display()))?;
        left -= n as u64;
    }
    w.flush().map_err(|e| format!("{}: {e}", path.display()))
}

/// What every run shares.
pub struct Context {
    pub tools: Tools,
    /// Namespace name prefix, `rdtp-<pid>`.
    pub prefix: String,
    pub content: ContentStore,
}

struct Server {
    label: String,
    kind: Kind,
    port: u16,
    proc: Proc,
    idle_rss_kib: Option<u64>,
    cpu_warmup: Option<f64>,
    cpu_end: Option<f64>,
    hwm_kib: Option<u64>,
    rss_samples: Vec<u64>,
    flows: usize,
}

struct FlowRun {
    inst: FlowInstance,
    proc: Option<Proc>,
    started: Option<f64>,
    ended: Option<f64>,
    usage: Option<Usage>,
    output: Option<PathBuf>,
}

/// What a run started that outlives single steps; torn down in order on drop: pings, the
/// emulator, then the namespaces (with their taps). Servers and clients are locals declared
/// after the bed, so they are dropped (stopped) before it.
#[derive(Default)]
struct Bed {
    namespaces: Vec<String>,
    pings: Vec<Proc>,
    emulator: Option<Proc>,
}

impl Bed {
    fn teardown(&mut self) -> Result<(), String> {
        for p in &mut self.pings {
            p.stop(libc::SIGTERM, Duration::from_secs(2));
        }
        if let Some(e) = &mut self.emulator {
            e.stop(libc::SIGTERM, Duration::from_secs(30));
        }
        let mut errors = Vec::new();
        for ns in self.namespaces.drain(..) {
            if let Err(e) = netns::delete(&ns) {
                errors.push(e);
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!("rdtp-testbed: teardown: {e}");
        }
    }
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

fn ns_name(prefix: &str, client: Option<usize>) -> String {
    match client {
        None => format!("{prefix}-srv"),
        Some(i) => format!("{prefix}-c{i}"),
    }
}

fn log_file(dir: &Path, name: &str) -> Result<fs::File, String> {
    let p = dir.join(name);
    fs::File::create(&p).map_err(|e| format!("{}: {e}", p.display()))
}

fn since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64()
}

/// Run `run` with its outputs in `dir`.
pub fn run_one(ctx: &mut Context, run: &Run, dir: &Path) -> Result<RunResult, String> {
    let e = &run.experiment;
    let g = &e.testbed;
    let layout: Layout = experiment::layout(e)?;
    let logs = dir.join("logs");
    fs::create_dir_all(&logs).map_err(|err| format!("{}: {err}", logs.display()))?;
    let serve_dir = ctx.content.serve_dir(&run.id, &layout.objects)?;
    let tcp_buffer = match &g.tcp_buffer {
        Some(s) => s.bytes()?,
        None => 64 << 20,
    };

    // CPU placement (optional): servers on server_cpus with their tap's receive processing,
    // the emulator and the clients elsewhere. The testbed itself stays unpinned: pinned next
    // to a SCHED_FIFO emulator it could be starved and miss its schedule.
    let all_cpus = procs::online_cpus();
    let list = |s: &Option<String>| s.as_deref().map(experiment::parse_cpus_opt).transpose().map(Option::flatten);
    let server_cpus = list(&g.server_cpus)?;
    let others: Option<Vec<usize>> =
        server_cpus.as_ref().map(|s| all_cpus.iter().copied().filter(|c| !s.contains(c)).collect());
    if others.as_ref().is_some_and(|o| o.is_empty()) {
        return Err("testbed.server_cpus leaves no CPU for the emulator and the clients".into());
    }
    let emulator_cpus = list(&g.emulator_cpus)?.or_else(|| others.clone());
    let client_cpus = list(&g.client_cpus)?.or_else(|| others.clone());

    let mut bed = Bed::default();

    // Namespaces and taps.
    let srv_ns = ns_name(&ctx.prefix, None);
    let mut taps = Vec::new();
    let mut all_ns = Vec::new();
    for client in std::iter::once(None).chain((0..layout.namespaces.len()).map(Some)) {
        let ns = ns_name(&ctx.prefix, client);
        let (gw, host) = rdtp_scenario::network::subnet(client);
        bed.namespaces.push(ns.clone());
        netns::create(&ns, host, gw, g.mtu, tcp_buffer)?;
        let label = client.map_or("server".to_string(), |i| format!("client{i}"));
        taps.push(format!("{label}:{ns}/{}:{gw}/{}", netns::TAP, rdtp_scenario::network::PREFIX_LEN));
        all_ns.push(ns);
        if procs::interrupted() {
            return Err(procs::INTERRUPTED_MSG.into());
        }
    }

    // Receive steering: what the emulator writes into a tap is processed (softirq: the
    // whole kernel TCP/UDP receive path, and for TCP the sending it clocks) on the host's
    // CPUs instead of inside the emulator's write().
    if let Some(c) = &server_cpus {
        netns::set_rps(&srv_ns, c)?;
    }
    if let Some(c) = &client_cpus {
        for ns in &all_ns[1..] {
            netns::set_rps(ns, c)?;
        }
    }
    // Servers: rdtp over UDP if any rdtp flow, one TCP server per congestion control.
    let mut servers: Vec<Server> = Vec::new();
    let mut tcp_ports: BTreeMap<String, u16> = BTreeMap::new();
    if layout.flows.iter().any(|f| f.kind == Kind::Rdtp) {
        servers.push(start_server(
            ctx,
            &srv_ns,
            &serve_dir,
            Kind::Rdtp,
            None,
            UDP_PORT,
            &logs,
            server_cpus.as_deref(),
        )?);
    }
    for f in layout.flows.iter().filter(|f| f.kind == Kind::Tcp) {
        if !tcp_ports.contains_key(&f.cc) {
            let port = UDP_PORT + tcp_ports.len() as u16;
            tcp_ports.insert(f.cc.clone(), port);
            servers.push(start_server(
                ctx,
                &srv_ns,
                &serve_dir,
                Kind::Tcp,
                Some(&f.cc),
                port,
                &logs,
                server_cpus.as_deref(),
            )?);
        }
    }
    for s in &mut servers {
        s.idle_rss_kib = procs::status_kib(s.proc.pid, "VmRSS");
        s.flows = layout
            .flows
            .iter()
            .filter(|f| f.kind == s.kind && (f.kind == Kind::Rdtp || tcp_ports.get(&f.cc) == Some(&s.port)))
            .count();
    }

    // The emulator.
    let window_file = dir.join("window.txt");
    let _ = fs::remove_file(&window_file);
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
        format!("--WindowFile={}", window_file.display()),
    ];
    if let Some(c) = g.pin_cpu {
        args.push(format!("--PinCpu={c}"));
    }
    if let Some(s) = g.settle {
        args.push(format!("--Settle={s}"));
    }
    args.extend(experiment::topology_args(run)?);
    fs::write(dir.join("emulator-args.txt"), args.join("\n") + "\n").map_err(|err| err.to_string())?;
    let mut cmd = Command::new(&ctx.tools.sim);
    cmd.args(&args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::from(log_file(&logs, "emulator.err")?));
    let sched = experiment::parse_sched(&g.emulator_sched)?;
    let mut emu = procs::spawn_on("emulator", &mut cmd, emulator_cpus.as_deref(), sched)?;
    let stdout = emu.take_stdout().ok_or("no emulator stdout")?;
    bed.emulator = Some(emu);
    let lines = procs::forward_lines(stdout, &logs.join("emulator.log"))?;
    procs::wait_line(&lines, Duration::from_secs(60), "the emulator's READY line (see logs/emulator.err)", |l| {
        l.starts_with("READY").then_some(())
    })
    .map_err(|err| {
        let tail = fs::read_to_string(logs.join("emulator.err")).unwrap_or_default();
        let tail: Vec<&str> = tail.lines().rev().take(3).collect();
        format!("{err}: {}", tail.join(" | "))
    })?;
    let ready = Instant::now();

    // Warm-up: resolve ARP both ways before the clock starts.
    warm_up(&all_ns[1..])?;
    let mut taps_before = Vec::new();
    for ns in &all_ns {
        taps_before.push(netns::tap_stats(ns)?);
    }

    // Time 0.
    let t0 = Instant::now();
    let t0_unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
    let offset = (t0 - ready).as_secs_f64();
    if g.ping {
        for (i, ns) in all_ns[1..].iter().enumerate() {
            let mut cmd = Command::new("ip");
            cmd.args(["netns", "exec", ns, "ping", "-D", "-n", "-i"])
                .arg(format!("{}", g.ping_interval))
                .arg("-w")
                .arg(format!("{}", (g.duration + 1.0).ceil() as u64))
                .arg(server_addr().to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::from(log_file(&logs, &format!("ping-c{i}.txt"))?))
                .stderr(Stdio::null());
            bed.pings.push(procs::spawn_on(&format!("ping c{i}"), &mut cmd, client_cpus.as_deref(), None)?);
        }
    }

    // Hidden test hook: prove that a panic mid-run still tears everything down.
    let panic_at = std::env::var("RDTP_TESTBED_PANIC_AT").ok().and_then(|v| v.parse::<f64>().ok());
    let mut flows: Vec<FlowRun> = layout
        .flows
        .iter()
        .map(|f| FlowRun { inst: f.clone(), proc: None, started: None, ended: None, usage: None, output: None })
        .collect();
    let mut socket_samples: Vec<SocketMem> = Vec::new();
    let mut next_sample = g.warmup;
    let mut cpu_warmup_taken = false;
    let mut sys_warmup = None;
    let mut server_cores_warmup = None;
    let server_ns = srv_ns.clone();
    loop {
        if procs::interrupted() {
            return Err(procs::INTERRUPTED_MSG.into());
        }
        let now = since(t0);
        if now >= g.duration {
            break;
        }
        if panic_at.is_some_and(|p| now >= p) {
            panic!("RDTP_TESTBED_PANIC_AT reached (teardown test)");
        }
        if let Some(u) = bed.emulator.as_mut().and_then(|p| p.reap(false)) {
            return Err(format!("the emulator exited during the run ({}); see logs/emulator.err", u.describe()));
        }
        for f in flows.iter_mut() {
            if f.proc.is_none() && now >= f.inst.start {
                let (proc, output) =
                    start_flow(ctx, g, &f.inst, &all_ns, &tcp_ports, dir, &logs, client_cpus.as_deref())?;
                f.proc = Some(proc);
                f.output = output;
                f.started = Some(since(t0));
            }
            if let Some(p) = &mut f.proc
                && f.usage.is_none()
            {
                if let Some(u) = p.reap(false) {
                    f.usage = Some(u);
                    f.ended = Some(since(t0));
                } else if now >= f.inst.stop {
                    p.signal(libc::SIGTERM);
                }
            }
        }
        if !cpu_warmup_taken && now >= g.warmup {
            cpu_warmup_taken = true;
            sys_warmup = procs::system_cpu();
            server_cores_warmup = server_cpus.as_deref().and_then(|c| procs::system_cpu_of(Some(c)));
            for s in &mut servers {
                s.cpu_warmup = procs::cpu_seconds(s.proc.pid);
            }
        }
        if g.socket_sample_interval > 0.0 && now >= next_sample {
            next_sample += g.socket_sample_interval;
            for s in &mut servers {
                if let Some(r) = procs::status_kib(s.proc.pid, "VmRSS") {
                    s.rss_samples.push(r);
                }
            }
            if !tcp_ports.is_empty() {
                match netns::tcp_socket_memory(&server_ns) {
                    Ok(m) => socket_samples.push(m),
                    Err(err) => eprintln!("rdtp-testbed: ss: {err}"),
                }
            }
        }
        let next_start = flows.iter().filter(|f| f.proc.is_none()).map(|f| f.inst.start).fold(g.duration, f64::min);
        let wait = (next_start - since(t0)).clamp(0.0, 0.02);
        std::thread::sleep(Duration::from_secs_f64(wait));
    }
    let end = since(t0);

    // Measurements at the end, then stop the clients.
    let sys_end = procs::system_cpu();
    let server_cores_end = server_cpus.as_deref().and_then(|c| procs::system_cpu_of(Some(c)));
    for s in &mut servers {
        s.cpu_end = procs::cpu_seconds(s.proc.pid);
        s.hwm_kib = procs::status_kib(s.proc.pid, "VmHWM");
    }
    for f in flows.iter_mut() {
        if let Some(p) = &mut f.proc
            && f.usage.is_none()
        {
            f.usage = Some(p.stop(libc::SIGTERM, Duration::from_secs(2)));
            f.ended = Some(end);
        }
    }
    for p in &mut bed.pings {
        p.stop(libc::SIGINT, Duration::from_secs(2));
    }
    let mut tap_delta = Vec::new();
    for (ns, before) in all_ns.iter().zip(&taps_before) {
        tap_delta.push(netns::tap_stats(ns)?.since(before));
    }
    let mut server_usage = Vec::new();
    for s in &mut servers {
        server_usage.push(s.proc.stop(libc::SIGTERM, Duration::from_secs(5)));
    }
    fs::write(&window_file, format!("{} {}\n", g.warmup + offset, end + offset)).map_err(|err| err.to_string())?;
    let emu_usage = bed.emulator.as_mut().map(|p| p.stop(libc::SIGTERM, Duration::from_secs(30)));
    bed.teardown()?;
    let left = netns::list(&format!("{}-", ctx.prefix));
    if !left.is_empty() {
        return Err(format!("namespaces left after teardown: {}", left.join(", ")));
    }

    // ---- results ----
    let emu_toml: toml::Table = fs::read_to_string(dir.join("run.toml"))
        .map_err(|err| format!("the emulator wrote no run.toml ({err}); see logs/emulator.err"))?
        .parse()
        .map_err(|err| format!("emulator run.toml: {err}"))?;
    let emu_ok = emu_usage.is_some_and(|u| u.exit_code() == Some(0));
    let series = results::read_timeseries(&dir.join("timeseries.csv")).unwrap_or_default();
    let from_e = g.warmup + offset;
    let to_e = end + offset;

    // Drops outside the emulated network: the taps' rings (tx_dropped: the emulator's
    // reader fell behind; rx_dropped: a host did not take what the emulator wrote) and the
    // FdNetDevice read queue.
    let tap_drops: u64 = tap_delta.iter().map(|d| d.tx_dropped).sum();
    let host_rx_drops: u64 = tap_delta.iter().map(|d| d.rx_dropped).sum();
    let fd_drops = fd_queue_drops(&emu_toml, &taps_before, &tap_delta);

    let lag_p99 = results::toml_f64(&emu_toml, "results", "window_lag_p99_ms");
    let lag_max = results::toml_f64(&emu_toml, "results", "window_lag_max_ms");
    let lag_over = results::toml_f64(&emu_toml, "results", "window_lag_over_threshold");
    let mut reasons = Vec::new();
    if !emu_ok {
        reasons.push(format!("emulator {}", emu_usage.map_or("not reaped".into(), |u| u.describe())));
    }
    match lag_p99 {
        Some(p) if p <= g.lag_threshold_ms => {}
        Some(p) => reasons.push(format!("lag p99 {p:.3} ms > {} ms", g.lag_threshold_ms)),
        None => reasons.push("no lag samples".into()),
    }
    if fd_drops > 0 {
        reasons.push(format!("{fd_drops} FdNetDevice read-queue drops"));
    }
    if tap_drops > 0 {
        reasons.push(format!("{tap_drops} tap ring drops (emulator reader too slow)"));
    }
    if host_rx_drops > 0 {
        reasons.push(format!("{host_rx_drops} packets dropped by the hosts' taps on receive"));
    }
    let valid = reasons.is_empty();

    // Pings per client namespace, over [warmup, end).
    let mut ping_stats: Vec<(Stats, f64)> = Vec::new();
    for i in 0..layout.namespaces.len() {
        let text = fs::read_to_string(logs.join(format!("ping-c{i}.txt"))).unwrap_or_default();
        let (samples, max_seq) = results::parse_ping(&text);
        let in_window: Vec<f64> = samples
            .iter()
            .filter(|(t, _)| {
                let rel = t - t0_unix;
                rel >= g.warmup && rel < end
            })
            .map(|(_, r)| *r)
            .collect();
        let loss = if max_seq > 0 { 1.0 - samples.len() as f64 / max_seq as f64 } else { f64::NAN };
        ping_stats.push((results::stats(&in_window), loss));
    }

    // Per-namespace delivered goodput (the header of rdtp Data packets removed when the
    // namespace runs rdtp flows only).
    let data_header = rdtp_proto::wire::DATA_HEADER_LEN as u64;
    let ns_kind = |i: usize| -> Option<Kind> {
        let kinds: HashSet<Kind> = layout.namespaces[i].iter().map(|&f| layout.flows[f].kind).collect();
        (kinds.len() == 1).then(|| kinds.into_iter().next()).flatten()
    };
    let header_for = |k: Option<Kind>| if k == Some(Kind::Rdtp) { data_header } else { 0 };
    let mut ns_goodput = Vec::new();
    let mut clients_csv = String::from(
        "namespace,client,flows,goodput_mbps,ping_rtt_mean_ms,ping_rtt_p50_ms,ping_rtt_p95_ms,ping_rtt_max_ms,ping_samples,ping_loss,tap_tx_dropped,tap_rx_dropped\n",
    );
    for (i, &(ps, loss)) in ping_stats.iter().enumerate() {
        let label = format!("client{i}");
        let gp = results::goodput(&series, &label, g.interval, from_e, to_e, header_for(ns_kind(i)));
        ns_goodput.push(gp);
        let d = tap_delta.get(i + 1).copied().unwrap_or_default();
        let _ = writeln!(
            clients_csv,
            "{},{label},{},{},{},{},{},{},{},{},{},{}",
            ns_name(&ctx.prefix, Some(i)),
            layout.namespaces[i].len(),
            fmt(gp, 3),
            fmt(ps.mean, 3),
            fmt(ps.p50, 3),
            fmt(ps.p95, 3),
            fmt(ps.max, 3),
            ps.n,
            fmt(Some(loss), 4),
            d.tx_dropped,
            d.rx_dropped
        );
    }
    fs::write(dir.join("clients.csv"), clients_csv).map_err(|err| err.to_string())?;

    // Per flow.
    let mut flow_rows = Vec::new();
    let mut flows_csv = String::new();
    for f in &flows {
        let json: Option<serde_json::Value> = fs::read_to_string(logs.join(format!("flow-{}.json", f.inst.index)))
            .ok()
            .and_then(|t| t.lines().last().and_then(|l| serde_json::from_str(l).ok()));
        let completed = json.as_ref().and_then(|j| j["completed"].as_bool()).unwrap_or(false)
            && f.usage.is_some_and(|u| u.exit_code() == Some(0));
        let started = f.started.unwrap_or(f.inst.start);
        let active_end = f.ended.unwrap_or(end).min(end);
        let alone = layout.namespaces[f.inst.ns].len() == 1;
        let win_from = started.max(g.warmup);
        let gp = if alone && active_end > win_from {
            results::goodput(
                &series,
                &format!("client{}", f.inst.ns),
                g.interval,
                win_from + offset,
                active_end + offset,
                header_for(Some(f.inst.kind)),
            )
        } else {
            None
        };
        // Only a completed fetch can be compared (a stopped one has a partial file).
        let byte_exact = f
            .output
            .as_ref()
            .filter(|_| completed)
            .map(|p| files_equal(p, &ctx.content.path(f.inst.size)).unwrap_or(false));
        if let Some(p) = &f.output {
            let _ = fs::remove_file(p);
        }
        let status = match f.usage {
            Some(u) if u.exit_code() == Some(0) => "completed".to_string(),
            Some(u) if u.signal() == Some(libc::SIGTERM) => "stopped".to_string(),
            Some(u) => format!("failed ({})", u.describe()),
            None => "not started".to_string(),
        };
        let j = |k: &str| json.as_ref().and_then(|v| v[k].as_f64());
        let (ps, _) = ping_stats[f.inst.ns];
        let row: Vec<(String, String)> = vec![
            ("flow".into(), f.inst.index.to_string()),
            ("def".into(), f.inst.def.to_string()),
            ("kind".into(), f.inst.kind.name().into()),
            ("cc".into(), f.inst.cc.clone()),
            ("client".into(), f.inst.ns.to_string()),
            ("start_s".into(), fmt(Some(started), 3)),
            ("end_s".into(), fmt(Some(active_end), 3)),
            ("status".into(), status),
            ("completed".into(), (completed as u8).to_string()),
            ("goodput_mbps".into(), fmt(gp, 3)),
            ("fetch_goodput_mbps".into(), fmt(j("goodput_bps").map(|b| b / 1e6), 3)),
            ("fetch_elapsed_s".into(), fmt(j("elapsed_s"), 3)),
            (
                "bytes".into(),
                json.as_ref().and_then(|v| v["bytes_received"].as_u64()).map_or(String::new(), |b| b.to_string()),
            ),
            ("fetch_rtt_avg_ms".into(), fmt(j("rtt_avg_ms"), 3)),
            ("ping_rtt_mean_ms".into(), fmt(ps.mean, 3)),
            ("ping_rtt_p95_ms".into(), fmt(ps.p95, 3)),
            (
                "retransmitted".into(),
                json.as_ref().and_then(|v| v["units_rerequested"].as_u64()).map_or(String::new(), |b| b.to_string()),
            ),
            ("cpu_s".into(), fmt(f.usage.map(|u| u.cpu_s), 3)),
            ("max_rss_mib".into(), fmt(f.usage.map(|u| u.max_rss_mib), 1)),
            ("byte_exact".into(), byte_exact.map_or(String::new(), |b| b.to_string())),
        ];
        if flows_csv.is_empty() {
            flows_csv = row.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(",") + "\n";
        }
        flows_csv += &(row.iter().map(|(_, v)| cell(v)).collect::<Vec<_>>().join(",") + "\n");
        flow_rows.push(row);
    }
    fs::write(dir.join("flows.csv"), &flows_csv).map_err(|err| err.to_string())?;

    // Servers.
    let window = (end - g.warmup).max(1e-9);
    let mut server_lines = String::new();
    let mut server_cols: Vec<(String, String)> = Vec::new();
    let mean_sockets = mean(socket_samples.iter().map(|m| m.sockets as f64));
    let mean_skmem = mean(socket_samples.iter().map(|m| (m.wmem_queued + m.rmem_alloc) as f64));
    for (s, u) in servers.iter().zip(&server_usage) {
        let cpu_win = match (s.cpu_warmup, s.cpu_end) {
            (Some(a), Some(b)) => Some(b - a),
            _ => None,
        };
        let rss_mean = mean(s.rss_samples.iter().map(|&r| r as f64));
        // Growth over idle, not divided by receivers: a server whose growth does not
        // scale with receivers (buffers touched once) must not look like per-receiver state.
        let growth = match (rss_mean, s.idle_rss_kib) {
            (Some(m), Some(i)) => Some(m - i as f64),
            _ => None,
        };
        let kv: Vec<(&str, String)> = vec![
            ("port", s.port.to_string()),
            ("flows", s.flows.to_string()),
            ("cpu_s_total", format!("{:.3}", u.cpu_s)),
            ("cpu_s_window", fmt(cpu_win, 3)),
            ("cpu_pct_window", fmt(cpu_win.map(|c| 100.0 * c / window), 2)),
            ("rss_idle_kib", s.idle_rss_kib.map_or(String::new(), |v| v.to_string())),
            ("rss_mean_window_kib", fmt(rss_mean, 0)),
            ("rss_hwm_kib", s.hwm_kib.map_or(String::new(), |v| v.to_string())),
            ("rss_growth_kib", fmt(growth, 0)),
            ("max_rss_mib_rusage", format!("{:.2}", u.max_rss_mib)),
        ];
        let _ = writeln!(server_lines, "\n[server.{}]", s.label);
        for (k, v) in kv.into_iter().filter(|(_, v)| !v.is_empty()) {
            let _ = writeln!(server_lines, "{k} = {v}");
        }
        let _ = writeln!(server_lines, "exit = {:?}", u.describe());
        let p = &s.label;
        server_cols.push((format!("{p}_cpu_pct"), fmt(cpu_win.map(|c| 100.0 * c / window), 2)));
        server_cols.push((format!("{p}_rss_hwm_mib"), fmt(s.hwm_kib.map(|k| k as f64 / 1024.0), 2)));
        server_cols.push((format!("{p}_rss_idle_mib"), fmt(s.idle_rss_kib.map(|k| k as f64 / 1024.0), 2)));
        server_cols.push((format!("{p}_rss_growth_kib"), fmt(growth, 0)));
    }
    let cores_busy = match (server_cores_warmup, server_cores_end) {
        (Some(a), Some(b)) if b.2 > a.2 => Some((
            100.0 * (b.0 - a.0) as f64 / (b.2 - a.2) as f64 * server_cpus.as_ref().map_or(1, |c| c.len()) as f64,
            100.0 * (b.1 - a.1) as f64 / (b.2 - a.2) as f64 * server_cpus.as_ref().map_or(1, |c| c.len()) as f64,
        )),
        _ => None,
    };
    let sys_busy = match (sys_warmup, sys_end) {
        (Some(a), Some(b)) if b.2 > a.2 => {
            Some((100.0 * (b.0 - a.0) as f64 / (b.2 - a.2) as f64, 100.0 * (b.1 - a.1) as f64 / (b.2 - a.2) as f64))
        }
        _ => None,
    };
    let total_gp: Option<f64> = {
        let v: Vec<f64> = ns_goodput.iter().flatten().copied().collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    let ping0 = ping_stats.first().map(|p| p.0).unwrap_or_default();
    let mut run_cols: Vec<(String, String)> = vec![
        ("valid".into(), valid.to_string()),
        ("invalid_reason".into(), reasons.join("; ")),
        ("lag_p99_ms".into(), fmt(lag_p99, 3)),
        ("lag_max_ms".into(), fmt(lag_max, 3)),
        ("lag_over_threshold".into(), fmt(lag_over, 0)),
        ("fd_queue_drops".into(), fd_drops.to_string()),
        ("tap_drops".into(), (tap_drops + host_rx_drops).to_string()),
        ("utilisation".into(), fmt(results::toml_f64(&emu_toml, "results", "utilisation"), 4)),
        ("mean_queue_delay_ms".into(), fmt(results::toml_f64(&emu_toml, "results", "mean_queue_delay_ms"), 3)),
        ("queue_drops".into(), fmt(results::toml_f64(&emu_toml, "results", "queue_drops"), 0)),
        ("total_goodput_mbps".into(), fmt(total_gp, 3)),
        ("flows".into(), flows.len().to_string()),
        (
            "completed".into(),
            flow_rows.iter().filter(|r| r.iter().any(|(k, v)| k == "completed" && v == "1")).count().to_string(),
        ),
        ("ping_rtt_mean_ms".into(), fmt(ping0.mean, 3)),
        ("ping_rtt_p95_ms".into(), fmt(ping0.p95, 3)),
    ];
    run_cols.extend(server_cols);
    run_cols.push(("tcp_sockets_mean".into(), fmt(mean_sockets, 1)));
    run_cols.push((
        "tcp_skmem_per_conn_kib".into(),
        fmt(
            match (mean_skmem, mean_sockets) {
                (Some(m), Some(n)) if n > 0.0 => Some(m / n / 1024.0),
                _ => None,
            },
            1,
        ),
    ));
    run_cols.push(("server_cpus_busy_pct".into(), fmt(cores_busy.map(|c| c.0), 2)));
    run_cols.push(("server_cpus_softirq_pct".into(), fmt(cores_busy.map(|c| c.1), 2)));
    run_cols.push(("emulator_cpu_s".into(), fmt(emu_usage.map(|u| u.cpu_s), 2)));
    run_cols.push(("system_cpu_busy_pct".into(), fmt(sys_busy.map(|s| s.0), 1)));
    run_cols.push(("system_softirq_pct".into(), fmt(sys_busy.map(|s| s.1), 1)));
    run_cols.push(("t0_offset_s".into(), fmt(Some(offset), 3)));

    let mut tb = String::from(
        "# rdtp-testbed run: what the testbed measured (the emulator's own numbers are in run.toml)\n[run]\n",
    );
    let _ = writeln!(
        tb,
        "id = {:?}\nlabel = {:?}\nduration_s = {:.3}\nwarmup_s = {}\nt0_offset_s = {:.6}",
        run.id, run.label, end, g.warmup, offset
    );
    let _ = writeln!(
        tb,
        "# emulator time = testbed time + t0_offset_s (timeseries.csv, queue.csv, lag.csv are in emulator time)"
    );
    let _ = writeln!(tb, "\n[results]");
    for (k, v) in &run_cols {
        if v.is_empty() {
            continue;
        }
        match v.parse::<f64>() {
            _ if v == "true" || v == "false" => {
                let _ = writeln!(tb, "{k} = {v}");
            }
            Ok(_) if k != "invalid_reason" => {
                let _ = writeln!(tb, "{k} = {v}");
            }
            _ => {
                let _ = writeln!(tb, "{k} = {v:?}");
            }
        }
    }
    let _ = writeln!(
        tb,
        "\n[socket_memory]\n# the server namespace's established TCP sockets (ss -tmn skmem), mean over samples\nsamples = {}",
        socket_samples.len()
    );
    if let (Some(n), Some(m)) = (mean_sockets, mean_skmem) {
        let _ = writeln!(tb, "sockets_mean = {n:.1}\nwmem_queued_plus_rmem_alloc_mean_bytes = {m:.0}");
    }
    tb.push_str(&server_lines);
    tb.push('\n');
    fs::write(dir.join("testbed.toml"), tb).map_err(|err| err.to_string())?;
    let _ = fs::remove_dir_all(&serve_dir);
    Ok(RunResult { run: run_cols, flows: flow_rows, valid })
}

fn mean(it: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = it.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// FdNetDevice read-queue drops: what the kernel handed to the emulator's reader (tap
/// tx_packets over the whole life of the tap) minus what the emulator received.
fn fd_queue_drops(emu: &toml::Table, before: &[TapStats], delta: &[TapStats]) -> u64 {
    let mut drops = 0u64;
    for (i, (b, d)) in before.iter().zip(delta).enumerate() {
        let label = if i == 0 { "server".to_string() } else { format!("client{}", i - 1) };
        let Some(received) = results::toml_f64(emu, &format!("tap.{label}"), "from_host_packets") else { continue };
        let read = b.tx_packets + d.tx_packets;
        drops += read.saturating_sub(received as u64);
    }
    drops
}

fn files_equal(a: &Path, b: &Path) -> Result<bool, String> {
    use std::io::Read;
    let ma = fs::metadata(a).map_err(|e| e.to_string())?;
    let mb = fs::metadata(b).map_err(|e| e.to_string())?;
    if ma.len() != mb.len() {
        return Ok(false);
    }
    let mut fa = std::io::BufReader::new(fs::File::open(a).map_err(|e| e.to_string())?);
    let mut fb = std::io::BufReader::new(fs::File::open(b).map_err(|e| e.to_string())?);
    let (mut x, mut y) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = fa.read(&mut x).map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(true);
        }
        fb.read_exact(&mut y[..n]).map_err(|e| e.to_string())?;
        if x[..n] != y[..n] {
            return Ok(false);
        }
    }
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
) -> Result<Server, String> {
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
    let stderr = proc.take_stderr().ok_or("no server stderr")?;
    let lines = procs::forward_lines(stderr, &logs.join(format!("{label}.log")))?;
    procs::wait_line(&lines, Duration::from_secs(600), &format!("{label} to listen"), |l| {
        l.starts_with("rdtp: serving").then_some(())
    })
    .map_err(|e| format!("{e} (see logs/{label}.log)"))?;
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
    })
}

fn warm_up(client_ns: &[String]) -> Result<(), String> {
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
        Err(format!(
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
) -> Result<(Proc, Option<PathBuf>), String> {
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
