#!/usr/bin/env bash
# Regenerate tools/wireshark/fetch-via-router.pcap: real rdtp processes on loopback, captured
# with dumpcap (from tshark; needs root or the wireshark group). Ports 7447 and 7448 must be
# free. What it records (crates/rdtp-proto/tests/dissector.rs checks the decode):
#   rdtp serve (id origin, :7447) ← rdtp route (id r1, :7448, only 8 pending units) ← clients
#   1. rdtp ls through r1: Retry/token exchanges on both hops, a forwarded ListRequest;
#   2. rdtp fetch obj.bin through r1: resolve by name, Data from origin (1 hop), Nack Busy
#      from r1 whenever more than 8 units are pending, re-requests, block 0's Proof;
#   3. the same again: every unit from r1's store (CACHED, served by r1, 0 hops), the
#      Proof relayed from the origin;
#   4. rdtp fetch missing.bin: Nack UnknownContent from origin through r1.
# The object is the first 40000 bytes of `yes "rdtp capture"` (the test recomputes its EID).
#   tools/wireshark/capture.sh [RDTP_BINARY]
set -euo pipefail
cd "$(dirname "$0")/../.."
rdtp=${1:-target/release/rdtp}
[ -x "$rdtp" ] || cargo build --release -q -p rdtp
out=tools/wireshark/fetch-via-router.pcap
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT

mkdir "$dir/content"
(yes "rdtp capture" || true) | head -c 40000 > "$dir/content/obj.bin"
printf 'hello\n' > "$dir/content/small.txt"

dumpcap -q -P -i lo -f "udp port 7447 or udp port 7448" -w "$dir/capture.pcap" &
pids+=($!)
sleep 2
"$rdtp" serve --listen 127.0.0.1:7447 "$dir/content" 2>/dev/null &
pids+=($!)
"$rdtp" route --listen 127.0.0.1:7448 --upstream 127.0.0.1:7447 --id r1 --pit-size 8 2>/dev/null &
pids+=($!)
sleep 1
"$rdtp" ls 127.0.0.1:7448
"$rdtp" fetch 127.0.0.1:7448 obj.bin -o /dev/null --seed 1
"$rdtp" fetch 127.0.0.1:7448 obj.bin -o /dev/null --seed 2
"$rdtp" fetch 127.0.0.1:7448 missing.bin -o /dev/null --seed 3 || echo "(exit $?: not found, as intended)"
sleep 1
kill -INT "${pids[0]}"
wait "${pids[0]}" || true
cp "$dir/capture.pcap" "$out"
echo "wrote $out ($(stat -c %s "$out") bytes)"
