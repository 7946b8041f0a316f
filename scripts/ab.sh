#!/usr/bin/env bash
# ab.sh BASE [COUNT] — a same-run A/B of the grammar and selection
# benchmarks: the test binaries of BASE (a commit) and of HEAD are built
# once, then run interleaved (BASE, HEAD, BASE, HEAD, … COUNT times each),
# so both sides see the same machine load; benchstat compares them.
#
# Benchmarks: grammar's compile and tool-call ones (BenchmarkCompileGlaive,
# …Cold, BenchmarkToolCallCached, BenchmarkToolCallCold, BenchmarkCompileJSBSample)
# and evals/retrieval's BenchmarkSelection (BENCHMARKS.md, "Selection
# without a model").
#
# Env: DATA_DIR (default ../shared/data), AB_OUT (default .cache/ab),
# AB_GRAMMAR_BENCHTIME (300ms), AB_SELECTION_BENCHTIME (300x).
# Needs benchstat: go install golang.org/x/perf/cmd/benchstat@latest
set -euo pipefail
base=${1:?usage: scripts/ab.sh BASE [COUNT]}
count=${2:-6}
cd "$(dirname "$0")/.."
root=$(pwd)
DATA_DIR=$(cd "${DATA_DIR:-../shared/data}" && pwd)
export DATA_DIR
out=${AB_OUT:-.cache/ab}
mkdir -p "$out"
out=$(cd "$out" && pwd)
gtime=${AB_GRAMMAR_BENCHTIME:-300ms}
stime=${AB_SELECTION_BENCHTIME:-300x}
benchstat=$(command -v benchstat || echo "$(go env GOPATH)/bin/benchstat")
log() { printf '[ab %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

tmp=$(mktemp -d)
wt="$tmp/base"
git worktree add --detach "$wt" "$base" >/dev/null
cleanup() { git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT

head=$(git rev-parse --short HEAD)
base_short=$(git rev-parse --short "$base")
log "base $base_short, head $head (working tree), $count runs each"
for side in base head; do
	dir=$root
	[ "$side" = base ] && dir=$wt
	(cd "$dir" && go test -c -o "$out/$side.grammar.test" ./grammar && go test -c -o "$out/$side.retrieval.test" ./evals/retrieval)
	: >"$out/$side.txt"
done

run() { # side tree
	local side=$1 dir=$2
	(cd "$dir/grammar" && "$out/$side.grammar.test" -test.run '^$' -test.bench 'BenchmarkCompileGlaive|BenchmarkToolCall|BenchmarkCompileJSBSample' -test.benchtime "$gtime") >>"$out/$side.txt"
	(cd "$dir/evals/retrieval" && "$out/$side.retrieval.test" -test.run '^$' -test.bench 'BenchmarkSelection' -test.benchtime "$stime") >>"$out/$side.txt"
}
for i in $(seq "$count"); do
	log "run $i/$count: base"
	run base "$wt"
	log "run $i/$count: head"
	run head "$root"
done
"$benchstat" base="$out/base.txt" head="$out/head.txt" >"$out/benchstat.txt"
cat "$out/benchstat.txt"
log "raw runs in $out (base.txt, head.txt), the comparison in $out/benchstat.txt"
