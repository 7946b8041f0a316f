#!/usr/bin/env bash
# ollama-build.sh — build Ollama from its Go module and cache the binary.
#
# Usage: scripts/ollama-build.sh            # prints the binary's path on stdout
#
# Env:
#   AIRS_E2E_CACHE   cache directory (default $HOME/.cache/airs-e2e)
#   OLLAMA_VERSION   Ollama module version (default v0.17.4, the version pinned in go.mod)
#   MALGO_VERSION    module that supplies miniaudio.h (default v0.11.24)
#   AIRS_OLLAMA_REBUILD=1  ignore the cached binary
#
# The binary lives at $AIRS_E2E_CACHE/ollama-$OLLAMA_VERSION/bin/ollama and is
# reused as long as it exists and runs. Recipe (see issue 4): the system
# headers nlohmann-json3-dev and libstb-dev, miniaudio.h copied from
# github.com/gen2brain/malgo, then `go build github.com/ollama/ollama` inside
# a throwaway module that requires it. Progress goes to stderr; only the path
# goes to stdout. Concurrent runs are serialised with flock.
set -euo pipefail

CACHE="${AIRS_E2E_CACHE:-$HOME/.cache/airs-e2e}"
VERSION="${OLLAMA_VERSION:-v0.17.4}"
MALGO_VERSION="${MALGO_VERSION:-v0.11.24}"
ROOT="$CACHE/ollama-$VERSION"
BIN="$ROOT/bin/ollama"

log() { printf '[ollama-build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

mkdir -p "$ROOT/bin"
exec 9>"$ROOT/.lock"
if ! flock -n 9; then
	log "another build holds $ROOT/.lock; waiting"
	flock 9
fi

# The binary is stamped with its version (ldflags), so `ollama --version`
# and /api/version report it; a binary that runs and reports it is reused.
cached_ok() {
	# (OLLAMA_HOST points nowhere so the answer never depends on a running server.)
	[[ -x "$BIN" ]] && OLLAMA_HOST=127.0.0.1:1 "$BIN" --version 2>&1 | grep -qF "client version is ${VERSION#v}"
}

if [[ "${AIRS_OLLAMA_REBUILD:-0}" != 1 ]] && cached_ok; then
	log "cached: $BIN"
	echo "$BIN"
	exit 0
fi

start=$(date +%s)

# 1. System headers used by llama.cpp's sources that ship in Ollama's module.
need=()
[[ -f /usr/include/nlohmann/json.hpp ]] || need+=(nlohmann-json3-dev)
[[ -f /usr/include/stb/stb_image.h ]] || need+=(libstb-dev)
if ((${#need[@]})); then
	log "installing ${need[*]}"
	SUDO=""
	if [[ $(id -u) != 0 ]]; then SUDO="sudo"; fi
	if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" >&2; then
		log "apt-get install failed; trying apt-get update first"
		$SUDO apt-get update >&2
		$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" >&2
	fi
fi

# 2. A throwaway module that requires Ollama.
SRC="$ROOT/src"
INC="$ROOT/include"
mkdir -p "$SRC" "$INC/miniaudio"
cd "$SRC"
if [[ ! -f go.mod ]] || ! grep -q "github.com/ollama/ollama $VERSION" go.mod; then
	log "preparing build module in $SRC"
	rm -f go.mod go.sum
	cat >go.mod <<EOF
module airs.local/ollama-build

go 1.24.1
EOF
fi
# go get resolves Ollama's dependency graph and writes go.sum (network or GOPROXY cache).
log "resolving github.com/ollama/ollama@$VERSION"
GOFLAGS=-mod=mod go get "github.com/ollama/ollama@$VERSION" >&2

# 3. miniaudio.h from malgo (Ollama's mtmd-helper.cpp includes "miniaudio/miniaudio.h").
if [[ ! -f "$INC/miniaudio/miniaudio.h" ]]; then
	log "fetching miniaudio.h from github.com/gen2brain/malgo@$MALGO_VERSION"
	dir=$(GOFLAGS=-mod=mod go mod download -json "github.com/gen2brain/malgo@$MALGO_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	if [[ -z "$dir" || ! -f "$dir/miniaudio.h" ]]; then
		log "miniaudio.h not found in malgo module dir '$dir'"
		exit 1
	fi
	cp "$dir/miniaudio.h" "$INC/miniaudio/miniaudio.h.tmp"
	mv "$INC/miniaudio/miniaudio.h.tmp" "$INC/miniaudio/miniaudio.h"
fi

# 4. Build (cgo compiles llama.cpp and ggml; this is the slow part).
log "building ollama $VERSION (takes several minutes)"
tmp="$ROOT/bin/.ollama.tmp.$$"
trap 'rm -f "$tmp"' EXIT
CGO_ENABLED=1 CGO_CPPFLAGS="-I/usr/include/stb -I$INC ${CGO_CPPFLAGS:-}" \
	GOFLAGS=-mod=mod go build -trimpath \
	-ldflags "-X github.com/ollama/ollama/version.Version=${VERSION#v}" \
	-o "$tmp" "github.com/ollama/ollama" >&2
mv "$tmp" "$BIN"
trap - EXIT
echo "$VERSION" >"$ROOT/bin/VERSION"

if ! cached_ok; then
	log "built binary does not run: $BIN"
	exit 1
fi
log "built $BIN in $(($(date +%s) - start))s"
echo "$BIN"
