#!/usr/bin/env bash
# inproc.sh — build and test the in-process engine (model/inproc, build tag inproc).
#
# Usage: scripts/inproc.sh build [OUT]    # airs with the engine (default bin/airs-inproc)
#        scripts/inproc.sh test [ARGS...]  # go test -tags inproc ./model/inproc (ARGS go to go test)
#        scripts/inproc.sh env             # print the cgo environment (eval "$(scripts/inproc.sh env)")
#
# The engine links github.com/ollama/ollama/llama (llama.cpp, v0.17.4) with
# cgo. Its C/C++ sources need the same headers as the Ollama build
# (scripts/ollama-build.sh: nlohmann-json3-dev, libstb-dev, and miniaudio.h
# from github.com/gen2brain/malgo in $AIRS_E2E_CACHE/ollama-v0.17.4/include),
# so this script runs ollama-build.sh first (cached: it only checks). The
# flags are the Ollama build's (-trimpath, the same CGO_CPPFLAGS) so both
# share Go's build cache: llama.cpp is compiled once, by whichever comes first.
#
# Env: AIRS_E2E_CACHE, OLLAMA_VERSION as for ollama-build.sh; AIRS_TOKENIZER
# (the Qwen3 tokenizer.json the tests write the tiny model with; default:
# $DATA_DIR/tokenizers or the e2e cache), DATA_DIR (BFCL and JSONSchemaBench).
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE="${AIRS_E2E_CACHE:-$HOME/.cache/airs-e2e}"
VERSION="${OLLAMA_VERSION:-v0.17.4}"
INC="$CACHE/ollama-$VERSION/include"

log() { printf '[inproc %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

setup() {
	if [[ ! -f "$INC/miniaudio/miniaudio.h" || ! -f /usr/include/nlohmann/json.hpp || ! -f /usr/include/stb/stb_image.h ]]; then
		log "headers missing: running scripts/ollama-build.sh (installs them)"
		bash scripts/ollama-build.sh >/dev/null
	fi
	export CGO_ENABLED=1 CGO_CPPFLAGS="-I/usr/include/stb -I$INC ${CGO_CPPFLAGS:-}"
	export GOFLAGS="-trimpath ${GOFLAGS:-}"
}

cmd="${1:-}"
shift || true
case "$cmd" in
build)
	setup
	out="${1:-bin/airs-inproc}"
	log "go build -tags inproc -o $out ./cmd/airs"
	go build -tags inproc -o "$out" ./cmd/airs
	echo "$out"
	;;
test)
	setup
	log "go test -tags inproc ./model/inproc $*"
	go test -tags inproc -count=1 -timeout 30m "$@" ./model/inproc
	;;
env)
	setup
	printf 'export CGO_ENABLED=1 CGO_CPPFLAGS=%q GOFLAGS=%q\n' "$CGO_CPPFLAGS" "$GOFLAGS"
	;;
*)
	sed -n '2,9p' "$0" >&2
	exit 2
	;;
esac
