//! `rdtp serve DIR` — serve the files of a directory until SIGINT/SIGTERM (`--tcp`: over
//! kernel TCP instead, the comparison baseline of [`rdtp::tcp`]).
//!
//! Prints `rdtp: serving N objects (X bytes) on ADDR` to stderr once listening (tests and
//! scripts parse the address from it), a line per file added, changed or removed later
//! (the directory is rescanned, [`rdtp::catalog`]), and the aggregate counters on shutdown.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rdtp::args::parse_size;
use rdtp::error::{EXIT_OK, Error, Result};
use rdtp::server::{Parallel, ServeOptions, ServerRuntime};
use rdtp::{DirCatalog, DirOptions, IndexProgress};
use rdtp_proto::server::{Catalog, PatternCatalog, ServerConfig};

use super::to_stderr;

/// Name of the object `serve --pattern SIZE` serves.
pub const PATTERN_NAME: &str = "pattern";

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Directory to serve (recursively; names are paths relative to it).
    // Required: `--pattern` (hidden, for benchmarks) stands in for it by conflicting with it,
    // which clap accepts for a required argument, so help shows `<DIR>`, not `[DIR]`.
    #[arg(value_name = "DIR", required = true)]
    pub dir: Option<PathBuf>,
    /// Address and port to listen on (default [::]:7447 dual-stack, else 0.0.0.0:7447; port 0 = any).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<String>,
    /// This server's node id, named in every Data it sends (`served by`): 1-8 printable
    /// characters, or 0x and 16 hex digits.
    #[arg(long, value_name = "ID", default_value = "origin")]
    pub id: rdtp_proto::NodeId,
    /// Most units one request may ask for (larger requests are refused).
    #[arg(long, value_name = "N", default_value_t = ServerConfig::default().max_units_per_request)]
    pub max_units: u32,
    /// Look for new, changed and deleted files every SECS seconds (0: never; a file changed
    /// in place is then only withdrawn). Changed files are hashed again in the background
    /// and served under their new EID; their old EID gets "unknown content", never new bytes.
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    pub rescan: f64,
    /// Serve one generated object named "pattern" of SIZE bytes instead of a directory (benchmarks).
    #[arg(long, value_name = "SIZE", hide = true, conflicts_with = "dir")]
    pub pattern: Option<String>,
    /// Most Data this server sends in all (e.g. 1Gbps), whatever the number of workers,
    /// shared evenly between the sources asking now (a lone receiver may use all of it); a
    /// source over its share gets Busy, which receivers take as congestion (the
    /// token-bucket send queue, Liu et al. §6). Default: no limit.
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<String>,
    /// Serving threads, each with its own socket on the address (SO_REUSEPORT; the kernel
    /// spreads receivers over them; they share one --max-rate). Default: one per CPU core.
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Wake-up coalescing: after answering, a worker that finds no more requests sleeps this
    /// long (e.g. 200us, 1ms) before it looks again, taking what came meanwhile in one
    /// batch — fewer wake-ups with many slow receivers, up to this much more delay per
    /// request. Default 0: off.
    #[arg(long, value_name = "DURATION")]
    pub coalesce: Option<String>,
    #[command(flatten)]
    pub validation: super::ValidationArgs,
    /// Serve over kernel TCP instead (comparison baseline, not rdtp: see `rdtp fetch --tcp`).
    #[arg(long)]
    pub tcp: bool,
    /// TCP congestion control of every connection (e.g. bbr, cubic; default: the kernel's).
    #[arg(long, value_name = "CC", requires = "tcp")]
    pub tcp_cc: Option<String>,
    #[command(flatten)]
    pub ndn: NdnArgs,
}

