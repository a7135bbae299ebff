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


def test_a_search_made_offline_searches_the_upstream_by_itself_when_it_answers_again(fresh_server, phone_browser):
    # Given a search never made before, opened while the upstream is offline: the store's own matches, with the banner
    server, browser = fresh_server, phone_browser
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    server.set_offline(True)
    try:
        browser.get(server.url("/rickandmorty?q=squanchy"))
        page_ready(browser)
        wait_for(browser, banner_shown, 20, "no offline banner on a search made offline")
        assert "in saved data" in browser.find_element(By.CSS_SELECTOR, "#results p.status").text
        browser.execute_script("window.__marker = 'same document'")
    finally:
        # When the upstream answers again
        server.set_offline(False)

    # Then the page searches it by itself: the banner leaves and the upstream's results come, without a reload
    wait_for(browser, lambda d: not banner_shown(d), 45, "the search's offline banner stayed 45 s after the upstream came back")
    wait_for(browser, lambda d: len(rows(d)) > 0, 20, "the upstream's results did not come")
    assert "in saved data" not in browser.find_element(By.CSS_SELECTOR, "#results p.status").text
    assert browser.execute_script("return window.__marker") == "same document", "the page was reloaded"
