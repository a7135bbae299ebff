"""Offline edits are never lost: favorites and dogs edits made while the Kiosk server is unreachable wait in
the device's outbox (IndexedDB), show as waiting, and are applied exactly once, in order, when Kiosk answers."""

from __future__ import annotations

import json
import signal
import subprocess
import time

from selenium.webdriver.common.by import By

from conftest import PHONE, axe_serious_violations, new_driver, screenshot, wait_for
from device import device_call, open, pending_count, wait_until_saved_for_offline

EDIT_ROWS = "#results ul.items.edit > li"


def star(driver, item_id: str):
    return driver.find_element(By.CSS_SELECTOR, f"#results ul.items > li[data-id='{item_id}'] form.star")


def press_star(driver, item_id: str, on: bool) -> None:
    form = star(driver, item_id)
    button = form.find_element(By.TAG_NAME, "button")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    wait_for(driver, lambda d: star(d, item_id).find_element(By.TAG_NAME, "button").get_attribute("aria-pressed")
             == ("true" if on else "false") and "pending" in star(d, item_id).get_attribute("class"), 15,
             f"the star of {item_id} did not show {on} as waiting")


def dog_ids(driver) -> list[str]:
    return driver.execute_script("return [...document.querySelectorAll(arguments[0])].map(li => li.dataset.id)", EDIT_ROWS)


def press_in_dog_row(driver, dog_id: str, form_class: str, label: str | None = None) -> None:
    forms = driver.find_elements(By.CSS_SELECTOR, f"{EDIT_ROWS}[data-id='{dog_id}'] form.{form_class}")
    button = next(form.find_element(By.TAG_NAME, "button") for form in forms
                  if label is None or form.find_element(By.TAG_NAME, "button").text.strip() == label)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()


def test_edits_made_with_kiosk_stopped_are_applied_once_and_in_order_when_it_answers_again(start_server, tmp_path, kiosk_bin):
    # Given a phone that has read the characters and the dogs editor, and saved for offline.
    data_dir = str(tmp_path / "data")
    server = start_server(data_dir)
    port = server.bound_port
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        open(driver, server.url("/dogs?edit=1"))
        dogs = dog_ids(driver)
        open(driver, server.url("/rickandmorty"))
        characters = driver.execute_script(
            "return [...document.querySelectorAll('#results ul.items > li')].slice(0, 3).map(li => li.dataset.id)")

        # When, with the Kiosk server stopped, three characters are starred and the first unstarred again,
        server.stop()
        open(driver, server.url("/rickandmorty"))
        for character in characters:
            press_star(driver, character, True)
        press_star(driver, characters[0], False)
        assert pending_count(driver) == 4

        # and in the dogs editor the first dog is deleted and the next one moved down a place,
        open(driver, server.url("/dogs?edit=1"))
        assert dog_ids(driver) == dogs, "the saved editor does not show the dogs as they were"
        press_in_dog_row(driver, dogs[0], "delete")
        wait_for(driver, lambda d: dog_ids(d) == dogs[1:], 15, "the deleted dog is still shown")
        press_in_dog_row(driver, dogs[1], "move", "↓")
        expected = [dogs[2], dogs[1], *dogs[3:]]
        wait_for(driver, lambda d: dog_ids(d) == expected, 15, "the moved dog is not shown where it went")
        # (and a screen reader is told the place it shows, among the dogs it shows, not the saved list's)
        said = lambda d: d.execute_script("return document.getElementById('results-said')?.textContent || ''")
        wait_for(driver, lambda d: said(d).endswith(f": position 2 of {len(dogs) - 1}."), 10, f"said: {said(driver)!r}")

        # Then each change shows as waiting.
        wait_for(driver, lambda d: "6 changes are waiting to be sent to Kiosk." in d.find_element(By.ID, "pending-edits").text, 10)
        screenshot(driver, "offline-pending-edits-phone", PHONE)
        assert axe_serious_violations(driver) == []

        # When the tab is closed, Kiosk starts again (same address, same data), and Kiosk is opened again.
        first = driver.current_window_handle
        driver.switch_to.new_window("tab")
        second = driver.current_window_handle
        driver.switch_to.window(first)
        driver.close()
        driver.switch_to.window(second)
        server = start_server(data_dir, port=port)
        open(driver, server.url("/favorites"))

        # Then every change is applied exactly once, in order, and nothing waits any more.
        wait_for(driver, lambda d: pending_count(d) == 0, 30, "edits still waiting after Kiosk answered")
        favorites = [item["itemID"] for item in server.api("/api/favorites")["items"]]
        assert sorted(favorites) == sorted(characters[1:]), favorites
        assert [item["itemID"] for item in server.api("/api/dogs")["items"]] == expected

        # And the same after a reload, in the page and in the CLI.
        open(driver, server.url("/favorites"))
        shown = driver.execute_script("return [...document.querySelectorAll('#results ul.items > li')].map(li => li.dataset.id)")
        assert sorted(shown) == sorted(characters[1:]), shown
        assert driver.execute_script("return document.getElementById('pending-edits')") is None
        listed = json.loads(subprocess.run([kiosk_bin, "favorite", "list", "--json", "--data-dir", data_dir],
                                           capture_output=True, text=True, check=True, timeout=60).stdout)
        assert sorted(item["itemID"] for item in listed["items"]) == sorted(characters[1:]), listed
        open(driver, server.url("/dogs?edit=1"))
        assert dog_ids(driver) == expected
    finally:
        driver.quit()


