"""`kiosk proxy` with real clients reading an app's HTTPS: Python's urllib with HTTPS_PROXY-style settings and
Kiosk's CA, headless Chromium with --proxy-server and Kiosk's CA trusted in its NSS database (certutil), and the
console open in a browser showing the app's request live, pausing it at a breakpoint and sending the app an edit
made in the JSON tree. The app's upstream is a local HTTPS server with a CA the test makes; nothing leaves
loopback."""

from __future__ import annotations

import datetime
import json
import os
import queue
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import DESKTOP, PHONE, axe_serious_violations, new_driver, page_ready, screenshot, wait_for

APP_PAGE = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>The app</title></head>
<body><h1>The app</h1><p id="out">loading</p>
<script>fetch('/api/items').then(r => r.json()).then(j => {
  document.getElementById('out').textContent = j.items.map(i => i.name).join(', ');
});</script></body></html>"""
ITEMS = {"items": [{"name": "Morty Smith", "id": 2}], "count": 1}


def make_upstream_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A test CA and a leaf for localhost and 127.0.0.1 signed by it (P-256): the CA's PEM, the leaf's and its key's."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Kiosk tests' upstream CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
          .not_valid_after(now + datetime.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    import ipaddress
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = folder / "upstream-ca.pem", folder / "upstream-leaf.pem", folder / "upstream-leaf-key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


class AppUpstream:
    """The app's backend over HTTPS on a free loopback port: `/` a page that fetches `/api/items`, which is JSON."""

    def __init__(self, leaf: Path, key: Path, cacheable: bool = False):
        owner = self
        self.requests: list[str] = []
        # `/api/slow` answers once this is set: a request the test holds in flight.
        self.release = threading.Event()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                owner.requests.append(self.path)
                if self.path.startswith("/api/slow"):
                    owner.release.wait(60)
                if self.path == "/":
                    body, kind = APP_PAGE, "text/html; charset=utf-8"
                elif self.path.startswith("/api/items") or self.path.startswith("/api/slow"):
                    body, kind = json.dumps(ITEMS).encode(), "application/json"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "max-age=0" if cacheable else "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(leaf, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"https://localhost:{self.port}{path}"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class KioskProxy:
    """`kiosk proxy --port 0 --console-port 0`, trusting the upstream's test CA; its two addresses and its CA."""

    _proxy = re.compile(r"Kiosk proxy on http://127\.0\.0\.1:(\d+)/")
    _console = re.compile(r"Console on (http://127\.0\.0\.1:\d+)/debug")

    def __init__(self, binary: str, data_dir: Path, upstream_ca: Path | None, arguments: tuple[str, ...] = (),
                 environment: dict[str, str] | None = None):
        self.binary, self.data_dir = binary, data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self.stderr = data_dir / "proxy-stderr.log"
        trust = ("--upstream-ca", str(upstream_ca)) if upstream_ca else ()
        self.process = subprocess.Popen(
            [binary, "proxy", "--port", "0", "--console-port", "0", "--data-dir", str(data_dir), *trust, *arguments],
            stdout=subprocess.PIPE, stderr=open(self.stderr, "ab"), stdin=subprocess.DEVNULL, text=True,
            env={**os.environ, "NO_COLOR": "1", **(environment or {})})
        lines: queue.Queue[str | None] = queue.Queue()

        def read():
            for line in self.process.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        self.port, self.console, seen = 0, "", []
        # Each --reverse listener's port, in the order given.
        self.reverse_ports: list[int] = []
        reverses = sum(1 for argument in arguments if argument == "--reverse")
        deadline = time.monotonic() + 60
        while not (self.port and self.console and len(self.reverse_ports) == reverses):
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None and time.monotonic() < deadline, f"kiosk proxy did not start: {seen}"
            seen.append(line)
            if match := self._proxy.search(line):
                self.port = int(match.group(1))
            elif match := self._console.search(line):
                self.console = match.group(1)
            elif match := re.search(r"Reverse proxy on http://127\.0\.0\.1:(\d+)/", line):
                self.reverse_ports.append(int(match.group(1)))
        self.ca = subprocess.run([binary, "proxy", "ca", "--path", "--data-dir", str(data_dir)], capture_output=True, text=True,
                                 check=True, timeout=60).stdout.strip()

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api(self, path: str):
        with urllib.request.urlopen(self.console + path, timeout=30) as response:
            return json.loads(response.read())

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()


