#!/usr/bin/env python3
"""Figures and tables for the experiments in this directory.

    python3 experiments/plot.py KIND OUT_DIR [PNG_DIR]

KIND is the scenario's `plot` key (fig7a, fig7b, fig8, fig9, fig10, fig10multi; Hu et al.:
s1-fig5-t1 (also Fig. 6), s1-fig5-t2, s1-fig7-t1, s1-fig7-t2, s1-table1; Hiorth and Welzl: s2fig,
s2informed; Saino et al.: s3fig4, s3fig5) or the testbed experiment's (testbed/*.toml:
tb-fig7a, tb-fig8, tb-fig10, tb-table1, tb-bbr3, tb-s1-fig5); OUT_DIR is what `rdtp sim` or
`rdtp testbed` wrote (summary.csv, summary-mean.csv or runs.csv, and one directory per run).
Both run this script themselves when their runs end (crate rdtp-plot), if matplotlib is
installed. Writes KIND.png (into PNG_DIR, default OUT_DIR) and KIND.md (a Markdown
table of the numbers, into OUT_DIR); Hiorth and Welzl's kinds name both after OUT_DIR
(seed002-fig1.png, …). KIND `grid` reads OUT_DIR/grid.csv from the harness's
`examples/grid.rs` and writes grid-utilisation.png, grid-rtt.png, grid-rerequests.png and
grid-goodput.png
instead of one KIND.png. Needs matplotlib; reads the CSVs with the standard library only.

With repetitions (`repeat = N`), bars and table cells show the mean over the N runs with its
95 % confidence interval as rdtp-sim computed it (summary-mean.csv: Student t), and time
series show repetition 0. Numbers this script derives from time series (Jain's index,
totals over a window) are given per repetition as mean [min–max]: the statistics stay in
rdtp-sim, this script only draws. Where it does derive a quantile or an interval (the
request gaps of Hu et al.'s Fig. 6, Saino et al.'s pooled fetch-completion tables, a y-axis
limit) it uses rdtp_stats.py, the Rust tools' definitions: nearest rank and Student t.

Comparisons between schemes take the run as the independent unit (Hu et al.'s rounds, Saino
et al.'s ns-3 runs; not the fetches or consumers inside a run): a metric per run, its mean over
the runs with the 95 % t-interval over runs (n = runs), and for the comparisons the papers make
(BBR-CD against each other scheme, CCTCP against cctcp-single and ICP) a paired test over the
runs of the same seed or ns-3 run — Student's paired t, which decides "significant at 5 %",
and Wilcoxon's exact signed-rank p beside it (rdtp_stats.compare).
"""

import csv
import functools
import glob
import json
import math
import os
import sys

import matplotlib

from rdtp_stats import compare, quantile, spread

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {
    "rdtp-bbr": "#1f77b4",
    "rdtp-bbr-wifi": "#1f77b4",
    "bbr": "#1f77b4",
    "bbr-wifi": "#d62728",
    "rdtp-bbrp-1.5": "#9467bd",
    "rdtp-bbrp-2": "#8c564b",
    "tcp-bbr": "#ff7f0e",
    "tcp-cubic": "#2ca02c",
    "rdtp-cctcp": "#d62728",
    "rdtp-cctcp-single": "#e377c2",
    "rdtp-icp": "#17becf",
    "rdtp-icp-ss": "#9edae5",
    "rdtp-bbr3": "#bcbd22",
}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(v, default=float("nan")):
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def runs(out, per_run=False):
    """summary.csv rows (one per run and flow), each with its run directory; with
    `per_run`, only the first row of each run."""
    rows = read_csv(os.path.join(out, "summary.csv"))
    seen, kept = set(), []
    for r in rows:
        r["_dir"] = os.path.join(out, r["run_id"])
        if per_run and r["run_id"] in seen:
            continue
        seen.add(r["run_id"])
        kept.append(r)
    return kept


def points(out):
    """summary-mean.csv rows: one per sweep point and flow, every numeric column the mean over
    the point's repetitions (`runs`), with `<col>_ci95`, `_min`, `_max`. Each row gets `_dir`
    (its first repetition's directory, for time series) and `_dirs` (every repetition's).
    Falls back to summary.csv (one run per point) for directories written before it."""
    path = os.path.join(out, "summary-mean.csv")
    if not os.path.exists(path):
        rows = runs(out)
        for r in rows:
            r["runs"], r["_dirs"] = "1", [r["_dir"]]
        return rows
    with open(path, newline="") as f:
        header = next(csv.reader(f))
    keys = header[header.index("run_id") + 1 : header.index("seed")] + ["flow"]
    per_run = runs(out)
    rows = read_csv(path)
    for r in rows:
        r["_dir"] = os.path.join(out, r["run_id"])
        r["_dirs"] = sorted({x["_dir"] for x in per_run if all(x.get(k) == r.get(k) for k in keys)})
    return rows


def reps(r):
    return int(num(r.get("runs"), 1))


def ci(r, col, scale=1.0):
    """Half-width of the 95 % interval of `col` (0 without repetitions)."""
    c = num(r.get(col + "_ci95"), 0.0)
    return 0.0 if math.isnan(c) else c * scale


def pm(r, col, digits=1, scale=1.0):
    """`mean ± ci95` (just the value for one run)."""
    text = fmt(num(r.get(col)) * scale, digits)
    if reps(r) > 1 and r.get(col + "_ci95"):
        text += f" ± {fmt(ci(r, col, scale), digits)}"
    return text


def over(values, digits=3):
    """`mean [min–max]` of per-repetition values (just the value for one)."""
    vs = [v for v in values if not math.isnan(v)]
    if not vs:
        return "–"
    if len(vs) == 1:
        return fmt(vs[0], digits)
    return f"{fmt(sum(vs) / len(vs), digits)} [{fmt(min(vs), digits)}–{fmt(max(vs), digits)}]"


# Reconstructed baselines: the papers that specify them are not available here, so their tables
# carry a one-line caveat (docs/EXPERIMENTS.md, Deviations; the sensitivity files
# experiments/*-sirc.toml and *-icp.toml run the variants named here).
CAVEATS = {
    "sirc": "SIRC is our reconstruction (Amadeo et al.'s paper is not available here): its 1.125 gap gain and "
            "its fast re-request are our choices; `sirc-gain1` (`sirc:gap_gain=1`) paces at the measured gap itself.",
    "icp": "ICP is our reconstruction (Carofiglio et al.'s paper is not available here): growth W += η/W from a "
           "window of 1 without slow start and a timer of 1.5 × the largest of the last 30 RTTs are our choices; "
           "`icp:slow_start=true` adds a slow start.",
}


def caveats(names):
    """The caveat lines (blank line first) for the reconstructed baselines among `names`
    (schemes, controller specs or flow labels: `sirc-gain1`, `icp:slow_start=true`, `rdtp-icp`)."""
    bare = {n.removeprefix("rdtp-").split(":")[0].split("-")[0] for n in names}
    return [line for k, text in CAVEATS.items() if k in bare for line in ("", f"*{text}*")]


def repeated(rows):
    """' (mean ± 95 % CI of N runs)' for titles, if the points were repeated."""
    n = max((reps(r) for r in rows), default=1)
    return f" — mean ± 95 % CI of {n} runs" if n > 1 else ""


@functools.lru_cache(maxsize=4)
def timeseries_rows(run_dir):
    """The rows of a run's timeseries.csv, read once however many series are taken from them."""
    return tuple(read_csv(os.path.join(run_dir, "timeseries.csv")))


def timeseries(run_dir):
    """{flow index: [(t, goodput_mbps, rtt_ms)]}"""
    series = {}
    for r in timeseries_rows(run_dir):
        series.setdefault(int(r["flow"]), []).append((num(r["time_s"]), num(r["goodput_mbps"]), num(r["rtt_ms"])))
    return series


def received_series(run_dir):
    """{flow index: [(t, received_mbps)]}: rdtp's payload arrivals before reordering and
    verification (the rate the path delivers; verification hands bytes to the application
    in groups of up to 256 KiB); the goodput for other flows and for runs older than the
    column."""
    series = {}
    for r in timeseries_rows(run_dir):
        v = r.get("received_mbps")
        series.setdefault(int(r["flow"]), []).append((num(r["time_s"]), num(v if v not in (None, "") else r["goodput_mbps"])))
    return series


def run_params(run_dir):
    """The [params] table of run.toml as strings (a minimal reader: key = value lines)."""
    params, section = {}, None
    with open(os.path.join(run_dir, "run.toml")) as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                section = line.strip("[]")
            elif "=" in line and section == "params":
                k, v = line.split("=", 1)
                params[k.strip()] = v.strip().strip('"')
    return params


def rate_mbps(text):
    """'200Mbps' → 200.0"""
    t = text.strip()
    for suffix, scale in (("Gbps", 1000.0), ("Mbps", 1.0), ("kbps", 1e-3)):
        if t.endswith(suffix):
            return float(t[: -len(suffix)]) * scale
    return float(t)


def jain(xs):
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return float("nan")
    s, q = sum(xs), sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q > 0 else 1.0


def mean_between(points, a, b, idx):
    vals = [p[idx] for p in points if a <= p[0] < b and not math.isnan(p[idx])]
    return sum(vals) / len(vals) if vals else float("nan")


def fmt(x, digits=1):
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def fmt_p(p):
    """A p-value: two decimals, three below 0.01, `< 0.001` below that."""
    if p is None or math.isnan(p):
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}" if p < 0.01 else f"{p:.2f}"


def over_runs(values, digits=1):
    """`mean ± ci95 (n)` over per-run values (the run the unit; NaNs left out), `mean (1)` for one."""
    vs = [v for v in values if not math.isnan(v)]
    st = spread(vs)
    if st is None:
        return "–"
    n, mean, half = st
    return f"{fmt(mean, digits)} (1)" if n == 1 else f"{fmt(mean, digits)} ± {fmt(half, digits)} ({n})"


COMPARE_HEADER = ("runs paired | mean, first | mean, second | difference ± 95 % | first / second − 1 | p (paired t) | "
                  "p (Wilcoxon) | significant at 5 % |")
COMPARE_ALIGN = "---:|---:|---:|---:|---:|---:|---:|---|"


def compare_cells(xs, ys, digits=1, sign=1.0):
    """The COMPARE_HEADER cells of first (xs) against second (ys), paired run by run (NaN pairs
    left out); with `sign` = −1 the relative column is the reduction 1 − first / second."""
    c = compare(xs, ys)
    if c is None:
        return "– | – | – | – | – | – | – | – |"
    return (f"{c['n']} | {fmt(c['mean_x'], digits)} | {fmt(c['mean_y'], digits)} | {fmt(c['diff'], digits)} ± "
            f"{fmt(c['ci95'], digits)} | {fmt(sign * 100 * c['relative'], 1)} % | {fmt_p(c['p_t'])} | "
            f"{fmt_p(c['p_wilcoxon'])} | {'yes' if c['significant'] else 'no'} |")


# --- figures ------------------------------------------------------------------------------


