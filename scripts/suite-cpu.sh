#!/usr/bin/env bash
# suite-cpu.sh: each package's tests' own CPU (user+system seconds, the
# programs and servers they start included), largest first, as
# CONTRIBUTING quotes them. Builds each test binary once, then runs it in
# its package's directory under /usr/bin/time. Measure only on an
# otherwise quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
out=$(mktemp)
trap 'rm -rf "$bin" "$out"' EXIT
go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./... |
	while read -r pkg dir; do
		name=${pkg#github.com/rlcheck/rlcheck/}
		go test -c -o "$bin/t.test" "$pkg"
		(cd "$dir" && /usr/bin/time -f "%U %S %e $name" -a -o "$out" "$bin/t.test" -test.count=1 > /dev/null 2>&1) ||
			echo "$name: FAIL" >&2
	done
echo "cpu_s  user_s  sys_s  wall_s  package"
awk '{printf "%6.1f  %6.1f  %5.1f  %6.1f  %s\n", $1 + $2, $1, $2, $3, $4}' "$out" | sort -rn
awk '{c += $1 + $2} END {printf "%6.1f  total\n", c}' "$out"
