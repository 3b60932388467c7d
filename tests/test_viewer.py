"""The HTML replay viewer (``allfives_env.viewer``): frames, layout, a self-contained page, a real browser.

The frames the page shows are checked against the engine itself: every game here is played while its
state is written down after each ``Game.step`` (count, scores, hands, the seat to act, the board), and
the viewer's frame at the same event index must show exactly that. The board geometry must never put
two tiles on top of each other. The page must need nothing from outside the file and must not let a
string from the replay break out of its ``<script>`` element.

The browser tests drive headless Chromium with Selenium and are skipped, with the reason and what to install
(Debian's ``chromium`` and ``chromium-driver``), when Chromium, chromedriver or Selenium are missing; with
ALLFIVES_REQUIRE_BROWSER=1 (CI) they fail instead (``allfives_env.viewer.CHROMIUM_FLAGS`` are the flags the
sandbox needs).
``python docs/make_images.py`` writes the README's screenshot of the viewer.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any, Iterator, Optional

import numpy as np
import pytest

from allfives_env.board_layout import lay_out
from allfives_env.core import Game, Play, ReplayError, Rules
from allfives_env.core.board import Board
from allfives_env.core.replay import game_record, save_replay
from allfives_env.replay_frames import ARM_LIMITS
import browser as browser_helpers
from browser import browser_missing, chromium_driver, skip_or_fail
from allfives_env.viewer import (
    board_layout, replay_data, replay_html, screenshot, write_replay_html,
)

#: Chromium in a sandbox without network: without the background-networking flags it hangs.
SVG_NS = "http://www.w3.org/2000/svg"


def played_game(opts: dict[str, Any], seed: int, chooser: str = "random") -> tuple[Game, dict[int, dict[str, Any]]]:
    """Play a game and write down the engine's state after every step, keyed by the event count then.

    ``chooser`` "first" plays ``game.legal[0]`` (long, lopsided games), "random" a seeded random move.
    """
    game = Game(Rules.from_options(opts), seed)
    rng = np.random.default_rng(seed)
    states: dict[int, dict[str, Any]] = {}

    def note() -> None:
        states[len(game.events)] = {
            "count": game.count(),
            "scores": list(game.scores),
            "hands": [game.hand(s) for s in range(game.num_players)],
            "turn": None if game.over else game.current,
            "boneyard": game.boneyard_size,
            "hand": game.hand_number,
            "layout": sorted(board_layout(game.board)[0]),
        }

    note()
    while not game.over:
        legal = game.legal
        game.step(legal[0] if chooser == "first" else legal[int(rng.integers(len(legal)))])
        note()
    return game, states


def shown_tiles(data: dict[str, Any], frame: dict[str, Any]) -> list[list[Any]]:
    """The tiles a frame puts on the table."""
    if frame["layout"] < 0:
        return []
    return data["layouts"][frame["layout"]]["tiles"][: frame["placed"]]


OPTION_SETS = [
    pytest.param({"max_hands": 4}, id="2p"),
    pytest.param({"num_players": 3, "max_hands": 3}, id="3p"),
    pytest.param({"num_players": 4, "max_hands": 3}, id="4p-team"),
    pytest.param({"num_players": 4, "max_pip": 9, "max_hands": 3}, id="4p-double-nine"),
    pytest.param({"max_pip": 12, "max_hands": 2, "spinner_count": "sniff", "spinner_sides_first": False},
                 id="double-twelve-sniff"),
    pytest.param({"may_draw_when_able": True, "max_draws_per_turn": 2, "max_hands": 3}, id="draw-when-able"),
    pytest.param({"first_leader": "highest_double", "no_double_fallback": "draw_until_double", "hand_size": 2,
                  "max_hands": 3}, id="draw-until-double"),
    pytest.param({"score_unit": 5, "min_first_score": 10, "exact_target": True, "target": 40, "max_hands": 4},
                 id="unit5-exact"),
]


# ---------------------------------------------------------------------------------------------- frames
@pytest.mark.parametrize("opts", OPTION_SETS)
def test_frames_show_what_the_engine_had_after_every_step(opts: dict[str, Any]) -> None:
    game, states = played_game(opts, seed=11)
    data = replay_data(game_record(game, seed=11))
    frames = data["frames"]
    assert len(frames) == len(game.events)
    assert [f["step"] for f in frames] == list(range(1, len(frames) + 1))
    for n_events, state in states.items():
        frame = frames[n_events - 1]
        assert frame["count"] == state["count"], n_events
        assert frame["scores"] == state["scores"], n_events
        assert frame["hands"] == state["hands"], n_events
        assert frame["sizes"] == [len(h) for h in state["hands"]]
        assert frame["turn"] == state["turn"], n_events
        assert frame["boneyard"] == state["boneyard"], n_events
        assert frame["hand"] == state["hand"], n_events
        assert sorted(shown_tiles(data, frame)) == state["layout"], n_events
    for k, (frame, event) in enumerate(zip(frames, game.events)):
        assert frame["kind"] == event.kind
        if isinstance(event, Play):
            assert frame["count"] == event.count and frame["tile"] == event.tile
        # the open ends add up to the count: the page's breakdown is the engine's count
        if frame["placed"]:
            counted = sum(e[2] for e in frame["ends"] if e[2] is not None)
            assert counted + frame["spinner_points"] == frame["count"], k
    assert frames[-1]["scores"] == list(game.scores)
    assert data["hand_steps"] == [rec.first_event + 1 for rec in game.hand_records]


def test_event_texts_name_the_move_and_hide_other_seats_draws() -> None:
    game, _ = played_game({"max_hands": 2}, seed=5)
    frames = replay_data(game_record(game))["frames"]
    texts = [f["text"] for f in frames]
    assert texts[0].startswith("Hand 1: P") and " leads; scores P0 0, P1 0" in texts[0]
    assert re.match(r"P\d leads \d-\d", texts[1])
    assert any(re.match(r"P\d plays \d-\d on [WENS]: count \d+", t) for t in texts)
    assert any(f["kind"] == "settlement" and f["text"].startswith("Hand 1 ends") for f in frames)
    assert frames[-1]["kind"] == "game_over" and frames[-1]["text"].startswith("Game over:")
    draws = [f for f in frames if f["kind"] == "draw"]
    assert draws, "seed 5 should draw"
    for f in draws:
        name = game.tiles.name(f["tile"])
        assert name in f["text"] and name not in f["hidden"] and f["hidden"].endswith("a tile")
    assert all(f["hidden"] is None for f in frames if f["kind"] != "draw")


# ---------------------------------------------------------------------------------------------- layout
def _overlap(a: list[Any], b: list[Any]) -> bool:
    eps = 1e-6
    return (a[1] < b[1] + b[3] - eps and b[1] < a[1] + a[3] - eps
            and a[2] < b[2] + b[4] - eps and b[2] < a[2] + a[4] - eps)


def test_layout_never_overlaps_and_keeps_pips_and_ends_in_place() -> None:
    boards = 0
    for opts, seed in itertools.product(
        [{}, {"num_players": 4, "max_pip": 9}, {"max_pip": 12, "spinner_sides_first": False}], range(6)
    ):
        game = Game(Rules.from_options({"max_hands": 3, **opts}), seed)
        rng = np.random.default_rng(seed)
        while not game.over:
            game.step(game.legal[0] if seed % 2 else game.legal[int(rng.integers(len(game.legal)))])
            board = game.board
            if not board.size:
                continue
            boards += 1
            tiles, anchors = board_layout(board)
            assert sorted(t[0] for t in tiles) == sorted(board.tiles_on_board())
            for t in tiles:
                lo, hi = game.tiles.pairs[t[0]]
                assert sorted((t[5], t[6])) == [lo, hi]
                assert {t[3], t[4]} == {1.0, 2.0}
            for a, b in itertools.combinations(tiles, 2):
                assert not _overlap(a, b), (opts, seed, a, b)
            for slot in board.open_slots:  # the open-end marker sits where the next tile would go
                x, y = anchors[slot]
                marker = [None, x - 0.42, y - 0.42, 0.84, 0.84]
                assert not any(_overlap(marker, t) for t in tiles), (opts, seed, slot)
    assert boards > 300


def test_the_page_draws_the_shared_layout_and_tiles_stay_put_within_a_hand() -> None:
    """The page's geometry is :mod:`allfives_env.board_layout`'s, in its units as they are; and since a
    tile's place depends only on the tiles before it in its arm, a hand needs at most two layouts (the
    line, then the spinner cross that re-centres it)."""
    game, _ = played_game({"max_pip": 9, "num_players": 3, "max_hands": 3}, seed=4)
    data = replay_data(game_record(game))
    for frame in data["frames"]:
        if frame["placed"]:
            layout = data["layouts"][frame["layout"]]
            assert layout["spinner"] == -1 or layout["spinner"] in [t[0] for t in layout["tiles"]]
    for hand in range(1, len(data["hand_steps"]) + 1):
        used = {f["layout"] for f in data["frames"] if f["hand"] == hand and f["placed"]}
        assert 1 <= len(used) <= 2, hand
    rules = game.rules
    board = Board(game.tiles, rules.spinner_sides_first, rules.spinner_count)  # hand 1's table, play by play
    for k in range(data["hand_steps"][1] - 1):
        event = game.events[k]
        if isinstance(event, Play):
            board.place(event.tile, event.slot)
            tiles, anchors = board_layout(board)
            cells = lay_out(board, ARM_LIMITS)
            assert [t[0] for t in tiles] == [t.tile for t in cells.tiles]
            for t, c in zip(tiles, cells.tiles):
                assert t[1:5] == pytest.approx([c.x0, c.y0, c.x1 - c.x0, c.y1 - c.y0], abs=1e-3)
                assert t[5:] == [c.first, c.second]
            assert anchors == {e.slot: pytest.approx((e.x, e.y), abs=1e-3) for e in cells.ends}
            frame = data["frames"][k]
            assert [e[1:3] for e in frame["ends"]] == [[e.value, e.points] for e in cells.ends]


def test_page_files_ship_as_package_data() -> None:
    """The page's HTML, CSS and JS are package data: every file of ``viewer_assets`` is matched by a glob of
    ``[tool.setuptools.package-data]``, so the wheel carries it."""
    import fnmatch

    tomllib = pytest.importorskip("tomllib")
    root = Path(__file__).resolve().parents[1]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["allfives_env"]
    package = root / "allfives_env"
    assets = sorted(p.relative_to(package).as_posix() for p in (package / "viewer_assets").iterdir())
    assert {"viewer_assets/page.html", "viewer_assets/viewer.css", "viewer_assets/viewer.js"} <= set(assets)
    for asset in assets:
        assert any(fnmatch.fnmatch(asset, g) for g in globs), asset


# ---------------------------------------------------------------------------------------------- page
@pytest.fixture(scope="module")
def long_game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Game, dict[int, dict[str, Any]], Path]:
    """The seeded 2-player game played with ``legal[0]`` (151 hands), saved as a replay."""
    game, states = played_game({"num_players": 2}, seed=7, chooser="first")
    path = save_replay(game, tmp_path_factory.mktemp("viewer") / "game.json", seed=7)
    return game, states, path


def _embedded(page: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_page_is_one_self_contained_file(long_game: tuple[Game, dict, Path], tmp_path: Path) -> None:
    game, _, path = long_game
    out = write_replay_html(path, tmp_path / "out.html")
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<title>All Fives replay: game.json</title>" in page
    # nothing is fetched: no URL but the SVG namespace name, no external resource of any kind
    assert set(re.findall(r"https?://[^\s\"'<>)]*", page)) <= {SVG_NS}
    for needle in ("<link", "<img", "<iframe", " src=", "@import", "url(", "@font-face", "fetch(", "XMLHttpRequest"):
        assert needle not in page, needle
    assert "default-src 'none'" in page  # the page's CSP forbids loading anything anyway
    for element_id in ("count", "scores", "event", "step", "next", "prev", "first", "last", "hand-select",
                       "view-select", "board", "chart", "log", "hands"):
        assert f'id="{element_id}"' in page or f'"{element_id}"' in page, element_id
    data = _embedded(page)
    assert len(data["frames"]) == len(game.events)
    assert data["meta"]["seed"] == 7 and data["meta"]["final_scores"] == list(game.scores)
    assert replay_html(game_record(game, seed=7), title="x") == replay_html(path, title="x")


def test_embedded_strings_cannot_break_out(long_game: tuple[Game, dict, Path]) -> None:
    game, _, _ = long_game
    record = game_record(game)
    evil = "</script><script>alert('x')</script><!-- & \u2028"
    # the replay check does not look at the agent names: untrusted text reaches the page
    record["agents"] = [evil] * game.num_players
    page = replay_html(record, title=evil)
    assert page.count("</script>") == 2  # the data element's and the code's own, nothing from the replay
    assert "<script>alert" not in page and "<!--" not in page
    assert "<title>&lt;/script&gt;&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&lt;!-- &amp;" in page
    data = _embedded(page)
    assert data["meta"]["agents"] == [evil] * game.num_players and data["meta"]["title"] == evil


PLACEHOLDERS = "%%TITLE%%%%CSS%%%%JS%%%%DATA%%"


def _page_parts(page: str) -> tuple[str, str, str]:
    """The page's <title> text, its embedded data and its code, each found once in a well-formed page."""
    titles = re.findall(r"<title>(.*?)</title>", page, re.S)
    scripts = re.findall(r"<script>\n(.*?)</script>", page, re.S)
    assert len(titles) == 1 and len(scripts) == 1 and page.count("<script") == 2, "the page is garbled"
    return titles[0], json.dumps(_embedded(page)), scripts[0]


