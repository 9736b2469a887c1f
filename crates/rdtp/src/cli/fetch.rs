//! `rdtp fetch ADDR NAME|EID` — the ndnget of rdtp; `rdtp fetch --ndn ADDR NAME` fetches a
//! segmented object from an NDN node with the same receiver ([`rdtp_proto::ndn::Consumer`]).
//!
//! Content goes to stdout (or `-o FILE`), everything else to stderr. At the end, unless
//! `-q`, ndnget's summary goes to stderr. With `--json` the summary is one JSON object
//! instead: on stdout when the content goes to a file (`-o FILE`, including
//! `-o /dev/null`), on stderr when the content goes to stdout.
//!
//! `-o FILE` is written under a temporary name in FILE's directory and renamed to FILE once
//! the whole object matched its EID ([`rdtp::output`]); on failure, SIGINT or SIGTERM the
//! temporary file is removed and FILE is left as it was (exit 130 or 143 for the signals).

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use rdtp::args::{parse_addr, parse_fetch_target, parse_server};
use rdtp::error::{EXIT_OK, Error, Result};
use rdtp::interval::{Format, Reporter};
use rdtp::output::Output;
use rdtp::signals;
use rdtp::socket;
use rdtp::{Fetch, Target};
use rdtp_proto::cc::fixed::FixedConfig;
use rdtp_proto::cc::{CcConfig, registry};
use rdtp_proto::wire::DATA_HEADER_LEN;

use super::{Sink, cc_config, cc_spec, copy_object, progress_bar, to_stderr, to_stdout};

