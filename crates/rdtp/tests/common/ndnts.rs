//! The NDNts test rig (tests/ndnts/): an NDN producer and consumer nobody here wrote, run as
//! node child processes on 127.0.0.1. Tests that need it call [`rig`] first: without node or
//! without the pinned npm packages it prints `SKIPPED: <reason>` and the test passes.
//!
//! Holds process plumbing only; what NDNts does on the wire is its own (tests/ndnts/README.md).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The oldest node the pinned NDNts packages support (`@ndn/util`'s `engines`).
const NODE_MIN: (u32, u32) = (20, 18);

/// tests/ndnts/ of this repository.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ndnts")
}

/// tests/ndnts/ if node and the npm packages are there; otherwise prints `SKIPPED: <reason>`
/// and returns None.
pub fn rig() -> Option<PathBuf> {
    let skip = |reason: String| {
        // Straight to stderr, past the test harness's capture, for .ci/run's list of skips.
        let _ = writeln!(std::io::stderr(), "SKIPPED: {reason}: the NDNts rig (tests/ndnts) is not run");
        None
    };
    let version = match Command::new("node").arg("--version").output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => return skip(format!("node is not installed (Node.js >= {}.{})", NODE_MIN.0, NODE_MIN.1)),
    };
    let mut parts = version.trim_start_matches('v').split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if (major, minor) < NODE_MIN {
        return skip(format!("node {version} is older than {}.{}", NODE_MIN.0, NODE_MIN.1));
    }
    let dir = dir();
    if !dir.join("node_modules/@ndn/segmented-object/package.json").is_file() {
        return skip("the pinned NDNts packages are not installed (npm ci --prefix tests/ndnts)".into());
    }
    Some(dir)
}

/// A running `producer.mjs`; killed when dropped.
pub struct Producer {
    child: Child,
    /// HOST:PORT it listens on (from its ready line).
    pub addr: String,
    /// Its ready line: "ndnts-producer: serving NAME (…) on HOST:PORT".
    pub line: String,
}

impl Producer {
    /// `node producer.mjs --listen 127.0.0.1:0 --prefix PREFIX --file FILE [extra…]`, waiting
    /// for its ready line.
    pub fn start(rig: &Path, prefix: &str, file: &Path, extra: &[&str]) -> Producer {
        let mut child = Command::new("node")
            .arg(rig.join("producer.mjs"))
            .args(["--listen", "127.0.0.1:0", "--prefix", prefix, "--file"])
            .arg(file)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn node producer.mjs");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        let _ = stdout.read_line(&mut line);
        let line = line.trim_end().to_string();
        let Some((_, addr)) = line.rsplit_once(" on ") else {
            let mut err = String::new();
            let _ = child.stderr.take().expect("stderr").read_to_string(&mut err);
            let _ = child.kill();
            let _ = child.wait();
            panic!("producer.mjs printed no ready line ({line:?}); stderr:\n{err}");
        };
        let addr = addr.to_string();
        // Keep draining its output so it never blocks on a full pipe.
        let mut stderr = child.stderr.take().expect("stderr");
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = stdout.read_to_end(&mut sink);
        });
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = stderr.read_to_end(&mut sink);
        });
        Producer { child, addr, line }
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `node consumer.mjs --connect ADDR --name NAME [extra…]`: its output (summary on stdout,
/// the reason on stderr if it failed).
pub fn consume(rig: &Path, addr: &str, name: &str, extra: &[&str]) -> Output {
    Command::new("node")
        .arg(rig.join("consumer.mjs"))
        .args(["--connect", addr, "--name", name, "--timeout", "60"])
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("run node consumer.mjs")
}
