"""Offline: stored pages stay readable with a banner, and the banner goes away by itself when the
upstream answers again."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from conftest import page_ready, rows, wait_for


def banner_shown(driver) -> bool:
    return driver.execute_script("""
        const banner = document.getElementById("offline-banner");
        return !!banner && !banner.hidden && banner.offsetParent !== null;
    """)


def test_offline_banner_appears_and_goes_away_without_a_reload_when_back_online(fresh_server, phone_browser):
    # A phone: one column, so the pager is out of reach and page 2 is never appended by itself.
    server, browser = fresh_server, phone_browser
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    assert len(rows(browser)) == 20
    assert not banner_shown(browser), "an offline banner while online"

    server.set_offline(True)
    try:
        browser.get(server.url("/rickandmorty?refresh=1"))
        page_ready(browser)
        wait_for(browser, banner_shown, 20, "no offline banner after a refresh with the upstream offline")
        banner = browser.find_element(By.ID, "offline-banner")
        assert banner.text.startswith("Offline — showing saved data from"), banner.text
        assert len(rows(browser)) == 20, "the stored rows are not shown while offline"
        browser.execute_script("window.__marker = 'same document'")
    finally:
        server.set_offline(False)

    wait_for(browser, lambda d: not banner_shown(d), 45, "the offline banner stayed 45 s after the upstream came back")
    assert browser.execute_script("return window.__marker") == "same document", "the page was reloaded"
    assert len(rows(browser)) == 20, "the fresh list was not swapped in"