#[derive(clap::Args, Debug)]
#[command(after_help = concat!(
    "A 64-digit hexadecimal NAME|EID is an EID; anything else is a name. \
     -o FILE is written under a temporary name in FILE's directory and renamed to FILE only \
     once the whole object matched its EID: on failure, Ctrl-C (SIGINT) or SIGTERM the \
     temporary file is removed and FILE is left as it was.\n\n",
    exit_codes_help!()
))]
pub struct Args {
    /// Server address: host:port, host (port 7447), [v6addr]:port.
    #[arg(value_name = "ADDR")]
    pub server: String,
    /// Object name (1 to 1024 bytes; others are refused before sending), or its EID (64
    /// hex digits).
    #[arg(value_name = "NAME|EID")]
    pub target: String,
    /// Write the content to FILE instead of stdout (`-` = stdout); FILE appears only once
    /// the object is complete and verified.
    #[arg(short, long, value_name = "FILE", default_value = "-")]
    pub output: String,
    /// Congestion controller: NAME[:KEY=VALUE,...], e.g. bbr, bbrp:probe_gain=2,
    /// fixed:window=32; `--cc help` lists every controller with its keys. Default: bbr3-rdtp
    /// (docs/CONTROLLER.md), or the controller an option below belongs to (--window: fixed;
    /// --aimd-step/--aimd-beta: aimd; --cubic-beta: cubic; --probe-gain: bbr).
    #[arg(long, value_name = "SPEC", value_parser = cc_spec)]
    pub cc: Option<String>,
    /// Deprecated (removed in the next release): give `--cc fixed:window=N`. Window in units
    /// of `--cc fixed` (default 64): short for `--cc fixed:window=N`, so without --cc it
    /// selects fixed. A fixed window has no congestion control: one larger
    /// than the receive window lets be in flight or than the receiver's socket buffer holds
    /// (5 698 units of 1402 bytes) is cut to that, with a warning — the excess would be
    /// dropped and asked for again.
    #[arg(long, value_name = "N")]
    pub window: Option<u32>,
    /// Deprecated (removed in the next release): give `--cc bbrp:probe_gain=G`. Pacing gain
    /// of BBR's probing ProbeBW phase (bbr: 1.25, bbrp: 1.5; BBRp's bbrp_pace 8 is 2); short
    /// for the key probe_gain=G.
    #[arg(long, value_name = "G")]
    pub probe_gain: Option<f64>,
    /// Initial window in units, as ndnget's --init-cwnd: short for the key init_cwnd of the
    /// controller (aimd, cubic, sirc, bbr-cd, the bbr family).
    #[arg(long, value_name = "N")]
    pub init_cwnd: Option<f64>,
    /// Additive increase of `--cc aimd` (ndnget --aimd-step; the key step; without --cc it
    /// selects aimd).
    #[arg(long, value_name = "X")]
    pub aimd_step: Option<f64>,
    /// Multiplicative decrease of `--cc aimd` (ndnget --aimd-beta; the key beta; without
    /// --cc it selects aimd).
    #[arg(long, value_name = "X")]
    pub aimd_beta: Option<f64>,
    /// Multiplicative decrease of `--cc cubic` (ndnget --cubic-beta; the key beta; without
    /// --cc it selects cubic).
    #[arg(long, value_name = "X")]
    pub cubic_beta: Option<f64>,
    /// Link MTU; the unit is sized to fit it (default 1500).
    #[arg(long, value_name = "N", conflicts_with = "unit")]
    pub mtu: Option<usize>,
    /// Payload bytes per Data packet (instead of deriving it from --mtu); the key unit.
    #[arg(long, value_name = "N")]
    pub unit: Option<u16>,
    /// Out-of-order arrivals that declare a unit lost; the key reorder_threshold.
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub reorder_threshold: u32,
    /// Minimum retransmission timeout, in milliseconds; the key rto_min.
    #[arg(long, value_name = "MS", default_value_t = 200)]
    pub min_rto: u64,
    /// Maximum retransmission timeout, in milliseconds; the key rto_max.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub max_rto: u64,
    /// RTTVAR multiplier K of the retransmission timeout SRTT + K·RTTVAR (ndnget: 8); the
    /// key rto_k.
    #[arg(long, value_name = "K", default_value_t = 4)]
    pub rto_k: u32,
    /// Give up after this many seconds without an answer from the server; the key
    /// idle_timeout.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub timeout: f64,
    /// Receive window: most bytes requested but not yet written (e.g. 64MiB); the key
    /// recv_window.
    #[arg(long, value_name = "SIZE")]
    pub recv_window: Option<String>,
    /// Seed of the receiver's randomness (default: random; give one to repeat a run); the
    /// key seed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Receiver options as one spec, KEY=VALUE[,...] (e.g. rto_k=8,idle_timeout=30s,
    /// max_inflight=100); `--receiver help` lists every key with its default. The options
    /// above are short for keys of it; this spec is applied after them, and --set after it.
    #[arg(long, value_name = "SPEC", value_parser = super::receiver_spec)]
    pub receiver: Option<String>,
    /// One receiver key, KEY=VALUE (repeatable, applied last in the order given); the keys
    /// are those of --receiver.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = super::key_value)]
    pub set: Vec<String>,
    /// Write the congestion window log (ndnget TSV: time, cwndsize) to FILE.
    #[arg(long, value_name = "FILE")]
    pub log_cwnd: Option<PathBuf>,
    /// Write the RTT log (ndnget TSV: segment, rtt, rttvar, srtt, rto in ms) to FILE.
    #[arg(long, value_name = "FILE")]
    pub log_rtt: Option<PathBuf>,
    /// Print ndnget-style progress lines (resolution, every RTT sample) to stderr.
    #[arg(short, long)]
    pub verbose: bool,
    /// Print nothing but errors.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print the statistics as one JSON object (stdout if -o FILE, else stderr).
    #[arg(long)]
    pub json: bool,
    /// Informed start (Hiorth and Welzl): start the controller at this rate instead of probing for
    /// it (BBR: bandwidth seeded, straight to ProbeBW; aimd: rate × RTT window). A rate such
    /// as 20Mbps, or `auto`: the rate predicted from what --wifi-pcap or --wifi-iface
    /// overheard (normal start when they give no estimate).
    #[arg(long, value_name = "auto|RATE")]
    pub initial_rate: Option<String>,
    /// With --initial-rate auto: a radiotap capture of the WiFi medium (its last window).
    #[arg(long, value_name = "FILE", conflicts_with = "wifi_iface")]
    pub wifi_pcap: Option<PathBuf>,
    /// With --initial-rate auto: a monitor interface to listen on first (`live` build).
    #[arg(long, value_name = "IFACE")]
    pub wifi_iface: Option<String>,
    /// How long to listen on --wifi-iface before fetching, seconds.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub wifi_listen: f64,
    /// With --initial-rate auto: the PHY rate the AP sends to this host at, Mbit/s (default:
    /// the active stations' mean).
    #[arg(long, value_name = "MBPS")]
    pub phy_rate: Option<f64>,
    /// With --initial-rate auto: a newcomer-rate model file (default: the built-in one).
    #[arg(long, value_name = "FILE")]
    pub wifi_model: Option<PathBuf>,
    /// Report every SECS seconds on stderr, as iperf3 and hiperf do (Interval[ms],
    /// Transfer[MB], Bandwidth[Mbps], Retr, Cwnd, AvgRtt[ms], Cached[%]); with --json, one
    /// JSON object per interval ("event":"interval") where the JSON summary goes.
    #[arg(long, value_name = "SECS", value_parser = interval_secs)]
    pub interval: Option<Duration>,
    /// Fetch over kernel TCP from `rdtp serve --tcp` (comparison baseline, not rdtp; the
    /// server's --tcp-cc controls it; the content is still checked against its EID).
    #[arg(long, conflicts_with_all = [
        "window", "probe_gain", "init_cwnd", "aimd_step", "aimd_beta", "cubic_beta", "mtu", "unit", "recv_window",
        "log_cwnd", "log_rtt", "initial_rate", "interval", "receiver", "set",
    ])]
    pub tcp: bool,
    /// Fetch from an NDN node (NDN packet format 0.3 over UDP, NDNLPv2): ADDR is a producer's
    /// or forwarder's UDP face (port 6363 unless given), NAME an NDN name (`/example/file`,
    /// typed components as `v=7`), fetched as a segmented object (`NAME/v=<version>/seg=<n>`,
    /// version by RDR unless NAME ends in one) with the same receiver and controllers; the
    /// unit is the segment size. Segments must carry a valid DigestSha256; others (signed)
    /// are counted unverified in the summary.
    #[arg(long, conflicts_with_all = ["tcp", "mtu", "unit", "initial_rate"])]
    pub ndn: bool,
    /// With --ndn: the local address to send from, IP:PORT (an NFD unicast UDP face expects
    /// its peer at a fixed address).
    #[arg(long, value_name = "LOCAL", requires = "ndn")]
    pub bind: Option<String>,
    /// With --ndn: accept only segments signed by the key of this NDN certificate (Ed25519
    /// or ECDSA P-256; the certificate as a Data TLV, or base64 as `ndnsec cert-dump` prints
    /// it); others are dropped, never written. Without it, signed segments are taken and
    /// reported unverified.
    #[arg(long, value_name = "CERT", requires = "ndn")]
    pub trust_anchor: Option<PathBuf>,
}

