//! Root-only end-to-end test: real `rdtp serve`/`rdtp fetch` and kernel TCP (BBR) through a
//! real-time emulated 20 Mbit/s, 20 ms path. Without root, /dev/net/tun, iproute2, ethtool,
//! ping, or an rdtp-sim built with ns-3, it prints `SKIPPED: <reason>` and passes.

use std::collections::{BTreeSet, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const TESTBED: &str = env!("CARGO_BIN_EXE_rdtp-testbed");

fn skip(reason: &str) {
    // Straight to stderr, past the harness's capture, so the reason shows for a passing test.
    let _ = writeln!(std::io::stderr(), "SKIPPED: {reason}");
}

fn on_path(p: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(p).is_file()))
}

fn namespaces() -> BTreeSet<String> {
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

fn csv(path: &Path) -> Vec<HashMap<String, String>> {
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

const EXPERIMENT: &str = r#"
[testbed]
name = "integration"
duration = 14.0
warmup = 3.0

[path]
kind = "dumbbell"
rate = "20Mbps"
rtt = "20ms"
queue = "1bdp"

[[flow]]
kind = "rdtp"
size = "25MB"

[sweep]
"flow.0" = [
    { kind = "rdtp", cc = "bbr", size = "25MB", save = true, label = "rdtp" },
    { kind = "tcp", cc = "TCP_CC", size = "25MB", save = true, label = "tcp-TCP_CC" },
]
"#;

#[test]
fn rdtp_and_kernel_tcp_cross_the_emulated_path_byte_exact_and_teardown_is_complete() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return skip("not root (the testbed creates network namespaces and taps)");
    }
    if !Path::new("/dev/net/tun").exists() {
        return skip("/dev/net/tun is missing");
    }
    for tool in ["ip", "ss", "ethtool", "ping"] {
        if !on_path(tool) {
            return skip(&format!("{tool} is not installed (apt-get install iproute2 ethtool iputils-ping)"));
        }
    }
    let Some((rdtp, sim)) = programs() else {
        return skip("rdtp / rdtp-sim are not built next to rdtp-testbed (run cargo test --workspace)");
    };
    let help = Command::new(&sim).args(["--emulate", "--PrintHelp"]).output().expect("run rdtp-sim");
    if !String::from_utf8_lossy(&help.stdout).contains("--Taps") {
        return skip(
            "the rdtp-sim next to the testbed has no real-time emulator: built without ns-3 \
             (apt-get install libns3-dev libgsl-dev) or stale (cargo build -p rdtp-ns3)",
        );
    }
    // Can this machine (container) make a namespace with a tap in it?
    let probe = format!("rdtp-probe-{}", std::process::id());
    let ok = |args: &[&str]| Command::new("ip").args(args).output().map(|o| o.status.success()).unwrap_or(false);
    let netns_ok = ok(&["netns", "add", &probe]);
    let tap_ok = netns_ok && ok(&["-n", &probe, "tuntap", "add", "dev", "tap0", "mode", "tap"]);
    let _ = Command::new("ip").args(["netns", "del", &probe]).output();
    if !netns_ok {
        return skip("cannot create network namespaces here (ip netns add failed)");
    }
    if !tap_ok {
        return skip("cannot create tap devices in a namespace here (ip tuntap add failed)");
    }

    // Kernel TCP BBR if this kernel has it (loading the module if needed), else CUBIC.
    let available =
        || std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap_or_default();
    if !available().split_whitespace().any(|c| c == "bbr") {
        let _ = Command::new("modprobe").arg("tcp_bbr").output();
    }
    let tcp_cc = if available().split_whitespace().any(|c| c == "bbr") {
        "bbr"
    } else {
        let _ = writeln!(std::io::stderr(), "note: this kernel has no tcp_bbr; the TCP half uses cubic");
        "cubic"
    };
    let experiment = EXPERIMENT.replace("TCP_CC", tcp_cc);

    // A namespace left by a testbed that died (its pid cannot exist: above
    // pid_max) must be removed when the next testbed starts.
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4_194_304);
    let stale = format!("rdtp-{}-c0", pid_max + 1);
    assert!(ok(&["netns", "add", &stale]), "cannot create {stale}");

    let ns_before = namespaces();
    let links_before = links();
    let dir = std::env::temp_dir().join(format!("rdtp-testbed-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let exp = dir.join("integration.toml");
    std::fs::write(&exp, &experiment).unwrap();
    let out = dir.join("out");

    let o = Command::new(TESTBED)
        .arg(&exp)
        .arg("--out")
        .arg(&out)
        .arg("--rdtp")
        .arg(&rdtp)
        .arg("--rdtp-sim")
        .arg(&sim)
        .output()
        .expect("run rdtp-testbed");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let _ = writeln!(std::io::stderr(), "{stderr}");

    // Teardown: no namespace, tap or process of ours is left, whatever the result.
    // The testbed removes namespaces left by dead earlier runs at start, so
    // the sets may shrink; they must not grow.
    assert!(!namespaces().contains(&stale), "the stale namespace {stale} was not removed");
    let ns_new: BTreeSet<_> = namespaces().difference(&ns_before).cloned().collect();
    assert!(ns_new.is_empty(), "namespaces left behind: {ns_new:?}");
    let links_new: BTreeSet<_> = links().difference(&links_before).cloned().collect();
    assert!(links_new.is_empty(), "links left behind in the root namespace: {links_new:?}");
    let ps = Command::new("ps").args(["-eo", "args"]).output().expect("ps");
    let out_s = out.display().to_string();
    assert!(
        !String::from_utf8_lossy(&ps.stdout).lines().any(|l| l.contains(&out_s)),
        "processes of the run are still running"
    );
    assert!(o.status.success(), "rdtp-testbed failed ({:?})", o.status.code());

    let rows = csv(&out.join("summary.csv"));
    assert_eq!(rows.len(), 2, "{rows:?}");
    for r in &rows {
        assert_eq!(r["completed"], "1", "{r:?}");
        assert_eq!(r["byte_exact"], "true", "{r:?}");
    }
    let rdtp_row = rows.iter().find(|r| r["kind"] == "rdtp").expect("rdtp row");
    let goodput: f64 = rdtp_row["goodput_mbps"].parse().expect("rdtp goodput");
    let _ = writeln!(
        std::io::stderr(),
        "rdtp goodput over its steady part: {goodput:.2} Mbit/s of 20 (valid emulation: {}, lag p99 {} ms)",
        rdtp_row["valid"],
        rdtp_row["lag_p99_ms"]
    );
    assert!(goodput >= 0.85 * 20.0, "rdtp reached only {goodput:.2} Mbit/s of 20 over [warmup, completion)");
    let _ = std::fs::remove_dir_all(&dir);
}
