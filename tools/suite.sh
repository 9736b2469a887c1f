#!/usr/bin/env bash
# The default-controller suite in one command: the harness grid (rdtp-harness's `suite`
# example: 29 wired scenarios, deterministic) and the ns-3 scenarios of experiments/suite/
# (WiFi, caching routers, TCP cross traffic, a WiFi join with and without an estimate), each
# run with every controller, combined into one table (OUT/suite.md: scenario × controller,
# the candidate's margin to the best in each row and the goals it misses) and a heat map
# (OUT/suite.png) by `experiments/plot.py suite OUT`.
#
#   tools/suite.sh [--out DIR] [--cc SPEC]... [--candidate SPEC] [--runs N] [--seeds N]
#                  [--jobs N] [--only NAME]... [--no-harness] [--no-sim]
#
#   --out DIR        output directory (default out/suite); a finished cell (its summary.csv)
#                    is kept, so an interrupted suite resumes where it stopped
#   --cc SPEC        a controller (repeatable; default: bbr bbr-wifi bbr3 bbr3-rdtp bbr-cd
#                    sirc aimd cubic cctcp); the candidate is added if missing
#   --candidate SPEC the controller judged against the best of each row (default bbr3-rdtp)
#   --runs N         ns-3 runs per scenario point (default 2)
#   --seeds N        harness seeds (default 3)
#   --jobs N         parallel runs (default 1)
#   --only NAME      only experiments/suite/NAME.toml (repeatable)
#
# The whole suite with the defaults is ≈ 1 CPU-hour of ns-3 and ≈ 15 CPU-minutes of harness
# on this project's 2-core test machine (measured 2026-11-28); --only and --no-harness make
# a part of it. Needs a release build of rdtp with ns-3 (tools/setup.sh; cargo build
# --release -p rdtp -p rdtp-ns3) and matplotlib for the heat map.
set -euo pipefail
cd "$(dirname "$0")/.."
out=out/suite
ccs=()
candidate=bbr3-rdtp
runs=2
seeds=3
jobs=1
only=()
harness=1
sim=1
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --cc) ccs+=("$2"); shift 2 ;;
        --candidate) candidate=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --seeds) seeds=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --only) only+=("$2"); shift 2 ;;
        --no-harness) harness=0; shift ;;
        --no-sim) sim=0; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "suite: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
done
[ ${#ccs[@]} -gt 0 ] || ccs=(bbr bbr-wifi bbr3 bbr3-rdtp bbr-cd sirc aimd cubic cctcp)
printf '%s\n' "${ccs[@]}" | grep -qxF -- "$candidate" || ccs+=("$candidate")
rdtp=target/release/rdtp
[ -x "$rdtp" ] || { echo "suite: build rdtp first: cargo build --release -p rdtp -p rdtp-ns3" >&2; exit 2; }
mkdir -p "$out"
python3 - "$out/suite.json" "$candidate" "$runs" "$seeds" "${ccs[@]}" <<'PY'
import json, sys
path, cand, runs, seeds, *ccs = sys.argv[1:]
json.dump({"candidate": cand, "runs": int(runs), "seeds": int(seeds), "controllers": ccs}, open(path, "w"), indent=1)
PY

if [ "$harness" = 1 ]; then
    if [ -f "$out/harness.csv" ]; then
        echo "suite: harness part already in $out/harness.csv"
    else
        echo "suite: harness grid, ${#ccs[@]} controllers × $seeds seeds"
        args=()
        for cc in "${ccs[@]}"; do args+=(--cc "$cc"); done
        cargo run --release -q -p rdtp-harness --example suite -- "${args[@]}" --candidate "$candidate" \
            --seeds "$seeds" --jobs "$jobs" --csv "$out/harness.csv.part" > "$out/harness.md"
        mv "$out/harness.csv.part" "$out/harness.csv"
    fi
fi

if [ "$sim" = 1 ]; then
    for file in experiments/suite/*.toml; do
        name=$(basename "$file" .toml)
        if [ ${#only[@]} -gt 0 ] && ! printf '%s\n' "${only[@]}" | grep -qxF -- "$name"; then continue; fi
        for cc in "${ccs[@]}"; do
            dir="$out/sim/$name/${cc//\//_}"
            if [ -f "$dir/summary.csv" ]; then continue; fi
            echo "suite: $name with $cc"
            rm -rf "$dir"
            "$rdtp" sim "$file" --out "$dir" --jobs "$jobs" --set "flow.0.cc=$cc" \
                --set "scenario.repeat=$runs" > "$out/sim-$name.log" 2>&1 \
                || { echo "suite: $name with $cc failed (see $out/sim-$name.log)" >&2; rm -f "$dir/summary.csv"; }
        done
    done
fi

python3 experiments/plot.py suite "$out"