/// The controller spec: `--cc`, or when it is not given the one controller the options
/// name (`--window`: fixed, as `--window N` is short for `--cc fixed:window=N`;
/// `--aimd-step`/`--aimd-beta`: aimd; `--cubic-beta`: cubic; `--probe-gain`: bbr), else the
/// receivers' default ([`registry::DEFAULT`]). Options of two controllers without `--cc` are
/// a usage error.
fn controller_spec(a: &Args) -> Result<String> {
    if let Some(cc) = &a.cc {
        return Ok(cc.clone());
    }
    let implied: Vec<(&str, &str)> = [
        (a.window.is_some(), "fixed", "--window"),
        (a.aimd_step.is_some() || a.aimd_beta.is_some(), "aimd", "--aimd-step/--aimd-beta"),
        (a.cubic_beta.is_some(), "cubic", "--cubic-beta"),
        (a.probe_gain.is_some(), "bbr", "--probe-gain"),
    ]
    .into_iter()
    .filter(|(given, ..)| *given)
    .map(|(_, cc, option)| (cc, option))
    .collect();
    match implied[..] {
        [] => Ok(registry::DEFAULT.to_string()),
        [(cc, _)] => Ok(cc.to_string()),
        _ => {
            let names: Vec<String> = implied.iter().map(|(cc, option)| format!("{option} ({cc})")).collect();
            Err(Error::Usage(format!(
                "{} are options of different controllers: give one, or --cc",
                names.join(" and ")
            )))
        }
    }
}

