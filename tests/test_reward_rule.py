"""The reward rule is stated once (``core/outcome.py: side_rewards``) and every front end and the compiled search
agree with it; the modes and the shared constants are defined once and imported, never copied."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from allfives_env.core import Rules
from allfives_env.core.outcome import EPISODE_MODES, REWARD_MODES, side_rewards, zero_sum_share

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- the rule, as each front end wrote it
def _share(gains: list[int], side: int) -> float:
    """The points share as the envs wrote it in Python (ints, one true division)."""
    mine = gains[side]
    return mine - (sum(gains) - mine) / (len(gains) - 1)


def _top_gainer(gains: list[int]) -> int:
    best = max(gains)
    return gains.index(best) if gains.count(best) == 1 else -1


def _win(gains: list[int], winner: int, hand: bool, lose: float) -> list[float]:
    if winner < 0 and hand:
        winner = _top_gainer(gains)
    if winner < 0:
        return [0.0] * len(gains)
    return [1.0 if s == winner else lose for s in range(len(gains))]


def _bits(values: object) -> bytes:
    return np.asarray(values, dtype=np.float64).tobytes()


def _random_games(rng: np.random.Generator, count: int, sides: int) -> tuple[np.ndarray, np.ndarray]:
    """Gains (small, often tied, sometimes negative) and winners (-1 for none) of ``count`` games."""
    gains = rng.integers(-30, 60, size=(count, sides))
    gains[rng.random(count) < 0.3] = rng.integers(0, 3, size=sides)  # ties and zero gains
    winner = np.where(rng.random(count) < 0.5, -1, rng.integers(sides, size=count))
    return gains, winner


@pytest.mark.parametrize("sides", [2, 3, 4])
def test_points_reproduce_every_front_end_bit_for_bit(sides: int) -> None:
    rng = np.random.default_rng(sides)
    gains, _ = _random_games(rng, 400, sides)
    for target in (1, 7, 61, 150, 250):
        as_aec = side_rewards("points", gains, scale=target, inverse=True)
        as_single_seat = side_rewards("points", gains, scale=target)
        for k, row in enumerate(gains.tolist()):
            # env.py multiplied by the reciprocal; single_seat.py / track.py / batch_vec_env.py divided
            assert _bits(as_aec[k]) == _bits([_share(row, s) * (1.0 / target) for s in range(sides)])
            assert _bits(as_single_seat[k]) == _bits([float(_share(row, s)) / target for s in range(sides)])
            one = side_rewards("points", row, scale=target, inverse=True)  # one game: plain floats
            assert all(type(x) is float for x in one) and _bits(one) == _bits(as_aec[k])
            assert _bits(side_rewards("points", tuple(row), scale=target)) == _bits(as_single_seat[k])
            for s in range(sides):
                assert _bits(zero_sum_share(row, s)) == _bits(_share(row, s))
    point_scale = 37.5  # OpenSpiel's point_scale is a float
    assert _bits(side_rewards("points", gains, scale=point_scale)) == \
        _bits([[_share(row, s) / point_scale for s in range(sides)] for row in gains.tolist()])


def test_the_two_roundings_do_differ() -> None:
    """Why ``inverse`` exists: dividing by the target and multiplying by its reciprocal are not the same
    float, so one rule with one rounding would have changed the AEC env's rewards."""
    gains = np.array([[5, 0], [0, 5]])
    assert _bits(side_rewards("points", gains, scale=61)) != _bits(side_rewards("points", gains, scale=61, inverse=True))


@pytest.mark.parametrize("sides", [2, 3, 4])
@pytest.mark.parametrize("hand", [False, True])
def test_win_reproduces_every_front_end_bit_for_bit(sides: int, hand: bool) -> None:
    rng = np.random.default_rng(10 * sides + hand)
    gains, winner = _random_games(rng, 400, sides)
    ended = rng.random(400) < 0.7
    plain = side_rewards("win", gains, ended, winner, hand=hand)
    zero_sum = side_rewards("win", gains, ended, winner, hand=hand, split_loss=True)
    for k, row in enumerate(gains.tolist()):
        expected = _win(row, int(winner[k]), hand, -1.0) if ended[k] else [0.0] * sides
        assert _bits(plain[k]) == _bits(expected)  # env.py, single_seat.py, batch_vec_env.py
        split = _win(row, int(winner[k]), hand, -1.0 / (sides - 1)) if ended[k] else [0.0] * sides
        assert _bits(zero_sum[k]) == _bits(split)  # openspiel/track.py: the losers share -1
        one = side_rewards("win", row, bool(ended[k]), int(winner[k]), hand=hand)
        assert type(one) is list and _bits(one) == _bits(plain[k])  # one game or many: the same numbers


