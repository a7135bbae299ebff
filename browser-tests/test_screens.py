"""Every screen at phone and desktop widths, light and dark: it renders with a visible heading, no script errors,
no horizontal scrolling on a phone, no serious accessibility violation; a screenshot of each is kept."""

from __future__ import annotations

import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import DESKTOP, PHONE, axe_serious_violations, new_driver, page_ready, screenshot, severe_console_errors
from screens import SCREEN_NAMES, VIEWS, resolve_screens

WIDTHS = {"phone": PHONE, "desktop": DESKTOP}


# Known accessibility bugs of the app, reported: screen -> (axe rule id, why). Such a screen's test is an
# expected failure while that rule is its only serious or critical violation; any other one fails it.
# Screens with a known, accepted violation: (rule id, reason). Empty: every screen must be clean.
KNOWN_VIOLATIONS: dict = {}


@pytest.fixture(scope="module")
def paths(server):
    return resolve_screens(server)


@pytest.fixture(scope="module")
def drivers():
    """One browser per width and colour scheme, shared by the module's tests (they only read). The scheme is the
    system's `prefers-color-scheme`, emulated for every page the browser opens."""
    made: dict[tuple[str, str], object] = {}

    def get(width: str, scheme: str = "light"):
        if (width, scheme) not in made:
            driver = new_driver(WIDTHS[width])
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                   {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            made[(width, scheme)] = driver
        return made[(width, scheme)]

    yield get
    for driver in made.values():
        driver.quit()


def open_screen(driver, server, paths, screen: str):
    driver.get_log("browser")  # drop what earlier screens logged
    driver.get(server.url(paths[screen]))
    page_ready(driver)
    # Let the deferred script settle (revalidation fetches, image errors) before reading the log.
    driver.execute_script("return new Promise(resolve => setTimeout(resolve, 400))")


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("screen", SCREEN_NAMES)
def test_every_screen_renders_a_heading_without_script_errors_or_sideways_scrolling(server, paths, drivers, screen, width):
    driver = drivers(width)
    open_screen(driver, server, paths, screen)
    url = server.url(paths[screen])
    # The 404 screen's own status is logged as a failed load; anything else is an error.
    ignore = (url,) if screen == "not-found" else ()
    errors = severe_console_errors(driver, ignore=ignore)

    headings = [h for h in driver.find_elements(By.TAG_NAME, "h1") if h.is_displayed() and h.text.strip()]
    overflow = driver.execute_script(
        "return {scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth}")
    screenshot(driver, f"{screen}-{width}", WIDTHS[width])

    assert not errors, f"console errors on {paths[screen]} at {width} width:\n" + json.dumps(errors, indent=1)
    assert headings, f"no visible h1 on {paths[screen]} at {width} width"
    if width == "phone":
        assert overflow["innerWidth"] == PHONE[0], f"the phone viewport is {overflow['innerWidth']} px wide"
        assert overflow["scrollWidth"] <= overflow["innerWidth"], (
            f"{paths[screen]} scrolls sideways on a phone: {overflow['scrollWidth']} px of content in "
            f"{overflow['innerWidth']} px")


@pytest.mark.parametrize("screen", ["rickandmorty", "dogs", "home"])
def test_a_phone_screen_at_twice_the_text_size_does_not_scroll_sideways(server, paths, drivers, screen):
    # Given a reader whose text is twice the size (the page's root font at 200%)
    driver = drivers("phone")
    open_screen(driver, server, paths, screen)
    driver.execute_script("document.documentElement.style.fontSize = '200%'")
    try:
        # Then the page, and its tab bar, still fit the screen's width (the tab bar's long names pushed it past)
        widths = driver.execute_script("return {page: document.documentElement.scrollWidth, screen: innerWidth, "
                                       "tabs: document.querySelector('nav.tabs ul')?.scrollWidth ?? 0}")
        assert widths["page"] <= widths["screen"] and widths["tabs"] <= widths["screen"], widths
    finally:
        driver.execute_script("document.documentElement.style.fontSize = ''")


def test_a_phone_whose_browser_text_is_twice_its_size_neither_scrolls_sideways_nor_cuts_a_word(server):
    # Given a phone whose browser is set to text at 200% (its default font size, which media queries' em follow too,
    # unlike a page's own root font size), in Spanish, whose words are longer
    driver = new_driver(PHONE, language="es", text_size=32)
    try:
        for path in ("/", "/rickandmorty/1", "/dogs?edit=1", "/rickandmorty", "/nyt", "/marvel"):
            # When the home page, a character's sheet (its places' cards), the dogs editor (a row's buttons) and two lists
            # (a row's picture, name and star side by side) open
            driver.get(server.url(path))
            page_ready(driver)
            assert driver.execute_script("return getComputedStyle(document.documentElement).fontSize") == "32px"
            screenshot(driver, "text-200-" + (path.strip("/").replace("/", "-").replace("?edit=1", "-edit") or "home"), PHONE)
            # Then nothing is wider than the screen (its width, not innerWidth: a phone's layout viewport grows to a page
            # too wide, and innerWidth with it)
            widths = driver.execute_script("return {page: document.documentElement.scrollWidth, screen: innerWidth}")
            assert widths["page"] <= PHONE[0] and widths["screen"] == PHONE[0], (path, widths)
            # And no tab's name, nor a row's name or button, is cut or broken inside a word
            assert driver.execute_script(BROKEN_WORDS) == [], (path, driver.execute_script(BROKEN_WORDS))
        # And the top bar, three lines high at this size, scrolls away with the page rather than covering a third of it
        assert driver.execute_script("return getComputedStyle(document.querySelector('header.top')).position") == "static"
    finally:
        driver.quit()


def test_a_phone_whose_browser_text_is_twice_its_size_uses_the_console_without_scrolling_sideways(server):
    # Given a phone whose browser text is at 200%, in Spanish and in English, and a request logged
    server.api("/api/dogs")
    request = server.api("/debug/api/requests?limit=1")[0]["id"]
    for language in ("es", "en"):
        driver = new_driver(PHONE, language=language, text_size=32)
        try:
            for path in ("/debug", f"/debug/requests/{request}", "/debug/endpoints", "/debug/rules/new", "/debug/mocks", "/debug/insights"):
                # When a console page opens
                driver.get(server.url(path))
                page_ready(driver)
                # Then nothing on it is wider than the screen: the widest menus and fields wrap or shrink to it
                wide = driver.execute_script("""
                    return [...document.querySelectorAll('main select, main input, main textarea, main button, main label')]
                      .filter(e => e.getBoundingClientRect().right > arguments[0] + 0.5)
                      .map(e => `${e.tagName} ${e.name || e.id || e.textContent.trim().slice(0, 30)} ${Math.round(e.getBoundingClientRect().right)}`);""", PHONE[0])
                widths = driver.execute_script("return {page: document.documentElement.scrollWidth, screen: innerWidth}")
                if widths["page"] > PHONE[0] or wide:
                    screenshot(driver, f"console-text-200-{language}-" + path.strip("/").replace("/", "-"), PHONE)
                assert widths["page"] <= PHONE[0] and not wide, (language, path, widths, wide)
        finally:
            driver.quit()


def test_on_a_phone_in_spanish_the_dogs_editor_breaks_no_name_inside_a_word(fresh_server):
    # Given a phone in Spanish at its usual text size, whose buttons ("Eliminar") are wider than English's
    driver = new_driver(PHONE, language="es")
    try:
        driver.get(fresh_server.url("/dogs?edit=1"))
        page_ready(driver)
        # When the last dog (the demo's Charlie, the longest name) moves up into a middle row, which has both arrows and
        # Eliminar beside its name
        rows = lambda: driver.execute_script("return [...document.querySelectorAll('#results ul.items.edit > li')].map(li => li.dataset.id)")
        last = rows()[-1]
        driver.find_element(By.CSS_SELECTOR, f"#results ul.items.edit > li[data-id='{last}'] form.move[data-direction=up] button").click()
        WebDriverWait(driver, 15).until(lambda d: rows()[-2] == last)
        # Then each name and button keeps its words whole ("Charli / e" before)
        assert driver.execute_script(BROKEN_WORDS) == []
        # And the top bar stays on screen at this size
        assert driver.execute_script("return getComputedStyle(document.querySelector('header.top')).position") == "sticky"
    finally:
        driver.quit()


# The tab names, the editor's names and buttons that are cut or broken inside a word: each word of them must be on one
# line whole (a name may wrap between its words: "Rick &" / "Morty").
BROKEN_WORDS = """
    const cut = [];
    for (const label of document.querySelectorAll('nav.tabs .short, ul.items.edit .actions button, ul.items .title, ul.items .subtitle')) {
        if (label.scrollWidth > label.clientWidth + 1) cut.push(label.textContent + ' cut');
        const text = [...label.childNodes].find(node => node.nodeType === Node.TEXT_NODE && node.textContent.trim());
        if (!text) continue;
        for (const match of text.textContent.matchAll(/\\S+/g)) {
            const range = document.createRange();
            range.setStart(text, match.index);
            range.setEnd(text, match.index + match[0].length);
            const tops = new Set([...range.getClientRects()].map(rect => Math.round(rect.top)));
            if (tops.size > 1) cut.push(match[0] + ' broken');
        }
    }
    return cut;"""


@pytest.mark.parametrize("screen", SCREEN_NAMES)
def test_every_screen_names_its_view_on_main(server, paths, drivers, screen):
    driver = drivers("phone")
    open_screen(driver, server, paths, screen)
    main = driver.find_element(By.CSS_SELECTOR, "main#main")
    assert main.get_attribute("data-view") == VIEWS[screen]
    source = screen.split("-")[0]
    if source in ("nyt", "marvel", "rickandmorty", "dogs") or screen == "search":
        expected = "rickandmorty" if screen == "search" else source
        assert main.get_attribute("data-source") == expected


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("screen", SCREEN_NAMES)
def test_every_screen_has_no_serious_or_critical_accessibility_violation(server, paths, drivers, screen, width):
    driver = drivers(width)
    open_screen(driver, server, paths, screen)
    serious = axe_serious_violations(driver)
    known = KNOWN_VIOLATIONS.get(screen)
    if known and serious and {v["id"] for v in serious} == {known[0]}:
        pytest.xfail(f"{known[1]} — axe {known[0]} on {paths[screen]}: " + json.dumps(serious, ensure_ascii=False))
    assert not serious, (f"serious/critical accessibility violations on {paths[screen]} at {width} width:\n"
                         + json.dumps(serious, indent=1, ensure_ascii=False))


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("screen", SCREEN_NAMES)
def test_every_screen_in_the_dark_scheme_is_dark_and_has_no_serious_accessibility_violation(server, paths, drivers, screen, width):
    # Given a system that asks for dark pages
    driver = drivers(width, "dark")
    # When the screen is opened
    open_screen(driver, server, paths, screen)
    screenshot(driver, f"{screen}-{width}-dark", WIDTHS[width])
    # Then the page is drawn dark (its background's luminance is low), and axe-core finds no serious or critical
    # violation, contrast of the dark palette included
    background = driver.execute_script("""
        const parse = c => (c.match(/[\\d.]+/g) || []).map(Number);
        const [r, g, b, a] = parse(getComputedStyle(document.body).backgroundColor);
        const [hr, hg, hb] = parse(getComputedStyle(document.documentElement).backgroundColor);
        return a === 0 ? [hr, hg, hb] : [r, g, b];
    """)
    luminance = (0.2126 * background[0] + 0.7152 * background[1] + 0.0722 * background[2]) / 255
    assert luminance < 0.3, f"{paths[screen]} is not dark in the dark scheme: background {background}"
    serious = axe_serious_violations(driver)
    assert not serious, (f"serious/critical accessibility violations on {paths[screen]} at {width} width, dark:\n"
                         + json.dumps(serious, indent=1, ensure_ascii=False))
