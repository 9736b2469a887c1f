//! `rdtp wifi estimate`: Hiorth and Welzl's passive estimate of a WiFi medium from a radiotap
//! capture (`--pcap FILE`) or a live monitor interface (`--iface MON0`, feature `live`):
//! each transmitter's throughput, PHY rate and airtime over the last window, the number of
//! active stations N, and the rate a newcomer would get (the N + 1 rule and the learned
//! model). Also the source of `rdtp fetch --initial-rate auto`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;
use rdtp::error::{Error, Result};
use rdtp::wifi::{self as source, CaptureCounts};
use rdtp_proto::wifi::{EstimatorConfig, Mac, Model, Snapshot};

use super::to_stdout;

#[derive(Subcommand, Debug)]
pub enum WifiCommand {
    /// Listen to a WiFi medium (capture file or monitor interface): stations, N, and the
    /// rate a newcomer would attain.
    Estimate(EstimateArgs),
}

/// Where frames come from and how they are read (shared with `rdtp fetch --initial-rate auto`).
#[derive(clap::Args, Debug, Clone)]
pub struct ListenArgs {
    /// Sliding window (s): stations count as active over it.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub window: f64,
    /// A transmitter is active above this throughput, Mbit/s.
    #[arg(long, value_name = "MBPS", default_value_t = 0.5)]
    pub min_active: f64,
    /// The newcomer's PHY rate, Mbit/s (default: the active stations' mean).
    #[arg(long, value_name = "MBPS")]
    pub phy_rate: Option<f64>,
    /// Newcomer-rate model file (default: the built-in one, crates/rdtp-proto/src/wifi/model-v1.txt).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Leave out this transmitter (e.g. the listening host itself).
    #[arg(long, value_name = "MAC")]
    pub ignore: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct EstimateArgs {
    /// A pcap capture with radiotap headers (802.11 monitor mode, link type 127).
    #[arg(long, value_name = "FILE", required_unless_present = "iface", conflicts_with = "iface")]
    pub pcap: Option<PathBuf>,
    /// A monitor-mode interface to capture from live (needs the `live` build).
    #[arg(long, value_name = "IFACE")]
    pub iface: Option<String>,
    /// How long to listen on --iface, seconds.
    #[arg(long, value_name = "S", default_value_t = 2.0)]
    pub duration: f64,
    /// Also print one line every S seconds of the capture (time, N, total, predictions).
    #[arg(long, value_name = "S")]
    pub every: Option<f64>,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub listen: ListenArgs,
}

pub fn run(cmd: WifiCommand) -> Result<i32> {
    match cmd {
        WifiCommand::Estimate(a) => estimate(a),
    }
}

fn positive_secs(v: f64, what: &str) -> Result<Duration> {
    if v.is_finite() && v > 0.0 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(Error::Usage(format!("{what} must be a positive number of seconds")))
    }
}

impl ListenArgs {
    /// The estimator settings.
    pub fn config(&self) -> Result<EstimatorConfig> {
        let ignore = match &self.ignore {
            Some(m) => Some(m.parse::<Mac>().map_err(|e| Error::Usage(format!("--ignore {m}: {e}")))?),
            None => None,
        };
        if !(self.min_active.is_finite() && self.min_active >= 0.0) {
            return Err(Error::Usage("--min-active must be ≥ 0 Mbit/s".into()));
        }
        Ok(EstimatorConfig {
            window: positive_secs(self.window, "--window")?,
            min_active_bps: self.min_active * 1e6,
            ignore,
        })
    }

    /// The model: `--model FILE` or the built-in one.
    pub fn model(&self) -> Result<Model> {
        let Some(path) = &self.model else { return Ok(Model::builtin()) };
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
        Model::parse(&text).map_err(|e| Error::Usage(format!("{}: {e}", path.display())))
    }

    /// The newcomer's PHY rate, bit/s.
    pub fn newcomer_bps(&self) -> Option<f64> {
        self.phy_rate.map(|r| r * 1e6)
    }
}

/// Listen to the file or interface and return the counts and the snapshot at the end,
/// calling `every` at each multiple of `interval`.
pub fn listen(
    pcap: Option<&PathBuf>,
    iface: Option<&str>,
    duration: f64,
    cfg: EstimatorConfig,
    interval: Option<Duration>,
    every: impl FnMut(&Snapshot, Duration),
) -> Result<(CaptureCounts, Snapshot)> {
    if let Some(path) = pcap {
        let r = source::estimate_file(path, cfg, interval, every)?;
        return Ok((r.counts, r.snapshot));
    }
    let iface = iface.ok_or_else(|| Error::Usage("give --pcap FILE or --iface IFACE".into()))?;
    let r = source::estimate_live(iface, positive_secs(duration, "--duration")?, cfg, interval, every)?;
    Ok((r.counts, r.snapshot))
}

