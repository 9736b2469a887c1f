//! Subcommands of the `rdtp` binary, one file each, plus what they share.

pub mod bench;
pub mod bench_router;
pub mod bench_workers;
pub mod companion;
pub mod demo;
pub mod fetch;
pub mod ls;
pub mod route;
pub mod serve;
pub mod sim;
pub mod tcp;
pub mod testbed;
pub mod wifi;

use std::io::{IsTerminal, Write};

use clap::Subcommand;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rdtp::error::{Error, Result};
use rdtp::{CcConfig, FetchReader};
use rdtp_proto::cc::spec;

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the files of a directory (names are paths relative to it).
    Serve(serve::Args),
    /// A caching router between receivers and servers (content store, coalescing, forwarding).
    Route(Box<route::Args>),
    /// Fetch one object by name or EID; content goes to stdout (or -o FILE).
    Fetch(Box<fetch::Args>),
    /// List a server's catalogue: SIZE  EID  NAME.
    Ls(ls::Args),
    /// Serve a generated object in-process and fetch it over loopback (no files needed).
    Demo(demo::Args),
    /// Measure goodput, CPU time and memory of `rdtp serve` + `rdtp fetch` processes.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Run ns-3 scenarios (rdtp inside ns-3, TCP baselines, WiFi); see `rdtp sim --help`.
    Sim(sim::Args),
    /// Real rdtp and kernel-TCP processes over a real-time emulated network (root); see `rdtp testbed --help`.
    Testbed(testbed::Args),
    /// Passive WiFi estimation (Hiorth and Welzl): `rdtp wifi estimate --pcap FILE | --iface MON0`.
    #[command(subcommand)]
    Wifi(wifi::WifiCommand),
}

/// Run a subcommand; returns the exit code on success paths.
pub fn run(cmd: Command) -> Result<i32> {
    match cmd {
        Command::Serve(a) => serve::run(a),
        Command::Route(a) => route::run(*a),
        Command::Fetch(a) => fetch::run(*a),
        Command::Ls(a) => ls::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Bench(b) => bench::run(b),
        Command::Sim(a) => sim::run(a),
        Command::Testbed(a) => testbed::run(a),
        Command::Wifi(c) => wifi::run(c),
    }
}

/// The value parser of `--cc SPEC`: a controller spec (`bbr`, `bbrp:probe_gain=2`,
/// `fixed:window=32`), checked by the core's parser so that a bad one is a usage error that
/// says what is accepted. `--cc help` prints every controller with its keys and exits 0, as
/// `--help` does (clap cannot return help text from a value parser without an "error:" prefix).
pub fn cc_spec(text: &str) -> std::result::Result<String, String> {
    if text == "help" {
        std::process::exit(match to_stdout(&spec::help()) {
            Ok(()) => 0,
            Err(e) => e.exit_code(),
        });
    }
    text.parse::<CcConfig>().map(|_| text.to_string()).map_err(|e| e.to_string())
}

/// Print `text` to stdout and exit 0 (`--receiver help` and the like: clap cannot return help
/// text from a value parser without an "error:" prefix).
pub fn print_and_exit(text: &str) -> ! {
    std::process::exit(match to_stdout(text) {
        Ok(()) => 0,
        Err(e) => e.exit_code(),
    })
}

/// The value parser of `--receiver SPEC`: the spec, checked by the core (a bad key or value
/// is a usage error naming it); `--receiver help` lists the keys and exits 0.
pub fn receiver_spec(text: &str) -> std::result::Result<String, String> {
    use rdtp_proto::receiver::ReceiverConfig;
    if text == "help" {
        print_and_exit(&ReceiverConfig::help());
    }
    ReceiverConfig::from_spec(text).map(|_| text.to_string()).map_err(|e| e.to_string())
}

/// The value parser of `--set KEY=VALUE`: one key (checked when applied, after the options
/// it may override).
pub fn key_value(text: &str) -> std::result::Result<String, String> {
    match text.split_once('=') {
        Some((k, _)) if !k.trim().is_empty() && !text.contains(',') => Ok(text.to_string()),
        _ => Err(format!("'{text}' is not KEY=VALUE (one key; several: the spec option)")),
    }
}

/// Apply `specs` in order — the options' own keys, then a `--receiver`/`--router` SPEC, then
/// each `--set` — to a configuration with `apply`; the first refused names its option.
pub fn apply_specs<C, E: std::fmt::Display>(
    config: &mut C,
    specs: &[(String, &str)],
    apply: impl Fn(&mut C, &str) -> std::result::Result<(), E>,
) -> Result<()> {
    for (option, spec) in specs {
        apply(config, spec).map_err(|e| Error::Usage(format!("{option}: {e}")))?;
    }
    Ok(())
}