/// `rdtp serve --ndn-listen`: the same files for NDN consumers.
#[derive(clap::Args, Debug)]
pub struct NdnArgs {
    /// Also answer NDN Interests on this UDP address (NDN's port is 6363), publishing each
    /// file F as PREFIX/F the way ndnputchunks does: versioned segments with FinalBlockId,
    /// RDR metadata (PREFIX/F/32=metadata), DigestSha256 signatures. ndncatchunks and NDNts
    /// fetch from it.
    #[arg(long, value_name = "ADDR:PORT", conflicts_with = "tcp")]
    pub ndn_listen: Option<String>,
    /// The NDN name prefix of the published files.
    #[arg(long, value_name = "NAME", default_value = "/rdtp", requires = "ndn_listen")]
    pub ndn_prefix: String,
    /// Content bytes per NDN segment (ndnputchunks' default: 8000).
    #[arg(long, value_name = "BYTES", default_value_t = 8000, requires = "ndn_listen")]
    pub ndn_segment_size: usize,
    /// Largest NDN datagram: a larger Data goes in NDNLPv2 fragments (default 8800, one
    /// datagram per segment as NFD's UDP faces; 1452 for paths without IP fragmentation).
    #[arg(long, value_name = "BYTES", default_value_t = rdtp_proto::ndn::producer::MAX_NDN_PACKET_SIZE, requires = "ndn_listen")]
    pub ndn_mtu: usize,
    /// Networks whose Interests are answered (repeatable, e.g. 203.0.113.0/24; `any` for
    /// all). NDN has no address validation, so a forged source address would make the
    /// producer send Data to it: by default only loopback, private IPv4 and local IPv6
    /// networks are answered.
    #[arg(long, value_name = "CIDR", requires = "ndn_listen")]
    pub ndn_allow: Vec<String>,
    /// Most NDN Data sent in all (e.g. 500Mbps), shared evenly between the sources asking;
    /// Interests beyond get a Nack "Congestion".
    #[arg(long, value_name = "RATE", default_value = "1Gbps", requires = "ndn_listen")]
    pub ndn_max_rate: String,
}

impl NdnArgs {
    /// The NDN face's options, or `None` without `--ndn-listen`.
    fn options(&self) -> Result<Option<rdtp::ndn_serve::NdnOptions>> {
        use rdtp_proto::ndn::producer::{self, ProducerConfig};
        let Some(listen) = self.ndn_listen.as_deref() else { return Ok(None) };
        let listen =
            parse_listen(listen).map_err(|e| Error::Usage(e.to_string().replace("--listen", "--ndn-listen")))?;
        let prefix: rdtp_proto::ndn::Name = self
            .ndn_prefix
            .parse()
            .map_err(|e| Error::Usage(format!("invalid --ndn-prefix {:?}: {e}", self.ndn_prefix)))?;
        let mut config = ProducerConfig::new(prefix);
        if !(576..=65_507).contains(&self.ndn_mtu) {
            return Err(Error::Usage("--ndn-mtu must be between 576 and 65507".into()));
        }
        config.mtu = self.ndn_mtu;
        // A segment must fit in 64 fragments of the MTU (NDNLPv2 reassembly's bound here).
        let most = (self.ndn_mtu - 100) * producer::MAX_SEGMENT_FRAGMENTS;
        if !(1..=most).contains(&self.ndn_segment_size) {
            return Err(Error::Usage(format!(
                "--ndn-segment-size must be between 1 and {most} at --ndn-mtu {}",
                self.ndn_mtu
            )));
        }
        config.segment_size = self.ndn_segment_size;
        if !self.ndn_allow.is_empty() {
            config.allow = Vec::new();
            for a in &self.ndn_allow {
                match a.as_str() {
                    "any" => {
                        config.allow.extend(["0.0.0.0/0".parse::<ipnet::IpNet>().unwrap(), "::/0".parse().unwrap()])
                    }
                    a => config.allow.push(a.parse().map_err(|_| {
                        Error::Usage(format!("invalid --ndn-allow {a:?} (want a network such as 10.0.0.0/8, or any)"))
                    })?),
                }
            }
        }
        let rate = rdtp_units::parse_rate(&self.ndn_max_rate)
            .map_err(|e| Error::Usage(format!("invalid --ndn-max-rate: {e}")))?;
        if rate <= 0.0 {
            return Err(Error::Usage("--ndn-max-rate must be above zero".into()));
        }
        config.share.rate = Some(rate / 8.0);
        Ok(Some(rdtp::ndn_serve::NdnOptions { listen, config }))
    }
}

fn parse_listen(s: &str) -> Result<SocketAddr> {
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    s.to_socket_addrs()
        .map_err(|e| Error::Usage(format!("invalid --listen {s:?} (want ADDR:PORT): {e}")))?
        .next()
        .ok_or_else(|| Error::Usage(format!("--listen {s:?} resolves to no address")))
}