def test_a_write_replayed_after_its_answer_was_lost_is_applied_once(start_server, tmp_path):
    # Given a write Kiosk applied whose answer never reached the device (still in the outbox with its key).
    server = start_server(str(tmp_path / "data"))
    driver = new_driver(PHONE)
    try:
        open(driver, server.url("/dogs?edit=1"))
        wait_for(driver, lambda d: d.execute_script("return !!navigator.serviceWorker?.controller"), 20)
        dogs = dog_ids(driver)
        token = driver.execute_script("return document.querySelector('input[name=csrf]').value")
        body = f"csrf={token}&to=3"
        key = "7c1e0b52-0d7e-4a55-9e7a-3f4f2f1b9a10"
        status = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(arguments[0], { method: "POST", body: arguments[1],
                                  headers: { "Content-Type": "application/x-www-form-urlencoded", "Idempotency-Key": arguments[2] } })
              .then(r => done(r.status), e => done(String(e)));
        """, f"/dogs/{dogs[0]}/move", body, key)
        assert status == 200, status
        moved = [dogs[1], dogs[2], dogs[3], dogs[0], *dogs[4:]]
        assert [item["itemID"] for item in server.api("/api/dogs")["items"]] == moved
        # Another dog moved meanwhile, so applying the first write again would change the order.
        server.post_form(f"/dogs/{dogs[1]}/move", {"to": "5"})
        after = [item["itemID"] for item in server.api("/api/dogs")["items"]]
        device_call(driver, "enqueue", {"key": key, "path": f"/dogs/{dogs[0]}/move", "body": body,
                                        "createdAt": 0, "returnTo": "/dogs?edit=1"})

        # When the outbox is sent.
        driver.execute_script("navigator.serviceWorker.controller.postMessage({type: 'flush'})")

        # Then the server answers it as the first time without applying it again.
        wait_for(driver, lambda d: pending_count(d) == 0, 15, "the replayed write is still waiting")
        assert [item["itemID"] for item in server.api("/api/dogs")["items"]] == after
    finally:
        driver.quit()


def visible_move_buttons(driver) -> list[str]:
    """Each row's shown move buttons, as "↑↓", "↓" or "↑"."""
    return driver.execute_script("""
        return [...document.querySelectorAll(arguments[0])].map(li =>
            [...li.querySelectorAll('form.move')].filter(form => !form.hidden).map(form => form.textContent.trim()).join(''))
    """, EDIT_ROWS)


