"""Headless Chromium for the browser tests (the replay viewer's, the web game's): one check of what is
missing, one skip message naming what to install, and one way to start the driver.

Without Chromium, chromedriver, Selenium (or a module a test needs besides) a browser test skips with the same
message everywhere (``pytest -rs`` shows it); with ALLFIVES_REQUIRE_BROWSER=1 (set by .ci/run) it fails
instead, so a broken browser install cannot pass as a skip.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from typing import Any, Iterator, Optional, Sequence

import pytest

from allfives_env.viewer import CHROMIUM_FLAGS, find_chromium

#: What to install for the browser tests, said in every skip.
INSTALL_BROWSER = ("install Debian's chromium and chromium-driver packages (apt-get install chromium chromium-driver) "
                   "and the test extras (pip install -e '.[dev]': selenium, and the web game's [play])")


def browser_paths() -> tuple[Optional[str], Optional[str]]:
    """(the chromium executable, chromedriver), each None when it is not on PATH."""
    return find_chromium(), shutil.which("chromedriver")


def browser_missing(need_driver: bool = True, modules: Sequence[str] = ()) -> Optional[str]:
    """Why a browser test cannot run here, naming what to install; None when it can. ``modules``: Python
    modules the test needs besides selenium."""
    missing = []
    chromium, driver_path = browser_paths()
    if chromium is None:
        missing.append("no chromium executable on PATH")
    if need_driver and driver_path is None:
        missing.append("no chromedriver on PATH")
    for module in (("selenium",) if need_driver else ()) + tuple(modules):
        try:
            __import__(module)
        except ImportError:
            missing.append(f"{module} is not installed")
    return f"{'; '.join(missing)}: {INSTALL_BROWSER}" if missing else None


def skip_or_fail(reason: str) -> None:
    """Skip with ``reason``; in CI (ALLFIVES_REQUIRE_BROWSER=1) fail with it."""
    if os.environ.get("ALLFIVES_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (ALLFIVES_REQUIRE_BROWSER=1)")
    pytest.skip(f"browser test skipped: {reason}")


@contextlib.contextmanager
def chromium_driver(window_size: str = "1280,800") -> Iterator[Any]:
    """A headless Chromium Selenium driver with its own throwaway profile (after :func:`browser_missing`)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = browser_paths()
    profile = tempfile.TemporaryDirectory(prefix="allfives-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile.name}", f"--window-size={window_size}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        profile.cleanup()
