#!/usr/bin/env bash
# temporal.sh — run a command against a real Temporal dev server.
#
# Usage: scripts/temporal.sh [COMMAND [ARG...]]
#
#   1. builds the Temporal CLI from its Go module with `go install`
#      (github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION; its dev
#      server is go.temporal.io/server, built in), or reuses the cached binary
#      $AIRS_E2E_CACHE/temporal/$TEMPORAL_CLI_VERSION/temporal;
#   2. starts `temporal server start-dev --headless` on free 127.0.0.1 ports,
#      its SQLite store in a temp dir;
#   3. waits until the frontend answers (operator cluster health) and the
#      default namespace exists;
#   4. exports AIRS_TEMPORAL_ADDRESS=127.0.0.1:PORT and runs COMMAND (default:
#      the chains/temporal tests, end-to-end test included, printing its JSON
#      line {"chain_resumed":true,"steps_repeated":0,...});
#   5. always stops the server and removes the temp dir; exits with COMMAND's
#      status.
#
# Why v1.5.1: v1.9.1's go.mod has replace directives, so `go install
# …@v1.9.1` refuses it; v1.5.1 (Temporal server 1.29.1) has none.
#
# Env:
#   TEMPORAL_CLI_VERSION  CLI version to build (default v1.5.1)
#   AIRS_E2E_CACHE        cache dir (default $HOME/.cache/airs-e2e)
#   TEMPORAL_BIN          use this temporal binary instead of building one
#   AIRS_TEMPORAL_KEEP=1  keep the temp dir (server log) after the run
set -euo pipefail

cd "$(dirname "$0")/.."
VERSION="${TEMPORAL_CLI_VERSION:-v1.5.1}"
CACHE="${AIRS_E2E_CACHE:-$HOME/.cache/airs-e2e}"
t0=$(date +%s)
log() { printf '[temporal %s +%ss] %s\n' "$(date +%H:%M:%S)" "$(($(date +%s) - t0))" "$*" >&2; }

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
	exit 0
fi

command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
BIN="${TEMPORAL_BIN:-$CACHE/temporal/$VERSION/temporal}"
if [[ ! -x "$BIN" ]]; then
	log "building the Temporal CLI $VERSION from its Go module into $(dirname "$BIN") (several minutes, once)"
	mkdir -p "$(dirname "$BIN")"
	if ! GOBIN="$(dirname "$BIN")" nice -n 10 go install "github.com/temporalio/cli/cmd/temporal@$VERSION"; then
		log "go install github.com/temporalio/cli/cmd/temporal@$VERSION failed: try another version (go list -m -versions github.com/temporalio/cli) with TEMPORAL_CLI_VERSION=..., or point TEMPORAL_BIN at a temporal binary"
		exit 1
	fi
fi

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(freeport)
http_port=$(freeport)
metrics_port=$(freeport)
dir=$(mktemp -d "${TMPDIR:-/tmp}/airs-temporal.XXXXXX")
pid=
cleanup() {
	local st=$?
	if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	if [[ "${AIRS_TEMPORAL_KEEP:-}" == 1 ]]; then log "kept $dir"; else rm -rf "$dir"; fi
	exit $st
}
trap cleanup EXIT INT TERM

"$BIN" server start-dev --ip 127.0.0.1 --port "$port" --http-port "$http_port" --metrics-port "$metrics_port" \
	--headless --db-filename "$dir/temporal.db" --log-level warn >"$dir/server.log" 2>&1 &
pid=$!
addr="127.0.0.1:$port"
for i in $(seq 600); do
	if ! kill -0 "$pid" 2>/dev/null; then
		log "the dev server exited at start; its log:"
		cat "$dir/server.log" >&2
		exit 1
	fi
	if "$BIN" operator cluster health --address "$addr" >/dev/null 2>&1 &&
		"$BIN" operator namespace describe --address "$addr" --namespace default >/dev/null 2>&1; then
		break
	fi
	if [[ $i == 600 ]]; then
		log "the dev server did not answer on $addr within 60 s; its log:"
		tail -50 "$dir/server.log" >&2
		exit 1
	fi
	sleep 0.1
done
export AIRS_TEMPORAL_ADDRESS="$addr"
log "Temporal dev server ($("$BIN" --version | head -1)) on $addr, store $dir/temporal.db; AIRS_TEMPORAL_ADDRESS=$addr"

if [[ $# -eq 0 ]]; then
	set -- go test -count=1 -v -run 'TestE2E|TestWorkflow|TestIdempotent|TestNonIdempotent|TestToolFailure|TestInvalid|TestCall' ./chains/temporal/
fi
st=0
"$@" || st=$?
log "command exited $st"
exit $st
