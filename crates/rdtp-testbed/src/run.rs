//! One run, step by step: set-up ([`Bed`]: namespaces and taps, servers, caching routers,
//! the emulator; its Drop tears everything down, also on error, signal and panic), time 0 and
//! the pings, the client processes on their [`schedule`] with the samples taken meanwhile,
//! the measurements at the end ([`Bed::finish`]), then the report (`crate::report`).

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
use crate::routers::{self, RouterPlan};
use rdtp_signals::Signal;

/// The programs a run starts.
#[derive(Clone, Debug)]
pub struct Tools {
    pub rdtp: PathBuf,
    pub sim: PathBuf,
    /// The NDNts rig (`tests/ndnts`: producer.mjs, consumer.mjs and their node_modules) and
    /// `node`, for runs with an NDNts producer or consumer; `None` where it is not installed
    /// (such runs then fail with what to install).
    pub ndnts: Option<PathBuf>,
}

impl Tools {
    /// The NDNts rig, or what to do to get it.
    fn ndnts(&self) -> Result<&Path> {
        match &self.ndnts {
            Some(p) if procs::on_path("node") => Ok(p),
            _ => bail!(
                "NDNts producer or consumer: needs node and the NDNts rig tests/ndnts with its node_modules \
                 (tools/setup.sh; --ndnts DIR or RDTP_TESTBED_NDNTS point at it)"
            ),
        }
    }
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

/// A process that lasts the whole run (a server or a router) and what was measured about it.
pub(crate) struct Daemon {
    /// `rdtp_server`, `tcp_<cc>_server`, `router_<node>`: its log's name and its columns' prefix.
    pub label: String,
    proc: Proc,
    /// RSS once it listened, before any client.
    pub idle_rss_kib: Option<u64>,
    pub cpu_warmup: Option<f64>,
    pub cpu_end: Option<f64>,
    pub hwm_kib: Option<u64>,
    pub rss_samples: Vec<u64>,
    /// wait4 of the stopped process.
    pub usage: Usage,
}

impl Daemon {
    fn sample_cpu(&self) -> Option<f64> {
        procs::cpu_seconds(self.proc.pid)
    }

    fn sample_rss(&mut self) {
        if let Some(r) = procs::status_kib(self.proc.pid, "VmRSS") {
            self.rss_samples.push(r);
        }
    }

    /// CPU and peak RSS at the end of the schedule, before it is stopped.
    fn measure_end(&mut self) {
        self.cpu_end = self.sample_cpu();
        self.hwm_kib = procs::status_kib(self.proc.pid, "VmHWM");
    }

