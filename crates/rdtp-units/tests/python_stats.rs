//! `experiments/rdtp_stats.py` (what `plot.py` derives its own numbers with) answers as this
//! crate does: the nearest-rank quantile, Student's t quantile and the mean's 95 % interval;
//! and its paired tests (Python only: how `plot.py` compares schemes run by run) give what
//! tiny examples computed by hand give. Skipped, saying so, without `python3`.

use std::process::{Command, Output};

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
    let list = |v: &[f64]| v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(", ");
    let samples = samples();
    let script = format!(
        "import rdtp_stats as s\n\
         for n in range(26):\n    for q in [{qs}]:\n        i = s.quantile_index(n, q)\n        print(-1 if i is None else i)\n\
         for df in [{dfs}]:\n    print(repr(s.student_t_quantile(0.975, df)))\n\
         for v in [{samples}]:\n    n, mean, ci = s.spread(v)\n    print(repr(mean))\n    print(repr(ci))\n",
        qs = list(&QS),
        dfs = list(&dfs()),
        samples = samples.iter().map(|v| format!("[{}]", list(v))).collect::<Vec<_>>().join(", "),
    );
    let Some(out) = python(&script) else { return };
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

/// `python3 -c script` with `experiments/` on the module path; None (saying so) without python3.
fn python(script: &str) -> Option<Output> {
    let module = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments");
    let script = format!("import sys\nsys.path.insert(0, {module:?})\n{script}");
    let out = match Command::new("python3").arg("-c").arg(&script).output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("SKIPPED: python3 is not available ({e})");
            return None;
        }
    };
    assert!(out.status.success(), "python3 failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(out)
}

/// The paired tests on examples small enough to do by hand.
///
/// Differences d = 2, 4, 6, 8 (x = 3, 5, 7, 9 against y = 1, 1, 1, 1): mean 5, s² = 20/3, so
/// the standard error is √(5/3) and t = 5 / √(5/3) = √15 on 3 degrees of freedom. Student's t
/// with 3 degrees of freedom has the closed-form CDF 1/2 + (u/(1 + u²) + atan u)/π with u =
/// t/√3; here u = √5, so P(|T| ≥ √15) = 1 − (2/π)(√5/6 + atan √5) = 0.0305 (significant at
/// 5 %); the interval is t(0.975, 3)·√(5/3). Wilcoxon: all four differences positive, W+ =
/// 1 + 2 + 3 + 4 = 10, the largest of the 16 sign patterns' sums, so p = 2/16 = 0.125 (four
/// pairs can never reach 5 % by ranks). With ties and a zero, d = 1, −1, 2, 3, 3, 0: the zero
/// is dropped, |d| ranks 1.5, 1.5, 3, 4.5, 4.5, W+ = 13.5, W− = 1.5; of the 32 sign patterns,
/// those with W− ≤ 1.5 are {}, {first 1.5}, {second 1.5}: p = 2 · 3/32. Ten differences
/// whose negative ranks are 1, 2 and 5 (W− = 8): 25 of the 1 024 patterns have W− ≤ 8, p =
/// 50/1024 = 0.0488, just inside the tables' critical value of 8 for n = 10; with 1, 2 and
/// 6 (W− = 9), 33 patterns, p = 66/1024.
#[test]
fn plot_py_paired_tests_on_hand_computed_examples() {
    let script = "import math\nimport rdtp_stats as s\nnan = float('nan')\n\
        c = s.compare([3, 5, 7, 9], [1, 1, 1, 1])\n\
        print(c['n'], repr(c['diff']), repr(c['ci95']), repr(c['t']), repr(c['p_t']), repr(c['p_wilcoxon']), \
        repr(c['relative']), c['significant'])\n\
        w = s.wilcoxon([1, -1, 2, 3, 3, 0], [0] * 6)\nprint(w['n'], repr(w['w_plus']), repr(w['p']))\n\
        print(repr(s.wilcoxon([-1, -2, -5, 3, 4, 6, 7, 8, 9, 10], [0] * 10)['p']))\n\
        print(repr(s.wilcoxon([-1, -2, -6, 3, 4, 5, 7, 8, 9, 10], [0] * 10)['p']))\n\
        t = s.paired_t([1, nan, 3, 4], [0, 5, 1, nan])\nprint(t['n'], repr(t['diff']))\n\
        print(repr(s.paired_t([2, 3], [1, 2])['p']), repr(s.paired_t([2, 3], [2, 3])['p']))\n\
        print(s.compare([1, 2], [nan, 3]) is None, repr(s.wilcoxon([1, 2], [1, 2])['p']))\n";
    let Some(out) = python(script) else { return };
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(' ').collect()).collect();
    let f = |s: &str| s.parse::<f64>().unwrap();
    let close = |a: f64, b: f64, what: &str| assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{what}: {a} vs {b}");

    let c = &lines[0];
    assert_eq!(c[0], "4");
    close(f(c[1]), 5.0, "mean difference");
    close(f(c[2]), student_t_quantile(0.975, 3.0) * (5.0f64 / 3.0).sqrt(), "95 % half-width");
    close(f(c[3]), 15.0f64.sqrt(), "t");
    let p = 1.0 - 2.0 / std::f64::consts::PI * (5.0f64.sqrt() / 6.0 + 5.0f64.sqrt().atan());
    close(f(c[4]), p, "paired t p");
    assert!((f(c[4]) - 0.0305).abs() < 1e-4, "p = {}", c[4]);
    close(f(c[5]), 2.0 / 16.0, "Wilcoxon p, n = 4");
    close(f(c[6]), 6.0 / 1.0 - 1.0, "relative difference");
    assert_eq!(c[7], "True", "significant at 5 %");

    let w = &lines[1];
    assert_eq!(w[0], "5", "the zero difference is dropped");
    close(f(w[1]), 13.5, "W+ with tied ranks");
    close(f(w[2]), 6.0 / 32.0, "Wilcoxon p with ties");
    close(f(lines[2][0]), 50.0 / 1024.0, "Wilcoxon p, n = 10, W- = 8");
    close(f(lines[3][0]), 66.0 / 1024.0, "Wilcoxon p, n = 10, W- = 9");

    assert_eq!(lines[4][0], "2", "pairs with a NaN are left out");
    close(f(lines[4][1]), 1.5, "mean of the differences 1 and 2");
    close(f(lines[5][0]), 0.0, "equal non-zero differences: p = 0");
    close(f(lines[5][1]), 1.0, "zero differences: p = 1");
    assert_eq!(lines[6][0], "True", "fewer than two pairs: no comparison");
    close(f(lines[6][1]), 1.0, "Wilcoxon without non-zero differences");
}
