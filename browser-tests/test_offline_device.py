"""Kiosk in your pocket: with the Kiosk server itself stopped, the app reads what this device saved (its
service worker), says so, and never shows the browser's own error page; the device's storage is bounded and
can be cleared."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import shutil
import urllib.request
from pathlib import Path

from selenium.webdriver.common.by import By

from conftest import PHONE, axe_serious_violations, new_driver, screenshot, wait_for
from device import (device_call, open, pictures_loaded, unreachable_banner, wait_until_saved_for_offline)


def test_with_kiosk_stopped_the_app_reads_every_page_seen_or_saved_with_pictures_and_a_banner(start_server, tmp_path):
    # Given a phone that opened Kiosk once, read a character, and let it save for offline in the background.
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        open(driver, server.url("/rickandmorty/2"))
        open(driver, server.url("/marvel"))
        marvel_detail = driver.find_element(By.CSS_SELECTOR, "#results ul.items li > a").get_dom_attribute("href")

        # When the Kiosk server stops (the laptop went to sleep).
        server.stop()

        # Then the home page (what the installed app opens on) shows, with the banner naming when it was saved.
        open(driver, server.url("/"))
        assert driver.find_element(By.CSS_SELECTOR, "#main h1").text == "Home"
        wait_for(driver, lambda d: unreachable_banner(d).startswith("Kiosk is unreachable — showing what this device saved "),
                 10, "no unreachable banner on the home page")
        assert "ago" in unreachable_banner(driver) or "now" in unreachable_banner(driver), unreachable_banner(driver)
        # It is not the upstream-offline banner of a reachable Kiosk.
        assert driver.execute_script("return document.getElementById('offline-banner')") is None

        # And every catalog's first page, saved in the background, reads with its pictures.
        for path in ("/nyt", "/marvel", "/rickandmorty", "/dogs", "/favorites"):
            open(driver, server.url(path))
            assert unreachable_banner(driver), path
            if path != "/favorites":
                assert len(driver.find_elements(By.CSS_SELECTOR, "#results ul.items > li")) > 0, path
                loaded, total = pictures_loaded(driver)
                assert total > 0 and loaded == total, f"{path}: {loaded} of {total} pictures"
            if path == "/rickandmorty":
                screenshot(driver, "offline-unreachable-phone", PHONE)
                assert axe_serious_violations(driver) == []

        # And a detail saved in the background (never opened) and one read before both show.
        open(driver, server.url(marvel_detail))
        assert driver.execute_script("return document.querySelector('#main')?.dataset.view") == "detail"
        assert unreachable_banner(driver)
        open(driver, server.url("/rickandmorty/2"))
        assert driver.find_element(By.CSS_SELECTOR, "#main h1").text == "Morty Smith"
        loaded, total = pictures_loaded(driver, "#main img")
        assert total > 0 and loaded == total

        # And a page never saved gets Kiosk's offline page, listing what is, never the browser's error page.
        open(driver, server.url("/rickandmorty?page=9"))
        assert driver.find_element(By.CSS_SELECTOR, "#main h1").text == "Not saved on this device"
        saved = driver.execute_script("return [...document.querySelectorAll('#saved-pages a')].map(a => a.getAttribute('href'))")
        assert "/rickandmorty/2" in saved and "/marvel" in saved, saved
        screenshot(driver, "offline-not-saved-phone", PHONE)
        assert axe_serious_violations(driver) == []
    finally:
        driver.quit()


def test_searching_with_kiosk_stopped_filters_the_rows_shown_and_searches_when_kiosk_is_back(start_server, tmp_path):
    # Given a phone that read Rick and Morty's first page, then lost Kiosk.
    server = start_server(str(tmp_path / "data"))
    port = server.bound_port
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        open(driver, server.url("/rickandmorty"))
        server.stop()
        open(driver, server.url("/rickandmorty"))
        wait_for(driver, lambda d: unreachable_banner(d), 10, "no unreachable banner")
        history = driver.execute_script("return history.length")

        # When a search of a name never searched before is typed (a list this device holds no copy of).
        box = driver.find_element(By.CSS_SELECTOR, "form.search input[name=q]")
        box.send_keys("smith")

        # Then the page stays, its rows filtered to the matches, and the hint says why it only filters.
        def filtered(d):
            rows = d.find_elements(By.CSS_SELECTOR, "#results ul.items > li")
            shown = [row for row in rows if row.is_displayed()]
            return rows and 0 < len(shown) < len(rows) and all("smith" in row.text.lower() for row in shown)
        wait_for(driver, filtered, 10, "the rows shown were not filtered")
        assert driver.find_element(By.CSS_SELECTOR, "#main h1").text != "Not saved on this device"
        assert "q=" not in driver.current_url, driver.current_url
        assert driver.execute_script("return history.length") == history
        hint = lambda d: d.execute_script("return document.getElementById('js-hint')?.textContent || ''")
        assert "Kiosk is unreachable" in hint(driver), hint(driver)

        # When Kiosk is back on the same address.
        server = start_server(str(tmp_path / "data"), port=port)

        # Then the search typed is sent (it is in the address, its results shown) and the hint that Kiosk is
        # unreachable goes.
        wait_for(driver, lambda d: "q=smith" in d.current_url, 30, "the search was not sent when Kiosk came back")
        wait_for(driver, lambda d: "Kiosk is unreachable" not in hint(d), 10, "the unreachable hint stayed")
        rows = driver.find_elements(By.CSS_SELECTOR, "#results ul.items > li")
        assert rows and all("smith" in row.text.lower() for row in rows if row.is_displayed())
    finally:
        driver.quit()


def test_a_page_opened_from_the_device_hours_later_says_its_ages_as_of_now(start_server, tmp_path):
    # Given a phone that read Rick and Morty's first page as it was fetched ("Updated just now") and saved it.
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        open(driver, server.url("/rickandmorty"))
        status = lambda d: d.find_element(By.CSS_SELECTOR, "#main p.status").text
        assert status(driver).startswith("Updated just now"), status(driver)

        # When Kiosk stops, and the page is opened from the device three hours later (the phone's clock moved on).
        server.stop()
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {
            "source": "{ const real = Date.now; Date.now = () => real() + 3 * 3600 * 1000; }"})
        open(driver, server.url("/rickandmorty"))

        # Then the list says it was updated 3 h ago, not what the page said when it was saved, and the banner that the
        # device saved it 3 h ago.
        wait_for(driver, lambda d: status(d).startswith("Updated 3 h ago"), 10, "the age stayed as saved")
        wait_for(driver, lambda d: "saved 3 h ago" in unreachable_banner(d), 10, "no banner saying when the page was saved")

        # And a minute later, with the page still open, both have moved on with the clock.
        driver.execute_script("{ const real = Date.now; Date.now = () => real() + 60 * 60 * 1000; }"
                              "document.dispatchEvent(new Event('visibilitychange'));")
        wait_for(driver, lambda d: status(d).startswith("Updated 4 h ago"), 5, "the age did not advance on the open page")
        assert "saved 4 h ago" in unreachable_banner(driver), unreachable_banner(driver)
    finally:
        driver.quit()


def test_settings_says_what_the_device_holds_and_clear_empties_it(start_server, tmp_path):
    # Given a device that saved for offline, on its settings page.
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        open(driver, server.url("/settings"))
        panel = driver.find_element(By.ID, "device")
        assert panel.is_displayed()
        wait_for(driver, lambda d: "This device holds" in d.find_element(By.ID, "device-usage").text, 10)
        usage = driver.find_element(By.ID, "device-usage").text
        assert "of 50 MB" in usage and "pages and" in usage, usage
        totals = device_call(driver, "totals")
        assert totals["pages"] > 20 and totals["images"] > 20, totals

        # When Clear is pressed.
        clear = driver.find_element(By.ID, "device-clear")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", clear)
        clear.click()

        # Then nothing is left but the app shell, and the panel says so.
        wait_for(driver, lambda d: "Saved pages cleared." in d.find_element(By.ID, "device-usage").text, 10)
        assert device_call(driver, "totals") == {"bytes": 0, "pages": 0, "images": 0}
        assert driver.execute_script("return caches.has('kiosk-pages')") is False
    finally:
        driver.quit()


def test_saving_for_offline_from_an_error_page_neither_keeps_it_nor_asks_for_it_again(start_server, tmp_path):
    # Given a phone whose first page of Kiosk is a 404 (a mistyped address).
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/no-such-catalog"))
        assert driver.execute_script("return document.querySelector('#main')?.dataset.view") == "error"

        # When saving for offline runs in the background from it.
        wait_until_saved_for_offline(driver)

        # Then the catalogs were saved, the error page was not, and the page asked for its own address only once
        # (its navigation): a second 404 would be logged, late, as the next page's console error.
        pages = {entry["url"] for entry in device_call(driver, "entries", "page")}
        assert "/rickandmorty" in pages and "/no-such-catalog" not in pages, sorted(pages)
        fetched = driver.execute_script(
            "return performance.getEntriesByType('resource').filter(e => new URL(e.name).pathname === '/no-such-catalog')"
            ".map(e => e.initiatorType)")
        assert fetched == [], fetched
    finally:
        driver.quit()


def test_the_device_evicts_the_least_recently_used_pages_first_to_stay_within_its_limit(start_server, tmp_path):
    # Given a device holding pages read in a known order.
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_for(driver, lambda d: d.execute_script("return !!navigator.serviceWorker?.controller"), 20)
        device_call(driver, "setSetting", "saveForOffline", False)
        device_call(driver, "clear")
        for path in ("/rickandmorty/1", "/rickandmorty/2", "/rickandmorty/3"):
            open(driver, server.url(path))
            driver.execute_script("return new Promise(r => setTimeout(r, 50))")
        pages = {entry["url"]: entry for entry in device_call(driver, "entries", "page")}
        assert {"/rickandmorty/1", "/rickandmorty/2", "/rickandmorty/3"} <= set(pages), sorted(pages)

        # When the limit leaves room for just what was used since the second page.
        since = pages["/rickandmorty/2"]["usedAt"]
        device_call(driver, "setSetting", "limitBytes",
                    sum(entry["bytes"] for entry in device_call(driver, "entries") if entry["usedAt"] >= since))
        evicted = device_call(driver, "evict")

        # Then the oldest went first, and the two most recent stayed.
        assert "/rickandmorty/1" in evicted, evicted
        left = {entry["url"] for entry in device_call(driver, "entries", "page")}
        assert {"/rickandmorty/2", "/rickandmorty/3"} <= left and "/rickandmorty/1" not in left, sorted(left)
        assert device_call(driver, "totals")["bytes"] <= device_call(driver, "limit")
    finally:
        driver.quit()


def test_a_new_version_of_the_app_shell_is_offered_and_never_mixed_with_the_old(start_server, tmp_path, kiosk_bin):
    # Given Kiosk installed from a copy of the binary and its resources, open on a phone.
    app = tmp_path / "app"
    app.mkdir()
    binary = app / "kiosk"
    shutil.copy2(kiosk_bin, binary)
    # Every module's resource bundle (the reader's and the console's) goes beside the binary.
    for resources in Path(os.environ.get("KIOSK_BIN", kiosk_bin)).resolve().parent.glob("kiosk_*.resources"):
        shutil.copytree(resources, app / resources.name)
    data_dir = str(tmp_path / "data")
    server = start_server(data_dir, binary=str(binary))
    port = server.bound_port
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/rickandmorty"))
        wait_for(driver, lambda d: d.execute_script("return !!navigator.serviceWorker?.controller"), 20)
        old_sheet = driver.execute_script("return document.querySelector('link[rel=stylesheet]').getAttribute('href')")

        # When Kiosk is upgraded (a new stylesheet) and restarted on the same address.
        server.stop()
        with (app / "kiosk_KioskWeb.resources" / "app.css").open("a") as sheet:
            sheet.write("\n/* the next version */\n")
        server = start_server(data_dir, port=port, binary=str(binary))

        # Then the open page keeps the old shell and offers the new version.
        open(driver, server.url("/rickandmorty"))
        wait_for(driver, lambda d: d.execute_script("return !!document.getElementById('update-bar')"), 30, "no new-version offer")
        bar = driver.find_element(By.ID, "update-bar")
        assert bar.text.startswith("A new version of Kiosk is ready."), bar.text
        screenshot(driver, "offline-new-version-phone", PHONE)
        assert axe_serious_violations(driver) == []

        # When Reload is pressed, the page comes back whole on the new version.
        driver.execute_script("window.__before = true")
        bar.find_element(By.TAG_NAME, "button").click()
        wait_for(driver, lambda d: d.execute_script("return window.__before !== true && document.readyState === 'complete'"), 30,
                 "the page was not reloaded")
        new_sheet = driver.execute_script("return document.querySelector('link[rel=stylesheet]').getAttribute('href')")
        assert new_sheet != old_sheet
        assert driver.execute_script("return [...document.styleSheets].some(s => s.href && s.href.endsWith(arguments[0]))", new_sheet)
        assert not driver.find_elements(By.ID, "update-bar")
    finally:
        driver.quit()


def test_a_kiosk_that_does_not_answer_in_time_is_said_to_be_slow_not_unreachable(start_server, tmp_path):
    # Given a phone that saved the app for offline and read the Rick and Morty list
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        open(driver, server.url("/rickandmorty"))
        # When the Kiosk server accepts connections but does not answer (stopped, as a machine busy or a Kiosk waiting on
        # a slow catalog looks from the phone)
        server.process.send_signal(signal.SIGSTOP)
        try:
            open(driver, server.url("/rickandmorty"))
            # Then the saved copy shows, and the banner says Kiosk is slow to answer, not that it cannot be reached
            wait_for(driver, lambda d: unreachable_banner(d).startswith("Kiosk is taking too long to answer — showing what this device saved "),
                     15, f"banner: {unreachable_banner(driver)!r}")
        finally:
            server.process.send_signal(signal.SIGCONT)
        # And once Kiosk answers again, the banner goes by itself
        wait_for(driver, lambda d: unreachable_banner(d) == "", 30, "the banner stayed after Kiosk answered again")
    finally:
        driver.quit()


def test_an_open_page_notices_kiosk_going_away_and_coming_back_without_a_tap(saved_phone, start_server):
    # Given a phone reading the Rick and Morty list, loaded from Kiosk
    server, driver = saved_phone.server, saved_phone.driver
    port = server.bound_port
    open(driver, server.url("/rickandmorty"))
    assert unreachable_banner(driver) == ""
    # When the Kiosk server stops while the page is read, and the device says it went offline
    server.stop()
    driver.execute_script("window.dispatchEvent(new Event('offline'))")
    # Then the banner says Kiosk is unreachable, with nothing tapped
    wait_for(driver, lambda d: unreachable_banner(d).startswith("Kiosk is unreachable — this page is as it was loaded "),
             15, f"banner: {unreachable_banner(driver)!r}")
    # And when Kiosk answers again, it goes by itself
    start_server(saved_phone.data_dir, port=port)
    wait_for(driver, lambda d: unreachable_banner(d) == "", 30, "the banner stayed after Kiosk answered again")


def test_the_page_saying_a_page_was_never_saved_becomes_that_page_once_kiosk_answers_again(saved_phone, start_server):
    # Given a phone whose Kiosk server stopped, opening a page it never saved
    server, driver = saved_phone.server, saved_phone.driver
    port = server.bound_port
    server.stop()
    open(driver, server.url("/rickandmorty?page=9"))
    heading = lambda d: d.find_element(By.CSS_SELECTOR, "#main h1").text
    assert heading(driver) == "Not saved on this device"
    # (it offers to try again)
    assert driver.find_element(By.ID, "retry-page").text == "Retry"
    # When Kiosk answers again
    start_server(saved_phone.data_dir, port=port)
    # Then the page asked for replaces it by itself, with nothing tapped
    wait_for(driver, lambda d: heading(d) != "Not saved on this device"
             and len(d.find_elements(By.CSS_SELECTOR, "#results ul.items > li")) > 0, 45, "the offline page stayed after Kiosk answered again")


def test_a_page_never_saved_waits_for_a_kiosk_slowed_by_its_catalog_and_not_for_one_out_of_reach(start_server, tmp_path):
    # Given a phone that saved the app for offline, but never these searches
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        # When the catalog takes 6 s to answer a search, past the worker's 3 s for a page it has a copy of
        server.set_faults(latencyMilliseconds=6000)
        open(driver, server.url("/rickandmorty?q=Sanchez"))
        # Then the page is Kiosk's answer, the search's results, not the page saying Kiosk cannot be reached
        assert driver.find_element(By.CSS_SELECTOR, "#main h1").text != "Not saved on this device"
        assert driver.find_elements(By.CSS_SELECTOR, "#results ul.items > li"), driver.find_element(By.TAG_NAME, "body").text[:300]
        # And when Kiosk itself is out of reach (stopped, as a laptop asleep looks from the phone), the offline page
        # comes at once rather than after the 20 s a slow catalog is waited for
        server.set_faults(latencyMilliseconds=0)
        server.process.send_signal(signal.SIGSTOP)
        try:
            started = time.monotonic()
            open(driver, server.url("/rickandmorty?q=Morty"))
            assert driver.find_element(By.CSS_SELECTOR, "#main h1").text == "Not saved on this device"
            assert time.monotonic() - started < 10, time.monotonic() - started
        finally:
            server.process.send_signal(signal.SIGCONT)
    finally:
        driver.quit()


def test_a_page_made_from_an_answer_the_debugger_edited_is_shown_but_never_saved_on_the_device(start_server, tmp_path):
    # Given a phone that read a character, saved on the device as it was read (once its service worker runs)
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        # (asked of the upstream, so that his exchange is logged: the list had stored him; his page asks for his
        # episodes too, so his own exchange names the endpoint)
        open(driver, server.url("/rickandmorty/2?refresh=1"))
        assert driver.find_element(By.CSS_SELECTOR, "#main h1").text == "Morty Smith"
        endpoint = next(r["endpoint"] for r in server.api("/debug/api/requests?source=rickandmorty&limit=1000")
                        if r["url"].split("?")[0].endswith("/character/2"))

        # When a rewrite rule renames him and the page is read again: the edit is shown
        rule = {"match": {"endpoint": endpoint},
                "actions": {"patch": [{"op": "replace", "path": "/name", "value": "Edited Morty"}]}}
        request = urllib.request.Request(server.url("/debug/api/rules"), data=json.dumps(rule).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 201
        open(driver, server.url("/rickandmorty/2?refresh=1"))
        wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#main h1").text == "Edited Morty", 30, "the edit is not shown")

        # Then, with the Kiosk server stopped, the device shows the character as the upstream said, never the edit
        server.stop()
        open(driver, server.url("/rickandmorty/2"))
        wait_for(driver, lambda d: unreachable_banner(d), 10, "no unreachable banner")
        assert driver.find_element(By.CSS_SELECTOR, "#main h1").text == "Morty Smith"
    finally:
        driver.quit()


def switch_to_spanish_and_wait_for_saving(driver) -> None:
    """Taps the header's language button of an English page and waits until the device saved its pages again in Spanish."""
    driver.find_element(By.CSS_SELECTOR, "form.lang button").click()
    wait_for(driver, lambda d: d.execute_script("return document.documentElement.lang") == "es", 15, "no switch to Spanish")
    wait_for(driver, lambda d: device_call(d, "setting", "savedLanguage", "") == "es", 90, "no saving in Spanish")