def test_offline_moves_and_deletions_show_in_the_order_made_with_each_rows_buttons_for_its_place(saved_phone):
    # Given a phone that saved the dogs editor for offline, then lost Kiosk
    server, driver = saved_phone.server, saved_phone.driver
    open(driver, server.url("/dogs?edit=1"))
    dogs = dog_ids(driver)
    server.stop()
    open(driver, server.url("/dogs?edit=1"))

    # When the fourth dog is moved up a place, and then the first is deleted
    press_in_dog_row(driver, dogs[3], "move", "↑")
    moved = [dogs[0], dogs[1], dogs[3], dogs[2], *dogs[4:]]
    wait_for(driver, lambda d: dog_ids(d) == moved, 15, f"the moved dog is not shown where it went: {dog_ids(driver)}")
    # (the banner saying it waits, above the list, is in place before the next tap: it moves the rows down)
    wait_for(driver, lambda d: "1 change is waiting" in (d.execute_script(
        "return document.getElementById('pending-edits')?.textContent") or ""), 10, "no banner for the move")
    press_in_dog_row(driver, dogs[0], "delete")

    # Then both show, the move kept under the deletion
    expected = moved[1:]
    wait_for(driver, lambda d: dog_ids(d) == expected, 15, f"not shown in the order made: {dog_ids(driver)}")
    # And each row has the buttons of its place: none up for the first, none down for the last
    buttons = visible_move_buttons(driver)
    assert buttons == ["↓"] + ["↑↓"] * (len(expected) - 2) + ["↑"], buttons

    # And a reload shows the same
    open(driver, server.url("/dogs?edit=1"))
    wait_for(driver, lambda d: dog_ids(d) == expected, 15, f"not kept across a reload: {dog_ids(driver)}")
    assert visible_move_buttons(driver) == ["↓"] + ["↑↓"] * (len(expected) - 2) + ["↑"], visible_move_buttons(driver)


def test_a_reload_right_after_a_deletion_shows_the_list_without_the_dog(saved_phone):
    # Given the dogs editor, its page under the service worker
    server, driver = saved_phone.server, saved_phone.driver
    for attempt in range(3):
        open(driver, server.url("/dogs?edit=1"))
        dogs = dog_ids(driver)
        # When a dog is deleted and the page reloaded in the same moment
        driver.execute_script("""
            window.beforeTheReload = true;
            document.querySelector(`#results ul.items.edit > li[data-id='${arguments[0]}'] form.delete button`).click();
            location.reload();
        """, dogs[0])
        wait_for(driver, lambda d: d.execute_script("return !window.beforeTheReload && document.readyState === 'complete'"), 10)
        # Then the reloaded list is the one without it, as Kiosk holds it
        assert [item["itemID"] for item in server.api("/api/dogs")["items"]] == dogs[1:]
        assert dog_ids(driver) == dogs[1:], f"attempt {attempt}: {dog_ids(driver)}"


def test_the_star_of_an_item_page_is_set_in_place_with_the_focus_kept_online_and_with_kiosk_stopped(saved_phone):
    # Given a phone reading an item's page, under the service worker
    server, driver = saved_phone.server, saved_phone.driver
    open(driver, server.url("/rickandmorty/3"))
    driver.execute_script("window.notReloaded = true; window.scrollTo(0, 200)")
    star = lambda d: d.find_element(By.CSS_SELECTOR, "#main form.star button")
    # When its star is pressed from the keyboard
    driver.execute_script("arguments[0].focus()", star(driver))
    driver.switch_to.active_element.send_keys("\ue007")  # Enter
    # Then it is starred in place: no page load, the focus on the star, and Kiosk holds it
    wait_for(driver, lambda d: [item["itemID"] for item in server.api("/api/favorites")["items"]] == ["3"], 10, "not starred")
    # (The focused element's name and state read in the page: an element reference taken while the star is swapped
    # goes stale.)
    focused = lambda d: d.execute_script(
        "const e = document.activeElement; return `${e?.getAttribute('aria-label')}|${e?.getAttribute('aria-pressed')}`")
    wait_for(driver, lambda d: focused(d).startswith("Favorite: ") and focused(d).endswith("|true"), 10,
             "the focus is not on the star, pressed")
    assert driver.execute_script("return window.notReloaded === true")
    # And with Kiosk stopped, the star taken off waits in place, marked as waiting
    server.stop()
    driver.switch_to.active_element.send_keys("\ue007")
    wait_for(driver, lambda d: d.execute_script("return !!document.querySelector('#main form.star.pending')"), 15,
             "the star is not shown as waiting")
    assert driver.execute_script("return window.notReloaded === true")
    assert focused(driver).startswith("Favorite: ") and focused(driver).endswith("|false"), focused(driver)