fn mbps(bps: Option<f64>) -> String {
    bps.map_or("-".to_string(), |b| format!("{:.2}", b / 1e6))
}

fn estimate(a: EstimateArgs) -> Result<i32> {
    let cfg = a.listen.config()?;
    let model = a.listen.model()?;
    let newcomer = a.listen.newcomer_bps();
    let interval = a.every.map(|s| positive_secs(s, "--every")).transpose()?;
    if interval.is_some() && !a.json {
        to_stdout("time_s (since the first data frame)  N  total_mbps  n_plus_one_mbps  model_mbps\n")?;
    }
    // Printed as they come (a live capture shows the medium while it listens).
    let mut print_err = None;
    let (counts, snap) = listen(a.pcap.as_ref(), a.iface.as_deref(), a.duration, cfg, interval, |s, since_first| {
        if a.json || print_err.is_some() {
            return;
        }
        let predicted = s.features(newcomer, None).map(|f| model.predict(&f));
        let line = format!(
            "{:.3}  {}  {:.2}  {}  {}\n",
            since_first.as_secs_f64(),
            s.n_active(),
            s.total_bps() / 1e6,
            mbps(s.n_plus_one()),
            mbps(predicted)
        );
        if let Err(e) = to_stdout(&line) {
            print_err = Some(e);
        }
    })?;
    if let Some(e) = print_err {
        return Err(e);
    }
    let predicted = snap.features(newcomer, None).map(|f| model.predict(&f));
    let informed = source::informed_rate(&snap, &model, newcomer);
    if a.json {
        let stations: Vec<serde_json::Value> = snap
            .stations
            .iter()
            .map(|s| {
                serde_json::json!({
                    "mac": s.mac.to_string(), "active": s.active, "frames": s.frames, "retries": s.retries,
                    "throughput_mbps": s.throughput_bps / 1e6, "phy_mbps": s.phy_rate_bps / 1e6,
                    "airtime_share": s.airtime_share,
                })
            })
            .collect();
        let v = serde_json::json!({
            "counts": counts, "window_s": snap.span.as_secs_f64(), "n_active": snap.n_active(),
            "total_mbps": snap.total_bps() / 1e6, "busy": snap.busy(),
            "n_plus_one_mbps": snap.n_plus_one().map(|b| b / 1e6), "model_mbps": predicted.map(|b| b / 1e6),
            "informed_start_mbps": informed.map(|b| b / 1e6), "stations": stations,
        });
        to_stdout(&format!("{v}\n"))?;
        return Ok(0);
    }
    let mut out = if interval.is_some() { "\n".to_string() } else { String::new() };
    out.push_str(&format!(
        "Packets: {} ({} data frames, {} other, {} without a legacy rate, {} bad FCS, {} not radiotap)\n",
        counts.packets, counts.data_frames, counts.not_data, counts.no_rate, counts.bad_fcs, counts.malformed
    ));
    out.push_str(&format!("Window: the last {:.3} s\n", snap.span.as_secs_f64()));
    out.push_str("transmitter        active  frames  retries  Mbit/s  PHY Mbit/s  airtime\n");
    for s in &snap.stations {
        out.push_str(&format!(
            "{}  {:>6}  {:>6}  {:>7}  {:>6.2}  {:>10.1}  {:>6.1}%\n",
            s.mac,
            if s.active { "yes" } else { "no" },
            s.frames,
            s.retries,
            s.throughput_bps / 1e6,
            s.phy_rate_bps / 1e6,
            s.airtime_share * 100.0
        ));
    }
    out.push_str(&format!(
        "Active stations: {}   total {:.2} Mbit/s   medium busy {:.1}%\n",
        snap.n_active(),
        snap.total_bps() / 1e6,
        snap.busy() * 100.0
    ));
    out.push_str(&format!(
        "Newcomer (PHY {}): N+1 rule {} Mbit/s, model {} Mbit/s\n",
        newcomer.map_or("as the stations".to_string(), |r| format!("{:.0} Mbit/s", r / 1e6)),
        mbps(snap.n_plus_one()),
        mbps(predicted)
    ));
    to_stdout(&out)?;
    Ok(0)
}
