#!/usr/bin/env bash
# Runs every command of commands.txt with the rlcheck built at a git
# revision and records each one's stdout, stderr and exit status, so two
# revisions' command surfaces can be compared byte for byte:
#
#   scripts/surface/run.sh HEAD~3 /tmp/before
#   scripts/surface/run.sh HEAD /tmp/after
#   diff -r /tmp/before /tmp/after
#
# The revision is built in a temporary worktree; the commands run from
# this checkout's root, on its testdata.
set -euo pipefail
rev=${1:?usage: run.sh REV OUTDIR}
out=${2:?usage: run.sh REV OUTDIR}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add -q --detach "$tmp/src" "$rev"
mkdir -p "$tmp/bin"
(cd "$tmp/src" && go build -o "$tmp/bin/rlcheck" ./cmd/rlcheck)
rm -rf "$out" && mkdir -p "$out"
cd "$root"
n=0
while IFS= read -r line; do
	[[ -z $line || $line == \#* ]] && continue
	n=$((n + 1))
	f=$(printf '%s/%03d' "$out" "$n")
	printf '%s\n' "$line" >"$f.cmd"
	set +e
	PATH="$tmp/bin:$PATH" GITHUB_ACTIONS= timeout 120 bash -c "$line" </dev/null >"$f.out" 2>"$f.err"
	echo $? >"$f.rc"
	set -e
done <"$root/scripts/surface/commands.txt"
echo "$n commands recorded in $out"
