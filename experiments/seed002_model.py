#!/usr/bin/env python3
"""Fit Hiorth and Welzl's newcomer-rate model and report its error beside the N + 1 rule's.

    python3 experiments/seed002_model.py OUT_DIR... [--write-model FILE] [--png PNG]
    python3 experiments/seed002_model.py OUT_DIR... --model FILE [--png PNG]

With --model FILE nothing is fitted: the model FILE holds (e.g. the shipped
crates/rdtp-proto/src/wifi/model-v1.txt) is evaluated on the runs, to check it against new
data (another ns-3 version, another MAC) before deciding to refit.

Each OUT_DIR is what `rdtp sim experiments/seed002-train*.toml` wrote. For every flow that
joined (joins.csv: the sniffer's estimate when it started) the attained rate is its mean
goodput from 1 s after its start until the next flow joined (or the run ended), converted
from UDP payload to the estimator's unit (IP packets: × 1500/1472). The model is a linear
least-squares fit (numpy.linalg.lstsq, each join weighted by 1 / attained, i.e. minimising
relative error) of the attained rate on the estimator's features n_plus_one, anomaly and
airtime_share (Mbit/s) with an intercept; the Rust core evaluates the
same dot product from the file this writes (crates/rdtp-proto/src/wifi/model-v1.txt).
Held out: every third run of each directory (run index % 3 == 2), never fitted on.
Prints a Markdown table of errors (mean and max absolute error in % of the attained rate).
"""

import csv
import os
import sys

import numpy as np

FEATURES = ["n_plus_one", "anomaly", "airtime_share"]
IP_PER_UDP = 1500.0 / 1472.0


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def joins_of(run_dir, held_out):
    joins = read_csv(os.path.join(run_dir, "joins.csv"))
    series = {}
    for r in read_csv(os.path.join(run_dir, "timeseries.csv")):
        series.setdefault(int(r["flow"]), []).append((num(r["time_s"]), num(r["goodput_mbps"])))
    starts = sorted(num(j["start_s"]) for j in joins)
    end = max(t for pts in series.values() for t, _ in pts)
    rows = []
    for j in joins:
        start = num(j["start_s"])
        later = [s for s in starts if s > start]
        until = later[0] if later else end
        pts = [g for t, g in series.get(int(j["flow"]), []) if start + 1.0 < t <= until]
        if not pts:
            continue
        rows.append({
            "run": os.path.basename(run_dir),
            "dir": os.path.basename(os.path.dirname(run_dir)),
            "held_out": held_out,
            "n": int(j["n_active"]),
            "phy": num(j["newcomer_phy_mbps"]),
            "attained": sum(pts) / len(pts) * IP_PER_UDP,
            "n_plus_one": num(j["n_plus_one_mbps"]),
            "anomaly": num(j["anomaly_mbps"]),
            "airtime_share": num(j["airtime_share_mbps"]),
        })
    return rows


def collect(out_dirs):
    rows = []
    for out in out_dirs:
        runs = sorted(d for d in os.listdir(out) if os.path.isfile(os.path.join(out, d, "joins.csv")))
        for i, d in enumerate(runs):
            rows += joins_of(os.path.join(out, d), held_out=(i % 3 == 2))
    return rows


def design(rows):
    return np.array([[1.0] + [0.0 if np.isnan(r[f]) else r[f] for f in FEATURES] for r in rows])


def errors(pred, rows):
    e = [abs(p - r["attained"]) / r["attained"] * 100 for p, r in zip(pred, rows)]
    return (sum(e) / len(e), max(e)) if e else (float("nan"), float("nan"))


