"""The compiled search: positions written from a view, guesses of the hidden tiles, and the
``pimc`` / ``oracle`` agents on the batch engine.

A record written from a view must play on exactly like the view's determinized :class:`Game` under the
same actions; the compiled rollout values must equal the Python search's on the same guess; a guess
must respect every public constraint; and the agents must pick legal moves, deterministically per seed,
under every player count and the rule variants that change play (drawing, sniff, score units, the
reserve, double-nine).
"""

from __future__ import annotations

import numpy as np
import pytest

from allfives_env.agents import OracleView, PlayerView, make_agent, sample_hidden
from allfives_env.agents.search import PIMCAgent
from allfives_env.batch.layout import BONEYARD, ON_TABLE
from allfives_env.batch.position import position_record, turn_state
from allfives_env.batch.search import guess_position, search_values, step_position
from allfives_env.core import Game, Rules
from tests.helpers import positions

VARIANTS = [
    pytest.param({"num_players": 2}, id="2p"),
    pytest.param({"num_players": 3}, id="3p"),
    pytest.param({"num_players": 4}, id="4p-team"),
    pytest.param({"num_players": 4, "partnership": False}, id="4p-cut"),
    pytest.param({"may_draw_when_able": True, "max_draws_per_turn": 2}, id="draw-cap2"),
    pytest.param({"num_players": 3, "may_draw_when_able": True, "boneyard_reserve": 2}, id="3p-draw-reserve"),
    pytest.param({"spinner_count": "sniff", "score_unit": 5}, id="sniff-unit5"),
    pytest.param({"num_players": 3, "hand_end": "winner_takes", "min_first_score": 10, "exact_target": True,
                  "target": 100, "win_check": "end_of_hand"}, id="3p-winner-takes-exact"),
    pytest.param({"num_players": 3, "max_pip": 9, "first_leader": "highest_double",
                  "no_double_fallback": "draw_until_double"}, id="3p-d9"),
]


def record_state(rec: np.ndarray, sides: int) -> tuple:
    g = rec[0]
    return (int(g["current"]), sorted(int(a) for a in g["legal"][:g["n_legal"]]), [int(x) for x in g["scores"][:sides]],
            bool(g["over"]), None if g["winner"] < 0 else int(g["winner"]))


def game_state(game: Game) -> tuple:
    return (game.current, sorted(game.legal), list(game.scores), game.over, game.winner)


@pytest.mark.parametrize("options", VARIANTS)
def test_a_record_written_from_a_view_plays_on_like_the_determinized_game(options: dict) -> None:
    rules = Rules(**options)
    rng = np.random.default_rng(1)
    for game in positions(rules, seed=3, count=12, choice_only=False):
        view = PlayerView(game, game.current)
        hands, boneyard = sample_hidden(view, rng)
        fork = view.determinized(hands, boneyard)
        rec = position_record(view, hands, boneyard)
        assert record_state(rec, rules.num_sides) == game_state(fork)
        while not fork.over:
            action = sorted(fork.legal)[int(rng.integers(len(fork.legal)))]
            fork.step(action)
            step_position(rec, rules, action)
            assert record_state(rec, rules.num_sides) == game_state(fork)


@pytest.mark.parametrize("rollout", ["greedy", "expert"])
@pytest.mark.parametrize("options", VARIANTS)
def test_compiled_rollout_values_equal_the_python_search_on_the_same_guess(options: dict, rollout: str) -> None:
    rules = Rules(**options)
    rng = np.random.default_rng(2)
    reference = PIMCAgent(seed=0, prior="none", engine="python", rollout=rollout)
    for game in positions(rules, seed=5, count=10):
        view = PlayerView(game, game.current)
        hands, boneyard = sample_hidden(view, rng)
        fork = view.determinized(hands, boneyard)
        expected = [reference._evaluate(fork, view.seat, a) for a in view.legal]
        got = search_values(view, view.legal, 1, rollout=rollout, hidden=(hands, boneyard))
        assert got.tolist() == expected


def test_turn_counters_follow_from_the_public_log() -> None:
    for options in ({"may_draw_when_able": True, "max_draws_per_turn": 2}, {"num_players": 3, "boneyard_reserve": 2},
                    {"num_players": 4}):
        for game in positions(Rules(**options), seed=9, count=60, choice_only=False):
            turn = turn_state(PlayerView(game, 0).events)
            pending = -1 if game._pending_void is None else game._pending_void[0]
            assert turn == (game._passes, game._draws_this_turn, pending)


