//! Shared by the end-to-end tests: an `rdtp serve` child process on 127.0.0.1, and the NDNts
//! rig (`ndnts`: an independent NDN producer and consumer run by node).

// Each test crate compiles this module and uses a part of it.
#![allow(dead_code)]

pub mod ndnts;
pub mod raw;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub const RDTP: &str = env!("CARGO_BIN_EXE_rdtp");

/// `len` pseudo-random bytes (xorshift), different for each `seed`.
pub fn content(len: usize, seed: u8) -> Vec<u8> {
    let mut x = 0x9e37_79b9u32 ^ u32::from(seed);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// An `rdtp serve` or `rdtp route` process; killed when the test ends, whatever happened.
pub struct Server {
    pub child: Child,
    /// The address from its "rdtp: serving … on ADDR" line.
    pub addr: String,
    /// That line.
    pub line: String,
}

impl Server {
    /// `rdtp serve --listen 127.0.0.1:0 [extra…] DIR`, waiting for its "serving" line.
    pub fn start(dir: &Path, extra: &[&str]) -> Server {
        let mut args = vec!["serve", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        args.push(dir.to_str().expect("UTF-8 path"));
        Server::spawn(&args, "rdtp: serving ")
    }

    /// `rdtp serve --listen 127.0.0.1:0 --ndn-listen 127.0.0.1:0 [extra…] DIR`, waiting for
    /// its "NDN producer on" line: `addr` is the NDN face's.
    pub fn start_ndn(dir: &Path, extra: &[&str]) -> Server {
        let mut args = vec!["serve", "--listen", "127.0.0.1:0", "--ndn-listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        args.push(dir.to_str().expect("UTF-8 path"));
        Server::spawn(&args, "rdtp: NDN producer on ")
    }

    /// `rdtp route --listen 127.0.0.1:0 [extra…]`, waiting for its "routing on" line.
    pub fn route(extra: &[&str]) -> Server {
        let mut args = vec!["route", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        Server::spawn(&args, "rdtp: routing on ")
    }

    /// `rdtp ARGS`, waiting for the stderr line starting with `ready`: the listening address
    /// follows `ready` if it ends with " on ", else the line's last " on ".
    /// `rdtp ARGS…` (a `serve` of any kind), waiting for its "serving" line.
    pub fn spawn_args(args: &[&str]) -> Server {
        Server::spawn(args, "rdtp: serving ")
    }

    fn spawn(args: &[&str], ready: &str) -> Server {
        let mut child = Command::new(RDTP)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rdtp serve");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr);
        let mut addr = None;
        let mut line = String::new();
        while lines.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(rest) = line.trim_end().strip_prefix(ready) {
                let after =
                    if ready.ends_with(" on ") { rest } else { rest.rsplit_once(" on ").map_or(rest, |(_, a)| a) };
                addr = after.split_whitespace().next().map(str::to_string);
                break;
            }
            line.clear();
        }
        let server = Server { child, addr: addr.unwrap_or_default(), line };
        assert!(!server.addr.is_empty(), "no {ready:?} line from rdtp {args:?}");
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = lines.read_to_string(&mut sink);
        });
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `rdtp fetch ADDR NAME -o OUT` (stdin closed): its exit code (-1 if killed) and stderr,
/// the summary.
pub fn fetch_to(addr: &str, name: &str, out: &Path) -> (i32, String) {
    let o = Command::new(RDTP)
        .args(["fetch", addr, name, "-o", out.to_str().expect("UTF-8 path")])
        .stdin(Stdio::null())
        .output()
        .expect("run rdtp fetch");
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// The summary's "Served by: …" line, without its label.
pub fn served_by(summary: &str) -> &str {
    summary
        .lines()
        .find_map(|l| l.strip_prefix("Served by: "))
        .unwrap_or_else(|| panic!("no Served by line:\n{summary}"))
}
