"""Languages: a Spanish browser gets Spanish pages; the switch changes the language and it sticks."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from conftest import DESKTOP, new_driver, page_ready, wait_for


@pytest.fixture
def spanish_browser():
    driver = new_driver(DESKTOP, language="es")
    yield driver
    driver.quit()


def html_lang(driver) -> str:
    return driver.execute_script("return document.documentElement.lang")


def language_button(driver, language: str):
    """The button of `form.lang` that switches to `language` (by its lang or value attribute, or its name)."""
    names = {"en": ("english",), "es": ("español", "espanol", "spanish")}
    for button in driver.find_elements(By.CSS_SELECTOR, "form.lang button"):
        form = button.find_element(By.XPATH, "./ancestor::form[1]")
        hidden = [field.get_attribute("value") for field in form.find_elements(By.CSS_SELECTOR, "input[name=lang]")]
        marks = {button.get_attribute("lang"), button.get_attribute("value")}
        if language in marks or (len(hidden) == 1 and hidden[0] == language and not button.get_attribute("value")) \
                or button.text.strip().lower() in names[language]:
            return button
    raise AssertionError(f"no button for {language!r} in form.lang")


def test_a_spanish_browser_gets_spanish_and_the_switch_to_english_sticks_across_a_reload(server, spanish_browser):
    driver = spanish_browser
    assert driver.execute_script("return navigator.language").startswith("es")
    driver.get(server.url("/"))
    page_ready(driver)
    assert html_lang(driver) == "es"

    language_button(driver, "en").click()
    wait_for(driver, lambda d: html_lang(d) == "en", 15, "the switch did not change the page to English")
    assert driver.current_url.rstrip("/") == server.url("/").rstrip("/"), "the switch did not come back to the page"

    driver.refresh()
    page_ready(driver)
    assert html_lang(driver) == "en", "the choice of English did not survive a reload"
    driver.get(server.url("/rickandmorty"))
    page_ready(driver)
    assert html_lang(driver) == "en", "the choice of English did not carry to another page"

    language_button(driver, "es").click()
    wait_for(driver, lambda d: html_lang(d) == "es", 15, "the switch did not change the page back to Spanish")


def test_a_switch_of_language_on_a_scrolled_list_keeps_the_reader_in_their_place(server, spanish_browser):
    # Given a list scrolled down, its second page appended by the scroll
    driver = spanish_browser
    driver.get(server.url("/rickandmorty"))
    page_ready(driver)
    rows = lambda d: d.execute_script("return document.querySelectorAll('#results ul.items > li[data-id]').length")
    first = rows(driver)
    driver.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    wait_for(driver, lambda d: rows(d) > first, 15, "the scroll appended no page")
    driver.execute_script("document.querySelectorAll('#results ul.items > li[data-id]')[%d].scrollIntoView()" % (first + 2))
    top = driver.execute_script(
        "return [...document.querySelectorAll('#results ul.items > li[data-id]')].find(r => r.getBoundingClientRect().bottom > 0).dataset.id")
    # When the reader switches to English
    language_button(driver, "en").click()
    wait_for(driver, lambda d: html_lang(d) == "en", 15, "the switch did not change the page to English")
    # Then the same rows are there, the same one at the top of the screen
    wait_for(driver, lambda d: rows(d) > first and d.execute_script(
        "return [...document.querySelectorAll('#results ul.items > li[data-id]').values()]"
        ".find(r => r.getBoundingClientRect().bottom > 0)?.dataset.id") == top, 15,
        "the place in the list was lost across the switch")
