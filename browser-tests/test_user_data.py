"""The user's own data: dogs edits and favorites are kept in the store, across reloads and restarts."""

from __future__ import annotations

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By

from conftest import page_ready, row_titles, wait_for

EDIT_ROWS = "#results ul.items.edit > li"
LIST_ROWS = "main ul.items > li"


def press(driver, label: str) -> None:
    """Clicks the button whose accessible label is `label` (finding it again if a swap replaced it)."""
    for _ in range(5):
        buttons = [b for b in driver.find_elements(By.CSS_SELECTOR, "button[aria-label]")
                   if b.get_attribute("aria-label") == label]
        assert buttons, f"no button labelled {label!r}"
        try:
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", buttons[0])
            buttons[0].click()
            return
        except StaleElementReferenceException:
            continue
    raise AssertionError(f"the button labelled {label!r} kept being replaced")


def wait_for_titles(driver, selector: str, expected: list[str], what: str) -> None:
    wait_for(driver, lambda d: row_titles(d, selector) == expected, 15,
             f"{what}: expected {expected}, shown {row_titles(driver, selector)}")


def test_dogs_moves_and_deletions_survive_a_reload_and_reset_restores_all_five(fresh_server, browser):
    server = fresh_server
    dogs = [item["title"] for item in server.api("/api/dogs")["items"]]
    assert len(dogs) == 5
    browser.get(server.url("/dogs?edit=1"))
    page_ready(browser)
    assert row_titles(browser, EDIT_ROWS) == dogs

    press(browser, f"Move {dogs[1]} up")
    moved = [dogs[1], dogs[0], dogs[2], dogs[3], dogs[4]]
    wait_for_titles(browser, EDIT_ROWS, moved, "after moving the second dog up")
    press(browser, f"Delete {dogs[3]}")
    edited = [dogs[1], dogs[0], dogs[2], dogs[4]]
    wait_for_titles(browser, EDIT_ROWS, edited, f"after deleting {dogs[3]}")

    browser.get(server.url("/dogs"))
    page_ready(browser)
    assert row_titles(browser, LIST_ROWS) == edited
    browser.refresh()
    page_ready(browser)
    assert row_titles(browser, LIST_ROWS) == edited
    assert [item["title"] for item in server.api("/api/dogs")["items"]] == edited

    browser.get(server.url("/dogs?edit=1"))
    page_ready(browser)
    # Reset is a second step: it opens, says what it forgets, then resets
    browser.find_element(By.CSS_SELECTOR, "details.confirm-reset summary").click()
    assert "Forget every deletion" in browser.find_element(By.CSS_SELECTOR, "details.confirm-reset").text
    press(browser, "Reset the Dogs list")
    wait_for_titles(browser, EDIT_ROWS, dogs, "after Reset")
    # (the keyboard's focus stays in the list, not dropped on the page)
    assert browser.execute_script("return !!document.activeElement.closest('#results')"), \
        browser.execute_script("return document.activeElement.outerHTML.slice(0, 120)")
    browser.get(server.url("/dogs"))
    page_ready(browser)
    assert row_titles(browser, LIST_ROWS) == dogs


DRAG_AND_DROP = """
    const [from, to] = arguments;
    const rows = document.querySelectorAll("#results ul.items.edit > li[draggable=true]");
    if (rows.length <= Math.max(from, to)) return rows.length;
    const transfer = new DataTransfer();
    // A point in the lower half of a row means "after it", as a pointer there would.
    const at = (element, fraction) => {
        const box = element.getBoundingClientRect();
        return { clientX: box.left + box.width / 2, clientY: box.top + box.height * fraction };
    };
    const fire = (element, type, fraction) => element.dispatchEvent(new DragEvent(type,
        { bubbles: true, cancelable: true, composed: true, dataTransfer: transfer, ...at(element, fraction) }));
    fire(rows[from], "dragstart", 0.5);
    fire(rows[to], "dragenter", 0.75);
    fire(rows[to], "dragover", 0.75);
    fire(rows[to], "drop", 0.75);
    fire(rows[from], "dragend", 0.5);
    return -1;
"""


def test_dropping_the_first_dog_on_the_lower_half_of_the_third_puts_it_after_the_third_across_a_reload(fresh_server, browser):
    server = fresh_server
    dogs = [item["title"] for item in server.api("/api/dogs")["items"]]
    browser.get(server.url("/dogs?edit=1"))
    page_ready(browser)

    assert browser.execute_script(DRAG_AND_DROP, 0, 2) == -1, "the edit rows are not draggable"
    dropped = [dogs[1], dogs[2], dogs[0], dogs[3], dogs[4]]
    wait_for_titles(browser, EDIT_ROWS, dropped, "after dropping the first dog after the third")

    browser.get(server.url("/dogs"))
    page_ready(browser)
    assert row_titles(browser, LIST_ROWS) == dropped


def test_a_starred_character_is_still_a_favorite_after_a_restart_on_the_same_data(start_server, tmp_path, browser):
    data_dir = str(tmp_path / "data")
    first = start_server(data_dir)
    browser.get(first.url("/rickandmorty"))
    page_ready(browser)
    character = first.api("/api/rickandmorty")["items"][1]
    star = f"#results ul.items > li[data-id='{character['itemID']}'] form.star button"
    assert browser.find_element(By.CSS_SELECTOR, star).get_attribute("aria-pressed") == "false"

    press(browser, f"Favorite: {character['title']}")
    wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, star).get_attribute("aria-pressed") == "true", 15,
             "the star did not turn on")
    first.stop()

    second = start_server(data_dir)
    browser.get(second.url("/favorites"))
    page_ready(browser)
    assert character["title"] in row_titles(browser, LIST_ROWS)
    starred = browser.find_elements(By.CSS_SELECTOR, f"{LIST_ROWS} form.star button[aria-pressed=true]")
    assert any(b.get_attribute("aria-label") == f"Favorite: {character['title']}" for b in starred)
    assert [item["itemID"] for item in second.api("/api/favorites")["items"]] == [character["itemID"]]


def test_on_a_phone_the_reset_question_opens_in_view_above_the_tab_bar(server, phone_browser):
    # The dogs list in edit mode on a phone, scrolled so that Reset… sits just above the tab bar.
    phone_browser.get(server.url("/dogs?edit=1"))
    page_ready(phone_browser)
    summary = phone_browser.find_element(By.CSS_SELECTOR, "details.confirm-reset summary")
    phone_browser.execute_script("arguments[0].scrollIntoView({block: 'end'})", summary)
    summary.click()
    # Opened, its question and its button are in view, above the tab bar: tapped where they are, they answer.
    button = phone_browser.find_element(By.CSS_SELECTOR, "details.confirm-reset form button")
    wait_for(phone_browser, lambda d: d.execute_script(
        "const b = arguments[0].getBoundingClientRect(), tabs = document.querySelector('nav.tabs').getBoundingClientRect();"
        "return b.top >= 0 && b.bottom <= tabs.top;", button), 5, "the Reset button is hidden under the tab bar")
    hit = phone_browser.execute_script(
        "const b = arguments[0].getBoundingClientRect();"
        "return arguments[0].contains(document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2));", button)
    assert hit, "the Reset button's middle is covered"
