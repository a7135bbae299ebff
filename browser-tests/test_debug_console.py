"""The network debugger's console in a real browser: the list is pushed live (Server-Sent Events) and
survives a server restart, a wide screen shows the selected request beside the list and the keyboard
moves through it, and the waterfall is drawn."""

from __future__ import annotations

import os
import urllib.request

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import page_ready


def rows(driver) -> list[str]:
    # Read in one script run: the live list replaces its rows as events arrive, so rows found first and read one by
    # one can be gone between the two (a stale element).
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#results table.requests tbody tr'), row => row.innerText)")


def fetch(server, path: str) -> None:
    with urllib.request.urlopen(server.url(path), timeout=30) as response:
        response.read()


def test_a_request_made_in_another_tab_appears_in_the_open_console_and_after_a_server_restart(start_server, browser, tmp_path):
    data_dir = str(tmp_path / "data")
    server = start_server(data_dir)
    port = server.bound_port
    browser.get(server.url("/debug"))
    page_ready(browser)
    browser.execute_script("window.kioskMark = 'same document'")
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "live-status").text.startswith("Live"))
    assert not any("dogs.json" in row for row in rows(browser))

    # Another tab reads the dogs: the console shows the request without being reloaded.
    console = browser.current_window_handle
    browser.execute_script("window.open(arguments[0], 'reader')", server.url("/dogs"))
    browser.switch_to.window(console)
    WebDriverWait(browser, 15).until(lambda d: any("dogs.json" in row for row in rows(d)))
    assert browser.execute_script("return window.kioskMark") == "same document"

    # The server stops: the console says it is reconnecting; it restarts on the same port and a request is
    # made: the console catches up by itself.
    server.stop()
    WebDriverWait(browser, 15).until(lambda d: "Reconnecting" in d.find_element(By.ID, "live-status").text)
    restarted = start_server(data_dir, port=port)
    fetch(restarted, "/api/rickandmorty?page=2")
    WebDriverWait(browser, 30).until(lambda d: any("character?page=2" in row for row in rows(d)))
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "live-status").text.startswith("Live"))
    assert browser.execute_script("return window.kioskMark") == "same document"
    # Each request is listed once.
    # (read at once: the reset after the restart may still be swapping the list in)
    ids = browser.execute_script("return [...document.querySelectorAll('#results tbody tr')].map(row => row.dataset.id)")
    assert len(ids) == len(set(ids))


def test_an_open_console_whose_feed_kiosk_refuses_loads_again_and_says_why(start_server, browser, tmp_path, monkeypatch):
    # Given the console's list open and live
    data_dir = str(tmp_path / "data")
    server = start_server(data_dir)
    port = server.bound_port
    browser.get(server.url("/debug"))
    page_ready(browser)
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "live-status").text.startswith("Live"))
    # When Kiosk comes back with its console locked by a token (as a revoked device's or an ended session's feed is
    # refused): the browser's feed, trying again, gets no stream and never tries again by itself
    server.stop()
    monkeypatch.setenv("KIOSK_DEBUG_TOKEN", "3f9a1c07d2b84e6f5a0c9e1d7b2f4a86")
    start_server(data_dir, port=port)
    # Then the page loads again and says why: the login page, the rows of the log gone — not "Reconnecting…" for ever
    WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "form[action='/debug/login']"))
    assert not browser.find_elements(By.CSS_SELECTOR, "#results tbody tr")


def test_a_filtered_console_receives_only_matching_requests(fresh_server, browser):
    fetch(fresh_server, "/api/nyt")
    browser.get(fresh_server.url("/debug?source=dogs"))
    page_ready(browser)
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "live-status").text.startswith("Live"))
    logged = lambda d: int(d.find_element(By.ID, "log-count").get_attribute("data-count"))
    before = logged(browser)
    fetch(fresh_server, "/api/rickandmorty")
    fetch(fresh_server, "/api/dogs")
    WebDriverWait(browser, 15).until(lambda d: any("dogs.json" in row for row in rows(d)))
    assert not any("character" in row or "mostpopular" in row for row in rows(browser))
    # A screen reader is told of the rows that arrived, politely, not of those the filter kept out.
    said = browser.find_element(By.ID, "new-rows-said")
    assert said.get_attribute("role") == "status"
    assert said.get_attribute("textContent") == "1 new request in the list", said.get_attribute("textContent")
    # The count of all logged moves by both, shown or not: what a reload says too.
    WebDriverWait(browser, 5).until(lambda d: logged(d) >= before + 2)
    shown = logged(browser)
    browser.refresh()
    page_ready(browser)
    assert logged(browser) == shown