def test_after_a_switch_of_language_the_device_saves_its_pages_again_in_the_language_chosen(start_server, tmp_path):
    # Given a phone that saved Kiosk for offline in English
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        assert driver.execute_script("return document.documentElement.lang") == "en"

        # When the reader switches to Spanish (the header's button)
        # Then the device saves its pages again, in Spanish, at once rather than at the next day's run
        switch_to_spanish_and_wait_for_saving(driver)

        # And, with the Kiosk server stopped, a catalog saved before reads in Spanish
        server.stop()
        open(driver, server.url("/rickandmorty"))
        wait_for(driver, lambda d: unreachable_banner(d), 10, "no unreachable banner")
        assert driver.execute_script("return document.documentElement.lang") == "es"
        # And a page the device never saved gets the offline page in Spanish too, its frame and ages included (its copy
        # was saved when the worker was installed, in English)
        open(driver, server.url("/rickandmorty/555"))
        assert driver.execute_script("return document.documentElement.lang") == "es"
        text = driver.find_element(By.TAG_NAME, "body").text
        assert "Página no guardada en este dispositivo" in text or "no se guardó" in text.lower(), text[:400]
        assert "Not saved" not in text and " ago" not in text, text[:400]

        # And the switch, tapped while Kiosk is out of reach, leaves the page being read and says why (never the browser's
        # error page)
        open(driver, server.url("/rickandmorty"))
        driver.find_element(By.CSS_SELECTOR, "form.lang button").click()
        wait_for(driver, lambda d: "el idioma se podrá cambiar cuando responda" in
                 (d.execute_script("return document.getElementById('undo-toast')?.textContent") or ""), 10, "no toast")
        assert driver.current_url == server.url("/rickandmorty")
        assert driver.execute_script("return document.documentElement.lang") == "es"
        assert driver.find_elements(By.CSS_SELECTOR, "#results ul.items > li")

        # And once Kiosk answers again, the sentence saying it does not goes, before its ten seconds are up
        port = server.bound_port
        server = start_server(str(tmp_path / "data"), port=port)
        wait_for(driver, lambda d: d.execute_script("return document.getElementById('undo-toast')?.hidden") is True, 6,
                 "the toast stayed after Kiosk came back")
    finally:
        driver.quit()


