"""`kiosk serve --lan` seen from another machine, for real: the server runs in its own network namespace,
joined to this one by a veth pair, so the browser (headless Chromium here) reaches it over a network link,
from an address that is not loopback. Chromium trusts the self-signed certificate by its public key
(--ignore-certificate-errors-spki-list), pairs through the page, and is then a secure context (service
workers available). `kiosk devices revoke`, run while `serve` runs, stops the paired browser at once.

Needs root and iproute2 (scripts/browser-tests.sh installs it); without them the test is skipped, saying why.
The Swift tests cover pairing with an injected remote peer either way (Tests/KioskWebTests/PairingTests.swift).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import queue
import re
import shutil
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from conftest import (PHONE, ROOT, KioskServer, axe_serious_violations, new_driver, page_ready, rows, screenshot,
                      severe_console_errors, wait_for)

NAMESPACE = "kiosk-lan-test"
HOST_LINK, SERVER_LINK = "kiosk-lan-h", "kiosk-lan-s"
HOST_V4, SERVER_V4 = "10.231.7.1", "10.231.7.2"
HOST_V6, SERVER_V6 = "fd7a:4b1e:7::1", "fd7a:4b1e:7::2"
STARTUP_TIMEOUT = 60


def _run(*command: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=30, check=check)


def _cleanup_network() -> None:
    # Deleting one end of a veth pair deletes both; each step may have nothing to delete.
    _run("ip", "link", "del", HOST_LINK, check=False)
    _run("ip", "netns", "del", NAMESPACE, check=False)


def _wait_until_settled(timeout: float = 10) -> None:
    """Returns once both ends of the link are up and no address is still tentative, so that no address or link
    change reaches the browser (which would fail its loads with ERR_NETWORK_CHANGED) after it starts."""
    deadline = time.monotonic() + timeout
    while True:
        here = _run("ip", "-o", "addr", "show", "dev", HOST_LINK).stdout
        there = _run("ip", "netns", "exec", NAMESPACE, "ip", "-o", "addr", "show", "dev", SERVER_LINK).stdout
        links = _run("ip", "-o", "link", "show", "dev", HOST_LINK).stdout
        if "tentative" not in here + there and "LOWER_UP" in links and "state UP" in links:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the test network did not settle in {timeout} s:\n{links}{here}{there}")
        time.sleep(0.1)


@pytest.fixture
def network():
    """A namespace holding the server's end of a veth pair (10.231.7.2, fd7a:4b1e:7::2) and its own loopback;
    this namespace keeps the other end (10.231.7.1, fd7a:4b1e:7::1). Skips, saying why, where that cannot be made."""
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (ip netns add); the LAN test runs in CI, which is root")
    if not shutil.which("ip"):
        pytest.skip("iproute2's `ip` is not installed (scripts/browser-tests.sh installs it: apt-get install iproute2)")
    _cleanup_network()  # what an interrupted earlier run may have left
    steps = [
        ("ip", "netns", "add", NAMESPACE),
        ("ip", "link", "add", HOST_LINK, "type", "veth", "peer", "name", SERVER_LINK),
        ("ip", "link", "set", SERVER_LINK, "netns", NAMESPACE),
        # No IPv6 link-local addresses: each would finish duplicate address detection a second or two after the
        # link comes up, and Chromium, seeing an address appear, fails the loads under way with
        # ERR_NETWORK_CHANGED (seen in CI). The test's own addresses are added with nodad.
        ("ip", "link", "set", HOST_LINK, "addrgenmode", "none"),
        ("ip", "netns", "exec", NAMESPACE, "ip", "link", "set", SERVER_LINK, "addrgenmode", "none"),
        ("ip", "addr", "add", f"{HOST_V4}/24", "dev", HOST_LINK),
        ("ip", "-6", "addr", "add", f"{HOST_V6}/64", "dev", HOST_LINK, "nodad"),
        ("ip", "link", "set", HOST_LINK, "up"),
        ("ip", "netns", "exec", NAMESPACE, "ip", "addr", "add", f"{SERVER_V4}/24", "dev", SERVER_LINK),
        ("ip", "netns", "exec", NAMESPACE, "ip", "-6", "addr", "add", f"{SERVER_V6}/64", "dev", SERVER_LINK, "nodad"),
        ("ip", "netns", "exec", NAMESPACE, "ip", "link", "set", SERVER_LINK, "up"),
        # The demo upstream listens on the namespace's own loopback.
        ("ip", "netns", "exec", NAMESPACE, "ip", "link", "set", "lo", "up"),
    ]
    try:
        for step in steps:
            result = _run(*step, check=False)
            if result.returncode != 0:
                pytest.skip(f"cannot make the test network: `{' '.join(step)}` failed: {result.stderr.strip()}")
        _wait_until_settled()
        yield
    finally:
        _cleanup_network()


class LanServer(KioskServer):
    """`kiosk serve --lan --port 0` inside the namespace, with what it printed: the URLs, the certificate's
    fingerprint and how to get a pairing code (its output is a pipe, so it prints no code: logs would keep it),
    and the code `kiosk devices pair` then showed (reading its output and stopping it as `KioskServer` does)."""

    _LOCAL = re.compile(r"Kiosk on https://localhost:(\d+)/")
    _URL = re.compile(r"^\s+(https://\S+)$")
    _FINGERPRINT = re.compile(r"Certificate SHA-256 fingerprint: ([0-9A-F:]{95})")
    _CODE = re.compile(r"Pairing code: (\d{4}-\d{4})")
    _PAIRING = re.compile(r"^Pairing: run `kiosk devices pair --data-dir (\S+)` for a code")

    def __init__(self, binary: str, data_dir: Path):
        super().__init__(binary, str(data_dir))
        self.port = 0
        self.urls: list[str] = []
        self.fingerprint = self.code = ""

    @property
    def directory(self) -> Path:
        return Path(self.data_dir)

    def start(self) -> "LanServer":
        self.directory.mkdir(parents=True, exist_ok=True)
        self._log = open(self.directory / "serve-stderr.log", "ab")
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", NAMESPACE, self.binary, "serve", "--lan", "--port", "0", "--data-dir", self.data_dir],
            stdout=subprocess.PIPE, stderr=self._log, stdin=subprocess.DEVNULL, text=True, bufsize=1,
            env={**os.environ, "NO_COLOR": "1"})
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not self.code:
            try:
                line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = ""
            if line is None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"kiosk serve --lan did not print its pairing code; stdout: {self.output!r}; "
                                   f"stderr: {self._stderr_tail()}")
            if match := self._LOCAL.search(line):
                self.port = int(match.group(1))
            elif match := self._URL.match(line.rstrip("\n")):
                self.urls.append(match.group(1))
            elif match := self._FINGERPRINT.search(line):
                self.fingerprint = match.group(1)
            elif match := self._PAIRING.search(line):
                assert match.group(1) == self.data_dir, line
                shown = _run(self.binary, "devices", "pair", "--data-dir", self.data_dir).stdout
                self.code = self._CODE.search(shown).group(1)
        return self

    def url(self, path: str) -> str:
        return f"https://{SERVER_V4}:{self.port}{path}"


@pytest.fixture
def lan_server(network, kiosk_bin, tmp_path):
    server = LanServer(kiosk_bin, tmp_path / "data").start()
    yield server
    server.stop()


def _insecure() -> ssl.SSLContext:
    # The test checks the certificate by its fingerprint, as a person would, not by a chain.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _get(url: str, accept: str = "application/json", host: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Accept": accept, **({"Host": host} if host else {})})
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=_insecure()), _NoRedirect)
    try:
        with opener.open(request, timeout=20) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _served_certificate(host: str, port: int) -> bytes:
    """The DER certificate the server presents."""
    pem = ssl.get_server_certificate((host, port), timeout=20)
    return ssl.PEM_cert_to_DER_cert(pem)


def _spki_pin(certificate_der: bytes) -> str:
    """base64 SHA-256 of the certificate's SubjectPublicKeyInfo, what Chromium's SPKI list takes (via openssl)."""
    pem = ssl.DER_cert_to_PEM_cert(certificate_der)
    public = subprocess.run(["openssl", "x509", "-pubkey", "-noout"], input=pem.encode(), capture_output=True, check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=public, capture_output=True, check=True).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def test_a_phone_on_the_network_pairs_over_https_and_is_stopped_by_a_revoke(lan_server, kiosk_bin):
    server = lan_server
    # serve printed one URL per address of its machine (the namespace: the veth's, IPv4 and IPv6), the
    # certificate's fingerprint and a pairing code; the key is its owner's only.
    assert set(server.urls) == {f"https://{SERVER_V4}:{server.port}/", f"https://[{SERVER_V6}]:{server.port}/"}, server.output
    assert (server.directory / "lan-key.pem").stat().st_mode & 0o777 == 0o600
    served = _served_certificate(SERVER_V4, server.port)
    assert server.fingerprint == ":".join(f"{byte:02X}" for byte in hashlib.sha256(served).digest())

    # A page whose DNS name was made to point at the server is refused before anything runs, even paired...
    status, body = _get(f"https://{SERVER_V4}:{server.port}/api/favorites", host="rebound.example")
    assert status == 421 and b"rebound.example" in body, (status, body[:300])
    # ...and another machine that has not paired gets a 401 from the API, over either address family...
    for host in (SERVER_V4, f"[{SERVER_V6}]"):
        status, body = _get(f"https://{host}:{server.port}/api/favorites")
        assert status == 401, (host, status, body[:200])
        assert "pair" in json.loads(body)["error"]
    # ...while the machine itself (its loopback) is served as before.
    loopback = _run("ip", "netns", "exec", NAMESPACE, "python3", "-c",
                    "import ssl, urllib.request; c = ssl._create_unverified_context(); "
                    f"print(urllib.request.urlopen('https://127.0.0.1:{server.port}/api/favorites', context=c).status)")
    assert loopback.stdout.strip() == "200", loopback.stderr

    driver = new_driver(PHONE, arguments=(f"--ignore-certificate-errors-spki-list={_spki_pin(served)}",))
    try:
        # A phone opening a list is sent to the pairing page, which is clean for axe-core.
        driver.get(server.url("/rickandmorty"))
        page_ready(driver)
        assert driver.current_url == server.url("/pair?next=%2Frickandmorty"), driver.current_url
        assert driver.find_element(By.CSS_SELECTOR, "main#main").get_attribute("data-view") == "pair"
        shot = screenshot(driver, "pairing-phone", PHONE)
        screens = ROOT / "artifacts" / "screens"
        screens.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, screens / "pairing-phone.png")
        serious = axe_serious_violations(driver)
        assert not serious, "accessibility violations on /pair:\n" + json.dumps(serious, indent=1)
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        # Everything the page loads (styles, script, manifest, icons) is served unpaired: no failed load.
        errors = severe_console_errors(driver)
        assert not errors, errors

        # A wrong code is refused on the page, saying so.
        code_field = driver.find_element(By.NAME, "code")
        code_field.send_keys("0000-0000")
        code_field.submit()
        alerts = wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "[role=alert]"), 20, "no refusal shown")
        assert "not the pairing code" in alerts[0].text
        assert "4 more tries this minute" in alerts[0].text

        # The right code pairs the phone and goes on to the list, in a secure context with service workers.
        code_field = driver.find_element(By.NAME, "code")
        code_field.send_keys(server.code)
        code_field.submit()
        wait_for(driver, lambda d: d.current_url == server.url("/rickandmorty"), 20, "pairing did not go on to the list")
        page_ready(driver)
        wait_for(driver, lambda d: rows(d), 20, "the list shows no rows after pairing")
        assert driver.execute_script("return window.isSecureContext") is True
        assert driver.execute_script("return 'serviceWorker' in navigator && !!navigator.serviceWorker") is True
        # And Kiosk's service worker registers over HTTPS and takes the page over, so the phone can read offline.
        wait_for(driver, lambda d: d.execute_script("return !!navigator.serviceWorker.controller"), 30,
                 "no service worker controls the page over HTTPS")
        assert driver.execute_script("return navigator.serviceWorker.controller.scriptURL") == server.url("/sw.js")
        cookies = {cookie["name"]: cookie for cookie in driver.get_cookies()}
        device = cookies["__Host-kiosk_device"]
        assert device["secure"] and device["httpOnly"] and device.get("sameSite") == "Lax", device
        assert device["expiry"] - time.time() > 399 * 86_400
        assert cookies["kiosk_csrf"]["secure"], cookies["kiosk_csrf"]
        status = driver.execute_async_script(
            "const done = arguments[0]; fetch('/api/favorites').then(r => done(r.status), e => done(String(e)));")
        assert status == 200
        wait_for(driver, lambda d: "kiosk-pages" in d.execute_async_script(
            "const done = arguments[0]; caches.keys().then(done, () => done([]));"), 30, "the phone saved no page of Kiosk")
        # And the offline page, which the worker could not save while it installed on the pairing page (its fetch was sent
        # to /pair), is saved once Kiosk serves the paired phone a page: a page never saved shows it offline, not the
        # browser's error.
        wait_for(driver, lambda d: d.execute_async_script("""
            const done = arguments[0];
            caches.keys().then(keys => Promise.all(keys.filter(k => k.startsWith('kiosk-shell-')).map(k => caches.open(k)
              .then(c => c.match('/offline'))))).then(found => done(found.some(Boolean)), () => done(false));"""),
                 30, "the phone's worker never saved the offline page after pairing")

        # `kiosk devices list` shows the phone; revoking it while serve runs stops it at its next request.
        listed = _run(kiosk_bin, "devices", "list", "--json", "--data-dir", server.data_dir)
        devices = json.loads(listed.stdout)
        assert len(devices) == 1 and devices[0]["name"].startswith("Chrome"), devices
        revoked = _run(kiosk_bin, "devices", "revoke", str(devices[0]["id"]), "--data-dir", server.data_dir)
        assert "Revoked" in revoked.stdout
        status = driver.execute_async_script(
            "const done = arguments[0]; fetch('/api/favorites').then(r => done(r.status), e => done(String(e)));")
        assert status == 401
        driver.get(server.url("/favorites"))
        page_ready(driver)
        assert driver.current_url == server.url("/pair?next=%2Ffavorites")
        # And the revoked phone was told to forget what it saved: no saved page or picture, no device cookie (the
        # pairing page registers the app's worker again, which keeps only the public app shell).
        saved = driver.execute_async_script("""
            const done = arguments[0];
            caches.keys().then(keys => done(keys), error => done(String(error)));
        """)
        assert not {"kiosk-pages", "kiosk-images"} & set(saved), saved
        assert "__Host-kiosk_device" not in {cookie["name"] for cookie in driver.get_cookies()}
    finally:
        driver.quit()

    # The code was shown by `kiosk devices pair` only: not in serve's output or errors, not in the data directory.
    assert not any(server.code in line for line in server.output), server.output
    secret = server.code.replace("-", "").encode()
    for path in server.directory.iterdir():
        if path.is_file():
            assert secret not in path.read_bytes() and server.code.encode() not in path.read_bytes(), path