    fn stop(&mut self, grace: Duration) {
        self.usage = self.proc.stop(Signal::SIGTERM, grace);
    }
}

/// A server process.
pub(crate) struct Server {
    pub d: Daemon,
    pub kind: Kind,
    pub port: u16,
    pub flows: usize,
}

/// A caching router process (`rdtp route`).
pub(crate) struct Router {
    pub d: Daemon,
    pub plan: RouterPlan,
    /// Its `--stats-json` file (written when it stops).
    pub stats_json: PathBuf,
}

/// A client process of the schedule.
pub(crate) struct FlowRun {
    pub inst: FlowInstance,
    proc: Option<Proc>,
    pub started: Option<f64>,
    pub ended: Option<f64>,
    pub usage: Option<Usage>,
    pub output: Option<PathBuf>,
    /// Seconds on a CPU and waiting on a run queue (threads summed) at the end of the run,
    /// for a client still running then (`procs::sched_seconds`).
    pub sched: Option<(f64, f64)>,
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
/// The rdtp server's and every router's UDP port.
pub(crate) const UDP_PORT: u16 = 7447;

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

/// What a run started: namespaces (server first) with their taps, servers, routers, the
/// emulator, pings and clients. [`Bed::teardown`] (also its Drop: on error, signal and panic)
/// stops the clients, pings, routers, servers and the emulator, then deletes the namespaces.
#[derive(Default)]
pub(crate) struct Bed {
    /// `rdtp-<pid>-srv`, then `rdtp-<pid>-c<i>` for every client namespace, then
    /// `rdtp-<pid>-rt-<node>` for every router.
    pub namespaces: Vec<String>,
    /// The emulator's label of each namespace's tap: server, client<i>, router_<node>.
    pub tap_labels: Vec<String>,
    /// How many of the namespaces are clients'.
    clients: usize,
    pub servers: Vec<Server>,
    /// In path order from the clients.
    pub routers: Vec<Router>,
    /// TCP server port per congestion control.
    tcp_ports: BTreeMap<String, u16>,
    /// The NDN producer's UDP port per object (one port for `rdtp serve`, one NDNts
    /// producer per object).
    ndn_ports: BTreeMap<String, u16>,
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
        let plans = routers::plan(&run.experiment.path, &ctx.prefix, server_addr())?;
        let mut tap_args = bed.create_namespaces(&ctx.prefix, layout.namespaces.len(), &plans, g.mtu, tcp_buffer)?;
        tap_args.extend(routers::emulator_arg(&plans, netns::TAP));
        bed.steer_receive(cpus)?;
        bed.start_servers(ctx, g, layout, !plans.is_empty(), serve_dir, cpus.server.as_deref())?;
        bed.start_routers(ctx, plans, g.socket_sample_interval, dir, cpus.clients.as_deref())?;
        bed.start_emulator(ctx, run, &tap_args, dir, cpus.emulator.as_deref())?;
        Ok(bed)
    }

    /// The server's, every client's and every router's namespace with its tap; returns the
    /// emulator's `--Taps` argument (server and clients).
    fn create_namespaces(
        &mut self,
        prefix: &str,
        clients: usize,
        routers: &[RouterPlan],
        mtu: u32,
        tcp_buffer: u64,
    ) -> Result<Vec<String>> {
        let mut taps = Vec::new();
        // (namespace, tap label, gateway, host, whether it is in --Taps)
        let hosts = std::iter::once(None).chain((0..clients).map(Some)).map(|client| {
            let (gw, host) = rdtp_scenario::network::subnet(client);
            let label = client.map_or("server".to_string(), |i| format!("client{i}"));
            (ns_name(prefix, client), label, gw, host, true)
        });
        let routers = routers.iter().map(|r| (r.ns.clone(), format!("router_{}", r.node), r.gateway, r.addr, false));
        self.clients = clients;
        for (ns, label, gw, host, in_taps) in hosts.chain(routers) {
            self.namespaces.push(ns.clone());
            netns::create(&ns, host, gw, mtu, tcp_buffer)?;
            if in_taps {
                taps.push(format!("{label}:{ns}/{}:{gw}/{}", netns::TAP, rdtp_scenario::network::PREFIX_LEN));
            }
            self.tap_labels.push(label);
            if procs::interrupted() {
                bail!(procs::INTERRUPTED_MSG);
            }
        }
        Ok(vec![format!("--Taps={}", taps.join(","))])
    }

    /// The client namespaces.
    fn client_namespaces(&self) -> &[String] {
        &self.namespaces[1..=self.clients]
    }

    /// The router namespaces, in path order from the clients.
    fn router_namespaces(&self) -> &[String] {
        &self.namespaces[1 + self.clients..]
    }

    /// Where rdtp clients send their requests: the router nearest them, else the server.
    fn rdtp_target(&self) -> Ipv4Addr {
        self.routers.first().map_or(server_addr(), |r| r.plan.addr)
    }

    /// Servers and routers (routers first: they stop before the servers).
    fn daemons(&mut self) -> impl Iterator<Item = &mut Daemon> {
        self.routers.iter_mut().map(|r| &mut r.d).chain(self.servers.iter_mut().map(|s| &mut s.d))
    }

