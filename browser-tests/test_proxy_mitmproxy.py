"""Kiosk behind a real proxy: mitmdump (mitmproxy from PyPI) as HTTP_PROXY, so a developer can watch
Kiosk's traffic in mitmproxy, Charles or Proxyman. Loopback (the demo upstream) is proxied only when
asked with KIOSK_PROXY_LOOPBACK=1, and NO_PROXY wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_har_mitmproxy import MITMDUMP, record_through_mitmdump


def run_behind_proxy(kiosk_bin: str, data_dir: Path, har: Path, extra_env: dict[str, str]) -> list[dict]:
    """`kiosk list rickandmorty --refresh` with mitmdump as the proxy; the HAR entries it recorded."""
    return record_through_mitmdump(kiosk_bin, data_dir, har, [["list", "rickandmorty", "--refresh"]], extra_env)


@pytest.mark.skipif(not MITMDUMP.exists(), reason="mitmproxy is not installed in the test venv")
def test_kiosk_traffic_goes_through_http_proxy_when_loopback_is_asked_for(kiosk_bin, tmp_path):
    entries = run_behind_proxy(kiosk_bin, tmp_path / "data", tmp_path / "seen.har", {"KIOSK_PROXY_LOOPBACK": "1"})
    urls = [entry["request"]["url"] for entry in entries]
    assert any("/api/character?page=1" in url for url in urls), urls
    # The request as the proxy saw it names the canonical demo origin, never a secret.
    assert all(url.startswith("http://demo.invalid/") for url in urls), urls


@pytest.mark.skipif(not MITMDUMP.exists(), reason="mitmproxy is not installed in the test venv")
def test_loopback_is_not_proxied_unless_asked_and_no_proxy_wins(kiosk_bin, tmp_path):
    assert run_behind_proxy(kiosk_bin, tmp_path / "a", tmp_path / "a.har", {}) == []
    assert run_behind_proxy(kiosk_bin, tmp_path / "b", tmp_path / "b.har",
                            {"KIOSK_PROXY_LOOPBACK": "1", "NO_PROXY": "demo.invalid"}) == []
