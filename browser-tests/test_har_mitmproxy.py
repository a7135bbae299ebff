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


def start_mitmdump(har: Path) -> tuple[subprocess.Popen, int]:
    """mitmdump as a plain forward proxy on a free loopback port, writing HAR to `har` when it exits."""
    port = free_port()
    proxy = subprocess.Popen([str(MITMDUMP), "--listen-host", "127.0.0.1", "--listen-port", str(port),
                              "--set", f"hardump={har}", "-q"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    wait_for_port(port, 30)
    return proxy, port


def record_through_mitmdump(kiosk_bin: str, data_dir: Path, har: Path, commands: list[list[str]],
                            extra_env: dict[str, str]) -> list[dict]:
    """Runs kiosk `commands` with mitmdump as HTTP_PROXY (plus `extra_env`); the HAR entries it recorded."""
    proxy, port = start_mitmdump(har)
    try:
        env = {key: value for key, value in os.environ.items()
               if key.lower() not in ("http_proxy", "https_proxy", "no_proxy", "kiosk_proxy_loopback")}
        env.update({"HTTP_PROXY": f"http://127.0.0.1:{port}", "XDG_CONFIG_HOME": str(data_dir / "config")})
        env.update(extra_env)
        for command in commands:
            result = subprocess.run([kiosk_bin, *command, "--data-dir", str(data_dir)],
                                    capture_output=True, text=True, timeout=60, env=env)
            assert result.returncode == 0, result.stderr
    finally:
        proxy.send_signal(signal.SIGINT)
        proxy.communicate(timeout=30)
    return json.loads(har.read_text())["log"]["entries"] if har.exists() else []


@pytest.mark.skipif(not MITMDUMP.exists(), reason="mitmproxy is not installed in the test venv")
def test_a_har_written_by_mitmproxy_imports_and_replays_offline(fresh_server, kiosk_bin, tmp_path):
    server = fresh_server
    har = tmp_path / "mitm.har"
    # Kiosk's own traffic, watched through mitmdump as its proxy (loopback proxied on request).
    entries = record_through_mitmdump(kiosk_bin, tmp_path / "recording", har,
                                      [["list", "rickandmorty", "--refresh"], ["list", "rickandmorty", "--page", "2"],
                                       ["list", "dogs", "--refresh"]], {"KIOSK_PROXY_LOOPBACK": "1"})
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
