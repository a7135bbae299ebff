"""Helpers of the offline-device tests: what the page's service worker and device storage are doing."""

from __future__ import annotations

from conftest import page_ready, wait_for, wait_until


def controlled(driver) -> bool:
    """Whether Kiosk's service worker controls the page."""
    return driver.execute_script("return !!navigator.serviceWorker?.controller")


def wait_until_saved_for_offline(driver, timeout: float = 90) -> None:
    """Waits for the worker to control the page and for "Save for offline" to have finished a run."""
    wait_for(driver, controlled, 20, "no service worker controls the page")
    wait_for(driver, lambda d: device_call(d, "setting", "savedAt", 0) > 0, timeout,
             "saving for offline did not finish")


def device_call(driver, method: str, *arguments):
    """Calls KioskDevice.<method>(...arguments) in the page and returns its (awaited) result."""
    return driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const [method, ...rest] = arguments[0];
        Promise.resolve(self.KioskDevice[method](...rest)).then(done, error => done({ error: String(error) }));
    """, [method, *arguments])


def pending_count(driver) -> int:
    return len(device_call(driver, "pending"))


def open(driver, url: str) -> None:
    """Navigates and waits for the page and its deferred scripts."""
    driver.get(url)
    page_ready(driver)


def unreachable_banner(driver) -> str:
    return driver.execute_script("return document.getElementById('unreachable-banner')?.textContent || ''")


def pictures_loaded(driver, selector: str = "#results img") -> tuple[int, int]:
    """(loaded, total) pictures under `selector`, after they had a moment to load (scrolled through, as they
    load lazily)."""
    driver.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
    wait_until(lambda: driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].every(img => img.complete)", selector), 10)
    driver.execute_script("window.scrollTo(0, 0)")
    return tuple(driver.execute_script("""
        const images = [...document.querySelectorAll(arguments[0])];
        return [images.filter(img => img.complete && img.naturalWidth > 0).length, images.length];
    """, selector))
