"""The reader keeps your place: Back after infinite scroll brings the same rows back at the same position, a
detail page's "‹ Catalog" link returns to the list it was opened from, and a reloaded item keeps its list beside
it on a wide screen."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from conftest import DESKTOP, PHONE, new_driver, page_ready, rows, screenshot, wait_for

# Without the back/forward cache, so that what is tested is Kiosk's own saved place (the cache keeps the whole
# document when it can, and a browser does not always: memory, a worker's fetch in flight, an extension).
NO_BFCACHE = ("--disable-back-forward-cache",)


def scroll_until(driver, count: int) -> None:
    """Scrolls to the end of the list until the infinite scroll has loaded at least `count` rows."""
    while len(rows(driver)) < count:
        loaded = len(rows(driver))
        driver.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
        wait_for(driver, lambda d: len(rows(d)) > loaded, 15, f"scrolling did not append past {loaded} rows")


def top_of(driver, item_id: str) -> float:
    return driver.execute_script(
        "return document.querySelector(`#results ul.items > li[data-id='${arguments[0]}']`).getBoundingClientRect().top",
        item_id)


def test_back_after_infinite_scroll_brings_back_the_same_rows_at_the_same_place(server):
    driver = new_driver(PHONE, arguments=NO_BFCACHE)
    try:
        # Given a phone that scrolled Rick and Morty until 100 rows were loaded
        driver.get(server.url("/rickandmorty"))
        page_ready(driver)
        scroll_until(driver, 100)
        # And row 71 scrolled to 200 px below the top of the screen
        row = rows(driver)[70]
        item_id = row.get_attribute("data-id")
        driver.execute_script("window.scrollBy(0, arguments[0].getBoundingClientRect().top - 200)", row)
        before = top_of(driver, item_id)
        loaded = len(rows(driver))
        # When it is opened, and Back is pressed
        link = row.find_element(By.CSS_SELECTOR, "a")
        href = link.get_attribute("href")
        driver.execute_script("arguments[0].click()", link)
        wait_for(driver, lambda d: d.current_url == href, 10, "the row did not open")
        page_ready(driver)
        driver.back()
        # Then the list has the same rows again, and row 71 is where it was
        wait_for(driver, lambda d: len(rows(d)) >= loaded, 20, "Back brought back fewer rows")
        wait_for(driver, lambda d: abs(top_of(d, item_id) - before) < 4, 10,
                 f"row 71 is at {top_of(driver, item_id)} px after Back, not {before} px")
        assert len(rows(driver)) == loaded
        # And reading on still appends the next page after them
        driver.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
        wait_for(driver, lambda d: len(rows(d)) > loaded, 15, "scrolling after Back appended nothing")
    finally:
        driver.quit()


def test_a_detail_pages_back_link_returns_to_the_filtered_page_it_came_from(server):
    driver = new_driver(PHONE)
    try:
        # Given page 2 of the living Rick and Morty characters
        listed = server.url("/rickandmorty?page=2&status=alive")
        driver.get(listed)
        page_ready(driver)
        first = rows(driver)[0]
        # When a row is opened
        link = first.find_element(By.CSS_SELECTOR, "a")
        href = link.get_attribute("href")
        driver.execute_script("arguments[0].click()", link)
        wait_for(driver, lambda d: d.current_url == href, 10, "the row did not open")
        page_ready(driver)
        # Then its "‹ Rick and Morty" link leads to that page and filter, not to the unfiltered first page
        back = driver.find_element(By.CSS_SELECTOR, "#main > p.back a")
        wait_for(driver, lambda d: back.get_attribute("href") == listed, 5, f"the back link is {back.get_attribute('href')}")
        back.click()
        wait_for(driver, lambda d: d.current_url == listed, 10, f"the back link went to {driver.current_url}")
        page_ready(driver)
        assert driver.find_element(By.CSS_SELECTOR, "select[name=status]").get_attribute("value") == "alive"
    finally:
        driver.quit()


def test_after_back_to_an_earlier_page_an_items_back_link_returns_to_that_page(server):
    driver = new_driver(PHONE)  # with the back/forward cache, which keeps page 2 whole and runs no script again
    try:
        # Given page 2, then page 5, then Back to page 2
        second, fifth = server.url("/rickandmorty?page=2"), server.url("/rickandmorty?page=5")
        for url in (second, fifth):
            driver.get(url)
            page_ready(driver)
        driver.back()
        wait_for(driver, lambda d: d.current_url == second, 10, "Back did not return to page 2")
        page_ready(driver)
        # When one of its rows is opened (found and clicked in one script run: the page fetches its rows again on coming
        # back from the cache and swaps them in, so a row found first could be gone by the click)
        href = driver.execute_script("const a = document.querySelector('#results ul.items > li a'); a.click(); return a.href;")
        wait_for(driver, lambda d: d.current_url == href, 10, "the row did not open")
        page_ready(driver)
        # Then its back link returns to page 2, where it was opened, not to page 5, the list last loaded
        back = driver.find_element(By.CSS_SELECTOR, "#main > p.back a")
        wait_for(driver, lambda d: back.get_attribute("href") == second, 5, f"the back link is {back.get_attribute('href')}")
    finally:
        driver.quit()


def test_a_reloaded_item_on_a_wide_screen_keeps_its_list_beside_it(server):
    driver = new_driver(DESKTOP)
    try:
        # Given the split view: Rick and Morty's list with character 3 open beside it
        driver.get(server.url("/rickandmorty"))
        page_ready(driver)
        link = driver.find_element(By.CSS_SELECTOR, "#results ul.items > li[data-id='3'] a")
        link.click()
        wait_for(driver, lambda d: d.current_url == server.url("/rickandmorty/3"), 10, "the row did not open beside the list")
        # When the page is reloaded
        driver.refresh()
        page_ready(driver)
        # Then the list comes back beside the item, with the item marked in it
        wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#results ul.items > li")
                 and d.find_element(By.CSS_SELECTOR, "#detail-pane").is_displayed(), 10, "the list did not come back")
        assert driver.current_url == server.url("/rickandmorty/3")
        # (the item's title one level under the list's for assistive technology: a page has one first-level heading)
        assert driver.find_element(By.CSS_SELECTOR, "#detail-pane h1[aria-level='2']").text
        assert driver.execute_script("return [...document.querySelectorAll('h1')].filter(h => !h.hasAttribute('aria-level')).length") == 1
        assert driver.find_element(By.CSS_SELECTOR, "#results li[data-id='3'] a").get_attribute("aria-current") == "true"
        screenshot(driver, "split-after-reload", DESKTOP)
        # And Escape closes the pane onto the list's address
        driver.find_element(By.TAG_NAME, "body").send_keys("\ue00c")
        wait_for(driver, lambda d: d.current_url == server.url("/rickandmorty"), 5, "Escape did not return to the list")
    finally:
        driver.quit()


def test_a_reload_of_fresh_data_keeps_the_rows_appended_and_the_row_on_screen(server):
    driver = new_driver(PHONE)
    try:
        # Given a phone that scrolled Rick and Morty until 80 rows were loaded, row 61 near the top of the screen
        driver.get(server.url("/rickandmorty"))
        page_ready(driver)
        scroll_until(driver, 80)
        row = rows(driver)[60]
        item_id = row.get_attribute("data-id")
        driver.execute_script("window.scrollBy(0, arguments[0].getBoundingClientRect().top - 120)", row)
        before = top_of(driver, item_id)
        loaded = len(rows(driver))
        # When the list is reloaded with fresh data (as when a revalidation ends, or the upstream is back)
        driver.execute_script("window.__reloaded = false; window.kiosk.reloadResults().then(() => { window.__reloaded = true; })")
        wait_for(driver, lambda d: d.execute_script("return window.__reloaded"), 20, "the reload did not end")
        # Then the rows appended are there again, and row 61 is where it was
        assert len(rows(driver)) == loaded, f"{len(rows(driver))} rows after the reload, not {loaded}"
        assert abs(top_of(driver, item_id) - before) < 4, f"row 61 at {top_of(driver, item_id)} px, not {before} px"
    finally:
        driver.quit()


def test_a_refreshed_list_drops_refresh_from_its_address_so_back_and_reload_do_not_ask_again(server):
    driver = new_driver(PHONE)
    try:
        # Given a list, refreshed from its status line's Refresh
        driver.get(server.url("/rickandmorty?page=2"))
        page_ready(driver)
        driver.execute_script("document.querySelector('#results p.status a.refresh').click()")
        wait_for(driver, lambda d: "refresh" not in d.current_url and d.execute_script("return document.readyState") == "complete"
                 and d.execute_script("return performance.getEntriesByType('navigation')[0].name").find("refresh=1") >= 0,
                 10, f"the refreshed list kept its parameter: {driver.current_url}")
        # Then the address is the list's own
        assert driver.current_url == server.url("/rickandmorty?page=2"), driver.current_url
        # And Back from another page returns to it, not to the refresh
        driver.get(server.url("/rickandmorty?page=3"))
        page_ready(driver)
        driver.back()
        wait_for(driver, lambda d: d.current_url == server.url("/rickandmorty?page=2"), 10, f"Back went to {driver.current_url}")
    finally:
        driver.quit()