def test_a_menu_chosen_beside_a_typed_filter_replaces_the_same_key_in_the_box(fresh_server, browser):
    # Given a filter typed with a status term and a word
    fetch(fresh_server, "/api/dogs")
    browser.get(fresh_server.url("/debug"))
    page_ready(browser)
    box = browser.find_element(By.ID, "debug-filter")
    box.send_keys("status:4xx method:GET")
    WebDriverWait(browser, 10).until(lambda d: "filter=status" in d.current_url)
    # When the Status menu is set to 2xx
    Select(browser.find_element(By.CSS_SELECTOR, "select[name=status]")).select_by_value("2xx")
    # Then the box loses its status term and keeps the rest, and the list is the menu's, not an error page
    WebDriverWait(browser, 10).until(lambda d: "status=2xx" in d.current_url)
    assert box.get_attribute("value") == "method:GET"
    WebDriverWait(browser, 10).until(lambda d: any("dogs.json" in row for row in rows(d)))
    assert not browser.find_elements(By.CSS_SELECTOR, "[role=alert].error")


def test_a_key_typed_in_the_box_sets_the_menu_of_that_key_back_to_any(fresh_server, browser):
    # Given the console's list narrowed to Rick and Morty by its Source menu, and a slower-than field
    for path in ("/api/dogs", "/api/rickandmorty"):
        fetch(fresh_server, path)
    browser.get(fresh_server.url("/debug?source=rickandmorty&min_ms=0"))
    page_ready(browser)
    # When the box is given a source of its own
    box = browser.find_element(By.ID, "debug-filter")
    box.send_keys("source:dogs slow:>0ms")
    # Then the menu and the field say "any" again, the address has the box alone, and the list is the box's
    WebDriverWait(browser, 10).until(lambda d: "filter=source" in d.current_url and "source=rickandmorty" not in d.current_url)
    assert Select(browser.find_element(By.CSS_SELECTOR, "select[name=source]")).first_selected_option.get_attribute("value") == ""
    assert browser.find_element(By.CSS_SELECTOR, "input[name=min_ms]").get_attribute("value") == ""
    WebDriverWait(browser, 10).until(lambda d: any("dogs.json" in row for row in rows(d)))
    assert not any("character" in row for row in rows(browser))


def open_console_after_each_source(server, browser) -> None:
    """One request to each catalog, then the console's list."""
    for path in ("/api/dogs", "/api/rickandmorty", "/api/nyt"):
        fetch(server, path)
    browser.get(server.url("/debug"))
    page_ready(browser)


def test_the_split_view_follows_the_keyboard_and_the_address_bar_follows_the_selection(fresh_server, browser):
    open_console_after_each_source(fresh_server, browser)
    links = browser.find_elements(By.CSS_SELECTOR, "#results a[data-pane]")
    assert len(links) >= 3
    # (a row's link reads as its method and path; its address names the request)
    first_id, second_id = (link.get_attribute("href").rsplit("/", 1)[-1] for link in links[:2])
    focused = lambda: browser.switch_to.active_element.get_attribute("href").rsplit("/", 1)[-1]

    # j twice moves to the second request; Enter opens it beside the list, and the address bar follows.
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys("j")
    assert focused() == first_id
    browser.switch_to.active_element.send_keys("j")
    assert focused() == second_id
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    pane = browser.find_element(By.ID, "detail-pane")
    WebDriverWait(browser, 10).until(lambda d: pane.is_displayed() and f"#{second_id} " in pane.find_element(By.TAG_NAME, "h1").text)
    assert browser.current_url.endswith(f"/debug/requests/{second_id}")
    assert browser.find_element(By.ID, "results").is_displayed()
    # k moves back up and Enter opens that one instead.
    link = browser.find_element(By.CSS_SELECTOR, f"#results a[data-pane][href='/debug/requests/{second_id}']")
    link.send_keys("k")
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith(f"/debug/requests/{first_id}"))
    WebDriverWait(browser, 10).until(lambda d: f"#{first_id} " in pane.find_element(By.TAG_NAME, "h1").text)

    # Escape closes the pane and goes back to the list's address; / goes to the search box.
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    WebDriverWait(browser, 10).until(lambda d: not pane.is_displayed())
    assert browser.current_url.endswith("/debug")
    browser.find_element(By.TAG_NAME, "body").send_keys("/")
    assert browser.switch_to.active_element.get_attribute("id") == "debug-filter"
    # A filter typed there applies as typed; Escape empties the box, and the list and address follow it.
    browser.switch_to.active_element.send_keys("status:4xx")
    WebDriverWait(browser, 10).until(lambda d: "filter=status" in d.current_url)
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    WebDriverWait(browser, 10).until(lambda d: "filter=" not in d.current_url)
    assert browser.find_element(By.ID, "debug-filter").get_attribute("value") == ""

    # A reload of a request's address shows that request.
    browser.get(fresh_server.url(f"/debug/requests/{second_id}"))
    assert f"#{second_id} " in browser.find_element(By.TAG_NAME, "h1").text


