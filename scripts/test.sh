#!/usr/bin/env bash
# Runs every test of Kiosk: unit tests, integration tests over a real loopback demo upstream, real SQLite.
# Installs what the tests need when it is missing, so it works on a fresh machine and in CI.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v swift >/dev/null 2>&1; then
    echo "error: swift is not on PATH (Swift 6.1 or newer is needed)" >&2
    exit 1
fi

# SQLite with FTS5 comes from the system library GRDB links against.
if ! ls /usr/include/sqlite3.h >/dev/null 2>&1; then
    echo "Installing libsqlite3-dev..."
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libsqlite3-dev; else sudo apt-get update -qq && sudo apt-get install -y -qq libsqlite3-dev; fi
fi

# The web app's scripts are files (Sources/KioskWeb/Resources/*.js) that no compiler reads: a syntax error
# there would only show in a browser, so node parses them first.
if command -v node >/dev/null 2>&1; then
    find Sources/KioskWeb/Resources -name '*.js' -print0 | xargs -0 -n 1 node --check
else
    echo "node is not installed: skipping the syntax check of Sources/KioskWeb/Resources/*.js" >&2
fi

swift build --build-tests "$@"
swift test --skip-build "$@"

# The JSON API against its OpenAPI document: schemathesis fuzzes a running `kiosk serve` (installs what it needs).
./scripts/api-fuzz.sh

# The web app in a real browser: headless Chromium against `kiosk serve` (installs what it needs).
./scripts/browser-tests.sh
