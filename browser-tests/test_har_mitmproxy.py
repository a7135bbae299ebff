"""A capture made by a real third-party tool: mitmproxy (mitmdump, from PyPI) records traffic to the demo
upstream as HAR; `kiosk har import` turns it into mock rules, and a running `kiosk serve` replays it
with the upstream offline."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

MITMDUMP = Path(sys.executable).with_name("mitmdump")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"mitmdump did not listen on {port} within {timeout} s")


@pytest.mark.skipif(not MITMDUMP.exists(), reason="mitmproxy is not installed in the test venv")
def test_a_har_written_by_mitmproxy_imports_and_replays_offline(fresh_server, kiosk_bin, tmp_path):
    server = fresh_server
    har = tmp_path / "mitm.har"
    port = free_port()
    # mitmdump as a plain forward proxy in front of the demo upstream, writing HAR when it exits.
    proxy = subprocess.Popen([str(MITMDUMP), "--listen-host", "127.0.0.1", "--listen-port", str(port),
                              "--set", f"hardump={har}", "-q"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        wait_for_port(port, 30)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{port}"}))
        for path in ("/api/character?page=1", "/api/character?page=2", "/dogs.json"):
            with opener.open(server.upstream + path, timeout=10) as response:
                assert response.status == 200
    finally:
        proxy.send_signal(signal.SIGINT)
        _, stderr = proxy.communicate(timeout=30)
    assert har.exists(), f"mitmdump wrote no HAR: {stderr.decode(errors='replace')[-2000:]}"
    entries = json.loads(har.read_text())["log"]["entries"]
    assert len(entries) == 3

    # Imported while the server runs (it reads the rules file again when it changes).
    result = subprocess.run([kiosk_bin, "har", "import", str(har), "--data-dir", server.data_dir],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Imported 3 mock rules" in result.stdout

    server.set_offline(True)
    try:
        for path, expected in (("/rickandmorty?refresh=1", "Rick Sanchez"), ("/rickandmorty?page=2&refresh=1", "Space Morty"),
                               ("/dogs?refresh=1", "Rex")):
            with urllib.request.urlopen(server.url(path), timeout=20) as response:
                body = response.read().decode()
            assert expected in body, f"{path} did not replay the recorded page"
            assert "offline-banner" not in body, f"{path} was not answered by the imported rules"
        with urllib.request.urlopen(server.url("/debug/api/requests?decision=mocked"), timeout=10) as response:
            mocked = json.loads(response.read())
        assert len(mocked) >= 3
        # A page mitmproxy never saw is still offline: nothing stored, so a 503 page.
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(server.url("/rickandmorty?page=7&refresh=1"), timeout=20)
        assert refused.value.code == 503
    finally:
        server.set_offline(False)

    # And a malformed archive is refused with its reason and imports nothing.
    broken = tmp_path / "broken.har"
    broken.write_text('{"log": {"entries": "nope"}}')
    result = subprocess.run([kiosk_bin, "har", "import", str(broken), "--data-dir", server.data_dir],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Nothing was imported" in result.stderr
    listed = subprocess.run([kiosk_bin, "mock", "list", "--json", "--data-dir", server.data_dir],
                            capture_output=True, text=True, timeout=60)
    assert len(json.loads(listed.stdout)) == 3
