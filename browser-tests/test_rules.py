"""The network debugger's rewrite rules in a real browser: a rule made from a logged exchange with the
request page's button changes the next answer, without pausing anything."""

from __future__ import annotations

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