    /// Receive steering: what the emulator writes into a tap is processed (softirq: the
    /// whole kernel TCP/UDP receive path, and for TCP the sending it clocks) on the host's
    /// CPUs instead of inside the emulator's write().
    fn steer_receive(&self, cpus: &Placement) -> Result<()> {
        if let Some(c) = &cpus.server {
            netns::set_rps(&self.namespaces[0], c)?;
        }
        if let Some(c) = &cpus.clients {
            // Clients and routers (a router is not the server side's cost).
            for ns in &self.namespaces[1..] {
                netns::set_rps(ns, c)?;
            }
        }
        Ok(())
    }

    /// rdtp over UDP if any rdtp flow or any router (answering NDN too if `rdtp` is the NDN
    /// producer and any flow is NDN), one TCP server per congestion control, one NDNts
    /// producer per object NDN flows fetch if `ndnts` is the NDN producer.
    fn start_servers(
        &mut self,
        ctx: &Context,
        g: &experiment::General,
        layout: &Layout,
        routers: bool,
        serve_dir: &Path,
        cpus: Option<&[usize]>,
    ) -> Result<()> {
        let srv_ns = self.namespaces[0].clone();
        let logs = &self.logs;
        let ndn_objects: Vec<&String> = layout.flows.iter().filter(|f| f.kind.is_ndn()).map(|f| &f.object).collect();
        // NDN Data are fragmented (NDNLPv2) to fit one IPv4 UDP datagram in the path MTU.
        let ndn = (!ndn_objects.is_empty()).then(|| Ndn { segment: g.ndn_segment, mtu: g.mtu - 28 });
        let rdtp_ndn = ndn.filter(|_| g.ndn_producer == "rdtp");
        if routers || rdtp_ndn.is_some() || layout.flows.iter().any(|f| f.kind == Kind::Rdtp) {
            self.servers.push(start_server(
                ctx,
                &srv_ns,
                serve_dir,
                Kind::Rdtp,
                None,
                UDP_PORT,
                &g.server_args,
                rdtp_ndn,
                logs,
                cpus,
            )?);
            if rdtp_ndn.is_some() {
                self.ndn_ports.extend(ndn_objects.iter().map(|o| ((*o).clone(), NDN_PORT)));
            }
        }
        if let Some(n) = ndn.filter(|_| g.ndn_producer == "ndnts") {
            let rig = ctx.tools.ndnts()?;
            for object in ndn_objects {
                if self.ndn_ports.contains_key(object) {
                    continue;
                }
                let port = NDN_PORT + self.ndn_ports.len() as u16;
                self.ndn_ports.insert(object.clone(), port);
                let label = format!("ndnts_producer_{}", self.ndn_ports.len() - 1);
                let mut cmd = Command::new("ip");
                cmd.args(["netns", "exec", &srv_ns, "node"]).arg(rig.join("producer.mjs"));
                cmd.args(["--prefix", &format!("{NDN_PREFIX}/{object}"), "--file"]).arg(serve_dir.join(object));
                cmd.args(["--listen", &format!("0.0.0.0:{port}"), "--segment-size", &n.segment.to_string()]);
                cmd.args(["--mtu", &n.mtu.to_string()]);
                // Its ready line ("ndnts-producer: serving … on HOST:PORT") is on stdout.
                let d = start_daemon(cmd, &label, Stream::Stdout, "ndnts-producer: serving", logs, cpus)?;
                self.servers.push(Server { d, kind: Kind::Ndnts, port, flows: 0 });
            }
        }
        for f in layout.flows.iter().filter(|f| f.kind == Kind::Tcp) {
            if !self.tcp_ports.contains_key(&f.cc) {
                let port = UDP_PORT + self.tcp_ports.len() as u16;
                self.tcp_ports.insert(f.cc.clone(), port);
                self.servers.push(start_server(
                    ctx,
                    &srv_ns,
                    serve_dir,
                    Kind::Tcp,
                    Some(&f.cc),
                    port,
                    &[],
                    None,
                    logs,
                    cpus,
                )?);
            }
        }
        for s in &mut self.servers {
            s.flows = layout
                .flows
                .iter()
                .filter(|f| match (s.kind, f.kind) {
                    (Kind::Rdtp, Kind::Rdtp) => true,
                    (Kind::Rdtp, Kind::Ndn | Kind::Ndnts) => rdtp_ndn.is_some(),
                    (Kind::Tcp, Kind::Tcp) => self.tcp_ports.get(&f.cc) == Some(&s.port),
                    (Kind::Ndnts, Kind::Ndn | Kind::Ndnts) => self.ndn_ports.get(&f.object) == Some(&s.port),
                    _ => false,
                })
                .count();
        }
        Ok(())
    }

