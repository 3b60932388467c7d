"""The double-three miniature (``max_pip=3``): 10 tiles, its default deals, its refusals, and games that still
score fives and open the spinner. The batch engine's play of it is checked against the core by
tests/test_batch_coverage.py, which plays every value of ``max_pip``."""

from __future__ import annotations

import numpy as np
import pytest

from allfives_env.core import Game, Rules
from allfives_env.core.errors import RulesError
from allfives_env.core.events import Play
from allfives_env.core.tiles import tile_set


def test_the_set_has_ten_tiles_and_small_default_deals() -> None:
    assert len(tile_set(3).pairs) == 10
    assert [Rules(num_players=n, max_pip=3).hand_size for n in (2, 3, 4)] == [3, 2, 2]
    with pytest.raises(RulesError, match="double-three set has 10"):
        Rules(num_players=4, max_pip=3, hand_size=3)
    with pytest.raises(RulesError, match=r"max_pip=7 is not allowed: choose one of \(3, 6, 9, 12\)"):
        Rules(max_pip=7)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_games_score_fives_and_open_the_spinner(players: int) -> None:
    rules = Rules(num_players=players, max_pip=3, target=30)
    rng = np.random.default_rng(players)
    plays: list[Play] = []
    for seed in range(40):
        game = Game(rules, seed)
        while not game.over:
            game.step(game.legal[rng.integers(len(game.legal))])
        assert game.winner is not None or game.truncated
        plays += [e for e in game.events if isinstance(e, Play)]
    assert any(p.points > 0 and p.count % 5 == 0 for p in plays)  # fives still score
    assert any(p.slot in (2, 3) for p in plays)  # the spinner's sides are played
