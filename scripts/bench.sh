#!/usr/bin/env bash
# make bench: every benchmark the project reports, as tables (medians over
# runs via benchstat), plus airs serve under load and the side-by-side
# XGrammar run. Figures and their commands are collected in BENCHMARKS.md.
# Usage: scripts/bench.sh [COUNT]   (default 5 runs per benchmark)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-5}
out=${BENCH_OUT:-bench-out}
mkdir -p "$out"
benchstat() { go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$@"; }
run() { # name, package, bench regexp, extra flags...
	local name=$1 pkg=$2 re=$3; shift 3
	echo "== $name: go test -run '^\$' -bench '$re' -count $count $* $pkg"
	go test -run '^$' -bench "$re" -count "$count" "$@" "$pkg" | tee "$out/$name.txt" | grep -E '^(Benchmark|ok|FAIL)' || true
	benchstat "$out/$name.txt" || true
}
run pipeline ./pipeline/ 'BenchmarkCallNoop' -benchtime 2s
run audit ./pipeline/audit/ 'BenchmarkAppend'
run chains ./chains/ 'BenchmarkParallelSteps' -benchtime 10x
run selection ./evals/retrieval/ 'BenchmarkSelection'
run recommender ./recommender/ 'BenchmarkUpdate1000' -benchtime 300x
run recommender-models ./recommender/ 'BenchmarkTextModelScores|BenchmarkHistoryScores|BenchmarkFusionScore1000'
run grammar ./grammar/ 'BenchmarkToolCall|BenchmarkCompileGlaive' -cpu 1,2
echo "== airs serve: 200 clients, 30 s, separate process"
bash scripts/serve-load.sh 200 30s | tee "$out/serve.txt"
bash scripts/fairness.sh | tee "$out/fairness.txt" # a quiet agent alone and beside a hostile one
if [ -x scripts/peer-xgrammar.sh ] && [ -d "${DATA_DIR:-../shared/data}" ]; then
	echo "== grammar vs XGrammar (same schemas, same vocab)"
	bash scripts/peer-xgrammar.sh | tee "$out/peer.txt"
	echo "== the 50-tool call grammar, cold: AIRS ToolCall vs XGrammar compiling the same tools"
	bash scripts/peer-toolcall.sh "$count" | tee "$out/peer-toolcall.txt"
fi