@pytest.fixture
def setup(kiosk_bin, tmp_path):
    ca, leaf, key = make_upstream_certificates(tmp_path)
    upstream = AppUpstream(leaf, key)
    proxy = KioskProxy(kiosk_bin, tmp_path / "data", ca)
    yield proxy, upstream
    proxy.stop()
    upstream.stop()


def urllib_get(proxy: KioskProxy, url: str) -> bytes:
    """An app on Python's standard library with its HTTPS proxy set to Kiosk and Kiosk's CA as its roots."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"https": proxy.address, "http": proxy.address}),
                                         urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=proxy.ca)))
    with opener.open(url, timeout=60) as response:
        return response.read()


def records_for(proxy: KioskProxy, url: str) -> list[dict]:
    return [record for record in proxy.api("/debug/api/requests") if record["url"] == url]


def test_python_urllib_reads_https_through_kiosk_and_the_exchange_is_logged(setup):
    proxy, upstream = setup
    # Given an app whose HTTPS proxy is Kiosk and which trusts Kiosk's CA
    body = urllib_get(proxy, upstream.url("/api/items?page=1"))
    # Then it gets its backend's answer, and the console's log has the exchange under its host, read in the clear
    assert json.loads(body) == ITEMS
    deadline = time.monotonic() + 10
    while not (found := records_for(proxy, upstream.url("/api/items?page=1"))) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert found, proxy.api("/debug/api/requests")
    assert found[0]["status"] == 200
    # And without Kiosk's CA the same app refuses the proxy's certificate, as it should
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"https": proxy.address}),
                                         urllib.request.HTTPSHandler(context=ssl.create_default_context()))
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        opener.open(upstream.url("/api/items"), timeout=60)


JAVA_APP = """import java.net.URI; import java.net.http.*;
public class App { public static void main(String[] args) throws Exception {
  HttpClient client = HttpClient.newBuilder().proxy(java.net.ProxySelector.getDefault()).build();
  HttpResponse<String> answer = client.send(HttpRequest.newBuilder(URI.create(args[0])).build(), HttpResponse.BodyHandlers.ofString());
  System.out.println(answer.statusCode() + " " + answer.headers().firstValue("via").orElse("-"));
  System.out.println(answer.body()); } }
