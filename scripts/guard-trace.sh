#!/usr/bin/env bash
# Record anomaly-gate traces from a live airs serve (scripts/guard-trace.py
# says how): DIR/train.jsonl and DIR/test.jsonl, then measure them.
# Usage: scripts/guard-trace.sh DIR [TRAIN_MINUTES] [TEST_MINUTES]   (defaults 30 30)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/guard-trace.sh DIR [TRAIN_MINUTES] [TEST_MINUTES]}; train=${2:-30}; test=${3:-30}
mkdir -p "$out"; out=$(cd "$out" && pwd)
go build -o bin/airs ./cmd/airs
work=$(mktemp -d "${TMPDIR:-/tmp}/airs-guard.XXXXXX")
port=$(( 20000 + RANDOM % 20000 ))
agents="ana ben cleo dov eli fetch-bot gus hal"
{
	echo "home: $work/state"
	echo "spaces: {repo: $PWD}"
	echo "agents:"
	for a in $agents; do echo "  $a: {capabilities: [\"ReadSpace(repo)\"]}"; done
	echo "http:"
	echo "  listen: 127.0.0.1:$port"
	echo "  tokens:"
	for a in $agents; do echo "    - {sha256: $(printf %s "tok-$a" | sha256sum | cut -d' ' -f1), agent: $a}"; done
} > "$work/airs.yaml"
AIRS_CONFIG=$work/airs.yaml ./bin/airs serve --model none 2>"$work/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
tokens=$(printf '{'; sep=; for a in $agents; do printf '%s"%s":"tok-%s"' "$sep" "$a" "$a"; sep=,; done; printf '}')
python3 scripts/guard-trace.py "http://127.0.0.1:$port" "$tokens" "$PWD/bin/airs" "$work/airs.yaml" "$out" "$train" "$test" "$PWD"
./bin/airs guard trace --audit "$work/state/audit.jsonl" --out "$out/audit-trace.jsonl"
./bin/airs eval guard --train "$out/train.jsonl" --test "$out/test.jsonl"