/// A fixed window larger than a fetch can use is cut to what it can, with a warning saying
/// why: no more than the receive window lets be in flight, and no more than the receiver's
/// socket buffer holds — a fixed window has no congestion control, so whatever arrives
/// while that buffer is full is dropped and asked for again. Measured on loopback with
/// 0036bef (60 MB, `--cc fixed`): 0 re-requests up to 6 000 units, 4.7 % at 10 000, 34 % at
/// 16 000, 58 % at 4 294 967 295; cut to 5 698, none.
fn useful_window(cc: CcConfig, unit: u16, recv_window: u64) -> (CcConfig, Option<String>) {
    let Some(f) = cc.get::<FixedConfig>() else { return (cc, None) };
    let window = u64::from(f.window);
    // The receiver never has more than the receive window requested and unread
    // (`Receiver`, at least two 16 KiB blocks).
    let recv_window = recv_window.max(2 * rdtp_proto::tree::BLOCK_LEN);
    let in_flight = recv_window / u64::from(unit);
    // What the receiver's socket buffer holds while the receiver is busy.
    let buffered = socket::SOCKET_BUFFER as u64 / (u64::from(unit) + DATA_HEADER_LEN as u64);
    let most = in_flight.min(buffered).max(1);
    if window <= most {
        return (cc, None);
    }
    let why = if in_flight <= buffered {
        format!(
            "the receive window ({recv_window} bytes, --recv-window) lets no more units of {unit} bytes be in flight"
        )
    } else {
        format!(
            "a fixed window has no congestion control, and more Data of {unit} bytes than the receiver's {} MiB \
             socket buffer holds are dropped whenever it falls behind, then asked for again",
            socket::SOCKET_BUFFER >> 20
        )
    };
    let used = FixedConfig { window: most as u32 };
    (CcConfig::new(used), Some(format!("--window {window} cut to {most} units: {why}")))
}

/// ndnget's pipeline options as keys of the spec: `--init-cwnd` is any controller's
/// `init_cwnd`, `--aimd-step`/`--aimd-beta` are aimd's `step`/`beta` and `--cubic-beta` is
/// cubic's `beta` (refused with other controllers, so `--aimd-beta` never sets cubic's beta).
fn ndnget_options(
    spec: &str,
    init_cwnd: Option<f64>,
    aimd_step: Option<f64>,
    aimd_beta: Option<f64>,
    cubic_beta: Option<f64>,
) -> Result<String> {
    let name = spec.split(':').next().unwrap_or(spec);
    let mut out = spec.to_string();
    let mut add = |key: &str, v: Option<f64>, only: Option<(&str, &str)>| -> Result<()> {
        let Some(v) = v else { return Ok(()) };
        if let Some((cc, option)) = only
            && name != cc
        {
            return Err(Error::Usage(format!("{option} is for --cc {cc}, not {name}")));
        }
        out.push(if out.contains(':') { ',' } else { ':' });
        out.push_str(&format!("{key}={v}"));
        Ok(())
    };
    add("init_cwnd", init_cwnd, None)?;
    add("step", aimd_step, Some(("aimd", "--aimd-step")))?;
    add("beta", aimd_beta, Some(("aimd", "--aimd-beta")))?;
    add("beta", cubic_beta, Some(("cubic", "--cubic-beta")))?;
    Ok(out)
}

