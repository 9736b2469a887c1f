//! `rdtp ls ADDR` — list a server's catalogue as `SIZE  EID  NAME` lines on stdout, then one
//! line on stderr saying how many objects came from where (and, since nothing in a list
//! answer tells a router from a server, what a router's list is: its default upstream's).

use std::io::{self, BufWriter, Write};
use std::time::Duration;

use rdtp::args::{human_size, parse_server};
use rdtp::error::{EXIT_OK, Error, Result};
use rdtp::list::list;

#[derive(clap::Args, Debug)]
#[command(after_help = "Through a router (`rdtp route`), ls lists the catalogue of the router's default \
upstream (its --upstream): not what its --route entries lead to, nor what its content store \
holds. List each server directly to see all the names.")]
pub struct Args {
    /// Server address: host:port, host (port 7447), [v6addr]:port. Through a router: its
    /// default upstream's catalogue.
    #[arg(value_name = "ADDR")]
    pub server: String,
    /// Sizes in KiB/MiB/GiB instead of bytes.
    #[arg(short = 'H', long)]
    pub human: bool,
    /// Print a JSON array of {name, eid, size} objects.
    #[arg(long, conflicts_with = "human")]
    pub json: bool,
    /// Give up after this many seconds without an answer.
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    pub timeout: f64,
}

#[derive(serde::Serialize)]
struct Entry<'a> {
    name: &'a str,
    eid: String,
    size: u64,
}

pub fn run(a: Args) -> Result<i32> {
    let server = parse_server(&a.server)?;
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        return Err(Error::Usage("--timeout must be a positive number of seconds".into()));
    }
    let entries = list(server, Duration::from_secs_f64(a.timeout))?;
    let mut out = BufWriter::new(io::stdout().lock());
    let written = (|| -> io::Result<()> {
        if a.json {
            let v: Vec<Entry<'_>> =
                entries.iter().map(|e| Entry { name: &e.name, eid: e.eid.to_hex(), size: e.size }).collect();
            serde_json::to_writer(&mut out, &v)?;
            writeln!(out)?;
        } else {
            for e in &entries {
                let size = if a.human { human_size(e.size) } else { e.size.to_string() };
                writeln!(out, "{size:>12}  {}  {}", e.eid, e.name)?;
            }
        }
        out.flush()
    })();
    match written {
        Ok(()) => {
            super::to_stderr(&format!(
                "rdtp ls: {} object{} from {server} (through a router: the catalogue of its default upstream only)\n",
                entries.len(),
                if entries.len() == 1 { "" } else { "s" },
            ));
            Ok(EXIT_OK)
        }
        // `rdtp ls | head` is not an error.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(EXIT_OK),
        Err(e) => Err(Error::io("cannot write to stdout", e)),
    }
}
