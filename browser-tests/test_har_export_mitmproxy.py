"""Kiosk's HAR export read by a real third-party tool: after a real `kiosk serve` run against the demo
upstream (one request failing while it is offline), `kiosk har export` writes an archive that mitmproxy
(mitmdump, from PyPI) reads back whole, entry by entry, and that `kiosk har import` turns back into rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

MITMDUMP = Path(sys.executable).with_name("mitmdump")

# A mitmproxy addon: every flow mitmdump loads from the archive, written as JSON when it is done.
FLOW_LIST_ADDON = """
import json, os

flows = []

def response(flow):
    flows.append({"method": flow.request.method, "url": flow.request.url, "status": flow.response.status_code,
                  "size": len(flow.response.content or b"")})

def done():
    with open(os.environ["KIOSK_FLOW_LIST"], "w") as out:
        json.dump(flows, out)
"""


def read_with_mitmdump(har: Path, folder: Path) -> list[dict]:
    """The flows `mitmdump -n -r har` loads (no proxy started), in the file's order."""
    addon = folder / "flow_list.py"
    addon.write_text(FLOW_LIST_ADDON)
    listing = folder / "flows.json"
    result = subprocess.run([str(MITMDUMP), "-n", "-r", str(har), "-s", str(addon), "--set", "flow_detail=1"],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                            env={**os.environ, "KIOSK_FLOW_LIST": str(listing)})
    assert result.returncode == 0, f"mitmdump failed: {result.stdout}\n{result.stderr}"
    assert "Unable to read HAR file" not in result.stdout + result.stderr, result.stdout + result.stderr
    return json.loads(listing.read_text())


def test_mitmproxy_reads_every_entry_of_a_kiosk_export_and_kiosk_imports_it_back(fresh_server, kiosk_bin, tmp_path):
    assert MITMDUMP.exists(), f"mitmdump is not in the test venv ({MITMDUMP}); scripts/browser-env.sh installs mitmproxy"
    server = fresh_server
    # Given a real session: every catalog from the demo upstream, then a page asked while it is offline
    for path in ("/rickandmorty?refresh=1", "/dogs?refresh=1", "/marvel?refresh=1", "/nyt?refresh=1"):
        with urllib.request.urlopen(server.url(path), timeout=30) as response:
            assert response.status == 200, path
    server.set_offline(True)
    try:
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(server.url("/rickandmorty?page=9&refresh=1"), timeout=30)
    finally:
        server.set_offline(False)
    # (The console's JSON writes the queued records first, so the export below sees every one.)
    records = server.api("/debug/api/requests")
    failed = sum(1 for record in records if record.get("status") is None)
    assert failed >= 1 and len(records) > failed

    # When the log is exported with the command line
    har = tmp_path / "kiosk.har"
    result = subprocess.run([kiosk_bin, "har", "export", str(har), "--data-dir", server.data_dir],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    log = json.loads(har.read_text())["log"]
    entries = log["entries"]
    assert len(entries) == len(records)
    # Then it has a page, a response for every entry (a failure: status 0 and _error), and times that add up
    assert len(log["pages"]) == 1 and all(entry["pageref"] == log["pages"][0]["id"] for entry in entries)
    for entry in entries:
        assert (entry["response"]["status"] == 0) == ("_error" in entry["response"])
        measured = sum(value for value in entry["timings"].values() if value >= 0)
        assert abs(entry["time"] - measured) < 1e-6, entry["timings"]

    # And mitmdump reads it back: every entry a flow, with its method, URL, status and body
    flows = read_with_mitmdump(har, tmp_path)
    assert [(flow["method"], flow["url"], flow["status"]) for flow in flows] == \
        [(entry["request"]["method"], entry["request"]["url"], entry["response"]["status"]) for entry in entries]
    for flow, entry in zip(flows, entries):
        if entry["response"]["status"] == 200:
            assert flow["size"] == entry["response"]["content"]["size"] > 0, entry["request"]["url"]

    # And Kiosk imports it back: a rule per request answered, the failure skipped and counted
    imported = subprocess.run([kiosk_bin, "har", "import", str(har), "--json", "--data-dir", str(tmp_path / "replay")],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")})
    assert imported.returncode == 0, imported.stderr
    summary = json.loads(imported.stdout)
    answered = {(entry["request"]["method"], entry["request"]["url"]) for entry in entries if entry["response"]["status"] > 0}
    assert summary["entries"] == len(entries) and summary["imported"] == len(answered)
    assert summary["skipped"].get("failed") == failed
    assert summary["imported"] + sum(summary["skipped"].values()) == len(entries)
