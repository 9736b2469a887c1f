//! The default-controller suite's ns-3 part (`experiments/suite/`, run by `tools/suite.sh`):
//! every file expands with the controller the script sets (`flow.0.cc`), the controller's
//! flows are `[[flow]]` 0 alone (the only rdtp or workload flows), and `plot.py suite`
//! scores a hand-made suite as the docs say: the best per row, the candidate's margin, and
//! each goal it misses. The Python part is skipped, saying so, without python3 and matplotlib.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_suite_file_takes_the_controller_on_flow_0_only() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("experiments/suite"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    let sets = [("flow.0.cc".to_string(), "bbr3:queue_signal=0".to_string())];
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let (_, runs) = rdtp_scenario::expand(&text, &sets).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(!runs.is_empty(), "{}", f.display());
        for r in &runs {
            let flows = &r.scenario.flows;
            assert_eq!(flows[0].cc.as_deref(), Some("bbr3:queue_signal=0"), "{}: {}", f.display(), r.id);
            assert!(
                matches!(flows[0].kind.as_str(), "rdtp" | "workload"),
                "{}: flow 0 is {}",
                f.display(),
                flows[0].kind
            );
            for (i, other) in flows.iter().enumerate().skip(1) {
                assert!(
                    !matches!(other.kind.as_str(), "rdtp" | "workload"),
                    "{}: flow {i} is {}: only flow 0 may be the controller's",
                    f.display(),
                    other.kind
                );
            }
            // Two runs per point unless the script says otherwise.
            assert_eq!(r.scenario.scenario.repeat, 2, "{}", f.display());
        }
    }
}

/// A suite of two controllers on three rows: a harness `fetch` row (scored by 1 / FCT), a
/// wired ns-3 row beside TCP CUBIC, and a WiFi row; the candidate `b`.
#[test]
fn plot_py_scores_the_suite_by_row() {
    let py = Command::new("python3").args(["-c", "import matplotlib"]).output();
    if !py.is_ok_and(|o| o.status.success()) {
        eprintln!("SKIPPED: python3 with matplotlib is not available (tools/setup.sh)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("rdtp-suite-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let w = |p: &str, text: &str| {
        let path = dir.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    w("suite.json", r#"{"candidate": "b", "runs": 1, "seeds": 2, "controllers": ["a", "b"]}"#);
    w(
        "harness.csv",
        "scenario,group,controller,seed,goodput_mbps,fct_s,rtt_ratio,rerequested_pct,spurious_pct,jain,timeouts,exact\n\
         fetch 1MB,fetch,\"a\",1,8,1.0,1.0,0,0,,0,true\n\
         fetch 1MB,fetch,\"a\",2,8,1.0,1.0,0,0,,0,true\n\
         fetch 1MB,fetch,\"b\",1,8,1.02,1.0,0,0,,0,true\n\
         fetch 1MB,fetch,\"b\",2,8,1.06,1.0,0,0,,0,true\n",
    );
    let head = "run_id,flow.1,seed,run,rep,flow,kind,cc,client,start_s,stop_s,bytes,goodput_mbps,mean_rtt_ms,min_rtt_ms,\
                retransmissions,timeouts,completed,finish_s\n";
    // Wired beside TCP: a takes 90 of 100 (share 0.9), b 95 (0.95: TCP starves).
    for (cc, mine, tcp) in [("a", "90", "10"), ("b", "95", "5")] {
        w(&format!("sim/cross/{cc}/scenario.toml"), "[topology]\nkind = \"dumbbell\"\n");
        w(
            &format!("sim/cross/{cc}/summary.csv"),
            &format!(
                "{head}000_x,vs-cubic,1,1,0,0,rdtp,{cc},0,0,40,1,{mine},30,20,0,0,0,\n\
                 000_x,vs-cubic,1,1,0,1,tcp-cubic,cubic,1,0,40,1,{tcp},30,20,0,0,0,\n"
            ),
        );
    }
    // WiFi: b delivers more (no margin lost) but with more delay than a.
    let head = "run_id,seed,run,rep,flow,kind,cc,client,start_s,stop_s,bytes,goodput_mbps,mean_rtt_ms,min_rtt_ms,\
                retransmissions,timeouts,completed,finish_s\n";
    for (cc, gp, rtt) in [("a", "200", "5"), ("b", "210", "9")] {
        w(&format!("sim/wifi/{cc}/scenario.toml"), "[topology]\nkind = \"wifi\"\n");
        w(
            &format!("sim/wifi/{cc}/summary.csv"),
            &format!("{head}000,1,1,0,0,rdtp,{cc},0,0,20,1,{gp},{rtt},2,0,0,0,\n"),
        );
    }
    let out = Command::new("python3").arg(repo().join("experiments/plot.py")).arg("suite").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(dir.join("suite.md")).unwrap();
    let row =
        |name: &str| md.lines().find(|l| l.starts_with(&format!("| {name}"))).unwrap_or_else(|| panic!("{name}: {md}"));
    // FCT 1.04 against 1.00: 1/1.04 − 1 = −3.8 %.
    let fetch = row("harness: fetch 1MB (FCT)");
    assert!(fetch.contains("| 1.00 | 1.04 | a | -3.8 % |") && fetch.contains("✗ margin"), "{fetch}");
    let cross = row("cross vs-cubic");
    assert!(cross.contains("| 90.00 | 95.00 | b | +0.0 % |"), "{cross}");
    assert!(cross.contains("0.95") && cross.contains("✗ starvation") && !cross.contains("RTT"), "{cross}");
    let wifi = row("wifi");
    assert!(wifi.contains("| b | +0.0 % | 9.0 ms |") && wifi.contains("✗ RTT"), "{wifi}");
    assert!(dir.join("suite.png").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}
