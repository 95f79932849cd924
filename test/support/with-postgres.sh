#!/usr/bin/env bash
# Runs a command with TEST_DATABASE_URL pointing at a real PostgreSQL 15 server with pgvector:
#   test/support/with-postgres.sh npm test
# Installs what the server needs from Debian's packages when missing (root, as on every machine
# here and in CI), then starts it with ../shared/postgres/start.sh, which builds pgvector from the
# release kept there and reuses a server already running on the port (TEST_PG_PORT, default 5433).
set -euo pipefail
cd "$(dirname "$0")/../.."
start=../shared/postgres/start.sh
if [ ! -x "$start" ]; then
  echo "with-postgres: $start not found (the shared folder beside this checkout)" >&2
  exit 2
fi
need=()
[ -x /usr/lib/postgresql/15/bin/postgres ] || need+=(postgresql-15)
# start.sh skips its own install when the server is there, but building pgvector needs headers.
[ -f /usr/include/postgresql/15/server/postgres.h ] || need+=(postgresql-server-dev-15)
command -v make >/dev/null || need+=(make)
command -v gcc >/dev/null || need+=(gcc)
if [ ${#need[@]} -gt 0 ]; then
  echo "with-postgres: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${need[@]}" >/dev/null
fi
url=$("$start" --port "${TEST_PG_PORT:-5433}" | tail -n 1)
echo "with-postgres: TEST_DATABASE_URL=$url" >&2
TEST_DATABASE_URL=$url exec "$@"
