#!/usr/bin/env bash
# Fairness: a quiet agent's calls alone and beside a hostile agent, against
# a real `airs serve` (built binary, loopback only). The hostile agent makes
# compare calls on large texts with a 60 ms deadline, selects and plans just
# under their input limits, selects and plans it abandons after 100 ms, and
# destructive calls that are held until its pending confirmations are
# refused. Rounds alternate (quiet, hostile, hostile, quiet, …) so other
# load on the machine weighs on both kinds alike; the table is the quiet
# agent's medians over rounds. Every agent has a rate limit, as a shared
# server should: the hostile agent 100 tokens/s (work-counted), the quiet
# one more than it uses.
# Usage: scripts/fairness.sh [ROUNDS] [ROUND]   (defaults 6 rounds of each kind, 5s each)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-6}; round=${2:-5s}
go build -o bin/airs ./cmd/airs
go build -o bin/airs-load ./cmd/airs-load
work=$(mktemp -d "${TMPDIR:-/tmp}/airs-fair.XXXXXX")
port=$(( 20000 + RANDOM % 20000 ))
quiet=quiet-$RANDOM$RANDOM; hostile=hostile-$RANDOM$RANDOM
mkdir -p "$work/docs" "$work/scratch"; echo hello > "$work/docs/a.txt"
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat > "$work/airs.yaml" <<YAML
home: $work/state
spaces: {docs: $work/docs, scratch: $work/scratch}
agents:
  quiet: {capabilities: ["ReadSpace(docs)"], rate_limit: {per_second: 200, burst: 200}}
  hostile: {capabilities: ["ReadSpace(docs)", "WriteSpace(scratch)"]}
rate_limit: {per_second: ${HOSTILE_RATE:-20}, burst: $(( 2 * ${HOSTILE_RATE:-20} ))}
http:
  listen: 127.0.0.1:$port
  tokens:
    - {sha256: $(sha "$quiet"), agent: quiet}
    - {sha256: $(sha "$hostile"), agent: hostile}
YAML
AIRS_CONFIG=$work/airs.yaml ./bin/airs serve --model none 2>"$work/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
echo "== fairness: $rounds quiet and $rounds hostile rounds of $round, interleaved; load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
./bin/airs-load fairness -url "http://127.0.0.1:$port" -quiet "$quiet" -hostile "$hostile" \
	-read-space docs -read-path a.txt -write-space scratch -rounds "$rounds" -round "$round" -server-pid "$pid" ${FAIRNESS_ARGS:-}
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
