#!/usr/bin/env bash
# Paired load test of a provider preset against plain `rlcheck serve`, on
# loopback, in the same run: scripts/loadgen keeps 64 keep-alive
# connections (one key each) busy at RATE requests/s for DURATION, each
# request a POST of the same chat completion body, against
#   rlcheck serve --rules RULES --key-header X-API-Key --log plain.csv
#   rlcheck serve --provider PROVIDER --rules RULES --key-header X-API-Key --log preset.csv
# in turn, ROUNDS times, alternated so that a change in the machine's load
# falls on both. Plain serve answers the body unread; the preset reads it,
# charges its estimate, answers a completion with the provider's header
# family and logs those headers. Prints the client-side percentiles of
# each run and, per round, the preset's p99 over plain serve's (target:
# at most 1.10). Take figures on a quiet machine only.
#
#   RATE=20000 scripts/bench-preset.sh
#
# RATE (default 20000), CONNS, DURATION (default 10s), ROUNDS (default 3),
# PROVIDER (default openai) and RULES (default 1000/1s,20000/1m, per key;
# the preset's cost rules may meter tokens) can be set; files go to
# ${BENCH_DIR:-/tmp/rlcheck-bench-preset}. Each serve stops by itself.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BENCH_DIR:-/tmp/rlcheck-bench-preset}
conns=${CONNS:-64}
rate=${RATE:-20000}
duration=${DURATION:-10s}
rounds=${ROUNDS:-3}
provider=${PROVIDER:-openai}
rules=${RULES:-1000/1s,20000/1m}
port=${PORT:-18191}
body='{"model":"m","messages":[{"role":"user","content":"hello world!"}],"max_tokens":8}'
mkdir -p "$dir"
go build -o "$dir/rlcheck" ./cmd/rlcheck
go build -o "$dir/loadgen" ./scripts/loadgen

# run NAME FLAGS...: one serve under the load; its loadgen output in NAME.txt.
run() {
  local name=$1
  shift
  "$dir/rlcheck" serve --listen "127.0.0.1:$port" --rules "$rules" --key-header X-API-Key \
    --log "$dir/$name.csv" --duration 120s "$@" >"$dir/$name.serve.txt" 2>"$dir/$name.serve.err" &
  local serve=$!
  echo "load average before $name: $(cat /proc/loadavg)"
  "$dir/loadgen" -url "http://127.0.0.1:$port/v1/chat/completions" -conns "$conns" -rate "$rate" \
    -duration "$duration" -body "$body" | sed "s/^/$name: /" | tee "$dir/$name.txt"
  kill -INT "$serve"
  wait "$serve" || true
}

# p99 NAME: the p99 of the latency loadgen measured, in µs.
p99() {
  awk '$2 == "added" { for (i = 4; i < NF; i += 2) if ($i == "p99") v = $(i + 1) }
    END { n = v + 0; if (v ~ /µs$/) n *= 1; else if (v ~ /ms$/) n *= 1e3; else if (v ~ /ns$/) n /= 1e3; else if (v ~ /s$/) n *= 1e6; print n }' "$dir/$1.txt"
}

for r in $(seq "$rounds"); do
  run "plain-$r"
  run "preset-$r" --provider "$provider"
  awk -v a="$(p99 "plain-$r")" -v b="$(p99 "preset-$r")" -v r="$r" \
    'BEGIN { printf "round %d: p99 plain %.1f µs, preset %.1f µs: preset/plain %.2f\n", r, a, b, b / a }'
done
