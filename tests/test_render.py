"""Text rendering: the spinner cross, open ends, count, scores, and only the viewer's own tiles."""

from __future__ import annotations

import numpy as np

from allfives_env import allfives_v0
from allfives_env.core import Deal, Game, Rules, parse_action, tile_set
from allfives_env.render import layout_lines, render_text

TILES = tile_set(6)


def _game_after(moves: list[str]) -> Game:
    """A 2-player game (hand size 5) in which seat 0 leads, from hands built to allow ``moves``."""
    rules = Rules(hand_size=5)
    hands = [["6-6", "6-2", "5-5", "0-0", "1-1"], ["6-3", "6-5", "2-2", "0-1", "0-2"]]
    game = Game(rules, 0, deals=[Deal.from_tiles(rules, hands, None, leader=0, rng=np.random.default_rng(0))])
    for move in moves:
        game.step(parse_action(move, TILES))
    return game


def test_cross_layout_puts_north_above_and_arms_beside_the_spinner() -> None:
    game = _game_after(["6-6@W", "6-3@E", "6-2@W", "6-5@N"])
    lines = layout_lines(game)
    assert lines == ["      [5|6]", "[2|6] <6|6> [6|3]"]


def test_render_shows_ends_count_scores_and_only_own_hand() -> None:
    game = _game_after(["6-6@W", "6-3@E"])
    text = render_text(game, viewer=0)
    assert "W=6" in text and "E=3" in text
    assert "spinner 12" in text and "count 15" in text
    assert "player_0: 0" in text and "player_1: 15" in text
    assert "player_0's hand: [0|0] [1|1] [6|2] [5|5]" in text
    assert "[6|5]" not in text.split("player_0's hand:")[1]  # the opponent's tiles stay hidden


def test_env_ansi_render_returns_text_and_human_prints(capsys) -> None:
    env = allfives_v0.raw_env(render_mode="ansi")
    env.reset(seed=5)
    text = env.render()
    assert isinstance(text, str) and "All Fives" in text and "Legal:" in text
    human = allfives_v0.raw_env(render_mode="human")
    human.reset(seed=5)
    assert human.render() is None
    assert "All Fives" in capsys.readouterr().out