def test_a_reloaded_request_on_a_wide_screen_keeps_its_filtered_list_beside_it_and_the_filter_still_works(fresh_server, browser):
    # Given the console's list filtered, as typed, to the Rick and Morty requests, with one of them open beside it
    open_console_after_each_source(fresh_server, browser)
    box = browser.find_element(By.ID, "debug-filter")
    box.send_keys("character")
    WebDriverWait(browser, 10).until(lambda d: "filter=character" in d.current_url)
    WebDriverWait(browser, 10).until(lambda d: rows(d) and all("character" in row for row in rows(d)))
    # (a row is read by its first line, method and path: with the pane open the list shows fewer columns)
    shown = [row.split("\n")[0] for row in rows(browser)]
    link = browser.find_element(By.CSS_SELECTOR, "#results a[data-pane]")
    request_url = link.get_attribute("href")
    link.click()
    WebDriverWait(browser, 10).until(lambda d: d.current_url == request_url)

    # When the page is reloaded
    browser.refresh()

    # Then the same filtered list comes back beside the request, under the request's address, its row marked
    WebDriverWait(browser, 10).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#results table.requests tbody tr")
        and d.find_element(By.ID, "detail-pane").is_displayed(), "the list did not come back beside the request")
    assert browser.current_url == request_url
    assert [row.split("\n")[0] for row in rows(browser)] == shown
    assert browser.find_element(By.ID, "debug-filter").get_attribute("value") == "character"
    marked = browser.find_element(By.CSS_SELECTOR, "#results a[aria-current=true]")
    assert marked.get_attribute("href") == request_url
    # And the filter box still filters as typed (the list is a page of its own, not a copy pasted beside the request)
    box = browser.find_element(By.ID, "debug-filter")
    box.clear()
    box.send_keys("dogs")
    WebDriverWait(browser, 10).until(lambda d: "filter=dogs" in d.current_url)
    WebDriverWait(browser, 10).until(lambda d: rows(d) and all("dogs.json" in row for row in rows(d)))


def test_a_phone_goes_from_the_list_to_the_request(fresh_server, phone_browser):
    fetch(fresh_server, "/api/dogs")
    phone_browser.get(fresh_server.url("/debug"))
    page_ready(phone_browser)
    link = phone_browser.find_element(By.CSS_SELECTOR, "#results a[data-pane]")
    target = link.get_attribute("href")
    phone_browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
    # A tap on the row's second line (the host, the size), not on the name's link, opens it: the whole row is the target.
    host = link.find_element(By.XPATH, "ancestor::tr//td[contains(@class, 'host')]")
    ActionChains(phone_browser).move_to_element(host).click().perform()
    WebDriverWait(phone_browser, 10).until(lambda d: d.current_url == target)
    assert not phone_browser.find_elements(By.CSS_SELECTOR, "#results")


