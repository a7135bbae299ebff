"""The network debugger's breakpoints in a real browser: a response paused at a breakpoint is edited in
the JSON tree of /debug/paused, and the page that waited shows the edit."""

from __future__ import annotations

import subprocess

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import PHONE, screenshot


def test_a_response_edited_in_the_tree_shows_in_the_page_that_waited(fresh_server, kiosk_bin, browser):
    server = fresh_server
    # A response breakpoint, set from the command line while the server runs (it reads the file again).
    result = subprocess.run([kiosk_bin, "breakpoint", "set", "rickandmorty.characters", "--response", "pause",
                             "--data-dir", server.data_dir], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr

    # The console's paused list is open, empty, before anything pauses.
    console = browser.current_window_handle
    browser.get(server.url("/debug/paused"))
    assert not browser.find_elements(By.CSS_SELECTOR, "#results a[href^='/debug/paused/']")

    # A second tab opens a page nothing is stored for: it waits at the breakpoint.
    browser.execute_script("window.open(arguments[0], 'waiting')", server.url("/rickandmorty?page=3"))
    WebDriverWait(browser, 30).until(lambda d: server.api("/debug/api/paused"))

    # The open list shows it by itself, without a reload; its page shows the response as a tree.
    browser.switch_to.window(console)
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#results a[href^='/debug/paused/']"))
    # (its time left goes on counting down while the list is open)
    left = lambda d: int(d.find_element(By.CSS_SELECTOR, "#results .countdown").text)
    first = left(browser)
    WebDriverWait(browser, 10).until(lambda d: left(d) <= first - 2)
    browser.find_element(By.CSS_SELECTOR, "#results a[href^='/debug/paused/']").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".json-editor"))
    name = browser.find_element(By.CSS_SELECTOR, "input[aria-label='Value of $.results[0].name']")
    # Items start collapsed below the second level: open the first result as a user would.
    browser.execute_script("return arguments[0].closest('details').querySelector(':scope > summary')", name).click()
    first = name.get_attribute("value")
    name.clear()
    name.send_keys("Tree Rick")
    # A number keeps its type: an invalid number is marked and not written back.
    count = browser.find_element(By.CSS_SELECTOR, "input[aria-label='Value of $.info.count']")
    count.send_keys("x")
    assert count.get_attribute("aria-invalid") == "true"
    # Sent so, nothing is sent: the field is named, focused, and the request stays paused (the app never gets 826).
    browser.find_element(By.CSS_SELECTOR, "button[name=action][value=edit]").click()
    alert = browser.find_element(By.CSS_SELECTOR, ".json-editor ~ [role=alert], [role=alert].banner.error")
    WebDriverWait(browser, 5).until(lambda d: alert.is_displayed() and "$.info.count" in alert.text)
    assert "/debug/paused/" in browser.current_url and server.api("/debug/api/paused")
    assert browser.switch_to.active_element == count
    count.send_keys("\b")
    assert count.get_attribute("aria-invalid") == "false"
    # A text that reads as no number, made a number, is an empty field to fill in, not a 0 the app would get.
    Select(browser.find_element(By.CSS_SELECTOR, "select[aria-label='Type of $.results[0].status']")).select_by_value("n")
    status = browser.find_element(By.CSS_SELECTOR, "input[aria-label='Value of $.results[0].status']")
    assert status.get_attribute("value") == "" and status.get_attribute("aria-invalid") == "true"
    Select(browser.find_element(By.CSS_SELECTOR, "select[aria-label='Type of $.results[0].status']")).select_by_value("s")
    # A key added is focused with its name selected: typing names it.
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='+ key — Add to $']").click()
    browser.switch_to.active_element.send_keys("note")
    assert '"note": ""' in browser.execute_script("return document.querySelector('textarea[name=body]').value")
    # Its type changed, the value carries over: 826 becomes "826", and back again 826.
    kind = Select(browser.find_element(By.CSS_SELECTOR, "select[aria-label='Type of $.info.count']"))
    kind.select_by_value("s")
    assert '"count": "826"' in browser.execute_script("return document.querySelector('textarea[name=body]').value")
    Select(browser.find_element(By.CSS_SELECTOR, "select[aria-label='Type of $.info.count']")).select_by_value("n")
    body = browser.execute_script("return document.querySelector('textarea[name=body]').value")
    assert '"name": "Tree Rick"' in body and '"count": 826' in body
    # A type changed from the keyboard keeps the focus on its menu, so the arrows step through the types.
    menu = browser.find_element(By.CSS_SELECTOR, "select[aria-label='Type of $.info.count']")
    browser.execute_script("arguments[0].focus()", menu)
    menu.send_keys(Keys.ARROW_UP)
    assert '"count": "826"' in browser.execute_script("return document.querySelector('textarea[name=body]').value")
    assert browser.switch_to.active_element.get_attribute("aria-label") == "Type of $.info.count"
    browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    assert '"count": 826' in browser.execute_script("return document.querySelector('textarea[name=body]').value")
    # A key renamed renames every control below it, in the path the diff page writes (a dot in a name is quoted).
    info = browser.execute_script("return [...document.querySelectorAll('input.key')].find(k => k.value === 'info')")
    info.send_keys(Keys.END, ".v2", Keys.TAB)
    assert browser.find_elements(By.CSS_SELECTOR, """input[aria-label='Value of $["info.v2"].count']""")
    assert not browser.find_elements(By.CSS_SELECTOR, "input[aria-label='Value of $.info.count']")
    info.send_keys(Keys.BACKSPACE * 3, Keys.TAB)
    assert browser.find_elements(By.CSS_SELECTOR, "input[aria-label='Value of $.info.count']")
    # A member holding an object or array has its × before the subtree, so Tab reaches it after the key, not after
    # every field inside.
    order = browser.execute_script("""
        const key = [...document.querySelectorAll('input.key')].find(k => k.value === 'info');
        const li = key.closest('li'), remove = li.querySelector(':scope > button');
        return [...li.children].map(c => c === key ? 'key' : c === remove ? 'remove' : c.tagName.toLowerCase());""")
    assert order == ["key", "remove", "details"], order
    # A key removed hands the focus to the next key's ×, or after the last to the Add of its object.
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='+ key — Add to $']").click()
    browser.switch_to.active_element.send_keys("spare")
    keys = lambda: browser.execute_script("return [...document.querySelectorAll('.json-editor > details > ul > li > input.key')].map(k => k.value)")
    assert keys()[-2:] == ["note", "spare"], keys()
    browser.find_element(By.CSS_SELECTOR, "button[aria-label^='Remove note']").click()
    assert browser.switch_to.active_element.get_attribute("aria-label").startswith("Remove spare"), browser.switch_to.active_element.get_attribute("aria-label")
    browser.switch_to.active_element.click()
    assert browser.switch_to.active_element.get_attribute("aria-label") == "+ key — Add to $"
    assert "note" not in keys() and "spare" not in keys()
    # Text that is no JSON does not become a tree: the switch says why and where, the text kept as typed.
    toggle = browser.find_element(By.XPATH, "//button[normalize-space()='Edit as text']")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", toggle)
    toggle.click()
    textarea = browser.find_element(By.CSS_SELECTOR, "textarea[name=body]")
    kept = textarea.get_attribute("value")
    browser.execute_script("arguments[0].value = '{\"a\": }'", textarea)
    toggle.click()
    assert toggle.text == "Not JSON: expected a value at character 7", toggle.text
    assert textarea.is_displayed() and textarea.get_attribute("value") == '{"a": }'
    browser.execute_script("arguments[0].value = arguments[1]", textarea, kept)
    toggle.click()
    assert toggle.text == "Edit as text" and not textarea.is_displayed()
    # And leaving the page with the edit not sent would ask first (the browser's own prompt)
    assert browser.execute_script(
        "const e = new Event('beforeunload', { cancelable: true }); window.dispatchEvent(e); return e.defaultPrevented")
    browser.find_element(By.CSS_SELECTOR, "button[name=action][value=edit]").click()
    WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith("/debug/paused"))

    # The waiting tab shows the edit, in place of the upstream's name.
    for handle in browser.window_handles:
        if handle != console:
            browser.switch_to.window(handle)
    WebDriverWait(browser, 30).until(lambda d: "Tree Rick" in d.page_source)
    assert first not in [row.text for row in browser.find_elements(By.CSS_SELECTOR, "#results .title")]
    # And the log marks it edited; nothing of it was stored, so the page asks the upstream again next time.
    assert any(record["decision"] == "edited" for record in server.api("/debug/api/requests?decision=edited"))


