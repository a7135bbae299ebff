"""The network debugger's composer in a real browser: a logged request edited and sent again lands on the
new exchange, linked to its original; Revert brings the request back as logged."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import axe_serious_violations, page_ready, severe_console_errors


def test_a_logged_request_is_edited_sent_again_and_linked_to_its_original(fresh_server, browser):
    server = fresh_server
    # The Rick and Morty list, opened once: its exchange is logged.
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    original = server.api("/debug/api/requests?source=rickandmorty&limit=1")[0]
    page = parse_qs(urlsplit(original["url"]).query)["page"][0]
    logged, edited = f"page={page}", f"page={int(page) + 1}"

    # Its page in the console: "Edit and resend" opens the composer with the request as logged.
    browser.get(server.url(f"/debug/requests/{original['id']}"))
    browser.find_element(By.CSS_SELECTOR, "button[aria-label='Edit and resend: edit this request and send it again']").click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "form.composer"))
    query = browser.find_element(By.CSS_SELECTOR, "textarea[name=query]")
    assert logged in query.get_attribute("value")
    assert axe_serious_violations(browser) == []

    # Typed over, the query asks for the next page; Revert brings back the request as logged.
    query.clear()
    query.send_keys(edited)
    browser.find_element(By.CSS_SELECTOR, "a.revert").click()
    WebDriverWait(browser, 10).until(
        lambda d: logged in d.find_element(By.CSS_SELECTOR, "textarea[name=query]").get_attribute("value"))

    # Edited again and sent: the browser lands on the new exchange, the next page's answer, linked to the original.
    query = browser.find_element(By.CSS_SELECTOR, "textarea[name=query]")
    query.clear()
    query.send_keys(edited)
    severe_console_errors(browser)  # (drops what came before)
    browser.find_element(By.CSS_SELECTOR, "form.composer button[type=submit]").click()
    WebDriverWait(browser, 15).until(lambda d: "/compose" not in d.current_url and d.find_elements(By.CSS_SELECTOR, "section.touched-by"))
    # (the form's `method` field, the request's, did not trip the page's script on the way)
    assert severe_console_errors(browser) == []
    newest = server.api("/debug/api/requests?source=rickandmorty&limit=1")[0]
    assert browser.current_url.endswith(f"/debug/requests/{newest['id']}")
    assert newest["id"] > original["id"] and newest["status"] == 200 and edited in newest["url"]
    touched = browser.find_element(By.CSS_SELECTOR, "section.touched-by")
    assert f"Request #{original['id']}" in touched.text and f"{logged} → {edited}" in touched.text
    touched.find_element(By.CSS_SELECTOR, f"a[href='/debug/requests/{original['id']}']").click()
    WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith(f"/debug/requests/{original['id']}"))
    assert axe_serious_violations(browser) == []