def test_with_kiosk_stopped_a_search_saved_in_the_language_before_is_not_mixed_into_a_page_of_the_new_one(start_server, tmp_path):
    # Given a phone that searched "smith" in English (its results saved), then switched to Spanish on the list, whose
    # pages the device saved again in Spanish (not that search)
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        open(driver, server.url("/rickandmorty?q=smith"))
        open(driver, server.url("/rickandmorty"))
        switch_to_spanish_and_wait_for_saving(driver)
        # When Kiosk stops and the same search is typed on the Spanish list
        server.stop()
        open(driver, server.url("/rickandmorty"))
        wait_for(driver, lambda d: unreachable_banner(d), 10, "no unreachable banner")
        driver.find_element(By.CSS_SELECTOR, "form.search input[name=q]").send_keys("smith")
        # Then the rows shown are filtered, in Spanish, as for a search the device holds no copy of: the English copy's
        # rows and words are not swapped into the Spanish page
        def filtered(d):
            rows = d.find_elements(By.CSS_SELECTOR, "#results ul.items > li")
            shown = [row for row in rows if row.is_displayed()]
            return rows and 0 < len(shown) < len(rows) and all("smith" in row.text.lower() for row in shown)
        wait_for(driver, filtered, 10, "the rows shown were not filtered")
        assert driver.execute_script("return document.documentElement.lang") == "es"
        text = driver.find_element(By.ID, "main").text
        assert "results for" not in text and "Alive" not in text, text[:400]
    finally:
        driver.quit()


