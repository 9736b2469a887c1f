//! `rdtp demo` — the whole transport on one machine, no files: an in-process server on
//! 127.0.0.1 serves a generated object, the library API fetches it (progress bar on a
//! terminal), the bytes are discarded after the core verified them against the EID, and
//! ndnget's summary is printed.

use std::sync::Arc;

use rdtp::Fetch;
use rdtp::args::{human_size, parse_size};
use rdtp::error::{EXIT_OK, Result};
use rdtp::server::{ServeOptions, spawn};
use rdtp_proto::server::PatternCatalog;

use super::{Sink, cc_config, cc_spec, copy_object, progress_bar, to_stderr, to_stdout};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Size of the generated object (suffixes K, M, G = 1000^n; KiB, MiB, GiB = 1024^n).
    #[arg(long, value_name = "SIZE", default_value = "64MiB")]
    pub size: String,
    /// Congestion controller (a spec, as `rdtp fetch --cc`; `--cc help` lists them).
    #[arg(long, value_name = "SPEC", default_value = "bbr", value_parser = cc_spec)]
    pub cc: String,
    /// Print only the summary (no progress bar, no server counters).
    #[arg(short, long)]
    pub quiet: bool,
    /// Print the statistics as one JSON object on stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: Args) -> Result<i32> {
    let size = parse_size(&a.size)?;
    let cc = cc_config(&a.cc, None, None)?;
    let catalog = Arc::new(PatternCatalog::new([("demo".to_string(), size, 1)]));
    let opts = ServeOptions { listen: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 0))), ..Default::default() };
    let server = spawn(catalog, opts)?;
    if !a.quiet {
        to_stderr(&format!(
            "rdtp demo: serving a {} ({size} bytes) generated object on {}; fetching it with {}\n",
            human_size(size),
            server.local_addr(),
            a.cc
        ));
    }
    let mut reader = Fetch::by_name(server.local_addr(), "demo").cc(cc).start()?;
    let bar = progress_bar(!a.quiet);
    let copied = copy_object(&mut reader, Sink::Discard, bar.as_ref());
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    copied?;
    let summary = reader.summary();
    drop(reader);
    let stats = server.stop()?;
    if a.json {
        to_stdout(&format!("{}\n", summary.to_json()))?;
    } else {
        to_stderr(&summary.to_text());
        if !a.quiet {
            to_stderr(&format!("Server: {stats}\n"));
        }
    }
    Ok(EXIT_OK)
}
