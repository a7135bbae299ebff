#!/usr/bin/env bash
# Sourced by browser-tests.sh and bench-browser.sh: installs what a real-browser run needs when it is missing
# (Debian's chromium and chromium-driver, emoji fonts; a Python venv at .venv-browser/ with pytest, selenium,
# mitmproxy and axe-core), builds kiosk unless KIOSK_BIN names one, and leaves `venv` and KIOSK_BIN set.
export DEBIAN_FRONTEND=noninteractive PYTHONDONTWRITEBYTECODE=1

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

apt_updated=0
apt_install() {
    if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
    as_root apt-get install -y -qq "$@"
}

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
# Tab icons and Rick and Morty's status signs are emoji; without a font screenshots show empty boxes.
dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || missing+=(fonts-noto-color-emoji)
# certutil puts Kiosk's proxy CA in a test browser's NSS database (test_proxy_clients.py), as a user trusts it.
command -v certutil >/dev/null 2>&1 || missing+=(libnss3-tools)
# A Java app reads HTTPS through the proxy with only `kiosk proxy env`'s block (test_proxy_clients.py); keytool reads
# the trust store it writes (CLITests).
command -v java >/dev/null 2>&1 && command -v keytool >/dev/null 2>&1 || missing+=(default-jre-headless)
# The LAN test (test_lan.py) puts `kiosk serve --lan` in a network namespace joined by a veth pair; it needs
# root and iproute2, and is skipped (saying why) without them. openssl computes the certificate's SPKI pin.
if [ "$(id -u)" = 0 ]; then
    command -v ip >/dev/null 2>&1 || missing+=(iproute2)
    command -v openssl >/dev/null 2>&1 || missing+=(openssl)
fi
if [ "${#missing[@]}" -gt 0 ]; then
    echo "Installing ${missing[*]}..."
    apt_install "${missing[@]}"
fi

venv=.venv-browser
if ! "$venv/bin/python" -c "import sys" >/dev/null 2>&1; then
    echo "Creating $venv..."
    rm -rf "$venv"
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
        apt_install python3-venv
        rm -rf "$venv"
        python3 -m venv "$venv"
    fi
fi
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
if ! "$venv/bin/python" -c "import pytest, selenium" >/dev/null 2>&1; then
    echo "Installing pytest and selenium into $venv..."
    "${pip[@]}" pytest "selenium<4.50"
fi
# mitmproxy: a real third-party tool writing the HAR that the import test replays, and reading the HAR that
# `kiosk har export` writes (test_har_export_mitmproxy.py).
if ! "$venv/bin/python" -c "import mitmproxy" >/dev/null 2>&1; then
    echo "Installing mitmproxy into $venv..."
    "${pip[@]}" "mitmproxy>=11,<13"
fi
# axe-core's axe.min.js: axe-selenium-python ships axe-core 3.1.1, too old to trust (it flags
# autocomplete="off" on a search field); axe-playwright-python ships a current 4.x. Only its script
# file is used, so it is installed without Playwright.
if ! "$venv/bin/python" -c "import importlib.util as u, sys; sys.exit(u.find_spec('axe_playwright_python') is None)" >/dev/null 2>&1; then
    echo "Installing axe-core (axe-playwright-python, without Playwright) into $venv..."
    "${pip[@]}" --no-deps axe-playwright-python
fi

# The kiosk binary, as built from the current sources (a no-op after test.sh's build), unless KIOSK_BIN
# names one.
if [ -z "${KIOSK_BIN:-}" ]; then
    swift build --product kiosk
    KIOSK_BIN="$(swift build --show-bin-path)/kiosk"
fi
export KIOSK_BIN