def main():
    args = sys.argv[1:]
    write, png = None, None
    if "--write-model" in args:
        i = args.index("--write-model")
        write = args[i + 1]
        del args[i : i + 2]
    if "--png" in args:
        i = args.index("--png")
        png = args[i + 1]
        del args[i : i + 2]
    given = None
    if "--model" in args:
        i = args.index("--model")
        given = read_model(args[i + 1])
        del args[i : i + 2]
        if write:
            sys.exit("--model evaluates a model file; it cannot be combined with --write-model")
    if not args:
        sys.exit(__doc__)
    rows = collect(args)
    # A join whose newcomer rate was unknown with nobody to average over (Minstrel, N = 0)
    # has no features: nothing to learn from or to predict.
    rows = [r for r in rows if r["anomaly"] > 0]
    train = [r for r in rows if not r["held_out"]]
    test = [r for r in rows if r["held_out"]]
    # Relative error is what matters for a starting rate: weight each join by 1 / attained.
    y = np.array([r["attained"] for r in train])
    x = design(train)
    if given is None:
        coef, *_ = np.linalg.lstsq(x / y[:, None], np.ones(len(y)), rcond=None)
    else:
        coef = given
        print("evaluating the given model (not fitted on these runs)")
    model = lambda rs: [max(0.0, float(v)) for v in design(rs) @ coef]  # noqa: E731

    lines = [
        "| set | joins | N + 1 rule: mean / max error (%) | model: mean / max error (%) |",
        "|---|---|---|---|",
    ]
    table = []
    for name, rs in [("training", train), ("held out", test)]:
        with_n = [r for r in rs if r["n"] >= 1]
        groups = [
            ("N ≥ 1, all", with_n),
            ("N ≥ 1, fixed rates all equal", [r for r in with_n if r["dir"] == "seed002-train" and same_rates(r)]),
            ("N ≥ 1, fixed rates mixed", [r for r in with_n if r["dir"] == "seed002-train" and not same_rates(r)]),
            ("N ≥ 1, Minstrel", [r for r in with_n if r["dir"] != "seed002-train"]),
            ("N = 0 (alone)", [r for r in rs if r["n"] == 0]),
        ]
        for g, grs in groups:
            if not grs:
                continue
            n1 = errors([r["n_plus_one"] for r in grs], grs) if g != "N = 0 (alone)" else (float("nan"),) * 2
            m = errors(model(grs), grs)
            lines.append(f"| {name}: {g} | {len(grs)} | {fmt(n1)} | {fmt(m)} |")
            table.append((name, g, len(grs), n1, m))
    print("\n".join(lines))
    print()
    print("coefficients (Mbit/s): intercept " + " ".join(f"{c:.4f}" for c in coef[:1]) + ", " +
          ", ".join(f"{f} {c:.4f}" for f, c in zip(FEATURES, coef[1:])))
    if write:
        held = [t for t in table if t[0] == "held out" and t[1] == "N ≥ 1, all"]
        with open(write, "w") as f:
            f.write("# rdtp WiFi newcomer-rate model (seed 002 §II, §VI): linear regression of the rate a joining\n")
            f.write("# station attained on the estimator's features, Mbit/s (crates/rdtp-proto/src/wifi/model.rs).\n")
            f.write("# Fitted with numpy.linalg.lstsq on ns-3 runs (802.11g, 5 stations joining 4 s apart, fixed\n")
            f.write("# PHY-rate mixes and Minstrel at mixed distances; every third run held out).\n")
            f.write("version = 1\n")
            f.write("features = " + " ".join(FEATURES) + "\n")
            f.write(f"intercept = {coef[0]:.6f}\n")
            f.write("coefficients = " + " ".join(f"{c:.6f}" for c in coef[1:]) + "\n")
            f.write("made_by = rdtp sim experiments/seed002-train.toml --out out/seed002-train --jobs 1 && "
                    "rdtp sim experiments/seed002-train-minstrel.toml --out out/seed002-train-minstrel --jobs 1 && "
                    "python3 experiments/seed002_model.py out/seed002-train out/seed002-train-minstrel "
                    "--write-model crates/rdtp-proto/src/wifi/model-v1.txt\n")
            f.write(f"trained_on = {len(train)} joins\n")
            # A fixed input and what this fit predicts for it: the Rust loader must agree.
            check_x = [8.0, 7.0, 6.0]
            check_y = float(np.dot([1.0] + check_x, coef))
            f.write("check = " + " ".join(f"{v:g}" for v in check_x) + f" -> {check_y:.6f}\n")
            if held:
                _, _, n, n1, m = held[0]
                f.write(f"held_out = {n} joins with N >= 1: N+1 rule mean error {n1[0]:.1f} %, model {m[0]:.1f} %\n")
        print(f"wrote {write}")
    if png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
        for ax, (label, pred_of) in zip(axes, [("N + 1 rule", lambda rs: [r["n_plus_one"] for r in rs]),
                                                ("learned model", model)]):
            for rs, marker, name in [(train, "o", "training"), (test, "x", "held out")]:
                rs = [r for r in rs if r["n"] >= 1]
                ax.scatter([r["attained"] for r in rs], pred_of(rs), marker=marker, label=name, s=22)
            top = max(r["attained"] for r in rows) * 1.1
            ax.plot([0, top], [0, top], color="grey", lw=0.8)
            ax.set_title(label)
            ax.set_xlabel("attained by the joining station (Mbit/s)")
            ax.legend()
        axes[0].set_ylabel("predicted when it joined (Mbit/s)")
        fig.suptitle("Hiorth and Welzl, ours: predicted vs attained rate of each joining station (ns-3, 802.11g, N ≥ 1)")
        fig.tight_layout()
        fig.savefig(png, dpi=90)
        print(f"wrote {png}")


def read_model(path):
    """Intercept and coefficients of a model file this script wrote, in FEATURES order."""
    vals = {}
    with open(path) as f:
        for line in f:
            if "=" in line and not line.lstrip().startswith("#"):
                k, v = line.split("=", 1)
                vals[k.strip()] = v.strip()
    if vals.get("features", "").split() != FEATURES:
        sys.exit(f"{path}: features {vals.get('features')!r}, this script fits {' '.join(FEATURES)}")
    try:
        return np.array([float(vals["intercept"])] + [float(c) for c in vals["coefficients"].split()])
    except (KeyError, ValueError) as e:
        sys.exit(f"{path}: no usable intercept/coefficients ({e})")


def same_rates(r):
    return "phy_rates=_54,_54,_54,_54,_54_" in r["run"] or "phy_rates=_12,_12,_12,_12,_12_" in r["run"]


def fmt(pair):
    a, b = pair
    if np.isnan(a):
        return "–"
    return f"{a:.1f} / {b:.1f}"


if __name__ == "__main__":
    main()
