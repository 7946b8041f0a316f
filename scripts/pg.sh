#!/usr/bin/env bash
# scripts/pg.sh CMD [ARGS…] — run CMD against a throwaway PostgreSQL 15 with
# the vector extension, on loopback.
#
#   1. installs Debian's postgresql-15 and postgresql-server-dev-15 (apt-get)
#      when they are missing;
#   2. installs pgvector: bookworm has no postgresql-15-pgvector, so it is
#      built from trixie's source package (0.8.0) against server-dev-15 with
#      PGXS. The trixie deb-src line is added only for `apt-get source` and
#      removed again; the built files are cached in
#      ~/.cache/airs-e2e/pgvector, so later runs only copy them;
#   3. initdb in a temporary directory, postgres on a free 127.0.0.1 port
#      (trust authentication on loopback only: the cluster lives for this one
#      run and holds nothing else), one database "airs";
#   4. exports AIRS_PG_DSN (and AIRS_PG_BIN, the server's bin directory),
#      runs CMD, then stops the server and removes the directory, whatever
#      CMD's outcome. The exit code is CMD's.
#
# PostgreSQL refuses to run as root: when this script runs as root the
# cluster belongs to the "postgres" system user the Debian package creates
# (runuser), and CMD still runs as root, connecting over TCP. Otherwise it
# runs as the current user.
#
# Durability is PostgreSQL's default (fsync on, synchronous_commit on), so
# figures measured under this script are real commits to the disk.
set -euo pipefail

if [[ $# -eq 0 ]]; then
	echo "usage: scripts/pg.sh CMD [ARGS…] (e.g. scripts/pg.sh go test ./store/pg/)" >&2
	exit 2
fi

PGVER=15
PGBIN=/usr/lib/postgresql/$PGVER/bin
PGCONFIG=$PGBIN/pg_config
PGVECTOR_VERSION=0.8.0
CACHE=${AIRS_E2E_CACHE:-$HOME/.cache/airs-e2e}/pgvector
SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"
APT=($SUDO apt-get -o DPkg::Lock::Timeout=600 -y -q)

log() { echo "pg.sh: $*" >&2; }

need_pkgs=()
[[ -x $PGBIN/initdb ]] || need_pkgs+=(postgresql-$PGVER)
# pg_config and pgxs.mk come with the client package; the server headers
# PGXS builds against do not.
[[ -f /usr/include/postgresql/$PGVER/server/postgres.h ]] || need_pkgs+=(postgresql-server-dev-$PGVER)
if ((${#need_pkgs[@]})); then
	log "installing ${need_pkgs[*]} (apt-get)"
	"${APT[@]}" update >/dev/null
	DEBIAN_FRONTEND=noninteractive "${APT[@]}" install --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

pkglib=$($PGCONFIG --pkglibdir)
sharedir=$($PGCONFIG --sharedir)

# build_pgvector fills $CACHE with vector.so and the extension's SQL files.
build_pgvector() {
	local src=/etc/apt/sources.list.d/airs-trixie-src.sources work
	work=$(mktemp -d)
	chmod 0755 "$work" # apt-get source downloads as _apt when it can
	log "building pgvector $PGVECTOR_VERSION from trixie's source package (once; cached in $CACHE)"
	# The deb-src line is only for this download: it must not outlive it.
	trap "$SUDO rm -f $src; $SUDO apt-get -q update >/dev/null 2>&1 || true; rm -rf $work" RETURN
	$SUDO tee "$src" >/dev/null <<-EOF
		Types: deb-src
		URIs: http://deb.debian.org/debian
		Suites: trixie
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	"${APT[@]}" update >/dev/null
	(cd "$work" && apt-get -q source --download-only "pgvector=$PGVECTOR_VERSION-1" >/dev/null &&
		dpkg-source -x --no-check pgvector_*.dsc pgvector >/dev/null)
	make -s -C "$work/pgvector" USE_PGXS=1 PG_CONFIG=$PGCONFIG -j"$(nproc)" >/dev/null
	local stage=$work/stage
	make -s -C "$work/pgvector" USE_PGXS=1 PG_CONFIG=$PGCONFIG DESTDIR="$stage" install >/dev/null
	mkdir -p "$CACHE.tmp"
	cp "$stage$pkglib/vector.so" "$CACHE.tmp/"
	cp "$stage$sharedir"/extension/vector* "$CACHE.tmp/"
	rm -rf "$CACHE"
	mv "$CACHE.tmp" "$CACHE"
}

if [[ ! -f $pkglib/vector.so || ! -f $sharedir/extension/vector.control ]]; then
	[[ -f $CACHE/vector.so && -f $CACHE/vector.control ]] || build_pgvector
	log "installing pgvector from $CACHE"
	$SUDO install -m 0755 "$CACHE/vector.so" "$pkglib/"
	$SUDO install -m 0644 "$CACHE"/vector.control "$CACHE"/vector--*.sql "$sharedir/extension/"
fi

as_owner() { "$@"; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/airs-pg.XXXXXX")
if [[ $(id -u) -eq 0 ]]; then
	chown postgres: "$dir"
	as_owner() { runuser -u postgres -- "$@"; }
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

cleanup() {
	as_owner "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT

as_owner "$PGBIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale >/dev/null
as_owner "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
	-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200" start >/dev/null ||
	{ cat "$dir/server.log" >&2; exit 1; }
"$PGBIN/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c 'CREATE DATABASE airs' >/dev/null

export AIRS_PG_DSN="postgres://postgres@127.0.0.1:$port/airs?sslmode=disable"
export AIRS_PG_BIN=$PGBIN
log "PostgreSQL $($PGBIN/postgres --version | awk '{print $3}') on 127.0.0.1:$port ($dir), AIRS_PG_DSN=$AIRS_PG_DSN"
set +e
"$@"
rc=$?
set -e
exit $rc