pub fn run(a: Args) -> Result<i32> {
    if a.max_units == 0 {
        return Err(Error::Usage("--max-units must be at least 1".into()));
    }
    if !(a.rescan.is_finite() && a.rescan >= 0.0) {
        return Err(Error::Usage("--rescan must be a number of seconds ≥ 0".into()));
    }
    let rate = match a.max_rate.as_deref() {
        None => None,
        Some(r) => match rdtp_units::parse_rate(r) {
            Ok(bps) if bps > 0.0 => Some(bps / 8.0),
            Ok(_) => return Err(Error::Usage("--max-rate must be above zero".into())),
            Err(e) => return Err(Error::Usage(format!("invalid --max-rate: {e}"))),
        },
    };
    if a.workers == Some(0) {
        return Err(Error::Usage("--workers must be at least 1".into()));
    }
    let coalesce = match a.coalesce.as_deref() {
        None => std::time::Duration::ZERO,
        Some(t) => match rdtp_units::parse_duration(t) {
            Ok(d) if d <= std::time::Duration::from_millis(100) => d,
            Ok(_) => return Err(Error::Usage("--coalesce is at most 100ms".into())),
            Err(e) => return Err(Error::Usage(format!("invalid --coalesce '{t}': {e}"))),
        },
    };
    let options = ServeOptions {
        listen: a.listen.as_deref().map(parse_listen).transpose()?,
        workers: a.workers.unwrap_or_else(rdtp::server::default_workers),
        coalesce,
        config: ServerConfig {
            id: a.id,
            max_units_per_request: a.max_units,
            validation: a.validation.config(),
            share: rdtp_proto::server::ShareConfig { rate, ..Default::default() },
            ..ServerConfig::default()
        },
    };
    let tcp = a.tcp.then(|| a.tcp_cc.clone());
    let ndn = a.ndn.options()?;
    match (&a.pattern, &a.dir) {
        (Some(size), _) => {
            let size = parse_size(size)?;
            serve(Arc::new(PatternCatalog::new([(PATTERN_NAME.to_string(), size, 1)])), size, options, tcp, ndn)
        }
        (None, Some(dir)) => {
            let mut catalog =
                DirCatalog::open(dir, DirOptions { progress: IndexProgress::Stderr, ..DirOptions::default() })?;
            if a.rescan > 0.0 {
                catalog = catalog.watch(Duration::from_secs_f64(a.rescan))?;
            }
            let total = catalog.total_size();
            serve(catalog, total, options, tcp, ndn)
        }
        (None, None) => Err(Error::Usage("give a DIR to serve".into())),
    }
}

fn serve<S: Parallel>(
    source: S,
    total_bytes: u64,
    options: ServeOptions,
    tcp: Option<Option<String>>,
    ndn: Option<rdtp::ndn_serve::NdnOptions>,
) -> Result<i32> {
    if let Some(cc) = tcp {
        return super::tcp::serve(source, total_bytes, options.listen, cc);
    }
    let count = source.catalog().len();
    let ndn = match ndn {
        Some(o) => {
            let (prefix, allow) = (o.config.prefix.to_string(), o.config.allow.len());
            let face = rdtp::ndn_serve::spawn(source.worker(), o)?;
            to_stderr(&format!(
                "rdtp: NDN producer on {} (udp): {count} objects under {prefix}, answering {allow} allowed networks\n",
                face.local_addr()
            ));
            Some(face)
        }
        None => None,
    };
    let mut rt = ServerRuntime::bind(source, options)?;
    let addr = rt.local_addr().map_err(|e| Error::network("getsockname", e))?;
    let workers = match rt.workers() {
        1 => String::new(),
        n => format!(" with {n} workers"),
    };
    to_stderr(&format!("rdtp: serving {count} objects ({total_bytes} bytes){workers} on {addr}\n"));
    let stats = rt.run_until_signal()?;
    to_stderr(&format!("rdtp: shutting down: {stats}\n"));
    if let Some(face) = ndn {
        let s = face.stop()?;
        to_stderr(&format!(
            "rdtp: NDN: {} datagrams: {} segments ({} bytes), {} metadata, {} congestion Nacks; ignored {} not allowed, {} not Interests, {} for no published data\n",
            s.datagrams,
            s.segments,
            s.content_bytes,
            s.metadata,
            s.congestion,
            s.not_allowed,
            s.not_interest,
            s.no_such_data
        ));
    }
    Ok(EXIT_OK)
}
