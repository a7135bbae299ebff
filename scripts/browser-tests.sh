#!/usr/bin/env bash
# Runs Kiosk's real-browser tests (browser-tests/): headless Chromium through chromedriver against
# `kiosk serve` on its embedded demo upstream, with axe-core accessibility checks.
# Installs what is missing (Debian's chromium and chromium-driver; a Python venv at .venv-browser/ with
# pytest, selenium and axe-core), so it works on a fresh machine, in CI and without a terminal.
# Arguments are passed to pytest. Screenshots go to artifacts/screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."

# What a real-browser run needs (installed when missing) and the kiosk binary.
source scripts/browser-env.sh

mkdir -p artifacts/screenshots
# -rsxX: the reasons of skipped tests are printed too (the LAN test says why it could not run).
exec "$venv/bin/python" -m pytest -q -rsxX -p no:cacheprovider browser-tests "$@"