def test_placeholders_in_the_title_or_the_data_are_text(long_game: tuple[Game, dict, Path], tmp_path: Path) -> None:
    """Every placeholder is filled in one pass: a title or a replay string that contains a placeholder
    (a file named ``x%%JS%%.json``) is shown as it is, never filled in again."""
    game, _, path = long_game
    plain = replay_html(path, title="plain")
    _, _, code = _page_parts(plain)
    record = game_record(game)
    record["agents"] = [PLACEHOLDERS, "</script><!--<script>%%DATA%%"] + ["random"] * (game.num_players - 2)
    page = replay_html(record, title=PLACEHOLDERS)
    title, _, page_code = _page_parts(page)
    assert title == PLACEHOLDERS and page_code == code
    data = _embedded(page)
    assert data["meta"]["title"] == PLACEHOLDERS and data["meta"]["agents"] == record["agents"]
    assert page.count("</script>") == 2 and "<!--" not in page
    # a replay file whose name holds every placeholder: the default title
    named = tmp_path / f"x{PLACEHOLDERS}.json"
    named.write_text(path.read_text())
    title, _, page_code = _page_parts(replay_html(named))
    assert title == f"All Fives replay: x{PLACEHOLDERS}.json" and page_code == code
    # the title appears three times (<title>, <h1>, the data) and nothing else changed size
    assert len(replay_html(named)) == len(plain) + 3 * (len(title) - len("plain"))


