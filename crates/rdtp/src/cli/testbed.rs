//! `rdtp testbed`: real rdtp and kernel-TCP processes in network namespaces across the
//! real-time ns-3 emulator (the `rdtp-testbed` program of the `rdtp-testbed` crate).
//! Arguments go to `rdtp-testbed` unchanged; see `rdtp testbed --help-testbed`.
//!
//! `rdtp-testbed` is found (next to `rdtp` or on `PATH`; never built at run time) by
//! [`super::companion`]: `cargo build --release -p rdtp-testbed -p rdtp-ns3` puts it and
//! the emulator next to `rdtp`.
//! The testbed runs *this* `rdtp` for servers and clients, and the `rdtp-sim` next to it
//! (or on `PATH`) as the emulator.
//!
//! Interrupted (Ctrl-C, SIGTERM, SIGHUP), `rdtp testbed` says it is cleaning up and waits
//! until `rdtp-testbed` has stopped and removed what it started (namespaces, taps,
//! processes: a few seconds), passing the signal on, so the prompt returns only once the
//! machine is clean.

use std::os::unix::process::ExitStatusExt as _;
use std::process::Command;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use rdtp::error::{Error, Result};
use rdtp::signals::Flag;

#[derive(clap::Args, Debug)]
#[command(
    disable_help_flag = true,
    after_help = "Examples:\n  sudo rdtp testbed testbed/fig7a.toml --out out/tb-fig7a\n  sudo rdtp testbed testbed/fig8.toml --set testbed.duration=20\n  sudo rdtp testbed cleanup        (remove leftover rdtp-* namespaces)\n  rdtp testbed --help-testbed      (rdtp-testbed's own help)\nNeeds root, iproute2, ethtool, ping and ns-3 (tools/setup.sh installs them all)."
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
    // Ctrl-C reaches the whole foreground process group, rdtp-testbed too, which then tears
    // down what it started; this process must not die first and hand the prompt back
    // meanwhile. A signal sent to this process alone is passed on as SIGTERM.
    let stop = Flag::on(&[Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP])
        .map_err(|e| Error::Runtime(format!("cannot handle signals: {e}")))?;
    let mut child = cmd.spawn().map_err(|e| Error::io(format!("cannot run {}", exe.display()), e))?;
    let mut told = false;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| Error::io(format!("waiting for {}", exe.display()), e))? {
            break status;
        }
        if stop.raised() && !told {
            told = true;
            super::to_stderr(
                "rdtp testbed: interrupted, cleaning up… (waiting for rdtp-testbed to stop and remove what it started)\n",
            );
            // The child is not reaped yet (try_wait said so), so its pid is still its own.
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}