"""


def test_java_reads_https_through_kiosk_with_nothing_but_the_env_block(setup, tmp_path):
    proxy, upstream = setup
    # Given a Java app that knows nothing of Kiosk, and the block `kiosk proxy env` prints, every host through the proxy
    (tmp_path / "App.java").write_text(JAVA_APP)
    block = subprocess.run([proxy.binary, "proxy", "env", "--data-dir", str(proxy.data_dir), "--port", str(proxy.port), "--no-proxy", ""],
                           capture_output=True, text=True, check=True, timeout=60).stdout
    # When the app asks its HTTPS backend in a shell that evaluated it
    run = subprocess.run(["bash", "-c", block + "\nexec java App.java \"$0\"", upstream.url("/api/items?from=java")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=180)
    # Then it went through Kiosk, trusting the leaf Kiosk made for its host from the trust store the block names
    status, body = run.stdout.split("\n", 1)
    assert status.startswith("200 1.1 kiosk-"), run.stdout + run.stderr
    assert json.loads(body) == ITEMS
    assert "JAVA_TOOL_OPTIONS" in run.stderr and "kiosk-proxy-truststore.p12" in run.stderr
    deadline = time.monotonic() + 10
    while not records_for(proxy, upstream.url("/api/items?from=java")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert records_for(proxy, upstream.url("/api/items?from=java"))


def test_insecure_upstream_says_so_on_start_in_the_console_and_on_every_exchange(kiosk_bin, tmp_path):
    # Given an app backend whose CA Kiosk is not told of
    _, leaf, key = make_upstream_certificates(tmp_path)
    upstream = AppUpstream(leaf, key)
    strict = KioskProxy(kiosk_bin, tmp_path / "strict", None)
    loose = KioskProxy(kiosk_bin, tmp_path / "loose", None, ("--insecure-upstream",))
    try:
        # When an app asks for it through a proxy that checks certificates, then through one run with --insecure-upstream
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib_get(strict, upstream.url("/api/items"))
        body = urllib_get(loose, upstream.url("/api/items"))
        # Then the first is a 502 saying the certificate is not trusted, the second reaches the backend
        assert refused.value.code == 502
        assert "certificate for localhost is not trusted" in refused.value.read().decode()
        assert json.loads(body) == ITEMS
        # And the loose one said so on start, its console says so, and its exchange is marked
        assert "--insecure-upstream: upstream HTTPS certificates are NOT checked" in loose.stderr.read_text()
        assert loose.api("/debug/api/proxy")["verifiesUpstream"] is False
        assert strict.api("/debug/api/proxy")["verifiesUpstream"] is True
        deadline = time.monotonic() + 10
        while not (found := records_for(loose, upstream.url("/api/items"))) and time.monotonic() < deadline:
            time.sleep(0.1)
        record = loose.api(f"/debug/api/requests/{found[0]['id']}")
        assert any(touch["kind"] == "insecure" for touch in record["touchedBy"]), record
    finally:
        strict.stop()
        loose.stop()
        upstream.stop()


def test_a_websocket_through_a_reverse_listener_is_logged_as_the_forward_listeners_are(kiosk_bin, tmp_path):
    # Given an app backend that switches to WebSocket and echoes one frame
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def serve():
        connection, _ = server.accept()
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(4096)
            connection.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                               b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
            connection.sendall(connection.recv(4096))

    threading.Thread(target=serve, daemon=True).start()
    backend = f"http://127.0.0.1:{server.getsockname()[1]}"
    proxy = KioskProxy(kiosk_bin, tmp_path / "ws", None, ("--reverse", f"{backend}@0"))
    try:
        # When an app opens a WebSocket through the reverse listener, sends a frame and reads it back
        with socket.create_connection(("127.0.0.1", proxy.reverse_ports[0]), timeout=30) as app:
            app.sendall(b"GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            answer = b""
            while b"\r\n\r\n" not in answer:
                answer += app.recv(4096)
            assert answer.startswith(b"HTTP/1.1 101"), answer
            frame = b"\x81\x85abcd" + bytes(b ^ k for b, k in zip(b"hello", b"abcdabcd"))
            app.sendall(frame)
            echoed = answer.split(b"\r\n\r\n", 1)[1]
            while len(echoed) < len(frame):
                echoed += app.recv(4096)
            assert echoed == frame
        # Then the switch is in the log, as a forward listener's is
        deadline = time.monotonic() + 15
        while not (found := [r for r in proxy.api("/debug/api/requests") if r.get("status") == 101]) \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        assert found, proxy.api("/debug/api/requests")
    finally:
        proxy.stop()
        server.close()


def test_a_debug_token_locks_the_proxy_console_as_it_locks_serves(kiosk_bin, tmp_path):
    # Given a proxy started with KIOSK_DEBUG_TOKEN set, as on a shared machine
    token = "0123456789abcdef0123456789abcdef"
    proxy = KioskProxy(kiosk_bin, tmp_path / "locked", None, environment={"KIOSK_DEBUG_TOKEN": token})
    try:
        # When its console is asked without the token, then it is refused, the log's JSON too
        pages = {}
        for path in ("/debug", "/debug/api/requests"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(proxy.console + path, timeout=30)
            assert refused.value.code == 403, path
            pages[path] = refused.value.read().decode()
        # And the console's page asks for the token, as serve's does
        assert "KIOSK_DEBUG_TOKEN" in pages["/debug"] and 'action="/debug/login"' in pages["/debug"]
    finally:
        proxy.stop()


@pytest.mark.skipif(shutil.which("certutil") is None, reason="certutil (libnss3-tools) is not installed")
def chromium_through(proxy: KioskProxy, tmp_path: Path, *arguments: str):
    """Chromium whose proxy is Kiosk (loopback too: Chromium bypasses it for loopback unless told) and whose NSS
    database trusts Kiosk's CA, as a developer sets it up with certutil."""
    home = tmp_path / "home"
    database = home / ".pki" / "nssdb"
    database.mkdir(parents=True)
    subprocess.run(["certutil", "-N", "-d", f"sql:{database}", "--empty-password"], check=True, timeout=60)
    subprocess.run(["certutil", "-A", "-d", f"sql:{database}", "-t", "C,,", "-n", "kiosk-proxy", "-i", proxy.ca],
                   check=True, timeout=60)
    return new_driver(DESKTOP, arguments=(f"--proxy-server={proxy.address}", "--proxy-bypass-list=<-loopback>", *arguments),
                      environment={"HOME": str(home)})