def test_a_star_pressed_on_a_list_online_changes_the_star_alone_the_list_not_fetched_again_nor_announced(saved_phone):
    # Given a phone reading the Rick and Morty list, under the service worker, a while after it loaded
    server, driver = saved_phone.server, saved_phone.driver
    open(driver, server.url("/rickandmorty"))
    character = driver.execute_script("return document.querySelector('#results ul.items > li').dataset.id")
    driver.execute_script("""
        window.said = [];
        new MutationObserver(() => window.said.push(document.getElementById('results-said').textContent))
          .observe(document.getElementById('results-said'), { childList: true, characterData: true, subtree: true });
        window.listSwapped = false;
        document.getElementById('results').dataset.before = 'yes';
        performance.clearResourceTimings();
    """)
    # When its star is pressed
    form = star(driver, character)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", form)
    driver.execute_script("arguments[0].focus()", form.find_element(By.TAG_NAME, "button"))
    driver.switch_to.active_element.send_keys("\ue007")  # Enter
    wait_for(driver, lambda d: [item["itemID"] for item in server.api("/api/favorites")["items"]] == [character], 10, "not starred")
    focused = lambda d: d.execute_script(
        "const e = document.activeElement; return `${e?.getAttribute('aria-label')}|${e?.getAttribute('aria-pressed')}`")
    wait_for(driver, lambda d: focused(d).startswith("Favorite: ") and focused(d).endswith("|true"), 10,
             "the focus is not on the star, pressed")
    # Then, the outbox's word on the write heard, the list is the one shown before: not fetched again, not announced
    time.sleep(1.5)
    fetched = driver.execute_script("""
        return performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)
          .filter(path => path === '/rickandmorty');""")
    assert fetched == [], fetched
    assert driver.execute_script("return document.getElementById('results').dataset.before") == "yes"
    assert driver.execute_script("return window.said") == [], driver.execute_script("return window.said")
    assert focused(driver).endswith("|true"), focused(driver)


def test_a_star_pressed_while_kiosk_does_not_answer_waits_as_shown_within_a_pages_time_and_is_applied_once_it_does(saved_phone):
    # Given a phone reading the Rick and Morty list, under the service worker
    server, driver = saved_phone.server, saved_phone.driver
    open(driver, server.url("/rickandmorty"))
    character = driver.execute_script("return document.querySelector('#results ul.items > li').dataset.id")
    # When the Kiosk server accepts connections but does not answer (stopped, as a laptop asleep looks from the phone)
    # and a star is pressed
    server.process.send_signal(signal.SIGSTOP)
    try:
        started = time.monotonic()
        form = star(driver, character)
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", form)
        form.find_element(By.TAG_NAME, "button").click()
        # Then within a page's time it shows starred and waiting, and the outbox says so, rather than nothing at all
        wait_for(driver, lambda d: "pending" in star(d, character).get_attribute("class")
                 and star(d, character).find_element(By.TAG_NAME, "button").get_attribute("aria-pressed") == "true",
                 8, "the star shows nothing while Kiosk does not answer")
        assert time.monotonic() - started < 8, time.monotonic() - started
        wait_for(driver, lambda d: "1 change is waiting to be sent to Kiosk." in d.find_element(By.ID, "pending-edits").text, 5)
    finally:
        server.process.send_signal(signal.SIGCONT)
    # And once Kiosk answers, the write sent before is applied once, and the waiting mark goes
    wait_for(driver, lambda d: [item["itemID"] for item in server.api("/api/favorites")["items"]] == [character], 20, "not starred")
    wait_for(driver, lambda d: pending_count(d) == 0 and "pending" not in star(d, character).get_attribute("class"), 20,
             "the star still waits after Kiosk took it")


def saved_page_holds(driver, path: str, text: str) -> bool:
    """Whether the device's saved copy of `path` holds `text`."""
    return driver.execute_async_script("""
        const [path, text, done] = arguments;
        caches.open("kiosk-pages").then(c => c.match(new URL(path, location.origin).href))
          .then(r => r ? r.text() : "").then(html => done(html.includes(text)), () => done(false));
    """, path, text)


