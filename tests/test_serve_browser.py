"""The web game end to end in headless Chromium (Selenium) against a real uvicorn server on loopback: a whole
2-player game against ``greedy`` played by clicking tiles and ends, a refused click, a reload mid-game (its
frames come in several pages the page puts together), the hint, and at the end the scores on the page
against the downloaded replay, which must verify.

Skipped, saying what to install, without Chromium, chromedriver, Selenium or the [play] extra; with
ALLFIVES_REQUIRE_BROWSER=1 (CI) a missing browser fails instead (as tests/test_viewer.py).
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterator

import pytest

from allfives_env.core.replay import load_replay
from browser import browser_missing, chromium_driver, skip_or_fail

#: The longest a whole game may take in the browser, in seconds (about 15 on the reference machine).
GAME_SECONDS = 240
#: Frames per answer in these tests: a reload of a few moves already spans several pages.
PAGE_FRAMES = 5


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Any, str]]:
    """(a headless Chromium driver, the URL of a web game server), or a skip saying what is missing."""
    reason = browser_missing(modules=("starlette", "uvicorn"))
    if reason is not None:
        skip_or_fail(reason)
    from allfives_env.serve import app as app_module
    from allfives_env.serve import create_app
    from allfives_env.serve.background import BackgroundServer

    # small pages: the reload and the answers after it come in several, which the page must put together
    with pytest.MonkeyPatch.context() as patch, chromium_driver("1280,900") as driver, \
            BackgroundServer(create_app()) as server:
        patch.setattr(app_module, "PAGE_FRAMES", PAGE_FRAMES)
        yield driver, server.url


def _by_id(driver: Any, element_id: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id)


def _wait(driver: Any, condition: Any, seconds: float = 20) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds, poll_frequency=0.05).until(condition)


def _ready(driver: Any) -> None:
    _wait(driver, lambda d: d.execute_script("return document.body.dataset.ready === '1'"))


def _phase(driver: Any) -> str:
    """"over", "mine" (the person may click), or "" (the agents are playing)."""
    return driver.execute_script(
        "if (!document.getElementById('game-over').hidden) { return 'over'; }"
        "return document.querySelector('#moves button') ? 'mine' : '';")


def _start_game(driver: Any, url: str) -> None:
    from selenium.webdriver.support.ui import Select

    driver.get(url + "/")
    _ready(driver)
    assert _by_id(driver, "new-game").get_attribute("open") is not None  # no game in the URL: the dialog
    Select(_by_id(driver, "players")).select_by_value("2")
    Select(_by_id(driver, "seat")).select_by_value("0")
    Select(_by_id(driver, "opponent-1")).select_by_value("greedy")
    driver.execute_script("document.getElementById('rules-box').open = true;")
    _by_id(driver, "rule-target").send_keys("100")
    _by_id(driver, "seed").send_keys("5")
    _by_id(driver, "start").click()
    _wait(driver, lambda d: "game=" in d.current_url)
    Select(_by_id(driver, "pace")).select_by_value("0")


def _click_a_move(driver: Any) -> None:
    """Click a playable tile of the person's hand, then a highlighted end (none for a lead), or Draw."""
    from selenium.webdriver.common.by import By

    tiles = driver.find_elements(By.CSS_SELECTOR, "#hand-0 g.tile.playable")
    if not tiles:
        _by_id(driver, "draw-button").click()
        return
    total = driver.execute_script("return document.querySelectorAll('#log li').length")
    tiles[-1].click()
    targets = driver.find_elements(By.CSS_SELECTOR, "#board g.end.target")
    if targets:
        targets[0].click()
    _wait(driver, lambda d: d.execute_script("return document.querySelectorAll('#log li').length") > total
          or _phase(d) == "over")


def _refused_click(driver: Any) -> bool:
    """Click a tile that cannot be played, if the hand has one: the page says why and nothing is sent."""
    from selenium.webdriver.common.by import By

    bad = driver.find_elements(By.CSS_SELECTOR, "#hand-0 g.tile.unplayable")
    if not bad:
        return False
    total = driver.execute_script("return document.querySelectorAll('#log li').length")
    bad[0].click()
    assert "cannot be played" in _by_id(driver, "message").text
    assert driver.execute_script("return document.querySelectorAll('#log li').length") == total
    return True


def _reload_keeps_the_game(driver: Any) -> None:
    shown = (_by_id(driver, "event").text, _by_id(driver, "count").text, driver.current_url)
    driver.refresh()
    _ready(driver)
    _wait(driver, lambda d: _phase(d) == "mine")
    assert (_by_id(driver, "event").text, _by_id(driver, "count").text, driver.current_url) == shown


def _hint(driver: Any) -> None:
    from selenium.webdriver.common.by import By

    _by_id(driver, "hint").click()
    _wait(driver, lambda d: not _by_id(d, "hint-box").get_attribute("hidden"), seconds=120)  # a first search compiles
    rows = driver.find_elements(By.CSS_SELECTOR, "#hint-table tbody tr")
    moves = driver.find_elements(By.CSS_SELECTOR, "#moves button")
    assert len(rows) == len(moves) >= 1
    assert len(driver.find_elements(By.CSS_SELECTOR, "#hint-table tr.best")) == 1


def test_a_whole_game_by_clicking_matches_its_replay(served: tuple[Any, str]) -> None:
    driver, url = served
    _start_game(driver, url)
    deadline = time.monotonic() + GAME_SECONDS
    moves, refused, reloaded, hinted = 0, False, False, False
    while _phase(driver) != "over":
        assert time.monotonic() < deadline, "the game did not end in time"
        _wait(driver, lambda d: _phase(d) in ("over", "mine"), seconds=30)
        if _phase(driver) == "over":
            break
        if not refused:
            refused = _refused_click(driver)
        if moves == 3 and not reloaded:
            _reload_keeps_the_game(driver)
            reloaded = True
        if not hinted and len(driver.find_elements("css selector", "#moves button")) > 1:
            _hint(driver)
            hinted = True
        _click_a_move(driver)
        moves += 1
    assert moves > 5 and refused and reloaded and hinted
    shown = [int(_by_id(driver, f"score-{s}").text) for s in range(2)]
    href = _by_id(driver, "download-replay").get_attribute("href")
    assert _by_id(driver, "download-replay").get_attribute("download").endswith(".json")
    text = driver.execute_async_script(
        "var done = arguments[1]; fetch(arguments[0]).then(r => r.text()).then(done);", href)
    record = json.loads(text)
    game = load_replay(record)  # verifies every event against the engine
    assert game.over and shown == list(game.scores) == record["final_scores"]
    assert record["agents"] == ["you", "greedy"]
    assert "Game over" in _by_id(driver, "result").text
    # the finished game opens in the replay viewer, which ends on the same scores
    driver.get(_by_id(driver, "open-viewer").get_attribute("href"))
    _ready(driver)
    driver.execute_script("document.getElementById('last').click();")
    assert [int(_by_id(driver, f"score-{s}").text) for s in range(2)] == shown
