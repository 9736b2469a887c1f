#!/usr/bin/env bash
# Benchmark of rdtp's NDN consumer beside NDNts's own (issue 25): every consumer fetches the same
# file from the same NDNts producer over loopback, in turn, RUNS times, in one run of this script;
# then the same consumers from `rdtp serve --ndn-listen`. Prints a Markdown table (one row per
# fetch: goodput, wall time, client CPU, retransmissions, RTT as each consumer reports it).
#
#   tools/bench-ndn.sh [SIZE_MB] [RUNS] [SEGMENT]     defaults: 20 MB, 3 runs, 8000-byte segments
#
# Needs a release build (cargo build --release -p rdtp), node and the NDNts rig (tools/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb=${1:-20}
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
echo "| producer | consumer | run | goodput (Mbit/s) | time (s) | client CPU (s) | retransmissions | RTT (ms) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
row() { # producer consumer run seconds cpu retx rtt
    awk -v p="$1" -v c="$2" -v r="$3" -v t="$4" -v cpu="$5" -v x="$6" -v rtt="$7" -v b="$bytes" \
        'BEGIN { printf "| %s | %s | %d | %.1f | %.2f | %.2f | %s | %s |\n", p, c, r, b * 8 / t / 1e6, t, cpu, x, rtt }'
}
fetch_ndnts() { # producer-label addr run
    local out=$tmp/ndnts.out
    /usr/bin/time -f '%e %U %S' -o "$tmp/time" node "$rig/consumer.mjs" --connect "$2" --name /bench/obj \
        -o "$tmp/got" --json > "$out" 2> "$tmp/err" || { echo "| $1 | NDNts | $3 | failed: $(tail -1 "$tmp/err") |||||"; return; }
    cmp -s "$tmp/got" "$tmp/dir/obj" || { echo "| $1 | NDNts | $3 | NOT BYTE-EXACT |||||"; return; }
    read -r t u s < "$tmp/time"
    row "$1" "NDNts (TCP CUBIC window)" "$3" "$t" "$(awk -v a="$u" -v b="$s" 'BEGIN { print a + b }')" \
        "$(grep -o '"retransmissions":[0-9]*' "$out" | cut -d: -f2)" "$(grep -o '"srtt_ms":[0-9.]*' "$out" | cut -d: -f2)"
}
fetch_rdtp() { # producer-label addr run cc
    local out=$tmp/rdtp.out cc=$4
    /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$rdtp" fetch --ndn "$2" /bench/obj ${cc:+--cc "$cc"} \
        -o "$tmp/got" --json > "$out" 2> "$tmp/err" || { echo "| $1 | rdtp ${cc:-default} | $3 | failed: $(tail -1 "$tmp/err") |||||"; return; }
    cmp -s "$tmp/got" "$tmp/dir/obj" || { echo "| $1 | rdtp ${cc:-default} | $3 | NOT BYTE-EXACT |||||"; return; }
    read -r t u s < "$tmp/time"
    row "$1" "rdtp --cc ${cc:-(default)}" "$3" "$t" "$(awk -v a="$u" -v b="$s" 'BEGIN { print a + b }')" \
        "$(grep -o '"units_rerequested":[0-9]*' "$out" | cut -d: -f2)" "$(grep -o '"rtt_avg_ms":[0-9.]*' "$out" | cut -d: -f2)"
}
for producer in "NDNts:$ndnts_addr" "rdtp serve:$rdtp_addr"; do
    label=${producer%%:*}; addr=${producer#*:}
    for r in $(seq "$runs"); do
        fetch_ndnts "$label" "$addr" "$r"
        for cc in "" bbr-cd cubic aimd; do fetch_rdtp "$label" "$addr" "$r" "$cc"; done
    done
done
