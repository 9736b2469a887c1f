//! Mean and confidence interval of repeated measurements: what `rdtp sim` reports for a
//! sweep point run `repeat = N` times.
//!
//! The interval is Student's t: `mean ± t(0.975, n − 1) · s / √n`, with `s` the sample
//! standard deviation. Repetitions of a simulation with independent random streams are
//! independent samples; with few of them (5–10) the normal approximation (1.96) would make
//! the interval 20–40 % too narrow, so the t quantile is computed exactly here (regularised
//! incomplete beta function, no table).

/// Mean, spread and 95 % confidence interval of a set of values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// How many values.
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator); `None` for one value.
    pub std: Option<f64>,
    /// Half-width of the 95 % confidence interval of the mean (Student t); `None` for one
    /// value.
    pub ci95: Option<f64>,
    pub min: f64,
    pub max: f64,
}

/// [`Spread`] of `values` (`None` if there are none, or one is not finite).
pub fn spread(values: &[f64]) -> Option<Spread> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let std = (n > 1).then(|| (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt());
    let ci95 = std.map(|s| student_t_quantile(0.975, (n - 1) as f64) * s / (n as f64).sqrt());
    Some(Spread { n, mean, std, ci95, min, max })
}

/// The `p`-quantile (0 < p < 1) of Student's t distribution with `df` > 0 degrees of
/// freedom, e.g. `student_t_quantile(0.975, 4)` = 2.776.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    assert!(p > 0.0 && p < 1.0 && df > 0.0, "t quantile of p = {p}, df = {df}");
    if p < 0.5 {
        return -student_t_quantile(1.0 - p, df);
    }
    // The CDF is increasing: bisect [0, hi] with hi doubled until it brackets p.
    let mut hi = 1.0;
    while student_t_cdf(hi, df) < p {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom.
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2.0, 0.5);
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The regularised incomplete beta function I_x(a, b) (Numerical Recipes §6.4: the
/// continued fraction, on whichever side converges quickly).
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        for aa in [m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))] {
            d = 1.0 + aa * d;
            if d.abs() < TINY {
                d = TINY;
            }
            c = 1.0 + aa / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            h *= d * c;
        }
        if (d * c - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: ≈ 15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 95 % critical values (any statistics textbook's table).
        for (df, want) in [
            (1.0, 12.7062),
            (2.0, 4.3027),
            (3.0, 3.1824),
            (4.0, 2.7764),
            (9.0, 2.2622),
            (19.0, 2.0930),
            (29.0, 2.0452),
            (120.0, 1.9799),
            (1e6, 1.9600),
        ] {
            let t = student_t_quantile(0.975, df);
            assert!((t - want).abs() < 5e-5, "df {df}: {t} vs {want}");
        }
        assert!((student_t_quantile(0.95, 4.0) - 2.1318).abs() < 5e-5);
        assert!((student_t_quantile(0.025, 4.0) + 2.7764).abs() < 5e-5);
        assert!((student_t_cdf(0.0, 3.0) - 0.5).abs() < 1e-15);
        // df = 1 is the Cauchy distribution: P(T ≤ 1) = 3/4.
        assert!((student_t_cdf(1.0, 1.0) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn spread_of_repetitions() {
        let s = spread(&[10.0, 12.0, 11.0, 9.0, 13.0]).unwrap();
        assert_eq!((s.n, s.mean, s.min, s.max), (5, 11.0, 9.0, 13.0));
        let sd = 2.5f64.sqrt(); // Σ(x − 11)² = 10, over n − 1 = 4
        assert!((s.std.unwrap() - sd).abs() < 1e-12);
        assert!((s.ci95.unwrap() - 2.776_445 * sd / 5f64.sqrt()).abs() < 1e-5);
        let one = spread(&[3.5]).unwrap();
        assert_eq!((one.mean, one.std, one.ci95), (3.5, None, None));
        assert_eq!(spread(&[4.0, 4.0]).unwrap().ci95, Some(0.0));
        assert_eq!(spread(&[]), None);
        assert_eq!(spread(&[1.0, f64::NAN]), None);
    }
}
