"""The debounced search box: typing fast sends one upstream search; one or two characters only filter
the rows already shown.

The tests use a phone-sized browser: the list is one column there, so its pager is out of reach and the
infinite scroll appends no further page (of the list or of the results) by itself."""

from __future__ import annotations

import time

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from conftest import page_ready, row_titles, wait_for


def search_requests(server, parameter: str) -> dict[str, int]:
    """The upstream requests since the last stats reset whose query has `parameter` (e.g. "name=")."""
    return {key: count for key, count in server.stats()["byRequest"].items() if parameter in key}


def type_slowly(field, text: str, pause: float) -> float:
    """Types `text` one key at a time with `pause` seconds between keys; returns when the last key went."""
    for index, character in enumerate(text):
        if index:
            time.sleep(pause)
        field.send_keys(character)
    return time.monotonic()


def test_typing_rick_fast_sends_one_upstream_search_and_shows_ricks(server, phone_browser):
    browser = phone_browser
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    field = browser.find_element(By.CSS_SELECTOR, "form.search input[name=q]")
    server.reset_stats()

    last_key = type_slowly(field, "rick", pause=0.05)
    wait_for(browser, lambda d: d.current_url.endswith("?q=rick"), 10, "the URL never became ?q=rick")
    # Past the debounce of any keystroke, plus a margin for a late request.
    time.sleep(max(0.0, last_key + 2.0 - time.monotonic()))

    searches = search_requests(server, "name=")
    assert [key for key in searches if "name=rick" in key] and sum(searches.values()) == 1, (
        f"expected exactly one upstream search for name=rick, got {searches}")
    titles = row_titles(browser)
    assert titles, "no rows after searching for rick"
    assert all("rick" in title.lower() for title in titles), f"rows that are not Ricks: {titles}"
    assert browser.find_element(By.CSS_SELECTOR, "main#main").get_attribute("data-view") == "search"


def test_typing_two_characters_sends_no_search_and_hides_rows_that_do_not_match(server, phone_browser):
    browser = phone_browser
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    before = row_titles(browser)
    field = browser.find_element(By.CSS_SELECTOR, "form.search input[name=q]")
    server.reset_stats()

    type_slowly(field, "mo", pause=0.05)
    time.sleep(2.0)

    assert search_requests(server, "name=") == {}, "two characters sent an upstream search"
    assert "q=" not in browser.current_url
    shown = row_titles(browser, visible_only=True)
    hidden = [title for title in before if title not in shown]
    assert shown and all("mo" in title.lower() for title in shown), f"rows shown for 'mo': {shown}"
    assert hidden and not any("mo" in title.lower() for title in hidden), f"rows hidden for 'mo': {hidden}"
    assert len(row_titles(browser)) == len(before), "the local filter removed rows instead of hiding them"
    hint = browser.execute_script("return document.getElementById('js-hint')?.textContent || ''")
    assert "No matches" not in hint, hint
    # And a screen reader hears it through the list's live region, there before the change: how many rows are left
    said = browser.execute_script("return document.getElementById('results-said').textContent")
    assert said.startswith(f"{len(shown)} items shown." if len(shown) != 1 else "1 item shown.") and "3 characters" in said, said

    # And two characters no row shows say there is no match, rather than leaving an empty list
    field.clear()
    type_slowly(field, "zq", pause=0.05)
    wait_for(browser, lambda d: not row_titles(d, visible_only=True), 5, "rows still shown for 'zq'")
    wait_for(browser, lambda d: "No matches." in d.execute_script(
        "return document.getElementById('js-hint')?.textContent || ''"), 5, "no 'No matches.' for 'zq'")


