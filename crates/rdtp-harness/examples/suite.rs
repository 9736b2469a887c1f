//! The controller suite's harness part (`rdtp_harness::suite`): every scenario × every
//! controller, a Markdown table with the candidate's margin to the best in each row and its
//! goals (docs/CONTROLLER.md), and a CSV of every number (`experiments/plot.py suite DIR`
//! draws the heat map from it).
//!
//! ```text
//! cargo run --release -p rdtp-harness --example suite -- [--cc bbr,bbr3,…] [--candidate NAME]
//!     [--cc SPEC:KEY=V,…] [--rates 10,100] [--group grid,loss,flows,fetch] [--seeds N] [--jobs J] [--csv FILE]
//! ```
//!
//! Defaults: every registry controller, the candidate is the receiver's default controller,
//! grid rates 10 and 100 Mbit/s, every group, one seed, one job. With `--seeds N` each
//! scenario runs with seeds 1..=N and the table shows the mean over runs (the run is the
//! unit; the CSV holds every run). Runs are deterministic: `--jobs` changes only the wall time.

use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rdtp_harness::suite::{self, Kind, Outcome, Scenario};
use rdtp_proto::cc::CcConfig;

const USAGE: &str = "usage: suite [--cc bbr,bbr3,…] [--cc SPEC:KEY=V,…] [--candidate NAME] [--rates 10,100]
             [--group grid,loss,flows,fetch] [--seeds N] [--jobs J] [--csv FILE]
defaults: every registry controller, the receiver's default controller as the candidate, rates 10
and 100 Mbit/s, every group, one seed, one job (docs/CONTROLLER.md, \"The suite\")";

struct Args {
    ccs: Vec<String>,
    candidate: String,
    rates: Vec<f64>,
    groups: Vec<String>,
    seeds: u64,
    jobs: usize,
    csv: Option<String>,
}

fn parse_args() -> Args {
    let mut a = Args {
        ccs: CcConfig::NAMES.iter().map(|s| s.to_string()).collect(),
        candidate: CcConfig::default().name().to_string(),
        rates: vec![10.0, 100.0],
        groups: ["grid", "loss", "flows", "fetch"].iter().map(|s| s.to_string()).collect(),
        seeds: 1,
        jobs: 1,
        csv: None,
    };
    let mut it = std::env::args().skip(1);
    let mut cc_given = false;
    let words = |v: Option<String>| -> Vec<String> {
        v.expect("a list").split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
    };
    while let Some(flag) = it.next() {
        match flag.as_str() {
            // A spec with keys (`bbr3:cwnd_gain=1.5,probe_rtt=false`) is one controller per
            // `--cc`; a value without `:` is a comma-separated list. Repeat `--cc` to add more.
            "--cc" => {
                if !cc_given {
                    a.ccs.clear();
                    cc_given = true;
                }
                let v = it.next().expect("a controller list");
                if v.contains(':') { a.ccs.push(v) } else { a.ccs.extend(words(Some(v))) }
            }
            "--candidate" => a.candidate = it.next().expect("a controller"),
            "--rates" => a.rates = words(it.next()).iter().map(|x| x.parse().expect("a rate in Mbit/s")).collect(),
            "--group" => a.groups = words(it.next()),
            "--seeds" => a.seeds = it.next().and_then(|v| v.parse().ok()).expect("a number of seeds"),
            "--jobs" => a.jobs = it.next().and_then(|v| v.parse().ok()).expect("a number of jobs"),
            "--csv" => a.csv = it.next(),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => {
                eprintln!("suite: unknown option {other}\n{USAGE}");
                std::process::exit(2);
            }
        }
    }
    if !a.ccs.contains(&a.candidate) {
        a.ccs.insert(0, a.candidate.clone());
    }
    a
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = xs.collect();
    if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 }
}

/// The mean over runs of one controller in one scenario.
#[derive(Clone, Debug, Default)]
struct Cell {
    score: f64,
    goodput_bps: f64,
    fct: Option<f64>,
    rtt_ratio: f64,
    spurious_pct: f64,
    jain: Option<f64>,
    exact: bool,
}

fn cell(kind: &Kind, runs: &[Outcome]) -> Cell {
    let n = runs.len() as f64;
    let fcts: Vec<f64> = runs.iter().filter_map(|o| o.fct.map(|t| t.as_secs_f64())).collect();
    Cell {
        score: mean(runs.iter().map(|o| o.score(kind))),
        goodput_bps: mean(runs.iter().map(|o| o.goodput_bps)),
        fct: (fcts.len() == runs.len()).then(|| fcts.iter().sum::<f64>() / n),
        rtt_ratio: mean(runs.iter().map(|o| o.rtt_ratio)),
        spurious_pct: mean(runs.iter().map(|o| o.spurious_pct)),
        jain: runs.iter().all(|o| o.jain.is_some()).then(|| mean(runs.iter().filter_map(|o| o.jain))),
        exact: runs.iter().all(|o| o.exact),
    }
}

