# Sourced by the scripts/bench-*.sh for what they share.
#
#   bench_setup [LINES]  sets lines, dir (${BENCH_DIR:-/tmp/rlcheck-bench}),
#                        rules (${RULES:-10/1s,500/1m,600000/24h}) and log, the
#                        generated CSV, written by scripts/genlog on first use
#   bench_builds         builds this tree's rlcheck into $dir and, with
#                        BASE=<revision>, that revision's as rlcheck-base (from
#                        `git archive`); bins lists their names, the base first
#   bench_stats FILE KEY FIELD
#                        "min median" of the numbers in column FIELD of the
#                        lines of FILE whose first columns are KEY

bench_setup() {
  lines=${1:-10000000}
  dir=${BENCH_DIR:-/tmp/rlcheck-bench}
  rules=${RULES:-10/1s,500/1m,600000/24h}
  mkdir -p "$dir"
  log="$dir/sends-$lines.csv"
  if [ ! -s "$log" ]; then
    echo "generating $log" >&2
    go run ./scripts/genlog -lines "$lines" > "$log"
  fi
}

bench_builds() {
  go build -o "$dir/rlcheck" ./cmd/rlcheck
  bins=(rlcheck)
  if [ -n "${BASE:-}" ]; then
    rm -rf "$dir/base" && mkdir -p "$dir/base"
    git archive "$BASE" | tar -x -C "$dir/base"
    (cd "$dir/base" && go build -o "$dir/rlcheck-base" ./cmd/rlcheck)
    bins=(rlcheck-base rlcheck)
  fi
}

bench_stats() {
  awk -v k="$2 " -v f="$3" 'index($0, k) == 1 { print $f }' "$1" |
    sort -g | awk '{ a[NR] = $1 } END { printf "%.2f %.2f", a[1], a[int((NR + 1) / 2)] }'
}
