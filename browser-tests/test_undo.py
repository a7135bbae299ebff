"""Undo after deleting a dog: a toast offers it, online and with Kiosk unreachable (the deletion and its undo then
wait in the outbox together, shown as cancelling out, and are sent in order)."""

from __future__ import annotations

import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from conftest import DESKTOP, PHONE, axe_serious_violations, new_driver, screenshot, wait_for
from device import open, pending_count, wait_until_saved_for_offline
from test_offline_outbox import dog_ids, press_in_dog_row


def press_undo(driver) -> None:
    toast = driver.find_element(By.ID, "undo-toast")
    wait_for(driver, lambda d: toast.is_displayed(), 10, "no Undo toast after the deletion")
    toast.find_element(By.TAG_NAME, "button").click()


def test_undo_after_a_deletion_puts_the_dog_back_in_its_place(fresh_server):
    for size, name in ((PHONE, "phone"), (DESKTOP, "desktop")):
        driver = new_driver(size)
        try:
            # Given the dogs editor
            open(driver, fresh_server.url("/dogs?edit=1"))
            dogs = dog_ids(driver)
            # When the second dog is deleted, a toast names it and offers Undo
            press_in_dog_row(driver, dogs[1], "delete")
            wait_for(driver, lambda d: dog_ids(d) == [dogs[0], *dogs[2:]], 15, "the deleted dog is still shown")
            toast = driver.find_element(By.ID, "undo-toast")
            wait_for(driver, lambda d: toast.is_displayed() and "deleted." in toast.text, 10, "no toast")
            assert toast.find_element(By.TAG_NAME, "button").text == "Undo"
            # And the focus is on the Delete button of the dog that took its place, for a keyboard user to go on
            focused = driver.execute_script(
                "const a = document.activeElement; return [a.tagName, a.closest('li[data-id]')?.dataset.id || '', a.closest('form')?.className || '']")
            assert focused[:2] == ["BUTTON", dogs[2]] and focused[2] == driver.execute_script(
                f"return document.querySelector('li[data-id=\"{dogs[2]}\"] form[data-undo]').className"), focused
            assert axe_serious_violations(driver) == []
            screenshot(driver, f"undo-toast-{name}", size)
            # Then Undo puts it back where it was, on the page and in Kiosk
            press_undo(driver)
            wait_for(driver, lambda d: dog_ids(d) == dogs, 15, "Undo did not bring the dog back in its place")
            assert [item["itemID"] for item in fresh_server.api("/api/dogs")["items"]] == dogs
            # And the focus is on the dog's Delete button again, not thrown back to the top of the page
            focused = driver.execute_script(
                "const a = document.activeElement; return [a.tagName, a.closest('li[data-id]')?.dataset.id || '']")
            assert focused == ["BUTTON", dogs[1]], focused
        finally:
            driver.quit()


def test_undo_while_kiosk_is_unreachable_waits_in_the_outbox_with_the_deletion(start_server, tmp_path):
    data_dir = str(tmp_path / "data")
    server = start_server(data_dir)
    port = server.bound_port
    driver = new_driver(PHONE)
    try:
        # Given a phone that saved the dogs editor for offline
        open(driver, server.url("/"))
        wait_until_saved_for_offline(driver)
        open(driver, server.url("/dogs?edit=1"))
        dogs = dog_ids(driver)
        # When, with Kiosk stopped, a dog is deleted and the deletion undone
        server.stop()
        open(driver, server.url("/dogs?edit=1"))
        press_in_dog_row(driver, dogs[2], "delete")
        wait_for(driver, lambda d: dog_ids(d) == [*dogs[:2], *dogs[3:]], 15, "the deleted dog is still shown")
        press_undo(driver)
        # Then the dog shows in its place again, with both changes waiting
        wait_for(driver, lambda d: dog_ids(d) == dogs, 15, "the undone deletion still hides the dog")
        wait_for(driver, lambda d: pending_count(d) == 2, 10, "the deletion and its undo are not both waiting")
        # And when Kiosk answers again, both are sent in order: the dog was never lost
        server = start_server(data_dir, port=port)
        open(driver, server.url("/dogs?edit=1"))
        wait_for(driver, lambda d: pending_count(d) == 0, 30, "edits still waiting after Kiosk answered")
        assert [item["itemID"] for item in server.api("/api/dogs")["items"]] == dogs
        assert dog_ids(driver) == dogs
    finally:
        driver.quit()


