#!/usr/bin/env bash
# Pairs two rule sets on one log: `rlcheck check --rules A` and `--rules B`,
# alternated ROUNDS times (default 15), and prints each side's min and median
# CPU time (user+sys) and the min / median / max of the per-round ratio B/A,
# with the load before and after. Measure on a quiet machine.
#
#   scripts/bench-rules.sh LOG "RULES A" "RULES B"
#
# The weighted and window-kind figures of docs/benchmarks.md come from
#   go run ./scripts/genlog -lines 10000000 -tokens 4000 > w10m.csv
#   scripts/bench-rules.sh w10m.csv 10/1s,500/1m,600000/24h "10/1s,500/1m,600000/24h,90000 tokens/1m"
#   scripts/bench-rules.sh w10m.csv 10/1s,500/1m,600000/24h "10/1s burst 20,500/1m fixed,600000/24h"
set -euo pipefail
cd "$(dirname "$0")/.."
log=$1 a=$2 b=$3 rounds=${ROUNDS:-15}
bin=$(mktemp -d)/rlcheck
go build -o "$bin" ./cmd/rlcheck
cat "$log" > /dev/null # warm the page cache
echo "load before: $(cat /proc/loadavg)"
cpu() { # the CPU seconds of one check
  /usr/bin/time -f "%U %S" -o "$bin.time" "$bin" check --rules "$1" "$log" > /dev/null 2>&1 || true
  tail -1 "$bin.time" | awk '{printf "%.3f", $1 + $2}'
}
for _ in $(seq "$rounds"); do
  echo "$(cpu "$a") $(cpu "$b")"
done | awk '
  { a[NR] = $1; b[NR] = $2; q[NR] = $2 / $1 }
  function med(x, n,   s, i, j, t) { for (i = 1; i <= n; i++) s[i] = x[i]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
    return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2 }
  function mn(x, n,   i, m) { m = x[1]; for (i = 2; i <= n; i++) if (x[i] < m) m = x[i]; return m }
  function mx(x, n,   i, m) { m = x[1]; for (i = 2; i <= n; i++) if (x[i] > m) m = x[i]; return m }
  END { printf "A: min %.2f s, median %.2f s\nB: min %.2f s, median %.2f s\nB/A per round: min %.2f, median %.2f, max %.2f (%d rounds)\n",
    mn(a, NR), med(a, NR), mn(b, NR), med(b, NR), mn(q, NR), med(q, NR), mx(q, NR), NR }'
echo "load after: $(cat /proc/loadavg)"