    /// One `rdtp route` per router in its namespace, up to its "routing on" line: listening
    /// on the plan's address, forwarding to its upstream, its `--stats-json` in the run's
    /// directory (and a report every `stats_interval` seconds, if > 0).
    fn start_routers(
        &mut self,
        ctx: &Context,
        plans: Vec<RouterPlan>,
        stats_interval: f64,
        dir: &Path,
        cpus: Option<&[usize]>,
    ) -> Result<()> {
        for plan in plans {
            let label = format!("router_{}", plan.node);
            let stats_json = dir.join(format!("router-{}.json", plan.node));
            let mut args: Vec<String> = vec![
                "route".into(),
                "--listen".into(),
                format!("0.0.0.0:{UDP_PORT}"),
                "--upstream".into(),
                format!("{}:{UDP_PORT}", plan.upstream),
                "--stats-json".into(),
                stats_json.display().to_string(),
            ];
            if stats_interval > 0.0 {
                args.extend(["--stats-interval".to_string(), stats_interval.to_string()]);
            }
            args.extend(plan.args.iter().cloned());
            let mut cmd = Command::new("ip");
            cmd.args(["netns", "exec", &plan.ns]).arg(&ctx.tools.rdtp).args(&args);
            let d = start_daemon(cmd, &label, Stream::Stderr, "rdtp: routing on", &self.logs, cpus)?;
            self.routers.push(Router { d, plan, stats_json });
        }
        Ok(())
    }