def test_the_offline_page_tells_saved_pages_of_one_title_apart_by_their_addresses(start_server, tmp_path):
    # Given a phone that read two pages of Rick and Morty's list (one title) and a character (a title of its own)
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        for path in ("/rickandmorty?page=2", "/rickandmorty/2"):
            open(driver, server.url(path))
        # When Kiosk stops and a page never saved is asked for
        server.stop()
        open(driver, server.url("/rickandmorty?page=9"))
        # Then the offline page lists the saved pages, those of one title with their addresses, the others without
        shown = driver.execute_script("""return Object.fromEntries([...document.querySelectorAll('#saved-pages li')].map(li =>
            [li.querySelector('a').getAttribute('href'), li.querySelector('code')?.textContent || null]))""")
        assert shown.get("/rickandmorty?page=2") == "/rickandmorty?page=2" and shown.get("/rickandmorty") == "/rickandmorty", shown
        assert "/rickandmorty/2" in shown and shown["/rickandmorty/2"] is None, shown
        # And they are grouped by catalog: the two list pages and the character under Rick and Morty, Home under the rest
        groups = driver.execute_script("""return [...document.querySelectorAll('#saved-pages section.saved-group')]
            .filter(s => !s.hidden).map(s => [s.querySelector('h3').textContent,
                                              [...s.querySelectorAll('li a')].map(a => a.getAttribute('href'))])""")
        grouped = dict((name, hrefs) for name, hrefs in groups)
        assert {"/rickandmorty?page=2", "/rickandmorty", "/rickandmorty/2"} <= set(grouped.get("Rick and Morty", [])), groups
        assert "/" in grouped.get("Other pages", []) and list(grouped)[-1] == "Other pages", groups
        assert all(hrefs for _, hrefs in groups), groups
        # And each is named by its own title, without the site's name that every one of them ends with
        names = driver.execute_script("return [...document.querySelectorAll('#saved-pages li a')].map(a => a.textContent)")
        assert names and not any(name.endswith("· Kiosk") for name in names), names
        # And the retry button looks like the app's other buttons, not the browser's default
        assert driver.execute_script("return getComputedStyle(document.getElementById('retry-page')).borderRadius") == "8px"
    finally:
        driver.quit()


