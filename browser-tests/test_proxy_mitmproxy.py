"""Kiosk behind a real proxy: mitmdump (mitmproxy from PyPI) as HTTP_PROXY, so a developer can watch
Kiosk's traffic in mitmproxy, Charles or Proxyman. Loopback (the demo upstream) is proxied only when
asked with KIOSK_PROXY_LOOPBACK=1, and NO_PROXY wins."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from test_har_mitmproxy import MITMDUMP, free_port, wait_for_port


def run_behind_proxy(kiosk_bin: str, data_dir: Path, har: Path, extra_env: dict[str, str]) -> list[dict]:
    """Runs `kiosk list rickandmorty --refresh` with mitmdump as the proxy; the HAR entries it recorded."""
    port = free_port()
    proxy = subprocess.Popen([str(MITMDUMP), "--listen-host", "127.0.0.1", "--listen-port", str(port),
                              "--set", f"hardump={har}", "-q"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        wait_for_port(port, 30)
        env = {key: value for key, value in os.environ.items()
               if key.lower() not in ("http_proxy", "https_proxy", "no_proxy", "kiosk_proxy_loopback")}
        env.update({"HTTP_PROXY": f"http://127.0.0.1:{port}", "XDG_CONFIG_HOME": str(data_dir / "config")})
        env.update(extra_env)
        result = subprocess.run([kiosk_bin, "list", "rickandmorty", "--refresh", "--data-dir", str(data_dir)],
                                capture_output=True, text=True, timeout=60, env=env)
        assert result.returncode == 0, result.stderr
        assert "Rick Sanchez" in result.stdout
    finally:
        proxy.send_signal(signal.SIGINT)
        _, stderr = proxy.communicate(timeout=30)
    if not har.exists():
        return []
    return json.loads(har.read_text())["log"]["entries"]


@pytest.mark.skipif(not MITMDUMP.exists(), reason="mitmproxy is not installed in the test venv")
def test_kiosk_traffic_goes_through_http_proxy_when_loopback_is_asked_for(kiosk_bin, tmp_path):
    entries = run_behind_proxy(kiosk_bin, tmp_path / "data", tmp_path / "seen.har", {"KIOSK_PROXY_LOOPBACK": "1"})
    urls = [entry["request"]["url"] for entry in entries]
    assert any("/api/character?page=1" in url for url in urls), urls
    # The request as the proxy saw it names the canonical demo origin, never a secret.
    assert all("demo.invalid" in url or "/api/" in url for url in urls), urls


@pytest.mark.skipif(not MITMDUMP.exists(), reason="mitmproxy is not installed in the test venv")
def test_loopback_is_not_proxied_unless_asked_and_no_proxy_wins(kiosk_bin, tmp_path):
    assert run_behind_proxy(kiosk_bin, tmp_path / "a", tmp_path / "a.har", {}) == []
    assert run_behind_proxy(kiosk_bin, tmp_path / "b", tmp_path / "b.har",
                            {"KIOSK_PROXY_LOOPBACK": "1", "NO_PROXY": "demo.invalid"}) == []