/// `--initial-rate`: payload bytes/s, or `None` for the normal start (no option, or `auto`
/// without an estimate, which is said on stderr unless -q).
fn initial_rate(a: &Args) -> Result<Option<f64>> {
    let Some(text) = a.initial_rate.as_deref() else {
        if a.wifi_pcap.is_some() || a.wifi_iface.is_some() {
            return Err(Error::Usage("--wifi-pcap/--wifi-iface are for --initial-rate auto".into()));
        }
        return Ok(None);
    };
    if text != "auto" {
        let bps = rdtp_units::parse_rate(text)
            .ok()
            .filter(|r| *r > 0.0)
            .ok_or_else(|| Error::Usage(format!("--initial-rate {text}: want auto or a rate such as 20Mbps")))?;
        return Ok(Some(bps / 8.0));
    }
    if a.wifi_pcap.is_none() && a.wifi_iface.is_none() {
        return Err(Error::Usage(
            "--initial-rate auto listens to WiFi: give --wifi-pcap FILE or --wifi-iface IFACE".into(),
        ));
    }
    let wifi = super::wifi::ListenArgs {
        window: 1.0,
        min_active: 0.5,
        phy_rate: a.phy_rate,
        model: a.wifi_model.clone(),
        ignore: None,
    };
    let model = wifi.model()?;
    let (_, snap) = super::wifi::listen(
        a.wifi_pcap.as_ref(),
        a.wifi_iface.as_deref(),
        a.wifi_listen,
        wifi.config()?,
        None,
        |_, _| {},
    )?;
    let rate = rdtp::wifi::informed_rate(&snap, &model, wifi.newcomer_bps());
    if !a.quiet {
        let msg = match rate {
            Some(r) => format!(
                "Informed start: {} active station(s), {:.2} Mbit/s in total; starting at {:.2} Mbit/s\n",
                snap.n_active(),
                snap.total_bps() / 1e6,
                r / 1e6
            ),
            None => "Informed start: no WiFi estimate (no active station overheard); normal start\n".to_string(),
        };
        to_stderr(&msg);
    }
    Ok(rate.map(|r| r / 8.0))
}

/// The receiver specs of the command line, in the order they apply, each with the option it
/// came from: the options that are short for keys (`--rto-k` is `rto_k`, `--timeout` is
/// `idle_timeout`, …), then `--receiver SPEC`, then each `--set KEY=VALUE`.
fn receiver_specs(a: &Args) -> Vec<(String, String)> {
    let mut keys = vec![
        format!("reorder_threshold={}", a.reorder_threshold),
        format!("rto_min={}ms", a.min_rto),
        format!("rto_max={}ms", a.max_rto),
        format!("rto_k={}", a.rto_k),
        format!("idle_timeout={}", rdtp_units::format_duration(Duration::from_secs_f64(a.timeout))),
    ];
    keys.extend(a.recv_window.as_ref().map(|w| format!("recv_window={w}")));
    keys.extend(a.seed.map(|s| format!("seed={s}")));
    keys.extend(a.unit.map(|u| format!("unit={u}")));
    let mut specs = vec![("the receiver options".to_string(), keys.join(","))];
    specs.extend(a.receiver.iter().map(|r| (format!("--receiver {r}"), r.clone())));
    specs.extend(a.set.iter().map(|kv| (format!("--set {kv}"), kv.clone())));
    specs
}

/// `--interval SECS`: a positive number of seconds, at least a millisecond.
fn interval_secs(text: &str) -> std::result::Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.001 => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!("'{text}' is not a number of seconds ≥ 0.001")),
    }
}