def test_a_page_saved_while_the_upstream_was_offline_shows_one_banner_once_kiosk_is_unreachable(saved_phone):
    # Given a phone that read a list page while Kiosk's upstream was offline (Kiosk answered from its store, saying so)
    server, driver = saved_phone.server, saved_phone.driver
    open(driver, server.url("/rickandmorty?page=2"))
    server.set_offline(True)
    # (Asked to refresh: a page still fresh is answered from the store without asking the upstream, so with no banner.
    # The device keeps it under the page's own address.)
    open(driver, server.url("/rickandmorty?page=2&refresh=1"))
    wait_for(driver, lambda d: d.execute_script("return !!document.getElementById('offline-banner')"), 10, "no upstream-offline banner")
    time.sleep(1)
    # When Kiosk stops and the page is read again from the device
    server.stop()
    open(driver, server.url("/rickandmorty?page=2"))
    wait_for(driver, lambda d: unreachable_banner(d), 10, "no unreachable banner")
    # Then one banner says what holds now: Kiosk is unreachable; the upstream's offline banner of then is gone
    banners = driver.execute_script("return [...document.querySelectorAll('main .banner')].filter(b => b.offsetParent).map(b => b.textContent)")
    assert len(banners) == 1 and "unreachable" in banners[0], banners


