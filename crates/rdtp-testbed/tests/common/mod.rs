//! What the root-only end-to-end tests share: the prerequisites (each test skips with
//! `SKIPPED: <reason>` and passes without them), running the testbed on an experiment, and
//! the check that a run left no namespace, link or process behind.

use std::collections::{BTreeSet, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const TESTBED: &str = env!("CARGO_BIN_EXE_rdtp-testbed");

pub fn skip(reason: &str) {
    // Straight to stderr, past the harness's capture, so the reason shows for a passing test.
    let _ = writeln!(std::io::stderr(), "SKIPPED: {reason}");
}

fn on_path(p: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(p).is_file()))
}

pub fn namespaces() -> BTreeSet<String> {
    std::fs::read_dir("/var/run/netns")
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

fn links() -> BTreeSet<String> {
    let o = Command::new("ip").args(["-o", "link", "show"]).output().expect("ip link");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split(':').nth(1).map(|n| n.trim().to_string()))
        .collect()
}

pub fn csv(path: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    r.deserialize().collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// rdtp and rdtp-sim from the same build as the testbed (`cargo test --workspace` builds them).
fn programs() -> Option<(PathBuf, PathBuf)> {
    let dir = Path::new(TESTBED).parent()?;
    let rdtp = dir.join("rdtp");
    let sim = dir.join("rdtp-sim");
    (rdtp.is_file() && sim.is_file()).then_some((rdtp, sim))
}

/// Whether `ip args…` succeeds.
pub fn ip_ok(args: &[&str]) -> bool {
    Command::new("ip").args(args).output().map(|o| o.status.success()).unwrap_or(false)
}

/// rdtp and rdtp-sim if this machine can run the testbed; otherwise says why (SKIPPED) and
/// returns `None`: not root, no /dev/net/tun, iproute2, ethtool or ping, no rdtp-sim with
/// ns-3, or a container that cannot make namespaces or taps.
pub fn ready() -> Option<(PathBuf, PathBuf)> {
    if !nix::unistd::geteuid().is_root() {
        skip("not root (the testbed creates network namespaces and taps)");
        return None;
    }
    if !Path::new("/dev/net/tun").exists() {
        skip("/dev/net/tun is missing");
        return None;
    }
    for tool in ["ip", "ss", "ethtool", "ping"] {
        if !on_path(tool) {
            skip(&format!("{tool} is not installed (apt-get install iproute2 ethtool iputils-ping)"));
            return None;
        }
    }
    let Some((rdtp, sim)) = programs() else {
        skip("rdtp / rdtp-sim are not built next to rdtp-testbed (run cargo test --workspace)");
        return None;
    };
    let help = Command::new(&sim).args(["--emulate", "--PrintHelp"]).output().expect("run rdtp-sim");
    if !String::from_utf8_lossy(&help.stdout).contains("--Taps") {
        skip(
            "the rdtp-sim next to the testbed has no real-time emulator: built without ns-3 \
             (tools/setup.sh installs ns-3 3.44) or stale (cargo build -p rdtp-ns3)",
        );
        return None;
    }
    // Can this machine (container) make a namespace with a tap in it?
    let probe = format!("rdtp-probe-{}", std::process::id());
    let netns_ok = ip_ok(&["netns", "add", &probe]);
    let tap_ok = netns_ok && ip_ok(&["-n", &probe, "tuntap", "add", "dev", "tap0", "mode", "tap"]);
    let _ = Command::new("ip").args(["netns", "del", &probe]).output();
    if !netns_ok {
        skip("cannot create network namespaces here (ip netns add failed)");
        return None;
    }
    if !tap_ok {
        skip("cannot create tap devices in a namespace here (ip tuntap add failed)");
        return None;
    }
    Some((rdtp, sim))
}

/// One testbed invocation: its output, and where its files are.
pub struct TestRun {
    pub output: Output,
    /// The testbed's `--out` directory.
    pub out: PathBuf,
    /// The temporary directory holding the experiment file and `out` (removed by [`TestRun::clean`]).
    pub dir: PathBuf,
    ns_before: BTreeSet<String>,
    links_before: BTreeSet<String>,
}

/// Run the testbed on `experiment` (written to a temporary `<name>.toml`) with these programs;
/// its stderr is echoed.
#[allow(dead_code)] // tests/figure.rs runs it only through run_with
pub fn run(name: &str, experiment: &str, programs: &(PathBuf, PathBuf)) -> TestRun {
    run_with(name, experiment, programs, |_| {})
}

/// [`run`], with `adjust` given the command before it runs (environment, working directory).
pub fn run_with(
    name: &str,
    experiment: &str,
    (rdtp, sim): &(PathBuf, PathBuf),
    adjust: impl FnOnce(&mut Command),
) -> TestRun {
    let ns_before = namespaces();
    let links_before = links();
    let dir = std::env::temp_dir().join(format!("rdtp-testbed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let exp = dir.join(format!("{name}.toml"));
    std::fs::write(&exp, experiment).unwrap();
    let out = dir.join("out");
    let mut command = Command::new(TESTBED);
    command.arg(&exp).arg("--out").arg(&out).arg("--rdtp").arg(rdtp).arg("--rdtp-sim").arg(sim);
    adjust(&mut command);
    let output = command.output().expect("run rdtp-testbed");
    let _ = writeln!(std::io::stderr(), "{}", String::from_utf8_lossy(&output.stderr));
    TestRun { output, out, dir, ns_before, links_before }
}

impl TestRun {
    /// Teardown: no namespace, tap or process of the run is left, whatever the result. The
    /// testbed removes namespaces left by dead earlier runs at start, so the sets may
    /// shrink; they must not grow. Then: the testbed succeeded.
    pub fn assert_nothing_left_and_success(&self) {
        let ns_new: BTreeSet<_> = namespaces().difference(&self.ns_before).cloned().collect();
        assert!(ns_new.is_empty(), "namespaces left behind: {ns_new:?}");
        let links_new: BTreeSet<_> = links().difference(&self.links_before).cloned().collect();
        assert!(links_new.is_empty(), "links left behind in the root namespace: {links_new:?}");
        let ps = Command::new("ps").args(["-eo", "args"]).output().expect("ps");
        let out_s = self.out.display().to_string();
        assert!(
            !String::from_utf8_lossy(&ps.stdout).lines().any(|l| l.contains(&out_s)),
            "processes of the run are still running"
        );
        assert!(self.output.status.success(), "rdtp-testbed failed ({:?})", self.output.status.code());
    }

    pub fn clean(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
