//! Drawing a sweep's figure when it ends, shared by `rdtp-sim` (crate `rdtp-ns3`) and
//! `rdtp-testbed`: [`draw`] finds `experiments/plot.py` ([`find_script`]) and a Python 3 with
//! matplotlib ([`Plotter`]), runs `python3 plot.py KIND OUT`, and otherwise prints one hint
//! that names what is missing, `tools/setup.sh` and the command that draws the figure later.
//!
//! Nothing here changes a runner's exit status: a figure that cannot be drawn is reported,
//! the runs' CSVs are the result. This crate must hold nothing but finding and running the
//! plotting script: no CSV reading, no statistics (the runners compute them, `plot.py` only
//! draws), no protocol.

// Safe Rust only: the C ABI (rdtp-ffi) and the runtimes hold every `unsafe` block of rdtp.
#![forbid(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

/// The environment variable that names the Python interpreter (default `python3`): a
/// virtual environment's, or, in tests, one that does not exist.
pub const PYTHON_ENV: &str = "RDTP_PYTHON";

/// The plotting script's file name.
pub const SCRIPT: &str = "plot.py";

/// What to say when matplotlib is missing: the set-up script and the Debian package.
pub const INSTALL: &str = "tools/setup.sh installs it, or apt-get install python3-matplotlib";

/// Where `plot.py` is looked for, in this order, for the scenario or experiment file `file`:
/// beside it (`experiments/*.toml`), in `experiments/` next to its directory
/// (`testbed/*.toml`), and in `experiments/` under the current directory (a file kept
/// elsewhere, run from the source tree).
pub fn candidates(file: &Path) -> Vec<PathBuf> {
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // `testbed/..` is written `.` (and `/x/testbed/..` `/x`), so the command a person is shown
    // reads `python3 experiments/plot.py …`.
    let up = match (dir.components().next_back(), dir.parent()) {
        (Some(Component::Normal(_)), Some(p)) if p.as_os_str().is_empty() => PathBuf::from("."),
        (Some(Component::Normal(_)), Some(p)) => p.to_path_buf(),
        _ => dir.join(".."),
    };
    vec![dir.join(SCRIPT), up.join("experiments").join(SCRIPT), Path::new("experiments").join(SCRIPT)]
}

/// The first of [`candidates`] that is a file.
pub fn find_script(file: &Path) -> Option<PathBuf> {
    candidates(file).into_iter().find(|p| p.is_file())
}

/// What became of a figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `plot.py` ran and succeeded.
    Drawn,
    /// Nothing ran: what is missing and the command that draws the figure later.
    Hint(String),
    /// `plot.py` ran and failed, or the interpreter could not be started.
    Failed(String),
}

/// The Python interpreter that draws figures.
#[derive(Debug, Clone)]
pub struct Plotter {
    python: OsString,
}

