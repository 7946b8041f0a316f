#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each (default 10s).
# Usage: scripts/fuzz.sh [DURATION]
#
# Go's fuzzing engine can end a run on a loaded machine with "context deadline
# exceeded" and no input at all: its coordination timed out, nothing was
# found. Such a run (no new file under testdata/fuzz/NAME) is tried once more;
# a run that wrote a crasher always fails.
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-10s}
fail=0
fuzz() { # fuzz PKG NAME LOG
	go test -run '^$' -fuzz "^$2\$" -fuzztime "$dur" "$1" >"$3" 2>&1
	local st=$?
	cat "$3"
	return $st
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
while IFS= read -r line; do
	file=${line%%:*}
	name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' <<<"${line#*:}")
	pkg=./$(dirname "$file")
	dir="$(dirname "$file")/testdata/fuzz/$name"
	echo "fuzz: $pkg $name for $dur"
	before=$( (ls "$dir" 2>/dev/null || true) | wc -l)
	if fuzz "$pkg" "$name" "$log"; then
		continue
	fi
	after=$( (ls "$dir" 2>/dev/null || true) | wc -l)
	if [ "$after" -eq "$before" ] && grep -q 'context deadline exceeded' "$log"; then
		echo "fuzz: $pkg $name: the engine timed out without an input (machine load); once more"
		if fuzz "$pkg" "$name" "$log"; then
			continue
		fi
	fi
	echo "fuzz: $pkg $name FAILED (see $dir for the crasher)"
	fail=1
done < <(grep -rHE '^func Fuzz[A-Za-z0-9_]*\(' --include='*_test.go' . | grep -v '/vendor/' | sort)
exit $fail
