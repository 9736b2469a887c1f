//! Finding the companion programs `rdtp sim` and `rdtp testbed` hand over to.
//!
//! A companion is looked for next to this executable, then on `PATH`. Nothing is built at
//! run time: when it is missing, the error gives the command that builds it (`cargo build
//! --release -p …`, the profile this `rdtp` was built with), and the source tree to run it in
//! when this binary was built from one that still exists.

use std::path::{Path, PathBuf};

use rdtp::error::{Error, Result};

/// Path of `program`. `with` names programs it runs that should come from the same build:
/// a copy next to this executable is preferred over `PATH` only when they are there too.
/// `packages` are the workspace crates that build `program` and `with` (named in the error).
pub fn find(program: &str, with: &[&str], packages: &[&str]) -> Result<PathBuf> {
    let beside_dir = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf));
    let beside = beside_dir.as_ref().map(|d| d.join(program)).filter(|p| p.is_file());
    if let (Some(b), Some(dir)) = (&beside, &beside_dir)
        && with.iter().all(|w| dir.join(w).is_file())
    {
        return Ok(b.clone());
    }
    if let Some(on_path) =
        std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(program)).find(|c| c.is_file()))
    {
        return Ok(on_path);
    }
    if let Some(b) = beside {
        return Ok(b);
    }
    Err(Error::Runtime(missing(program, beside_dir.as_deref(), packages)))
}

/// What to say when `program` is missing: where it was looked for and the command that
/// builds it next to this `rdtp`.
fn missing(program: &str, beside: Option<&Path>, packages: &[&str]) -> String {
    let debug = beside.and_then(Path::file_name).is_some_and(|d| d == "debug");
    let build = format!("cargo build{} -p {}", if debug { "" } else { " --release" }, packages.join(" -p "));
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let place = match workspace.canonicalize() {
        Ok(w) if packages.iter().all(|p| w.join("crates").join(p).join("Cargo.toml").is_file()) => {
            format!("in the rdtp source tree ({})", w.display())
        }
        _ => "in the rdtp source tree".to_string(),
    };
    let looked = beside.map_or_else(String::new, |d| format!(" ({})", d.display()));
    format!("{program} not found next to rdtp{looked} or on PATH: build it with `{build}` {place}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_companion_names_the_command_that_builds_it() {
        let m = missing("rdtp-sim", Some(Path::new("/x/target/release")), &["rdtp-ns3"]);
        assert!(m.starts_with("rdtp-sim not found next to rdtp (/x/target/release) or on PATH"), "{m}");
        assert!(m.contains("`cargo build --release -p rdtp-ns3` in the rdtp source tree ("), "{m}");
        let m = missing("rdtp-testbed", Some(Path::new("/x/target/debug")), &["rdtp-testbed", "rdtp-ns3"]);
        assert!(m.contains("`cargo build -p rdtp-testbed -p rdtp-ns3`"), "{m}");
    }
}
