#!/usr/bin/env bash
# Measures what --html adds to `rlcheck check` on the generated 10-million-line
# CSV (scripts/bench-check.sh writes it) with the benchmark's three rules:
# per build, RUNS runs (default 5) of the plain check and of the check with
# --html, alternated, then the min and median wall and CPU time (user+sys),
# the peak RSS and the report's size, and what the report adds (median of
# --html minus median of plain, of the same build).
#
#   scripts/bench-html.sh [LINES]
#
# BASE=<revision> also builds that revision (from `git archive`) and
# alternates its runs with this tree's. The machine's load is printed before
# and after: on a shared machine, read the CPU times.
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-10000000}
dir=${BENCH_DIR:-/tmp/rlcheck-bench}
rules=${RULES:-10/1s,500/1m,600000/24h}
runs=${RUNS:-5}
mkdir -p "$dir"
log="$dir/sends-$lines.csv"
if [ ! -s "$log" ]; then
  echo "generating $log" >&2
  go run ./scripts/genlog -lines "$lines" > "$log"
fi
go build -o "$dir/rlcheck" ./cmd/rlcheck
bins=("$dir/rlcheck")
if [ -n "${BASE:-}" ]; then
  rm -rf "$dir/base" && mkdir -p "$dir/base"
  git archive "$BASE" | tar -x -C "$dir/base"
  (cd "$dir/base" && go build -o "$dir/rlcheck-base" ./cmd/rlcheck)
  bins=("$dir/rlcheck-base" "$dir/rlcheck")
fi
cat "$log" > /dev/null # warm the page cache
times=$(mktemp)
echo "load before: $(cat /proc/loadavg)"
for run in $(seq "$runs"); do
  for bin in "${bins[@]}"; do
    x=$(basename "$bin")
    for mode in plain html; do
      args=(check --rules "$rules")
      [ "$mode" = html ] && args+=(--html "$dir/$x.html")
      out=$( { /usr/bin/time -f "%e %M %U %S" "$bin" "${args[@]}" "$log" > /dev/null; } 2>&1 | tail -1 ) || true
      read -r wall rss_kb user sys <<<"$out"
      echo "$x $mode $wall $user $sys $rss_kb" >> "$times"
    done
  done
done
echo "load after: $(cat /proc/loadavg)"
for bin in "${bins[@]}"; do
  x=$(basename "$bin")
  awk -v x="$x" -v size="$(stat -c %s "$dir/$x.html")" '
    function sortn(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } }
    $1 == x { n[$2]++; w[$2, n[$2]] = $3; c[$2, n[$2]] = $4 + $5; if ($6 > rss[$2]) rss[$2] = $6 }
    END {
      for (m = 1; m <= 2; m++) {
        mode = m == 1 ? "plain" : "html"; k = n[mode]
        for (i = 1; i <= k; i++) { ws[i] = w[mode, i]; cs[i] = c[mode, i] }
        sortn(ws, k); sortn(cs, k); mid = int((k + 1) / 2)
        wmed[mode] = ws[mid]; cmed[mode] = cs[mid]
        printf "%s %-5s: wall min %.2f s, median %.2f s; CPU min %.2f s, median %.2f s; peak RSS %.0f MB (%d runs)\n",
          x, mode, ws[1], ws[mid], cs[1], cs[mid], rss[mode] / 1024, k
      }
      printf "%s: --html adds %.2f s wall, %.2f s CPU (medians); report %d bytes\n", x, wmed["html"] - wmed["plain"], cmed["html"] - cmed["plain"], size
    }' "$times"
done
rm -f "$times"