def test_corrupt_or_foreign_replays_raise_replay_error(long_game: tuple[Game, dict, Path], tmp_path: Path) -> None:
    game, _, _ = long_game
    record = game_record(game)
    tampered = json.loads(json.dumps(record))
    event = next(e for e in tampered["hands"][0]["events"] if e["type"] == "play")
    event["count"] += 1
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"format": "something-else", "version": 1}))
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    out = tmp_path / "out.html"
    for bad in (tampered, foreign, garbage, tmp_path / "missing.json", {"format": "allfives-replay", "version": 9}):
        with pytest.raises(ReplayError):
            replay_html(bad)
        with pytest.raises(ReplayError):
            write_replay_html(bad, out)
        assert not out.exists()


@pytest.mark.parametrize("opts", [pytest.param({"num_players": 4}, id="4p-team"),
                                  pytest.param({"num_players": 4, "max_pip": 9}, id="4p-double-nine")])
def test_four_player_and_double_nine_pages(opts: dict[str, Any]) -> None:
    game, _ = played_game({"max_hands": 3, **opts}, seed=2)
    data = _embedded(replay_html(game))
    assert data["names"] == ["P0", "P1", "P2", "P3"] and data["sides"] == ["P0+P2", "P1+P3"]
    assert data["side_of"] == [0, 1, 0, 1]
    assert len(data["pairs"]) == game.tiles.size
    assert max(max(t[5], t[6]) for layout in data["layouts"] for t in layout["tiles"]) <= game.rules.max_pip


