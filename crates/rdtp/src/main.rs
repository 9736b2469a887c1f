//! The `rdtp` command: `serve`, `fetch`, `ls`, `demo` and `bench`.

/// The exit-code table shown in `--help` (a macro so that `concat!` can use it).
macro_rules! exit_codes_help {
    () => {
        "\
Exit codes:
  0  success
  1  runtime error (socket failure, request refused by the server, ...)
  2  usage error (bad arguments)
  3  content not found (the server has no such name or EID)
  4  I/O error (output file, log file or served directory cannot be opened, read or written)
  5  data validation failure (the content does not hash to its EID)
  6  server unreachable (nothing listens there, or no answer before --timeout)
  130, 143  interrupted by SIGINT (Ctrl-C), SIGTERM"
    };
}

mod cli;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

const AFTER_HELP: &str = concat!(
    exit_codes_help!(),
    "\n\n",
    "Environment: RDTP_LOG=error|warn|info|debug|trace sets the diagnostic log level (default warn)."
);

/// Receiver-driven transport for information-centric networks: a receiver requests byte
/// ranges of content named by its BLAKE3 hash (EID) from a stateless server and runs BBR.
#[derive(Parser, Debug)]
#[command(name = "rdtp", version, after_help = AFTER_HELP, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: cli::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    match cli::run(cli.command) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "rdtp: error: {e}");
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

fn init_tracing() {
    let level =
        std::env::var("RDTP_LOG").ok().and_then(|v| v.parse::<tracing::Level>().ok()).unwrap_or(tracing::Level::WARN);
    let _ = tracing_subscriber::fmt().with_writer(std::io::stderr).with_max_level(level).with_target(false).try_init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn help_documents_exit_codes() {
        let help = Cli::command().render_long_help().to_string();
        for code in ["3  content not found", "5  data validation failure", "6  server unreachable"] {
            assert!(help.contains(code), "{help}");
        }
    }

    /// `serve`'s DIR is required (`--pattern`, hidden, stands in for it): its help shows
    /// `<DIR>`, not `[DIR]` as when it was optional to clap.
    #[test]
    fn serve_help_shows_dir_as_required() {
        let mut cmd = Cli::command();
        let help = cmd.find_subcommand_mut("serve").unwrap().render_long_help().to_string();
        assert!(help.contains("serve [OPTIONS] <DIR>"), "{help}");
        assert!(!help.contains("[DIR]"), "{help}");
        assert!(Cli::try_parse_from(["rdtp", "serve", "--pattern", "1K"]).is_ok());
        assert!(Cli::try_parse_from(["rdtp", "serve", "some/dir"]).is_ok());
        assert_eq!(Cli::try_parse_from(["rdtp", "serve"]).unwrap_err().exit_code(), 2);
        assert_eq!(Cli::try_parse_from(["rdtp", "serve", "d", "--pattern", "1K"]).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn usage_errors_exit_2() {
        for argv in [
            vec!["rdtp", "fetch"],
            vec!["rdtp", "fetch", "h:1", "x", "--cc", "reno"],
            vec!["rdtp", "fetch", "h:1", "x", "--mtu", "1500", "--unit", "1000"],
            vec!["rdtp", "bogus"],
        ] {
            let e = Cli::try_parse_from(&argv).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{argv:?}");
        }
    }
}
