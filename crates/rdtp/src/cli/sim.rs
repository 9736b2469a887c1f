//! `rdtp sim`: run ns-3 scenarios with the real rdtp core (the `rdtp-sim` program of the
//! `rdtp-ns3` crate). Arguments go to `rdtp-sim` unchanged; see `rdtp sim --help-sim`.
//!
//! `rdtp-sim` is found (next to `rdtp` or on `PATH`; never built at run time) by
//! [`super::companion`]: `cargo build --release -p rdtp-ns3` puts it next to `rdtp`.

use std::process::Command;

use rdtp::error::{Error, Result};

#[derive(clap::Args, Debug)]
#[command(
    disable_help_flag = true,
    after_help = "Examples:\n  rdtp sim experiments/fig7a.toml --out out/fig7a --jobs 2\n  rdtp sim experiments/smoke-wifi.toml --set scenario.duration=10\n  rdtp sim experiments/fig10.toml --set scenario.repeat=5   (mean and 95 % CI per point)\n  rdtp sim experiments/fig7a.toml --list                    (the expanded runs)\n  rdtp sim experiments/fig7a.toml --shard 2/8 --out out/fig7a-2\n  rdtp sim --merge out/fig7a-* --out out/fig7a             (combine shards)\n  rdtp sim experiments/fig7a.toml --out out/fig7a --resume  (finish an interrupted sweep)\n  rdtp sim --help-sim      (rdtp-sim's own help)\nns-3 must be installed: tools/setup.sh (ns-3 3.44 from PyPI into .venv-ns3/), then cargo build --release -p rdtp-ns3"
)]
pub struct Args {
    /// Arguments for rdtp-sim: SCENARIO.toml [--out DIR] [--jobs N] [--set KEY=VALUE]…
    /// [--shard I/N] [--list | --dry-run], or --merge DIR… --out DIR
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    pub args: Vec<String>,
    /// Show this help.
    #[arg(short = 'h', long = "help", action = clap::ArgAction::Help)]
    help: Option<bool>,
}

pub fn run(a: Args) -> Result<i32> {
    let exe = super::companion::find(PROGRAM, &[], &["rdtp-ns3"])?;
    let args: Vec<String> =
        a.args.into_iter().map(|s| if s == "--help-sim" { "--help".to_string() } else { s }).collect();
    let status =
        Command::new(&exe).args(&args).status().map_err(|e| Error::io(format!("cannot run {}", exe.display()), e))?;
    Ok(status.code().unwrap_or(1))
}

const PROGRAM: &str = "rdtp-sim";
