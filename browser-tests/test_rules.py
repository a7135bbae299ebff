"""The network debugger's rewrite rules in a real browser: a rule made from a logged exchange with the
request page's button changes the next answer, without pausing anything."""

from __future__ import annotations

import subprocess

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import axe_serious_violations, page_ready


def test_a_rule_made_from_a_logged_exchange_changes_the_next_answer_without_pausing(fresh_server, browser):
    server = fresh_server
    # The Rick and Morty list, opened once: its exchange is logged.
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    assert "Rick Sanchez" in browser.page_source
    logged = server.api("/debug/api/requests?source=rickandmorty&limit=1")
    assert logged and logged[0]["endpoint"] == "rickandmorty.characters"

    # Its page in the console: "Make a rule" opens the rule form filled in from the exchange.
    browser.get(server.url(f"/debug/requests/{logged[0]['id']}"))
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Make a rule: a rewrite rule from this request']").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "form.rule-editor"))
    endpoint = browser.find_element(By.CSS_SELECTOR, "select[name=endpoint] option:checked")
    assert endpoint.get_attribute("value") == "rickandmorty.characters"
    assert browser.find_element(By.CSS_SELECTOR, "input[name=status]").get_attribute("value") == "200"
    assert axe_serious_violations(browser) == []

    # A patch typed into the form, saved: the rules page lists it.
    browser.find_element(By.CSS_SELECTOR, "input[name=name]").send_keys("Browser rename")
    browser.find_element(By.CSS_SELECTOR, "textarea[name=patch]").send_keys(
        '[{"op": "replace", "path": "/results/0/name", "value": "Browser Rule Rick"}]')
    browser.find_element(By.CSS_SELECTOR, "form.rule-editor button[type=submit]").click()
    WebDriverWait(browser, 10).until(lambda d: "/debug/rules" in d.current_url and d.find_elements(By.ID, "rule-1"))
    assert "Browser rename" in browser.find_element(By.ID, "rule-1").text
    # The focus is on the rule saved, not at the top of the page.
    assert browser.execute_script("return document.activeElement.id") == "rule-1"
    assert axe_serious_violations(browser) == []

    # The next answer is rewritten, and nothing paused on the way.
    browser.get(server.url("/rickandmorty?refresh=1"))
    page_ready(browser)
    WebDriverWait(browser, 30).until(lambda d: "Browser Rule Rick" in d.page_source)
    assert server.api("/debug/api/paused") == []

    # The exchange's page says the rule touched it.
    # (logged as edited: what the app got is not what the upstream said)
    newest = server.api("/debug/api/requests?source=rickandmorty&decision=edited&limit=1")[0]
    assert newest["touchedBy"][0]["kind"] == "rule" and newest["touchedBy"][0]["applied"]
    browser.get(server.url(f"/debug/requests/{newest['id']}"))
    touched = browser.find_element(By.CSS_SELECTOR, "section.touched-by")
    assert "Browser rename" in touched.text and "applied" in touched.text
    assert server.api("/debug/api/rules")[0]["hits"] >= 1


def test_a_mock_rule_is_edited_as_a_json_tree_on_a_phone_and_its_next_answer_is_the_edit(fresh_server, kiosk_bin, phone_browser):
    server, phone = fresh_server, phone_browser
    # A mock rule of the dogs list, added from the command line while the server runs (a JSON array on one line).
    result = subprocess.run([kiosk_bin, "mock", "add", "--url", "*/dogs.json", "--header", "Content-Type: application/json",
                             "--body", '[{"dogName":"Rex","description":"A loyal dog.\\nGood with kids.","age":5}]', "--data-dir", server.data_dir],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    # The rules page links the rule to its page, whose body is a tree.
    phone.get(server.url("/debug/mocks"))
    phone.find_element(By.CSS_SELECTOR, "#mock-1 a[href='/debug/mocks/1']").click()
    WebDriverWait(phone, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".json-editor"))
    # (a string of two lines is a box of two lines, which keeps its line break; a text field would drop it)
    description = phone.find_element(By.CSS_SELECTOR, "textarea[aria-label='Value of $[0].description']")
    assert description.get_attribute("value") == "A loyal dog.\nGood with kids."
    # (an object's toggle is named by its path for a screen reader, not "{3}" alone)
    assert phone.execute_script("return document.querySelectorAll('.json-editor summary')[1].textContent") == "$[0] {3}"
    name = phone.find_element(By.CSS_SELECTOR, "input[aria-label='Value of $[0].dogName']")
    phone.execute_script("arguments[0].scrollIntoView({block: 'center'})", name)
    name.clear()
    name.send_keys("Rexford")
    assert axe_serious_violations(phone) == []
    # Saved, the list is back with the rule, which keeps the answer on one line as it came.
    save = phone.find_element(By.CSS_SELECTOR, "form.pause-editor button[type=submit]")
    phone.execute_script("arguments[0].scrollIntoView({block: 'center'})", save)
    save.click()
    WebDriverWait(phone, 10).until(lambda d: d.current_url.endswith("/debug/mocks#mock-1"))
    listed = subprocess.run([kiosk_bin, "mock", "list", "--json", "--data-dir", server.data_dir],
                            capture_output=True, text=True, timeout=60)
    assert '\\"dogName\\":\\"Rexford\\"' in listed.stdout, listed.stdout
    assert 'A loyal dog.\\\\nGood with kids.' in listed.stdout, listed.stdout
    # And the reader's next dogs list is the edit.
    phone.get(server.url("/dogs?refresh=1"))
    page_ready(phone)
    WebDriverWait(phone, 30).until(lambda d: "Rexford" in d.page_source)


def test_a_rule_refused_by_the_server_puts_the_focus_on_its_reason(fresh_server, browser):
    server = fresh_server
    # The new-rule form, given a JSON Patch that is not JSON, sent.
    browser.get(server.url("/debug/rules/new"))
    browser.find_element(By.CSS_SELECTOR, "textarea[name=patch]").send_keys("[")
    browser.find_element(By.CSS_SELECTOR, "form.rule-editor button[type=submit]").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[role=alert].banner.error"))
    # The form comes back with why; the focus is on the reason, read first, not at the top of the page.
    focused = browser.execute_script("return document.activeElement.matches('[role=alert].banner.error')")
    assert focused, browser.execute_script("return document.activeElement.outerHTML.slice(0, 200)")
