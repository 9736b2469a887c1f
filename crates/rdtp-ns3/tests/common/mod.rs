//! What the end-to-end tests of `rdtp-sim` share: running the built binary (skipping, with
//! the reason on stderr, when this build has no ns-3), temporary directories, CSV rows.
#![allow(dead_code)] // each test file uses its own part

use std::collections::HashMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const SIM: &str = env!("CARGO_BIN_EXE_rdtp-sim");

pub struct TempDir(pub PathBuf);
impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("rdtp-ns3-test-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Run rdtp-sim; `None` (after printing why) if this build cannot simulate.
pub fn sim(args: &[&str]) -> Option<Output> {
    let out = Command::new(SIM).args(args).output().expect("run rdtp-sim");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) && stderr.contains("ns-3 is not installed") {
        // Straight to the process's stderr, not through the test harness's capture, so the
        // reason shows even for a passing test.
        let _ = writeln!(std::io::stderr(), "SKIPPED: {}", stderr.trim());
        return None;
    }
    assert!(
        out.status.success(),
        "rdtp-sim {args:?} failed ({:?})\nstdout:\n{}\nstderr:\n{stderr}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
    Some(out)
}

/// Rows of a CSV file as header → value maps.
pub fn csv(path: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    r.deserialize().collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn result(run_toml: &Path, key: &str) -> f64 {
    let text = fs::read_to_string(run_toml).unwrap();
    let t: toml::Table = text.parse().unwrap();
    t["results"][key].as_float().unwrap_or_else(|| panic!("{key} missing in {}", run_toml.display()))
}

pub fn num(row: &HashMap<String, String>, k: &str) -> f64 {
    row[k].parse().unwrap_or_else(|_| panic!("{k} = {:?} is not a number", row[k]))
}

/// Write scenario `text` into `dir` and run it there (one job); the output directory, or
/// `None` if this build cannot simulate.
pub fn run_scenario(dir: &TempDir, text: &str) -> Option<PathBuf> {
    let scenario = dir.0.join("scenario.toml");
    fs::write(&scenario, text).unwrap();
    let out = dir.0.join("out");
    let o = sim(&[scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--jobs", "1"])?;
    eprintln!("{}", String::from_utf8_lossy(&o.stderr));
    Some(out)
}

/// Run the scenario file `experiments/<name>` as it is shipped into `dir` (one job); the
/// output directory, or `None` if this build cannot simulate.
pub fn run_shipped(dir: &TempDir, name: &str) -> Option<PathBuf> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments").join(name);
    let out = dir.0.join("out");
    sim(&[file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--jobs", "1"])?;
    Some(out)
}

/// The run directories under `out` (those with a run.toml), in run order.
pub fn run_dirs(out: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        fs::read_dir(out).unwrap().flatten().map(|e| e.path()).filter(|p| p.join("run.toml").exists()).collect();
    dirs.sort();
    dirs
}

/// A run's run.toml.
pub fn run_toml(run: &Path) -> toml::Table {
    fs::read_to_string(run.join("run.toml")).unwrap().parse().unwrap()
}
