#!/usr/bin/env bash
# conformance.sh — `make conformance`: run the big public datasets under
# DATA_DIR and write the results to CONFORMANCE.md.
#
# Grammar: `airs grammar bench` over all of jsonschemabench with the llama3
# vocabulary (MaskBench's method, one thread, 10 s per schema), the JSON Schema
# Test Suite (draft 2020-12) through the grammar, the sampling-compliance check
# (a random model on a 500-schema sample: no dead end, every output terminates
# and validates), and the data-dependent tests of grammar/bench and
# grammar/export.
#
# Env: DATA_DIR (default ../shared/data), CONFORMANCE_OUT (raw runs, default
# .cache/conformance), CONFORMANCE_LIMIT (a --limit for quick runs).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=$(cd "${DATA_DIR:-../shared/data}" && pwd)
export DATA_DIR
out=${CONFORMANCE_OUT:-.cache/conformance}
mkdir -p "$out"
log() { printf '[conformance %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# `airs grammar ...` once cmd/airs has it, else the package's own main.
gb="$out/grammarbench"
go build -o "$gb" ./grammar/bench/cmd/grammarbench
grammar=("$gb")
if go build -o "$out/airs" ./cmd/airs 2>/dev/null && "$out/airs" grammar bench --help >/dev/null 2>&1; then
	grammar=("$out/airs" grammar)
fi
limit=()
[ -n "${CONFORMANCE_LIMIT:-}" ] && limit=(--limit "$CONFORMANCE_LIMIT")

cmd="airs grammar bench --data \$DATA_DIR/jsonschemabench --vocab llama3 --json"
log "$cmd"
"${grammar[@]}" bench --data "$DATA_DIR/jsonschemabench" --vocab llama3 --json "${limit[@]}" --out "$out/jsonschemabench.jsonl"
tail -n 1 "$out/jsonschemabench.jsonl" >&2

log "JSON Schema Test Suite (draft 2020-12)"
"$gb" suite --dir "$DATA_DIR/json-schema-test-suite/tests/draft2020-12" --json >"$out/suite.jsonl"

log "sampling compliance: JSB_SAMPLING=1 go test -run TestJSONSchemaBenchSampling ./grammar/ (500 schemas, 5 random outputs each)"
rm -f "$out/sampling.json"
sampling_rc=0
JSB_SAMPLING=1 JSB_SAMPLING_OUT="$(cd "$out" && pwd)/sampling.json" go test -count=1 -v -timeout 60m -run '^TestJSONSchemaBenchSampling$' ./grammar/ >"$out/sampling.log" 2>&1 || sampling_rc=$?
grep -h 'sampling: ' "$out/sampling.log" >&2 || tail -n 20 "$out/sampling.log" >&2
sampling=()
[ -s "$out/sampling.json" ] && sampling=(--sampling "$out/sampling.json")

"$gb" report --bench "$out/jsonschemabench.jsonl" --data "$DATA_DIR/jsonschemabench" --suite "$out/suite.jsonl" "${sampling[@]}" --vocab llama3 --command "$cmd" --out CONFORMANCE.md
log "wrote CONFORMANCE.md"
if [ "$sampling_rc" -ne 0 ]; then
	log "sampling compliance failed (exit $sampling_rc): see $out/sampling.log"
	exit "$sampling_rc"
fi

log "data-dependent tests: grammar/bench, grammar/export, evals/bfcl (checker vs BFCL's answers, schema translation), evals/predict (multiple >= 95%, irrelevance >= 0.70)"
go test -count=1 -timeout 30m ./grammar/bench/ ./grammar/export/ ./evals/bfcl/ ./evals/predict/

log "data-dependent goal tests: retrieval on held-out queries, held-out tools and the MCP set (AIRS beats BM25, StableToolBench NDCG@5 >= 0.45)"
AIRS_CONFORMANCE=1 go test -count=1 -timeout 30m -run TestConformanceRetrieval ./evals/retrieval/

# The MCP goal on requests written as people ask (MCP-Bench's test half among
# the Docker MCP registry's tools, LiveMCPBench): reported, not fatal, while
# the goal (NDCG@10 >= BM25 + 10 points) is not met; EVALS.md has the figures.
log "MCP goal: AIRS_CONFORMANCE=1 go test -run TestConformanceMCPGoal -v ./evals/retrieval/"
AIRS_CONFORMANCE=1 go test -count=1 -timeout 30m -run '^TestConformanceMCPGoal$' -v ./evals/retrieval/ 2>&1 | grep -E 'NDCG@10|^(--- |ok|FAIL)' >&2 || true

# Function-calling and retrieval benchmarks, replay: EVALS.md.
log "evals (BFCL no-LLM, retrieval vs BM25, replay) -> EVALS.md"
bash scripts/evals.sh

# Everyday requests planned without a model: the development suite (goal
# >= 95%, no destructive step for a request that does not ask to delete)
# and the held-out set, in the suites' fixture home (EVALS.md, "Everyday
# requests").
log "airs eval everyday --json (development suite, then held-out set)"
everyday_state=$(mktemp -d)
AIRS_HOME="$everyday_state" go run ./cmd/airs eval everyday --json >"$out/everyday.json"
AIRS_HOME="$everyday_state" go run ./cmd/airs eval everyday --suite evals/everyday/testdata/heldout.jsonl --json >"$out/everyday-heldout.json"
rm -rf "$everyday_state"
python3 - "$out/everyday.json" "$out/everyday-heldout.json" <<'PY'
import json, sys
dev, held = (json.load(open(p)) for p in sys.argv[1:3])
for name, r in (("development", dev), ("held-out", held)):
    print(f"everyday {name}: {r['right']}/{r['n']} ({100*r['accuracy']:.1f}%), destructive steps not asked for: {r['destructive_unasked']}", file=sys.stderr)
if dev["accuracy"] < 0.95 or dev["destructive_unasked"] or held["destructive_unasked"]:
    sys.exit("everyday: below the goal (>= 95% on the development suite, no destructive step not asked for)")
PY