def fig7a(out, png):
    rows = points(out)
    # The flows the sweep compares, in its order (Liu et al.: rdtp-bbr, tcp-bbr, tcp-cubic;
    # seed003-wired.toml: rdtp with bbr, cctcp, cctcp-single, icp).
    labels = []
    for r in rows:
        if r["flow.0"] not in labels:
            labels.append(r["flow.0"])
    configs = []
    for r in rows:
        c = (rate_mbps(r["topology.rate"]), r["topology.rtt"])
        if c not in configs:
            configs.append(c)
    configs.sort(key=lambda c: (c[0], num(c[1].rstrip("ms"))))
    table = {(rate_mbps(r["topology.rate"]), r["topology.rtt"], r["flow.0"]): r for r in rows}
    fig, (ax_u, ax_r) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True)
    width = 0.8 / len(labels)
    for i, label in enumerate(labels):
        xs = [k + (i - (len(labels) - 1) / 2) * width for k in range(len(configs))]
        cells = [table.get((c[0], c[1], label), {}) for c in configs]
        util = [num(r.get("utilisation")) * 100 for r in cells]
        rtt = [num(r.get("mean_rtt_ms")) for r in cells]
        color = COLORS.get(label)
        ax_u.bar(xs, util, width, label=label, color=color, yerr=[ci(r, "utilisation", 100) for r in cells], capsize=2)
        ax_r.bar(xs, rtt, width, label=label, color=color, yerr=[ci(r, "mean_rtt_ms") for r in cells], capsize=2)
    ax_u.set_ylabel("bottleneck utilisation (%)")
    ax_u.set_ylim(0, 105)
    ax_u.axhline(90, color="grey", lw=0.8, ls=":")
    ax_u.legend(ncol=3, loc="lower right")
    ax_r.set_ylabel("mean RTT (ms)")
    ax_r.set_xticks(range(len(configs)))
    ax_r.set_xticklabels([f"{int(c[0])} Mb/s\n{c[1]}" for c in configs], fontsize=8)
    fig.suptitle("Liu et al. Fig. 7a (ns-3): one flow, static bottleneck, 1-BDP DropTail buffer, 20 s (measured after 5 s)" + repeated(rows))
    fig.tight_layout()
    fig.savefig(png, dpi=90)

    lines = [
        "| bottleneck | base RTT | " + " | ".join(f"{l} util." for l in labels) + " | "
        + " | ".join(f"{l} RTT ms" for l in labels) + " |",
        "|---:|---:|" + "---:|" * (2 * len(labels)),
    ]
    for c in configs:
        u = [pm(table.get((c[0], c[1], l), {}), "utilisation", 1, 100) + " %" for l in labels]
        t = [pm(table.get((c[0], c[1], l), {}), "mean_rtt_ms") for l in labels]
        lines.append(f"| {int(c[0])} Mbit/s | {c[1]} | " + " | ".join(u + t) + " |")
    return lines + fig7a_comparisons(out, configs, labels) + caveats(labels)


def fig7a_comparisons(out, configs, labels):
    """Liu et al.'s claim, rdtp's utilisation "same to TCP", tested run by run: rdtp (the first
    label) against each other flow, paired by ns-3 run (the same run number of a point)."""
    per_run = runs(out)
    if len(labels) < 2 or max((reps(r) for r in points(out)), default=1) < 2:
        return []
    first = labels[0]
    lines = ["", f"{first} against each other flow, utilisation %, paired by ns-3 run: first = {first}, "
             "second = the other; difference = first − other",
             "", "| bottleneck | base RTT | vs | " + COMPARE_HEADER, "|---:|---:|---|" + COMPARE_ALIGN]
    for c in configs:
        def by_run(label):
            return {r["run"]: 100 * num(r.get("utilisation")) for r in per_run
                    if (rate_mbps(r["topology.rate"]), r["topology.rtt"], r["flow.0"]) == (c[0], c[1], label)}
        mine = by_run(first)
        for label in labels[1:]:
            theirs = by_run(label)
            keys = sorted(set(mine) & set(theirs), key=num)
            lines.append(f"| {int(c[0])} Mbit/s | {c[1]} | {label} | "
                         + compare_cells([mine[k] for k in keys], [theirs[k] for k in keys], 2))
    return lines


def fig7b(out, png):
    rows = points(out)
    n = max((reps(r) for r in rows), default=1)
    fig, ax = plt.subplots(figsize=(10, 4.2))
    rtt_head = "mean RTT (ms)" + (f", mean ± 95 % CI of {n} runs" if n > 1 else "")
    lines = [
        "| flow | mean goodput 0–36 s (Mbit/s) | mean capacity use | " + rtt_head + " |"
        + (" runs |" if n > 1 else ""),
        "|---|---:|---:|---:|" + ("---:|" if n > 1 else ""),
    ]
    schedule = None
    for r in rows:
        label = r["flow.0"]
        if schedule is None:
            sched = run_params(r["_dir"]).get("RateSchedule", "")
            schedule = [(float(a), rate_mbps(b)) for a, b in (s.split(":") for s in sched.split(",") if s)]
        cap = lambda t: [c for a, c in schedule if a <= t][-1]  # noqa: E731
        goodput, use = [], []
        for k, d in enumerate(r["_dirs"]):
            ts = timeseries(d)[0]
            if k == 0:
                ax.plot([p[0] for p in ts], [p[1] for p in ts], label=label, color=COLORS[label], lw=1.2)
            shares = [p[1] / cap(p[0] - 0.05) for p in ts if p[0] > 0.5]
            goodput.append(sum(p[1] for p in ts) / len(ts))
            use.append(100 * sum(shares) / len(shares))
        row = f"| {label} | {over(goodput, 1)} | {over(use, 1)} % | {pm(r, 'mean_rtt_ms')} |"
        lines.append(row + (f" {len(r['_dirs'])} |" if n > 1 else ""))
    if schedule:
        xs, ys = [], []
        for i, (a, c) in enumerate(schedule):
            b = schedule[i + 1][0] if i + 1 < len(schedule) else 36.0
            xs += [a, b]
            ys += [c, c]
        ax.plot(xs, ys, color="black", ls="--", lw=1, label="bottleneck (payload ≈ 94 %)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title(
        "Liu et al. Fig. 7b (ns-3): dynamic bottleneck 200→500→800→1000→500→200 Mbit/s, RTT 5 ms" + (" (run 0)" if n > 1 else "")
    )
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def flows_and_total(run_dir, ax=None, name="flow"):
    """A run's per-flow time series and their sum ({t: Mbit/s}); drawn on `ax` if given."""
    series = timeseries(run_dir)
    times = sorted({p[0] for s in series.values() for p in s})
    total = {t: 0.0 for t in times}
    for f, s in sorted(series.items()):
        if ax is not None:
            ax.plot([p[0] for p in s], [p[1] for p in s], lw=1, label=f"{name} {f}")
        for p in s:
            total[p[0]] += p[1]
    if ax is not None:
        ax.plot(times, [total[t] for t in times], color="black", lw=1.2, label="total")
    return series, total


def window_mean(total, a, b):
    """Mean of a {t: value} series over [a, b)."""
    vals = [v for t, v in total.items() if a <= t < b]
    return sum(vals) / len(vals) if vals else float("nan")