def test_on_a_phone_each_field_of_a_paused_answer_takes_at_most_two_rows_and_nothing_overflows(fresh_server, kiosk_bin, phone_browser):
    # Given a character's answer paused at a breakpoint, opened on a phone.
    server, browser = fresh_server, phone_browser
    result = subprocess.run([kiosk_bin, "breakpoint", "set", "rickandmorty.character", "--response", "pause",
                             "--data-dir", server.data_dir], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    browser.get(server.url("/debug/paused"))
    browser.execute_script("window.open(arguments[0], 'waiting')", server.url("/rickandmorty/2?refresh=1"))
    WebDriverWait(browser, 30).until(lambda d: server.api("/debug/api/paused"))
    browser.get(server.url("/debug/paused/" + str(server.api("/debug/api/paused")[0]["id"])))
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".json-editor"))

    # When the tree shows the character's fields
    rows = browser.execute_script("""
        return [...document.querySelectorAll('.json-editor > details > ul > li')].filter(li => li.querySelector(':scope > input.key'))
            .map(li => ({ key: li.querySelector('input.key').value, height: li.getBoundingClientRect().height,
                          remove: li.querySelector(':scope > button').getBoundingClientRect().top - li.getBoundingClientRect().top }));
    """)
    control = browser.execute_script("return document.querySelector('.json-editor input.key').getBoundingClientRect().height")

    # Then each scalar field takes at most two rows of controls (its name and removal, then its type and value), its
    # removal on its name's row, and the page is no wider than the phone
    scalars = [row for row in rows if row["key"] not in ("origin", "location", "episode")]
    assert len(scalars) >= 8, rows
    for row in scalars:
        assert row["height"] <= 2 * control + 24, (row, control)
        assert row["remove"] < control, (row, control)
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")

    # And a field made true or false shows its type's whole name beside its value menu (it was cut to "true or f")
    Select(browser.execute_script("""
        return [...document.querySelectorAll('.json-editor li')].find(li => li.querySelector(':scope > input.key')?.value === 'status')
            .querySelector('.scalar select');""")).select_by_value("b")
    widths = browser.execute_script("""
        const kind = [...document.querySelectorAll('.json-editor li')].find(li => li.querySelector(':scope > input.key')?.value === 'status')
            .querySelector('.scalar select');
        const natural = kind.cloneNode(true);
        natural.style.cssText = 'position: absolute; visibility: hidden; max-width: none; width: auto';
        kind.parentElement.append(natural);
        const needed = natural.getBoundingClientRect().width;
        natural.remove();
        return { shown: kind.getBoundingClientRect().width, needed, value: kind.nextElementSibling.tagName };""")
    assert widths["value"] == "SELECT" and widths["shown"] >= widths["needed"] - 1, widths
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    browser.switch_to.window(browser.current_window_handle)  # in front of the waiting tab, so that it paints
    screenshot(browser, "breakpoint-editor-phone", PHONE)


