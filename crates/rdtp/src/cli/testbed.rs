//! `rdtp testbed`: real rdtp and kernel-TCP processes in network namespaces across the
//! real-time ns-3 emulator (the `rdtp-testbed` program of the `rdtp-testbed` crate).
//! Arguments go to `rdtp-testbed` unchanged; see `rdtp testbed --help-testbed`.
//!
//! `rdtp-testbed` is looked for next to this executable, then on `PATH`. If neither has it
//! and this binary was built from a source checkout that still exists, it is built there
//! first (`cargo build --release -p rdtp-testbed -p rdtp-ns3`: the testbed and the emulator).
//! The testbed runs *this* `rdtp` for servers and clients, and the `rdtp-sim` next to it
//! (or on `PATH`) as the emulator.

use std::path::{Path, PathBuf};
use std::process::Command;

use rdtp::error::{Error, Result};

#[derive(clap::Args, Debug)]
#[command(
    disable_help_flag = true,
    after_help = "Examples:\n  sudo rdtp testbed testbed/fig7a.toml --out out/tb-fig7a\n  sudo rdtp testbed testbed/fig8.toml --set testbed.duration=20\n  sudo rdtp testbed cleanup        (remove leftover rdtp-* namespaces)\n  rdtp testbed --help-testbed      (rdtp-testbed's own help)\nNeeds root, iproute2, ethtool, ping and ns-3 (apt-get install libns3-dev libgsl-dev)."
)]
pub struct Args {
    /// Arguments for rdtp-testbed: EXPERIMENT.toml [--out DIR] [--set KEY=VALUE]… | cleanup | check
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    pub args: Vec<String>,
    /// Show this help.
    #[arg(short = 'h', long = "help", action = clap::ArgAction::Help)]
    help: Option<bool>,
}

const PROGRAM: &str = "rdtp-testbed";

pub fn run(a: Args) -> Result<i32> {
    let exe = find_or_build()?;
    let args: Vec<String> =
        a.args.into_iter().map(|s| if s == "--help-testbed" { "--help".to_string() } else { s }).collect();
    let mut cmd = Command::new(&exe);
    cmd.args(&args);
    if let Ok(me) = std::env::current_exe() {
        if std::env::var_os("RDTP_TESTBED_RDTP").is_none() {
            cmd.env("RDTP_TESTBED_RDTP", &me);
        }
        let sim = me.with_file_name("rdtp-sim");
        if sim.is_file() && std::env::var_os("RDTP_TESTBED_SIM").is_none() {
            cmd.env("RDTP_TESTBED_SIM", sim);
        }
    }
    let status = cmd.status().map_err(|e| Error::io(format!("cannot run {}", exe.display()), e))?;
    Ok(status.code().unwrap_or(1))
}

fn find_or_build() -> Result<PathBuf> {
    let beside_dir = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf));
    if let Some(dir) = &beside_dir {
        let beside = dir.join(PROGRAM);
        if beside.is_file() && dir.join("rdtp-sim").is_file() {
            return Ok(beside);
        }
    }
    if let Some(on_path) =
        std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(PROGRAM)).find(|c| c.is_file()))
    {
        return Ok(on_path);
    }
    if let Some(beside) = beside_dir.as_ref().map(|d| d.join(PROGRAM)).filter(|p| p.is_file()) {
        return Ok(beside);
    }
    // Built from a checkout: build the testbed and the emulator there.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if !workspace.join("crates/rdtp-testbed/Cargo.toml").is_file() {
        return Err(Error::Runtime(format!(
            "{PROGRAM} not found next to rdtp or on PATH; build it with `cargo build --release -p rdtp-testbed -p rdtp-ns3` in the rdtp source tree"
        )));
    }
    eprintln!("rdtp: building {PROGRAM} and rdtp-sim (cargo build --release -p rdtp-testbed -p rdtp-ns3) …");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "-p", "rdtp-testbed", "-p", "rdtp-ns3"])
        .current_dir(&workspace)
        .status()
        .map_err(|e| Error::io("cannot run cargo to build rdtp-testbed", e))?;
    if !status.success() {
        return Err(Error::Runtime(format!("building {PROGRAM} failed")));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    let built = target.join("release").join(PROGRAM);
    if built.is_file() {
        // The emulator was built next to it; let the testbed find it even if this rdtp
        // lives elsewhere.
        Ok(built)
    } else {
        Err(Error::Runtime(format!("{} missing after the build", built.display())))
    }
}