def test_a_star_set_online_shows_on_every_saved_page_holding_it_with_kiosk_stopped(saved_phone):
    # Given a phone that saved Rick and Morty's first page and Beth's page (4) for offline, reading her page online
    server, driver = saved_phone.server, saved_phone.driver
    open(driver, server.url("/rickandmorty/4"))
    # When she is starred there, online
    driver.find_element(By.CSS_SELECTOR, "#main form.star button").click()
    wait_for(driver, lambda d: [item["itemID"] for item in server.api("/api/favorites")["items"]] == ["4"], 10, "not starred")
    # Then the saved copies of the pages holding her star are saved again as Kiosk shows them now
    starred = 'action="/favorites/rickandmorty/4"'
    wait_for(driver, lambda d: saved_page_holds(d, "/rickandmorty", starred) and driver.execute_async_script("""
        const done = arguments[0];
        caches.open("kiosk-pages").then(c => c.match(new URL("/rickandmorty", location.origin).href)).then(r => r.text())
          .then(html => { const doc = new DOMParser().parseFromString(html, "text/html");
                          done(doc.querySelector("li[data-id='4'] form.star button")?.getAttribute("aria-pressed") === "true"); });
    """), 20, "the saved list still shows her unstarred")
    # And with Kiosk stopped, her page and the list both show her starred (they showed the star as before it)
    server.stop()
    open(driver, server.url("/rickandmorty/4"))
    assert driver.find_element(By.CSS_SELECTOR, "#main form.star button").get_attribute("aria-pressed") == "true"
    open(driver, server.url("/rickandmorty"))
    row_star = driver.find_element(By.CSS_SELECTOR, "#results ul.items > li[data-id='4'] form.star button")
    assert row_star.get_attribute("aria-pressed") == "true"


def test_a_dog_deleted_and_an_item_starred_online_show_on_the_saved_lists_favorites_and_home_with_kiosk_stopped(saved_phone):
    # Given a phone that saved the dogs list (not being edited: it holds no delete form), the favorites and Home
    server, driver = saved_phone.server, saved_phone.driver
    for path in ("/dogs", "/favorites", "/"):
        open(driver, server.url(path))
    # What the saved copy of `path` shows: its rows' ids and its links.
    saved = lambda path: driver.execute_async_script("""
        const [path, done] = arguments;
        caches.open("kiosk-pages").then(c => c.match(new URL(path, location.origin).href)).then(r => r ? r.text() : "")
          .then(html => { const doc = new DOMParser().parseFromString(html, "text/html");
                          done({ rows: [...doc.querySelectorAll("#results li[data-id]")].map(li => li.dataset.id),
                                 links: [...doc.querySelectorAll("#main a[href]")].map(a => a.getAttribute("href")) }); })
          .catch(error => done({ rows: [], links: [], error: String(error) }));
    """, path)
    # When the first dog is deleted in the editor, and Beth (Rick and Morty's 4) is starred on her page, online
    open(driver, server.url("/dogs?edit=1"))
    first = dog_ids(driver)[0]
    press_in_dog_row(driver, first, "delete")
    wait_for(driver, lambda d: first not in [item["itemID"] for item in server.api("/api/dogs")["items"]], 10, "not deleted")
    open(driver, server.url("/rickandmorty/4"))
    driver.find_element(By.CSS_SELECTOR, "#main form.star button").click()
    wait_for(driver, lambda d: [item["itemID"] for item in server.api("/api/favorites")["items"]] == ["4"], 10, "not starred")
    # Then the saved copies that show them are saved again as Kiosk shows them now, though they hold no form of theirs
    wait_for(driver, lambda d: saved("/dogs")["rows"] and first not in saved("/dogs")["rows"], 20,
             "the saved dogs list still shows the deleted dog")
    wait_for(driver, lambda d: "/rickandmorty/4" in saved("/favorites")["links"], 20, "the saved favorites lack Beth")
    wait_for(driver, lambda d: "/rickandmorty/4" in saved("/")["links"], 20, "the saved Home lacks Beth")
    # And with Kiosk stopped, the list reads without the dog and the favorites with Beth
    server.stop()
    open(driver, server.url("/dogs"))
    assert first not in driver.execute_script("return [...document.querySelectorAll('#results li[data-id]')].map(li => li.dataset.id)")
    open(driver, server.url("/favorites"))
    assert driver.find_elements(By.CSS_SELECTOR, "#results a[href='/rickandmorty/4']")


