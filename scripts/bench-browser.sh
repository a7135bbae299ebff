#!/usr/bin/env bash
# Kiosk's browser benchmark: the web app on a phone-sized headless Chromium against a release `kiosk serve`,
# with figures printed as medians over repeated runs (see scripts/bench-browser.py). Not part of the tests:
# speed targets are checked by reading these figures, never by timed assertions.
# Usage: scripts/bench-browser.sh [--runs N]
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${KIOSK_BIN:-}" ]; then
    swift build -c release --product kiosk
    KIOSK_BIN="$(swift build -c release --show-bin-path)/kiosk"
fi
source scripts/browser-env.sh
exec "$venv/bin/python" scripts/bench-browser.py "$@"
