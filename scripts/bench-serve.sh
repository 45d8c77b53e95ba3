#!/usr/bin/env bash
# Load test of `rlcheck serve` on loopback: scripts/loadgen keeps 64
# keep-alive connections (one key each) busy for 10 s, then serve gets
# SIGINT and prints its verdict. Reports the request rate, the latency serve
# adds beyond its configured (fixed) latency, and checks that the request
# log is complete (a line for every answered request) and that `rlcheck
# check` on it prints serve's report, byte for byte.
#
#   scripts/bench-serve.sh
#
# First, as the anchor, the same load generator with the same settings
# drives scripts/nullserve (a bare net/http server that answers 200): its
# latency is what loopback, net/http and the generator cost by themselves on
# this machine at this rate, and what serve adds is the difference.
#
# RATE (requests/s over all connections, on a fixed schedule; default 0,
# back to back as fast as serve answers), CONNS, DURATION, LATENCY (fixed,
# e.g. 0 or 2ms) and RULES (per key) can be set; files go to ${BENCH_DIR:-/tmp/rlcheck-bench-serve}. It stops by
# itself (serve has a --duration cap as well).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-/tmp/rlcheck-bench-serve}
conns=${CONNS:-64}
rate=${RATE:-0}
duration=${DURATION:-10s}
latency=${LATENCY:-0}
rules=${RULES:-1000/1s,20000/1m}
port=${PORT:-18181}
mkdir -p "$dir"
go build -o "$dir/rlcheck" ./cmd/rlcheck
go build -o "$dir/loadgen" ./scripts/loadgen
go build -o "$dir/nullserve" ./scripts/nullserve
echo "load average before the anchor: $(cat /proc/loadavg)"
"$dir/nullserve" -listen "127.0.0.1:$((port + 1))" -duration 60s &
null=$!
"$dir/loadgen" -url "http://127.0.0.1:$((port + 1))/v1/load" -conns "$conns" -rate "$rate" -duration "$duration" |
  sed 's/^/anchor: /' | tee "$dir/anchor.txt"
kill "$null"
wait "$null" 2>/dev/null || true
echo "load average before: $(cat /proc/loadavg)"
/usr/bin/time -f "serve CPU %U s user, %S s sys, peak RSS %M KB" -o "$dir/serve.time" \
  "$dir/rlcheck" serve --listen "127.0.0.1:$port" --rules "$rules" --key-header X-API-Key \
  --latency "$latency" --log "$dir/requests.csv" --duration 120s >"$dir/serve.txt" 2>"$dir/serve.err" &
serve=$!
"$dir/loadgen" -url "http://127.0.0.1:$port/v1/load" -conns "$conns" -rate "$rate" -duration "$duration" -latency "$latency" | tee "$dir/load.txt"
echo "load average after: $(cat /proc/loadavg)"
kill -INT "$(pgrep -P "$serve")" # serve itself, not /usr/bin/time
status=0
wait "$serve" || status=$?
echo "serve exited $status"
answered=$(awk '/^answered/ {print $2}' "$dir/load.txt")
cat "$dir/serve.time"
awk -v n="$answered" '/serve CPU/ {printf "serve CPU per request: %.1f us\n", ($3 + $6) / n * 1e6}' "$dir/serve.time"
logged=$(($(wc -l <"$dir/requests.csv") - 1))
echo "answered $answered, logged $logged"
# What serve itself held each request, arrival to answer, beyond the latency
# it was told to add (its own judging, scheduling and log, not the client's).
tail -n +2 "$dir/requests.csv" | cut -d, -f4 | sort -n | awk -v lat="$latency" '
  BEGIN { l = lat + 0; if (lat ~ /ms$/) l *= 1e6; else if (lat ~ /us$/) l *= 1e3; else if (lat ~ /s$/) l *= 1e9 }
  { d[NR] = $1 - l }
  END { printf "serve-side added: p50 %.1f us, p99 %.1f us, p99.9 %.1f us\n", d[int(NR*0.5)]/1e3, d[int(NR*0.99)]/1e3, d[int(NR*0.999)]/1e3 }' 
if [ "$answered" -ne "$logged" ]; then
  echo "FAIL: the log does not hold every answered request" >&2
  exit 1
fi
"$dir/rlcheck" check --rules "$rules" --key-col key --duration-col duration_ns --duration-unit ns \
  "$dir/requests.csv" >"$dir/check.txt" || true
if ! cmp -s "$dir/serve.txt" "$dir/check.txt"; then
  echo "FAIL: check's report on the log differs from serve's" >&2
  diff "$dir/serve.txt" "$dir/check.txt" | head >&2
  exit 1
fi
# Each percentile beside the anchor's, and what serve adds beyond it.
awk '$1 == "anchor:" && $2 == "added" { for (i = 4; i < NF; i += 2) a[$i] = $(i + 1); next }
  $1 == "added" { for (i = 3; i < NF; i += 2) printf "%s: serve %s, anchor %s\n", $i, $(i + 1), a[$i] }' \
  "$dir/anchor.txt" "$dir/load.txt"
echo "OK: the log is complete and check's report equals serve's ($(tail -1 "$dir/serve.txt"))"
