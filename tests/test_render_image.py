"""Raster rendering (``render_mode="rgb_array"``): fixed frame shape, hidden hands stay hidden, every rules
option renders, long arms bend and stay on the canvas without overlapping, and the PNG encoder round-trips."""

from __future__ import annotations

import random
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from allfives_env.core import Deal, Game, Rules, parse_action, tile_set
from allfives_env.core.board import N, S
from allfives_env.board_layout import fit_layout
from allfives_env.render_image import (
    BOARD_AREA, BOARD_PAD, FRAME_HEIGHT, FRAME_WIDTH, GOOD_UNIT, MAX_UNIT, layout_board, png_bytes, render_rgb,
    text_mask, write_png,
)

RULE_SETS: list[dict[str, Any]] = [
    dict(num_players=2),
    dict(num_players=3),
    dict(num_players=4),
    dict(num_players=4, partnership=False),
    dict(num_players=2, max_pip=9),
    dict(num_players=3, max_pip=12),
    dict(num_players=2, max_pip=12, may_draw_when_able=True),
    dict(num_players=2, spinner_count="sniff"),
    dict(num_players=3, spinner_sides_first=False, spinner_count="sniff"),
    dict(num_players=4, max_pip=9, may_draw_when_able=True, score_unit=5),
]


def _random_game(rules: Rules, seed: int, steps: int = 10_000) -> Game:
    game = Game(rules, seed)
    chooser = random.Random(seed)
    for _ in range(steps):
        if game.over:
            break
        game.step(chooser.choice(game.legal))
    return game


def _check_frame(frame: np.ndarray) -> None:
    assert frame.shape == (FRAME_HEIGHT, FRAME_WIDTH, 3)
    assert frame.dtype == np.uint8


def _check_layout(game: Game) -> None:
    """Every tile on the table is drawn once, inside the board area, and no two tiles overlap."""
    layout = layout_board(game)
    board = game.board
    assert sorted(t.tile for t in layout.tiles) == sorted(board.tiles_on_board())
    x0, y0, x1, y1 = BOARD_AREA
    if not layout.tiles:
        return
    r = np.array([(t.x0, t.y0, t.x1, t.y1) for t in layout.tiles])
    assert (r[:, 0] >= x0).all() and (r[:, 1] >= y0).all() and (r[:, 2] <= x1).all() and (r[:, 3] <= y1).all()
    assert (r[:, 2] > r[:, 0]).all() and (r[:, 3] > r[:, 1]).all()
    overlap = (
        (r[:, None, 0] < r[None, :, 2]) & (r[None, :, 0] < r[:, None, 2])
        & (r[:, None, 1] < r[None, :, 3]) & (r[None, :, 1] < r[:, None, 3])
    )
    np.fill_diagonal(overlap, False)
    assert not overlap.any(), "two tiles of the layout overlap"
    for m in layout.markers:
        assert x0 <= m.x - m.radius and m.x + m.radius <= x1 and y0 <= m.y - m.radius and m.y + m.radius <= y1
    # the markers say what each end adds: with the spinner's own 2v they make up the count
    assert {m.slot for m in layout.markers} == set(board.open_slots)
    spin = 2 * board.spinner if board.spinner_counts() else 0
    assert sum(m.points for m in layout.markers) + spin == board.count()


def test_frame_has_fixed_shape_and_real_content() -> None:
    game = _random_game(Rules(num_players=2), 3, steps=12)
    frame = render_rgb(game, seat=0)
    _check_frame(frame)
    colours = np.unique(frame.reshape(-1, 3), axis=0)
    assert len(colours) >= 12  # felt, panels, tiles, pips of several values, text, markers
    board = frame[BOARD_AREA[1]:BOARD_AREA[3], BOARD_AREA[0]:BOARD_AREA[2]]
    ivory = np.all(board == np.array([247, 242, 226], dtype=np.uint8), axis=-1)
    assert ivory.sum() > 20 * 500  # a dozen tiles, not an empty table