fn main() {
    let a = parse_args();
    let scenarios: Vec<Scenario> =
        suite::scenarios(&a.rates).into_iter().filter(|s| a.groups.iter().any(|g| g == s.group)).collect();
    let ccs: Vec<CcConfig> = a.ccs.iter().map(|c| c.parse().unwrap_or_else(|e| panic!("--cc {c}: {e}"))).collect();
    let jobs: Vec<(usize, usize, u64)> = (0..scenarios.len())
        .flat_map(|s| (0..ccs.len()).flat_map(move |c| (1..=a.seeds).map(move |seed| (s, c, seed))))
        .collect();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, usize, u64, Outcome)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..a.jobs.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(s, c, seed)) = jobs.get(i) else { break };
                    let o = suite::run(&scenarios[s], &ccs[c], seed);
                    eprintln!("{} · {} · seed {seed}: {:.2} Mbit/s", scenarios[s].name, a.ccs[c], o.goodput_bps / 1e6);
                    results.lock().unwrap().push((s, c, seed, o));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| (r.0, r.1, r.2));

    if let Some(path) = &a.csv {
        let mut csv = String::from(
            "scenario,group,controller,seed,goodput_mbps,fct_s,rtt_ratio,rerequested_pct,spurious_pct,jain,timeouts,exact\n",
        );
        for (s, c, seed, o) in &results {
            let _ = writeln!(
                csv,
                "{},{},\"{}\",{seed},{:.4},{},{:.4},{:.4},{:.4},{},{},{}",
                scenarios[*s].name,
                scenarios[*s].group,
                a.ccs[*c],
                o.goodput_bps / 1e6,
                o.fct.map_or(String::new(), |t| format!("{:.4}", t.as_secs_f64())),
                o.rtt_ratio,
                o.rerequested_pct,
                o.spurious_pct,
                o.jain.map_or(String::new(), |j| format!("{j:.4}")),
                o.timeouts,
                o.exact
            );
        }
        std::fs::write(path, csv).unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }

    let cand = a.ccs.iter().position(|c| *c == a.candidate).unwrap();
    println!(
        "Goodput in Mbit/s (for `fetch` rows: completion time in s); mean over {} seed(s). Margin: the candidate `{}` against the best in the row (its goodput or 1/FCT over the best's, − 1). Goals: margin ≥ −3 %, mean RTT ≤ 1.15 × RTprop (not for `fetch` rows), spurious re-requests ≤ 1 %, Jain ≥ 0.98 among its own flows; ✗ marks each one missed.\n",
        a.seeds, a.candidate
    );
    let mut head = String::from("| scenario |");
    let mut rule = String::from("|---|");
    for c in &a.ccs {
        let _ = write!(head, " {c} |");
        rule.push_str("---|");
    }
    println!("{head} best | margin | RTT/RTprop | spurious % | Jain | goals |");
    println!("{rule}---|---|---|---|---|---|");
    let (mut met, mut rows) = (0, 0);
    for (s, sc) in scenarios.iter().enumerate() {
        let cells: Vec<Cell> = (0..ccs.len())
            .map(|c| {
                let runs: Vec<Outcome> = results.iter().filter(|r| r.0 == s && r.1 == c).map(|r| r.3.clone()).collect();
                cell(&sc.kind, &runs)
            })
            .collect();
        let best = (0..cells.len()).max_by(|&x, &y| cells[x].score.total_cmp(&cells[y].score)).unwrap();
        let mut line = format!("| {} |", sc.name);
        for c in &cells {
            let v = match sc.kind {
                Kind::Fetch { .. } => c.fct.map_or("—".to_string(), |t| format!("{t:.2}")),
                _ => format!("{:.1}", c.goodput_bps / 1e6),
            };
            let _ = write!(line, " {v}{} |", if c.exact { "" } else { "!" });
        }
        let me = &cells[cand];
        let margin = if cells[best].score > 0.0 { me.score / cells[best].score - 1.0 } else { 0.0 };
        let mut missed = Vec::new();
        if margin < -0.03 {
            missed.push("✗ margin");
        }
        // A fetch's RTT is mostly Startup's (completion time is its measure).
        if me.rtt_ratio > 1.15 && !matches!(sc.kind, Kind::Fetch { .. }) {
            missed.push("✗ RTT");
        }
        if me.spurious_pct > 1.0 {
            missed.push("✗ spurious");
        }
        if me.jain.is_some_and(|j| j < 0.98) {
            missed.push("✗ Jain");
        }
        if !me.exact {
            missed.push("✗ not exact");
        }
        rows += 1;
        if missed.is_empty() {
            met += 1;
        }
        println!(
            "{line} {} | {:+.1} % | {:.2} | {:.2} | {} | {} |",
            a.ccs[best],
            margin * 100.0,
            me.rtt_ratio,
            me.spurious_pct,
            me.jain.map_or("—".to_string(), |j| format!("{j:.3}")),
            if missed.is_empty() { "✓".to_string() } else { missed.join(" ") }
        );
    }
    println!(
        "\n`{}` meets every goal in {met} of {rows} rows. `!`: a flow failed, was not byte-exact or did not finish.",
        a.candidate
    );
}
