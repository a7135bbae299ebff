#!/usr/bin/env bash
# Runs every test of Kiosk: unit tests, integration tests over a real loopback demo upstream, real SQLite.
# Installs what the tests need when it is missing, so it works on a fresh machine and in CI.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v swift >/dev/null 2>&1; then
    echo "error: swift is not on PATH (Swift 6.1 or newer is needed)" >&2
    exit 1
fi

# System libraries: SQLite with FTS5 (GRDB links against it) and zlib (compress-nio, the tests' real
# inflater for PNGs).
install_missing() {
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq "$@"; else sudo apt-get update -qq && sudo apt-get install -y -qq "$@"; fi
}
missing=()
[ -e /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
[ -e /usr/include/zlib.h ] || missing+=(zlib1g-dev)
# The system's brotli decoder, which Kiosk loads to show and export brotli bodies decoded (HARExportTests).
[ -n "$(find /usr/lib /lib -name 'libbrotlidec.so.1' -print -quit 2>/dev/null)" ] || missing+=(libbrotli1)
# keytool reads the Java trust store `kiosk proxy env` writes (CLITests).
command -v keytool >/dev/null 2>&1 || missing+=(default-jre-headless)
if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing ${missing[*]}..."
    install_missing "${missing[@]}"
fi

# The web app's scripts are files (Sources/KioskWeb/Resources/*.js, Sources/KioskConsole/Resources/*.js) that
# no compiler reads: a syntax error there would only show in a browser, so node parses them first.
if command -v node >/dev/null 2>&1; then
    find Sources/KioskWeb/Resources Sources/KioskConsole/Resources -name '*.js' -print0 | xargs -0 -n 1 node --check
else
    echo "node is not installed: skipping the syntax check of the web app's scripts" >&2
fi

# Every target declares what it imports of the package (SwiftPM refuses otherwise): the module graph in
# docs/ARCHITECTURE.md is the one the compiler builds.
swift build --build-tests --explicit-target-dependency-import-check error "$@"
# At most 12 tests at once (Swift Testing's limit, experimental in 6.3): with every one of ~770 tests started
# together on 2 cores, loopback exchanges of 400 ms took over 15 s in the first minute and timing tests failed;
# with 12 the run is no slower (43 s against 47 s here) and nothing waits that long.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-12}"
# A test that hangs fails the run here, naming what never finished and where every thread of the test process
# waits, rather than holding CI to its 90-minute limit: the whole suite takes about a minute on 2 cores, so
# 15 minutes allows for a machine several times slower.
log="$(mktemp)"
trap 'rm -f "$log" "$log.started" "$log.ended"' EXIT
swift test --skip-build "$@" > >(tee "$log") 2>&1 &
tests=$!
limit=$((15 * 60))
while kill -0 "$tests" 2>/dev/null && [ "$limit" -gt 0 ]; do sleep 1; limit=$((limit - 1)); done
if kill -0 "$tests" 2>/dev/null; then
    echo "error: the Swift tests did not finish within 15 minutes; started and never finished:" >&2
    sed -n 's/.*Test "\(.*\)" started\./\1/p' "$log" | sort -u > "$log.started"
    sed -n 's/.*Test "\(.*\)" \(with [0-9]* test cases* \)*\(passed\|failed\).*/\1/p' "$log" | sort -u > "$log.ended"
    comm -23 "$log.started" "$log.ended" | sed 's/^/  /' >&2
    for pid in $(pgrep -f 'PackageTests.xctest'); do
        if command -v gdb >/dev/null 2>&1; then
            echo "Threads of the test process $pid:" >&2
            gdb -batch -ex 'thread apply all bt 25' -p "$pid" 2>&1 | grep -E '^(Thread|#)' >&2 || true
        fi
        kill -9 "$pid" 2>/dev/null || true
    done
    kill "$tests" 2>/dev/null || true
    exit 1
fi
status=0
wait "$tests" || status=$?
if [ "$status" -ne 0 ]; then
    # The run's last lines are often all a CI page keeps: what failed is repeated there, with where and why.
    echo "error: the Swift tests failed (exit $status); what failed:" >&2
    grep -A3 -E '^(✘|Fatal error|.*Fatal error:)' "$log" | grep -v '^✘ Test run' | cut -c1-300 | head -60 >&2 || true
    exit "$status"
fi

# The JSON API against its OpenAPI document: schemathesis fuzzes a running `kiosk serve` (installs what it needs).
./scripts/api-fuzz.sh

# The web app in a real browser: headless Chromium against `kiosk serve` (installs what it needs), and the
# tests against real third-party tools in the same run: mitmproxy records Kiosk's traffic as HAR for
# `kiosk har import`, and reads back the HAR that `kiosk har export` writes.
./scripts/browser-tests.sh
