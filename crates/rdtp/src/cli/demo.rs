//! `rdtp demo` — the whole transport on one machine, no files: an in-process server on
//! 127.0.0.1 serves a generated object, the library API fetches it (progress bar on a
//! terminal), the bytes are discarded after the core verified them against the EID, and
//! ndnget's summary is printed. With `--router`, an in-process caching router stands in
//! front of the server and the object is fetched twice through it: from the origin, then
//! from the router's store.

use std::sync::Arc;

use rdtp::Fetch;
use rdtp::args::{human_size, parse_size};
use rdtp::error::{EXIT_OK, Result};
use rdtp::router::RouteOptions;
use rdtp::server::{ServeOptions, spawn};
use rdtp_proto::NodeId;
use rdtp_proto::router::RouterConfig;
use rdtp_proto::router::fib::Fib;
use rdtp_proto::server::PatternCatalog;

use super::{Sink, cc_config, cc_spec, copy_object, progress_bar, to_stderr, to_stdout};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Size of the generated object (suffixes K, M, G = 1000^n; KiB, MiB, GiB = 1024^n).
    #[arg(long, value_name = "SIZE", default_value = "64MiB")]
    pub size: String,
    /// Congestion controller (a spec, as `rdtp fetch --cc`; `--cc help` lists them).
    #[arg(long, value_name = "SPEC", default_value = rdtp_proto::cc::registry::DEFAULT, value_parser = cc_spec)]
    pub cc: String,
    /// Print only the summary (no progress bar, no server counters).
    #[arg(short, long)]
    pub quiet: bool,
    /// Print the statistics as one JSON object on stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Fetch through an in-process caching router, twice: from the origin, then from its store
    /// (`rdtp route`'s default store: 256 MiB with each unit's bookkeeping, so a 256 MiB object
    /// does not fit; of an object that does not fit, `--cs-insert full:0.125` keeps part for
    /// the second fetch: measured 77 % of a 300 MB one, 11 % of 1 GiB).
    #[arg(long)]
    pub router: bool,
}

pub fn run(a: Args) -> Result<i32> {
    let size = parse_size(&a.size)?;
    let cc = cc_config(&a.cc, None, None)?;
    let catalog = Arc::new(PatternCatalog::new([("demo".to_string(), size, 1)]));
    let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let server = spawn(catalog, ServeOptions { listen: Some(loopback), ..Default::default() })?;
    let router = match a.router {
        false => None,
        true => {
            let mut config = RouterConfig {
                id: NodeId::label("demo").expect("a valid label"),
                fib: Fib::new(Some(server.local_addr())),
                ..RouterConfig::default()
            };
            // The store `rdtp route` has by default: its byte budget, not NFD's 65 536 units,
            // bounds it, and its admission (the core's default caches always: an object larger
            // than the store then gets no hits at all on its second fetch).
            config.cs.capacity_units = rdtp_proto::router::units_for_budget(config.cs.capacity_bytes);
            config.cs.admission = super::route::DEFAULT_CS_INSERT;
            Some(rdtp::router::spawn(RouteOptions { listen: Some(loopback), config, workers: 1 })?)
        }
    };
    let target = router.as_ref().map_or(server.local_addr(), |r| r.local_addr());
    if !a.quiet {
        let via =
            router.as_ref().map_or(String::new(), |r| format!(", through a caching router on {}", r.local_addr()));
        to_stderr(&format!(
            "rdtp demo: serving a {} ({size} bytes) generated object on {}{via}; fetching it with {}\n",
            human_size(size),
            server.local_addr(),
            a.cc
        ));
    }
    let fetches = if a.router { 2 } else { 1 };
    let mut summaries = Vec::new();
    for i in 0..fetches {
        if i > 0 && !a.quiet && !a.json {
            to_stderr("\nrdtp demo: the same object again, through the same router\n");
        }
        let mut reader = Fetch::by_name(target, "demo").cc(cc.clone()).start()?;
        let bar = progress_bar(!a.quiet);
        let copied = copy_object(&mut reader, Sink::Discard, bar.as_ref());
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        copied?;
        let summary = reader.summary();
        if !a.json {
            to_stderr(&summary.to_text());
        }
        summaries.push(summary);
    }
    let router_stats = router.map(|r| r.stop()).transpose()?;
    let stats = server.stop()?;
    if a.json {
        for s in &summaries {
            to_stdout(&format!("{}\n", s.to_json()))?;
        }
    } else if !a.quiet {
        to_stderr(&format!("Server: {stats}\n"));
        if let Some(r) = router_stats {
            to_stderr(&format!("Router: {r}\n"));
        }
    }
    Ok(EXIT_OK)
}