/// Build the controller config for `--cc SPEC`, with the options that predate specs
/// (`--window N` for `fixed`, `--probe-gain G` for the BBR family: BBRp's `bbrp_pace` 6 and 8
/// are gains 1.5 and 2) folded in as keys by the core.
pub fn cc_config(cc: &str, window: Option<u32>, probe_gain: Option<f64>) -> Result<CcConfig> {
    let full = spec::with_legacy_options(cc, window, probe_gain);
    full.parse().map_err(|e| {
        let given =
            if full == cc { format!("--cc {cc}") } else { format!("--cc {cc} with --window/--probe-gain ({full})") };
        Error::Usage(format!("{given}: {e}"))
    })
}

/// A byte progress bar on stderr, only when stderr is a terminal and `enabled`.
pub fn progress_bar(enabled: bool) -> Option<ProgressBar> {
    if !enabled || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(10));
    let style =
        ProgressStyle::with_template("{spinner} [{bar:40}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    bar.set_style(style);
    Some(bar)
}

/// Where a fetch's bytes go and how a failure there is reported.
pub enum Sink<'a> {
    /// Write them (errors are I/O errors, exit code 4).
    Write(&'a mut dyn Write),
    /// Drop them (the core still verifies them against the EID).
    Discard,
}

/// Copy the object from `reader` to `sink`, updating `bar`. Read failures keep the fetch's
/// error (exit codes 1, 3, 5, 6); write failures become I/O errors (exit code 4).
pub fn copy_object(reader: &mut FetchReader, mut sink: Sink<'_>, bar: Option<&ProgressBar>) -> Result<u64> {
    // The receiver's verified block buffers are written as they are (one `writev` per
    // batch), not copied into a buffer of ours first (issue 12).
    let mut bufs: Vec<Vec<u8>> = Vec::new();
    let mut total = 0u64;
    let mut sized = false;
    loop {
        let n = match reader.read_buffers(&mut bufs) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(Error::from_io(&e).cloned().unwrap_or_else(|| Error::network("fetch", e)));
            }
        };
        if let Sink::Write(w) = &mut sink {
            write_all_vectored(&mut **w, &bufs).map_err(|e| Error::io("cannot write the output", e))?;
        }
        total += n as u64;
        if let Some(bar) = bar {
            if !sized && let Some(size) = reader.size() {
                bar.set_length(size);
                sized = true;
            }
            bar.set_position(total);
        }
    }
    if let Sink::Write(w) = &mut sink {
        w.flush().map_err(|e| Error::io("cannot write the output", e))?;
    }
    Ok(total)
}

/// Write every byte of `bufs`, in order, with as few `write_vectored` calls as the writer allows.
fn write_all_vectored(w: &mut dyn Write, bufs: &[Vec<u8>]) -> std::io::Result<()> {
    let mut slices: Vec<std::io::IoSlice<'_>> =
        bufs.iter().filter(|b| !b.is_empty()).map(|b| std::io::IoSlice::new(b)).collect();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        match w.write_vectored(rest) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => std::io::IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Write `text` to stderr, ignoring failures (a closed stderr must not turn success into a panic).
pub fn to_stderr(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Write `text` to stdout; a failure is an I/O error.
pub fn to_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|_| out.flush()).map_err(|e| Error::io("cannot write to stdout", e))
}

/// Address validation of `rdtp serve` and `rdtp route` (RFC 9000 §8).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ValidationArgs {
    /// Answer every address in full, without address validation. By default a request
    /// without a token this node issued gets a 32-byte Retry first, so spoofed requests
    /// cannot turn it into an amplifier; turn it off only where no one can spoof sources.
    #[arg(long)]
    pub no_address_validation: bool,
}

impl ValidationArgs {
    /// The core's setting (the runtime draws the secret when it binds).
    pub fn config(&self) -> rdtp_proto::token::ValidationConfig {
        rdtp_proto::token::ValidationConfig {
            enabled: !self.no_address_validation,
            ..rdtp_proto::token::ValidationConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdtp_proto::cc::bbr::BbrConfig;
    use rdtp_proto::cc::fixed::FixedConfig;

    #[test]
    fn probe_gain_only_for_bbr_family() {
        assert!(
            matches!(cc_config("bbrp", None, Some(2.0)), Ok(c) if c.get::<BbrConfig>().is_some_and(|b| b.probe_bw_gain == 2.0))
        );
        assert!(
            matches!(cc_config("bbrp", None, None), Ok(c) if c.get::<BbrConfig>().is_some_and(|b| b.probe_bw_gain == 1.5))
        );
        assert!(cc_config("aimd", None, Some(2.0)).is_err());
        assert!(cc_config("bbr", None, Some(0.5)).is_err());
    }

    #[test]
    fn window_only_for_fixed() {
        assert!(
            matches!(cc_config("fixed", Some(10), None), Ok(c) if c.get::<FixedConfig>().is_some_and(|f| f.window == 10))
        );
        assert_eq!(cc_config("bbr", Some(10), None).unwrap_err().exit_code(), 2);
        assert_eq!(cc_config("fixed", Some(0), None).unwrap_err().exit_code(), 2);
        assert!(cc_config("aimd", None, None).is_ok());
    }
}
