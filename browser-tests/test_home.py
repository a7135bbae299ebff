"""Home is a reader's front page: what the reader opened (by a link, or in the desktop's pane) is listed as recently
read, newest first, and the pages the device saves for offline in the background are not; its storage panel lives
in Settings."""

from __future__ import annotations

import re

import pytest
from selenium.common.exceptions import TimeoutException

from selenium.webdriver.common.by import By

from conftest import DESKTOP, PHONE, axe_serious_violations, diagnose_stuck_navigation, new_driver, page_ready, rows, screenshot, wait_for
from device import open, wait_until_saved_for_offline


def recently_read(driver) -> list[str]:
    return driver.execute_script(
        "return [...document.querySelectorAll('#recent ul.items > li > a')].map(a => a.getAttribute('href'))")


def test_home_lists_what_the_reader_opened_and_not_what_the_device_saved_in_the_background(start_server, tmp_path):
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(DESKTOP)
    try:
        # Given a browser that saved every catalog's first page and its items for offline, in the background
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        assert recently_read(driver) == []
        # When the reader follows a link to a character, then opens a Marvel character in the list's pane
        open(driver, server.url("/rickandmorty/2"))
        open(driver, server.url("/marvel"))
        first = rows(driver)[0].find_element(By.CSS_SELECTOR, "a")
        href = first.get_attribute("href")
        first.click()
        wait_for(driver, lambda d: d.current_url == href and d.execute_script(
            "return !document.getElementById('detail-pane').hidden"), 10, "the row did not open in the pane")
        # Then Home lists those two, the latest first, and none of the items saved in the background
        open(driver, server.url("/"))
        assert recently_read(driver) == [href.removeprefix(server.url("")), "/rickandmorty/2"]
        assert driver.find_element(By.CSS_SELECTOR, "#main h1").text == "Home"
        assert driver.find_elements(By.ID, "device") == []
        screenshot(driver, "home-desktop", DESKTOP)
        assert axe_serious_violations(driver) == []
    finally:
        driver.quit()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_home_and_settings_fit_a_phone_light_and_dark(fresh_server, scheme):
    # A server (and so an origin) of its own: the phone's first visit installs the service worker and makes the
    # device's database while the test moves on, the case that once wedged the worker's activation.
    server = fresh_server
    driver = new_driver(PHONE)
    try:
        # Given a phone that read a character, in the scheme
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        driver.get(server.url("/rickandmorty/1"))
        page_ready(driver)
        # When Home and Settings open, then nothing is wider than the screen and both pass axe
        for path, name in (("/", f"home-phone-{scheme}"), ("/settings", f"settings-phone-{scheme}")):
            try:
                driver.get(server.url(path))
            except TimeoutException:
                # This once hung for good when the first page, frozen in the back/forward cache while it created the
                # device's database, held up the service worker's activation (device.js now leaves that to the
                # worker): should a navigation hang again, the output says where.
                print(diagnose_stuck_navigation(driver, server, path))
                raise
            page_ready(driver)
            assert driver.execute_script("return document.documentElement.scrollWidth") <= PHONE[0], path
            if path == "/settings":
                # The device panel counts in words that agree with the number ("1 page", "3 pages")
                wait_for(driver, lambda d: "This device holds" in d.find_element(By.ID, "device-usage").text, 10)
                usage = driver.find_element(By.ID, "device-usage").text
                assert re.search(r"\b(1 page|\d+ pages) and (1 picture|\d+ pictures)\b", usage) and "1 pages" not in usage, usage
            screenshot(driver, name, PHONE)
            assert axe_serious_violations(driver) == []
        # And the top bar's links all show
        links = driver.find_elements(By.CSS_SELECTOR, "header.top a.tool")
        assert [link.text for link in links][-1] == "Settings"
        assert all(link.is_displayed() for link in links)
    finally:
        driver.quit()