fn log_file(path: &PathBuf) -> Result<File> {
    File::create(path).map_err(|e| Error::io(format!("cannot open log file {}", path.display()), e))
}

pub fn run(a: Args) -> Result<i32> {
    if a.tcp {
        return super::tcp::fetch(&a);
    }
    let Configured { mut fetch, server, target, spec, unit } = configure(&a)?;

    let to_stdout_content = a.output == "-";
    // From here on SIGINT/SIGTERM end the fetch (exit 130/143) through the driver, which
    // waits with them unblocked, so the temporary output file is always removed.
    let (stop, _blocked) = stop_signals()?;
    fetch = fetch.stop_on_signals(stop);
    let mut out = Output::open(&a.output)?;

    if a.verbose {
        let what = describe(&target);
        match a.ndn {
            true => to_stderr(&format!("Fetching NDN name {} from {server} (cc {spec})\n", a.target)),
            false => to_stderr(&format!("Fetching {what} from {server} (cc {spec}, unit {unit} bytes)\n")),
        }
    }
    let bar = progress_bar(!a.quiet && !a.verbose && a.interval.is_none());
    let result = fetch.start().map(|mut reader| {
        // Interval lines go to stderr; JSON ones where the JSON summary goes.
        let reporter = a.interval.map(|every| {
            let (format, out): (Format, Box<dyn Write + Send>) = match (a.json, to_stdout_content) {
                (false, _) => (Format::Text, Box::new(io::stderr())),
                (true, true) => (Format::Json, Box::new(io::stderr())),
                (true, false) => (Format::Json, Box::new(io::stdout())),
            };
            Reporter::start(reader.monitor(), every, format, out)
        });
        let copied = copy_object(&mut reader, Sink::Write(out.writer()), bar.as_ref());
        if let Some(r) = reporter {
            r.finish();
        }
        (reader, copied)
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    // On any failure the output is dropped, which removes its temporary file.
    let (reader, copied) = result?;
    let summary = reader.summary();
    drop(reader);
    let done = copied.and_then(|_| out.finish());
    if a.json {
        let line = format!("{}\n", summary.to_json());
        if to_stdout_content { to_stderr(&line) } else { to_stdout(&line)? }
    }
    done?;
    if !a.quiet && !a.json {
        to_stderr(&summary.to_text());
    }
    Ok(EXIT_OK)
}

/// The trust anchor in the certificate file at `path`: a Data TLV, or its base64 (with line
/// breaks) as `ndnsec cert-dump` prints it.
fn trust_anchor(path: &PathBuf) -> Result<rdtp_proto::ndn::trust::TrustAnchor> {
    use base64::Engine as _;
    let bad = |what: String| Error::Usage(format!("--trust-anchor {}: {what}", path.display()));
    let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let wire = match bytes.first() {
        Some(0x06) => bytes,
        _ => {
            let text: Vec<u8> = bytes.into_iter().filter(|b| !b.is_ascii_whitespace()).collect();
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|_| bad("neither an NDN certificate (a Data TLV) nor its base64".into()))?
        }
    };
    rdtp_proto::ndn::trust::TrustAnchor::from_certificate(&wire).map_err(|e| bad(e.to_string()))
}

/// A fetch configured from the command line, and what the verbose line names.
struct Configured {
    fetch: Fetch,
    server: std::net::SocketAddr,
    target: Target,
    spec: String,
    unit: u16,
}

/// Parse and check the options and build the fetch (usage errors before anything starts).
fn configure(a: &Args) -> Result<Configured> {
    let server =
        if a.ndn { parse_addr(&a.server, rdtp_proto::ndn::consumer::DEFAULT_PORT)? } else { parse_server(&a.server)? };
    let ndn_name = match a.ndn {
        true => Some(
            a.target
                .parse::<rdtp_proto::ndn::Name>()
                .map_err(|e| Error::Usage(format!("{:?} is not an NDN name: {e}", a.target)))?,
        ),
        false => None,
    };
    let target = match a.ndn {
        true => Target::Name(a.target.clone()),
        false => parse_fetch_target(&a.target)?,
    };
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        return Err(Error::Usage("--timeout must be a positive number of seconds".into()));
    }
    let spec = controller_spec(a)?;
    let cc = ndnget_options(&spec, a.init_cwnd, a.aimd_step, a.aimd_beta, a.cubic_beta)?;
    if let Some(w) = rdtp_proto::cc::spec::legacy_warning(&cc, a.window, a.probe_gain, ["--window", "--probe-gain"])
        && !a.quiet
    {
        to_stderr(&format!("rdtp: warning: {w}\n"));
    }
    let cc = cc_config(&cc, a.window, a.probe_gain)?;
    let mut fetch = match ndn_name {
        Some(name) => Fetch::ndn(server, name),
        None => Fetch::new(server, target.clone()),
    };
    if let Some(b) = &a.bind {
        let local = b.parse().map_err(|_| Error::Usage(format!("--bind {b}: want IP:PORT")))?;
        fetch = fetch.bind(local);
    }
    if let Some(path) = &a.trust_anchor {
        fetch = fetch.trust_anchor(trust_anchor(path)?);
    }
    if let Some(m) = a.mtu {
        fetch = fetch.mtu(m);
    }
    for (option, spec) in receiver_specs(a) {
        fetch = fetch.spec(&spec).map_err(|e| Error::Usage(format!("{option}: {e}")))?;
    }
    if let Some(rate) = initial_rate(a)? {
        fetch = fetch.initial_rate(rate);
    }
    let unit = fetch.effective_unit()?;
    let (cc, warning) = useful_window(cc, unit, fetch.receiver_config().recv_window);
    if let Some(w) = warning
        && !a.quiet
    {
        to_stderr(&format!("rdtp: warning: {w}\n"));
    }
    fetch = fetch.cc(cc);
    if let Some(p) = &a.log_cwnd {
        fetch = fetch.log_cwnd(log_file(p)?);
    }
    if let Some(p) = &a.log_rtt {
        fetch = fetch.log_rtt(log_file(p)?);
    }
    if a.verbose {
        fetch = fetch.verbose(io::stderr());
    }
    Ok(Configured { fetch, server, target, spec, unit })
}

