#!/usr/bin/env bash
# Builds ./bin/airs and shows that it is progressing: on a fresh machine the
# first build downloads the modules and compiles several hundred packages,
# which takes minutes, and a silent terminal looks hung. It prints the
# modules as they download, then "compiled N of at most M packages" every
# few seconds (M counts the standard library's packages too, which a
# machine with a warm build cache skips). A failed build prints go's whole
# output.
#
# Usage: scripts/build-progress.sh [OUT] [PKG]   (default bin/airs ./cmd/airs)
# Env: GO (default go).
set -uo pipefail
out=${1:-bin/airs}
pkg=${2:-./cmd/airs}
go=${GO:-go}
log=$(mktemp "${TMPDIR:-/tmp}/airs-build.XXXXXX")
trap 'rm -f "$log" "$log.list"' EXIT

# The package list needs the modules: "go: downloading" lines are the
# progress of that phase.
if ! "$go" list -deps "$pkg" >"$log.list" 2> >(grep --line-buffered -i 'download' >&2); then
	echo "could not list the packages of $pkg:" >&2
	"$go" list -deps "$pkg" >/dev/null
	exit 1
fi
total=$(grep -c . "$log.list")

"$go" build -v -o "$out" "$pkg" >"$log" 2>&1 &
pid=$!
# Interrupted: the build stops too.
trap 'kill "$pid" 2>/dev/null; rm -f "$log" "$log.list"' EXIT
start=$SECONDS
last=-1
lastsaid=$SECONDS
while kill -0 "$pid" 2>/dev/null; do
	sleep 1
	n=$(grep -c . "$log")
	if [ "$n" != "$last" ] && [ $((SECONDS - lastsaid)) -ge 3 ] || [ $((SECONDS - lastsaid)) -ge 10 ]; then
		echo "  compiling: $n of at most $total packages done ($((SECONDS - start)) s)"
		last=$n
		lastsaid=$SECONDS
	fi
done
wait "$pid"
rc=$?
if [ $rc -ne 0 ]; then
	cat "$log" >&2
	exit $rc
fi
echo "built $out in $((SECONDS - start)) s ($(grep -c . "$log") packages compiled, the rest from the build cache)"
