//! `experiments/rdtp_stats.py` (what `plot.py` derives its own numbers with) answers as this
//! crate does: the nearest-rank quantile, Student's t quantile and the mean's 95 % interval.
//! Skipped, saying so, without `python3`.

use std::process::Command;

use rdtp_units::quantile_index;
use rdtp_units::stats::{spread, student_t_quantile};

const QS: [f64; 9] = [0.0, 0.01, 0.1, 0.25, 0.5, 0.9, 0.95, 0.99, 1.0];

fn dfs() -> Vec<f64> {
    (1..=60).map(f64::from).chain([100.0, 250.0, 999.0, 10_000.0]).collect()
}

fn samples() -> Vec<Vec<f64>> {
    vec![
        vec![1.0, 2.0],
        vec![3.2, 2.9, 3.7, 3.1, 2.8],
        (0..40).map(|i| f64::from(i * i % 17) * 0.37 + 1.0).collect(),
        (0..1000).map(|i| (f64::from(i) * 0.618).fract() * 12.5).collect(),
    ]
}

#[test]
fn plot_py_statistics_are_the_rust_ones() {
    let module = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments");
    let list = |v: &[f64]| v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(", ");
    let samples = samples();
    let script = format!(
        "import sys\nsys.path.insert(0, {module:?})\nimport rdtp_stats as s\n\
         for n in range(26):\n    for q in [{qs}]:\n        i = s.quantile_index(n, q)\n        print(-1 if i is None else i)\n\
         for df in [{dfs}]:\n    print(repr(s.student_t_quantile(0.975, df)))\n\
         for v in [{samples}]:\n    n, mean, ci = s.spread(v)\n    print(repr(mean))\n    print(repr(ci))\n",
        qs = list(&QS),
        dfs = list(&dfs()),
        samples = samples.iter().map(|v| format!("[{}]", list(v))).collect::<Vec<_>>().join(", "),
    );
    let out = match Command::new("python3").arg("-c").arg(&script).output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("SKIPPED: python3 is not available ({e})");
            return;
        }
    };
    assert!(out.status.success(), "python3 failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let mut next = || lines.next().expect("python3 printed too few lines").to_string();

    for n in 0..26 {
        for q in QS {
            let want = quantile_index(n, q).map_or(-1, |i| i as i64);
            assert_eq!(next().parse::<i64>().unwrap(), want, "quantile index of n = {n}, q = {q}");
        }
    }
    let close = |a: f64, b: f64, what: &str| assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{what}: {a} vs {b}");
    for df in dfs() {
        close(next().parse().unwrap(), student_t_quantile(0.975, df), &format!("t(0.975, {df})"));
    }
    for v in &samples {
        let s = spread(v).unwrap();
        close(next().parse().unwrap(), s.mean, "mean");
        close(next().parse().unwrap(), s.ci95.unwrap(), "ci95");
    }
}
