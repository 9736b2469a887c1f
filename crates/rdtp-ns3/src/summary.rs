//! `summary.csv`: one row per run and flow — the sweep parameters, the flow's row of
//! `flows.csv`, and the run's bottleneck utilisation and mean queueing delay (from
//! `run.toml`). Contains no wall-clock values, so it is as deterministic as the runs. CSV is
//! read and written with the `csv` crate.

use std::fs;
use std::path::Path;

use toml::{Table, Value};

use rdtp_scenario::{Run, show};

/// Results of one finished run, read back from its directory.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    pub flows_header: Vec<String>,
    pub flows: Vec<Vec<String>>,
    pub utilisation: Option<f64>,
    pub mean_queue_delay_ms: Option<f64>,
    pub wall_s: Option<f64>,
    pub simulated_s: Option<f64>,
}

pub fn read_run(dir: &Path) -> Result<RunResult, String> {
    let path = dir.join("flows.csv");
    let mut csv =
        csv::ReaderBuilder::new().flexible(true).from_path(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let header: Vec<String> =
        csv.headers().map_err(|e| format!("{}: {e}", path.display()))?.iter().map(str::to_string).collect();
    let rows = csv
        .records()
        .map(|r| r.map(|r| r.iter().map(str::to_string).collect()))
        .collect::<Result<Vec<Vec<String>>, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let run_toml =
        fs::read_to_string(dir.join("run.toml")).map_err(|e| format!("{}: {e}", dir.join("run.toml").display()))?;
    let t: Table = run_toml.parse().map_err(|e| format!("run.toml: {e}"))?;
    let get = |sec: &str, key: &str| -> Option<f64> {
        match t.get(sec)?.get(key)? {
            Value::Float(f) => Some(*f),
            Value::Integer(i) => Some(*i as f64),
            _ => None,
        }
    };
    Ok(RunResult {
        flows_header: header,
        flows: rows,
        utilisation: get("results", "utilisation"),
        mean_queue_delay_ms: get("results", "mean_queue_delay_ms"),
        wall_s: get("run", "wall_s"),
        simulated_s: get("run", "simulated_s"),
    })
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.6}")).unwrap_or_default()
}

/// Write `summary.csv` for the runs that produced results.
pub fn write_summary(path: &Path, keys: &[String], runs: &[Run], results: &[Option<RunResult>]) -> Result<(), String> {
    let flows_header =
        results.iter().flatten().map(|r| r.flows_header.clone()).next().unwrap_or_else(|| vec!["flow".to_string()]);
    let mut header: Vec<String> = vec!["run_id".into()];
    header.extend(keys.iter().cloned());
    header.extend(["seed".to_string(), "run".to_string()]);
    header.extend(flows_header.iter().cloned());
    header.extend(["utilisation".to_string(), "mean_queue_delay_ms".to_string()]);
    let err = |e: csv::Error| format!("{}: {e}", path.display());
    let mut out = csv::WriterBuilder::new().flexible(true).from_path(path).map_err(err)?;
    out.write_record(&header).map_err(err)?;
    for (run, res) in runs.iter().zip(results) {
        let Some(res) = res else { continue };
        for row in &res.flows {
            let mut cells: Vec<String> = vec![run.id.clone()];
            cells.extend(run.assignment.iter().map(|(_, v)| show(v)));
            cells.push(run.scenario.scenario.seed.to_string());
            cells.push(run.scenario.scenario.run.to_string());
            cells.extend(row.iter().cloned());
            cells.push(opt(res.utilisation));
            cells.push(opt(res.mean_queue_delay_ms));
            out.write_record(&cells).map_err(err)?;
        }
    }
    out.flush().map_err(|e| format!("{}: {e}", path.display()))
}
