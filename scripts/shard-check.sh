#!/usr/bin/env bash
# Checks the benchmark log whole and as SHARDS time shards, each shard fed
# the lines from the longest window before it as context, merges the
# shards' reports with rlcheck merge and compares the verdict with the
# whole (everything but the inputs' description). Prints the times.
#
#   scripts/shard-check.sh [LINES]     # RULES=..., SHARDS=8
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-10000000}
shards=${SHARDS:-8}
rules=${RULES:-10/1s,500/1m,600000/24h}
dir=${BENCH_DIR:-/tmp/rlcheck-bench}
log="$dir/sends-$lines.csv"
mkdir -p "$dir/shards"
if [ ! -s "$log" ]; then
  go run ./scripts/genlog -lines "$lines" > "$log"
fi
go build -o "$dir/rlcheck" ./cmd/rlcheck
rl="$dir/rlcheck"
# The longest window, plus a nanosecond for closed windows, in ns.
longest=$(go run ./scripts/longest-window "$rules")
header=$(head -1 "$log")
first=$(sed -n 2p "$log" | cut -d, -f1)
last=$(tail -1 "$log" | cut -d, -f1)
check() { # exit 0 or 1 is a verdict; 2 is an error
  local rc=0
  "$@" || rc=$?
  if [ "$rc" -gt 1 ]; then echo "failed: $*" >&2; exit 2; fi
}
echo "load: $(cat /proc/loadavg)"
start=$(date +%s.%N)
check "$rl" check --rules "$rules" --format json - < "$log" > "$dir/shards/whole.json"
echo "whole: $(echo "$(date +%s.%N) - $start" | bc) s"
# Bounds, and the first line of each shard's context: the last line before
# the longest window before its start (timestamps have one
# digit count, so they compare as strings).
bounds=()
for k in $(seq 0 $shards); do bounds+=($((first + (last - first) / shards * k))); done
bounds[$shards]=$((last + 1))
ctx=""
for k in $(seq 1 $((shards - 1))); do ctx="$ctx $((bounds[k] - longest))"; done
starts=($(awk -F, -v c="$ctx" 'BEGIN { n = split(c, want, " "); i = 1 }
  NR > 1 { while (i <= n && ($1 "") >= (want[i] "")) { print (NR > 2 ? NR - 1 : 2); i++ } }
  END { while (i <= n) { print NR; i++ } }' "$log"))
start=$(date +%s.%N)
rm -f "$dir"/shards/shard-*.json
for k in $(seq 0 $((shards - 1))); do
  args=(--rules "$rules" --format json --to "${bounds[k+1]}")
  if [ "$k" -eq 0 ]; then
    check "$rl" check "${args[@]}" - < "$log" > "$dir/shards/shard-$k.json"
  else
    s=${starts[k-1]}
    { echo "$header"; tail -n +"$s" "$log" || true; } | # check stops reading at --to
      check "$rl" check "${args[@]}" --from "${bounds[k]}" --line-offset $((s - 2)) - > "$dir/shards/shard-$k.json"
  fi
done
echo "$shards shards: $(echo "$(date +%s.%N) - $start" | bc) s (one after another)"
check "$rl" merge --format json "$dir"/shards/shard-*.json > "$dir/shards/merged.json"
python3 - "$dir/shards/whole.json" "$dir/shards/merged.json" <<'PY'
import json, sys
whole, merged = (json.load(open(p)) for p in sys.argv[1:])
for d in (whole, merged):
    d.pop("files")
if whole != merged:
    print("merged report differs from the whole:")
    print(json.dumps(whole, indent=1)[:3000]); print(json.dumps(merged, indent=1)[:3000])
    sys.exit(1)
print("merged report equals the whole:", whole["violations"], "violations,",
      ", ".join(f'{r["rule"]} {r["violations"]} (max {r["max_in_window"]})' for r in whole["rules"]))
PY
echo "load: $(cat /proc/loadavg)"