@pytest.mark.parametrize("options", VARIANTS)
def test_a_guess_respects_everything_public(options: dict) -> None:
    rules = Rules(**options)
    tiles = Game(rules, 0).tiles
    for k, game in enumerate(positions(rules, seed=7, count=12)):
        seat = game.current
        view = PlayerView(game, seat)
        g = guess_position(view, seed=k)[0]
        owner = g["owner"][:tiles.size]
        sizes = view.hand_sizes
        for s in range(rules.num_players):
            held = [t for t in range(tiles.size) if owner[t] == s]
            assert len(held) == sizes[s] == g["hand_count"][s]
            if s == seat:
                assert held == view.hand
            elif game.voids[s]:
                assert not any(tiles.pip_bits[t] & view.voids[s] for t in held), "a void seat got a tile it lacks"
            if "hand_bits" in g.dtype.names:
                bits = sum(int(w) << (60 * i) for i, w in enumerate(g["hand_bits"][s]))
                assert bits == tiles.mask_of(held)
        assert sorted((t, int(owner[t]) - ON_TABLE) for t in range(tiles.size) if owner[t] >= ON_TABLE) == sorted(view.played)
        boneyard = [int(t) for t in g["deal"][g["next_draw"]:]]
        assert sorted(boneyard) == [t for t in range(tiles.size) if owner[t] == BONEYARD]
        assert len(boneyard) == view.boneyard_size


def test_guesses_are_random_but_fixed_by_the_seed() -> None:
    game = positions(Rules(), seed=4, count=1)[0]
    view = PlayerView(game, game.current)
    first = [guess_position(view, seed=s)[0]["owner"].tolist() for s in range(6)]
    again = [guess_position(view, seed=s)[0]["owner"].tolist() for s in range(6)]
    assert first == again and len({tuple(o) for o in first}) > 1


@pytest.mark.parametrize("options", VARIANTS)
def test_pimc_on_the_batch_engine_chooses_legal_moves_deterministically(options: dict) -> None:
    rules = Rules(**options)
    for game in positions(rules, seed=11, count=6):
        view = PlayerView(game, game.current)
        a = make_agent("pimc", seed=3, samples=8).act(view)
        b = make_agent("pimc", seed=3, samples=8).act(view)
        assert a == b and a in game.legal
    for name in ("pimc:prior=none,rollout=random", "pimc:prior=none,rollout=epsilon,epsilon=0.5"):
        agent = make_agent(name, seed=1, samples=5)
        assert agent.act(PlayerView(game, game.current)) in game.legal


def test_the_oracle_searches_the_true_tiles_with_both_engines() -> None:
    rules = Rules(num_players=3)
    batch = make_agent("oracle", seed=0, prior="none")
    python = make_agent("oracle", seed=0, prior="none", engine="python")
    for game in positions(rules, seed=13, count=10):
        view = OracleView(game, game.current)
        assert batch._batch_totals(view, view.legal, 1) == python._python_totals(view, view.legal, 1)
        assert batch.act(view) in game.legal
    random_rollouts = make_agent("oracle", seed=0, rollout="random", samples=4)
    assert random_rollouts.act(OracleView(game, game.current)) in game.legal
    with pytest.raises(TypeError, match="OracleView"):
        batch.act(PlayerView(game, game.current))


def test_the_engine_is_a_spec_parameter() -> None:
    assert make_agent("pimc").engine == "batch" and make_agent("pimc").spec() == "pimc"
    agent = make_agent("pimc:engine=python,samples=3")
    assert agent.engine == "python" and make_agent(agent.spec()).spec() == agent.spec() == "pimc:engine=python,samples=3"
    with pytest.raises(ValueError, match="engine='gpu' is not allowed"):
        make_agent("pimc", engine="gpu")


def test_both_engines_search_about_equally_well_on_the_same_positions() -> None:
    """With many guesses the two engines' mean values agree (their guesses differ, their model doesn't)."""
    for game in positions(Rules(), seed=17, count=3):
        view = PlayerView(game, game.current)
        batch = PIMCAgent(seed=1, prior="none")._batch_totals(view, view.legal, 150)
        python = PIMCAgent(seed=1, prior="none", engine="python")._python_totals(view, view.legal, 150)
        spread = np.std(np.array(batch) / 150) + np.std(np.array(python) / 150) + 5.0
        assert np.abs(np.array(batch) / 150 - np.array(python) / 150).max() < 2 * spread
