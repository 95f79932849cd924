#!/usr/bin/env bash
# Runs a command with Debian's Chromium installed, for the console's browser tests:
#   test/support/with-chromium.sh npm run test:all
# Playwright drives /usr/bin/chromium (playwright-core, CHROMIUM_PATH to change it); no browser is
# ever downloaded. Installs the package when missing (root, as on every machine here and in CI).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  echo "with-chromium: installing chromium" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq chromium >/dev/null
fi
exec "$@"
