#!/usr/bin/env bash
# peer-toolcall.sh — the 50-tool call grammar (BFCL live_multiple, the tools
# of BenchmarkToolCallCold) built by AIRS and compiled by XGrammar, in one run.
#
# Usage: scripts/peer-toolcall.sh [COUNT]   (default 5 runs of each AIRS benchmark)
#
# XGrammar takes only a JSON Schema, so it gets the same tools as one schema:
# an anyOf of {"function": const, "arguments": parameters} objects and the
# "none" choice (TestWriteToolCallSchema writes it). Its `xgr-default` mode
# (strict: no undeclared properties) is the counterpart of AIRS's Strict
# tool-call grammar (what the selector generates with), `compliant` of the
# default one. AIRS's side: ToolCall with empty caches (BenchmarkToolCallCold,
# median of COUNT, one thread and two), and Compile of the very schema
# XGrammar gets (grammarbench, one fresh process).
#
# Env: DATA_DIR (default ../shared/data), AIRS_PEER_CACHE (default
# $HOME/.cache/airs-peers; scripts/peer-xgrammar.sh installs the peer there).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-5}
DATA_DIR=$(cd "${DATA_DIR:-../shared/data}" && pwd)
export DATA_DIR
cache=${AIRS_PEER_CACHE:-$HOME/.cache/airs-peers}
peer="$cache/xgrammar"
src=$(cd "$DATA_DIR/../peers/xgrammar" 2>/dev/null && pwd || true)
[ -n "$src" ] || src=$(cd ../shared/peers/xgrammar && pwd)
log() { printf '[peer-toolcall %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
if ! cmp -s "$src/package-lock.json" "$peer/package-lock.json" 2>/dev/null || [ ! -d "$peer/node_modules" ]; then
	log "installing the peer from $src into $peer (npm ci)"
	rm -rf "$peer"
	mkdir -p "$cache"
	cp -r "$src" "$peer"
	(cd "$peer" && npm ci --no-audit --no-fund >/dev/null)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/airs-peer-toolcall.XXXXXX")
trap 'rm -rf "$work"' EXIT

log "writing the 50-tool call schema"
TOOLCALL_SCHEMA_OUT="$work/tc50.jsonl" go test -count=1 -run '^TestWriteToolCallSchema$' ./grammar/ >/dev/null

xg() { # mode → compile ms and status
	(cd "$peer" && XG_DATA_DIR="$DATA_DIR" node peer.mjs --vocab llama3 --data "$work/tc50.jsonl" --mode "$1" --out "$work/xg-$1.jsonl" >/dev/null 2>&1)
	head -n 1 "$work/xg-$1.jsonl" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.1f %s" % (d["compile_ms"] or -1, d["status"]))'
}
log "XGrammar (WASM) compiles it, both modes"
read -r xg_strict xg_strict_status < <(xg xgr-default)
read -r xg_compl xg_compl_status < <(xg compliant)

log "AIRS compiles the same schema (grammarbench, fresh process)"
go build -o "$work/gb" ./grammar/bench/cmd/grammarbench
airs_schema=$("$work/gb" bench --data "$work/tc50.jsonl" --vocab llama3 --json 2>/dev/null | tail -n 1 | python3 -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["compile_ms"]["p50"])')

log "AIRS ToolCall, empty caches: go test -run '^\$' -bench 'BenchmarkToolCallCold/(default|strict)/' -count $count -cpu 1 ./grammar/"
go test -run '^$' -bench 'BenchmarkToolCallCold/(default|strict)/' -count "$count" -cpu 1 ./grammar/ >"$work/cold.txt"
median() { # sub-benchmark name → median ms/op
	awk -v n="$1" '$1==n {print $3/1e6}' "$work/cold.txt" | sort -n | awk '{a[NR]=$1} END {if (NR) printf "%.1f", a[int((NR+1)/2)]; else print "?"}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.4f", a / b; else print "?" }'; }

echo
echo "50 BFCL tools, cold, one thread (ms, medians of $count; same run, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "build: ToolCall (all schemas lowered, root over the names; a tool's automata wait for its name);"
echo "first call: build + a matcher through one tool's name (that tool built); eager: every tool built."
echo
echo "| | AIRS build | AIRS first call | AIRS eager | XGrammar compile (WASM) | first call / XGrammar | eager / XGrammar |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for m in strict default; do
	b=$(median "BenchmarkToolCallCold/$m/build") f=$(median "BenchmarkToolCallCold/$m/first-call") e=$(median "BenchmarkToolCallCold/$m/eager")
	if [ "$m" = strict ]; then x=$xg_strict xs="xgr-default, $xg_strict_status" label="strict (no undeclared arguments)"; else x=$xg_compl xs="compliant, $xg_compl_status" label="default"; fi
	echo "| $label; XGrammar $xs | $b | $f | $e | $x | $(ratio "$f" "$x") | $(ratio "$e" "$x") |"
done
echo
echo "AIRS Compile of the anyOf schema XGrammar gets: $airs_schema ms (default options, one fresh process)."