    /// `rdtp-sim --emulate` between the taps (`tap_args`: `--Taps`, `--RouterTaps`), up to its
    /// READY line.
    fn start_emulator(
        &mut self,
        ctx: &Context,
        run: &Run,
        tap_args: &[String],
        dir: &Path,
        cpus: Option<&[usize]>,
    ) -> Result<()> {
        let g = &run.experiment.testbed;
        let logs = self.logs.clone();
        let _ = fs::remove_file(&self.window_file);
        let mut args = vec!["--emulate".to_string()];
        args.extend(tap_args.iter().cloned());
        args.extend([
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
        ]);
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
        // Every client reaches the server (and the router it fetches from), every router its upstream.
        let mut pairs: Vec<(&String, Ipv4Addr)> =
            self.client_namespaces().iter().map(|ns| (ns, server_addr())).collect();
        if !self.routers.is_empty() {
            let nearest = self.rdtp_target();
            pairs.extend(self.client_namespaces().iter().map(|ns| (ns, nearest)));
            pairs.extend(self.router_namespaces().iter().zip(&self.routers).map(|(ns, r)| (ns, r.plan.upstream)));
        }
        warm_up(&pairs)?;
        let mut taps_before = Vec::new();
        for ns in &self.namespaces {
            taps_before.push(netns::tap_stats(ns)?);
        }
        let t0 = Instant::now();
        let t0_unix = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
        let offset = (t0 - ready).as_secs_f64();
        if g.ping {
            let logs = &self.logs;
            for (i, ns) in self.client_namespaces().to_vec().iter().enumerate() {
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
        for d in self.daemons() {
            d.measure_end();
        }
        for f in self.flows.iter_mut() {
            if let Some(p) = &mut f.proc
                && f.usage.is_none()
            {
                f.sched = procs::sched_seconds(p.pid);
                f.usage = Some(p.stop(Signal::SIGTERM, Duration::from_secs(2)));
                f.ended = Some(at);
            }
        }
        for p in &mut self.pings {
            p.stop(Signal::SIGINT, Duration::from_secs(2));
        }
        let mut tap_delta = Vec::new();
        for (ns, before) in self.namespaces.iter().zip(&clock.taps_before) {
            tap_delta.push(netns::tap_stats(ns)?.since(before));
        }
        // Routers first (they write their --stats-json when they stop), then the servers.
        for d in self.daemons() {
            d.stop(Duration::from_secs(5));
        }
        fs::write(&self.window_file, format!("{} {}\n", g.warmup + clock.offset, at + clock.offset))?;
        let emulator = self.emulator.as_mut().map(|p| p.stop(Signal::SIGTERM, Duration::from_secs(30)));
        self.teardown()?;
        let left = netns::list(&format!("{}-", ctx.prefix));
        if !left.is_empty() {
            bail!("namespaces left after teardown: {}", left.join(", "));
        }
        let server_cpus = cpus.server.as_ref().map_or(1, |c| c.len());
        Ok(End { at, sys, server_cores, server_cpus, tap_delta, emulator })
    }

    /// Stop whatever still runs (clients, pings, routers, servers, the emulator: SIGTERM, then
    /// SIGKILL), then delete the namespaces (with their taps).
    fn teardown(&mut self) -> Result<()> {
        for f in &mut self.flows {
            if let Some(p) = &mut f.proc {
                p.stop(Signal::SIGTERM, Duration::from_secs(2));
            }
        }
        for p in &mut self.pings {
            p.stop(Signal::SIGTERM, Duration::from_secs(2));
        }
        for d in self.daemons() {
            d.proc.stop(Signal::SIGTERM, Duration::from_secs(2));
        }
        if let Some(e) = &mut self.emulator {
            e.stop(Signal::SIGTERM, Duration::from_secs(30));
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
/// start, SIGTERM it at its stop, reap what exits; sample server and router CPU at warm-up
/// and RSS and TCP socket memory every `socket_sample_interval`.
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
        .map(|f| FlowRun {
            inst: f.clone(),
            proc: None,
            started: None,
            ended: None,
            usage: None,
            output: None,
            sched: None,
        })
        .collect();
    let mut during = During::default();
    let mut next_sample = g.warmup;
    let mut cpu_warmup_taken = false;
    let rdtp_to = bed.rdtp_target();
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
                let (proc, output) = start_flow(
                    ctx,
                    g,
                    &f.inst,
                    &bed.namespaces,
                    rdtp_to,
                    (&bed.tcp_ports, &bed.ndn_ports),
                    dir,
                    &logs,
                    cpus.clients.as_deref(),
                )?;
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
                    p.signal(Signal::SIGTERM);
                }
            }
        }
        if !cpu_warmup_taken && now >= g.warmup {
            cpu_warmup_taken = true;
            during.sys_warmup = procs::system_cpu();
            during.server_cores_warmup = cpus.server.as_deref().and_then(|c| procs::system_cpu_of(Some(c)));
            for d in bed.daemons() {
                d.cpu_warmup = d.sample_cpu();
            }
        }
        if g.socket_sample_interval > 0.0 && now >= next_sample {
            next_sample += g.socket_sample_interval;
            for d in bed.daemons() {
                d.sample_rss();
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

/// What an NDN producer publishes: segments of this size, in datagrams of at most `mtu`.
#[derive(Clone, Copy, Debug)]
struct Ndn {
    segment: u32,
    mtu: u32,
}

/// The NDN producer's port (NDN's 6363), and the next ones for more NDNts producers.
pub(crate) const NDN_PORT: u16 = 6363;
/// The NDN name prefix under which the producer publishes the run's objects.
pub(crate) const NDN_PREFIX: &str = "/testbed";

#[allow(clippy::too_many_arguments)]
fn start_server(
    ctx: &Context,
    ns: &str,
    serve_dir: &Path,
    kind: Kind,
    cc: Option<&str>,
    port: u16,
    more: &[String],
    ndn: Option<Ndn>,
    logs: &Path,
    cpus: Option<&[usize]>,
) -> Result<Server> {
    let label = match (kind, cc) {
        (Kind::Tcp, Some(c)) => format!("tcp_{c}_server"),
        (Kind::Tcp, None) => "tcp_server".to_string(),
        _ => "rdtp_server".to_string(),
    };
    let mut args =
        vec!["serve".to_string(), serve_dir.display().to_string(), "--listen".into(), format!("0.0.0.0:{port}")];
    if kind == Kind::Tcp {
        args.push("--tcp".into());
        if let Some(c) = cc {
            args.extend(["--tcp-cc".to_string(), c.to_string()]);
        }
    } else {
        // One serving thread per CPU it may use (one where unpinned, as the TCP baseline's
        // single event loop and seed 000's server): CPU time is what is compared.
        args.extend(["--workers".to_string(), cpus.map_or(1, <[usize]>::len).max(1).to_string()]);
    }
    args.extend(more.iter().cloned());
    if let Some(n) = ndn {
        // The testbed's namespaces are private addresses, which --ndn-allow admits by default.
        args.extend(["--ndn-listen".to_string(), format!("0.0.0.0:{NDN_PORT}"), "--ndn-prefix".into()]);
        args.extend([NDN_PREFIX.to_string(), "--ndn-segment-size".into(), n.segment.to_string()]);
        args.extend(["--ndn-mtu".to_string(), n.mtu.to_string()]);
    }
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns]).arg(&ctx.tools.rdtp).args(&args);
    let d = start_daemon(cmd, &label, Stream::Stderr, "rdtp: serving", logs, cpus)?;
    Ok(Server { d, kind, port, flows: 0 })
}

/// Where a daemon says it is ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

/// `cmd` (an `ip netns exec NS …`) with that stream in logs/LABEL.log, up to the line
/// starting with `ready`; its idle RSS then.
fn start_daemon(
    mut cmd: Command,
    label: &str,
    stream: Stream,
    ready: &str,
    logs: &Path,
    cpus: Option<&[usize]>,
) -> Result<Daemon> {
    let log = || log_file(logs, &format!("{label}.err"));
    match stream {
        Stream::Stderr => cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()),
        Stream::Stdout => cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::from(log()?)),
    };
    // If anything below fails, dropping `proc` stops the process.
    let mut proc = procs::spawn_on(label, &mut cmd, cpus, None)?;
    let lines = match stream {
        Stream::Stderr => {
            let stderr = proc.take_stderr().with_context(|| format!("no {label} stderr"))?;
            procs::forward_lines(stderr, &logs.join(format!("{label}.log")))?
        }
        Stream::Stdout => {
            let stdout = proc.take_stdout().with_context(|| format!("no {label} stdout"))?;
            procs::forward_lines(stdout, &logs.join(format!("{label}.log")))?
        }
    };
    procs::wait_line(&lines, Duration::from_secs(600), &format!("{label} to listen"), |l| {
        l.starts_with(ready).then_some(())
    })
    .map_err(|e| anyhow!("{e:#} (see logs/{label}.log)"))?;
    Ok(Daemon {
        label: label.to_string(),
        idle_rss_kib: procs::status_kib(proc.pid, "VmRSS"),
        proc,
        cpu_warmup: None,
        cpu_end: None,
        hwm_kib: None,
        rss_samples: Vec::new(),
        usage: Usage::default(),
    })
}

/// Ping until every namespace reached its address (ARP both ways), for up to 10 s.
fn warm_up(pairs: &[(&String, Ipv4Addr)]) -> Result<()> {
    let mut pending: Vec<(&String, Ipv4Addr)> = pairs.to_vec();
    for _ in 0..10 {
        if pending.is_empty() {
            return Ok(());
        }
        let mut procs = Vec::new();
        for &(ns, to) in &pending {
            let mut cmd = Command::new("ip");
            cmd.args(["netns", "exec", ns, "ping", "-c", "1", "-W", "1", "-n", "-q"])
                .arg(to.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            procs.push(((ns, to), procs::spawn("warm-up ping", &mut cmd)?));
        }
        let mut failed = Vec::new();
        for (pair, mut p) in procs {
            let u = p.reap(true).unwrap_or_default();
            if u.exit_code() != Some(0) {
                failed.push(pair);
            }
        }
        pending = failed;
        procs::sleep(Duration::from_millis(200))?;
    }
    if pending.is_empty() {
        Ok(())
    } else {
        let server = server_addr();
        if pending.iter().all(|&(_, to)| to == server) {
            let from: Vec<&str> = pending.iter().map(|(ns, _)| ns.as_str()).collect();
            bail!("the server is unreachable through the emulator from {} (ping failed for 10 s)", from.join(", "));
        }
        let pairs: Vec<String> = pending.iter().map(|(ns, to)| format!("{to} from {ns}")).collect();
        Err(anyhow!("unreachable through the emulator: {} (ping failed for 10 s)", pairs.join(", ")))
    }
}

#[allow(clippy::too_many_arguments)]
fn start_flow(
    ctx: &Context,
    g: &experiment::General,
    f: &FlowInstance,
    all_ns: &[String],
    rdtp_to: Ipv4Addr,
    (tcp_ports, ndn_ports): (&BTreeMap<String, u16>, &BTreeMap<String, u16>),
    dir: &Path,
    logs: &Path,
    cpus: Option<&[usize]>,
) -> Result<(Proc, Option<PathBuf>)> {
    let ns = &all_ns[f.ns + 1];
    let output = if f.save { Some(dir.join(format!("flow-{}.bin", f.index))) } else { None };
    let out_arg = output.as_ref().map_or("/dev/null".to_string(), |p| p.display().to_string());
    let ndn_at = || {
        let port = ndn_ports.get(&f.object).copied().unwrap_or(NDN_PORT);
        (format!("{}:{port}", server_addr()), format!("{NDN_PREFIX}/{}", f.object))
    };
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns]);
    if f.kind == Kind::Ndnts {
        // NDNts's consumer: RDR discovery, its own window; one JSON line on stdout.
        let (addr, name) = ndn_at();
        cmd.arg("node").arg(ctx.tools.ndnts()?.join("consumer.mjs"));
        cmd.args(["--connect", &addr, "--name", &name, "--json"]);
        if output.is_some() {
            cmd.args(["-o", &out_arg]);
        }
    } else {
        cmd.arg(&ctx.tools.rdtp).arg("fetch");
        match f.kind {
            Kind::Rdtp => {
                cmd.arg(format!("{rdtp_to}:{UDP_PORT}")).arg(&f.object);
                cmd.args(["--cc", &f.cc]).arg("--mtu").arg(g.mtu.to_string());
            }
            Kind::Ndn => {
                let (addr, name) = ndn_at();
                cmd.arg("--ndn").arg(addr).arg(name).args(["--cc", &f.cc]);
            }
            _ => {
                let port = tcp_ports.get(&f.cc).copied().unwrap_or(UDP_PORT);
                cmd.arg(format!("{}:{port}", server_addr())).arg(&f.object).arg("--tcp");
            }
        }
        cmd.args(["-o", &out_arg, "--json", "-q"]);
        for a in flow_extra_args(f, logs) {
            cmd.arg(a);
        }
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