def test_frame_changes_when_a_tile_is_played() -> None:
    game = _random_game(Rules(num_players=2), 11, steps=4)
    before = render_rgb(game, seat=0)
    game.step(game.legal[0])
    after = render_rgb(game, seat=0)
    board_before = before[BOARD_AREA[1]:BOARD_AREA[3]]
    board_after = after[BOARD_AREA[1]:BOARD_AREA[3]]
    assert not np.array_equal(board_before, board_after)


def test_viewers_see_their_own_hand_only() -> None:
    game = _random_game(Rules(num_players=3), 5, steps=3)
    frames = [render_rgb(game, seat=s) for s in range(3)] + [render_rgb(game, seat=None)]
    for i in range(4):
        for j in range(i + 1, 4):
            assert not np.array_equal(frames[i], frames[j])
    # the table is the same picture whoever looks at it
    for f in frames[1:]:
        assert np.array_equal(f[BOARD_AREA[1]:BOARD_AREA[3]], frames[0][BOARD_AREA[1]:BOARD_AREA[3]])


def test_other_hands_do_not_leak_into_the_frame() -> None:
    """Two deals that differ only in seat 1's tiles (and the boneyard) look the same to seat 0 and to a
    spectator, before and after seat 0's lead."""
    rules = Rules(num_players=2, hand_size=5)
    tiles = tile_set(6)
    mine = ["6-6", "6-2", "5-5", "0-0", "1-1"]
    games = []
    for theirs in (["6-3", "6-5", "2-2", "0-1", "0-2"], ["6-4", "3-3", "1-2", "1-3", "2-5"]):
        deal = Deal.from_tiles(rules, [mine, theirs], None, leader=0, rng=np.random.default_rng(0))
        games.append(Game(rules, 0, deals=[deal]))
    for viewer in (0, None):
        assert np.array_equal(render_rgb(games[0], seat=viewer), render_rgb(games[1], seat=viewer))
    for g in games:
        g.step(parse_action("6-6@W", tiles))
    for viewer in (0, None):
        assert np.array_equal(render_rgb(games[0], seat=viewer), render_rgb(games[1], seat=viewer))
    assert not np.array_equal(render_rgb(games[0], seat=1), render_rgb(games[1], seat=1))


