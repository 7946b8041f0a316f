#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each (default 10s).
# Usage: scripts/fuzz.sh [DURATION]
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-10s}
fail=0
while IFS= read -r line; do
	file=${line%%:*}
	name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' <<<"${line#*:}")
	pkg=./$(dirname "$file")
	echo "fuzz: $pkg $name for $dur"
	if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$dur" "$pkg"; then
		echo "fuzz: $pkg $name FAILED (see testdata/fuzz/$name for the crasher)"
		fail=1
	fi
done < <(grep -rHE '^func Fuzz[A-Za-z0-9_]*\(' --include='*_test.go' . | grep -v '/vendor/' | sort)
exit $fail
