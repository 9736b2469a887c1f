//! Root-only end-to-end test: a testbed run draws the figure its file names (`[testbed] plot`)
//! when it ends, as `rdtp sim` does (crate rdtp-plot): `OUT/tb-fig7a.png` and its table when
//! Python 3 has matplotlib; without it (simulated with `RDTP_PYTHON` naming no program) a hint
//! naming tools/setup.sh and the command, and the same exit status. Skips
//! (`SKIPPED: <reason>`) as the other end-to-end tests do.

mod common;

use std::path::Path;
use std::process::Command;

/// One 4-s rdtp flow over a 20 Mbit/s, 20 ms dumbbell, swept as Fig. 7a's files are
/// (`flow.0` with a label, which tb-fig7a reads).
const EXPERIMENT: &str = r#"
testbed = { name = "figure", plot = "tb-fig7a", duration = 4.0, warmup = 1.0 }
path = { kind = "dumbbell", rate = "20Mbps", rtt = "20ms", queue = "1bdp" }
flow = [{ kind = "rdtp" }]
sweep = { "flow.0" = [{ kind = "rdtp", cc = "bbr", label = "rdtp-bbr" }] }
"#;

/// The workspace root: the testbed runs there, as from a source tree, so that an experiment
/// kept outside it (the test's temporary file) still finds experiments/plot.py.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().and_then(Path::parent).expect("the workspace root")
}

#[test]
fn a_run_draws_its_figure_or_says_how_to_without_another_exit_status() {
    let Some(programs) = common::ready() else { return };
    let has_matplotlib =
        Command::new("python3").args(["-c", "import matplotlib"]).output().is_ok_and(|o| o.status.success());

    // Without matplotlib (here: no interpreter at all): the hint, and success all the same.
    let run = common::run_with("figure-hint", EXPERIMENT, &programs, |c| {
        c.current_dir(root()).env("RDTP_PYTHON", "/nonexistent/python3");
    });
    run.assert_nothing_left_and_success();
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    let hint =
        stderr.lines().find(|l| l.contains("to draw the figure")).unwrap_or_else(|| panic!("no hint in {stderr}"));
    assert!(hint.starts_with("rdtp-testbed: "), "{hint}");
    assert!(hint.contains("tools/setup.sh") && hint.contains("python3-matplotlib"), "{hint}");
    assert!(hint.contains("experiments/plot.py tb-fig7a") && hint.contains(&run.out.display().to_string()), "{hint}");
    assert!(!run.out.join("tb-fig7a.png").exists(), "no figure without matplotlib");
    assert_eq!(common::csv(&run.out.join("summary.csv")).len(), 1, "the run's results are there all the same");
    run.clean();

    if !has_matplotlib {
        common::skip(
            "the figure half: python3 has no matplotlib (apt-get install python3-matplotlib, or tools/setup.sh)",
        );
        return;
    }
    let run = common::run_with("figure", EXPERIMENT, &programs, |c| {
        c.current_dir(root()).env_remove("RDTP_PYTHON");
    });
    run.assert_nothing_left_and_success();
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    assert!(stderr.contains("rdtp-testbed: python3 experiments/plot.py tb-fig7a"), "{stderr}");
    let png = run.out.join("tb-fig7a.png");
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}\n{stderr}", png.display()));
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000, "{} is no figure", png.display());
    let table = std::fs::read_to_string(run.out.join("tb-fig7a.md")).expect("tb-fig7a.md");
    assert!(table.contains("| 20 Mbit/s | 20ms |"), "{table}");
    run.clean();
}