def test_chromium_trusting_kiosks_ca_opens_an_https_app_through_the_proxy(setup, tmp_path):
    proxy, upstream = setup
    # Given Chromium whose proxy is Kiosk and which trusts Kiosk's CA
    driver = chromium_through(proxy, tmp_path)
    try:
        # When it opens the app's HTTPS page
        driver.get(upstream.url("/"))
        page_ready(driver)
        # Then the page loads without a certificate warning and its script's fetch comes back through Kiosk too
        assert driver.title == "The app", driver.page_source[:500]
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "out").text == "Morty Smith")
        # And Kiosk logged both, the page and the fetch, with the browser's own headers redacted where secret
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (records_for(proxy, upstream.url("/")) and records_for(proxy, upstream.url("/api/items"))):
            time.sleep(0.1)
        assert records_for(proxy, upstream.url("/")) and records_for(proxy, upstream.url("/api/items"))
        assert {"/", "/api/items"} <= set(upstream.requests)
    finally:
        driver.quit()


def test_an_apps_request_shows_live_in_the_console_and_a_breakpoint_edit_reaches_the_app(setup, kiosk_bin, browser):
    proxy, upstream = setup
    # Given the console open in a browser
    browser.get(proxy.console + "/debug")
    page_ready(browser)
    # When the app makes a request through the proxy
    urllib_get(proxy, upstream.url("/api/items?live=1"))
    # Then it appears in the open console without a reload
    wait_for(browser, lambda d: any("/api/items?live=1" in row.text
                                    for row in d.find_elements(By.CSS_SELECTOR, "#results table.requests tbody tr")), 20)

    # Given a response breakpoint on the app's host, set from the command line while the proxy runs
    endpoint = f"localhost:{upstream.port}"
    result = subprocess.run([kiosk_bin, "breakpoint", "set", endpoint, "--response", "pause", "--data-dir", str(proxy.data_dir)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    # When the app asks again, it waits at the breakpoint
    received: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: received.put(urllib_get(proxy, upstream.url("/api/items?paused=1"))), daemon=True).start()
    WebDriverWait(browser, 30).until(lambda d: proxy.api("/debug/api/paused"))
    # And the open list shows it at its top, paused, leading to the pause
    paused_row = "#results table.requests tbody tr[data-inflight^='p']"
    wait_for(browser, lambda d: any("/api/items?paused=1" in row.text for row in d.find_elements(By.CSS_SELECTOR, paused_row)), 20)
    assert "paused" in browser.find_element(By.CSS_SELECTOR, paused_row).text
    assert browser.find_element(By.CSS_SELECTOR, paused_row + " a").get_attribute("href").split("/debug/paused/")[1].isdigit()
    # And the developer edits the paused JSON in the console's tree and sends it
    browser.get(proxy.console + "/debug/paused")
    browser.find_element(By.CSS_SELECTOR, "#results a[href^='/debug/paused/']").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".json-editor"))
    name = browser.find_element(By.CSS_SELECTOR, "input[aria-label='Value of $.items[0].name']")
    summary = browser.execute_script("return arguments[0].closest('details').querySelector(':scope > summary')", name)
    if not name.is_displayed():
        summary.click()
    name.clear()
    name.send_keys("Edited Morty")
    browser.find_element(By.CSS_SELECTOR, "button[name=action][value=edit]").click()
    # Then the app receives the edit, not what its backend sent
    answer = json.loads(received.get(timeout=30))
    assert answer["items"][0]["name"] == "Edited Morty"
    assert answer["count"] == 1