def fig8(out, png):
    by_rate = {}
    for r in points(out):
        by_rate.setdefault(r["topology.rate"], r["_dirs"])
    rates = sorted(by_rate, key=rate_mbps)
    n = max(len(d) for d in by_rate.values())
    fig, axes = plt.subplots(len(rates), 1, figsize=(10, 3.0 * len(rates)), sharex=True, squeeze=False)
    lines = [
        "| bottleneck | Jain index, 4 flows (20–45 s) | Jain, 3 flows (50–60 s) | total goodput 20–45 s | total 50–60 s |"
        + (" runs |" if n > 1 else ""),
        "|---:|---:|---:|---:|---:|" + ("---:|" if n > 1 else ""),
    ]
    for ax, rate in zip(axes[:, 0], rates):
        j4, j3, t4, t3 = [], [], [], []
        for k, d in enumerate(by_rate[rate]):
            series, total = flows_and_total(d, ax if k == 0 else None)
            j4.append(jain([mean_between(series[f], 20, 45, 1) for f in range(4)]))
            j3.append(jain([mean_between(series[f], 50, 60, 1) for f in range(1, 4)]))
            t4.append(window_mean(total, 20, 45))
            t3.append(window_mean(total, 50, 60))
        ax.set_ylabel("Mbit/s")
        ax.set_title(f"{rate}, RTT 20 ms" + (" (run 0)" if n > 1 else ""), fontsize=9)
        row = f"| {rate} | {over(j4)} | {over(j3)} | {over(t4, 1)} Mbit/s | {over(t3, 1)} Mbit/s |"
        lines.append(row + (f" {len(by_rate[rate])} |" if n > 1 else ""))
    axes[0, 0].legend(ncol=5, fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle("Liu et al. Fig. 8 (ns-3): four rdtp bbr flows sharing a bottleneck (flow 0 leaves at 45 s)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def wifi_pair(rows, key_path, key_cc):
    out = {}
    for r in rows:
        out[(r[key_path], r[key_cc])] = r
    return out


def fig9(out, png):
    rows = points(out)
    paths = sorted({r["topology.wired_delay"] for r in rows}, key=lambda s: num(s.rstrip("ms")))
    ccs = ["bbr", "bbr-wifi"]
    table = wifi_pair(rows, "topology.wired_delay", "flow.0.cc")
    fig, axes = plt.subplots(len(paths), 2, figsize=(11, 3.3 * len(paths)))
    lines = [
        "| path | controller | goodput (Mbit/s) | mean RTT (ms) | min RTT (ms) | re-requested units | AP queue drops |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row, wd in zip(axes, paths):
        for cc in ccs:
            r = table[(wd, cc)]
            ts = timeseries(r["_dir"])[0]
            row[0].plot([p[0] for p in ts], [p[1] for p in ts], color=COLORS[cc], lw=1, label=cc)
            row[1].plot([p[0] for p in ts], [p[2] for p in ts], color=COLORS[cc], lw=1, label=cc)
            lines.append(
                f"| wired one-way {wd} | {cc} | {pm(r, 'goodput_mbps')} | {pm(r, 'mean_rtt_ms', 2)} "
                f"| {pm(r, 'min_rtt_ms', 2)} | {pm(r, 'retransmissions', 0)} | {drops_over(r)} |"
            )
        row[0].set_ylabel("goodput (Mbit/s)")
        row[1].set_ylabel("RTT (ms)")
        row[0].set_title(f"802.11ac + wired link with {wd} one-way delay", fontsize=9)
        row[1].set_title("RTT samples (interval means)", fontsize=9)
        row[0].legend(fontsize=8)
    for a in axes[-1]:
        a.set_xlabel("time (s)")
    fig.suptitle("Liu et al. Fig. 9 (ns-3): rdtp bbr vs bbr-wifi over 802.11ac (80 MHz, VHT MCS 9, 1 SS)" + (" — run 0 of each point" if max(reps(r) for r in rows) > 1 else ""))
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def drops_over(r):
    """AP queue drops of a point's runs: the value, or mean [min–max] over repetitions."""
    return over([num(queue_drops(d)) for d in r["_dirs"]], 0)


def queue_drops(run_dir):
    for line in open(os.path.join(run_dir, "run.toml")):
        if line.startswith("queue_drops"):
            return line.split("=")[1].strip()
    return "?"


def fig10(out, png):
    rows = points(out)
    stds = []
    for r in rows:
        if r["topology"] not in stds:
            stds.append(r["topology"])
    labels = []
    for r in rows:
        if r["flow.0"] not in labels:
            labels.append(r["flow.0"])
    table = {(r["topology"], r["flow.0"]): r for r in rows}
    fig, axes = plt.subplots(len(stds), 2, figsize=(11, 3.4 * len(stds)), squeeze=False)
    lines = [
        "| WiFi | flow | goodput (Mbit/s) | mean RTT (ms) | min RTT (ms) | re-requests / retransmissions | AP queue drops |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row, std in zip(axes, stds):
        cells = [table.get((std, l), {}) for l in labels]
        colors = [COLORS.get(l, "grey") for l in labels]
        for a, col in ((row[0], "goodput_mbps"), (row[1], "mean_rtt_ms")):
            a.bar(range(len(labels)), [num(r.get(col)) for r in cells], color=colors,
                  yerr=[ci(r, col) for r in cells], capsize=3)
            a.set_xticks(range(len(labels)))
            a.set_xticklabels(labels, fontsize=7, rotation=15)
        row[0].set_ylabel("goodput (Mbit/s)")
        row[1].set_ylabel("mean RTT (ms)")
        row[0].set_title(std, fontsize=9)
        for l, r in zip(labels, cells):
            if not r:
                continue
            lines.append(
                f"| {std} | {l} | {pm(r, 'goodput_mbps')} | {pm(r, 'mean_rtt_ms', 2)} "
                f"| {pm(r, 'min_rtt_ms', 2)} | {pm(r, 'retransmissions', 0)} | {drops_over(r)} |"
            )
    rate = ", Minstrel" if any("minstrel" in s for s in stds) else ""
    fig.suptitle(f"Liu et al. Fig. 10 (ns-3{rate}): one station, ≈ 7 ms path (5 ms-RTT wired part), 20 s (measured after 5 s)" + repeated(rows))
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def fig10multi(out, png):
    rows = points(out)
    points_ = [r for i, r in enumerate(rows) if r["run_id"] not in {x["run_id"] for x in rows[:i]}]
    fig, axes = plt.subplots(len(points_), 1, figsize=(10, 3.0 * len(points_)), sharex=True, squeeze=False)
    n = max(reps(r) for r in points_)
    head = "Jain index, 3 flows (15–30 s)" + (f", mean [min–max] of {n} runs" if n > 1 else "")
    lines = [f"| WiFi | {head} | total goodput 15–30 s (Mbit/s) |", "|---|---:|---:|"]
    for ax, r in zip(axes[:, 0], points_):
        jains, totals = [], []
        for k, d in enumerate(r["_dirs"]):
            series, total = flows_and_total(d, ax if k == 0 else None, "station")
            shares = [mean_between(series.get(f, []), 15, 30, 1) for f in range(3)]
            jains.append(jain([0.0 if math.isnan(x) else x for x in shares]))
            totals.append(window_mean(total, 15, 30))
        ax.set_ylabel("Mbit/s")
        ax.set_title(r["topology"] + (" (run 0)" if n > 1 else ""), fontsize=9)
        lines.append(f"| {r['topology']} | {over(jains)} | {over(totals, 1)} |")
    axes[0, 0].legend(ncol=4, fontsize=8)
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle("Liu et al. Fig. 10c/f (ns-3): three rdtp bbr-wifi flows sharing one AP, starting 5 s apart")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


# --- the controller grid (virtual-time harness) -----------------------------------------


GRID_METRICS = [
    # (column, file suffix, title, colour map, lower, upper, cell format)
    ("utilisation", "utilisation", "bottleneck utilisation (%)", "RdYlGn", 80.0, 100.0, "{:.1f}"),
    ("rtt_ratio", "rtt", "mean RTT / RTprop", "RdYlGn_r", 1.0, 2.0, "{:.2f}"),
    ("rerequest_pct", "rerequests", "re-requested units (%)", "RdYlGn_r", 0.0, 5.0, "{:.2f}"),
    # Payload read in order over the window, against the bottleneck's rate: at most ≈ 93.5 %
    # (1402 payload bytes in a 1500-byte packet); 0 where lost units hold everything back
    # (bbr-cd's re-requests wait behind new ones), above the rate where a backlog is released.
    ("goodput_pct", "goodput", "in-order goodput (% of the bottleneck rate)", "RdYlGn", 50.0, 95.0, "{:.0f}"),
]

# The targets bbr3 was held to over the grid (docs/BENCHMARKS.md).
TARGETS = {"util_1bdp": 97.0, "util_025bdp": 90.0, "rtt_ratio": 1.15, "rerequest_pct": 1.0, "timeouts": 2}


def grid(out, png):
    """Heat maps of `examples/grid.rs`'s CSV (OUT_DIR/grid.csv): one PNG per metric, one panel
    per controller, rows rate × RTT, columns buffer size."""
    rows = read_csv(os.path.join(out, "grid.csv"))
    for r in rows:
        r["utilisation"] = num(r["utilisation"]) * 100
        r["goodput_pct"] = num(r["goodput_mbps"]) / num(r["rate_mbps"]) * 100
    ccs = []
    for r in rows:
        if r["controller"] not in ccs:
            ccs.append(r["controller"])
    paths = sorted({(num(r["rate_mbps"]), num(r["rtt_ms"])) for r in rows})
    buffers = sorted({num(r["buffer_bdp"]) for r in rows})
    cell = {(r["controller"], num(r["rate_mbps"]), num(r["rtt_ms"]), num(r["buffer_bdp"])): r for r in rows}
    ncols = min(3, len(ccs))
    nrows = math.ceil(len(ccs) / ncols)
    base = png[:-4] if png.endswith(".png") else png
    for column, suffix, title, cmap, lo, hi, form in GRID_METRICS:
        fig, axes = plt.subplots(
            nrows, ncols, figsize=(1.2 + 3.0 * ncols, 0.8 + 3.6 * nrows), squeeze=False, constrained_layout=True
        )
        for k, ax in enumerate(axes.flat):
            if k >= len(ccs):
                ax.axis("off")
                continue
            cc = ccs[k]
            data = [[num(cell.get((cc, p[0], p[1], b), {}).get(column)) for b in buffers] for p in paths]
            im = ax.imshow(data, cmap=cmap, vmin=lo, vmax=hi, aspect="auto")
            for i, line in enumerate(data):
                for j, v in enumerate(line):
                    ax.text(j, i, "–" if math.isnan(v) else form.format(v), ha="center", va="center", fontsize=7)
            ax.set_title(cc, fontsize=10)
            ax.set_xticks(range(len(buffers)))
            ax.set_xticklabels([f"{b:g} BDP" for b in buffers], fontsize=7)
            ax.set_yticks(range(len(paths)))
            if k % ncols == 0:
                ax.set_yticklabels([f"{p[0]:g} Mb/s {p[1]:g} ms" for p in paths], fontsize=7)
            else:
                ax.set_yticklabels([])
        fig.colorbar(im, ax=axes, shrink=0.6, label=title)
        fig.suptitle(f"Harness grid, one flow alone: {title}")
        fig.savefig(f"{base}-{suffix}.png", dpi=90)
        plt.close(fig)
    lines = [
        "| controller | min util. ≥ 1 BDP | min util. 0.25 BDP | min in-order goodput | max RTT / RTprop "
        "| max re-requested | max timeouts | points meeting bbr3's targets |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for cc in ccs:
        rs = [r for r in rows if r["controller"] == cc]
        deep = [r["utilisation"] for r in rs if num(r["buffer_bdp"]) >= 1]
        shallow = [r["utilisation"] for r in rs if num(r["buffer_bdp"]) < 1]
        met = sum(
            1
            for r in rs
            if r["utilisation"] >= (TARGETS["util_1bdp"] if num(r["buffer_bdp"]) >= 1 else TARGETS["util_025bdp"])
            and num(r["rtt_ratio"]) <= TARGETS["rtt_ratio"]
            and num(r["rerequest_pct"]) <= TARGETS["rerequest_pct"]
            and num(r["timeouts"]) <= TARGETS["timeouts"]
        )
        lines.append(
            f"| {cc} | {fmt(min(deep, default=float('nan')))} % | {fmt(min(shallow, default=float('nan')))} % "
            f"| {fmt(min(r['goodput_pct'] for r in rs))} % "
            f"| {fmt(max(num(r['rtt_ratio']) for r in rs), 2)} | {fmt(max(num(r['rerequest_pct']) for r in rs), 2)} % "
            f"| {max(int(num(r['timeouts'], 0)) for r in rs)} | {met} / {len(rs)} |"
        )
    return lines


# --- testbed (real processes over the real-time emulator) ----------------------------------


def tb_valid(r):
    return r.get("valid") == "true"


def tb_fig7a(out, png):
    rows = runs(out)
    labels = ["rdtp-bbr", "tcp-bbr", "tcp-cubic"]
    for r in rows:  # rate and RTT as the emulator ran them (a sweep may fix either)
        params = run_params(r["_dir"])
        r["rate"], r["rtt"] = params["Rate"], params["Rtt"]
    configs = []
    for r in rows:
        c = (rate_mbps(r["rate"]), r["rtt"])
        if c not in configs:
            configs.append(c)
    configs.sort(key=lambda c: (c[0], num(c[1].rstrip("ms"))))
    table = {(rate_mbps(r["rate"]), r["rtt"], r["flow.0"]): r for r in rows}
    fig, (ax_u, ax_r) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True)
    width = 0.27
    for i, label in enumerate(labels):
        for k, c in enumerate(configs):
            r = table.get((c[0], c[1], label), {})
            x = k + (i - 1) * width
            hatch = None if tb_valid(r) else "///"
            ax_u.bar(x, num(r.get("utilisation")) * 100, width, color=COLORS[label], hatch=hatch,
                     label=label if k == 0 else None, edgecolor="white" if hatch else None)
            ax_r.bar(x, num(r.get("ping_rtt_mean_ms")), width, color=COLORS[label], hatch=hatch,
                     edgecolor="white" if hatch else None)
    ax_u.set_ylabel("bottleneck utilisation (%)")
    ax_u.set_ylim(0, 105)
    ax_u.axhline(90, color="grey", lw=0.8, ls=":")
    ax_u.legend(ncol=3, loc="lower right")
    ax_r.set_ylabel("ping RTT under load (ms)")
    ax_r.set_xticks(range(len(configs)))
    ax_r.set_xticklabels([f"{int(c[0])} Mb/s\n{c[1]}" for c in configs], fontsize=8)
    fig.suptitle("Liu et al. Fig. 7a on the testbed: real processes, Linux TCP, ns-3 real-time bottleneck (hatched: emulator lagged, invalid)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    lines = [
        "| bottleneck | base RTT | rdtp bbr util. | kernel TCP BBR util. | kernel CUBIC util. | rdtp ping RTT ms | TCP BBR ping RTT ms | CUBIC ping RTT ms | rdtp goodput Mbit/s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in configs:
        cells = []
        for l in labels:
            r = table.get((c[0], c[1], l), {})
            mark = "" if tb_valid(r) else " ✗"
            cells.append(fmt(num(r.get("utilisation")) * 100) + " %" + mark)
        for l in labels:
            r = table.get((c[0], c[1], l), {})
            cells.append(fmt(num(r.get("ping_rtt_mean_ms"))) + ("" if tb_valid(r) else " ✗"))
        cells.append(fmt(num(table.get((c[0], c[1], "rdtp-bbr"), {}).get("goodput_mbps"))))
        lines.append(f"| {int(c[0])} Mbit/s | {c[1]} | " + " | ".join(cells) + " |")
    return lines


def tb_timeseries(run_dir):
    """Per-client payload Mbit/s from the emulator: {client: [(t, mbps)]}."""
    series = {}
    for r in read_csv(os.path.join(run_dir, "timeseries.csv")):
        series.setdefault(r["client"], []).append((num(r["time_s"]), num(r["payload_mbps"])))
    return series


def tb_fig8(out, png):
    rows = runs(out, per_run=True)
    fig, axes = plt.subplots(len(rows), 1, figsize=(10, 3.4 * len(rows)), squeeze=False)
    lines = ["| run | Jain index, 4 flows (20–40 s) | Jain, 3 flows (45–60 s) | total 20–40 s (Mbit/s) | total 45–60 s | valid |", "|---|---:|---:|---:|---:|---|"]
    for ax, r in zip(axes[:, 0], rows):
        series = tb_timeseries(r["_dir"])
        times = sorted({p[0] for s in series.values() for p in s})
        total = {t: 0.0 for t in times}
        for c, s in sorted(series.items()):
            ax.plot([p[0] for p in s], [p[1] for p in s], lw=1, label=f"client {c}")
            for p in s:
                total[p[0]] += p[1]
        ax.plot(times, [total[t] for t in times], color="black", lw=1.2, label="total")
        ax.set_ylabel("payload Mbit/s")
        ax.set_xlabel("emulator time (s)")
        ax.legend(ncol=5, fontsize=8)
        offset = num(r.get("t0_offset_s"), 0.0)
        shift = lambda a: a + (0.0 if math.isnan(offset) else offset)  # noqa: E731
        four = [mean_between(s, shift(20), shift(40), 1) for s in series.values()]
        three = [mean_between(s, shift(45), shift(60), 1) for s in series.values()]
        three = [x for x in three if x > 1.0]
        tot4 = mean_between([(t, total[t]) for t in times], shift(20), shift(40), 1)
        tot3 = mean_between([(t, total[t]) for t in times], shift(45), shift(60), 1)
        lines.append(f"| {r['run_id']} | {jain(four):.3f} | {jain(three):.3f} | {fmt(tot4)} | {fmt(tot3)} | {r.get('valid')} |")
    fig.suptitle("Liu et al. Fig. 8 on the testbed: four rdtp bbr flows from four namespaces, 100 Mbit/s, 20 ms (flow 1 leaves at 40 s)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def tb_paths(out, png, title, path_header="path"):
    """Goodput and ping RTT under load per swept path (`path` column) and flow (`flow.0`)."""
    rows = runs(out)
    paths = []
    labels = []
    for r in rows:
        if r["path"] not in paths:
            paths.append(r["path"])
        if r["flow.0"] not in labels:
            labels.append(r["flow.0"])
    table = {(r["path"], r["flow.0"]): r for r in rows}
    fig, axes = plt.subplots(len(paths), 2, figsize=(11, 3.4 * len(paths)), squeeze=False)
    lines = [f"| {path_header} | flow | goodput (Mbit/s) | ping RTT mean / p95 (ms) | valid |", "|---|---|---:|---:|---|"]
    for row, path in zip(axes, paths):
        for k, l in enumerate(labels):
            r = table.get((path, l), {})
            hatch = None if tb_valid(r) else "///"
            color = COLORS.get(l, "#7f7f7f")
            row[0].bar(k, num(r.get("goodput_mbps")), color=color, hatch=hatch, edgecolor="white" if hatch else None)
            row[1].bar(k, num(r.get("ping_rtt_mean_ms")), color=color, hatch=hatch, edgecolor="white" if hatch else None)
            lines.append(
                f"| {path} | {l} | {fmt(num(r.get('goodput_mbps')))} | {fmt(num(r.get('ping_rtt_mean_ms')))} / "
                f"{fmt(num(r.get('ping_rtt_p95_ms')))} | {r.get('valid')} |"
            )
        for a in row:
            a.set_xticks(range(len(labels)))
            a.set_xticklabels(labels, fontsize=7, rotation=15)
        row[0].set_ylabel("goodput (Mbit/s)")
        row[1].set_ylabel("ping RTT under load (ms)")
        row[0].set_title(path, fontsize=9)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def tb_fig10(out, png):
    return tb_paths(out, png, "Liu et al. Fig. 10 on the testbed: real processes and Linux TCP over a real-time ns-3 WiFi hop "
                              "(hatched: invalid)", "WiFi hop")


def tb_bbr3(out, png):
    return tb_paths(out, png, "rdtp bbr and bbr3 vs Linux TCP BBR and CUBIC on the testbed, one flow per emulated dumbbell "
                              "(hatched: invalid)")


def tb_s1_fig5(out, png):
    """Hu et al. Fig. 5 (Topology 1) on the testbed: per scheme (`flow.0`), the fetch's goodput
    (its object over its delivery time) in every round (`seed`), with the fetch's mean unit
    RTT and ping under load, from summary.csv."""
    rows = runs(out)
    schemes = []
    for r in rows:
        if r["flow.0"] not in schemes:
            schemes.append(r["flow.0"])
    fig, (ax_g, ax_r) = plt.subplots(1, 2, figsize=(11, 4.2))
    lines = ["| scheme | rounds (valid) | goodput Mbit/s, mean [min–max] | unit RTT ms | ping RTT ms | re-requested units |",
             "|---|---:|---:|---:|---:|---:|"]
    for k, scheme in enumerate(schemes):
        sel = [r for r in rows if r["flow.0"] == scheme]
        gp = [num(r.get("fetch_goodput_mbps")) for r in sel]
        rtt = [num(r.get("fetch_rtt_avg_ms")) for r in sel]
        ping = [num(r.get("ping_rtt_mean_ms")) for r in sel]
        rer = [num(r.get("retransmitted")) for r in sel]
        color = S1_COLORS.get(scheme, "#7f7f7f")
        ok = [g for g in gp if not math.isnan(g)]
        mean = sum(ok) / len(ok) if ok else float("nan")
        ax_g.bar(k, mean, 0.6, color=color, alpha=0.6)
        ax_g.plot([k] * len(gp), gp, "o", color=color, ms=4)
        okr = [x for x in rtt if not math.isnan(x)]
        okp = [x for x in ping if not math.isnan(x)]
        ax_r.bar(k - 0.2, sum(okr) / len(okr) if okr else float("nan"), 0.4, color=color, label="unit RTT" if k == 0 else None)
        ax_r.bar(k + 0.2, sum(okp) / len(okp) if okp else float("nan"), 0.4, color=color, hatch="..", alpha=0.6,
                 label="ping under load" if k == 0 else None)
        okn = [int(x) for x in rer if not math.isnan(x)]
        lines.append(f"| {scheme} | {len(sel)} ({sum(tb_valid(r) for r in sel)}) | {over(gp, 1)} | {over(rtt, 1)} | "
                     f"{over(ping, 1)} | {f'{min(okn)}–{max(okn)}' if okn else '–'} |")
    for a in (ax_g, ax_r):
        a.set_xticks(range(len(schemes)))
        a.set_xticklabels(schemes)
        a.grid(axis="y", alpha=0.3)
    ax_g.set_ylabel("goodput (Mbit/s): each round, bar = mean")
    ax_r.set_ylabel("ms (mean over the rounds)")
    ax_r.legend(fontsize=8)
    fig.suptitle("Hu et al. Fig. 5 (Topology 1) on the testbed: one fetch over a real-time 802.11n hop")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def tb_server_column(r, suffix):
    """The value of the run's one server's `<server>_<suffix>` column (rdtp_server, tcp_<cc>_server)."""
    for k, v in r.items():
        if k.endswith("_server_" + suffix) and v not in (None, ""):
            return num(v)
    return float("nan")


def tb_table1(out, png):
    """Liu et al. Table 1 on the testbed: per run (one server kind, N receivers), the server
    side's CPU (its CPUs' busy time with softirq, and the process alone) and memory (RSS
    high-water; TCP's kernel socket memory per connection), from runs.csv."""
    rows = read_csv(os.path.join(out, "runs.csv"))
    labels = [f"{r.get('flow.0') or r['run_id']}\n{r.get('flows', '?')} receiver{'' if r.get('flows') == '1' else 's'}"
              for r in rows]
    busy = [num(r.get("server_cpus_busy_pct")) for r in rows]
    softirq = [num(r.get("server_cpus_softirq_pct")) for r in rows]
    process = [tb_server_column(r, "cpu_pct") for r in rows]
    rss = [tb_server_column(r, "rss_hwm_mib") for r in rows]
    skmem = [num(r.get("tcp_skmem_per_conn_kib")) * num(r.get("tcp_sockets_mean"), 0.0) / 1024 for r in rows]
    hatch = [None if tb_valid(r) else "///" for r in rows]
    x = list(range(len(rows)))
    fig, (ax_c, ax_m) = plt.subplots(1, 2, figsize=(max(9, 2.4 * len(rows)), 4.5))
    w = 0.38
    ax_c.bar([i - w / 2 for i in x], [b - s if not math.isnan(s) else b for b, s in zip(busy, softirq)], w,
             bottom=[s if not math.isnan(s) else 0 for s in softirq], color="#9ecae1", label="server CPUs busy: rest")
    ax_c.bar([i - w / 2 for i in x], softirq, w, color="#3182bd", label="… of which softirq")
    ax_c.bar([i + w / 2 for i in x], process, w, color="#fd8d3c", label="server process")
    ax_c.set_ylabel("CPU (% of one CPU, over the window)")
    ax_m.bar(x, rss, 0.6, color="#74c476", label="server RSS high-water")
    ax_m.bar(x, [0.0 if math.isnan(k) else k for k in skmem], 0.6, bottom=rss, color="#a1d99b", hatch="..",
             label="kernel TCP socket memory (all connections)")
    ax_m.set_ylabel("MiB")
    for a in (ax_c, ax_m):
        for i, h in enumerate(hatch):
            if h:
                a.annotate("invalid", (i, 0), ha="center", va="bottom", fontsize=7, color="#d62728")
        a.set_xticks(x)
        a.set_xticklabels(labels, fontsize=8)
        a.legend(fontsize=7)
        a.grid(axis="y", alpha=0.3)
    fig.suptitle("Liu et al. Table 1 on the testbed: server cost, stateless rdtp vs Linux TCP (server CPUs pinned)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    lines = [
        "| run | server | receivers | goodput (Mbit/s) | server CPUs busy | of which softirq | server process CPU | "
        "RSS high-water (MiB) | RSS growth over idle (KiB) | socket memory per connection (KiB) | valid |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r, b, s, pc, m in zip(rows, busy, softirq, process, rss):
        lines.append(
            f"| {r['run_id']} | {r.get('flow.0', '')} | {r.get('flows', '')} | {fmt(num(r.get('total_goodput_mbps')))} | "
            f"{fmt(b, 2)} % | {fmt(s, 2)} % | {fmt(pc, 2)} % | {fmt(m, 2)} | {fmt(tb_server_column(r, 'rss_growth_kib'), 0)} | "
            f"{fmt(num(r.get('tcp_skmem_per_conn_kib')))} | {r.get('valid')} |"
        )
    return lines


# --- Hu et al. (BBR-CD) --------------------------------------------------------------------

S1_SCHEMES = ["bbr-cd", "sirc", "sirc-gain1", "bbr-orig", "aimd", "cubic"]
S1_COLORS = {"bbr-cd": "#d62728", "sirc": "#2ca02c", "sirc-gain1": "#98df8a", "bbr-orig": "#1f77b4", "aimd": "#ff7f0e",
             "cubic": "#9467bd"}
S1_SIZE = 20e6  # bytes per consumer


def s1_runs(out):
    """{(scheme, unit): [run]} with run = {seed, dir, flows: [flows.csv rows], goodput,
    per_flow, rtt, done}. Goodput (Hu et al. §IV-A): the object's size over the delivery time (first
    request to last unit) per consumer, summed over the consumers of a run (Hu et al. footnote 3)."""
    groups = {}
    for r in runs(out, per_run=True):
        scheme = r.get("flow.0") or r["cc"]
        unit = int(num(r.get("flow.0.unit", r.get("unit", "0")), 0))
        flows = read_csv(os.path.join(r["_dir"], "flows.csv"))
        done = all(f["completed"] == "1" for f in flows)
        per = [num(f["bytes"], S1_SIZE) * 8 / (num(f["finish_s"]) - num(f["start_s"])) / 1e6
               for f in flows if f["completed"] == "1"]
        rtts = [num(f["mean_rtt_ms"]) for f in flows if not math.isnan(num(f["mean_rtt_ms"]))]
        # The finished consumers' bytes over the time from the first request to the last unit.
        fin = [f for f in flows if f["completed"] == "1"]
        span = max((num(f["finish_s"]) for f in fin), default=float("nan")) - min(
            (num(f["start_s"]) for f in fin), default=float("nan"))
        agg = sum(num(f["bytes"], S1_SIZE) for f in fin) * 8 / span / 1e6 if fin and span > 0 else float("nan")
        run = {"seed": int(r["seed"]), "dir": r["_dir"], "flows": flows, "goodput": sum(per), "per_flow": per,
               "aggregate": agg,
               "rtt": sum(rtts) / len(rtts) if rtts else float("nan"), "done": done,
               "outage": r.get("topology.outage", r.get("outage", ""))}
        groups.setdefault((scheme, unit), []).append(run)
    return groups


def jain(xs):
    """Jain's fairness index of `xs` (1 = equal shares)."""
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if xs and any(xs) else float("nan")


def s1_requests(run_dir):
    """requests.csv rows as (time, flow, units, retransmission)."""
    path = os.path.join(run_dir, "requests.csv")
    if not os.path.exists(path):
        return []
    return [(num(r["time_s"]), int(r["flow"]), int(r["units"]), r["retransmission"] == "1") for r in read_csv(path)]


def s1_rerequest_share(run_dir):
    """Units asked for again / all units asked for (Hu et al. §IV-C's share of retransmitted interests)."""
    reqs = s1_requests(run_dir)
    total = sum(u for _, _, u, _ in reqs)
    return sum(u for _, _, u, r in reqs if r) / total if total else float("nan")


def s1_stats(xs):
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return float("nan"), float("nan"), float("nan")
    return sum(xs) / len(xs), min(xs), max(xs)


def s1_goodput(out, png, title, lossy):
    groups = s1_runs(out)
    units = sorted({u for _, u in groups}, reverse=True)
    schemes = [s for s in S1_SCHEMES if any((s, u) in groups for u in units)]
    multi = any(len(r["flows"]) > 1 for rs in groups.values() for r in rs)
    fig, axes = plt.subplots(1, len(units), figsize=(5.2 * len(units), 3.8), squeeze=False)
    head = "| scheme | unit | rounds | goodput Mbit/s mean | min | max |"
    rule = "|---|---:|---:|---:|---:|---:|"
    if multi:
        head += " aggregate Mbit/s | per consumer min–max | Jain's index |"
        rule += "---:|---|---:|"
    head += " mean RTT ms |" + (" re-requests % |" if lossy else "")
    rule += "---:|" + ("---:|" if lossy else "")
    # Over the rounds (the round the unit): mean ± 95 % t-interval (rounds with a result).
    head += " goodput ± 95 % over rounds (n) |" + (" aggregate ± 95 % over rounds (n) |" if multi else "")
    rule += "---:|" + ("---:|" if multi else "")
    lines = [head, rule]
    for ax, unit in zip(axes[0], units):
        for i, s in enumerate(schemes):
            rs = groups.get((s, unit), [])
            # A run where a consumer never finished counts the others (marked, and hatched).
            mean, lo, hi = s1_stats([r["goodput"] if r["per_flow"] else float("nan") for r in rs])
            missing = sum(len(r["flows"]) - len(r["per_flow"]) for r in rs)
            ax.bar(i, mean, color=S1_COLORS[s], yerr=[[mean - lo], [hi - mean]], capsize=4,
                   hatch="//" if missing else None)
            ax.text(i, mean / 2, fmt(mean) + ("*" if missing else ""), ha="center", color="white", fontsize=8)
            mark = f" ({missing} consumer{'s' if missing > 1 else ''} unfinished)" if missing else ""
            row = (f"| {s} | {unit} | {sum(r['done'] for r in rs)}/{len(rs)}{mark} | {fmt(mean)} | {fmt(lo)} "
                   f"| {fmt(hi)} |")
            if multi:
                # The aggregate (bytes over the whole transfer), a black line across the bar.
                a, _, _ = s1_stats([r["aggregate"] for r in rs])
                if not math.isnan(a):
                    ax.plot([i - 0.4, i + 0.4], [a, a], color="black", lw=1.5,
                            label="aggregate (all bytes / whole transfer)" if i == 0 else None)
                per = [g for r in rs for g in r["per_flow"]]
                j, _, _ = s1_stats([jain(r["per_flow"]) for r in rs if r["per_flow"]])
                agg, _, _ = s1_stats([r["aggregate"] for r in rs])
                row += (f" {fmt(agg)} | {fmt(min(per, default=float('nan')))}–{fmt(max(per, default=float('nan')))}"
                        f" | {fmt(j, 3)} |")
            rtt, _, _ = s1_stats([r["rtt"] for r in rs])
            row += f" {fmt(rtt)} |"
            if lossy:
                share, _, _ = s1_stats([s1_rerequest_share(r["dir"]) for r in rs])
                row += f" {fmt(100 * share)} |"
            row += f" {over_runs([r['goodput'] if r['per_flow'] else float('nan') for r in rs])} |"
            if multi:
                row += f" {over_runs([r['aggregate'] for r in rs])} |"
            lines.append(row)
        ax.set_xticks(range(len(schemes)))
        ax.set_xticklabels(schemes)
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_title(f"{unit}-byte units")
        ax.grid(axis="y", alpha=0.3)
        if multi:
            ax.legend(fontsize=7, loc="lower right")
    rounds = max((len(rs) for rs in groups.values()), default=0)
    fig.suptitle(title + (" — mean of the rounds, whiskers min/max" if rounds > 1 else " — one round"))
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines + s1_comparisons(groups, units, schemes, multi) + caveats(schemes)


def s1_by_seed(rs, metric):
    """{seed: metric of that round} (NaN where no consumer finished)."""
    return {r["seed"]: (metric(r) if r["per_flow"] else float("nan")) for r in rs}


def s1_comparisons(groups, units, schemes, multi):
    """Hu et al.'s claim, BBR-CD's goodput above each other scheme's, tested round by round:
    the rounds of the same seed paired (paired t decides; Wilcoxon's exact p beside it)."""
    if "bbr-cd" not in schemes or max((len(rs) for rs in groups.values()), default=0) < 2:
        return []
    metrics = [("goodput", lambda r: r["goodput"])] + ([("aggregate", lambda r: r["aggregate"])] if multi else [])
    lines = ["", "BBR-CD against each scheme, Mbit/s, paired by round (seed): first = bbr-cd, second = the scheme; "
             "difference = bbr-cd − scheme",
             "", "| unit | metric | bbr-cd vs | " + COMPARE_HEADER, "|---:|---|---|" + COMPARE_ALIGN]
    for unit in units:
        for name, metric in metrics:
            mine = s1_by_seed(groups.get(("bbr-cd", unit), []), metric)
            for s in schemes:
                if s == "bbr-cd" or (s, unit) not in groups:
                    continue
                theirs = s1_by_seed(groups[(s, unit)], metric)
                seeds = sorted(set(mine) & set(theirs))
                lines.append(f"| {unit} | {name} | {s} | "
                             + compare_cells([mine[k] for k in seeds], [theirs[k] for k in seeds]))
    return lines


def s1_fig5_t1(out, png):
    lines = s1_goodput(out, png, "Hu et al. Fig. 5, Topology 1 (one consumer), no added loss", False)
    # Fig. 6 from the same runs: the interval between successive requests, seed 1.
    groups = s1_runs(out)
    units = sorted({u for _, u in groups}, reverse=True)
    fig, axes = plt.subplots(1, len(units), figsize=(5.2 * len(units), 3.8), squeeze=False)
    lines += ["", "Fig. 6 (round 1): interval between successive requests, ms",
              "", "| scheme | unit | requests | p10 | median | p90 | p99 | max |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for ax, unit in zip(axes[0], units):
        for s in S1_SCHEMES:
            rs = [r for r in groups.get((s, unit), []) if r["seed"] == 1]
            if not rs:
                continue
            times = [t for t, _, _, _ in s1_requests(rs[0]["dir"])]
            gaps = sorted(1e3 * (b - a) for a, b in zip(times, times[1:]))
            if not gaps:
                continue
            q = lambda p: quantile(gaps, p)  # noqa: E731
            lines.append(f"| {s} | {unit} | {len(times)} | {fmt(q(0.1), 2)} | {fmt(q(0.5), 2)} | {fmt(q(0.9), 2)} "
                         f"| {fmt(q(0.99), 1)} | {fmt(gaps[-1], 0)} |")
            pos = [max(g, 1e-3) for g in gaps]
            ax.plot(pos, [(i + 1) / len(pos) for i in range(len(pos))], label=s, color=S1_COLORS[s])
        ax.set_xscale("log")
        ax.set_xlabel("interval between successive requests (ms)")
        ax.set_ylabel("CDF")
        ax.set_title(f"{unit}-byte units")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Hu et al. Fig. 6: request pacing, Topology 1, no added loss (round 1)")
    fig.tight_layout()
    fig.savefig(png.replace(".png", "-fig6.png"), dpi=90)
    return lines + caveats(s for s, _ in groups)


def s1_fig5_t2(out, png):
    return s1_goodput(out, png, "Hu et al. Fig. 5, Topology 2 (ten consumers, goodput summed)", False)


def s1_fig7_t1(out, png):
    return s1_goodput(out, png, "Hu et al. Fig. 7, Topology 1, ≈ 10 % round-trip loss", True)


def s1_fig7_t2(out, png):
    return s1_goodput(out, png, "Hu et al. Fig. 7, Topology 2 (goodput summed), ≈ 10 % round-trip loss", True)


def s1_table1(out, png):
    """Per scheme, unit and round: the min, mean and max delivery time over the consumers with
    and without the outage; increase ratio (T_with − T_without) / 32 s per statistic (Hu et al.
    Table I), averaged over the rounds."""
    outage_s = 32.0
    groups = s1_runs(out)
    table = {}
    for (s, unit), rs in groups.items():
        by_seed = {}
        for r in rs:
            times = [num(f["finish_s"]) - num(f["start_s"]) for f in r["flows"] if f["completed"] == "1"]
            if len(times) != len(r["flows"]):
                continue
            stats = (min(times), sum(times) / len(times), max(times))
            by_seed.setdefault(r["seed"], {})["with" if r["outage"] else "without"] = (stats, times)
        for seed, d in sorted(by_seed.items()):
            if "with" in d and "without" in d:
                table.setdefault((s, unit), []).append((seed, d["without"], d["with"]))
    lines = ["| scheme | unit | rounds | T min / mean / max without (s) | with outage (s) | ratio min | ratio mean | ratio max "
             "| ratio mean, lowest–highest round | ratio min / mean / max ± 95 % over rounds (n) |",
             "|---|---:|---:|---|---|---:|---:|---:|---|---|"]
    keys = sorted(table, key=lambda k: (-k[1], S1_SCHEMES.index(k[0]) if k[0] in S1_SCHEMES else 99))
    fig, ax = plt.subplots(figsize=(3.2 * max(2, len(keys)), 3.8))
    for i, (s, unit) in enumerate(keys):
        rows = table[(s, unit)]
        avg = lambda xs: sum(xs) / len(xs)  # noqa: E731
        wo = [avg([r[1][0][k] for r in rows]) for k in range(3)]
        wi = [avg([r[2][0][k] for r in rows]) for k in range(3)]
        per_round = [[(r[2][0][k] - r[1][0][k]) / outage_s for r in rows] for k in range(3)]
        ratios = [avg(xs) for xs in per_round]
        lines.append(f"| {s} | {unit} | {len(rows)} | {' / '.join(fmt(x) for x in wo)} | {' / '.join(fmt(x) for x in wi)} "
                     f"| {fmt(ratios[0], 2)} | {fmt(ratios[1], 2)} | {fmt(ratios[2], 2)} "
                     f"| {fmt(min(per_round[1]), 2)}–{fmt(max(per_round[1]), 2)} "
                     f"| {' / '.join(over_runs(xs, 2) for xs in per_round)} |")
        for k, name in enumerate(["min", "mean", "max"]):
            # Whiskers: the lowest and highest round (with more than one round).
            err = [[ratios[k] - min(per_round[k])], [max(per_round[k]) - ratios[k]]] if len(rows) > 1 else None
            ax.bar(i * 4 + k, ratios[k], color=S1_COLORS.get(s, "grey"), alpha=[0.5, 1.0, 0.75][k], yerr=err, capsize=3)
            ax.text(i * 4 + k, ratios[k] + 0.01, f"{name}\n{ratios[k]:.2f}", ha="center", fontsize=7)
    ax.set_xticks([i * 4 + 1 for i in range(len(keys))])
    ax.set_xticklabels([f"{s}\n{unit}-byte units" for s, unit in keys])
    ax.set_ylabel("delivery-time increase / 32 s outage")
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_title("Hu et al. Table I: producer disconnected 32 s, Topology 2\n(mean of the rounds, whiskers lowest/highest round)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    # Hu et al.'s claim, BBR-CD's ratios below AIMD's: paired by round (seed), rounds where both
    # schemes have both runs.
    cmp = ["", "BBR-CD against AIMD, increase ratio, paired by round (seed): first = bbr-cd, second = aimd; "
           "difference = bbr-cd − aimd", "", "| unit | ratio | " + COMPARE_HEADER, "|---:|---|" + COMPARE_ALIGN]
    for unit in sorted({u for _, u in table}, reverse=True):
        if ("bbr-cd", unit) not in table or ("aimd", unit) not in table:
            continue
        ratio = lambda rows, k: {r[0]: (r[2][0][k] - r[1][0][k]) / outage_s for r in rows}  # noqa: E731
        for k, name in enumerate(["min", "mean", "max"]):
            a, b = ratio(table[("bbr-cd", unit)], k), ratio(table[("aimd", unit)], k)
            seeds = sorted(set(a) & set(b))
            cmp.append(f"| {unit} | {name} | " + compare_cells([a[x] for x in seeds], [b[x] for x in seeds], 2))
    return lines + (cmp if len(cmp) > 5 else [])


KINDS = {"fig7a": fig7a, "fig7b": fig7b, "fig8": fig8, "fig9": fig9, "fig10": fig10, "fig10multi": fig10multi,
         "tb-fig7a": tb_fig7a, "tb-fig8": tb_fig8, "tb-fig10": tb_fig10, "tb-table1": tb_table1, "tb-bbr3": tb_bbr3,
         "tb-s1-fig5": tb_s1_fig5,
         "grid": grid,
         "s1-fig5-t1": s1_fig5_t1, "s1-fig5-t2": s1_fig5_t2, "s1-fig7-t1": s1_fig7_t1, "s1-fig7-t2": s1_fig7_t2,
         "s1-table1": s1_table1}

# --- Hiorth and Welzl ------------------------------------------------------------------------------

UDP_PER_IP = 1472.0 / 1500.0  # the estimator counts IP packets, the sinks UDP payload


def payload_per_ip(kind):
    """Application payload per 1500-byte IP packet: UDP 1472, TCP 1448 (timestamps on),
    rdtp 1402 (wire v2 units). The estimator counts IP packets; flows count payload."""
    if kind.startswith("tcp"):
        return 1448.0 / 1500.0
    if kind.startswith("rdtp"):
        return 1402.0 / 1500.0
    return UDP_PER_IP


def run_dirs(out):
    return sorted(os.path.join(out, d) for d in os.listdir(out) if os.path.isfile(os.path.join(out, d, "timeseries.csv")))


def wifi_series(run_dir):
    """wifi.csv (the sniffer's estimator every interval) as a list of dicts of floats."""
    path = os.path.join(run_dir, "wifi.csv")
    if not os.path.exists(path):
        return []
    return [{k: num(v) for k, v in r.items()} for r in read_csv(path)]


def s2_joins(run_dir, settle=1.0):
    """Per joining flow: its start, N, the N + 1 and model predictions at its start and the
    goodput it attained from `settle` s after its start until the next flow joined (or the
    end), all in Mbit/s of application payload."""
    joins = read_csv(os.path.join(run_dir, "joins.csv"))
    series = timeseries(run_dir)
    starts = sorted(num(j["start_s"]) for j in joins)
    end = max(t for pts in series.values() for t, _, _ in pts)
    rows = []
    for j in joins:
        start = num(j["start_s"])
        unit = payload_per_ip(j["kind"])
        later = [x for x in starts if x > start]
        until = later[0] if later else end
        pts = [g for t, g, _ in series.get(int(j["flow"]), []) if start + settle < t <= until]
        rows.append({
            "flow": int(j["flow"]),
            "kind": j["kind"],
            "start": start,
            "n": int(j["n_active"]),
            "total": num(j["total_mbps"]) * unit,
            "n_plus_one": num(j["n_plus_one_mbps"]) * unit,
            "model": num(j["model_mbps"]) * unit,
            "attained": sum(pts) / len(pts) if pts else float("nan"),
        })
    return rows


def pct_err(pred, actual):
    return abs(pred - actual) / actual * 100 if actual > 0 and not math.isnan(pred) else float("nan")


def s2fig(out, png):
    """Hiorth and Welzl Figs. 1, 3, 4, 5: per-flow throughput of the staggered start, with the
    sniffer's N + 1 prediction (and the learned model's) drawn over it."""
    dirs = run_dirs(out)
    fig, axes = plt.subplots(len(dirs), 1, figsize=(11, 3.6 * len(dirs)), sharex=True, squeeze=False)
    lines = []
    for ax, d in zip(axes[:, 0], dirs):
        series = timeseries(d)
        flows = read_csv(os.path.join(d, "flows.csv"))
        name = os.path.basename(d)
        cc = ", ".join(sorted({f["cc"] for f in flows}))
        for k, pts in sorted(series.items()):
            ax.plot([p[0] for p in pts], [p[1] for p in pts], lw=1.0, label=f"flow {k + 1}")
        wifi = wifi_series(d)
        if wifi:
            ts = [w["time_s"] for w in wifi]
            unit = payload_per_ip(flows[0]["kind"])
            ax.plot(ts, [w["n_plus_one_mbps"] * unit for w in wifi], color="black", lw=0.9, ls="--",
                    label="total / (N + 1)")
        # The learned model at each join, for the newcomer's own PHY rate (which the sniffer's
        # running estimate cannot know), held until the next join.
        joins = s2_joins(d)
        bounds = [j["start"] for j in joins] + [max(p[0] for pts in series.values() for p in pts)]
        for i, j in enumerate(joins):
            if j["n"] > 0:
                ax.hlines(j["model"], bounds[i], bounds[i + 1], color="#444444", lw=1.4, ls=":",
                          label="model at each join" if i == 1 else None)
        # Total of the flows, per interval.
        times = sorted({p[0] for pts in series.values() for p in pts})
        tot = {t: 0.0 for t in times}
        for pts in series.values():
            for t, g, _ in pts:
                if not math.isnan(g):
                    tot[t] += g
        ax.plot(times, [tot[t] for t in times], color="#777777", lw=0.6, alpha=0.6, label="total")
        ax.set_ylabel("Mbit/s")
        ax.set_title(f"{name} ({cc})", fontsize=9)
        # TCP's in-order releases after a loss make one-interval spikes: scale to the bulk.
        totals = sorted(tot[t] for t in times) or [1.0]
        ax.set_ylim(0, quantile(totals, 0.95) * 1.4)
        ax.legend(fontsize=7, ncol=6, loc="upper right")
        ax.grid(alpha=0.3)

        # The table: each phase (1, 2, 3 flows), the shares and the predictions at each join.
        starts = [j["start"] for j in joins] + [max(times) if times else 0.0]
        if not lines:
            lines += [
                "| run | phase | active flows | per-flow goodput (Mbit/s) | total | at this join: N | N + 1 prediction (err.) | model prediction (err.) |",
                "|---|---|---:|---|---:|---:|---:|---:|",
            ]
        for i, j in enumerate(joins):
            a, b = j["start"] + 1.0, starts[i + 1]
            per = [mean_between(series.get(k, []), a, b + 1e-9, 1) for k in range(i + 1)]
            n1 = f"{fmt(j['n_plus_one'])} ({fmt(pct_err(j['n_plus_one'], j['attained']))} %)" if j["n"] > 0 else "–"
            model = "–" if math.isnan(j["model"]) else f"{fmt(j['model'])} ({fmt(pct_err(j['model'], j['attained']))} %)"
            lines.append(
                f"| {name} | {fmt(a, 0)}–{fmt(b, 0)} s | {i + 1} | " + ", ".join(fmt(x) for x in per) +
                f" | {fmt(sum(per))} | {j['n']} | {n1} | {model} |")
    axes[-1, 0].set_xlabel("time (s)")
    fig.suptitle(f"Hiorth and Welzl, {os.path.basename(os.path.normpath(out))} (ns-3, 802.11g): staggered saturating flows; "
                 "goodput per 100 ms, predictions from the sniffer (application payload)", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def s2informed(out, png):
    """Hiorth and Welzl, ours: a fetch joining a busy AP with informed start vs BBR Startup vs TCP,
    on each wired path of the sweep. Fair share = the joining flow's mean goodput over
    12–20 s; time to 90 % = from its start to the first time its received rate over the
    preceding 100 ms reaches 90 % of that (rdtp: payload arrivals before verification, which
    hands bytes to the application in groups; TCP: goodput); first read = from its start to
    the first byte the application reads; queue = the AP's queue in its first 2 s."""
    rows = [r for r in runs(out) if r["flow"] == "3"]
    delay_key = "topology.wired_delay"
    rtt_of = lambda r: 2 * num(r.get(delay_key, "10ms").rstrip("ms"))  # noqa: E731
    rtts = sorted({rtt_of(r) for r in rows})
    order = ["rdtp-bbr-informed", "rdtp-bbr-startup", "tcp-bbr", "tcp-cubic"]
    labels = [l for l in order if any(r["flow.1"] == l for r in rows)]
    labels += sorted({r["flow.1"] for r in rows} - set(labels))
    colors = {"rdtp-bbr-informed": "#d62728", "rdtp-bbr-startup": "#1f77b4", "tcp-bbr": "#ff7f0e",
              "tcp-cubic": "#2ca02c"}
    fig, axes = plt.subplots(2, len(rtts), figsize=(6 * len(rtts), 7), squeeze=False)
    table = [
        "| wired RTT | joining flow | seed | predicted (Mbit/s) | fair share 12–20 s (Mbit/s) | prediction error | time to 90 % (s) | first read (s) | AP queue peak, first 2 s (packets) | mean RTT, first 2 s (ms) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    summary = {}
    for col, rtt in enumerate(rtts):
        ax_g, ax_q = axes[0, col], axes[1, col]
        for label in labels:
            sel = sorted((r for r in rows if r["flow.1"] == label and rtt_of(r) == rtt), key=lambda r: int(r["seed"]))
            for r in sel:
                d = r["_dir"]
                series = timeseries(d)[3]
                arrivals = received_series(d)[3]
                start = num(r["start_s"])
                fair = mean_between(series, 12.0, 20.0, 1)
                dt = series[1][0] - series[0][0]
                k = max(1, int(round(0.1 / dt)))
                t90 = float("nan")
                for i in range(len(arrivals)):
                    window = [p[1] for p in arrivals[max(0, i - k + 1): i + 1] if p[0] > start]
                    if arrivals[i][0] > start and len(window) == k and sum(window) / k >= 0.9 * fair:
                        t90 = arrivals[i][0] - start
                        break
                # Rows are interval ends: the first read happened within the row's interval.
                first_read = next((t - dt - start for t, g, _ in series if t > start and g > 0), float("nan"))
                first_read = max(0.0, first_read)
                q = [(num(x["time_s"]), num(x["packets"])) for x in read_csv(os.path.join(d, "queue.csv"))]
                peak = max((p for t, p in q if start <= t < start + 2.0), default=float("nan"))
                rtt_ms = mean_between(series, start, start + 2.0, 2)
                joins = {int(j["flow"]): j for j in read_csv(os.path.join(d, "joins.csv"))}
                if label.startswith("tcp") or 3 not in joins:
                    predicted, err = float("nan"), float("nan")
                else:
                    # The model's prediction at the join, in rdtp payload (1402 per 1500-byte packet).
                    predicted = num(joins[3]["model_mbps"]) * payload_per_ip("rdtp")
                    err = pct_err(predicted, fair)
                table.append(f"| {fmt(rtt, 0)} ms | {label} | {r['seed']} | {fmt(predicted)} | {fmt(fair)} | "
                             f"{fmt(err)} % | {fmt(t90, 2)} | {fmt(first_read, 2)} | {fmt(peak, 0)} | {fmt(rtt_ms, 0)} |")
                summary.setdefault((rtt, label), []).append((t90, peak, fair, err, first_read))
                if r["seed"] == "1":
                    # The same 100 ms moving average the time to 90 % is read from.
                    smooth = [sum(p[1] for p in arrivals[max(0, i - k + 1): i + 1]) / min(k, i + 1)
                              for i in range(len(arrivals))]
                    ax_g.plot([p[0] for p in arrivals], smooth, lw=1.0, color=colors.get(label), label=label)
                    ax_q.plot([t for t, _ in q], [p for _, p in q], lw=0.9, color=colors.get(label), label=label)
        ax_g.set_xlim(9.8, 12.0)
        ax_q.set_xlim(9.8, 12.0)
        ax_g.set_title(f"wired RTT {fmt(rtt, 0)} ms (seed 1)", fontsize=9)
        ax_g.set_ylim(0, 16)
        ax_g.set_ylabel("joining flow, received (Mbit/s, 100 ms mean)")
        ax_g.legend(fontsize=7)
        ax_g.grid(alpha=0.3)
        ax_q.set_ylabel("AP queue (packets)")
        ax_q.set_xlabel("time (s); the fetch joins three saturating stations at 10 s")
        ax_q.grid(alpha=0.3)
    table += ["", "| wired RTT | joining flow | runs | time to 90 % (s), mean ± 95 % | first read (s), mean ± 95 % | mean AP queue peak (packets) | mean fair share (Mbit/s) | mean prediction error |",
              "|---:|---|---:|---:|---:|---:|---:|---:|"]

    def mean_ci(xs):
        xs = [x for x in xs if not math.isnan(x)]
        st = spread(xs) if len(xs) > 1 else None
        return f"{fmt(st[1], 2)} ± {fmt(st[2], 2)}" if st else (fmt(xs[0], 2) if xs else "–")

    for (rtt, label), vals in sorted(summary.items(), key=lambda kv: (kv[0][0], labels.index(kv[0][1]))):
        ok = [v for v in vals if not math.isnan(v[0])]
        never = f" ({len(vals) - len(ok)} never)" if len(ok) < len(vals) else ""
        errs = [v[3] for v in vals if not math.isnan(v[3])]
        me = f"{fmt(sum(errs) / len(errs))} %" if errs else "–"
        table.append(f"| {fmt(rtt, 0)} ms | {label} | {len(vals)} | {mean_ci([v[0] for v in vals])}{never} | "
                     f"{mean_ci([v[4] for v in vals])} | "
                     f"{fmt(sum(v[1] for v in vals) / len(vals), 0)} | {fmt(sum(v[2] for v in vals) / len(vals))} | {me} |")
    # Informed start against Startup, paired by seed (the same medium, the same other stations).
    pairs = []
    for rtt in rtts:
        a, b = summary.get((rtt, "rdtp-bbr-informed")), summary.get((rtt, "rdtp-bbr-startup"))
        if a and b and len(a) == len(b):
            for what, i in (("time to 90 %", 0), ("first read", 4), ("AP queue peak", 1)):
                c = compare([v[i] for v in a], [v[i] for v in b])
                if c:
                    pairs.append(f"| {fmt(rtt, 0)} ms | {what} | {c['n']} | {fmt(c['mean_x'], 2)} | {fmt(c['mean_y'], 2)} | "
                                 f"{fmt(c['diff'], 2)} ± {fmt(c['ci95'], 2)} | {fmt_p(c['p_t'])} | {fmt_p(c['p_wilcoxon'])} |")
    if pairs:
        table += ["", "Informed start against BBR Startup, paired by seed (difference = informed − Startup):", "",
                  "| wired RTT | metric | runs | informed | Startup | difference ± 95 % | p (paired t) | p (Wilcoxon) |",
                  "|---:|---|---:|---:|---:|---:|---:|---:|"] + pairs
    fig.suptitle("Hiorth and Welzl, ours (ns-3, 802.11g 54 Mbit/s): a download joins three saturating stations — "
                 "informed start vs BBR Startup vs TCP", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return table


# Hiorth and Welzl's kinds are shared by several scenarios: their files are named after OUT_DIR.
KINDS.update({"s2fig": s2fig, "s2informed": s2informed})


# ----- Saino et al. (CCTCP): flow completion times of a Poisson × Zipf workload -----

S3_CC = ["cctcp", "cctcp-single", "icp", "icp:slow_start=true"]
S3_COLORS = {"cctcp": "#1f77b4", "cctcp-single": "#ff7f0e", "icp": "#2ca02c", "icp:slow_start=true": "#98df8a"}
S3_ROUTERS = ["h1"] + [f"p{k}" for k in range(1, 7)] + ["h2"]


def s3_fetches(run_dir):
    """The measured fetches of a run (fetches.csv rows started after the warm-up)."""
    return [f for f in read_csv(os.path.join(run_dir, "fetches.csv")) if f["measured"] == "1"]


def s3_fct(fetches):
    """Completion times (s) of the measured fetches that completed, sorted."""
    return sorted(num(f["fct_s"]) for f in fetches if f["completed"] == "1")


def s3_hit_counts(run_dir, warmup):
    """Per router, (hits, lookups) over the measured part of the run (cs.csv after warm-up)."""
    out = {}
    for r in read_csv(os.path.join(run_dir, "cs.csv")):
        if num(r["time_s"]) <= warmup:
            continue
        h, n = out.get(r["node"], (0.0, 0.0))
        out[r["node"]] = (h + num(r["cs_hits"]), n + num(r["cs_hits"]) + num(r["cs_misses"]))
    return out


def s3_hit_ratios(run_dirs, warmup):
    """Per router, hits / lookups after warm-up, pooled over the runs (repetitions)."""
    tot = {}
    for d in run_dirs:
        for n, (h, k) in s3_hit_counts(d, warmup).items():
            a, b = tot.get(n, (0.0, 0.0))
            tot[n] = (a + h, b + k)
    return {n: (h / k if k else float("nan")) for n, (h, k) in tot.items()}


def s3_stats(fetches_by_run):
    """Pooled over the runs' measured fetches: mean FCT with its 95 % half-width (Student t
    over fetches), nearest-rank median and p90 (rdtp_stats: as the Rust tools) and the
    per-run means; per completed fetch, means of
    timeouts, spurious losses (late arrivals + duplicates: units declared lost whose Data
    came anyway) and sources, and the shares of fetches with 1, 2 and 3 or more sources."""
    fetches = [f for fs in fetches_by_run for f in fs]
    fct = s3_fct(fetches)
    n = len(fct)
    _, mean, ci95 = spread(fct) or (0, float("nan"), float("nan"))
    done = [f for f in fetches if f["completed"] == "1"]
    per = lambda col: sum(num(f[col]) for f in done) / len(done) if done else float("nan")  # noqa: E731
    share = lambda p: sum(1 for f in done if p(num(f["n_sources"]))) / len(done) if done else float("nan")  # noqa: E731
    timeouts = sum(num(f["timeouts"]) for f in done)
    spurious = sum(num(f["late_arrivals"]) + num(f["duplicates"]) for f in done)
    run_means = [sum(x) / len(x) for x in (s3_fct(fs) for fs in fetches_by_run) if x]
    return {
        "runs": len(fetches_by_run),
        "n": len(fetches),
        "done": n,
        "mean": mean,
        "ci": ci95,
        "run_means": run_means,
        "median": quantile(fct, 0.5),
        "p90": quantile(fct, 0.9),
        "timeouts": per("timeouts"),
        "spurious": spurious / len(done) if done else float("nan"),
        "spurious_share": spurious / timeouts if timeouts else float("nan"),
        "sources": per("n_sources"),
        "cached": sum(num(f["cached_bytes"]) for f in done) / sum(num(f["bytes"]) for f in done) if done else float("nan"),
        "one": share(lambda k: k == 1),
        "two": share(lambda k: k == 2),
        "more": share(lambda k: k >= 3),
    }


def s3_key(r, col):
    return r.get(col, "")


def s3_mean_cell(st):
    """`mean ± ci` and, with repetitions, the per-repetition means' range."""
    text = f"{fmt(st['mean'], 2)} ± {fmt(st['ci'], 2)}"
    if len(st["run_means"]) > 1:
        text += f" [{fmt(min(st['run_means']), 2)}–{fmt(max(st['run_means']), 2)}]"
    return text


def s3_row(st):
    return (f"{st['n']} | {st['done']} | {s3_mean_cell(st)} | {fmt(st['median'], 2)} | {fmt(st['p90'], 2)} | "
            f"{fmt(st['timeouts'], 1)} | {fmt(st['spurious'], 1)} | {fmt(100 * st['spurious_share'], 0)} % | "
            f"{fmt(st['sources'], 2)} | {fmt(100 * st['one'], 0)} / {fmt(100 * st['two'], 0)} / "
            f"{fmt(100 * st['more'], 0)} % | {fmt(100 * st['cached'], 1)} % | {over_runs(st['run_means'], 2)} |")


S3_HEADER = ("measured fetches | completed | mean FCT (s) ± 95 % [per-run means] | median | p90 | timeouts / fetch | "
             "spurious / fetch | spurious share of timeouts | sources / fetch | fetches from 1 / 2 / ≥ 3 sources | "
             "bytes from caches | mean FCT over runs (s) ± 95 % over runs (n) |")
S3_ALIGN = "---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"


def s3_run_means(sel):
    """{ns-3 run: mean FCT of that run's completed measured fetches} (NaN for none)."""
    out = {}
    for r in sel:
        fct = s3_fct(s3_fetches(r["_dir"]))
        out[r["run"]] = sum(fct) / len(fct) if fct else float("nan")
    return out


def s3_comparisons(label, per_run):
    """Saino et al.'s claims, CCTCP's mean FCT below cctcp-single's and icp's, tested run by run:
    `per_run` {(point cells, cc): {run: mean FCT}}; the runs of the same ns-3 run (the same
    arrivals, popularity draws and warm-up) are paired. Reduction = 1 − cctcp / other."""
    lines = ["", "CCTCP against cctcp-single and icp, mean FCT per run (s), paired by ns-3 run: first = cctcp, "
             "second = the other; difference = cctcp − other; reduction = 1 − cctcp / other (positive: cctcp faster)",
             "", f"| {label} | cctcp vs | " + COMPARE_HEADER.replace("first / second − 1", "reduction"),
             "|" + "---:|" * label.count("|") + "---:|---|" + COMPARE_ALIGN]
    points = []
    for point, _ in per_run:
        if point not in points:
            points.append(point)
    for point in points:
        mine = per_run.get((point, "cctcp"))
        for other in ("cctcp-single", "icp"):
            theirs = per_run.get((point, other))
            if not mine or not theirs:
                continue
            keys = sorted(set(mine) & set(theirs), key=lambda k: num(k))
            lines.append(f"| {point} | {other} | "
                         + compare_cells([mine[k] for k in keys], [theirs[k] for k in keys], 2, sign=-1.0))
    return lines if len(lines) > 5 and max(len(v) for v in per_run.values()) > 1 else []


def s3fig4(out, png):
    """Saino et al. Fig. 4: FCT CDFs per protocol for each cache size × α of one caching policy,
    every repetition's measured fetches pooled."""
    rows = runs(out, per_run=True)
    warmup = num(run_params(rows[0]["_dir"]).get("Warmup", "0"))
    sizes = sorted({s3_key(r, "topology.router.*.cs_size") for r in rows}, key=lambda v: num(v))
    alphas = sorted({s3_key(r, "flow.*.alpha") for r in rows}, key=lambda v: num(v))
    fig, axes = plt.subplots(len(sizes), len(alphas), figsize=(5 * len(alphas), 3.6 * len(sizes)), squeeze=False)
    table = ["| cache size (units) | α | protocol | " + S3_HEADER, "|---:|---:|---|" + S3_ALIGN]
    reductions = ["", "| cache size (units) | α | mean FCT: cctcp vs cctcp-single | cctcp vs icp |", "|---:|---:|---:|---:|"]
    hits = ["", "| cache size (units) | α | protocol | hit ratio per router (" + ", ".join(S3_ROUTERS) + "), after warm-up |",
            "|---:|---:|---|---|"]
    nreps = 1
    per_run = {}
    for i, size in enumerate(sizes):
        for j, alpha in enumerate(alphas):
            ax = axes[i][j]
            means = {}
            for cc in S3_CC:
                sel = [r for r in rows if s3_key(r, "topology.router.*.cs_size") == size
                       and s3_key(r, "flow.*.alpha") == alpha and s3_key(r, "flow.*.cc") == cc]
                if not sel:
                    continue
                nreps = max(nreps, len(sel))
                by_run = [s3_fetches(r["_dir"]) for r in sel]
                fct = s3_fct([f for fs in by_run for f in fs])
                st = s3_stats(by_run)
                means[cc] = st["mean"]
                per_run[(f"{size} | {alpha}", cc)] = s3_run_means(sel)
                if fct:
                    ax.step(fct, [(k + 1) / len(fct) for k in range(len(fct))], where="post",
                            color=S3_COLORS[cc], label=f"{cc} (mean {fmt(st['mean'], 2)} s)")
                table.append(f"| {size} | {alpha} | {cc} | " + s3_row(st))
                hr = s3_hit_ratios([r["_dir"] for r in sel], warmup)
                hits.append(f"| {size} | {alpha} | {cc} | " + ", ".join(fmt(100 * hr.get(n, float('nan')), 1) for n in S3_ROUTERS) + " % |")
            red = lambda a, b: fmt(100 * (1 - means[a] / means[b]), 1) + " %" if a in means and b in means else "–"  # noqa: E731
            reductions.append(f"| {size} | {alpha} | {red('cctcp', 'cctcp-single')} | {red('cctcp', 'icp')} |")
            ax.set_title(f"C = {size} units per router, α = {alpha}", fontsize=9)
            ax.set_xlabel("flow completion time (s)")
            ax.set_ylabel("CDF")
            ax.set_xscale("log")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, loc="lower right")
    reps_note = f", {nreps} runs pooled" if nreps > 1 else ""
    fig.suptitle(f"Saino et al. Fig. 4, ours: {os.path.basename(os.path.normpath(out))}{reps_note}", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return (table + caveats(s3_key(r, "flow.*.cc") for r in rows) + reductions
            + s3_comparisons("cache size (units) | α", per_run) + hits)


def s3fig5(out, png):
    """Saino et al. Fig. 5: mean FCT vs link delay T_link (ALL+LRU, α = 0.8, C = 0.04 P): the
    figure the mean over runs with its 95 % interval over runs; the table also the pooled
    fetches' statistics."""
    rows = runs(out, per_run=True)
    warmup = num(run_params(rows[0]["_dir"]).get("Warmup", "0"))
    delays = sorted({s3_key(r, "topology.link.*.delay") for r in rows}, key=lambda v: num(v.rstrip("ms")))
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    table = ["| T_link | protocol | " + S3_HEADER, "|---:|---|" + S3_ALIGN]
    hits = ["", "| T_link | protocol | hit ratio per router (" + ", ".join(S3_ROUTERS) + "), after warm-up |", "|---:|---|---|"]
    nreps = 1
    per_run = {}
    for cc in S3_CC:
        xs, ys, es, sp = [], [], [], []
        for d in delays:
            sel = [r for r in rows if s3_key(r, "topology.link.*.delay") == d and s3_key(r, "flow.*.cc") == cc]
            if not sel:
                continue
            nreps = max(nreps, len(sel))
            st = s3_stats([s3_fetches(r["_dir"]) for r in sel])
            per_run[(d, cc)] = s3_run_means(sel)
            xs.append(num(d.rstrip("ms")))
            # The mean over runs and its 95 % interval over runs (the run the unit); with one
            # run, the mean over its fetches and their interval.
            over = spread(st["run_means"]) if len(st["run_means"]) > 1 else None
            ys.append(over[1] if over else st["mean"])
            es.append(over[2] if over else st["ci"])
            sp.append(st["spurious"])
            table.append(f"| {d} | {cc} | " + s3_row(st))
            hr = s3_hit_ratios([r["_dir"] for r in sel], warmup)
            hits.append(f"| {d} | {cc} | " + ", ".join(fmt(100 * hr.get(n, float('nan')), 1) for n in S3_ROUTERS) + " % |")
        ax[0].errorbar(xs, ys, yerr=es, marker="o", capsize=3, color=S3_COLORS[cc], label=cc)
        ax[1].plot(xs, sp, marker="o", color=S3_COLORS[cc], label=cc)
    ax[0].set_xlabel("T_link (ms)")
    ax[0].set_ylabel("mean flow completion time (s), 95 % CI " + ("over runs" if nreps > 1 else "over fetches"))
    ax[1].set_xlabel("T_link (ms)")
    ax[1].set_ylabel("spurious losses per fetch (late arrivals + duplicates)")
    for a in ax:
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    reps_note = f", mean of {nreps} runs" if nreps > 1 else ""
    fig.suptitle(f"Saino et al. Fig. 5, ours: ALL+LRU, α = 0.8, C = 0.04 P{reps_note}", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return table + caveats(s3_key(r, "flow.*.cc") for r in rows) + s3_comparisons("T_link", per_run) + hits


# Saino et al.'s Fig. 4 has one file per caching policy: its files are named after OUT_DIR.
KINDS.update({"s3fig4": s3fig4, "s3fig5": s3fig5})


# ----- The default-controller suite (tools/suite.sh): every controller on every scenario -----

SUITE_GOALS = "margin ≥ −3 %, mean RTT ≤ 1.15 × RTprop on wired rows and ≤ the best controller's on WiFi rows (not beside TCP, whose queue it is), Jain ≥ 0.98 among its own flows, no side below 10 % of the link against TCP, spurious re-requests ≤ 1 % (harness rows)"


def suite_harness(path):
    """The harness part (harness.csv of the suite example): {scenario: {controller: cell}}, each
    cell the mean over seeds; `fetch` rows are scored by 1 / completion time."""
    rows, order = {}, []
    for r in read_csv(path):
        if r["scenario"] not in rows:
            rows[r["scenario"]] = {}
            order.append(r["scenario"])
        rows[r["scenario"]].setdefault(r["controller"], []).append(r)
    table = {}
    for name in order:
        table[name] = {}
        for cc, rs in rows[name].items():
            fct = [num(r["fct_s"]) for r in rs]
            is_fct = rs[0]["group"] == "fetch"
            done = [f for f in fct if not math.isnan(f)]
            value = (sum(done) / len(done)) if is_fct and len(done) == len(fct) else (
                float("nan") if is_fct else sum(num(r["goodput_mbps"]) for r in rs) / len(rs))
            jains = [num(r["jain"]) for r in rs if r["jain"]]
            table[name][cc] = {
                "value": value, "fct": is_fct, "score": (1 / value if is_fct else value) if value == value else 0.0,
                "rtt": None if is_fct else sum(num(r["rtt_ratio"]) for r in rs) / len(rs), "rtt_kind": "ratio",
                "spurious": max(num(r["spurious_pct"]) for r in rs), "jain": min(jains) if jains else None,
                "share": None, "wifi": False, "note": "" if all(r["exact"] == "true" for r in rs) else "not exact",
            }
    return table


def suite_sim_cell(d):
    """One controller's runs of one suite file (an `rdtp sim` output directory): per sweep point
    (its runs' summary rows), the scored cell."""
    import tomllib
    with open(os.path.join(d, "scenario.toml"), "rb") as f:
        scen = tomllib.load(f)
    wifi = scen.get("topology", {}).get("kind") == "wifi"
    by_point = {}
    for r in read_csv(os.path.join(d, "summary.csv")):
        point = " ".join(r[k] for k in suite_sweep_keys(r))
        by_point.setdefault(point, {}).setdefault(r["run_id"], []).append(r)
    cells = {}
    for point, per_run in by_point.items():
        values, rtts, mins, jains, shares, notes = [], [], [], [], [], []
        is_fct = False
        for run_id, rs in per_run.items():
            own = [r for r in rs if r["kind"] in ("rdtp", "workload")]
            other = [r for r in rs if r["kind"].startswith("tcp")]
            run_dir = os.path.join(d, run_id)
            if own and own[0]["kind"] == "workload":
                is_fct = True
                fct = s3_fct(s3_fetches(run_dir))
                values.append(sum(fct) / len(fct) if fct else float("nan"))
            elif any(r["finish_s"] or r["completed"] == "1" for r in own) or scen.get("scenario", {}).get("stop_when_done"):
                is_fct = True
                done = [num(r["finish_s"]) - num(r["start_s"]) for r in own if r["completed"] == "1"]
                if len(done) < len(own):
                    notes.append(f"{len(own) - len(done)} of {len(own)} unfinished")
                values.append(sum(done) / len(done) if done else float("nan"))
            else:
                values.append(sum(num(r["goodput_mbps"]) for r in own))
            rtt = [num(r["mean_rtt_ms"]) for r in own if r["mean_rtt_ms"]]
            rtts.extend(rtt)
            mins.extend(num(r["min_rtt_ms"]) for r in own if r["min_rtt_ms"])
            if len(own) > 1:
                jains.append(jain([num(r["goodput_mbps"]) for r in own]))
            if other and not is_fct:
                mine, theirs = sum(num(r["goodput_mbps"]) for r in own), sum(num(r["goodput_mbps"]) for r in other)
                shares.append(mine / (mine + theirs) if mine + theirs > 0 else float("nan"))
        ok = [v for v in values if v == v]
        value = sum(ok) / len(ok) if ok and len(ok) == len(values) else float("nan")
        rtt = sum(rtts) / len(rtts) if rtts else None
        cells[point] = {
            "value": value, "fct": is_fct, "score": (1 / value if is_fct else value) if value == value and value > 0 else 0.0,
            "rtt": (rtt if wifi else rtt / min(mins)) if rtt and mins else None, "rtt_kind": "ms" if wifi else "ratio",
            "spurious": None, "jain": min(jains) if jains else None, "share": min(shares) if shares else None,
            "wifi": wifi, "note": "; ".join(sorted(set(notes))),
        }
    return cells


def suite_sweep_keys(row):
    """The sweep columns of a summary row: dotted keys before `seed` (run_id comes first)."""
    keys = list(row)
    return keys[1:keys.index("seed")] if "seed" in keys else []


def suite(out, png):
    """The default-controller suite: one row per scenario (harness grid, then every
    experiments/suite file and sweep point), one column per controller; the candidate's margin
    to the best in the row and the goals it misses. Heat map: each cell's score over the row's
    best (goodput, or 1 / completion time)."""
    with open(os.path.join(out, "suite.json")) as f:
        meta = json.load(f)
    ccs, cand = meta["controllers"], meta["candidate"]
    table = {}
    if os.path.exists(os.path.join(out, "harness.csv")):
        for name, cells in suite_harness(os.path.join(out, "harness.csv")).items():
            table[f"harness: {name}"] = cells
    for f in sorted(glob.glob(os.path.join(out, "sim", "*"))):
        per_cc = {}
        for cc in ccs:
            d = os.path.join(f, cc.replace("/", "_"))
            if os.path.exists(os.path.join(d, "summary.csv")):
                for point, cell in suite_sim_cell(d).items():
                    per_cc.setdefault(point, {})[cc] = cell
        for point, cells in per_cc.items():
            table[f"{os.path.basename(f)}{' ' + point if point else ''}"] = cells
    lines = [f"Default-controller suite: candidate `{cand}`; {len(table)} scenarios × {len(ccs)} controllers. "
             "Cells: goodput in Mbit/s, or completion time in s (rows marked FCT); mean over the runs "
             f"({meta.get('runs', '?')} per point in ns-3, {meta.get('seeds', '?')} seeds in the harness). "
             f"Margin: the candidate's goodput or 1 / FCT over the row's best, − 1. Goals: {SUITE_GOALS}; ✗ marks each one missed.", "",
             "| scenario | " + " | ".join(ccs) + " | best | margin | RTT | Jain | share vs TCP | goals |",
             "|---|" + "---:|" * len(ccs) + "---|---:|---:|---:|---:|---|"]
    heat, labels = [], []
    for name, cells in table.items():
        scores = {cc: c["score"] for cc, c in cells.items()}
        if not scores:
            continue
        best = max(scores, key=scores.get)
        fct = any(c["fct"] for c in cells.values())
        row = [name + (" (FCT)" if fct else "")]
        for cc in ccs:
            c = cells.get(cc)
            row.append("" if c is None else ("—" if c["value"] != c["value"] else f"{c['value']:.2f}") + (" †" if c and c["note"] else ""))
        me = cells.get(cand)
        if me is None:
            row += [best, "", "", "", "", "not run"]
        else:
            margin = me["score"] / scores[best] - 1 if scores[best] > 0 else 0.0
            missed = []
            if margin < -0.03:
                missed.append("✗ margin")
            # A TCP flow beside it fills the buffer whatever the controller does: no RTT goal there.
            if me["rtt"] is not None and me["share"] is None:
                if me["wifi"]:
                    wifi_best = min(c["rtt"] for c in cells.values() if c["rtt"] is not None)
                    if me["rtt"] > wifi_best * 1.0001:
                        missed.append("✗ RTT")
                elif me["rtt"] > 1.15:
                    missed.append("✗ RTT")
            if me["jain"] is not None and me["jain"] < 0.98:
                missed.append("✗ Jain")
            if me["share"] is not None and not (0.1 <= me["share"] <= 0.9):
                missed.append("✗ starvation")
            if me["spurious"] is not None and me["spurious"] > 1.0:
                missed.append("✗ spurious")
            rtt = "" if me["rtt"] is None else (f"{me['rtt']:.1f} ms" if me["rtt_kind"] == "ms" else f"{me['rtt']:.2f}")
            row += [best, f"{margin * 100:+.1f} %", rtt, "" if me["jain"] is None else f"{me['jain']:.3f}",
                    "" if me["share"] is None else f"{me['share']:.2f}", " ".join(missed) or "✓"]
        lines.append("| " + " | ".join(row) + " |")
        heat.append([scores[cc] / scores[best] if cc in scores and scores[best] > 0 else float("nan") for cc in ccs])
        labels.append(row[0])
    lines += ["", "† a run of the cell did not finish every fetch, or delivered bytes that were not exact; see its directory."]
    if heat:
        fig, ax = plt.subplots(figsize=(1.1 * len(ccs) + 4, 0.32 * len(heat) + 1.5))
        im = ax.imshow(heat, cmap="RdYlGn", vmin=0.5, vmax=1.0, aspect="auto")
        ax.set_xticks(range(len(ccs)), ccs, rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
        for i, r in enumerate(heat):
            for j, v in enumerate(r):
                if v == v:
                    ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6)
        fig.colorbar(im, ax=ax, label="score / best in row (goodput or 1 / FCT)")
        ax.set_title(f"Default-controller suite: every controller, every scenario (candidate {cand})")
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        plt.close(fig)
    return lines


KINDS.update({"suite": suite})


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in KINDS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(KINDS)}}} OUT_DIR [PNG_DIR]")
    kind, out = sys.argv[1], sys.argv[2]
    png_dir = sys.argv[3] if len(sys.argv) > 3 else out
    os.makedirs(png_dir, exist_ok=True)
    name = os.path.basename(os.path.normpath(out)) if kind.startswith("s2") or kind == "s3fig4" else kind
    png = os.path.join(png_dir, f"{name}.png")
    lines = KINDS[kind](out, png)
    with open(os.path.join(out, f"{name}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    pngs = [png] if os.path.exists(png) else sorted(glob.glob(png[:-4] + "-*.png"))
    print(f"wrote {', '.join(pngs)} and {os.path.join(out, name + '.md')}")


if __name__ == "__main__":
    main()
