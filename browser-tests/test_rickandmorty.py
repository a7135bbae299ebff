"""A Rick and Morty character page in a real browser: the sheet first on a phone, places and episodes
beside it on a desktop, every episode with its code and air date, places with their resident counts,
working without JavaScript, and offline once seen."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from conftest import DESKTOP, PHONE, new_driver, page_ready, screenshot, severe_console_errors


def _open(driver, server, path: str):
    driver.get(server.url(path))
    page_ready(driver)


def _episode_requests(server) -> int:
    return sum(count for path, count in server.stats()["byPath"].items() if path.startswith("/api/episode"))


def _episodes(driver) -> list[str]:
    return [li.text.strip() for li in driver.find_elements(By.CSS_SELECTOR, "ol.episodes > li")]


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_character_page_lists_every_episode_and_both_places_with_resident_counts(server, size):
    driver = new_driver(size)
    try:
        server.reset_stats()
        _open(driver, server, "/rickandmorty/1")
        episodes = _episodes(driver)
        assert len(episodes) == 51, episodes[:3]
        assert episodes[0] == "S01E01 · Pilot · December 2, 2013"
        assert episodes[-1].startswith("S05E10 · ")
        places = [p.text for p in driver.find_elements(By.CSS_SELECTOR, ".place")]
        assert len(places) == 2
        assert "Earth (C-137)" in places[0] and "Planet · Dimension C-137 ·" in places[0] and "residents" in places[0]
        assert "Citadel of Ricks" in places[1] and "residents" in places[1]
        sheet = driver.find_element(By.CSS_SELECTOR, ".sheet h1").rect
        first_place = driver.find_element(By.CSS_SELECTOR, ".place").rect
        first_episode = driver.find_element(By.CSS_SELECTOR, "ol.episodes > li").rect
        if size == PHONE:
            # The sheet comes first, fully on the first screen; places and episodes follow below it
            assert sheet["y"] + sheet["height"] <= size[1]
            assert first_place["y"] > sheet["y"] and first_episode["y"] > first_place["y"]
            assert driver.execute_script("return document.documentElement.scrollWidth") <= size[0]
        else:
            # Places and episodes sit to the right of the sheet
            assert first_place["x"] > sheet["x"] + sheet["width"]
            assert first_episode["x"] > sheet["x"] + sheet["width"]
        assert severe_console_errors(driver) == []
        screenshot(driver, f"rickandmorty-character-{'phone' if size == PHONE else 'desktop'}", size)
        # At most one request for every episode (none when an earlier test already stored them)
        assert _episode_requests(server) <= 1, server.stats()
    finally:
        driver.quit()


def test_the_character_page_works_without_javascript(server):
    # Scripts blocked: the page must do everything with plain links. Links are followed with driver.get
    # (chromedriver's click waits for a navigation check that needs the page's scripts, and hangs).
    driver = new_driver(PHONE, javascript=False)

    def follow(selector: str) -> str:
        href = driver.find_element(By.CSS_SELECTOR, selector).get_dom_attribute("href")
        assert href and href.startswith("/"), href
        driver.get(server.url(href))
        return href

    try:
        driver.get(server.url("/rickandmorty/1"))
        assert len(_episodes(driver)) == 51
        # The jump links lead to sections of this page
        for anchor in driver.find_elements(By.CSS_SELECTOR, ".jump a"):
            target = anchor.get_dom_attribute("href")
            assert target.startswith("#") and driver.find_elements(By.ID, target[1:]), target
        assert follow(".place a") == "/rickandmorty/location-1"
        assert driver.find_element(By.TAG_NAME, "h1").text == "Earth (C-137)"
        resident = follow("ul.items > li > a")
        assert resident.rsplit("/", 1)[-1].isdigit()
        follow("ol.episodes > li > a")
        assert driver.find_element(By.TAG_NAME, "h1").text
    finally:
        driver.quit()


def test_a_character_seen_once_reads_its_episodes_offline(fresh_server):
    driver = new_driver(PHONE)
    try:
        fresh_server.reset_stats()
        _open(driver, fresh_server, "/rickandmorty/2")
        assert len(_episodes(driver)) > 0
        # Every episode of the character came with one request
        assert _episode_requests(fresh_server) == 1, fresh_server.stats()
        fresh_server.set_offline(True)
        _open(driver, fresh_server, "/rickandmorty/2")
        episodes = _episodes(driver)
        assert episodes and all(" · " in line for line in episodes)
        assert not driver.find_elements(By.CSS_SELECTOR, "li.missing")
    finally:
        fresh_server.set_offline(False)
        driver.quit()