def test_a_request_in_flight_heads_the_live_list_until_it_ends_then_its_record_takes_its_place(setup, browser):
    proxy, upstream = setup
    # Given the console open on the app's host
    browser.get(proxy.console + f"/debug?filter=host:localhost:{upstream.port}")
    page_ready(browser)
    # When the app asks for something its backend is slow to answer (a token in its URL)
    received: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: received.put(urllib_get(proxy, upstream.url("/api/slow?token=app-secret-77"))), daemon=True).start()
    # Then the list shows it as it waits: pending, its token hidden, its time in flight counting
    pending = "#results table.requests tbody tr[data-inflight]"
    wait_for(browser, lambda d: any("/api/slow" in row.text for row in d.find_elements(By.CSS_SELECTOR, pending)), 20)
    row = browser.find_element(By.CSS_SELECTOR, pending)
    assert "pending" in row.text and "app-secret-77" not in row.text and "token=<redacted>" in row.text
    assert "app-secret-77" not in browser.page_source
    WebDriverWait(browser, 10).until(lambda d: int(d.find_element(By.CSS_SELECTOR, pending + " td.dur").text.split()[0]) >= 3)
    # And the row the feed updated meanwhile is the same element (changed in place: a selection in it survives)
    assert row.get_attribute("data-inflight") and "/api/slow" in row.text
    # And it heads the list, above what was logged before it
    assert browser.find_element(By.CSS_SELECTOR, "#results table.requests tbody tr").get_attribute("data-inflight")
    # And a script reads it too
    flying = proxy.api(f"/debug/api/in-flight?filter=host:localhost:{upstream.port}")
    assert [entry["url"] for entry in flying] == [upstream.url("/api/slow?token=<redacted>")] and "status" not in flying[0]
    # But not through a filter of another host
    assert proxy.api("/debug/api/in-flight?filter=host:elsewhere.test") == []

    # When the backend answers
    upstream.release.set()
    assert json.loads(received.get(timeout=30))["count"] == 1
    # Then the pending row goes and the exchange's record takes its place, without a reload
    wait_for(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, pending) and any(
        "/api/slow" in row.text for row in d.find_elements(By.CSS_SELECTOR, "#results table.requests tbody tr[data-id]")), 20)
    assert proxy.api("/debug/api/in-flight") == []


def test_the_consoles_proxy_page_counts_live_and_passes_axe_on_a_phone(setup):
    proxy, upstream = setup
    driver = new_driver(PHONE)
    try:
        # Given the console's proxy page open on a phone
        driver.get(proxy.console + "/debug/proxy")
        page_ready(driver)
        assert driver.find_element(By.CSS_SELECTOR, "main h1").text == "Proxy"
        requests = driver.find_element(By.CSS_SELECTOR, "#proxy-counts [data-count-name=requests]")
        before = int(requests.text)
        # When an app makes two requests through the proxy
        urllib_get(proxy, upstream.url("/api/items?counted=1"))
        urllib_get(proxy, upstream.url("/api/items?counted=2"))
        # Then the page's count follows without a reload (it reads the JSON every 2 s)
        WebDriverWait(driver, 10).until(lambda d: int(requests.text) >= before + 2)
        # And the page shows the listener, the fingerprint and every platform's steps, fits the phone and passes axe
        text = driver.find_element(By.TAG_NAME, "main").text
        assert f"127.0.0.1:{proxy.port}" in text and "SHA-256" in text and "iPhone and iPad" in text
        assert driver.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
        screenshot(driver, "console-proxy-phone", PHONE)
        assert axe_serious_violations(driver) == []
    finally:
        driver.quit()