def test_a_reset_made_with_kiosk_stopped_says_it_waits_above_the_list(saved_phone):
    # Given a phone that saved the dogs editor for offline, then lost Kiosk
    server, driver = saved_phone.server, saved_phone.driver
    open(driver, server.url("/dogs?edit=1"))
    server.stop()
    open(driver, server.url("/dogs?edit=1"))
    # When Reset is confirmed
    # (clicked by script: the phone's banners and tab bar cover the bottom of the list)
    driver.execute_script("document.querySelector('details.confirm-reset summary').click()")
    driver.execute_script("document.querySelector('details.confirm-reset form button').click()")
    # Then the list says its Reset waits for Kiosk, above its rows (it looked untouched), and still after a reload
    note = lambda d: d.execute_script("return document.getElementById('reset-pending')?.textContent || ''")
    wait_for(driver, lambda d: "Reset waits to be sent" in note(d), 15, "no word that the Reset waits")
    open(driver, server.url("/dogs?edit=1"))
    wait_for(driver, lambda d: "Reset waits to be sent" in note(d), 15, "no word after a reload")


def test_a_change_kiosk_refuses_is_said_in_the_tab_that_made_it_not_in_another(saved_phone):
    # Given two tabs on the dogs editor
    server, driver = saved_phone.server, saved_phone.driver
    open(driver, server.url("/dogs?edit=1"))
    first = driver.current_window_handle
    driver.switch_to.new_window("tab")
    open(driver, server.url("/dogs?edit=1"))
    second = driver.current_window_handle
    # When the first tab sends a change Kiosk refuses (the deletion of a dog there is not), as its page would
    driver.switch_to.window(first)
    status = driver.execute_async_script("""
        const done = arguments[0];
        const csrf = document.querySelector("input[name=csrf]").value;
        fetch("/dogs/no-such-dog/delete", {method: "POST", body: new URLSearchParams({csrf, return: "/dogs?edit=1"}),
                                            headers: {"Content-Type": "application/x-www-form-urlencoded"}})
          .then(r => done(r.status), () => done(0));
    """)
    assert status == 404, status
    # Then the first tab says it could not be applied, and the second says nothing of it
    failed = lambda d: d.execute_script("return document.getElementById('failed-edits')?.textContent || ''")
    wait_for(driver, lambda d: "could not be applied" in failed(d), 15, "the tab that made it says nothing")
    driver.switch_to.window(second)
    driver.execute_script("return new Promise(resolve => setTimeout(resolve, 1500))")
    assert failed(driver) == "", failed(driver)


def test_an_item_starred_with_kiosk_stopped_is_on_the_favorites_page_as_waiting_until_it_is_unstarred(saved_phone):
    # Given a phone that saved for offline (each catalog's first page, its items and the favorites, none yet)
    server, driver = saved_phone.server, saved_phone.driver
    open(driver, server.url("/rickandmorty"))
    first = driver.execute_script("return document.querySelector('#results ul.items > li').dataset.id")
    title = driver.execute_script("return document.querySelector('#results ul.items > li .title').textContent.trim()")

    # When, with Kiosk stopped, its first character is starred and the favorites are opened from the device
    server.stop()
    open(driver, server.url("/rickandmorty"))
    press_star(driver, first, True)
    open(driver, server.url("/favorites"))

    # Then the character is among Rick and Morty's favorites, marked waiting, with its title from its own saved page
    rows = lambda d: d.execute_script("""return [...document.querySelectorAll('#results li.starred-here')].map(li =>
        [li.dataset.id, li.querySelector('.title').textContent, li.querySelector('a').getAttribute('href'),
         li.closest('section').getAttribute('aria-label'), li.classList.contains('pending')])""")
    wait_for(driver, lambda d: rows(d) == [[first, title, f"/rickandmorty/{first}", "Rick and Morty", True]], 10, f"rows: {rows(driver)}")
    assert driver.find_elements(By.CSS_SELECTOR, "#results p.empty") == []
    screenshot(driver, "offline-favorites-starred-here-phone", PHONE)
    assert axe_serious_violations(driver) == []

    # And when it is unstarred again (both wait), it is no longer listed
    open(driver, server.url("/rickandmorty"))
    press_star(driver, first, False)
    open(driver, server.url("/favorites"))
    wait_for(driver, lambda d: d.execute_script("return document.readyState") == "complete", 10)
    import time
    time.sleep(1)
    assert rows(driver) == []