def test_a_favorite_removed_on_the_favorites_page_comes_back_with_undo(fresh_server):
    driver = new_driver(PHONE)
    try:
        # Given a dog starred from its list, and the favorites page
        open(driver, fresh_server.url("/dogs"))
        first = driver.find_element(By.CSS_SELECTOR, "#results ul.items > li[data-id]")
        dog = first.get_attribute("data-id")
        first.find_element(By.CSS_SELECTOR, "form.star button").click()
        wait_for(driver, lambda d: any(item["itemID"] == dog for item in fresh_server.api("/api/favorites")["items"]),
                 15, "the star was not saved")
        open(driver, fresh_server.url("/favorites"))
        row = lambda d: d.find_elements(By.CSS_SELECTOR, f"#results li[data-id='{dog}']")
        assert row(driver)

        # When its star is pressed there, then it leaves the page and a toast offers Undo
        row(driver)[0].find_element(By.CSS_SELECTOR, "form.star button").click()
        wait_for(driver, lambda d: not row(d), 15, "the removed favorite is still shown")
        toast = driver.find_element(By.ID, "undo-toast")
        wait_for(driver, lambda d: toast.is_displayed() and "removed from favorites." in toast.text, 10, "no Undo toast")
        assert axe_serious_violations(driver) == []

        # And Undo makes it a favorite again, on the page and in Kiosk
        press_undo(driver)
        wait_for(driver, lambda d: row(d), 15, "Undo did not bring the favorite back")
        assert any(item["itemID"] == dog for item in fresh_server.api("/api/favorites")["items"])
    finally:
        driver.quit()


def test_a_dog_moved_to_the_top_keeps_the_focus_on_its_row_and_esc_dismisses_the_toast(fresh_server):
    driver = new_driver(PHONE)
    try:
        # Given the dogs editor, the keyboard on the second dog's Move up
        open(driver, fresh_server.url("/dogs?edit=1"))
        dogs = dog_ids(driver)
        up = driver.find_element(By.CSS_SELECTOR, f"#results ul.items.edit > li[data-id='{dogs[1]}'] form.move[data-direction=up] button")
        driver.execute_script("arguments[0].focus()", up)
        # (what the page's live region says, each time, as a screen reader hears it: a later swap of the list may say
        # the list's own status after it)
        driver.execute_script("""window.kioskSaid = [];
            new MutationObserver(() => { const text = document.getElementById('results-said')?.textContent; if (text) window.kioskSaid.push(text); })
                .observe(document.body, { subtree: true, childList: true, characterData: true });""")
        # When it is pressed (the dog becomes the first, whose Move up is not shown)
        driver.switch_to.active_element.send_keys("\ue007")  # Enter
        wait_for(driver, lambda d: dog_ids(d)[0] == dogs[1], 15, "the dog did not move up")
        # Then the focus is on its row still, on its Move down, not thrown to the page
        wait_for(driver, lambda d: d.execute_script(
            "const a = document.activeElement; return a.closest('li[data-id]')?.dataset.id + ' ' + a.closest('form')?.dataset.direction")
            == f"{dogs[1]} down", 5, "the focus left the moved dog's row")
        # And a screen reader is told where it now stands
        title = driver.find_element(By.CSS_SELECTOR, f"#results ul.items.edit > li[data-id='{dogs[1]}'] .title").text
        said = lambda d: d.execute_script("return window.kioskSaid")
        wait_for(driver, lambda d: f"{title}: position 1 of {len(dogs)}." in said(d), 5, f"the move's new place was not said: {said(driver)}")
        # And after a deletion, Esc dismisses the toast
        press_in_dog_row(driver, dogs[2], "delete")
        shown = lambda d: d.execute_script("const t = document.getElementById('undo-toast'); return !!t && !t.hidden")
        wait_for(driver, shown, 10, "no toast")
        driver.find_element(By.TAG_NAME, "body").send_keys("\ue00c")  # Escape
        wait_for(driver, lambda d: not shown(d), 5, "Esc left the toast")
    finally:
        driver.quit()


def test_two_deletions_in_a_row_are_both_undone_by_the_one_undo_each_in_its_place(fresh_server):
    driver = new_driver(PHONE)
    try:
        # Given the dogs editor
        open(driver, fresh_server.url("/dogs?edit=1"))
        dogs = dog_ids(driver)
        titles = driver.execute_script(
            "return Object.fromEntries([...document.querySelectorAll('#results li[data-id]')].map(li => [li.dataset.id, li.querySelector('.title').textContent]))")
        # When the second dog is deleted, then the fourth while the toast still offers Undo
        press_in_dog_row(driver, dogs[1], "delete")
        wait_for(driver, lambda d: dog_ids(d) == [dogs[0], *dogs[2:]], 15, "the first deleted dog is still shown")
        press_in_dog_row(driver, dogs[3], "delete")
        wait_for(driver, lambda d: dog_ids(d) == [dogs[0], dogs[2], *dogs[4:]], 15, "the second deleted dog is still shown")
        # Then the toast names both
        toast = driver.find_element(By.ID, "undo-toast")
        expected = f"{titles[dogs[1]]} and {titles[dogs[3]]} deleted."
        wait_for(driver, lambda d: toast.is_displayed() and expected in toast.text, 10, f"toast: {toast.text}")
        # And its Undo brings both back, each where it was, on the page and in Kiosk
        press_undo(driver)
        wait_for(driver, lambda d: dog_ids(d) == dogs, 15, f"after Undo: {dog_ids(driver)}")
        wait_for(driver, lambda d: [item["itemID"] for item in fresh_server.api("/api/dogs")["items"]] == dogs, 10,
                 "Kiosk's list is not the original")
    finally:
        driver.quit()


