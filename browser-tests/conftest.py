"""Fixtures of Kiosk's real-browser tests: a `kiosk serve` process on its embedded demo upstream
(with the demo upstream's fault and stats control), and headless Chromium through chromedriver.

Environment:
  KIOSK_BIN        the kiosk executable (default: `swift build --show-bin-path`/kiosk, else .build/debug/kiosk)
  KIOSK_SCREENSHOTS where screenshots go (default: artifacts/screenshots at the repository root)
  CHROMIUM, CHROMEDRIVER  the browser and driver (default: found on PATH)
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = Path(os.environ.get("KIOSK_SCREENSHOTS", ROOT / "artifacts" / "screenshots"))
STARTUP_TIMEOUT = 60

PHONE = (390, 844)
DESKTOP = (1280, 900)

_DEMO_LINE = re.compile(r"Demo upstream on (http://\S+?)/? \(faults: (http://\S+?)/faults\)")
_KIOSK_LINE = re.compile(r"Kiosk on (http://\S+?)/?\s+\(Ctrl-C to stop\)")


# ---------------------------------------------------------------------------------------------
# The kiosk binary and server


def _kiosk_binary() -> str:
    explicit = os.environ.get("KIOSK_BIN")
    if explicit:
        return explicit
    candidates = []
    if shutil.which("swift"):
        try:
            out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True,
                                 timeout=120, check=True).stdout.strip()
            if out:
                candidates.append(Path(out) / "kiosk")
        except (subprocess.SubprocessError, OSError):
            pass
    candidates.append(ROOT / ".build" / "debug" / "kiosk")
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    pytest.exit(f"kiosk binary not found (tried {', '.join(map(str, candidates))}); run `swift build` first", 2)


@pytest.fixture(scope="session")
def kiosk_bin(tmp_path_factory) -> str:
    """A private copy of the kiosk binary, so a rebuild during the run cannot swap it under a test."""
    copy = tmp_path_factory.mktemp("bin") / "kiosk"
    shutil.copy2(_kiosk_binary(), copy)
    return str(copy)


class KioskServer:
    """One `kiosk serve --port 0 --data-dir DIR` process, with its demo upstream's control port."""

    def __init__(self, binary: str, data_dir: str, port: int = 0):
        self.binary = binary
        self.data_dir = data_dir
        self.port = port      # 0 picks a free one; a restart on the same origin passes the first one's
        self.base = ""        # http://127.0.0.1:PORT (no trailing slash)
        self.upstream = ""    # the demo upstream
        self.control = ""     # the demo upstream's fault/stats control listener
        self.process: subprocess.Popen | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.output: list[str] = []
        self._log = None

    def start(self) -> "KioskServer":
        os.makedirs(self.data_dir, exist_ok=True)
        self._log = open(os.path.join(self.data_dir, "serve-stderr.log"), "ab")
        self.base = self.upstream = self.control = ""
        self.process = subprocess.Popen(
            [self.binary, "serve", "--port", str(self.port), "--data-dir", self.data_dir],
            stdout=subprocess.PIPE, stderr=self._log, stdin=subprocess.DEVNULL, text=True, bufsize=1,
            env={**os.environ, "NO_COLOR": "1"})
        # Drains stdout for the process's whole life, so a chatty server never blocks on a full pipe.
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not (self.base and self.control):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.stop()
                raise RuntimeError(f"kiosk serve did not report both addresses within {STARTUP_TIMEOUT} s; "
                                   f"stdout so far: {self.output!r}; stderr: {self._stderr_tail()}")
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                code = self.process.wait()
                raise RuntimeError(f"kiosk serve exited ({code}) before listening; stdout: {self.output!r}; "
                                   f"stderr: {self._stderr_tail()}")
            if match := _DEMO_LINE.search(line):
                self.upstream, self.control = match.group(1), match.group(2)
            elif match := _KIOSK_LINE.search(line):
                self.base = match.group(1)
        return self

    def _read(self) -> None:
        assert self.process and self.process.stdout
        for line in self.process.stdout:
            self.output.append(line.rstrip("\n"))
            self._lines.put(line)
        self._lines.put(None)

    def _stderr_tail(self) -> str:
        try:
            with open(os.path.join(self.data_dir, "serve-stderr.log"), "rb") as log:
                return log.read()[-2000:].decode(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        process = self.process
        if process and process.poll() is None:
            for send, wait in ((lambda: process.send_signal(signal.SIGINT), 10),
                               (process.terminate, 5), (process.kill, 5)):
                send()
                try:
                    process.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self._log:
            self._log.close()
            self._log = None

    # -- URLs and the JSON API

    @property
    def bound_port(self) -> int:
        """The port it listens on (the one the system picked for port 0)."""
        return int(self.base.rsplit(":", 1)[1])

    def url(self, path: str) -> str:
        return self.base + path

    def api(self, path: str):
        """GET a Kiosk /api path and decode its JSON."""
        with urllib.request.urlopen(self.url(path), timeout=30) as response:
            return json.load(response)

    # -- demo upstream control

    def _control(self, method: str, path: str, body: dict | None = None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.control + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"} if data else {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw = response.read()
        except (TimeoutError, urllib.error.URLError) as error:
            if not isinstance(error, TimeoutError) and not isinstance(getattr(error, "reason", None), TimeoutError):
                raise
            # A stall of the whole process is rare and gone by the time anyone looks: where its threads wait is kept now.
            raise AssertionError(f"the demo upstream's control did not answer {method} {path} within 10 s; "
                                 f"where kiosk serve's threads waited:\n{self.thread_stacks()}") from error
        return json.loads(raw) if raw.strip() else None

    def thread_stacks(self) -> str:
        """Where each thread of the running `kiosk serve` waits (gdb's backtraces), or why that cannot be said."""
        gdb = shutil.which("gdb")
        if not gdb or not self.process or self.process.poll() is not None:
            return "(no gdb, or the process has ended)"
        try:
            traced = subprocess.run([gdb, "-batch", "-ex", "thread apply all bt 25", "-p", str(self.process.pid)],
                                    capture_output=True, text=True, timeout=120)
        except (subprocess.SubprocessError, OSError) as error:
            return f"(gdb failed: {error})"
        lines = [line for line in traced.stdout.splitlines() if line.startswith(("Thread", "#"))]
        return "\n".join(lines)[:20000] or f"(gdb said nothing: {traced.stderr[-500:]})"

    def set_faults(self, **faults) -> None:
        self._control("PUT", "/faults", faults)

    def set_offline(self, offline: bool) -> None:
        self.set_faults(offline=offline)

    def stats(self) -> dict:
        return self._control("GET", "/stats")

    def reset_stats(self) -> None:
        self._control("DELETE", "/stats")

    # -- forms as a browser would send them (double-submit CSRF cookie)

    def post_form(self, path: str, fields: dict[str, str]) -> int:
        """POSTs a Kiosk form with a valid CSRF cookie and field, as a page's own form would; returns the status."""
        opener = urllib.request.build_opener(_NoRedirect)
        with opener.open(self.url("/"), timeout=30) as response:
            cookie = "\n".join(response.headers.get_all("Set-Cookie") or [])
        token = re.search(r"kiosk_csrf=([0-9a-f]+)", cookie)
        assert token, f"no kiosk_csrf cookie on / (Set-Cookie: {cookie!r})"
        body = urllib.parse.urlencode({**fields, "csrf": token.group(1)}).encode()
        request = urllib.request.Request(self.url(path), data=body, method="POST", headers={
            "Content-Type": "application/x-www-form-urlencoded", "Cookie": f"kiosk_csrf={token.group(1)}"})
        try:
            with opener.open(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.fixture(scope="module")
def server(kiosk_bin, tmp_path_factory):
    """A Kiosk server shared by a module's read-only tests."""
    instance = KioskServer(kiosk_bin, str(tmp_path_factory.mktemp("kiosk-data"))).start()
    yield instance
    instance.stop()


@pytest.fixture
def fresh_server(kiosk_bin, tmp_path):
    """A Kiosk server with an empty store of its own, for a test that changes state."""
    instance = KioskServer(kiosk_bin, str(tmp_path / "data")).start()
    yield instance
    instance.stop()


@pytest.fixture
def start_server(kiosk_bin):
    """A factory: start_server(data_dir, port=0, binary=None) starts a server (stopped at teardown, or earlier by
    the test); the same port again gives the same origin, so the browser's service worker and storage apply."""
    started: list[KioskServer] = []

    def start(data_dir: str, port: int = 0, binary: str | None = None) -> KioskServer:
        os.makedirs(data_dir, exist_ok=True)
        instance = KioskServer(binary or kiosk_bin, data_dir, port).start()
        started.append(instance)
        return instance

    yield start
    for instance in started:
        instance.stop()


@pytest.fixture
def saved_phone(start_server, tmp_path):
    """A phone that opened a fresh Kiosk once and let it save for offline: `.server`, `.driver` (quit after the test),
    `.data_dir` (to start the server again on its port, `.server.bound_port`)."""
    from types import SimpleNamespace
    from device import open as open_page, wait_until_saved_for_offline
    data_dir = str(tmp_path / "data")
    server = start_server(data_dir)
    driver = new_driver(PHONE)
    try:
        open_page(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        yield SimpleNamespace(server=server, driver=driver, data_dir=data_dir)
    finally:
        driver.quit()


# ---------------------------------------------------------------------------------------------
# The browser


def _executable(env: str, name: str) -> str:
    path = os.environ.get(env) or shutil.which(name)
    if not path:
        pytest.exit(f"{name} is not on PATH (scripts/browser-tests.sh installs it)", 2)
    return path


def new_driver(size: tuple[int, int] = DESKTOP, language: str | None = None, javascript: bool = True,
               arguments: tuple[str, ...] = (), environment: dict[str, str] | None = None,
               text_size: int | None = None) -> webdriver.Chrome:
    """Headless Chromium at `size`. Phone widths are emulated with device metrics, because headless
    Chromium does not make a window narrower than 500 px. `javascript=False` blocks pages' scripts (the
    driver's own commands still work), as a browser with JavaScript turned off would. `environment` is added to
    the browser's (a HOME whose NSS database trusts a CA). `text_size` is the browser's default font size in px (16
    is Chromium's; 32 is a reader's text at 200%), which rem and em follow, media queries' included."""
    width, height = size
    options = webdriver.ChromeOptions()
    options.binary_location = _executable("CHROMIUM", "chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={max(width, 500)},{height}", "--hide-scrollbars",
                     "--disable-search-engine-choice-screen", "--no-first-run", *arguments):
        options.add_argument(argument)
    if width < 500:
        options.add_experimental_option("mobileEmulation", {
            "deviceMetrics": {"width": width, "height": height, "pixelRatio": 2.0, "touch": True, "mobile": True}})
    prefs = {}
    if language:
        options.add_argument(f"--lang={language}")
        prefs["intl.accept_languages"] = language
    if not javascript:
        prefs["profile.managed_default_content_settings.javascript"] = 2
    if text_size:
        prefs["webkit.webprefs.default_font_size"] = text_size
    if prefs:
        options.add_experimental_option("prefs", prefs)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # KIOSK_BROWSER_LOGS=<directory>: chromedriver's full log (every DevTools message) and Chromium's own log, a
    # file each per browser, to see why a page did not load.
    logs = os.environ.get("KIOSK_BROWSER_LOGS")
    log_output, service_args = subprocess.DEVNULL, []
    if logs:
        Path(logs).mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", os.environ.get("PYTEST_CURRENT_TEST", "browser").split(" ")[0])
        stamp = time.strftime("%H%M%S")
        log_output = str(Path(logs) / f"{stamp}-{name}.chromedriver.log")
        service_args = ["--log-level=ALL"]
        options.add_argument("--enable-logging=stderr")
        options.add_argument("--v=0")
    service = Service(executable_path=_executable("CHROMEDRIVER", "chromedriver"), log_output=log_output,
                      service_args=service_args, env={**os.environ, **environment} if environment else None)
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    return driver


def diagnose_stuck_navigation(driver, server: "KioskServer", path: str) -> str:
    """What to know when a navigation did not finish: whether the server answers the path itself, the browser's
    targets (its service worker among them), the worker's state and whether the device's database opens, as the
    open page sees them, and the browser's connections to the server with their queues."""
    lines = []
    started = time.monotonic()
    try:
        with urllib.request.urlopen(server.url(path), timeout=10) as response:
            lines.append(f"server answered {path} directly: {response.status} in {time.monotonic() - started:.2f} s")
    except Exception as error:  # noqa: BLE001 - a diagnosis reports whatever happened
        lines.append(f"server did not answer {path} directly within {time.monotonic() - started:.2f} s: {error!r}")
    try:
        targets = driver.execute_cdp_cmd("Target.getTargets", {}).get("targetInfos", [])
        lines += [f"target {t.get('type')} {t.get('url')} attached={t.get('attached')}" for t in targets]
    except Exception as error:  # noqa: BLE001
        lines.append(f"no targets: {error!r}")
    probe = """(async () => {
      const within = (promise, ms) => Promise.race([promise.then(v => "ok " + v, e => "error " + e),
                                                    new Promise(resolve => setTimeout(() => resolve("no answer in " + ms + " ms"), ms))]);
      const registration = await within(navigator.serviceWorker.getRegistration().then(r => JSON.stringify(
        {active: r?.active?.state, installing: r?.installing?.state, waiting: r?.waiting?.state})), 3000);
      const database = await within(new Promise((resolve, reject) => {
        const request = indexedDB.open("kiosk-device");
        request.onsuccess = () => { request.result.close(); resolve("opened"); };
        request.onerror = () => reject(request.error);
        request.onblocked = () => resolve("blocked");
      }), 3000);
      return JSON.stringify({registration, controlled: !!navigator.serviceWorker.controller, database});
    })()"""
    try:
        lines.append(str(driver.execute_cdp_cmd("Runtime.evaluate", {"expression": probe, "awaitPromise": True, "timeout": 10000})))
    except Exception as error:  # noqa: BLE001
        lines.append(f"the page could not be asked: {error!r}")
    port = urllib.parse.urlsplit(server.base).port
    sockets = subprocess.run(["ss", "-tnpi", f"( dport = :{port} or sport = :{port} )"], capture_output=True, text=True)
    lines.append(sockets.stdout or sockets.stderr)
    return "\n".join(lines)


@pytest.fixture
def browser():
    """A desktop-sized browser for one test."""
    driver = new_driver(DESKTOP)
    yield driver
    driver.quit()


@pytest.fixture
def phone_browser():
    """A phone-sized browser for one test."""
    driver = new_driver(PHONE)
    yield driver
    driver.quit()


# ---------------------------------------------------------------------------------------------
# Helpers shared by the tests


def wait_for(driver, condition, timeout: float = 10, message: str = ""):
    """WebDriverWait with a message, polling every 100 ms."""
    return WebDriverWait(driver, timeout, poll_frequency=0.1,
                         ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)
                         ).until(lambda d: condition(d), message)


def wait_until(predicate, timeout: float, interval: float = 0.1):
    """Polls `predicate` until it returns something truthy or `timeout` passes; returns the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def page_ready(driver) -> None:
    """Waits for the document and the deferred script to have run."""
    wait_for(driver, lambda d: d.execute_script("return document.readyState") == "complete", 30, "page never loaded")


def rows(driver, selector: str = "#results ul.items > li"):
    return driver.find_elements(By.CSS_SELECTOR, selector)


def row_titles(driver, selector: str = "#results ul.items > li", visible_only: bool = False) -> list[str]:
    script = """
        return [...document.querySelectorAll(arguments[0])]
            .filter(li => !arguments[1] || (!li.hidden && li.offsetParent !== null))
            .map(li => (li.querySelector('.title')?.textContent || '').trim());
    """
    return driver.execute_script(script, selector, visible_only)


def severe_console_errors(driver, ignore: tuple[str, ...] = ()) -> list[dict]:
    """SEVERE browser console entries since the last call, without the favicon's 404."""
    return [entry for entry in driver.get_log("browser")
            if entry.get("level") == "SEVERE" and "favicon.ico" not in entry.get("message", "")
            and not any(pattern in entry.get("message", "") for pattern in ignore)]


def screenshot(driver, name: str, size: tuple[int, int]) -> Path:
    """Saves a full-page PNG to artifacts/screenshots/<name>.png. The viewport is made as tall as the page
    for the shot (so the fixed tab bar sits at the page's end, not over its middle), then put back."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    width, height = size
    mobile = width < 500
    metrics = {"width": width, "height": height, "deviceScaleFactor": 2 if mobile else 1, "mobile": mobile}
    page_height = driver.execute_script("return Math.ceil(document.documentElement.scrollHeight)")
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {**metrics, "height": min(max(page_height, height), 6000)})
        driver.execute_script("return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        driver.save_screenshot(str(path))
    finally:
        if mobile:
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        else:
            driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return path


def axe_source() -> str:
    """axe-core's axe.min.js (4.x), as shipped by the axe-playwright-python package (installed without its
    Playwright dependency: only the script is used). axe-selenium-python ships axe-core 3.1.1, whose
    autocomplete rule wrongly flags autocomplete="off" on a search field."""
    override = os.environ.get("AXE_JS")
    if override:
        return Path(override).read_text(encoding="utf-8")
    spec = importlib.util.find_spec("axe_playwright_python")  # located, not imported (no Playwright needed)
    assert spec and spec.origin, "axe-playwright-python is not installed (scripts/browser-tests.sh installs it)"
    return (Path(spec.origin).parent / "axe.min.js").read_text(encoding="utf-8")


def axe_serious_violations(driver) -> list[dict]:
    """axe-core's serious and critical violations on the current page, each with a few of its nodes."""
    driver.execute_script(axe_source())
    result = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        axe.run(document, { resultTypes: ["violations"] })
            .then(r => done({ violations: r.violations }))
            .catch(e => done({ error: String(e) }));
    """)
    assert "error" not in result, f"axe-core failed on {driver.current_url}: {result.get('error')}"
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "nodes": [{"target": n.get("target"), "html": n.get("html", "")[:200],
                        "summary": n.get("failureSummary", "")[:300]} for n in v.get("nodes", [])[:5]]}
            for v in result["violations"] if v.get("impact") in ("serious", "critical")]
