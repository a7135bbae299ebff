"""The console as a developer's main screen: two-line rows on a phone, the list collapsed to names beside an
open request, quick filter chips, the filter applied as it is typed, local times, and a store hit said as such;
light and dark, with screenshots."""

from __future__ import annotations

import subprocess
import urllib.request

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import DESKTOP, PHONE, axe_serious_violations, new_driver, page_ready, screenshot


def fetch(server, path: str) -> None:
    with urllib.request.urlopen(server.url(path), timeout=30) as response:
        response.read()


def table_rows(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#results table.requests tbody tr")


def visible_headers(driver) -> list[str]:
    return [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#results table.requests thead th") if th.is_displayed()]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_phone_each_request_is_a_two_line_row_without_sideways_scrolling(fresh_server, scheme):
    for path in ("/api/rickandmorty", "/api/marvel", "/api/dogs", "/api/dogs", "/api/nyt"):
        fetch(fresh_server, path)
    driver = new_driver(PHONE)
    try:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        driver.get(fresh_server.url("/debug"))
        page_ready(driver)
        rows = table_rows(driver)
        assert len(rows) >= 5
        # No sideways scrolling, and no row taller than a few lines
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        heights = [row.rect["height"] for row in rows]
        assert max(heights) < 90, heights
        for row in rows:
            status, name, host = (row.find_element(By.CSS_SELECTOR, selector) for selector in ("td.st", "td.name", "td.host"))
            # Status and method-and-path on the first line; the host below them
            assert abs(status.rect["y"] - name.rect["y"]) < 8, (status.rect, name.rect)
            assert host.rect["y"] > name.rect["y"] + 8
            assert name.text.startswith("GET /")
        # The catalog tab bar is not the console's
        assert not driver.find_elements(By.CSS_SELECTOR, "nav.tabs")
        assert not axe_serious_violations(driver)
        screenshot(driver, f"console-phone-{scheme}", PHONE)
    finally:
        driver.quit()


def test_on_a_wide_screen_an_open_request_leaves_the_names_and_chips_and_typing_filter_the_list(fresh_server):
    for path in ("/api/dogs", "/api/dogs", "/api/rickandmorty"):
        fetch(fresh_server, path)
    driver = new_driver(DESKTOP)
    try:
        driver.get(fresh_server.url("/debug"))
        page_ready(driver)
        driver.execute_script("window.kioskMark = 'same document'")
        assert visible_headers(driver)[:3] == ["Name", "Status", "Host"]
        # Times are said in the browser's time zone once the script ran (UTC only without it)
        time = driver.find_element(By.CSS_SELECTOR, "#results td.time time")
        assert "UTC" not in time.text and time.get_attribute("title").endswith("UTC")
        # When a request is opened beside the list, the list keeps only names and statuses
        driver.find_element(By.CSS_SELECTOR, "#results td.name a").click()
        WebDriverWait(driver, 10).until(lambda d: d.find_element(By.ID, "detail-pane").is_displayed())
        assert visible_headers(driver) == ["Name", "Status"]
        screenshot(driver, "console-desktop-open", DESKTOP)
        driver.find_element(By.TAG_NAME, "body").send_keys("\ue00c")  # Escape
        WebDriverWait(driver, 10).until(lambda d: not d.find_element(By.ID, "detail-pane").is_displayed())
        # The Store chip keeps the answers from the store, said as such
        driver.find_element(By.LINK_TEXT, "Store").click()
        WebDriverWait(driver, 10).until(lambda d: "filter=cache%3Ahit" in d.current_url)
        page_ready(driver)
        assert table_rows(driver) and all(row.find_element(By.CSS_SELECTOR, "td.st").text == "store" for row in table_rows(driver))
        driver.find_element(By.CSS_SELECTOR, "#results td.name a").click()
        WebDriverWait(driver, 10).until(lambda d: "Answered from the store — no upstream request" in d.find_element(By.ID, "detail-pane").text)
        driver.find_element(By.TAG_NAME, "body").send_keys("\ue00c")
        WebDriverWait(driver, 10).until(lambda d: not d.find_element(By.ID, "detail-pane").is_displayed())
        driver.get(fresh_server.url("/debug"))
        page_ready(driver)
        driver.execute_script("window.kioskMark = 'same document'")
        # Typing a filter narrows the list without a page load, and the address says the filter
        field = driver.find_element(By.ID, "debug-filter")
        field.send_keys("endpoint:dogs.list")
        WebDriverWait(driver, 10).until(lambda d: "filter=endpoint%3Adogs.list" in d.current_url)
        WebDriverWait(driver, 10).until(lambda d: all("/dogs.json" in row.text for row in table_rows(d)) and len(table_rows(d)) == 2)
        assert driver.execute_script("return window.kioskMark") == "same document"
        assert driver.switch_to.active_element == field
        # And a half-typed filter shows its mistake in place, without leaving the page
        field.send_keys(" status:")
        WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#debug-filter-error"))
        assert driver.execute_script("return window.kioskMark") == "same document"
        # (the box itself says it is refused, and why, to a screen reader that comes back to it)
        assert field.get_attribute("aria-invalid") == "true" and field.get_attribute("aria-describedby") == "debug-filter-error"
        assert not axe_serious_violations(driver)
        # And mended, it is no longer said to be refused
        field.send_keys("5xx")
        WebDriverWait(driver, 10).until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#debug-filter-error"))
        WebDriverWait(driver, 10).until(lambda d: field.get_attribute("aria-invalid") is None)
    finally:
        driver.quit()


def test_on_a_phone_the_insights_page_fits_the_screen_in_both_languages(fresh_server):
    # Insights lists the cache decisions by their long labels (longer in Spanish) beside their counts.
    for path in ("/api/rickandmorty", "/api/dogs", "/api/nyt"):
        fetch(fresh_server, path)
    driver = new_driver(PHONE)
    try:
        for language in ("en", "es"):
            driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Accept-Language": language}})
            driver.execute_cdp_cmd("Network.enable", {})
            driver.get(fresh_server.url("/debug/insights"))
            page_ready(driver)
            assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == language
            # No sideways scrolling, and each count on one line beside its label
            assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"), language
            lines = driver.execute_script("""return [...document.querySelectorAll('dl.insights-decisions dd')].map(dd => {
                const range = document.createRange(); range.selectNodeContents(dd);
                return new Set([...range.getClientRects()].map(rect => Math.round(rect.top))).size; });""")
            assert lines and all(count == 1 for count in lines), (language, lines)
    finally:
        driver.quit()


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_rules_page_fits_the_screen_with_every_rules_buttons_in_reach(fresh_server, size):
    # Given a rule named by what it does (a long name) with its three buttons, added from the command line
    subprocess.run([fresh_server.binary, "rule", "add", "--data-dir", fresh_server.data_dir, "--url", "http://nowhere.invalid/*",
                    "--status", "418", "--set-header", "X-Test: 1", "--remove-header", "ETag", "--latency", "250"],
                   check=True, capture_output=True)
    driver = new_driver(size, language="es")
    try:
        # When the rules page is opened in Spanish (the longer words)
        driver.get(fresh_server.url("/debug/rules"))
        page_ready(driver)
        # Then neither the page nor its table scrolls sideways, and the last button (Delete) is on the screen
        assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        assert driver.execute_script("const t = document.querySelector('#results .table-scroll'); return t.scrollWidth <= t.clientWidth")
        delete = driver.find_element(By.CSS_SELECTOR, "#rule-1 form.delete button, #rule-1 button.delete, #rule-1 form:last-of-type button")
        assert driver.execute_script("const r = arguments[0].getBoundingClientRect(); return r.right <= window.innerWidth", delete)
    finally:
        driver.quit()


@pytest.mark.parametrize("language", ["en", "es"])
def test_every_console_control_whose_name_is_set_apart_names_it_by_its_visible_label_first(fresh_server, language):
    # Given a logged exchange, a rewrite rule and a mock rule, so that every page shows its buttons
    fetch(fresh_server, "/api/rickandmorty")
    subprocess.run([fresh_server.binary, "rule", "add", "--data-dir", fresh_server.data_dir, "--url", "http://nowhere.invalid/*",
                    "--status", "418"], check=True, capture_output=True)
    subprocess.run([fresh_server.binary, "mock", "add", "--data-dir", fresh_server.data_dir, "--url", "http://nowhere.invalid/m",
                    "--body", "{}"], check=False, capture_output=True)
    driver = new_driver(DESKTOP, language=language)
    try:
        for path in ("/debug", "/debug/rules", "/debug/mocks", "/debug/requests/1"):
            # When each page is read as a voice-control user reads it
            driver.get(fresh_server.url(path))
            page_ready(driver)
            # Then a control named apart from its text (aria-label) names it by what it shows first (WCAG 2.5.3)
            mismatched = driver.execute_script("""return [...document.querySelectorAll('button[aria-label], a[aria-label], [role=button][aria-label]')]
                .filter(element => element.offsetParent !== null)
                .map(element => [element.innerText.trim().replace(/\\s+/g, ' '), element.getAttribute('aria-label')])
                .filter(([shown, name]) => shown && /\\p{L}/u.test(shown) && !name.toLowerCase().startsWith(shown.toLowerCase()));""")
            assert mismatched == [], (path, mismatched)
    finally:
        driver.quit()
