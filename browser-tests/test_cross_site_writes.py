"""Another site cannot write through Kiosk's service worker: a page of another origin that submits forms to
Kiosk's write routes, while the worker controls Kiosk in the same browser, changes nothing (the worker passes a
navigation it did not make to the network untouched, where the CSRF and Origin checks refuse it), and Kiosk's own
writes, online and queued offline, still go through. Before the fix the worker queued such a form, was refused
for the missing CSRF token, fetched a fresh one and sent it again: applied."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from selenium.webdriver.common.by import By

from conftest import PHONE, new_driver, page_ready, wait_for
from device import open, pending_count, wait_until_saved_for_offline


class _AttackerPages(BaseHTTPRequestHandler):
    """Pages of another site (http://localhost:PORT, another origin and site than http://127.0.0.1:KIOSK): each
    submits one form to Kiosk as soon as it loads, as a hostile page the user happens to visit would."""

    kiosk = ""  # http://127.0.0.1:PORT, set per test

    def do_GET(self):  # noqa: N802 (the standard library's name)
        query = parse_qs(urlparse(self.path).query)
        target = query.get("target", ["/"])[0]
        fields = {name: values[0] for name, values in query.items() if name not in ("target", "referrer")}
        referrer = query.get("referrer", ["strict-origin-when-cross-origin"])[0]
        inputs = "".join(f'<input type="hidden" name="{name}" value="{value}">' for name, value in fields.items())
        html = (f'<!doctype html><meta name="referrer" content="{referrer}"><title>Win a prize</title>'
                f'<form id="f" method="post" action="{self.kiosk}{target}">{inputs}</form>'
                '<script>document.getElementById("f").submit()</script>')
        body = html.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):  # quiet
        pass


def _attack(driver, attacker: str, action: str, fields: dict[str, str], kiosk_origin: str, referrer: str | None = None) -> str:
    """Opens the attacker's page, which submits its form to Kiosk, waits until the browser has left it, and returns
    what Kiosk answered."""
    query = "&".join([f"target={action}", *(f"{name}={value}" for name, value in fields.items())]
                     + ([f"referrer={referrer}"] if referrer else []))
    driver.get(f"{attacker}/?{query}")
    wait_for(driver, lambda d: d.current_url.startswith(kiosk_origin), 20, f"the attacker's form to {action} never left its page")
    page_ready(driver)
    return driver.page_source


def test_forms_of_another_site_change_nothing_while_kiosks_own_writes_still_go_through(start_server, tmp_path):
    # Given a phone on which Kiosk's service worker controls Kiosk and has saved it for offline, and a site elsewhere.
    data_dir = str(tmp_path / "data")
    server = start_server(data_dir)
    attacker_server = ThreadingHTTPServer(("127.0.0.1", 0), _AttackerPages)
    _AttackerPages.kiosk = server.url("")
    threading.Thread(target=attacker_server.serve_forever, daemon=True).start()
    attacker = f"http://localhost:{attacker_server.server_address[1]}"
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        open(driver, server.url("/dogs"))
        dogs = [item["itemID"] for item in server.api("/api/dogs")["items"]]
        assert server.api("/api/favorites")["items"] == []

        # When the other site's pages submit forms to star a character and to delete and move dogs, with and without
        # a referrer, while the worker controls Kiosk in this browser,
        answers = [
            _attack(driver, attacker, "/favorites/rickandmorty/2", {"action": "add", "return": "/"}, server.base),
            _attack(driver, attacker, f"/dogs/{dogs[0]}/delete", {}, server.base, referrer="no-referrer"),
            _attack(driver, attacker, f"/dogs/{dogs[1]}/move", {"to": "4"}, server.base),
            _attack(driver, attacker, "/dogs/reset", {}, server.base, referrer="no-referrer"),
        ]

        # Then Kiosk itself refused each, saying why, and nothing changed or waits to be sent.
        for answer in answers:
            assert "sent from another site" in answer or "security token" in answer, answer[:2000]
        assert server.api("/api/favorites")["items"] == []
        assert [item["itemID"] for item in server.api("/api/dogs")["items"]] == dogs
        open(driver, server.url("/"))
        assert pending_count(driver) == 0

        # And Kiosk's own star on a list still goes through the worker and is applied.
        open(driver, server.url("/rickandmorty"))
        first = driver.find_element(By.CSS_SELECTOR, "#results ul.items > li form.star button")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", first)
        first.click()
        wait_for(driver, lambda d: len(server.api("/api/favorites")["items"]) == 1, 15, "the page's own star was not applied")

        # And a star on a detail page made while Kiosk is stopped waits on the device and is applied when it is back.
        port = server.bound_port
        open(driver, server.url("/rickandmorty/2"))
        server.stop()
        open(driver, server.url("/rickandmorty/2"))
        star = driver.find_element(By.CSS_SELECTOR, "main form.star button")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", star)
        star.click()
        wait_for(driver, lambda d: pending_count(d) == 1, 15, "the detail's star did not wait in the outbox")
        server = start_server(data_dir, port=port)
        open(driver, server.url("/favorites"))
        wait_for(driver, lambda d: pending_count(d) == 0, 30, "the detail's star still waits after Kiosk answered")
        favorites = [item["itemID"] for item in server.api("/api/favorites")["items"]]
        assert "2" in favorites and len(favorites) == 2, favorites
    finally:
        driver.quit()
        attacker_server.shutdown()
