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