def test_with_kiosk_stopped_a_lists_rows_whose_pages_the_device_lacks_say_so_before_a_tap(saved_phone):
    # Given a phone that saved for offline (each catalog's first page and its items), then read Rick and Morty's
    # second page online and opened one of its characters.
    server, driver = saved_phone.server, saved_phone.driver
    open(driver, server.url("/rickandmorty?page=3"))
    open(driver, server.url("/rickandmorty?page=2"))
    hrefs = driver.execute_script("return [...document.querySelectorAll('#results ul.items li > a')].map(a => a.getAttribute('href'))")
    assert len(hrefs) > 2, hrefs
    open(driver, server.url(hrefs[1]))
    # (and an episode, whose cast are rows too)
    open(driver, server.url("/rickandmorty/episode-1"))

    # When Kiosk stops and the second page is read from the device.
    server.stop()
    open(driver, server.url("/rickandmorty?page=2"))
    wait_for(driver, lambda d: unreachable_banner(d), 10, "no unreachable banner")

    # Then every row but the character opened says it is not saved on this device, in its link's words.
    unsaved = lambda d: d.execute_script("""
        return [...document.querySelectorAll('#results ul.items li > a')]
            .filter(a => a.querySelector('.not-saved')).map(a => a.getAttribute('href'))""")
    wait_for(driver, lambda d: len(unsaved(d)) == len(hrefs) - 1, 10, f"rows marked: {unsaved(driver)}")
    assert hrefs[1] not in unsaved(driver)
    note = driver.find_element(By.CSS_SELECTOR, "#results li.unsaved .not-saved")
    assert note.text == "Not saved on this device" and note.is_displayed()
    # And however many times at once the list says it changed, each row says so once
    driver.execute_script("""document.querySelectorAll('#results .not-saved').forEach(note => note.remove());
        for (let i = 0; i < 3; i++) document.dispatchEvent(new Event('kiosk:updated'))""")
    time.sleep(0.5)
    most = driver.execute_script("""return Math.max(...[...document.querySelectorAll('#results ul.items li > a')]
        .map(a => a.querySelectorAll('.not-saved').length))""")
    assert most == 1, most
    screenshot(driver, "offline-rows-not-saved-phone", PHONE)
    assert axe_serious_violations(driver) == []

    # And scrolled to its end, the next page (saved when it was read) is appended from the device, its rows marked too
    count = lambda d: d.execute_script("return document.querySelectorAll('#results ul.items li > a').length")
    driver.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
    wait_for(driver, lambda d: count(d) > len(hrefs), 10, "the saved next page was not appended")
    wait_for(driver, lambda d: len(unsaved(d)) == count(d) - 1, 10, f"rows marked: {len(unsaved(driver))} of {count(driver)}")
    # And the page after it (never saved) is said to wait for Kiosk, not to be tried again
    more = lambda d: d.execute_script("return document.getElementById('js-more')?.textContent || ''")
    def scrolled_to_note(d):
        d.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
        return more(d) not in ("", "Loading…")
    wait_for(driver, scrolled_to_note, 10, "no note below the list")
    assert more(driver) == "Kiosk is unreachable: the next page can be loaded once it answers.", more(driver)

    # And the first page, saved whole in the background, marks none.
    open(driver, server.url("/rickandmorty"))
    wait_for(driver, lambda d: unreachable_banner(d), 10, "no unreachable banner")
    time.sleep(0.5)
    assert unsaved(driver) == []
    # And an item's page says so of its linked rows (an episode's cast) alike
    open(driver, server.url("/rickandmorty/episode-1"))
    cast_marked = lambda d: d.execute_script("return document.querySelectorAll('#main section ul.items li.unsaved .not-saved').length")
    wait_for(driver, lambda d: cast_marked(d) > 0, 10, "no row of the cast says it is not saved")


