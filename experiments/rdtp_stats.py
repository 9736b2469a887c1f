"""The statistics the Rust tools report, for plot.py: the same definitions as crate
rdtp-units, so a number plot.py derives means what the same number means in summary.csv.

* `quantile(sorted_values, q)`: nearest rank, element ceil(q·n) − 1 (`rdtp_units::quantile`).
* `student_t_quantile(p, df)` and `spread(values)`: mean ± t(0.975, n − 1)·s/√n, Student's t
  computed exactly by bisection of the CDF (`rdtp_units::stats`), not the normal 1.96.

`crates/rdtp-units/tests/python_stats.rs` checks these against the Rust functions; change
both together.

For comparing two schemes whose runs are paired (the same seed or ns-3 run, so the same
arrivals, warm-up or start; the run, not the fetch or the consumer, is the independent unit),
Python only, checked on hand-computed examples by the same test file:

* `paired_t(xs, ys)`: Student's paired t test on the differences x − y (mean, its 95 %
  interval, t, the two-sided p from the t distribution with n − 1 degrees of freedom).
* `wilcoxon(xs, ys)`: Wilcoxon's signed-rank test on the same differences, zeros dropped, tied
  magnitudes given their mean rank, the two-sided p exact (every one of the 2^n sign patterns
  counted), so valid for the ten rounds or runs used here, without a normal approximation.
* `compare(xs, ys)`: both, and whether the difference is significant at 5 % (paired t).

Standard library only.
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


def student_t_two_sided_p(t, df):
    """P(|T| >= |t|) for Student's t with df degrees of freedom: I_{df/(df+t²)}(df/2, 1/2)."""
    if math.isinf(t):
        return 0.0
    return _incomplete_beta(df / (df + t * t), df / 2.0, 0.5)


def _pairs(xs, ys):
    """The pairs (x, y) of two equally long lists where both are finite."""
    assert len(xs) == len(ys), f"paired lists of {len(xs)} and {len(ys)} values"
    return [(x, y) for x, y in zip(xs, ys) if math.isfinite(x) and math.isfinite(y)]


def paired_t(xs, ys):
    """Student's paired t test of x − y over the pairs where both are finite: {n, diff (the mean
    difference), ci95 (its 95 % half-width), t, p (two-sided)}; None with fewer than two pairs.
    Differences all equal: t is ±inf (p = 0) unless they are all zero (t = 0, p = 1)."""
    d = [x - y for x, y in _pairs(xs, ys)]
    n = len(d)
    if n < 2:
        return None
    mean = _sum(d) / n
    sd = math.sqrt(_sum((v - mean) * (v - mean) for v in d) / (n - 1))
    se = sd / math.sqrt(n)
    if se == 0.0:
        t = 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    else:
        t = mean / se
    return {"n": n, "diff": mean, "ci95": student_t_quantile(0.975, n - 1) * se, "t": t,
            "p": student_t_two_sided_p(t, n - 1)}


def wilcoxon(xs, ys):
    """Wilcoxon's signed-rank test of x − y over the pairs where both are finite: {n (non-zero
    differences), w_plus (the sum of the positive differences' ranks), p (two-sided, exact)}.
    Zero differences are dropped; tied magnitudes share their mean rank; p counts the sign
    patterns (of 2^n, equally likely under the null) whose W+ lies as far from n(n+1)/4 as the
    observed one or further, on either side (p = 1 without non-zero differences)."""
    d = [x - y for x, y in _pairs(xs, ys) if x != y]
    n = len(d)
    if n == 0:
        return {"n": 0, "w_plus": 0.0, "p": 1.0}
    order = sorted(range(n), key=lambda i: abs(d[i]))
    twice = [0] * n  # twice each rank: an integer even for mean ranks of ties
    i = 0
    while i < n:
        j = i
        while j + 1 < n and abs(d[order[j + 1]]) == abs(d[order[i]]):
            j += 1
        for k in range(i, j + 1):
            twice[order[k]] = i + j + 2  # (i + 1 + j + 1) / 2, doubled
        i = j + 1
    w2 = sum(twice[i] for i in range(n) if d[i] > 0)
    # ways[s]: sign patterns whose positive ranks sum (doubled) to s.
    ways = [0] * (sum(twice) + 1)
    ways[0] = 1
    top = 0
    for r in twice:
        for s in range(top, -1, -1):
            if ways[s]:
                ways[s + r] += ways[s]
        top += r
    total = 2 ** n
    low = sum(ways[: w2 + 1])
    high = sum(ways[w2:])
    return {"n": n, "w_plus": w2 / 2.0, "p": min(1.0, 2.0 * min(low, high) / total)}


def compare(xs, ys, alpha=0.05):
    """Scheme x against scheme y, paired run by run (lists in the same order of runs): the means
    over the paired runs, the paired t test's difference with its 95 % interval and p, the
    relative difference (mean x / mean y − 1), Wilcoxon's p, and `significant` (paired t's p
    < alpha). None with fewer than two pairs."""
    pairs = _pairs(xs, ys)
    t = paired_t(xs, ys)
    if t is None:
        return None
    mx = _sum(x for x, _ in pairs) / len(pairs)
    my = _sum(y for _, y in pairs) / len(pairs)
    return {"n": t["n"], "mean_x": mx, "mean_y": my, "diff": t["diff"], "ci95": t["ci95"],
            "relative": mx / my - 1.0 if my else float("nan"), "t": t["t"], "p_t": t["p"],
            "p_wilcoxon": wilcoxon(xs, ys)["p"], "significant": t["p"] < alpha}
