"""The statistics the Rust tools report, for plot.py: the same definitions as crate
rdtp-units, so a number plot.py derives means what the same number means in summary.csv.

* `quantile(sorted_values, q)`: nearest rank, element ceil(q·n) − 1 (`rdtp_units::quantile`).
* `student_t_quantile(p, df)` and `spread(values)`: mean ± t(0.975, n − 1)·s/√n, Student's t
  computed exactly by bisection of the CDF (`rdtp_units::stats`), not the normal 1.96.

Standard library only. `crates/rdtp-units/tests/python_stats.rs` checks these against the
Rust functions; change both together.
"""

import math


def quantile_index(n, q):
    """The index `quantile` picks in n sorted values (None for none)."""
    if n == 0:
        return None
    rank = math.ceil(min(max(q, 0.0), 1.0) * n)
    return min(max(rank, 1), n) - 1


def quantile(sorted_values, q):
    """The nearest-rank q-quantile (0..1) of ascending values; NaN for none."""
    i = quantile_index(len(sorted_values), q)
    return float("nan") if i is None else sorted_values[i]


_LANCZOS = (
    0.9999999999998099,
    676.5203681218851,
    -1259.1392167224028,
    771.3234287776531,
    -176.6150291621406,
    12.507343278686905,
    -0.13857109526572012,
    9.984369578019572e-6,
    1.5056327351493116e-7,
)


def _ln_gamma(x):
    """ln Γ(x) (Lanczos, g = 7), as rdtp_units::stats computes it."""
    if x < 0.5:
        return math.log(math.pi / math.sin(math.pi * x)) - _ln_gamma(1.0 - x)
    x -= 1.0
    total = _LANCZOS[0]
    for i in range(1, len(_LANCZOS)):
        total += _LANCZOS[i] / (x + i)
    t = x + 7.5
    return 0.5 * math.log(2.0 * math.pi) + (x + 0.5) * math.log(t) - t + math.log(total)


def _sum(values):
    """Left to right, as Rust's iterator sum (Python 3.12's sum() compensates)."""
    total = 0.0
    for v in values:
        total += v
    return total


def _beta_fraction(x, a, b):
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1.0 / d
    h = d
    for m in range(1, 301):
        m = float(m)
        m2 = 2.0 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            if abs(d) < tiny:
                d = tiny
            c = 1.0 + aa / c
            if abs(c) < tiny:
                c = tiny
            d = 1.0 / d
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _incomplete_beta(x, a, b):
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(_ln_gamma(a + b) - _ln_gamma(a) - _ln_gamma(b) + a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(x, a, b) / a
    return 1.0 - front * _beta_fraction(1.0 - x, b, a) / b


def student_t_cdf(t, df):
    """P(T <= t) for Student's t with df degrees of freedom."""
    tail = 0.5 * _incomplete_beta(df / (df + t * t), df / 2.0, 0.5)
    return 1.0 - tail if t >= 0.0 else tail


def student_t_quantile(p, df):
    """The p-quantile (0 < p < 1) of Student's t with df > 0 degrees of freedom."""
    assert 0.0 < p < 1.0 and df > 0.0, f"t quantile of p = {p}, df = {df}"
    if p < 0.5:
        return -student_t_quantile(1.0 - p, df)
    hi = 1.0
    while student_t_cdf(hi, df) < p:
        hi *= 2.0
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if student_t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return 0.5 * (lo + hi)


def spread(values):
    """(n, mean, ci95) of values: ci95 the half-width of the 95 % interval of the mean
    (Student t; NaN for one value). None for no values or a non-finite one."""
    if not values or any(not math.isfinite(v) for v in values):
        return None
    n = len(values)
    mean = _sum(values) / n
    if n == 1:
        return n, mean, float("nan")
    sd = math.sqrt(_sum((v - mean) * (v - mean) for v in values) / (n - 1))
    return n, mean, student_t_quantile(0.975, n - 1) * sd / math.sqrt(n)