def test_pauses_shorter_than_a_second_still_send_one_marvel_search(server, phone_browser):
    browser = phone_browser
    browser.get(server.url("/marvel"))
    page_ready(browser)
    field = browser.find_element(By.CSS_SELECTOR, "form.search input[name=q]")
    server.reset_stats()

    # 700 ms between keys: past the 500 ms of other catalogs, within Marvel's 1000 ms.
    last_key = type_slowly(field, "spid", pause=0.7)
    wait_for(browser, lambda d: d.current_url.endswith("?q=spid"), 10, "the URL never became ?q=spid")
    time.sleep(max(0.0, last_key + 2.5 - time.monotonic()))

    searches = search_requests(server, "nameStartsWith=")
    assert len(searches) == 1 and sum(searches.values()) == 1 and "nameStartsWith=spid" in next(iter(searches)), (
        f"expected one upstream search for nameStartsWith=spid, got {searches}")

def test_going_back_under_three_characters_after_a_search_filters_the_catalog_not_the_last_results(server, phone_browser):
    # Given the results of a search for "morty smith" (one character)
    browser = phone_browser
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    catalog = row_titles(browser)
    field = browser.find_element(By.CSS_SELECTOR, "form.search input[name=q]")
    type_slowly(field, "morty smith", pause=0.02)
    wait_for(browser, lambda d: "q=morty+smith" in d.current_url, 10, "the search was not sent")
    wait_for(browser, lambda d: browser.find_element(By.CSS_SELECTOR, "main#main").get_attribute("data-view") == "search", 10)

    # When the box is cleared and "ri" typed (too short to search)
    field.clear()
    field.send_keys("ri")

    # Then the catalog's list comes back, without the search in its address or its count, filtered by "ri"
    wait_for(browser, lambda d: "q=" not in d.current_url, 10, "the address kept the last search")
    wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, "main#main").get_attribute("data-view") != "search", 10)
    assert "morty smith" not in browser.find_element(By.ID, "results").text.lower()
    expected = [title for title in catalog if "ri" in title.lower()]
    wait_for(browser, lambda d: row_titles(d, visible_only=True) == expected, 10,
             f"rows shown for 'ri': {row_titles(browser, visible_only=True)}, expected {expected}")


def test_escape_in_the_search_box_clears_the_search_and_its_results_and_a_second_leaves_the_box(server, browser):
    # Given a search for "sum" on a desktop, its results shown
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    catalog = row_titles(browser)
    field = browser.find_element(By.CSS_SELECTOR, "form.search input[name=q]")
    type_slowly(field, "sum", pause=0.02)
    wait_for(browser, lambda d: "q=sum" in d.current_url, 10, "the search was not sent")
    # (its count said to a screen reader in a few words, not its rows)
    wait_for(browser, lambda d: "for “sum”" in d.execute_script("return document.getElementById('results-said').textContent"), 10,
             "the search's count was not said")
    # When Escape is pressed in the box
    field.send_keys(Keys.ESCAPE)
    # Then the box is empty, and the catalog's list and address come back with it
    wait_for(browser, lambda d: "q=" not in d.current_url, 10, "the address kept the search")
    assert field.get_attribute("value") == ""
    # (the catalog's first page, whatever the infinite scroll appended after it, before or after)
    wait_for(browser, lambda d: row_titles(d, visible_only=True)[:20] == catalog[:20], 10,
             f"the list stayed filtered: {row_titles(browser, visible_only=True)[:5]}")
    assert browser.switch_to.active_element == field
    # And a second Escape leaves the box
    field.send_keys(Keys.ESCAPE)
    assert browser.switch_to.active_element != field


