#!/usr/bin/env bash
# airs serve under load from a separate process on loopback: C concurrent
# clients calling a fast tool (calculator) for D; then a client without a token
# (expects 401) and a token without the capability (expects 403).
# Usage: scripts/serve-load.sh [CLIENTS] [DURATION]   (defaults 200 30s)
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-200}; dur=${2:-30s}
go build -o bin/airs ./cmd/airs
go build -o bin/airs-load ./cmd/airs-load
work=$(mktemp -d "${TMPDIR:-/tmp}/airs-load.XXXXXX")
port=$(( 20000 + RANDOM % 20000 ))
tok=load-$RANDOM$RANDOM; weak=weak-$RANDOM$RANDOM
mkdir -p "$work/docs"; echo hello > "$work/docs/a.txt"
cat > "$work/airs.yaml" <<YAML
home: $work/state
spaces: {docs: $work/docs}
agents:
  loader: {capabilities: ["ReadSpace(docs)"]}
  weak: {capabilities: []}
http:
  listen: 127.0.0.1:$port
  tokens:
    - {sha256: $(printf %s "$tok" | sha256sum | cut -d' ' -f1), agent: loader}
    - {sha256: $(printf %s "$weak" | sha256sum | cut -d' ' -f1), agent: weak}
YAML
AIRS_CONFIG=$work/airs.yaml ./bin/airs serve --model none 2>"$work/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
base=http://127.0.0.1:$port
no_token=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$base/v1/call" -d '{"tool":"calculator","arguments":{"expression":"1"}}')
no_cap=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $weak" -H "Content-Type: application/json" -X POST "$base/v1/call" -d '{"tool":"read-file","arguments":{"space":"docs","path":"a.txt"}}')
echo "no token: HTTP $no_token (want 401); token without ReadSpace(docs): HTTP $no_cap (want 403)"
./bin/airs-load -url "$base/v1/call" -token "$tok" -c "$clients" -d "$dur" -json \
	-body '{"tool":"calculator","arguments":{"expression":"(12.5 + 7) * 3"},"timeout_ms":2000}' | tee "$work/load.json"
[ "$no_token" = 401 ] && [ "$no_cap" = 403 ]
