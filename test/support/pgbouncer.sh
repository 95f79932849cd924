#!/usr/bin/env bash
# PgBouncer in front of a test server, for the tests and benchmarks that run Keepsake behind a
# pooler in transaction mode:
#
#   test/support/pgbouncer.sh start --port P --dir D --to PORT [--pool-size N]  # last line: the URL
#   test/support/pgbouncer.sh stop --dir D
#
# It is Debian's `pgbouncer` package (1.18 on bookworm), installed with apt-get when missing (as
# root, as on every machine here and in CI), the way with-chromium.sh installs Chromium. It
# listens on 127.0.0.1:P and hands every database of the server on 127.0.0.1:PORT (a server of
# postgres.sh) out in transaction mode: a server connection belongs to a client for one
# transaction only, so nothing may rely on session state between transactions. D holds its
# configuration, log and pid file. Authentication is trust, as the test servers' own. PgBouncer
# refuses to run as root: as root it runs as the test servers' user, keepsake-pg.
set -euo pipefail

RUN_AS=keepsake-pg

die() {
  echo "pgbouncer.sh: $*" >&2
  exit 2
}

cmd=${1:-}
[ -n "$cmd" ] && shift
port=
dir=
to=
pool=20
while [ $# -gt 0 ]; do
  case "$1" in
    --port) port=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --to) to=$2; shift 2 ;;
    --pool-size) pool=$2; shift 2 ;;
    *) die "unknown argument $1 (see the top of this file)" ;;
  esac
done
case "$cmd" in start | stop) ;; *) die "usage: pgbouncer.sh start|stop --dir D [--port P --to PORT]" ;; esac
[ -n "$dir" ] || die "--dir D is needed"
dir=$(realpath -m "$dir")

root=false
[ "$(id -u)" = 0 ] && root=true
as_owner() {
  if $root; then
    setpriv --reuid="$RUN_AS" --regid="$RUN_AS" --clear-groups -- "$@"
  else
    "$@"
  fi
}

PGBOUNCER=/usr/sbin/pgbouncer

ensure_installed() {
  [ -x "$PGBOUNCER" ] && return 0
  $root || die "pgbouncer is not installed: apt-get install pgbouncer (as root)"
  echo "pgbouncer.sh: installing Debian's pgbouncer" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  # The package's own service is not wanted: the tests start their own instances.
  apt-get install -y -qq --no-install-recommends pgbouncer >/dev/null
  [ -x "$PGBOUNCER" ] || die "apt-get installed no $PGBOUNCER"
}

pidfile() { echo "$dir/pgbouncer.pid"; }

running() {
  local pid
  [ -f "$(pidfile)" ] || return 1
  pid=$(cat "$(pidfile)")
  kill -0 "$pid" 2>/dev/null
}

start() {
  [[ "$port" =~ ^[0-9]+$ ]] || die "--port must be a number"
  [[ "$to" =~ ^[0-9]+$ ]] || die "--to must be the server's port"
  [[ "$pool" =~ ^[0-9]+$ ]] || die "--pool-size must be a number"
  ensure_installed
  if $root; then
    id -u "$RUN_AS" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$RUN_AS"
  fi
  mkdir -p "$dir"
  $root && chown "$RUN_AS:$RUN_AS" "$dir"
  if running; then
    echo "pgbouncer.sh: reusing the pooler running in $dir" >&2
  else
    printf '"postgres" ""\n' >"$dir/userlist.txt"
    # server_reset_query is not used in transaction mode; server_check_query checks a server
    # connection before it is handed out again after a pause.
    cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$to

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
admin_users = postgres
pool_mode = transaction
default_pool_size = $pool
max_client_conn = 1000
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
    $root && chown "$RUN_AS:$RUN_AS" "$dir/userlist.txt" "$dir/pgbouncer.ini"
    as_owner "$PGBOUNCER" -d -q "$dir/pgbouncer.ini" || die "pgbouncer did not start: $(tail -n 5 "$dir/pgbouncer.log" 2>/dev/null)"
    for _ in $(seq 1 100); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.05
    done
  fi
  echo "postgres://postgres@127.0.0.1:$port/postgres"
}

stop() {
  running || return 0
  local pid
  pid=$(cat "$(pidfile)")
  kill -INT "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
  done
  kill -KILL "$pid" 2>/dev/null || true
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
esac
