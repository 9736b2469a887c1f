//! `rdtp serve --tcp` and `rdtp fetch --tcp`: the kernel-TCP comparison baseline
//! ([`rdtp::tcp`]) behind the same command lines, output and exit codes as the rdtp ones.

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use rdtp::args::{parse_server, parse_target};
use rdtp::error::{EXIT_OK, Error, Result};
use rdtp::output::Output;
use rdtp::server::Served;
use rdtp::signals;
use rdtp::tcp::{TcpFetch, TcpServeOptions, TcpServer};
use rdtp_proto::server::Catalog;

use super::fetch::Args as FetchArgs;
use super::{progress_bar, to_stderr, to_stdout};

/// Serve `catalog` over TCP until SIGINT/SIGTERM.
pub fn serve<S: Served>(source: S, total_bytes: u64, listen: Option<SocketAddr>, cc: Option<String>) -> Result<i32> {
    let count = source.catalog().len();
    let mut server = TcpServer::bind(source, TcpServeOptions { listen, cc: cc.clone() })?;
    let addr = server.local_addr().map_err(|e| Error::network("getsockname", e))?;
    let cc_name = match cc {
        Some(c) => c,
        None => std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
            .map(|s| format!("{} (kernel default)", s.trim()))
            .unwrap_or_else(|_| "kernel default".into()),
    };
    // Same shape as the UDP server's line ("… on ADDR" last), so scripts parse both alike.
    to_stderr(&format!("rdtp: serving {count} objects ({total_bytes} bytes) over TCP (cc {cc_name}) on {addr}\n"));
    let stats = server.run_until_signal()?;
    to_stderr(&format!("rdtp: shutting down: {stats}\n"));
    Ok(EXIT_OK)
}

/// `rdtp fetch ADDR NAME --tcp`.
pub fn fetch(a: &FetchArgs) -> Result<i32> {
    let server = parse_server(&a.server)?;
    let target = parse_target(&a.target);
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        return Err(Error::Usage("--timeout must be a positive number of seconds".into()));
    }
    let fetch = TcpFetch::new(server, target.clone()).timeout(Duration::from_secs_f64(a.timeout));

    let to_stdout_content = a.output == "-";
    // SIGINT/SIGTERM stop the transfer at the next write (blocking reads have a timeout, so
    // a signal interrupts them rather than being restarted), and the output is removed.
    let stop = signals::Flag::on(&signals::STOP).map_err(|e| Error::network("sigaction", e))?;
    let mut out = Output::open(&a.output)?;
    if a.verbose {
        let what = super::fetch::describe(&target);
        to_stderr(&format!("Fetching {what} from {server} over kernel TCP\n"));
    }
    let bar = progress_bar(!a.quiet && !a.verbose);
    let mut writer = Stoppable { inner: out.writer(), stop: &stop };
    let result = fetch.run(&mut writer, |size, got| {
        if let Some(b) = &bar {
            b.set_length(size);
            b.set_position(got);
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some(signal) = stop.signal() {
        return Err(Error::Interrupted(signal as i32));
    }
    // On failure the output is dropped, which removes its temporary file.
    let summary = result?;
    out.finish()?;
    if a.json {
        let line = format!("{}\n", summary.to_json());
        if to_stdout_content { to_stderr(&line) } else { to_stdout(&line)? }
    } else if !a.quiet {
        to_stderr(&summary.to_text());
    }
    Ok(EXIT_OK)
}

/// A writer that fails once a stop signal came (the TCP fetch then ends).
struct Stoppable<'a> {
    inner: &'a mut dyn Write,
    stop: &'a signals::Flag,
}

impl Write for Stoppable<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.stop.raised() {
            return Err(std::io::Error::other("interrupted"));
        }
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
