"""Make the README's screenshot of the web game (``allfives serve``) with a game in progress.

    python docs/make_serve_image.py       # writes docs/images/serve.png

A real server runs in the background on a free loopback port; a seeded 2-player game against ``ppo-2p`` is
played through the API to a busy mid-hand position where the person has a choice, then opened in headless
Chromium (Selenium), a tile is chosen (its legal ends light up) and the hint is asked of ``pimc-sift``.
Needs the [play] extra, selenium, and Debian's chromium and chromium-driver.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from allfives_env.serve import create_app  # noqa: E402
from allfives_env.serve.background import BackgroundServer  # noqa: E402
from allfives_env.viewer import CHROMIUM_FLAGS, find_chromium  # noqa: E402

SEED = 21
#: Play on (the person always taking their first legal move) until this many tiles are down in a hand.
TILES_DOWN = 7


def _mid_game(url: str) -> str:
    """A game id at a position with tiles down and a choice for the person."""
    client = httpx.Client(base_url=url)
    state = client.post("/api/games", json={"players": 2, "opponents": ["ppo-2p"], "seed": SEED}).json()
    gid, placed = state["id"], 0
    while True:
        placed = state["frames"][-1]["placed"] if state["frames"] else placed  # the last frame's
        if state["your_turn"] and placed >= TILES_DOWN and len(state["legal"]) > 1:
            return gid
        if state["your_turn"]:
            state = client.post(f"/api/games/{gid}/move", json={"action": state["legal"][0]["action"]}).json()
        else:
            state = client.post(f"/api/games/{gid}/ai", json={}).json()


def main() -> int:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    out = ROOT / "docs" / "images" / "serve.png"
    profile = tempfile.TemporaryDirectory(prefix="allfives-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = find_chromium()
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile.name}", "--window-size=1280,860"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        with BackgroundServer(create_app()) as server:
            gid = _mid_game(server.url)
            driver.get(f"{server.url}/#game={gid}")
            WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#moves button"))
            driver.find_element(By.ID, "hint").click()
            WebDriverWait(driver, 120).until(lambda d: not d.find_element(By.ID, "hint-box").get_attribute("hidden"))
            playable = driver.find_elements(By.CSS_SELECTOR, "#hand-0 g.tile.playable")
            playable[-1].click()
            time.sleep(0.3)
            driver.save_screenshot(str(out))
    finally:
        driver.quit()
        profile.cleanup()
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
