#!/usr/bin/env python3
"""Figures and tables for the experiments in this directory.

    python3 experiments/plot.py KIND OUT_DIR [PNG_DIR]

KIND is the scenario's `plot` key (fig7a, fig7b, fig8, fig9, fig10, fig10multi; seed 001:
s1-fig5-t1 (also Fig. 6), s1-fig5-t2, s1-fig7-t1, s1-fig7-t2, s1-table1); OUT_DIR is
what `rdtp sim` wrote (summary.csv and one directory per run). Writes KIND.png (into PNG_DIR,
default OUT_DIR) and KIND.md (a Markdown table of the numbers, into OUT_DIR).
Needs matplotlib; reads the CSVs with the standard library only.
"""

import csv
import math
import os
import sys

import matplotlib

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


def timeseries(run_dir):
    """{flow index: [(t, goodput_mbps, rtt_ms)]}"""
    series = {}
    for r in read_csv(os.path.join(run_dir, "timeseries.csv")):
        series.setdefault(int(r["flow"]), []).append((num(r["time_s"]), num(r["goodput_mbps"]), num(r["rtt_ms"])))
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


# --- figures ------------------------------------------------------------------------------


def fig7a(out, png):
    rows = runs(out)
    labels = ["rdtp-bbr", "tcp-bbr", "tcp-cubic"]
    configs = []
    for r in rows:
        c = (rate_mbps(r["topology.rate"]), r["topology.rtt"])
        if c not in configs:
            configs.append(c)
    configs.sort(key=lambda c: (c[0], num(c[1].rstrip("ms"))))
    table = {(rate_mbps(r["topology.rate"]), r["topology.rtt"], r["flow.0"]): r for r in rows}
    fig, (ax_u, ax_r) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True)
    width = 0.27
    for i, label in enumerate(labels):
        xs = [k + (i - 1) * width for k in range(len(configs))]
        util = [num(table.get((c[0], c[1], label), {}).get("utilisation")) * 100 for c in configs]
        rtt = [num(table.get((c[0], c[1], label), {}).get("mean_rtt_ms")) for c in configs]
        ax_u.bar(xs, util, width, label=label, color=COLORS[label])
        ax_r.bar(xs, rtt, width, label=label, color=COLORS[label])
    ax_u.set_ylabel("bottleneck utilisation (%)")
    ax_u.set_ylim(0, 105)
    ax_u.axhline(90, color="grey", lw=0.8, ls=":")
    ax_u.legend(ncol=3, loc="lower right")
    ax_r.set_ylabel("mean RTT (ms)")
    ax_r.set_xticks(range(len(configs)))
    ax_r.set_xticklabels([f"{int(c[0])} Mb/s\n{c[1]}" for c in configs], fontsize=8)
    fig.suptitle("Fig. 7a (ns-3): one flow, static bottleneck, 1-BDP DropTail buffer, 20 s (measured after 5 s)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)

    lines = [
        "| bottleneck | base RTT | rdtp bbr util. | TCP BBR util. | TCP CUBIC util. | rdtp bbr RTT ms | TCP BBR RTT ms | TCP CUBIC RTT ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in configs:
        u = [fmt(num(table.get((c[0], c[1], l), {}).get("utilisation")) * 100) + " %" for l in labels]
        t = [fmt(num(table.get((c[0], c[1], l), {}).get("mean_rtt_ms"))) for l in labels]
        lines.append(f"| {int(c[0])} Mbit/s | {c[1]} | " + " | ".join(u + t) + " |")
    return lines


def fig7b(out, png):
    rows = runs(out)
    fig, ax = plt.subplots(figsize=(10, 4.2))
    lines = ["| flow | mean goodput 0–36 s (Mbit/s) | mean capacity use | mean RTT (ms) |", "|---|---:|---:|---:|"]
    schedule = None
    for r in rows:
        label = r["flow.0"]
        ts = timeseries(r["_dir"])[0]
        ax.plot([p[0] for p in ts], [p[1] for p in ts], label=label, color=COLORS[label], lw=1.2)
        if schedule is None:
            sched = run_params(r["_dir"]).get("RateSchedule", "")
            schedule = [(float(a), rate_mbps(b)) for a, b in (s.split(":") for s in sched.split(",") if s)]
        cap = lambda t: [c for a, c in schedule if a <= t][-1]  # noqa: E731
        use = [p[1] / cap(p[0] - 0.05) for p in ts if p[0] > 0.5]
        lines.append(
            f"| {label} | {fmt(sum(p[1] for p in ts) / len(ts))} | {fmt(100 * sum(use) / len(use))} % "
            f"| {fmt(num(r['mean_rtt_ms']))} |"
        )
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
    ax.set_title("Fig. 7b (ns-3): dynamic bottleneck 200→500→800→1000→500→200 Mbit/s, RTT 5 ms")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def fig8(out, png):
    rows = runs(out, per_run=True)
    by_rate = {}
    for r in rows:
        by_rate.setdefault(r["topology.rate"], r["_dir"])
    rates = sorted(by_rate, key=rate_mbps)
    fig, axes = plt.subplots(len(rates), 1, figsize=(10, 3.0 * len(rates)), sharex=True)
    lines = [
        "| bottleneck | Jain index, 4 flows (20–45 s) | Jain, 3 flows (50–60 s) | total goodput 20–45 s | total 50–60 s |",
        "|---:|---:|---:|---:|---:|",
    ]
    for ax, rate in zip(axes, rates):
        series = timeseries(by_rate[rate])
        times = sorted({p[0] for s in series.values() for p in s})
        total = {t: 0.0 for t in times}
        for f, s in sorted(series.items()):
            ax.plot([p[0] for p in s], [p[1] for p in s], lw=1, label=f"flow {f}")
            for p in s:
                total[p[0]] += p[1]
        ax.plot(times, [total[t] for t in times], color="black", lw=1.2, label="total")
        ax.set_ylabel("Mbit/s")
        ax.set_title(f"{rate}, RTT 20 ms", fontsize=9)
        four = [mean_between(series[f], 20, 45, 1) for f in range(4)]
        three = [mean_between(series[f], 50, 60, 1) for f in range(1, 4)]
        tot4 = sum(total[t] for t in times if 20 <= t < 45) / max(1, sum(1 for t in times if 20 <= t < 45))
        tot3 = sum(total[t] for t in times if 50 <= t < 60) / max(1, sum(1 for t in times if 50 <= t < 60))
        lines.append(f"| {rate} | {jain(four):.3f} | {jain(three):.3f} | {fmt(tot4)} Mbit/s | {fmt(tot3)} Mbit/s |")
    axes[0].legend(ncol=5, fontsize=8, loc="upper right")
    axes[-1].set_xlabel("time (s)")
    fig.suptitle("Fig. 8 (ns-3): four rdtp bbr flows sharing a bottleneck (flow 0 leaves at 45 s)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def wifi_pair(rows, key_path, key_cc):
    out = {}
    for r in rows:
        out[(r[key_path], r[key_cc])] = r
    return out


def fig9(out, png):
    rows = runs(out)
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
            drops = queue_drops(r["_dir"])
            lines.append(
                f"| wired one-way {wd} | {cc} | {fmt(num(r['goodput_mbps']))} | {fmt(num(r['mean_rtt_ms']), 2)} "
                f"| {fmt(num(r['min_rtt_ms']), 2)} | {r['retransmissions']} | {drops} |"
            )
        row[0].set_ylabel("goodput (Mbit/s)")
        row[1].set_ylabel("RTT (ms)")
        row[0].set_title(f"802.11ac + wired link with {wd} one-way delay", fontsize=9)
        row[1].set_title("RTT samples (interval means)", fontsize=9)
        row[0].legend(fontsize=8)
    for a in axes[-1]:
        a.set_xlabel("time (s)")
    fig.suptitle("Fig. 9 (ns-3): rdtp bbr vs bbr-wifi over 802.11ac (80 MHz, VHT MCS 9, 1 SS)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def queue_drops(run_dir):
    for line in open(os.path.join(run_dir, "run.toml")):
        if line.startswith("queue_drops"):
            return line.split("=")[1].strip()
    return "?"


def fig10(out, png):
    rows = runs(out)
    stds = []
    for r in rows:
        if r["topology"] not in stds:
            stds.append(r["topology"])
    labels = []
    for r in rows:
        if r["flow.0"] not in labels:
            labels.append(r["flow.0"])
    table = {(r["topology"], r["flow.0"]): r for r in rows}
    fig, axes = plt.subplots(len(stds), 2, figsize=(11, 3.4 * len(stds)))
    lines = [
        "| WiFi | flow | goodput (Mbit/s) | mean RTT (ms) | min RTT (ms) | re-requests / retransmissions | AP queue drops |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row, std in zip(axes, stds):
        good = [num(table[(std, l)]["goodput_mbps"]) for l in labels]
        rtt = [num(table[(std, l)]["mean_rtt_ms"]) for l in labels]
        colors = [COLORS.get(l, "grey") for l in labels]
        row[0].bar(range(len(labels)), good, color=colors)
        row[1].bar(range(len(labels)), rtt, color=colors)
        for a in row:
            a.set_xticks(range(len(labels)))
            a.set_xticklabels(labels, fontsize=7, rotation=15)
        row[0].set_ylabel("goodput (Mbit/s)")
        row[1].set_ylabel("mean RTT (ms)")
        row[0].set_title(std, fontsize=9)
        for l in labels:
            r = table[(std, l)]
            lines.append(
                f"| {std} | {l} | {fmt(num(r['goodput_mbps']))} | {fmt(num(r['mean_rtt_ms']), 2)} "
                f"| {fmt(num(r['min_rtt_ms']), 2)} | {r['retransmissions']} | {queue_drops(r['_dir'])} |"
            )
    fig.suptitle("Fig. 10 (ns-3): one station, ≈ 7 ms path (5 ms-RTT wired part), 20 s (measured after 5 s)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def fig10multi(out, png):
    rows = runs(out, per_run=True)
    fig, axes = plt.subplots(len(rows), 1, figsize=(10, 3.0 * len(rows)), sharex=True)
    lines = ["| WiFi | Jain index, 3 flows (15–30 s) | total goodput 15–30 s (Mbit/s) |", "|---|---:|---:|"]
    for ax, r in zip(axes, rows):
        series = timeseries(r["_dir"])
        times = sorted({p[0] for s in series.values() for p in s})
        total = {t: 0.0 for t in times}
        for f, s in sorted(series.items()):
            ax.plot([p[0] for p in s], [p[1] for p in s], lw=1, label=f"station {f}")
            for p in s:
                total[p[0]] += p[1]
        ax.plot(times, [total[t] for t in times], color="black", lw=1.2, label="total")
        ax.set_ylabel("Mbit/s")
        ax.set_title(r["topology"], fontsize=9)
        shares = [mean_between(series[f], 15, 30, 1) for f in sorted(series)]
        tot = sum(total[t] for t in times if 15 <= t < 30) / max(1, sum(1 for t in times if 15 <= t < 30))
        lines.append(f"| {r['topology']} | {jain(shares):.3f} | {fmt(tot)} |")
    axes[0].legend(ncol=4, fontsize=8)
    axes[-1].set_xlabel("time (s)")
    fig.suptitle("Fig. 10c/f (ns-3): three rdtp bbr-wifi flows sharing one AP, starting 5 s apart")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
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
    fig.suptitle("Fig. 7a on the testbed: real processes, Linux TCP, ns-3 real-time bottleneck (hatched: emulator lagged, invalid)")
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
    fig.suptitle("Fig. 8 on the testbed: four rdtp bbr flows from four namespaces, 100 Mbit/s, 20 ms (flow 1 leaves at 40 s)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def tb_fig10(out, png):
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
    lines = ["| WiFi hop | flow | goodput (Mbit/s) | ping RTT mean / p95 (ms) | valid |", "|---|---|---:|---:|---|"]
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
    fig.suptitle("Fig. 10 on the testbed: real processes and Linux TCP over a real-time ns-3 WiFi hop (hatched: invalid)")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


# --- seed 001 (BBR-CD) --------------------------------------------------------------------

S1_SCHEMES = ["bbr-cd", "sirc", "bbr-orig", "aimd", "cubic"]
S1_COLORS = {"bbr-cd": "#d62728", "sirc": "#2ca02c", "bbr-orig": "#1f77b4", "aimd": "#ff7f0e", "cubic": "#9467bd"}
S1_SIZE = 20e6  # bytes per consumer


def s1_runs(out):
    """{(scheme, unit): [run]} with run = {seed, dir, flows: [flows.csv rows], goodput, done}.
    Goodput (S1 §IV-A): the object's size over the delivery time (first request to last
    unit) per consumer, summed over the consumers of a run (S1 footnote 3)."""
    groups = {}
    for r in runs(out, per_run=True):
        scheme = r.get("flow.0") or r["cc"]
        unit = int(num(r.get("flow.0.unit", r.get("unit", "0")), 0))
        flows = read_csv(os.path.join(r["_dir"], "flows.csv"))
        done = all(f["completed"] == "1" for f in flows)
        gp = sum(S1_SIZE * 8 / (num(f["finish_s"]) - num(f["start_s"])) / 1e6 for f in flows if f["completed"] == "1")
        run = {"seed": int(r["seed"]), "dir": r["_dir"], "flows": flows, "goodput": gp, "done": done,
               "outage": r.get("outage", "")}
        groups.setdefault((scheme, unit), []).append(run)
    return groups


def s1_requests(run_dir):
    """requests.csv rows as (time, flow, units, retransmission)."""
    path = os.path.join(run_dir, "requests.csv")
    if not os.path.exists(path):
        return []
    return [(num(r["time_s"]), int(r["flow"]), int(r["units"]), r["retransmission"] == "1") for r in read_csv(path)]


def s1_rerequest_share(run_dir):
    """Units asked for again / all units asked for (S1 §IV-C's share of retransmitted interests)."""
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
    fig, axes = plt.subplots(1, len(units), figsize=(5.2 * len(units), 3.8), squeeze=False)
    head = "| scheme | unit | rounds | goodput Mbit/s mean | min | max |" + (" re-requests % |" if lossy else "")
    lines = [head, "|---|---:|---:|---:|---:|---:|" + ("---:|" if lossy else "")]
    for ax, unit in zip(axes[0], units):
        for i, s in enumerate(schemes):
            rs = groups.get((s, unit), [])
            mean, lo, hi = s1_stats([r["goodput"] if r["done"] else float("nan") for r in rs])
            ax.bar(i, mean, color=S1_COLORS[s], yerr=[[mean - lo], [hi - mean]], capsize=4)
            ax.text(i, mean / 2, fmt(mean), ha="center", color="white", fontsize=8)
            row = f"| {s} | {unit} | {sum(r['done'] for r in rs)}/{len(rs)} | {fmt(mean)} | {fmt(lo)} | {fmt(hi)} |"
            if lossy:
                share, _, _ = s1_stats([s1_rerequest_share(r["dir"]) for r in rs])
                row += f" {fmt(100 * share)} |"
            lines.append(row)
        ax.set_xticks(range(len(schemes)))
        ax.set_xticklabels(schemes)
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_title(f"{unit}-byte units")
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title + " — mean of the rounds, whiskers min/max")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


def s1_fig5_t1(out, png):
    lines = s1_goodput(out, png, "Seed 001 Fig. 5, Topology 1 (one consumer), no added loss", False)
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
            q = lambda p: gaps[min(len(gaps) - 1, max(0, math.ceil(p * len(gaps)) - 1))]  # noqa: E731
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
    fig.suptitle("Seed 001 Fig. 6: request pacing, Topology 1, no added loss (round 1)")
    fig.tight_layout()
    fig.savefig(png.replace(".png", "-fig6.png"), dpi=90)
    return lines


def s1_fig5_t2(out, png):
    return s1_goodput(out, png, "Seed 001 Fig. 5, Topology 2 (ten consumers, goodput summed)", False)


def s1_fig7_t1(out, png):
    return s1_goodput(out, png, "Seed 001 Fig. 7, Topology 1, ≈ 10 % round-trip loss", True)


def s1_fig7_t2(out, png):
    return s1_goodput(out, png, "Seed 001 Fig. 7, Topology 2 (goodput summed), ≈ 10 % round-trip loss", True)


def s1_table1(out, png):
    """Per scheme and round: the min, mean and max delivery time over the consumers with and
    without the outage; increase ratio (T_with − T_without) / 32 s per statistic (S1 Table I),
    averaged over the rounds."""
    outage_s = 32.0
    groups = s1_runs(out)
    table = {}
    for (s, _), rs in groups.items():
        by_seed = {}
        for r in rs:
            times = [num(f["finish_s"]) - num(f["start_s"]) for f in r["flows"] if f["completed"] == "1"]
            if len(times) != len(r["flows"]):
                continue
            stats = (min(times), sum(times) / len(times), max(times))
            by_seed.setdefault(r["seed"], {})["with" if r["outage"] else "without"] = (stats, times)
        for seed, d in sorted(by_seed.items()):
            if "with" in d and "without" in d:
                table.setdefault(s, []).append((seed, d["without"], d["with"]))
    lines = ["| scheme | rounds | T min / mean / max without (s) | with outage (s) | ratio min | ratio mean | ratio max |",
             "|---|---:|---|---|---:|---:|---:|"]
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    schemes = [s for s in S1_SCHEMES if s in table]
    for i, s in enumerate(schemes):
        rows = table[s]
        avg = lambda xs: sum(xs) / len(xs)  # noqa: E731
        wo = [avg([r[1][0][k] for r in rows]) for k in range(3)]
        wi = [avg([r[2][0][k] for r in rows]) for k in range(3)]
        ratios = [avg([(r[2][0][k] - r[1][0][k]) / outage_s for r in rows]) for k in range(3)]
        lines.append(f"| {s} | {len(rows)} | {' / '.join(fmt(x) for x in wo)} | {' / '.join(fmt(x) for x in wi)} "
                     f"| {fmt(ratios[0], 2)} | {fmt(ratios[1], 2)} | {fmt(ratios[2], 2)} |")
        for k, name in enumerate(["min", "mean", "max"]):
            ax.bar(i * 4 + k, ratios[k], color=S1_COLORS[s], alpha=[0.5, 1.0, 0.75][k])
            ax.text(i * 4 + k, ratios[k] + 0.01, f"{name}\n{ratios[k]:.2f}", ha="center", fontsize=7)
    ax.set_xticks([i * 4 + 1 for i in range(len(schemes))])
    ax.set_xticklabels(schemes)
    ax.set_ylabel("delivery-time increase / 32 s outage")
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_title("Seed 001 Table I: producer disconnected 32 s, Topology 2")
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    return lines


KINDS = {"fig7a": fig7a, "fig7b": fig7b, "fig8": fig8, "fig9": fig9, "fig10": fig10, "fig10multi": fig10multi,
         "tb-fig7a": tb_fig7a, "tb-fig8": tb_fig8, "tb-fig10": tb_fig10,
         "s1-fig5-t1": s1_fig5_t1, "s1-fig5-t2": s1_fig5_t2, "s1-fig7-t1": s1_fig7_t1, "s1-fig7-t2": s1_fig7_t2,
         "s1-table1": s1_table1}


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in KINDS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(KINDS)}}} OUT_DIR [PNG_DIR]")
    kind, out = sys.argv[1], sys.argv[2]
    png_dir = sys.argv[3] if len(sys.argv) > 3 else out
    os.makedirs(png_dir, exist_ok=True)
    png = os.path.join(png_dir, f"{kind}.png")
    lines = KINDS[kind](out, png)
    with open(os.path.join(out, f"{kind}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {png} and {os.path.join(out, kind + '.md')}")


if __name__ == "__main__":
    main()
