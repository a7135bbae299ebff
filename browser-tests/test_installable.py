"""Kiosk is installable: Chromium's own installability check has nothing to complain about."""

from __future__ import annotations

from conftest import DESKTOP, PHONE, new_driver, page_ready, wait_until


def test_chromium_finds_no_installability_error_on_the_home_page(server):
    driver = new_driver(DESKTOP)
    try:
        driver.get(server.url("/"))
        page_ready(driver)
        # The check reads the manifest and its icons asynchronously: ask until it has nothing to say.
        check = lambda: driver.execute_cdp_cmd("Page.getInstallabilityErrors", {})["installabilityErrors"]
        wait_until(lambda: check() == [], 10)
        assert check() == []
        manifest = driver.execute_cdp_cmd("Page.getAppManifest", {})
        assert manifest.get("errors") == [], manifest.get("errors")
        assert manifest["url"].endswith("/manifest.webmanifest")
    finally:
        driver.quit()


def test_a_phone_gets_the_manifest_and_theme_colour_on_every_catalog(server):
    driver = new_driver(PHONE)
    try:
        for path in ("/nyt", "/marvel", "/rickandmorty", "/dogs", "/favorites"):
            driver.get(server.url(path))
            page_ready(driver)
            assert driver.execute_script("return document.querySelector('link[rel=manifest]')?.href || ''").endswith(
                "/manifest.webmanifest"), path
            assert driver.execute_script(
                "return [...document.querySelectorAll('meta[name=theme-color]')].length") == 2, path
    finally:
        driver.quit()