def test_python_gets_stored_answers_when_the_backend_is_gone_and_offline_a_504_for_the_rest(kiosk_bin, tmp_path):
    # Given a Python app that read its backend once through Kiosk
    ca, leaf, key = make_upstream_certificates(tmp_path)
    upstream = AppUpstream(leaf, key, cacheable=True)
    proxy = KioskProxy(kiosk_bin, tmp_path / "data", ca)
    try:
        assert json.loads(urllib_get(proxy, upstream.url("/api/items?page=1"))) == ITEMS
        # When its backend goes away
        upstream.stop()
        # Then it still gets the same answer, and the response says where it came from
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"https": proxy.address}),
                                             urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=proxy.ca)))
        with opener.open(upstream.url("/api/items?page=1"), timeout=60) as response:
            assert json.loads(response.read()) == ITEMS
            assert "detail=fallback" in response.headers["Cache-Status"] and response.headers["Age"] is not None
        # And with the proxy switched offline by the JSON API, what was never fetched is a 504 that says so
        request = urllib.request.Request(proxy.console + "/debug/api/proxy/cache", data=b'{"offline": true}', method="PUT",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert json.loads(response.read())["offline"] is True
        with pytest.raises(urllib.error.HTTPError) as refused:
            opener.open(upstream.url("/api/items?page=2"), timeout=60)
        assert refused.value.code == 504 and "no stored answer" in refused.value.read().decode()
        assert refused.value.headers["Cache-Status"] == "Kiosk;fwd=miss;detail=offline"
    finally:
        proxy.stop()


def test_chromium_reads_an_app_through_kiosk_after_its_backend_is_gone_and_offline_by_the_consoles_switch(kiosk_bin, tmp_path):
    # Given an app whose answers a cache may keep, Chromium trusting Kiosk's CA with Kiosk as its proxy, and the
    # console open on a phone
    ca, leaf, key = make_upstream_certificates(tmp_path)
    upstream = AppUpstream(leaf, key, cacheable=True)
    proxy = KioskProxy(kiosk_bin, tmp_path / "data", ca)
    driver = chromium_through(proxy, tmp_path, "--disk-cache-size=1", "--disable-application-cache")
    console = new_driver(PHONE)
    try:
        driver.get(upstream.url("/"))
        page_ready(driver)
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "out").text == "Morty Smith")

        # When the app's backend goes away and the page is loaded again
        upstream.stop()
        driver.refresh()
        page_ready(driver)
        # Then the page and its fetch still come, from Kiosk's cache, which says so
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "out").text == "Morty Smith")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(
                "detail=fallback" in (record.get("cacheStatus") or "") for record in records_for(proxy, upstream.url("/api/items"))):
            time.sleep(0.1)
        statuses = [record.get("cacheStatus") for record in records_for(proxy, upstream.url("/api/items"))]
        assert any("fwd=stale" in (status or "") and "detail=fallback" in (status or "") for status in statuses), statuses

        # When the developer goes offline from the console's proxy page on a phone
        console.get(proxy.console + "/debug/proxy#proxy-cache")
        page_ready(console)
        assert "localhost" in console.find_element(By.CSS_SELECTOR, "ul.cache-hosts").text
        entries = console.execute_script("return history.length")
        console.find_element(By.XPATH, "//button[normalize-space()='Go offline']").click()
        # Then the page says the proxy is offline, offers to go back online, fits the phone and passes axe (the
        # form's answer is a new page: wait for it rather than for the old page's readyState, which is already
        # complete)
        wait_for(console, lambda d: any("no upstream is asked" in banner.text
                                        for banner in d.find_elements(By.CSS_SELECTOR, "#proxy-cache ~ p.banner")),
                 20, "the proxy page never said it was offline")
        page_ready(console)
        assert console.find_elements(By.XPATH, "//button[normalize-space()='Go online']")
        # And the press made no history entry of its own: Back leaves the page, never to the page before the press
        assert console.execute_script("return history.length") == entries
        assert console.current_url.endswith("/debug/proxy#proxy-cache")
        assert console.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
        screenshot(console, "console-proxy-cache-offline-phone", PHONE)
        assert axe_serious_violations(console) == []
        assert proxy.api("/debug/api/proxy/cache")["offline"] is True
        # And the app still reads, now as hits that asked nobody
        driver.refresh()
        page_ready(driver)
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "out").text == "Morty Smith")

        # When the developer presses "Clear the whole cache" and says no to the question it asks, nothing goes
        clear = "//button[normalize-space()='Clear the whole cache']"
        console.find_element(By.XPATH, clear).click()
        WebDriverWait(console, 10).until(lambda d: d.switch_to.alert)
        assert "stored answer" in console.switch_to.alert.text
        console.switch_to.alert.dismiss()
        time.sleep(0.5)
        assert "localhost" in console.find_element(By.CSS_SELECTOR, "ul.cache-hosts").text
        # (its port named: a machine's several local servers are told apart)
        assert any(host["host"] == f"localhost:{upstream.port}" for host in proxy.api("/debug/api/proxy/cache")["hosts"])
        # And when they say yes, the cache is empty and the page says so
        console.find_element(By.XPATH, clear).click()
        WebDriverWait(console, 10).until(lambda d: d.switch_to.alert)
        console.switch_to.alert.accept()
        wait_for(console, lambda d: not d.find_elements(By.CSS_SELECTOR, "ul.cache-hosts"), 20, "the cache was not cleared")
        assert proxy.api("/debug/api/proxy/cache")["hosts"] == []
    finally:
        driver.quit()
        console.quit()
        proxy.stop()