# ---------------------------------------------------------------------------------------------- browser
def test_browser_skips_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser_helpers, "browser_paths", lambda: (None, None))
    reason = browser_missing()
    assert reason is not None and "chromium" in reason and "chromium-driver" in reason
    assert "apt-get install chromium chromium-driver" in reason
    monkeypatch.delenv("ALLFIVES_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium chromium-driver"):
        skip_or_fail(reason)
    monkeypatch.setenv("ALLFIVES_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="chromium-driver.*ALLFIVES_REQUIRE_BROWSER=1"):
        skip_or_fail(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium through Selenium, or a skip saying what is missing."""
    reason = browser_missing()
    if reason is not None:
        skip_or_fail(reason)
    with chromium_driver() as driver:
        yield driver


def _open(driver: Any, html_path: Path, step: Optional[int] = None) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    url = html_path.resolve().as_uri() + (f"#step={step}" if step is not None else "")
    driver.get("about:blank")  # a new document even when only the hash differs
    driver.get(url)
    WebDriverWait(driver, 10).until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))


def _shown(driver: Any) -> dict[str, Any]:
    from selenium.webdriver.common.by import By

    def text(element_id: str) -> str:
        return driver.find_element(By.ID, element_id).text

    return {"step": text("step"), "count": int(text("count")), "event": text("event"),
            "scores": [int(text(f"score-{s}")) for s in range(2)], "hand": text("event-hand")}


def test_browser_steps_through_the_game(browser: Any, long_game: tuple[Game, dict, Path], tmp_path: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    game, states, path = long_game
    page = write_replay_html(path, tmp_path / "viewer.html")
    data = replay_data(path)
    frames, total = data["frames"], len(data["frames"])
    _open(browser, page)
    assert _shown(browser)["step"] == f"1 / {total}"
    assert browser.title == "All Fives replay: game.json"

    def expect(step: int) -> None:
        """The page shows frame ``step`` and, at a step boundary, what the engine had there."""
        shown = _shown(browser)
        frame = frames[step - 1]
        assert shown["step"] == f"{step} / {total}"
        assert shown["event"] == frame["text"] == frame["text"].strip()
        assert shown["count"] == frame["count"]
        assert shown["scores"] == frame["scores"]
        assert shown["hand"] == f"Hand {frame['hand']}"
        if step in states:  # independent: the live engine after the same events
            assert shown["count"] == states[step]["count"] and shown["scores"] == states[step]["scores"]

    for _ in range(3):
        browser.find_element(By.ID, "next").click()
    ActionChains(browser).send_keys(Keys.ARROW_RIGHT).perform()
    expect(5)
    assert 5 in states, "step 5 of this game ends a Game.step: the engine's own state is compared there"
    ActionChains(browser).send_keys(Keys.ARROW_LEFT).perform()
    expect(4)
    ActionChains(browser).send_keys(Keys.END).perform()
    expect(total)
    assert browser.find_element(By.ID, "next").get_attribute("disabled") is not None
    assert _shown(browser)["event"].startswith("Game over: P0 wins")
    ActionChains(browser).send_keys(Keys.HOME).perform()
    expect(1)
    browser.find_element(By.ID, "last").click()
    expect(total)
    browser.find_element(By.ID, "first").click()
    browser.find_element(By.ID, "prev").click()  # stays on the first step
    expect(1)

    # jump to a hand: its first step, the hand start, with the scores carried over
    Select(browser.find_element(By.ID, "hand-select")).select_by_value("3")
    step = data["hand_steps"][2]
    expect(step)
    assert _shown(browser)["event"].startswith("Hand 3: ")
    assert _shown(browser)["scores"] == list(game.hand_records[2].scores) and _shown(browser)["count"] == 0

    # a mid-game step straight from the URL, with the board, hands and the log in step
    mid = next(s for s in range(total // 2, total) if s in states and frames[s - 1]["kind"] == "play")
    _open(browser, page, step=mid)
    expect(mid)
    played = frames[mid - 1]
    tiles = browser.find_elements(By.CSS_SELECTOR, "#board g.tile")
    assert len(tiles) == played["placed"] == len(states[mid]["layout"])
    assert len(browser.find_elements(By.CSS_SELECTOR, "#board g.tile.last")) == 1
    current = browser.find_element(By.CSS_SELECTOR, "#log li.current")
    assert current.get_attribute("data-step") == str(mid) and played["text"] in current.text
    hand_tiles = [len(browser.find_elements(By.CSS_SELECTOR, f"#hand-{s} g.tile")) for s in range(2)]
    assert hand_tiles == [len(h) for h in states[mid]["hands"]]

    # one seat's view: the other hand is face down, and other seats' drawn tiles are hidden in the log
    Select(browser.find_element(By.ID, "view-select")).select_by_value("0")
    assert browser.find_elements(By.CSS_SELECTOR, "#hand-0 g.tile.back") == []
    assert len(browser.find_elements(By.CSS_SELECTOR, "#hand-1 g.tile.back")) == hand_tiles[1]
    draw = next(f for f in frames if f["kind"] == "draw" and f["seat"] == 1)
    item = browser.find_element(By.CSS_SELECTOR, f'#log li[data-step="{draw["step"]}"]')
    assert draw["hidden"] in item.get_attribute("textContent")

    # nothing was requested from anywhere, and no script error stopped the page
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    assert browser.execute_script("return document.querySelectorAll('script[src], link, img').length") == 0


def test_screenshot_of_a_mid_game_step(tmp_path: Path) -> None:
    reason = browser_missing(need_driver=False)
    if reason is not None:
        skip_or_fail(reason)
    game, _ = played_game({"num_players": 4, "max_pip": 9, "max_hands": 2}, seed=3)
    png = screenshot(write_replay_html(game, tmp_path / "v.html"), tmp_path / "v.png", step=40)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_sample_games_show_who_played(tmp_path: Path) -> None:
    from allfives_env.evaluation import save_sample_games

    path = save_sample_games(["greedy", "random"], {"num_players": 2, "target": 60}, tmp_path, 1)[0]
    assert replay_data(path)["meta"]["agents"] == ["greedy", "random"]
    record = json.loads(path.read_text())
    record["agents"] = ["</script><b>x", "random"]
    page = replay_html(record)
    assert "</script><b>x" not in page  # embedded as escaped JSON, shown with textContent