def test_with_kiosk_stopped_clearing_the_history_and_the_debugger_link_keep_the_app_and_say_why(saved_phone):
    # Given a phone on the settings page, saved, whose Kiosk server stopped
    server, driver = saved_phone.server, saved_phone.driver
    open(driver, server.url("/settings"))
    server.stop()
    # When the reading history is cleared
    driver.execute_script("document.querySelector('details.confirm-reset').open = true")
    driver.find_element(By.CSS_SELECTOR, "form.clear-history button").click()
    # Then the page stays, and says why nothing was cleared, not the browser's error page
    toast = lambda d: d.execute_script("return document.getElementById('undo-toast')?.textContent || ''")
    wait_for(driver, lambda d: "the reading history can be cleared once it answers" in toast(d), 10, f"toast: {toast(driver)!r}")
    assert driver.current_url.endswith("/settings")
    # When the top bar's Debugger link is followed
    driver.find_element(By.CSS_SELECTOR, "header.top a.tool[href='/debug']").click()
    # Then the device's own offline page is shown, not the browser's error page
    heading = lambda d: d.execute_script("return document.querySelector('#main h1')?.textContent || ''")
    wait_for(driver, lambda d: heading(d) == "Not saved on this device", 15,
             f"{driver.current_url}: {driver.execute_script('return document.title')!r}")


