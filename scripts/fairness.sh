#!/usr/bin/env bash
# Fairness: a quiet agent's calls alone and beside a hostile agent, against
# a real `airs serve` (built binary, loopback only). The hostile agent makes
# compare calls on large texts with a 60 ms deadline, selects and plans just
# under their input limits, selects and plans it abandons after 100 ms, and
# destructive calls that are held until its pending confirmations are
# refused. Rounds alternate (quiet, hostile, hostile, quiet, …) so other
# load on the machine weighs on both kinds alike; the table is the quiet
# agent's medians over rounds. Every agent has a rate limit, as a shared
# server should: the hostile agent 20 tokens/s (work-counted; HOSTILE_RATE),
# the quiet one more than it uses. The hostile agent runs in a process of
# its own (airs-load starts itself), as a second agent does: in the quiet
# agent's process its work would delay the quiet agent's measurements
# (FAIRNESS_ARGS=-hostile-in-process shows by how much).
# Three runs, each on a fresh server: the second agent idle (the rounds'
# noise), a hostile agent that waits as Retry-After says, and one that
# floods (asks again at once, whatever the answer).
# Usage: scripts/fairness.sh [ROUNDS] [ROUND]   (defaults 8 rounds of each kind, 8s each)
#   FAIRNESS_MODES: which runs (default "noise retry-after flood")
#   FAIRNESS_ARGS: more airs-load fairness flags (airs-load fairness -h)
#   HOSTILE_NICE: the hostile agent's process at this nice value (0-19; default
#     0). 19 models a hostile client on another machine: its own requests take
#     none of the two cores, what the server spends on them still does.
#   AIRS_BIN: an airs binary to measure instead of building this tree's
#   AIRS_BINS: several builds to compare, "name=path …" (e.g. "base=/tmp/airs-base
#     new=bin/airs"): each mode runs every build in turn, FAIRNESS_REPS times
#     (default 1), the builds' order alternating, so load on the machine
#     weighs on each alike (an A/B/B/A…)
# The figures: the quiet agent's p99 per kind of round as the median of the
# rounds' p99s and pooled over the rounds' calls; the pooled ratio comes
# with a 95 % bootstrap interval over rounds. The noise run is the A/A: a
# ratio is resolved only where its interval and the A/A's are apart.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-8}; round=${2:-8s}
airs=${AIRS_BIN:-bin/airs}   # AIRS_BIN: another build of airs to measure (an A/B)
[ -n "${AIRS_BIN:-}" ] || go build -o bin/airs ./cmd/airs
bins=${AIRS_BINS:-this=$airs}
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
# mode BUILD=PATH NAME FLAGS…: a fresh server of that build (no held calls,
# no limits from before), then the rounds.
mode() {
	local build=${1%%=*} bin=${1#*=}; shift
	local name=$1; shift
	rm -rf "$work/state"
	AIRS_CONFIG=$work/airs.yaml "$bin" serve --model none 2>"$work/serve.log" &
	pid=$!
	for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
	echo
	echo "== [$build] $name: $rounds quiet and $rounds hostile rounds of $round, interleaved; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
	./bin/airs-load fairness -url "http://127.0.0.1:$port" -quiet "$quiet" -hostile "$hostile" \
		-read-space docs -read-path a.txt -write-space scratch -rounds "$rounds" -round "$round" -server-pid "$pid" -hostile-nice "${HOSTILE_NICE:-0}" "$@" ${FAIRNESS_ARGS:-}
	stop_server
}
modes=${FAIRNESS_MODES:-noise retry-after flood}
for m in $modes; do
	case $m in noise|retry-after|flood) ;; *) echo "FAIRNESS_MODES: no mode $m (noise, retry-after, flood)" >&2; exit 2 ;; esac
done
i=0
for rep in $(seq "${FAIRNESS_REPS:-1}"); do
	for m in $modes; do
		order=$bins
		[ $((i % 2)) = 0 ] || order=$(printf '%s\n' $bins | tac | tr '\n' ' ')
		i=$((i + 1))
		for b in $order; do
			case $m in
			noise) mode "$b" "noise: the second agent idle (what the table is worth on this machine)" -abuses none ;;
			retry-after) mode "$b" "hostile agent that waits as its 429s and 503s say (Retry-After)" -hostile-retry-after ;;
			flood) mode "$b" "hostile agent that floods: every abuse asks again at once" ;;
			esac
		done
	done
done