def test_the_waterfall_is_drawn_for_every_row_and_for_the_request(fresh_server, browser):
    for path in ("/api/dogs", "/api/rickandmorty"):
        fetch(fresh_server, path)
    browser.get(fresh_server.url("/debug"))
    page_ready(browser)
    cells = browser.find_elements(By.CSS_SELECTOR, "#results td.wf")
    assert cells and all(cell.find_elements(By.CSS_SELECTOR, "svg rect") for cell in cells)
    # A request that went to the upstream has its measured phases drawn, in order, inside the scale.
    network = browser.find_element(By.CSS_SELECTOR, "#results tr:has(.decision.network) td.wf")
    bars = network.find_elements(By.CSS_SELECTOR, "rect")
    assert "wait" in [bar.get_attribute("class") for bar in bars]
    xs = [float(bar.get_attribute("x")) for bar in bars]
    assert xs == sorted(xs) and all(0 <= x <= 1000 for x in xs)
    assert network.get_attribute("aria-label").startswith(("queued", "connect", "first byte"))
    # The request's own page draws its phases too, with a legend.
    request_id = browser.find_element(By.CSS_SELECTOR, "#results tr:has(.decision.network)").get_attribute("data-id")
    browser.get(fresh_server.url(f"/debug/requests/{request_id}"))
    page_ready(browser)
    assert browser.find_elements(By.CSS_SELECTOR, ".timeline .wf svg rect.wait")
    assert "first byte" in browser.find_element(By.CSS_SELECTOR, ".timeline .legend").text


def test_clear_asks_first_and_a_no_keeps_the_log(fresh_server, browser):
    # Given a logged request
    fetch(fresh_server, "/api/dogs")
    browser.get(fresh_server.url("/debug"))
    page_ready(browser)
    before = len(fresh_server.api("/debug/api/requests"))
    assert before > 0

    # When Clear is pressed and the question answered no, then nothing is cleared and the page stays
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Clear the request log']").click()
    alert = WebDriverWait(browser, 5).until(lambda d: d.switch_to.alert)
    assert alert.text.startswith("Clear ") and alert.text.endswith("This cannot be undone.")
    alert.dismiss()
    assert len(fresh_server.api("/debug/api/requests")) >= before

    # When it is pressed again and answered yes, then the log is empty
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Clear the request log']").click()
    WebDriverWait(browser, 5).until(lambda d: d.switch_to.alert).accept()
    WebDriverWait(browser, 10).until(lambda d: fresh_server.api("/debug/api/requests") == [])


def test_recording_paused_in_one_tab_shows_in_another_open_console(fresh_server, browser):
    # Two consoles open on the list, both live.
    browser.get(fresh_server.url("/debug"))
    page_ready(browser)
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "live-status").text.startswith("Live"))
    first = browser.current_window_handle
    browser.switch_to.new_window("tab")
    browser.get(fresh_server.url("/debug"))
    page_ready(browser)
    # The second pauses recording.
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Pause recording']").click()
    WebDriverWait(browser, 10).until(lambda d: "Recording is paused" in d.page_source)
    # The first shows it by itself, switch and banner, without a reload.
    browser.switch_to.window(first)
    WebDriverWait(browser, 10).until(lambda d: "Recording is paused" in d.find_element(By.ID, "results").text)
    assert browser.find_elements(By.CSS_SELECTOR, "button[aria-label='Resume recording']")


def test_a_menu_showing_the_box_term_follows_the_box_when_it_is_emptied(fresh_server, browser):
    # Given the list opened with a status term in the box, which the Status menu shows
    fetch(fresh_server, "/api/dogs")
    browser.get(fresh_server.url("/debug?filter=" + "status%3A5xx"))
    page_ready(browser)
    status = Select(browser.find_element(By.CSS_SELECTOR, "select[name=status]"))
    assert status.first_selected_option.get_attribute("value") == "5xx"
    assert not rows(browser)
    # When the box is emptied in one go
    box = browser.find_element(By.ID, "debug-filter")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE)
    # Then the filter is gone: the menu says "any", the address has no status, and the list is every request
    WebDriverWait(browser, 10).until(lambda d: "status" not in d.current_url)
    assert status.first_selected_option.get_attribute("value") == ""
    WebDriverWait(browser, 10).until(lambda d: any("dogs.json" in row for row in rows(d)))