impl Plotter {
    /// `$RDTP_PYTHON` if set and not empty, else `python3` (found on `PATH`).
    pub fn from_env() -> Self {
        let python = std::env::var_os(PYTHON_ENV).filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into());
        Plotter { python }
    }

    /// This interpreter.
    pub fn with_python(python: impl AsRef<OsStr>) -> Self {
        Plotter { python: python.as_ref().to_owned() }
    }

    /// What is missing to draw figures with this interpreter (`None`: nothing).
    pub fn missing(&self) -> Option<String> {
        let python = self.python.to_string_lossy();
        match Command::new(&self.python)
            .args(["-c", "import matplotlib"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
        {
            Ok(s) if s.success() => None,
            Ok(_) => Some(format!("{python} has no matplotlib")),
            Err(_) => Some(format!("{python} is not installed")),
        }
    }

    /// The command line that draws `kind` of `out` with `script`, as a person would type it.
    pub fn command(&self, script: &Path, kind: &str, out: &Path) -> String {
        format!("{} {} {kind} {}", self.python.to_string_lossy(), script.display(), out.display())
    }

    /// Draw figure `kind` of the results in `out` with the `plot.py` found for `file`
    /// ([`find_script`]). Says `<program>: <command>` on stderr before it runs the script
    /// (whose own output, the table and the files it wrote, follows).
    pub fn draw(&self, program: &str, file: &Path, kind: &str, out: &Path) -> Outcome {
        let Some(script) = find_script(file) else {
            let tried: Vec<String> = candidates(file).iter().map(|p| p.display().to_string()).collect();
            return Outcome::Hint(format!(
                "to draw the figure, run {} (no {SCRIPT} at {}: it is experiments/{SCRIPT} of the rdtp sources)",
                self.command(&Path::new("experiments").join(SCRIPT), kind, out),
                tried.join(", ")
            ));
        };
        let command = self.command(&script, kind, out);
        if let Some(what) = self.missing() {
            return Outcome::Hint(format!("to draw the figure ({what}: {INSTALL}): {command}"));
        }
        eprintln!("{program}: {command}");
        match Command::new(&self.python).arg(&script).arg(kind).arg(out).stdin(Stdio::null()).status() {
            Ok(s) if s.success() => Outcome::Drawn,
            Ok(s) => Outcome::Failed(format!("plotting failed ({s}): {command}")),
            Err(e) => Outcome::Failed(format!("cannot run {}: {e}", self.python.to_string_lossy())),
        }
    }
}

/// Draw figure `kind` of `out` for the scenario or experiment `file` with the interpreter
/// [`Plotter::from_env`] picks, and say on stderr (`<program>: …`) what could not be done.
/// The caller's exit status must not depend on the outcome.
pub fn draw(program: &str, file: &Path, kind: &str, out: &Path) -> Outcome {
    let outcome = Plotter::from_env().draw(program, file, kind, out);
    match &outcome {
        Outcome::Drawn => {}
        Outcome::Hint(text) | Outcome::Failed(text) => eprintln!("{program}: {text}"),
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rdtp-plot-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_script_is_found_beside_the_file_then_in_experiments_next_to_its_directory() {
        let root = scratch("find");
        for d in ["experiments", "testbed", "elsewhere"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("experiments").join(SCRIPT), "").unwrap();
        let found = |f: &str| find_script(&root.join(f)).map(|p| p.canonicalize().unwrap());
        let script = Some(root.join("experiments").join(SCRIPT).canonicalize().unwrap());
        assert_eq!(found("experiments/fig7a.toml"), script, "beside a scenario");
        assert_eq!(found("testbed/fig7a.toml"), script, "experiments/ next to testbed/");
        assert_eq!(candidates(Path::new("fig7a.toml"))[0], Path::new(".").join(SCRIPT), "a bare file name");
        assert_eq!(candidates(Path::new("testbed/fig8.toml"))[1], Path::new("./experiments/plot.py"));
        assert_eq!(candidates(Path::new("/x/testbed/fig8.toml"))[1], Path::new("/x/experiments/plot.py"));
        assert_eq!(candidates(Path::new("../fig8.toml"))[1], Path::new("../../experiments/plot.py"));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_missing_interpreter_gives_a_hint_naming_the_set_up_and_the_command() {
        let root = scratch("hint");
        std::fs::create_dir_all(root.join("experiments")).unwrap();
        std::fs::write(root.join("experiments").join(SCRIPT), "raise SystemExit(1)\n").unwrap();
        let file = root.join("experiments").join("x.toml");
        let p = Plotter::with_python(root.join("no-such-python3"));
        let Outcome::Hint(text) = p.draw("test", &file, "tb-fig7a", &root.join("out")) else {
            panic!("a hint expected")
        };
        assert!(text.contains("is not installed") && text.contains("tools/setup.sh"), "{text}");
        assert!(
            text.ends_with(&format!(
                "{} tb-fig7a {}",
                root.join("experiments").join(SCRIPT).display(),
                root.join("out").display()
            )),
            "{text}"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn without_the_script_the_hint_says_where_it_looked() {
        let root = scratch("noscript");
        let p = Plotter::with_python("python3");
        let Outcome::Hint(text) = p.draw("test", &root.join("x.toml"), "fig8", &root.join("out")) else {
            panic!("a hint expected")
        };
        assert!(text.contains("experiments/plot.py fig8") && text.contains("no plot.py at"), "{text}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