def test_a_list_refreshing_when_kiosk_goes_away_stops_saying_refreshing_and_its_saved_copy_never_does(saved_phone):
    # Given a phone reading a stale Rick and Morty list (its answers fresh for a second, by a rule) that Kiosk
    # revalidates behind it, slowly (the catalog takes 8 s)
    server, driver = saved_phone.server, saved_phone.driver
    subprocess.run([server.binary, "rule", "add", "--data-dir", server.data_dir, "--endpoint", "rickandmorty.characters",
                    "--set-header", "Cache-Control: max-age=1"], check=True, capture_output=True)
    open(driver, server.url("/rickandmorty?refresh=1"))
    time.sleep(2.5)
    server.set_faults(latencyMilliseconds=8000)
    open(driver, server.url("/rickandmorty"))
    status = lambda d: d.execute_script("return document.querySelector('#results p.status')?.textContent || ''")
    assert "refreshing" in status(driver), status(driver)
    # When Kiosk goes away before the refresh ends
    server.process.kill()
    server.process.wait()
    # Then the list stops saying it is refreshing, and still says it is stale
    wait_for(driver, lambda d: "refreshing" not in status(d), 30, f"status: {status(driver)!r}")
    assert "stale" in status(driver), status(driver)
    # And the copy the device saved of it, opened again, does not say so either
    open(driver, server.url("/rickandmorty"))
    wait_for(driver, lambda d: "refreshing" not in status(d), 15, f"status: {status(driver)!r}")


def test_clearing_the_reading_history_says_it_is_done_where_the_reader_is(start_server, tmp_path):
    # Given a reader who opened an item, on the settings page
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/rickandmorty/1"))
        open(driver, server.url("/settings"))
        # When the reading history is cleared
        driver.execute_script("document.querySelector('details.confirm-reset').open = true")
        driver.find_element(By.CSS_SELECTOR, "form.clear-history button").click()
        # Then the page says so in a status where the reader is, its fold-out closed
        toast = lambda d: d.execute_script("return document.getElementById('undo-toast')?.textContent || ''")
        wait_for(driver, lambda d: "Reading history cleared." in toast(d), 10, f"toast: {toast(driver)!r}")
        assert driver.execute_script("return document.getElementById('undo-toast').getAttribute('role')") == "status"
        assert not driver.execute_script("return document.querySelector('details.confirm-reset').open")
    finally:
        driver.quit()
