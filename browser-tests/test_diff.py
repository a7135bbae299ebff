"""The network debugger's diff in a real browser: a request's page compares it with the previous answer of
its endpoint in one click, the JSON body path by path."""

from __future__ import annotations

import json
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import axe_serious_violations, page_ready


def test_the_previous_answer_of_an_endpoint_is_compared_in_one_click(fresh_server, browser):
    server = fresh_server
    # The Rick and Morty list read once, then again through a rule that renames its first character.
    browser.get(server.url("/rickandmorty"))
    page_ready(browser)
    # (the list also reads page 2 ahead: page 1's exchange is the one compared)
    first = next(r for r in server.api("/debug/api/requests?source=rickandmorty") if r["url"].endswith("?page=1"))
    rule = {"match": {"endpoint": "rickandmorty.characters"},
            "actions": {"patch": [{"op": "replace", "path": "/results/0/name", "value": "Diff Rick"}]}}
    request = urllib.request.Request(server.url("/debug/api/rules"), data=json.dumps(rule).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 201
    browser.get(server.url("/rickandmorty?refresh=1"))
    page_ready(browser)
    WebDriverWait(browser, 30).until(lambda d: "Diff Rick" in d.page_source)
    second = next(r for r in server.api("/debug/api/requests?source=rickandmorty&decision=edited") if r["url"] == first["url"])

    # The newer request's page: one click compares it with the previous answer of its endpoint.
    browser.get(server.url(f"/debug/requests/{second['id']}"))
    browser.find_element(By.CSS_SELECTOR, f"section.compare a[href='/debug/diff?a={first['id']}&b={second['id']}']").click()
    WebDriverWait(browser, 10).until(lambda d: "/debug/diff" in d.current_url)
    heading = browser.find_element(By.TAG_NAME, "h1").text
    assert heading == f"#{first['id']} → #{second['id']}"
    # The body's change is named by its JSON path, old → new; nothing else of the body is listed as changed.
    text = browser.find_element(By.ID, "main").text
    assert "$.results[0].name" in text and "Rick Sanchez" in text and "Diff Rick" in text
    assert "$.results[1]" not in text
    # Listed as a list of changes, one under another in a monospace face: not as Home's cards, whose class it once shared
    style = browser.execute_script("""
        const list = document.querySelector('ul.diff-changes'), style = getComputedStyle(list);
        return [style.display, style.fontFamily, document.querySelectorAll('ul.changes').length];""")
    assert style[0] == "block" and "mono" in style[1].lower() and style[2] == 0, style
    assert axe_serious_violations(browser) == []
