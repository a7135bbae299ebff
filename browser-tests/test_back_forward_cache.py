"""Back shows a page at once from the back/forward cache, and then brings its rows up to date."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from conftest import PHONE, new_driver, page_ready, wait_for
from device import wait_until_saved_for_offline


# Chromium lets even `Cache-Control: no-store` pages into its back/forward cache (an experiment of its own);
# the HTML standard, Firefox and Chromium without it keep them out. The test holds Kiosk to the standard.
STANDARD_BFCACHE = ("--disable-features=CacheControlNoStoreEnterBackForwardCache",)


def first_visit(driver, url: str) -> None:
    """Opens `url` and waits past the first visit: the service worker took the page over (a page it claims while kept
    is evicted) and the background save for offline is done (a fetch under way also keeps a page out)."""
    driver.get(url)
    page_ready(driver)
    wait_until_saved_for_offline(driver)


def test_back_restores_the_list_from_the_back_forward_cache_and_refreshes_its_stars(fresh_server):
    driver = new_driver(PHONE, arguments=STANDARD_BFCACHE)
    try:
        first_visit(driver, fresh_server.url("/rickandmorty"))
        # A mark only the same, kept document can still have after Back
        driver.execute_script("window.kioskKept = 42")
        first = driver.find_element(By.CSS_SELECTOR, "#results ul.items > li").get_attribute("data-id")
        # When another page is opened (and the first row is starred meanwhile, as a detail page would), then Back
        driver.get(fresh_server.url("/dogs"))
        page_ready(driver)
        assert fresh_server.post_form(f"/favorites/rickandmorty/{first}", {"action": "add", "return": "/favorites"}) == 303
        driver.back()
        page_ready(driver)
        # Then the list is the kept document, not a new load
        assert driver.execute_script("return window.kioskKept") == 42
        # And its rows were fetched again: the star set meanwhile shows
        wait_for(driver, lambda d: d.find_element(
            By.CSS_SELECTOR, f"#results li[data-id='{first}'] form.star button").get_attribute("aria-pressed") == "true",
            10, "the restored list never showed the new star")
    finally:
        driver.quit()


def test_back_to_a_page_kept_from_before_a_language_switch_shows_it_whole_in_the_new_language(fresh_server):
    driver = new_driver(PHONE, arguments=STANDARD_BFCACHE)
    try:
        # Given the dogs list read in English, kept in the back/forward cache once another page opens
        first_visit(driver, fresh_server.url("/dogs"))
        assert driver.execute_script("return document.documentElement.lang") == "en"
        driver.get(fresh_server.url("/nyt"))
        page_ready(driver)
        # When Spanish is chosen there, and Back pressed
        driver.find_element(By.CSS_SELECTOR, "form.lang button").click()
        wait_for(driver, lambda d: d.execute_script("return document.documentElement.lang") == "es", 10, "no switch")
        driver.back()
        page_ready(driver)
        # Then the dogs list is all Spanish, its words and its rows alike (its kept English page beside Spanish rows, before)
        wait_for(driver, lambda d: d.execute_script("return document.documentElement.lang") == "es", 10,
                 "the page came back in English")
        assert "Perros" in driver.title, driver.title
    finally:
        driver.quit()
