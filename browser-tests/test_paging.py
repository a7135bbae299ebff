"""Paging Rick and Morty: scrolling to the end appends the next page; the page links still lead to each page."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import page_ready, row_titles, rows, wait_for


def row_ids(driver) -> list[str]:
    return [row.get_attribute("data-id") for row in rows(driver)]


# On a phone the list is one column, so the pager starts well below the fold; on a wide screen the
# grid can be short enough for the pager to be in reach at once, which appends page 2 by itself.


def test_scrolling_to_the_bottom_appends_page_two_after_page_one(server, phone_browser):
    browser = phone_browser
    page_one = server.api("/api/rickandmorty")["items"]
    page_two = server.api("/api/rickandmorty?page=2")["items"]
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    assert row_ids(browser) == [item["itemID"] for item in page_one]

    browser.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
    wait_for(browser, lambda d: len(rows(d)) >= 40, 15, "scrolling to the bottom did not append page 2")

    ids = row_ids(browser)
    assert row_titles(browser)[20] == page_two[0]["title"]
    assert ids[:20] == [item["itemID"] for item in page_one]
    assert ids[20:40] == [item["itemID"] for item in page_two]
    assert len(set(ids)) == len(ids), "a row is shown twice"
    assert "page=" not in browser.current_url, "appending changed the address"


def test_a_next_page_that_failed_while_the_catalog_was_unreachable_is_appended_once_it_answers(fresh_server, phone_browser):
    # Given a phone at the end of a stored list page, the catalog unreachable, and the next page never stored
    server, browser = fresh_server, phone_browser
    browser.get(server.url("/rickandmorty?page=30"))
    page_ready(browser)
    shown = len(rows(browser))
    server.set_offline(True)
    try:
        # When the reader scrolls to the end, the pages Kiosk holds are appended, then one fails and says so
        note = lambda d: d.execute_script("return document.getElementById('js-more')?.textContent || ''")
        def failed(d) -> bool:
            d.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
            return "reached" in note(d)
        wait_for(browser, failed, 30, f"no failure said at the end: {note(browser)!r}")
        failed_at = len(rows(browser))
    finally:
        # And the catalog answers again, the reader not moving
        server.set_offline(False)
    # Then the next page is appended by itself, and the failure's words go
    wait_for(browser, lambda d: len(rows(d)) > failed_at, 20, "the next page was not appended once the catalog answered")
    assert "reached" not in note(browser)


def test_clicking_page_three_shows_page_three(server, phone_browser):
    browser = phone_browser
    page_three = server.api("/api/rickandmorty?page=3")["items"]
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)

    # Any scroll that brings the pager near the viewport appends the next page and replaces the pager
    # (that is the infinite scroll), so a mouse click races it. A keyboard user's way in has no race:
    # the link is focused where it is, and a real Enter key follows it.
    links = [a for a in browser.find_elements(By.CSS_SELECTOR, "nav.pages a") if a.text.strip() == "3"]
    assert links, "no page link 3"
    browser.execute_script("arguments[0].focus({preventScroll: true})", links[0])
    assert browser.switch_to.active_element == links[0]
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait_for(browser, lambda d: "page=3" in d.current_url, 15, "the page 3 link did not navigate")
    page_ready(browser)

    assert row_titles(browser)[:20] == [item["title"] for item in page_three]
    assert row_ids(browser)[:20] == [item["itemID"] for item in page_three]


def test_keyboard_focus_on_a_page_link_stays_in_the_results_when_the_next_page_is_appended(server, phone_browser):
    browser = phone_browser
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    stars = browser.find_elements(By.CSS_SELECTOR, "#results ul.items > li form.star button")
    browser.execute_script("arguments[0].focus({preventScroll: true})", stars[-1])

    ActionChains(browser).send_keys(Keys.TAB).perform()  # onto the pager's first link, scrolling it into view
    assert browser.execute_script("return !!document.activeElement.closest('nav.pages')"), "Tab did not reach the pager"
    wait_for(browser, lambda d: len(rows(d)) >= 40, 15, "reaching the pager did not append page 2")

    focused = browser.execute_script("""
        const active = document.activeElement;
        return { tag: active.tagName, inResults: !!active.closest('#results'), html: active.outerHTML.slice(0, 80) };
    """)
    assert focused["inResults"], f"the focus was lost when page 2 was appended: {focused}"
