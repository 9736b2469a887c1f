//! `rdtp sim`: run ns-3 scenarios with the real rdtp core (the `rdtp-sim` program of the
//! `rdtp-ns3` crate). Arguments go to `rdtp-sim` unchanged; see `rdtp sim --help-sim`.
//!
//! `rdtp-sim` is looked for next to this executable, then on `PATH`. If neither has it and
//! this binary was built from a source checkout that still exists, it is built there first
//! (`cargo build --release -p rdtp-ns3`), so a user never calls a compiler by hand.

use std::path::{Path, PathBuf};
use std::process::Command;

use rdtp::error::{Error, Result};

#[derive(clap::Args, Debug)]
#[command(
    disable_help_flag = true,
    after_help = "Examples:\n  rdtp sim experiments/fig7a.toml --out out/fig7a --jobs 2\n  rdtp sim experiments/smoke-wifi.toml --set scenario.duration=10\n  rdtp sim --help-sim      (rdtp-sim's own help)\nns-3 must be installed: apt-get install libns3-dev libgsl-dev"
)]
pub struct Args {
    /// Arguments for rdtp-sim: SCENARIO.toml [--out DIR] [--jobs N] [--set KEY=VALUE]…
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    pub args: Vec<String>,
    /// Show this help.
    #[arg(short = 'h', long = "help", action = clap::ArgAction::Help)]
    help: Option<bool>,
}

pub fn run(a: Args) -> Result<i32> {
    let exe = find_or_build()?;
    let args: Vec<String> =
        a.args.into_iter().map(|s| if s == "--help-sim" { "--help".to_string() } else { s }).collect();
    let status =
        Command::new(&exe).args(&args).status().map_err(|e| Error::io(format!("cannot run {}", exe.display()), e))?;
    Ok(status.code().unwrap_or(1))
}

const PROGRAM: &str = "rdtp-sim";

fn find_or_build() -> Result<PathBuf> {
    if let Some(dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
        let beside = dir.join(PROGRAM);
        if beside.is_file() {
            return Ok(beside);
        }
    }
    if let Some(on_path) =
        std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(PROGRAM)).find(|c| c.is_file()))
    {
        return Ok(on_path);
    }
    // Built from a checkout: build rdtp-sim there.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if !workspace.join("crates/rdtp-ns3/Cargo.toml").is_file() {
        return Err(Error::Runtime(format!(
            "{PROGRAM} not found next to rdtp or on PATH; build it with `cargo build --release -p rdtp-ns3` in the rdtp source tree"
        )));
    }
    eprintln!("rdtp: building {PROGRAM} (cargo build --release -p rdtp-ns3) …");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "-p", "rdtp-ns3"])
        .current_dir(&workspace)
        .status()
        .map_err(|e| Error::io("cannot run cargo to build rdtp-sim", e))?;
    if !status.success() {
        return Err(Error::Runtime(format!("building {PROGRAM} failed")));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    let built = target.join("release").join(PROGRAM);
    if built.is_file() {
        Ok(built)
    } else {
        Err(Error::Runtime(format!("{} missing after the build", built.display())))
    }
}