def test_back_after_a_search_or_a_filter_brings_the_list_it_started_from(server, phone_browser):
    # Given Rick and Morty's list
    browser = phone_browser
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    catalog = row_titles(browser)
    entries = browser.execute_script("return history.length")
    field = browser.find_element(By.CSS_SELECTOR, "form.search input[name=q]")

    # When a search is typed, then refined
    type_slowly(field, "rick", pause=0.02)
    wait_for(browser, lambda d: d.current_url.endswith("?q=rick"), 10, "the search was not sent")
    field.send_keys(" s")
    wait_for(browser, lambda d: d.current_url.endswith("?q=rick+s"), 10, "the refined search was not sent")

    # Then the search is one entry of the history, refined in place
    assert browser.execute_script("return history.length") == entries + 1

    # When Back is pressed
    browser.back()

    # Then the list it started from comes back, its box empty
    wait_for(browser, lambda d: d.current_url == server.url("/rickandmorty"), 10, f"at {browser.current_url}")
    wait_for(browser, lambda d: row_titles(d) == catalog, 10, f"rows: {row_titles(browser)[:5]}")
    assert field.get_attribute("value") == ""

    # When a filter is chosen, then Back pressed
    Select(browser.find_element(By.CSS_SELECTOR, "form.search select[name=gender]")).select_by_value("female")
    wait_for(browser, lambda d: "gender=female" in d.current_url, 10, "the filter was not applied")
    wait_for(browser, lambda d: row_titles(d) != catalog, 10, "the filtered rows did not come")
    browser.back()

    # Then the unfiltered list comes back, and its filter says so
    wait_for(browser, lambda d: d.current_url == server.url("/rickandmorty"), 10, f"at {browser.current_url}")
    wait_for(browser, lambda d: row_titles(d) == catalog, 10, f"rows: {row_titles(browser)[:5]}")
    assert Select(browser.find_element(By.CSS_SELECTOR, "form.search select[name=gender]")).first_selected_option.get_attribute("value") == ""

    # And Forward brings the filtered list back, its filter shown
    browser.forward()
    wait_for(browser, lambda d: "gender=female" in d.current_url, 10, f"at {browser.current_url}")
    wait_for(browser, lambda d: Select(d.find_element(By.CSS_SELECTOR, "form.search select[name=gender]"))
             .first_selected_option.get_attribute("value") == "female", 10, "the filter shown is not the list's")


def test_a_short_search_opened_by_its_address_shows_every_row_kiosk_found(server, phone_browser):
    # Given the store's search for "hu" opened by its address (a link, a reload), which matches a species the rows do not show
    browser = phone_browser
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    browser.get(server.url("/rickandmorty?q=hu"))
    page_ready(browser)
    found = row_titles(browser)
    # Then every row Kiosk found is shown, as many as its count says (the page's own filter hid those whose title lacks "hu")
    assert found, "the store found nothing for 'hu'"
    assert row_titles(browser, visible_only=True) == found
    assert any("hu" not in title.lower() for title in found), f"every row's title holds 'hu': {found}"
    # And an emoji and a quote are two characters, as Kiosk counts them: they filter the page, and search nothing
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    # (and the current tab's label is whole on a phone: it was "Rick & Mo…" in bold)
    label = browser.find_element(By.CSS_SELECTOR, 'nav.tabs a[aria-current="page"] .short')
    assert browser.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth", label), label.text
    field = browser.find_element(By.CSS_SELECTOR, "form.search input[name=q]")
    # (typed by the page's own event: ChromeDriver types no character outside Unicode's first plane)
    browser.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', {bubbles: true}))",
                           field, '😀"')
    time.sleep(1.5)
    assert "q=" not in browser.current_url, browser.current_url


def test_the_next_page_the_upstream_cannot_give_says_why_below_the_list(fresh_server, phone_browser):
    # Given Rick and Morty's first page read on a phone, then the upstream gone
    server, browser = fresh_server, phone_browser
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    server.set_offline(True)
    # When the list is scrolled to its end, and its next page (never read) cannot be fetched
    more = lambda d: d.execute_script("return document.getElementById('js-more')?.textContent || ''")
    def scrolled_to_note(d):
        d.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
        return more(d) not in ("", "Loading…")
    wait_for(browser, scrolled_to_note, 15, "no note below the list")
    # Then the note says what Kiosk's answer said (nothing saved, the upstream unreachable), not "Could not load"
    assert more(browser) != "Could not load. Try again.", more(browser)
    assert "saved" in more(browser), more(browser)
