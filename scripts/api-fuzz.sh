#!/usr/bin/env bash
# Fuzzes Kiosk's JSON API with schemathesis against its own OpenAPI document (/api/openapi.json): a real
# `kiosk serve` on its embedded demo upstream, port 0, in a temporary data directory, on loopback only.
# Fails on any 5xx, any status or content type the document does not list, any body that does not
# match its response schema, and any documented header (Cache-Status) missing or not matching its
# schema. Bounded: KIOSK_FUZZ_EXAMPLES test cases per operation and phase (default
# 500, about 15 s on 2 cores), and the run fails if it takes over KIOSK_FUZZ_SECONDS (default 180). The
# seed is fixed (KIOSK_FUZZ_SEED, default 1) so a failure reproduces; set another to explore.
# Installs schemathesis into a Python venv at .venv-fuzz/ when missing. Arguments are passed to `st run`.
# KIOSK_BIN names the kiosk executable (default: built from the current sources).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONDONTWRITEBYTECODE=1

venv=.venv-fuzz
if ! "$venv/bin/python" -c "import sys" >/dev/null 2>&1; then
    echo "Creating $venv..."
    rm -rf "$venv"
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
        if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq python3-venv
        else sudo apt-get update -qq && sudo apt-get install -y -qq python3-venv; fi
        rm -rf "$venv"
        python3 -m venv "$venv"
    fi
fi
# 4.x: the CLI and checks below are schemathesis 4's.
if ! "$venv/bin/st" --version 2>/dev/null | grep -q "version 4\."; then
    echo "Installing schemathesis into $venv..."
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "schemathesis>=4.1,<5"
fi

if [ -z "${KIOSK_BIN:-}" ]; then
    swift build --product kiosk
    KIOSK_BIN="$(swift build --show-bin-path)/kiosk"
fi

data_dir="$(mktemp -d "${TMPDIR:-/tmp}/kiosk-fuzz.XXXXXX")"
out="$data_dir/serve.out"
server=""
cleanup() {
    if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
        kill -INT "$server" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$server" 2>/dev/null || true
    fi
    rm -rf "$data_dir"
}
trap cleanup EXIT

NO_COLOR=1 "$KIOSK_BIN" serve --host 127.0.0.1 --port 0 --data-dir "$data_dir" >"$out" 2>"$data_dir/serve.err" </dev/null &
server=$!
base=""
for _ in $(seq 300); do
    base="$(sed -n 's#^Kiosk on \(http://[^ ]*\)/ .*#\1#p' "$out" | head -n 1)"
    [ -n "$base" ] && break
    if ! kill -0 "$server" 2>/dev/null; then
        echo "error: kiosk serve exited before listening:" >&2
        cat "$out" "$data_dir/serve.err" >&2
        exit 1
    fi
    sleep 0.1
done
if [ -z "$base" ]; then
    echo "error: kiosk serve did not report its address within 30 s" >&2
    exit 1
fi
echo "Fuzzing the JSON API of $base"

started=$(date +%s)
status=0
# Not `--max-time`: in schemathesis 4 it makes fuzzing repeat until the budget is spent; `timeout` bounds it instead.
timeout --signal=INT "${KIOSK_FUZZ_SECONDS:-180}" "$venv/bin/st" run "$base/api/openapi.json" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance \
    --max-examples "${KIOSK_FUZZ_EXAMPLES:-500}" \
    --workers 2 \
    --request-timeout 20 \
    --seed "${KIOSK_FUZZ_SEED:-1}" \
    "$@" || status=$?
echo "api-fuzz: $(( $(date +%s) - started )) s, exit $status"
if [ "$status" != 0 ]; then
    echo "--- kiosk serve stderr (last 40 lines) ---" >&2
    tail -n 40 "$data_dir/serve.err" >&2 || true
fi
exit "$status"
