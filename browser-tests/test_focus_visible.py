"""On a phone, a control reached with Tab is never hidden behind the sticky top bar or the bottom tab bar (WCAG 2.4.11),
and the undo toast never sits over a control the page can scroll clear of it."""

from __future__ import annotations

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from conftest import PHONE, new_driver, page_ready, screenshot, wait_for
from device import open
from test_offline_outbox import dog_ids, press_in_dog_row

# Where the focused control is against the bars, in CSS pixels; controls inside the bars themselves are theirs to show.
FOCUS_PLACE = """
    const active = document.activeElement;
    if (!active || active === document.body || active.closest('header.top, nav.tabs, .skip')) return null;
    const rect = active.getBoundingClientRect();
    const top = document.querySelector('header.top')?.getBoundingClientRect().bottom ?? 0;
    const tabs = document.querySelector('nav.tabs');
    const bottom = tabs && getComputedStyle(tabs).position === 'fixed' ? tabs.getBoundingClientRect().top : innerHeight;
    const label = (active.getAttribute('aria-label') || active.textContent || active.tagName).trim().slice(0, 40);
    return {label, top: rect.top, bottom: rect.bottom, barBottom: top, tabsTop: bottom};
"""


def hidden_focus_stops(driver, presses: int) -> list[dict]:
    """Tabs through the page `presses` times; every focused control that ended up partly under a bar."""
    hidden = []
    for _ in range(presses):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        place = driver.execute_script(FOCUS_PLACE)
        # (A region taller than the space between the bars, the console's list of requests, cannot fit: it is shown.)
        fits = place and place["bottom"] - place["top"] <= place["tabsTop"] - place["barBottom"]
        if fits and (place["top"] < place["barBottom"] - 1 or place["bottom"] > place["tabsTop"] + 1):
            hidden.append(place)
    return hidden


def test_tabbing_through_a_phone_page_never_leaves_the_focus_under_a_bar(server):
    driver = new_driver(PHONE)
    try:
        for path, presses in (("/rickandmorty", 45), ("/dogs?edit=1", 30), ("/debug", 40)):
            # Given a long page on a phone, with its sticky top bar and (but for the console) its bottom tab bar
            driver.get(server.url(path))
            page_ready(driver)
            # When a keyboard user tabs through it
            hidden = hidden_focus_stops(driver, presses)
            # Then every control they reach is scrolled fully clear of both bars
            assert hidden == [], f"{path}: focused controls hidden behind a bar: {hidden[:3]}"
    finally:
        driver.quit()


def test_the_undo_toast_leaves_the_reset_control_reachable_on_a_phone(fresh_server):
    driver = new_driver(PHONE)
    try:
        # Given the dogs editor on a phone, and a dog just deleted (the toast offering Undo shows)
        open(driver, fresh_server.url("/dogs?edit=1"))
        dogs = dog_ids(driver)
        press_in_dog_row(driver, dogs[0], "delete")
        wait_for(driver, lambda d: d.execute_script("return !document.getElementById('undo-toast')?.hidden"), 10, "no toast")
        # When the page is scrolled to its end (once the list, swapped in after the deletion, is there again)
        def places(d):
            d.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
            return d.execute_script("""
                const box = e => { const r = e?.getBoundingClientRect(); return r && {top: r.top, bottom: r.bottom}; };
                const reset = box(document.querySelector('details.confirm-reset summary'));
                const toast = document.getElementById('undo-toast');
                return reset && toast && !toast.hidden && [box(toast), reset];
            """)
        toast, reset = wait_for(driver, places, 10, "no Reset under the list")
        screenshot(driver, "undo-toast-above-reset-phone", PHONE)
        assert reset["bottom"] <= toast["top"], f"the toast {toast} covers Reset {reset}"
    finally:
        driver.quit()