def test_the_undo_toast_waits_while_focused_or_hovered_and_gives_the_focus_to_the_list_when_it_goes(fresh_server):
    # (WCAG 2.2.1, Timing Adjustable: a reader on their way to Undo is not timed out.)
    driver = new_driver(DESKTOP)
    try:
        open(driver, fresh_server.url("/dogs?edit=1"))
        dogs = dog_ids(driver)
        shown = lambda d: d.execute_script("const t = document.getElementById('undo-toast'); return !!t && !t.hidden")
        # Given a deletion's toast, the keyboard on its Undo
        press_in_dog_row(driver, dogs[1], "delete")
        wait_for(driver, shown, 10, "no toast")
        driver.execute_script("document.querySelector('#undo-toast button').focus()")
        # When more than its ten seconds pass
        time.sleep(11)
        # Then it is still there
        assert shown(driver), "the toast hid with the focus on its Undo"
        # And when Esc hides it, the focus goes to the list, not to the page's body
        driver.switch_to.active_element.send_keys("\ue00c")  # Escape
        wait_for(driver, lambda d: not shown(d), 5, "Esc left the toast")
        focused = driver.execute_script("const a = document.activeElement; return a.matches('#results ul.items') ? 'list' : a.tagName")
        assert focused == "list", focused

        # Given another deletion's toast, the pointer over it
        press_in_dog_row(driver, dogs[2], "delete")
        wait_for(driver, shown, 10, "no toast after the second deletion")
        ActionChains(driver).move_to_element(driver.find_element(By.ID, "undo-toast")).perform()
        time.sleep(11)
        assert shown(driver), "the toast hid with the pointer on it"
        # When the pointer leaves, its ten seconds start again, in full
        ActionChains(driver).move_to_element(driver.find_element(By.TAG_NAME, "h1")).perform()
        time.sleep(5)
        assert shown(driver), "the toast hid before ten seconds after the pointer left"
        wait_for(driver, lambda d: not shown(d), 10, "the toast stayed after the pointer left")
    finally:
        driver.quit()


def test_a_move_refused_because_the_list_changed_elsewhere_is_said_and_the_list_shown_as_it_is(fresh_server, kiosk_bin):
    import subprocess
    driver = new_driver(PHONE)
    try:
        # Given the dogs editor, and then two dogs deleted elsewhere (the command line, another device)
        open(driver, fresh_server.url("/dogs?edit=1"))
        dogs = dog_ids(driver)
        for dog in dogs[:2]:
            result = subprocess.run([kiosk_bin, "dogs", "delete", dog, "--data-dir", fresh_server.data_dir],
                                    capture_output=True, text=True, timeout=60)
            assert result.returncode == 0, result.stderr
        # When the page's second-to-last dog is moved down, to a position the list no longer has
        down = driver.find_element(By.CSS_SELECTOR,
                                   f"#results ul.items.edit > li[data-id='{dogs[-2]}'] form.move[data-direction=down] button")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", down)
        down.click()
        # Then a toast says why, by the dog's name, and the list shows as it is now (without the two deleted)
        # (in a toast, or, the page's service worker having sent it, in its banner of failed edits: once, not both)
        said = lambda d: d.execute_script("""
            return [document.getElementById('undo-toast'), document.getElementById('failed-edits')]
              .filter(e => e && !e.hidden).map(e => e.textContent).join(' | ')""")
        wait_for(driver, lambda d: "the list has changed since this page was shown" in said(d), 15, "no word of the refused move")
        assert said(driver).count("the list has changed") == 1, said(driver)
        wait_for(driver, lambda d: dog_ids(d) == dogs[2:], 15, "the list was not shown as it is now")
    finally:
        driver.quit()


def test_a_reset_made_while_the_toast_offers_undo_takes_the_offer_away(fresh_server):
    driver = new_driver(PHONE)
    try:
        # Given the dogs editor, a dog deleted, and the toast offering to undo it
        open(driver, fresh_server.url("/dogs?edit=1"))
        dogs = dog_ids(driver)
        press_in_dog_row(driver, dogs[1], "delete")
        shown = lambda d: any(t.is_displayed() and "deleted." in t.text for t in d.find_elements(By.ID, "undo-toast"))
        wait_for(driver, shown, 10, "no toast")
        toast = driver.find_element(By.ID, "undo-toast")
        # When the list is reset (its second step confirmed)
        driver.execute_script("document.querySelector('form.reset').closest('details').open = true")
        button = driver.find_element(By.CSS_SELECTOR, "form.reset button")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
        button.click()
        # Then the dog is back, and the toast no longer offers to bring it back
        wait_for(driver, lambda d: dog_ids(d) == dogs, 15, f"the reset did not bring the list back: {dog_ids(driver)}")
        wait_for(driver, lambda d: not toast.is_displayed(), 5, "the toast still offers Undo after the reset")
        # And a screen reader is told the list is back in its order
        wait_for(driver, lambda d: d.execute_script("return document.getElementById('results-said')?.textContent")
                 == "The list is back in its original order.", 5, "the reset was not said")
    finally:
        driver.quit()