NAMESPACE_SCRIPT = r"""
set -e
ip link set lo up
"$KIOSK" proxy --port 0 --console-port 0 --data-dir "$DATA" --ignore no-such-host.example.test > "$DATA/out.txt" 2>&1 &
for i in $(seq 100); do grep -q "Kiosk proxy on" "$DATA/out.txt" 2>/dev/null && break; sleep 0.1; done
PORT=$(grep -o "Kiosk proxy on http://127.0.0.1:[0-9]*" "$DATA/out.txt" | grep -o "[0-9]*$")
for url in http://no-such-host.example.test/ http://127.0.0.1:9/; do
    code=$(curl -s -m 20 -o "$DATA/body.txt" -w '%{http_code}' -x "http://127.0.0.1:$PORT" "$url" || true)
    echo "$code $(tr -d '\n' < "$DATA/body.txt")"
done
python3 - "$PORT" <<'PY'
import socket, sys
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20) as s:
    s.sendall(b"CONNECT no-such-host.example.test:443 HTTP/1.1\r\nHost: no-such-host.example.test:443\r\n\r\n")
    answer = b""
    while chunk := s.recv(65536):
        answer += chunk
print(answer.decode(errors="replace").replace("\r\n", " "))
PY
kill %1; wait || true
"""


def test_a_name_that_does_not_resolve_and_a_refused_connection_are_502s_that_each_say_which(kiosk_bin, tmp_path):
    """In a network namespace of the test's own (only loopback, up; no resolver reachable, so nothing leaves it), the
    proxy answers a request for a name that does not resolve, and one for a port nothing listens on, each with a 502
    whose sentence names that failure rather than a list of maybes; a CONNECT tunnel to the name (left unread, --ignore) too."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("unshare (util-linux) and ip (iproute2) are needed to make the test's network namespace")
    result = subprocess.run(["unshare", "-rn", "bash", "-c", NAMESPACE_SCRIPT], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "KIOSK": kiosk_bin, "DATA": str(tmp_path)})
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 3, (result.stdout, result.stderr)
    assert lines[0].startswith("502 ") and "no-such-host.example.test: the name does not resolve (DNS)" in lines[0], lines[0]
    assert lines[1].startswith("502 ") and "127.0.0.1:9: it refused the connection" in lines[1], lines[1]
    # And a tunnel to that name is refused in the same words, not NIO's
    assert lines[2].startswith("HTTP/1.1 502 ") and "no-such-host.example.test:443: the name does not resolve (DNS)" in lines[2], lines[2]


def test_clearing_the_log_empties_the_open_consoles_host_menu_but_for_the_host_chosen(setup, browser):
    proxy, upstream = setup
    # Given an app's exchange logged, and the console open on the whole list, its Host menu offering the app's host
    urllib_get(proxy, upstream.url("/api/items"))
    deadline = time.monotonic() + 10
    while not records_for(proxy, upstream.url("/api/items")) and time.monotonic() < deadline:
        time.sleep(0.1)
    browser.get(proxy.console + "/debug")
    page_ready(browser)
    # (read in one script: the feed replaces the menu's options, so elements found a moment before may be gone)
    hosts = lambda d: d.execute_script(
        "return [...document.querySelectorAll('select[name=host] option')].map(o => o.value).filter(v => v)")
    assert f"localhost:{upstream.port}" in hosts(browser), hosts(browser)
    # When the log is cleared
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Clear the request log']").click()
    WebDriverWait(browser, 5).until(lambda d: d.switch_to.alert).accept()
    # Then the menu no longer offers hosts the log no longer holds, without a reload
    wait_for(browser, lambda d: hosts(d) == [], 10, "the Host menu still offers a host the log no longer holds")