def test_a_hand_episode_without_a_unique_top_gainer_is_a_draw() -> None:
    assert side_rewards("win", [12, 12, 3], True, -1, hand=True) == [0.0, 0.0, 0.0]
    assert side_rewards("win", [12, 13, 3], True, -1, hand=True) == [-1.0, 1.0, -1.0]
    assert side_rewards("win", [12, 13, 3], True, -1, hand=False) == [0.0, 0.0, 0.0]
    assert side_rewards("win", [12, 13, 3], True, 0, hand=True) == [1.0, -1.0, -1.0]  # the game's winner first
    assert side_rewards("win", [12, 13, 3], False, 0) == [0.0, 0.0, 0.0]  # not over: nothing yet


# ---------------------------------------------------------------- the compiled twin
@pytest.mark.parametrize("players,partnership", [(2, False), (3, False), (4, False), (4, True)])
def test_the_compiled_rollout_value_equals_the_core_rule(players: int, partnership: bool) -> None:
    from allfives_env.batch.position import record_dtype, search_rules
    from allfives_env.batch.search import rollout_value

    rules = Rules(num_players=players, partnership=partnership)
    R = search_rules(rules)
    sides = rules.num_sides
    rng = np.random.default_rng(players + 10 * partnership)
    rec = np.zeros(1, dtype=record_dtype(rules.max_pip))
    for _ in range(300):
        before = np.zeros(4, dtype=np.int64)
        before[:sides] = rng.integers(0, rules.target, size=sides)
        after = before[:sides] + rng.integers(0, 40, size=sides)
        winner = int(rng.integers(-1, sides))
        seat = int(rng.integers(players))
        win_bonus = float(rng.choice([0.0, 1.0, 0.5, rng.random() * 3]))
        rec[0]["scores"][:sides] = after
        rec[0]["winner"] = winner
        compiled = rollout_value(rec[0], R, before, seat, win_bonus)
        gains = after - before[:sides]
        side = rules.side_of(seat)
        core = side_rewards("points", gains)[side] + \
            win_bonus * rules.target * side_rewards("win", gains, True, winner)[side]
        assert _bits(compiled) == _bits(core), (gains, winner, seat, win_bonus)


# ---------------------------------------------------------------- defined once, imported everywhere
#: Each shared name, and the one module that defines it.
HOMES = {
    "REWARD_MODES": "allfives_env/core/outcome.py",
    "EPISODE_MODES": "allfives_env/core/outcome.py",
    "SCORE_CLIP": "allfives_env/encoding.py",
    "POINT_SCALE": "allfives_env/encoding.py",
    "FIT_CAP": "allfives_env/encoding.py",
    "POINTS_OVER_PIPS": "allfives_env/core/search_constants.py",
    "HIDDEN_TRIES": "allfives_env/core/search_constants.py",
}
#: Names the copies went by.
COPIES = {"_POINT_SCALE", "_FIT_CAP", "_POINTS_OVER_PIPS", "TRIES", "VIEW_TRIES", "RESAMPLE_TRIES"}
MODE_TUPLES = {tuple(REWARD_MODES), tuple(EPISODE_MODES)}


def _sources() -> list[Path]:
    return sorted(p for folder in ("allfives_env", "training") for p in (ROOT / folder).rglob("*.py"))


def _literal_strings(node: ast.AST) -> tuple:
    elements = node.elts if isinstance(node, (ast.Tuple, ast.List)) else node.args if isinstance(node, ast.Call) else []
    if elements and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elements):
        return tuple(e.value for e in elements)
    return ()


def test_every_constant_and_mode_is_defined_once() -> None:
    offences = []
    for path in _sources():
        where = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    name = t.id if isinstance(t, ast.Name) else None
                    if name in COPIES or (name in HOMES and HOMES[name] != where):
                        offences.append(f"{where}:{node.lineno}: {name} assigned")
            # a mode tuple spelled out (a tuple, or the arguments of a call such as choice("win", "points"))
            if isinstance(node, (ast.Tuple, ast.List, ast.Call)) and _literal_strings(node) in MODE_TUPLES \
                    and where != "allfives_env/core/outcome.py":
                offences.append(f"{where}:{node.lineno}: {_literal_strings(node)} spelled out")
    assert offences == []


def test_the_front_ends_accept_exactly_the_core_modes() -> None:
    from allfives_env import env as aec
    from allfives_env import env_args
    from allfives_env.core.errors import RulesError
    from allfives_env.single_seat import AllFivesSingleSeatEnv

    assert env_args.REWARD_MODES is REWARD_MODES and env_args.EPISODE_MODES is EPISODE_MODES
    for reward in REWARD_MODES:
        for episode in EPISODE_MODES:
            AllFivesSingleSeatEnv(reward=reward, episode=episode)
            aec.raw_env(reward=reward, episode=episode)
    with pytest.raises(RulesError, match="choose 'win' or 'points'"):
        AllFivesSingleSeatEnv(reward="score")
    with pytest.raises(RulesError, match="choose 'game' or 'hand'"):
        AllFivesSingleSeatEnv(episode="match")
