//! `rdtp testbed`: real rdtp and kernel-TCP processes in network namespaces across the
//! real-time ns-3 emulator (the `rdtp-testbed` program of the `rdtp-testbed` crate).
//! Arguments go to `rdtp-testbed` unchanged; see `rdtp testbed --help-testbed`.
//!
//! `rdtp-testbed` is found (next to `rdtp` or on `PATH`; never built at run time) by
//! [`super::companion`]: `cargo build --release -p rdtp-testbed -p rdtp-ns3` puts it and
//! the emulator next to `rdtp`.
//! The testbed runs *this* `rdtp` for servers and clients, and the `rdtp-sim` next to it
//! (or on `PATH`) as the emulator.

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
    let exe = super::companion::find(PROGRAM, &["rdtp-sim"], &["rdtp-testbed", "rdtp-ns3"])?;
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