def test_j_and_k_reach_an_exchange_paused_at_the_top_of_the_console_list(fresh_server, kiosk_bin, browser):
    server = fresh_server
    # Given a logged request, and then one paused at a response breakpoint, listed first
    server.api("/api/nyt")
    result = subprocess.run([kiosk_bin, "breakpoint", "set", "rickandmorty.characters", "--response", "pause",
                             "--data-dir", server.data_dir], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    console = browser.current_window_handle
    browser.execute_script("window.open(arguments[0], 'waiting')", server.url("/rickandmorty?page=3"))
    WebDriverWait(browser, 30).until(lambda d: server.api("/debug/api/paused"))
    browser.switch_to.window(console)
    browser.get(server.url("/debug"))
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#results a[href^='/debug/paused/']"))
    href = lambda: browser.switch_to.active_element.get_attribute("href") or ""
    # When j is pressed from the page, then again, then k
    browser.find_element(By.TAG_NAME, "body").send_keys("j")
    # Then the first row reached is the paused exchange, the next a logged request, and k goes back to the pause
    assert "/debug/paused/" in href(), href()
    browser.switch_to.active_element.send_keys("j")
    assert "/debug/requests/" in href(), href()
    browser.switch_to.active_element.send_keys("k")
    assert "/debug/paused/" in href(), href()


def test_on_a_phone_a_request_pausing_while_the_console_list_is_open_moves_nothing_on_it(fresh_server, kiosk_bin, phone_browser):
    server, browser = fresh_server, phone_browser
    # Given a phone showing the console's list, a response breakpoint set
    server.api("/api/nyt")
    result = subprocess.run([kiosk_bin, "breakpoint", "set", "rickandmorty.characters", "--response", "pause",
                             "--data-dir", server.data_dir], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    browser.get(server.url("/debug"))
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#results a[data-pane]"))
    top = lambda: browser.execute_script("return Math.round(document.getElementById('debug-filter').getBoundingClientRect().top)")
    before = top()
    # When a request pauses meanwhile (another tab waits at the breakpoint)
    console = browser.current_window_handle
    browser.execute_script("window.open(arguments[0], 'waiting')", server.url("/rickandmorty?page=3"))
    browser.switch_to.window(console)
    banner = browser.find_element(By.ID, "paused-banner")
    WebDriverWait(browser, 30).until(lambda d: banner.is_displayed())
    # Then the banner says so without pushing the filter or the list down under a finger
    assert top() == before, (before, top())
    assert "1 request is paused" in banner.text
    screenshot(browser, "console-paused-banner-phone", PHONE)


def test_on_a_wide_screen_the_paused_word_does_not_cover_the_open_requests_last_buttons(fresh_server, kiosk_bin, browser):
    server = fresh_server
    # Given a wide console with a long list (the pane beside it stays in view as the page scrolls), a request paused
    # elsewhere (the floating word shows) and a logged request open beside the list
    server.api("/api/nyt")
    for page in range(1, 31):  # (not page 40, which the other tab asks for below)
        server.api(f"/api/rickandmorty?page={page}")
    result = subprocess.run([kiosk_bin, "breakpoint", "set", "rickandmorty.characters", "--response", "pause",
                             "--data-dir", server.data_dir], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    browser.get(server.url("/debug"))
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#results a[data-pane]"))
    console = browser.current_window_handle
    browser.execute_script("window.open(arguments[0], 'waiting')", server.url("/rickandmorty?page=40"))
    browser.switch_to.window(console)
    banner = browser.find_element(By.ID, "paused-banner")
    WebDriverWait(browser, 30).until(lambda d: banner.is_displayed())
    browser.find_element(By.CSS_SELECTOR, "#results a[data-pane][href^='/debug/requests/']").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "detail-pane").is_displayed()
                                     and d.find_elements(By.CSS_SELECTOR, "#detail-pane button"))
    # When the page is scrolled down the list (the pane stays in view, scrolling on its own) and the pane to its end
    browser.execute_script("window.scrollTo(0, 400);"
                           "const pane = document.getElementById('detail-pane'); pane.scrollTop = pane.scrollHeight;")
    # Then the part of the pane in view (everything in it is clipped to it) is clear of the floating word
    overlap = browser.execute_script("""
        const p = document.getElementById('detail-pane').getBoundingClientRect();
        const b = document.getElementById('paused-banner').getBoundingClientRect();
        const bottom = Math.min(p.bottom, innerHeight);
        const wide = Math.min(p.right, b.right) - Math.max(p.left, b.left), tall = Math.min(bottom, b.bottom) - Math.max(p.top, b.top);
        return wide > 0 && tall > 0 ? [wide, tall, p.top, p.bottom, b.top] : null;""")
    assert overlap is None, overlap
    # (and the request left waiting is let go)
    subprocess.run([kiosk_bin, "breakpoint", "remove", "rickandmorty.characters", "--data-dir", server.data_dir], timeout=60)
