#!/usr/bin/env bash
# Benchmark of rdtp's NDN consumer beside NDNts's own (issue 25): every consumer fetches the same
# file from the same NDNts producer over loopback, in turn, RUNS times, in one run of this script;
# then the same consumers from `rdtp serve --ndn-listen`. Prints a Markdown table (one row per
# fetch: goodput, wall time, client CPU, retransmissions, RTT as each consumer reports it).
#
#   tools/bench-ndn.sh [SIZE_MB] [RUNS] [SEGMENT]     defaults: 50 MB, 3 runs, 8000-byte segments
#
# Needs a release build (cargo build --release -p rdtp), node and the NDNts rig (tools/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-50}
runs=${2:-3}
segment=${3:-8000}
rdtp=target/release/rdtp
rig=tests/ndnts
[ -x "$rdtp" ] || { echo "bench-ndn: build rdtp first: cargo build --release -p rdtp" >&2; exit 2; }
[ -d "$rig/node_modules" ] || { echo "bench-ndn: the NDNts rig is not installed: tools/setup.sh" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/dir"
head -c $((size_mb * 1000 * 1000)) /dev/urandom > "$tmp/dir/obj"
bytes=$(stat -c %s "$tmp/dir/obj")

# The NDNts producer on a free port: its ready line ends " on HOST:PORT".
node "$rig/producer.mjs" --prefix /bench/obj --file "$tmp/dir/obj" --listen 127.0.0.1:0 \
    --segment-size "$segment" > "$tmp/producer.out" 2>&1 &
for _ in $(seq 100); do grep -q ' on ' "$tmp/producer.out" && break; sleep 0.1; done
ndnts_addr=$(sed -n 's/.* on \([0-9.:]*\)$/\1/p' "$tmp/producer.out" | head -n1)
# rdtp's own producer.
"$rdtp" serve "$tmp/dir" --listen 127.0.0.1:0 --ndn-listen 127.0.0.1:0 --ndn-prefix /bench \
    --ndn-segment-size "$segment" 2> "$tmp/serve.out" &
for _ in $(seq 100); do grep -q 'NDN producer on' "$tmp/serve.out" && break; sleep 0.1; done
rdtp_addr=$(sed -n 's/.*NDN producer on \([0-9.:]*\) .*/\1/p' "$tmp/serve.out" | head -n1)

echo "Command: tools/bench-ndn.sh $size_mb $runs $segment ($(git rev-parse --short HEAD 2>/dev/null), $(nproc) cores, $(date -u +%F))"
echo
echo "Goodput and time are each consumer's own (from its first Interest to its last Data, discovery included); client CPU is user + system of the consumer process; RTT is its mean sample (rdtp) or its final smoothed RTT (NDNts); re-requests are Interests beyond one per segment (NDNts) or re-requested units (rdtp); Nacks are the units refused by a Congestion Nack (rdtp's units_refused; NDNts does not count them). rdtp serve's NDN face sends at most --ndn-max-rate, 1 Gbit/s by default."
echo
echo "| producer | consumer | run | goodput (Mbit/s) | time (s) | client CPU (s) | re-requests | Nacks | RTT (ms) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
# One table row from a consumer's JSON summary ($1: ndnts or rdtp) and /usr/bin/time's output.
row() { # producer consumer run kind
    python3 - "$1" "$2" "$3" "$4" "$tmp/out.json" "$tmp/time" <<'PY'
import json, sys
producer, consumer, run, kind, out, timing = sys.argv[1:]
s = json.load(open(out))
user, system = (float(x) for x in open(timing).read().split()[1:3])
if kind == "ndnts":
    vals = (s["goodput_mbps"], s["seconds"], s["retransmissions"], "–", s["srtt_ms"])
else:
    vals = (s["goodput_bps"] / 1e6, s["elapsed_s"], s["units_rerequested"], s["units_refused"], s["rtt_avg_ms"])
g, t, rr, nacks, rtt = vals
print(f"| {producer} | {consumer} | {run} | {g:.1f} | {t:.3f} | {user + system:.2f} | {rr} | {nacks} | {rtt:.2f} |")
PY
}
fetch() { # producer-label addr run kind cc
    local label=$1 addr=$2 run=$3 kind=$4 cc=${5:-} name
    if [ "$kind" = ndnts ]; then
        name="NDNts (TCP CUBIC window)"
        cmd=(node "$rig/consumer.mjs" --connect "$addr" --name /bench/obj -o "$tmp/got" --json)
    else
        name="rdtp --cc ${cc:-(default)}"
        cmd=("$rdtp" fetch --ndn "$addr" /bench/obj ${cc:+--cc "$cc"} -o "$tmp/got" --json)
    fi
    if ! /usr/bin/time -f '%e %U %S' -o "$tmp/time" "${cmd[@]}" > "$tmp/out.json" 2> "$tmp/err"; then
        echo "| $label | $name | $run | failed: $(tail -n1 "$tmp/err") ||||||"
    elif ! cmp -s "$tmp/got" "$tmp/dir/obj"; then
        echo "| $label | $name | $run | NOT BYTE-EXACT ||||||"
    else
        row "$label" "$name" "$run" "$kind"
    fi
}
for producer in "NDNts:$ndnts_addr" "rdtp serve:$rdtp_addr"; do
    label=${producer%%:*}; addr=${producer#*:}
    for r in $(seq "$runs"); do
        fetch "$label" "$addr" "$r" ndnts
        for cc in "" bbr-cd cubic aimd; do fetch "$label" "$addr" "$r" rdtp "$cc"; done
    done
done
