//! `summary.csv`: one row per run and flow — the sweep parameters, the flow's row of
//! `flows.csv`, and the run's bottleneck utilisation and mean queueing delay (from
//! `run.toml`). `summary-mean.csv`: one row per sweep point and flow — every numeric column
//! of those rows as the mean over the point's repetitions (`scenario.repeat`), with the
//! half-width of its 95 % confidence interval (Student t), minimum and maximum. Neither
//! contains wall-clock values, so both are as deterministic as the runs. CSV is read and
//! written with the `csv` crate.

use std::fs;
use std::path::Path;

use toml::{Table, Value};

use crate::error::Error;
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

pub fn read_run(dir: &Path) -> Result<RunResult, Error> {
    let path = dir.join("flows.csv");
    let mut csv = csv::ReaderBuilder::new().flexible(true).from_path(&path).map_err(|e| Error::file(&path, e))?;
    let header: Vec<String> = csv.headers().map_err(|e| Error::file(&path, e))?.iter().map(str::to_string).collect();
    let rows = csv
        .records()
        .map(|r| r.map(|r| r.iter().map(str::to_string).collect()))
        .collect::<Result<Vec<Vec<String>>, _>>()
        .map_err(|e| Error::file(&path, e))?;
    let run_toml = fs::read_to_string(dir.join("run.toml")).map_err(|e| Error::file(&dir.join("run.toml"), e))?;
    let t: Table = run_toml.parse().map_err(|e| Error::file(Path::new("run.toml"), e))?;
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

/// The run-level columns that follow a flow's columns.
const RUN_COLUMNS: [&str; 2] = ["utilisation", "mean_queue_delay_ms"];

impl RunResult {
    /// The cells of [`RUN_COLUMNS`].
    fn run_cells(&self) -> [String; 2] {
        [opt(self.utilisation), opt(self.mean_queue_delay_ms)]
    }
}

/// Columns of `flows.csv` that identify or configure a flow rather than measure it: copied
/// (when the same in every run), not averaged.
const IDENTITY: [&str; 6] = ["flow", "kind", "cc", "client", "start_s", "stop_s"];

/// Write `summary-mean.csv`: for each sweep point and flow, the mean of every numeric column
/// over the point's runs that produced results (`runs` says how many), followed by
/// `<column>_ci95` (half-width of the 95 % confidence interval, Student t; empty for a
/// single run), `<column>_min` and `<column>_max`. A cell missing or non-numeric in any run
/// (e.g. `finish_s` of a flow that did not finish) leaves all four empty. `run_id` is the
/// point's first run with results (whose directory plots use for time series).
pub fn write_means(path: &Path, keys: &[String], runs: &[Run], results: &[Option<RunResult>]) -> Result<(), Error> {
    let flows_header =
        results.iter().flatten().map(|r| r.flows_header.clone()).next().unwrap_or_else(|| vec!["flow".to_string()]);
    let columns: Vec<String> = flows_header.iter().cloned().chain(RUN_COLUMNS.map(String::from)).collect();
    // Numeric: every non-empty cell of the column, in every run, is a number.
    let rows = || results.iter().flatten().flat_map(|r| r.flows.iter().map(move |f| (f, r)));
    let cell = |flow: &Vec<String>, res: &RunResult, c: usize| -> String {
        if c < flow.len() { flow[c].clone() } else { res.run_cells()[c - flow.len()].clone() }
    };
    let numeric: Vec<bool> = (0..columns.len())
        .map(|c| {
            !IDENTITY.contains(&columns[c].as_str())
                && rows().all(|(f, r)| {
                    let v = cell(f, r, c);
                    v.is_empty() || v.parse::<f64>().is_ok()
                })
        })
        .collect();
    let mut header: Vec<String> = vec!["run_id".into()];
    header.extend(keys.iter().cloned());
    header.extend(["seed".to_string(), "runs".to_string()]);
    for (c, name) in columns.iter().enumerate() {
        header.push(name.clone());
        if numeric[c] {
            header.extend(["ci95", "min", "max"].map(|s| format!("{name}_{s}")));
        }
    }
    let err = |e: csv::Error| Error::file(path, e);
    let mut out = csv::WriterBuilder::new().flexible(true).from_path(path).map_err(err)?;
    out.write_record(&header).map_err(err)?;
    let mut i = 0;
    while i < runs.len() {
        let point = runs[i].point;
        let end = runs[i..].iter().position(|r| r.point != point).map_or(runs.len(), |n| i + n);
        let done: Vec<(&Run, &RunResult)> =
            runs[i..end].iter().zip(&results[i..end]).filter_map(|(r, res)| Some((r, res.as_ref()?))).collect();
        i = end;
        let Some((first, _)) = done.first() else { continue };
        let flows = done.iter().map(|(_, r)| r.flows.len()).max().unwrap_or(0);
        for f in 0..flows {
            let mut cells: Vec<String> = vec![first.id.clone()];
            cells.extend(first.assignment.iter().map(|(_, v)| show(v)));
            cells.push(first.scenario.scenario.seed.to_string());
            cells.push(done.len().to_string());
            for (c, &is_numeric) in numeric.iter().enumerate() {
                let values: Vec<String> =
                    done.iter().map(|(_, r)| r.flows.get(f).map(|row| cell(row, r, c)).unwrap_or_default()).collect();
                if !is_numeric {
                    let same = values.iter().all(|v| *v == values[0]);
                    cells.push(if same { values[0].clone() } else { String::new() });
                    continue;
                }
                let parsed: Option<Vec<f64>> = values.iter().map(|v| v.parse::<f64>().ok()).collect();
                match parsed.as_deref().and_then(rdtp_units::stats::spread) {
                    Some(s) => cells.extend([num(s.mean), s.ci95.map(num).unwrap_or_default(), num(s.min), num(s.max)]),
                    None => cells.extend(std::iter::repeat_n(String::new(), 4)),
                }
            }
            out.write_record(&cells).map_err(err)?;
        }
    }
    out.flush().map_err(|e| Error::file(path, e))
}

/// A number in `summary-mean.csv`: at most 6 decimals, no trailing zeros.
fn num(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".to_string() } else { s.to_string() }
}

/// Write `summary.csv` for the runs that produced results.
pub fn write_summary(path: &Path, keys: &[String], runs: &[Run], results: &[Option<RunResult>]) -> Result<(), Error> {
    let flows_header =
        results.iter().flatten().map(|r| r.flows_header.clone()).next().unwrap_or_else(|| vec!["flow".to_string()]);
    let mut header: Vec<String> = vec!["run_id".into()];
    header.extend(keys.iter().cloned());
    header.extend(["seed".to_string(), "run".to_string(), "rep".to_string()]);
    header.extend(flows_header.iter().cloned());
    header.extend(RUN_COLUMNS.map(String::from));
    let err = |e: csv::Error| Error::file(path, e);
    let mut out = csv::WriterBuilder::new().flexible(true).from_path(path).map_err(err)?;
    out.write_record(&header).map_err(err)?;
    for (run, res) in runs.iter().zip(results) {
        let Some(res) = res else { continue };
        for row in &res.flows {
            let mut cells: Vec<String> = vec![run.id.clone()];
            cells.extend(run.assignment.iter().map(|(_, v)| show(v)));
            cells.push(run.scenario.scenario.seed.to_string());
            cells.push(run.scenario.scenario.run.to_string());
            cells.push(run.rep.to_string());
            cells.extend(row.iter().cloned());
            cells.extend(res.run_cells());
            out.write_record(&cells).map_err(err)?;
        }
    }
    out.flush().map_err(|e| Error::file(path, e))
}
