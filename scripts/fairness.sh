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
# Three runs, each on a fresh server: the second agent idle (the rounds'
# noise), a hostile agent that waits as Retry-After says, and one that
# floods (asks again at once, whatever the answer).
# Usage: scripts/fairness.sh [ROUNDS] [ROUND]   (defaults 8 rounds of each kind, 8s each)
#   FAIRNESS_MODES: which runs (default "noise retry-after flood")
#   FAIRNESS_ARGS: more airs-load fairness flags (airs-load fairness -h)
#   AIRS_BIN: an airs binary to measure instead of building this tree's
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-8}; round=${2:-8s}
airs=${AIRS_BIN:-bin/airs}   # AIRS_BIN: another build of airs to measure (an A/B)
[ -n "${AIRS_BIN:-}" ] || go build -o bin/airs ./cmd/airs
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
pid=
trap 'stop_server; rm -rf "$work"' EXIT
stop_server() { [ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; pid=; }; }
# mode NAME FLAGS…: a fresh server (no held calls, no limits from before), then the rounds.
mode() {
	local name=$1; shift
	rm -rf "$work/state"
	AIRS_CONFIG=$work/airs.yaml "$airs" serve --model none 2>"$work/serve.log" &
	pid=$!
	for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
	echo
	echo "== $name: $rounds quiet and $rounds hostile rounds of $round, interleaved; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
	./bin/airs-load fairness -url "http://127.0.0.1:$port" -quiet "$quiet" -hostile "$hostile" \
		-read-space docs -read-path a.txt -write-space scratch -rounds "$rounds" -round "$round" -server-pid "$pid" "$@" ${FAIRNESS_ARGS:-}
	stop_server
}
modes=${FAIRNESS_MODES:-noise retry-after flood}
for m in $modes; do
	case $m in
	noise) mode "noise: the second agent idle (what the table is worth on this machine)" -abuses none ;;
	retry-after) mode "hostile agent that waits as its 429s and 503s say (Retry-After)" -hostile-retry-after ;;
	flood) mode "hostile agent that floods: every abuse asks again at once" ;;
	*) echo "FAIRNESS_MODES: no mode $m (noise, retry-after, flood)" >&2; exit 2 ;;
	esac
done
