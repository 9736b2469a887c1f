//! Finding (or building) the companion programs `rdtp sim` and `rdtp testbed` hand over to.
//!
//! A companion is looked for next to this executable, then on `PATH`. If neither has it and
//! this binary was built from a source checkout that still exists, it is built there first
//! (`cargo build --release -p …`), so a user never calls a compiler by hand.

use std::path::{Path, PathBuf};
use std::process::Command;

use rdtp::error::{Error, Result};

/// Path of `program`. `with` names programs it runs that should come from the same build:
/// a copy next to this executable is preferred over `PATH` only when they are there too.
/// `packages` are the workspace crates that build `program` and `with`.
pub fn find_or_build(program: &str, with: &[&str], packages: &[&str]) -> Result<PathBuf> {
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
    // Built from a checkout: build it there.
    let build = format!("cargo build --release -p {}", packages.join(" -p "));
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if !packages.iter().all(|p| workspace.join("crates").join(p).join("Cargo.toml").is_file()) {
        return Err(Error::Runtime(format!(
            "{program} not found next to rdtp or on PATH; build it with `{build}` in the rdtp source tree"
        )));
    }
    eprintln!("rdtp: building {program} ({build}) …");
    let mut args = vec!["build", "--release"];
    for p in packages {
        args.extend(["-p", p]);
    }
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(&args)
        .current_dir(&workspace)
        .status()
        .map_err(|e| Error::io(format!("cannot run cargo to build {program}"), e))?;
    if !status.success() {
        return Err(Error::Runtime(format!("building {program} failed")));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), PathBuf::from);
    let built = target.join("release").join(program);
    if built.is_file() {
        Ok(built)
    } else {
        Err(Error::Runtime(format!("{} missing after the build", built.display())))
    }
}
