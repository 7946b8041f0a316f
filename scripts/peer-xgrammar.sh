#!/usr/bin/env bash
# peer-xgrammar.sh — AIRS's grammar beside XGrammar on the same schemas,
# instances, tokenization and vocabulary, and a comparison table.
#
# Usage: scripts/peer-xgrammar.sh [SAMPLE]     (default 100 schemas)
#
# Env:
#   DATA_DIR         shared reference data (default ../shared/data)
#   PEER_VOCAB       vocabulary name (default llama3, the MaskBench tokenizer)
#   PEER_MODE        XGrammar mode: compliant (default) or xgr-default
#   PEER_TIMEOUT     XGrammar's per-schema timeout in seconds (default 60)
#   AIRS_PEER_CACHE  where the peer is installed and runs are kept
#                    (default $HOME/.cache/airs-peers)
#
# The peer (../shared/peers/xgrammar: @mlc-ai/web-xgrammar 0.1.27 under Node,
# ajv oracle) is read-only where it is, so it is copied to the cache and
# installed there with `npm ci` (exact pinned versions, no install scripts);
# the copy is refreshed when package-lock.json changes. Both engines take
# --sample N: N schemas evenly spaced over all of jsonschemabench sorted by id,
# so they run the same schemas; both tokenize greedily (longest match, lowest
# id) over the same vocab file. Our side is grammarbench (= `airs grammar
# bench`), one thread, 10 s per schema.
set -euo pipefail
cd "$(dirname "$0")/.."
sample=${1:-100}
DATA_DIR=$(cd "${DATA_DIR:-../shared/data}" && pwd)
export DATA_DIR
vocab=${PEER_VOCAB:-llama3}
mode=${PEER_MODE:-compliant}
cache=${AIRS_PEER_CACHE:-$HOME/.cache/airs-peers}
src=$(cd "$DATA_DIR/../peers/xgrammar" 2>/dev/null && pwd || true)
[ -n "$src" ] || src=$(cd ../shared/peers/xgrammar && pwd)
log() { printf '[peer-xgrammar %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

peer="$cache/xgrammar"
mkdir -p "$cache"
if ! cmp -s "$src/package-lock.json" "$peer/package-lock.json" 2>/dev/null || [ ! -d "$peer/node_modules" ]; then
	log "installing the peer from $src into $peer (npm ci)"
	rm -rf "$peer"
	cp -r "$src" "$peer"
	(cd "$peer" && npm ci --ignore-scripts --no-audit --no-fund >&2)
else
	# refresh the scripts, keep node_modules
	for f in "$src"/*.mjs "$src"/package.json; do cp "$f" "$peer/"; done
fi

runs="$cache/runs"
mkdir -p "$runs"
tag="$vocab-s$sample-$mode"
ours="$runs/airs-$tag.jsonl"
theirs="$runs/xgrammar-$tag.jsonl"

bin="$cache/grammarbench"
log "building grammarbench"
go build -o "$bin" ./grammar/bench/cmd/grammarbench

log "AIRS: --sample $sample --vocab $vocab"
t0=$(date +%s)
"$bin" bench --data jsonschemabench --vocab "$vocab" --sample "$sample" --json --out "$ours" --quiet
t1=$(date +%s)
log "AIRS done in $((t1 - t0)) s; XGrammar ($mode): --sample $sample --vocab $vocab"
(cd "$peer" && XG_DATA_DIR="$DATA_DIR" node peer.mjs --vocab "$vocab" --data jsonschemabench --sample "$sample" \
	--mode "$mode" --timeout "${PEER_TIMEOUT:-60}" --out "$theirs" 2>"$runs/xgrammar-$tag.log")
t2=$(date +%s)
log "XGrammar done in $((t2 - t1)) s"

echo "## AIRS grammar vs XGrammar: $sample JSONSchemaBench schemas (evenly spaced by id), $vocab vocab, one thread"
echo
echo "Wall time: AIRS $((t1 - t0)) s, XGrammar $((t2 - t1)) s. Runs: $ours, $theirs."
echo
"$bin" compare --ours "$ours" --peer "$theirs"
