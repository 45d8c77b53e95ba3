#!/usr/bin/env bash
# Times `rlcheck check` on the input variants of one generated log against
# the plain CSV: the same 10-million-line log (scripts/genlog) checked per
# key (--key-col key), dealt line by line into 8 files and merged, as JSON
# lines ({"ts":N,"key":"kN"}) and gzip -1 compressed; and the gzip file
# inflated alone (scripts/inflate, the same gzip reader). Every variant must
# give the plain check's counts (sends, and each rule's violations and
# fullest window; per key, the base build's), or the script fails.
#
#   scripts/bench-inputs.sh [LINES]
#
# Files go to ${BENCH_DIR:-/tmp/rlcheck-bench} and are reused. RUNS sets the
# rounds (default 5); each round runs every variant once, in turn, so that
# the load falls on all alike. BASE=<revision> also builds that revision and
# alternates its runs with this tree's. Prints min and median wall and CPU
# time per variant, and the ratios to the plain CSV of the same build.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
bench_setup "${1:-}"
runs=${RUNS:-5}
csv=$log
if [ ! -s "$dir/sends-$lines.jsonl" ]; then
  awk -F, 'NR > 1 { printf "{\"ts\":%s,\"key\":\"%s\"}\n", $1, $2 }' "$csv" > "$dir/sends-$lines.jsonl"
fi
if [ ! -s "$dir/sends-$lines.csv.gz" ]; then
  gzip -1 -c "$csv" > "$dir/sends-$lines.csv.gz"
fi
deal="$dir/dealt-$lines"
if [ ! -s "$deal/part-7.csv" ]; then
  mkdir -p "$deal"
  awk -v d="$deal" 'NR == 1 { for (i = 0; i < 8; i++) print > (d "/part-" i ".csv"); next }
    { print > (d "/part-" (NR - 2) % 8 ".csv") }' "$csv"
fi
bench_builds
go build -o "$dir/inflate" ./scripts/inflate
variants=(plain key merged8 jsonl gzip)
args() {
  case $1 in
  plain) echo "$csv" ;;
  key) echo "--key-col key $csv" ;;
  merged8) echo "$deal"/part-{0..7}.csv ;;
  jsonl) echo "$dir/sends-$lines.jsonl" ;;
  gzip) echo "$dir/sends-$lines.csv.gz" ;;
  esac
}
cat "$csv" "$dir/sends-$lines.jsonl" "$dir/sends-$lines.csv.gz" "$deal"/* > /dev/null # warm the page cache
counts='[.sends, [.rules[] | .violations, .max_in_window]]'
want=$("$dir/${bins[0]}" check --rules "$rules" --format json $(args plain) | jq -c "$counts" || true)
wantKey=$("$dir/${bins[0]}" check --rules "$rules" --format json $(args key) | jq -c "$counts" || true)
echo "counts (sends, then violations and fullest window per rule): $want; per key: $wantKey"
for bin in "${bins[@]}"; do
  for v in "${variants[@]}"; do
    got=$("$dir/$bin" check --rules "$rules" --format json $(args "$v") | jq -c "$counts" || true)
    w=$want
    if [ "$v" = key ]; then w=$wantKey; fi
    if [ "$got" != "$w" ]; then
      echo "FAIL: $bin $v counts $got, want $w" >&2
      exit 1
    fi
  done
done
echo "every variant of every build gives the same counts"
times=$(mktemp)
echo "load before: $(cat /proc/loadavg)"
for run in $(seq "$runs"); do
  for v in "${variants[@]}" inflate; do
    for bin in "${bins[@]}"; do
      if [ "$v" = inflate ]; then
        [ "$bin" = rlcheck ] || continue
        cmd=("$dir/inflate" "$dir/sends-$lines.csv.gz")
      else
        # shellcheck disable=SC2046
        cmd=("$dir/$bin" check --rules "$rules" $(args "$v"))
      fi
      out=$( { /usr/bin/time -f "%e %M %U %S" "${cmd[@]}" > /dev/null; } 2>&1 | tail -1 ) || true
      read -r wall rss_kb user sys <<<"$out"
      echo "$bin $v $wall $user $sys $rss_kb" >> "$times"
    done
  done
done
echo "load after: $(cat /proc/loadavg)"
stats() { # bin variant field -> "min median"
  awk -v b="$1" -v v="$2" -v f="$3" '$1 == b && $2 == v { print (f == "cpu" ? $4 + $5 : (f == "rss" ? $6 / 1024 : $3)) }' "$times" |
    sort -g | awk '{ a[NR] = $1 } END { printf "%.2f %.2f", a[1], a[int((NR + 1) / 2)] }'
}
printf "%-13s %-8s %17s %17s %15s %22s %22s\n" build variant "wall min/med s" "CPU min/med s" "RSS max MB" "wall ratio min/med" "CPU ratio min/med"
for bin in "${bins[@]}"; do
  read -r pw pwm <<<"$(stats "$bin" plain wall)"
  read -r pc pcm <<<"$(stats "$bin" plain cpu)"
  for v in "${variants[@]}" inflate; do
    b=$bin
    if [ "$v" = inflate ]; then
      [ "$bin" = rlcheck ] || continue
      b=rlcheck
    fi
    read -r w wm <<<"$(stats "$b" "$v" wall)"
    read -r c cm <<<"$(stats "$b" "$v" cpu)"
    rss=$(awk -v b="$b" -v v="$v" '$1 == b && $2 == v { if ($6 > m) m = $6 } END { printf "%.1f", m / 1024 }' "$times")
    awk -v b="$b" -v v="$v" -v w="$w" -v wm="$wm" -v c="$c" -v cm="$cm" -v r="$rss" -v pw="$pw" -v pwm="$pwm" -v pc="$pc" -v pcm="$pcm" 'BEGIN {
      printf "%-13s %-8s %8.2f %8.2f %8.2f %8.2f %15s %10.2f %11.2f %10.2f %11.2f\n", b, v, w, wm, c, cm, r, w / pw, wm / pwm, c / pc, cm / pcm }'
  done
done
read -r gw gwm <<<"$(stats rlcheck gzip wall)"
read -r iw iwm <<<"$(stats rlcheck inflate wall)"
awk -v g="$gw" -v gm="$gwm" -v i="$iw" -v im="$iwm" 'BEGIN { printf "gzip input against inflating alone, wall: min %.2f, median %.2f\n", g / i, gm / im }'
rm -f "$times"
