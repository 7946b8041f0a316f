#!/usr/bin/env bash
# airs serve's event streams under load from a separate process on loopback:
# C reading clients and 5 stalled ones on one stream while file openings (and,
# on the UI's stream, calls) arrive at R events/s in all. Suggestions live
# 10 minutes here (none expires during the run: an expiry is an "ignored"
# that would teach the recommender to stop suggesting). Prints airs-load's
# figures and the server's memory (RSS) before, at its peak and after.
# Usage: scripts/sse-load.sh [CLIENTS] [DURATION] [RATE] [STREAM]
#   STREAM: api (default; /v1/recommendations/stream, bearer token) or ui
#   (the attention UI's stream, signed in with the same token)
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-100}; dur=${2:-30s}; rate=${3:-50}; stream=${4:-api}
go build -o bin/airs ./cmd/airs
go build -o bin/airs-load ./cmd/airs-load
work=$(mktemp -d "${TMPDIR:-/tmp}/airs-sse.XXXXXX")
port=$(( 20000 + RANDOM % 20000 ))
tok=load-$RANDOM$RANDOM
mkdir -p "$work/docs"
for i in $(seq 0 999); do echo "note $i" > "$work/docs/f$i.txt"; done
cat > "$work/airs.yaml" <<YAML
home: $work/state
spaces: {docs: $work/docs}
agents:
  loader: {capabilities: ["ReadSpace(docs)"], rate_limit: {per_second: 10000, burst: 10000}}
http:
  listen: 127.0.0.1:$port
  tokens:
    - {sha256: $(printf %s "$tok" | sha256sum | cut -d' ' -f1), agent: loader}
recommend: {per_minute: 100000, max_active: 5000, ttl: 10m}
YAML
AIRS_CONFIG=$work/airs.yaml ./bin/airs serve --model none 2>"$work/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
base=http://127.0.0.1:$port
rss() { awk '/^VmRSS/ {print $2}' /proc/$pid/status; }
hwm() { awk '/^VmHWM/ {print $2}' /proc/$pid/status; }
before=$(rss)
url=$base/v1/recommendations/stream; signin=()
if [ "$stream" = ui ]; then url=$base/ui/api/events; signin=(-signin "$base/ui/signin"); fi
# The API's stream carries recommendations only: every event is a file
# opening; the UI's carries calls too: half and half.
calls_rate=0; files_rate=$rate
if [ "$stream" = ui ]; then calls_rate=$(awk -v r="$rate" 'BEGIN { print r / 2 }'); files_rate=$calls_rate; fi
./bin/airs-load sse -url "$url" "${signin[@]}" -token "$tok" -c "$clients" -stall 5 -d "$dur" \
	-calls "$base/v1/call" -calls-rate "$calls_rate" -calls-body '{"tool":"calculator","arguments":{"expression":"(12.5 + 7) * 3"}}' \
	-context "$base/v1/context" -files-rate "$files_rate" -files-space docs -files-n 1000 -files-pattern 'f%d.txt' -json | tee "$work/sse.json"
echo "{\"server_rss_kb_before\": $before, \"server_rss_kb_peak\": $(hwm), \"server_rss_kb_after\": $(rss)}"