/// SIGINT and SIGTERM raise the returned flag instead of killing the process, and are
/// blocked in this thread (and the threads it starts) until the guard drops.
pub(super) fn stop_signals() -> Result<(signals::Flag, signals::Blocked)> {
    let flag = signals::Flag::on(&signals::STOP).map_err(|e| Error::network("sigaction", e))?;
    let blocked = signals::Blocked::new(&signals::STOP).map_err(|e| Error::network("sigprocmask", e))?;
    Ok((flag, blocked))
}

/// How a fetch target is named in verbose output.
pub(crate) fn describe(target: &Target) -> String {
    match target {
        Target::Name(n) => format!("name {n:?}"),
        Target::Eid(e) | Target::Known { eid: e, .. } => format!("EID {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndnget_options_become_keys_of_their_controller_only() {
        assert_eq!(ndnget_options("cubic", Some(1.0), None, None, Some(0.8)).unwrap(), "cubic:init_cwnd=1,beta=0.8");
        assert_eq!(
            ndnget_options("aimd:rto_only=true", None, Some(2.0), Some(0.6), None).unwrap(),
            "aimd:rto_only=true,step=2,beta=0.6"
        );
        assert_eq!(ndnget_options("bbr-cd", Some(4.0), None, None, None).unwrap(), "bbr-cd:init_cwnd=4");
        let e = ndnget_options("cubic", None, None, Some(0.6), None).unwrap_err();
        assert_eq!((e.exit_code(), e.to_string().contains("--aimd-beta is for --cc aimd")), (2, true), "{e}");
        assert!(ndnget_options("aimd", None, None, None, Some(0.6)).is_err());
        // The spec then parses as usual: bbr's init_cwnd is an integer.
        assert!(cc_config("bbr:init_cwnd=1.5", None, None).is_err());
        assert!(matches!(cc_config("cubic:init_cwnd=1,beta=0.8", None, None),
            Ok(c) if c.get::<rdtp_proto::cc::cubic::CubicConfig>().is_some_and(|c| c.beta == 0.8 && c.init_cwnd == 1.0)));
    }

    fn args(argv: &[&str]) -> Args {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            fetch: Args,
        }
        let mut all = vec!["fetch", "127.0.0.1", "x"];
        all.extend_from_slice(argv);
        <Cli as clap::Parser>::try_parse_from(all).unwrap().fetch
    }

    /// Issue 23 item 15: `--window N` is short for `--cc fixed:window=N`, so alone it
    /// selects fixed (0036bef: "controller 'bbr' has no key 'window'", exit 2); the other
    /// ndnget options select their controller the same way.
    #[test]
    fn options_of_one_controller_select_it_without_cc() {
        assert_eq!(controller_spec(&args(&[])).unwrap(), "bbr3-rdtp");
        assert_eq!(controller_spec(&args(&["--window", "32"])).unwrap(), "fixed");
        assert_eq!(controller_spec(&args(&["--aimd-beta", "0.6"])).unwrap(), "aimd");
        assert_eq!(controller_spec(&args(&["--cubic-beta", "0.8"])).unwrap(), "cubic");
        assert_eq!(controller_spec(&args(&["--probe-gain", "2"])).unwrap(), "bbr");
        assert_eq!(controller_spec(&args(&["--cc", "bbrp", "--window", "3"])).unwrap(), "bbrp");
        let e = controller_spec(&args(&["--window", "3", "--aimd-step", "2"])).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--window (fixed) and --aimd-step/--aimd-beta (aimd)"), "{e}");
        // With an explicit other controller, --window is still refused.
        let spec = controller_spec(&args(&["--cc", "bbr", "--window", "3"])).unwrap();
        assert_eq!(cc_config(&spec, Some(3), None).unwrap_err().exit_code(), 2);
        assert!(
            matches!(cc_config("fixed", Some(32), None), Ok(c) if c.get::<FixedConfig>().is_some_and(|f| f.window == 32))
        );
    }

    /// Issue 23 item 15: `--cc fixed --window 4294967295` ran at 74 % re-requests without a
    /// word. A window beyond what the receive window or the socket buffer allows is cut to
    /// it, with a warning saying why.
    #[test]
    fn absurd_fixed_windows_are_cut_and_warned_about() {
        let fixed = |w| CcConfig::new(FixedConfig { window: w });
        let (cc, w) = useful_window(fixed(u32::MAX), 1402, 64 << 20);
        assert_eq!(cc, fixed(5698));
        let w = w.expect("a warning");
        assert!(
            w.starts_with("--window 4294967295 cut to 5698 units: a fixed window has no congestion control"),
            "{w}"
        );
        assert!(w.contains("8 MiB socket buffer"), "{w}");
        assert_eq!(useful_window(fixed(5698), 1402, 64 << 20), (fixed(5698), None));
        assert_eq!(useful_window(fixed(64), 1402, 64 << 20), (fixed(64), None));
        // A receive window smaller than the socket buffer: it bounds (at least two blocks).
        let (cc, w) = useful_window(fixed(2000), 1000, 1 << 20);
        assert_eq!(cc, fixed(1048));
        assert!(w.is_some_and(|w| w.contains("the receive window (1048576 bytes, --recv-window)")));
        assert_eq!(useful_window(fixed(1000), 1000, 1).0, fixed(32));
        let bbr: CcConfig = "bbr".parse().unwrap();
        assert_eq!(useful_window(bbr.clone(), 1402, 1), (bbr, None));
    }
}