@pytest.mark.parametrize("options", RULE_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_random_positions_render_under_every_rules_set(options: dict[str, Any]) -> None:
    rules = Rules(**options)
    names = [f"agent_{s}" for s in range(rules.num_players)]
    for seed in range(3):
        game = Game(rules, seed)
        _check_frame(render_rgb(game, seat=None))  # the empty table before the lead
        _check_layout(game)
        chooser = random.Random(seed)
        rendered = 0
        while not game.over:
            game.step(chooser.choice(game.legal))
            # about a dozen positions per game (whole 4-player games are long), new hands included
            if rendered < 14 and (chooser.random() < 0.1 or (game.board.size == 0 and rendered < 4)):
                rendered += 1
                viewer = game.current if game.current >= 0 else None
                _check_frame(render_rgb(game, seat=viewer, agent_names=names if rendered % 2 else None))
                _check_layout(game)
        for viewer in (None, 0):  # the finished game: the last layout and the result
            _check_frame(render_rgb(game, seat=viewer))
        _check_layout(game)


def test_long_arms_bend_and_stay_on_the_canvas() -> None:
    """Play whole games with big sets and render the biggest layouts: the arms must bend (or the tiles
    would be tiny), nothing leaves the board area and no two tiles overlap."""
    bent = 0
    biggest = 0
    for seed in range(24):
        options = RULE_SETS[seed % len(RULE_SETS)] if seed % 2 else dict(num_players=2 + seed % 3, max_pip=12)
        rules = Rules(**options)
        game = Game(rules, seed)
        chooser = random.Random(seed)
        best: Game = game.clone()
        while not game.over:
            game.step(chooser.choice(game.legal))
            if game.board.size > best.board.size:
                best = game.clone()
        for position in (best, game):
            _check_frame(render_rgb(position, seat=0))
            _check_layout(position)
            layout = layout_board(position)
            bent += min(layout.bends) < 1e9
            biggest = max(biggest, position.board.size)
            if position.board.size >= 40:
                assert layout.unit >= 14  # still readable
    assert bent > 0 and biggest >= 40


def test_the_frame_only_scales_and_shifts_the_shared_layout() -> None:
    """The frame draws :mod:`allfives_env.board_layout`'s geometry: every tile and marker in pixels is the
    same one in cells, times one scale, plus one offset (to the pixel)."""
    x0, y0, x1, y1 = BOARD_AREA
    checked = 0
    rule_sets = [dict(num_players=2), dict(num_players=3, max_pip=12), dict(num_players=4, max_pip=9)]
    for seed, options in enumerate(rule_sets):
        game = Game(Rules(**options), seed)
        chooser = random.Random(seed)
        while not game.over:
            game.step(chooser.choice(game.legal))
            if game.board.size == 0 or chooser.random() < 0.7:
                continue
            cells, unit = fit_layout(game.board, x1 - x0 - 2 * BOARD_PAD, y1 - y0 - 2 * BOARD_PAD, MAX_UNIT, GOOD_UNIT)
            pixels = layout_board(game)
            assert pixels.unit == unit and pixels.bends == cells.limits
            assert [(t.tile, t.first, t.second, t.centre) for t in pixels.tiles] == [
                (t.tile, t.first, t.second, t.centre) for t in cells.tiles]
            ox, oy = pixels.tiles[0].x0 - unit * cells.tiles[0].x0, pixels.tiles[0].y0 - unit * cells.tiles[0].y0
            got = np.array([(t.x0, t.y0, t.x1, t.y1) for t in pixels.tiles], dtype=float)
            want = np.array([(t.x0, t.y0, t.x1, t.y1) for t in cells.tiles]) * unit + [ox, oy, ox, oy]
            assert np.abs(got - want).max() <= 1.0
            assert [(m.slot, m.value, m.points if m.counted else None) for m in pixels.markers] == [
                (e.slot, e.value, e.points) for e in cells.ends]
            for m, e in zip(pixels.markers, cells.ends):
                assert abs(m.x - (ox + unit * e.x)) <= 1.0 and abs(m.y - (oy + unit * e.y)) <= 1.0
            checked += 1
    assert checked > 50


def test_sniff_counts_uncovered_north_south_ends() -> None:
    """Under ``sniff`` an open N/S end with no tile counts the spinner value, and its marker says so."""
    rules = Rules(num_players=2, hand_size=5, spinner_count="sniff")
    tiles = tile_set(6)
    hands = [["6-6", "6-2", "5-5", "0-0", "1-1"], ["6-3", "6-5", "2-2", "0-1", "0-2"]]
    game = Game(rules, 0, deals=[Deal.from_tiles(rules, hands, None, leader=0, rng=np.random.default_rng(0))])
    for move in ("6-6@W", "6-3@E", "6-2@W"):
        game.step(parse_action(move, tiles))
    markers = {m.slot: m for m in layout_board(game).markers}
    assert markers[N].counted and markers[N].points == 6 and markers[S].points == 6
    _check_layout(game)


def test_bad_seat_is_refused() -> None:
    game = Game(Rules(num_players=2), 0)
    with pytest.raises(ValueError):
        render_rgb(game, seat=2)
    with pytest.raises(ValueError):
        render_rgb(game, seat=0, agent_names=["only one"])


def test_font_draws_known_glyphs_and_marks_unknown_ones() -> None:
    mask = text_mask("COUNT 15", 1)
    assert mask.shape == (7, 8 * 6 - 1) and mask.any()
    assert text_mask("Ab", 2).shape == (14, 22)
    assert np.array_equal(text_mask("p0", 1), text_mask("P0", 1))  # lower case drawn as upper case
    assert np.array_equal(text_mask("\u00e9", 1), text_mask("?", 1))
    assert not text_mask(" ", 3).any()


def _read_png(data: bytes) -> tuple[int, int, int, np.ndarray]:
    """A tiny PNG reader for the encoder's own output (filter 0 rows): width, height, colour type, pixels."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        tag, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(tag + body) & 0xFFFFFFFF
        if tag == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + length
    assert header is not None and tag == b"IEND"
    width, height, depth, color_type = header[:4]
    assert depth == 8
    channels = {0: 1, 2: 3, 6: 4}[color_type]
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * channels)
    assert (raw[:, 0] == 0).all()
    return width, height, color_type, raw[:, 1:].reshape(height, width, channels)


def test_png_round_trip(tmp_path: Path) -> None:
    frame = render_rgb(_random_game(Rules(num_players=4, max_pip=9), 2, steps=20), seat=1)
    path = write_png(frame, tmp_path / "frame.png")
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", data[16:24])  # IHDR is the first chunk
    assert (width, height) == (FRAME_WIDTH, FRAME_HEIGHT)
    w, h, color_type, pixels = _read_png(data)
    assert color_type == 2 and np.array_equal(pixels, frame)
    assert data == png_bytes(frame)


def test_png_grey_and_rgba_and_bad_input() -> None:
    rng = np.random.default_rng(0)
    grey = rng.integers(0, 256, (5, 7), dtype=np.uint8)
    rgba = rng.integers(0, 256, (3, 4, 4), dtype=np.uint8)
    _, _, ct, px = _read_png(png_bytes(grey))
    assert ct == 0 and np.array_equal(px[..., 0], grey)
    _, _, ct, px = _read_png(png_bytes(rgba))
    assert ct == 6 and np.array_equal(px, rgba)
    with pytest.raises(TypeError):
        png_bytes(np.zeros((2, 2, 3), dtype=np.float32))
    with pytest.raises(ValueError):
        png_bytes(np.zeros((2, 2, 2), dtype=np.uint8))


def test_the_envs_render_rgb_array_frames_of_their_viewer() -> None:
    import gymnasium

    import allfives_env  # noqa: F401  (registers AllFives-v0)
    from allfives_env import allfives_v0

    env = gymnasium.make("AllFives-v0", opponents=["greedy"], render_mode="rgb_array")
    env.reset(seed=3)
    first = env.render()
    seat = env.unwrapped.seat
    assert first.shape == (FRAME_HEIGHT, FRAME_WIDTH, 3) and first.dtype == np.uint8
    assert np.array_equal(first, render_rgb(env.unwrapped.game, seat))  # the learner's own view
    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    assert not np.array_equal(first, env.render())
    aec = allfives_v0.env(render_mode="rgb_array")
    assert aec.unwrapped.render().shape == (FRAME_HEIGHT, FRAME_WIDTH, 3)  # before reset: a blank frame
    aec.reset(seed=1)
    game = aec.unwrapped.game
    assert np.array_equal(aec.render(), render_rgb(game, game.current, aec.unwrapped.possible_agents))


def test_replay_command_writes_the_html_viewer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from allfives_env.cli import main

    replay, page = tmp_path / "g.json", tmp_path / "g.html"
    assert main(["demo", "--seed", "2", "--quiet", "--replay", str(replay)]) == 0
    assert main(["replay", str(replay), "--html", str(page)]) == 0
    assert "Viewer written to" in capsys.readouterr().out and page.read_text().startswith("<!DOCTYPE html>")
    (tmp_path / "bad.json").write_text('{"format": "something-else"}')
    assert main(["replay", str(tmp_path / "bad.json"), "--html", str(tmp_path / "bad.html")]) == 2
    assert "not an All Fives replay" in capsys.readouterr().err and not (tmp_path / "bad.html").exists()
