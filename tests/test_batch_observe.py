"""The batch observation is the encoder's, bit for bit: every seat, every decision, many rule sets.

Batch games are played with random actions while their observations are kept; each game is then
re-dealt in a Python :class:`~allfives_env.core.game.Game` from its replay's deals and stepped through
the same decisions, and :meth:`ObservationEncoder.encode` must give the same float32 vector for every
seat at every decision (and at the end).
"""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np
import pytest

from allfives_env.batch import BatchGame
from allfives_env.batch.observe import BatchObserver
from allfives_env.core import Deal, Game, Rules
from allfives_env.core.errors import BatchError, RulesError
from allfives_env.encoding import OBSERVATION_PIECES, ObservationEncoder
from allfives_env.rule_sampler import random_rules


def python_game(batch: BatchGame, i: int) -> Game:
    """Game ``i``'s episode re-dealt in the core from its replay's deals, at its first decision."""
    record = batch.replay(i)
    rules = batch.rules
    deals = [Deal.from_tiles(rules, h["deal"]["hands"], h["deal"]["boneyard"], h["leader"], None, h["opening_drawer"])
             for h in record["hands"]]
    return Game(rules, 0, deals=deals, check_leaders=True, stop_after_hand=record["stop_after_hand"])


def lockstep(batch: BatchGame, choose: Callable[[BatchGame], np.ndarray],
             record: Callable[[BatchGame], object], max_steps: int = 2000) -> tuple[list[object], list[np.ndarray]]:
    """Play every game of ``batch`` to its end with ``choose``; ``record(batch)`` is kept before every
    step and once at the end. Returns the records and the actions of every step."""
    kept, actions = [], []
    for _ in range(max_steps):
        kept.append(record(batch))
        if batch.done.all():
            return kept, actions
        acts = choose(batch)
        actions.append(acts)
        batch.step(acts)
    raise AssertionError("games did not end")


def python_decisions(batch: BatchGame, i: int, steps: int) -> Iterator[tuple[int, Game]]:
    """(step, game) at every decision of batch game ``i`` re-simulated in the core, then at its end."""
    game = python_game(batch, i)
    decisions = batch.decisions(i)
    for k, action in enumerate(decisions):
        yield k, game
        game.step(int(action))
    assert game.over == bool(batch.S[i]["over"])
    yield len(decisions), game


def random_chooser(seed: int, n: int) -> Callable[[BatchGame], np.ndarray]:
    """A uniformly random legal action per live game, from a stream of the test's."""
    states = np.arange(n, dtype=np.uint64) + np.uint64(seed * 1000 + 17)
    return lambda batch: batch.random_actions(states)


def rule_sets(count: int, seed: int) -> list[Rules]:
    """Random rule sets over every option, the three set sizes in turn (at most 4 hands a game)."""
    rng = np.random.default_rng(seed)
    drawn = [random_rules(rng, ((6,), (9,), (12,))[k % 3]) for k in range(count)]
    return [Rules.from_options({**r.to_dict(), "max_hands": min(r.max_hands, 4)}) for r in drawn]


def check_observations(rules: Rules, n: int, seed: int, action_features: bool, obs_version: int = 1) -> int:
    """Compare batch and core observations (under ``obs_version``) of every seat at every decision, each also
    inside the observation space's bounds; the decisions compared."""
    batch = BatchGame(rules, n, seed, history=obs_version >= 2)
    observer = BatchObserver(rules, action_features, obs_version)
    P = rules.num_players
    seats = [np.full(n, s, dtype=np.int64) for s in range(P)]
    kept, _ = lockstep(batch, random_chooser(seed, n),
                       lambda b: [observer.observe(b, seats[s]) for s in range(P)] + [observer.observe(b)])
    compared = 0
    encoder = ObservationEncoder(rules, action_features, obs_version)
    for i in range(n):
        for k, game in python_decisions(batch, i, len(kept)):
            for s in range(P):
                expected = encoder.encode(game, s)
                got = kept[k][s][i]
                assert np.array_equal(got, expected), _where(rules, i, k, s, got, expected, encoder)
                assert (expected >= encoder.low).all() and (expected <= encoder.high).all()
            default = kept[k][P][i]
            assert np.array_equal(default, encoder.encode(game, game.current if game.current >= 0 else 0))
            compared += 1
    return compared


def _where(rules: Rules, i: int, k: int, seat: int, got: np.ndarray, expected: np.ndarray,
           encoder: ObservationEncoder) -> str:
    """Which slices differ, for the failure message."""
    bad = [name for name, sl in encoder.slices.items() if not np.array_equal(got[sl], expected[sl])]
    return f"game {i}, decision {k}, seat {seat}: slices {bad} differ under {rules.to_dict()}"


@pytest.mark.parametrize("action_features", [False, True])
def test_batch_observations_equal_the_encoders_over_random_rules(action_features: bool) -> None:
    compared = 0
    for j, rules in enumerate(rule_sets(12, 7 + action_features)):
        compared += check_observations(rules, 4, 100 + j, action_features)
    assert compared > 500


def test_default_seat_of_a_finished_game_is_seat_0_and_out_is_reused() -> None:
    rules = Rules()
    batch = BatchGame(rules, 3, 5, stop_after_hand=True)
    observer = BatchObserver(rules)
    lockstep(batch, random_chooser(1, 3), lambda b: None)
    out = np.full((3, observer.size), 7.0, dtype=np.float32)
    got = observer.observe(batch, out=out)
    assert got is out
    assert np.array_equal(out, observer.observe(batch, np.zeros(3, dtype=np.int64)))


@pytest.mark.parametrize("bad", [np.zeros(2, dtype=np.int64), np.full(3, 2), np.full(3, -2), np.zeros(3, bool)])
def test_bad_seats_are_refused(bad: np.ndarray) -> None:
    batch = BatchGame(Rules(), 3, 0)
    with pytest.raises(BatchError, match="seats"):
        BatchObserver(Rules()).observe(batch, bad)


def test_an_observer_refuses_a_batch_of_other_rules_and_a_wrong_out() -> None:
    batch = BatchGame(Rules(num_players=3), 2, 0)
    with pytest.raises(RulesError):
        BatchObserver(Rules()).observe(batch)
    with pytest.raises(BatchError, match="out must be"):
        BatchObserver(batch.rules).observe(batch, out=np.zeros((2, 5), np.float32))


@pytest.mark.parametrize("players,max_pip", [(2, 6), (3, 9), (4, 12)])
def test_both_engines_read_the_one_declaration_of_the_observation_pieces(players: int, max_pip: int) -> None:
    """``OBSERVATION_PIECES`` is the layout: the encoder's slices follow it in order and size, and the
    compiled observer's offsets are those slices' starts, piece for piece (the optional ``features`` too)."""
    rules = Rules(num_players=players, max_pip=max_pip)
    for features in (False, True):
        encoder = ObservationEncoder(rules, features)
        pieces = [p for p in OBSERVATION_PIECES if p.since == 1 and (features or not p.optional)]
        tiles = encoder.tiles
        assert list(encoder.slices) == [p.name for p in pieces]
        assert [s.stop - s.start for s in encoder.slices.values()] == [
            p.size(players, tiles.size, tiles.num_values) for p in pieces]
        observer = BatchObserver(rules, features)
        assert observer.offsets.tolist() == [encoder.slices[p.name].start if p.name in encoder.slices else -1
                                             for p in OBSERVATION_PIECES]


def test_each_piece_documents_the_size_it_has() -> None:
    """A piece's ``shape`` (what the docs, ``allfives layout`` and the module's table show) is its size:
    read as arithmetic in P, T, V and F, it gives ``size(P, T, V)`` for every player count and set."""
    import re

    from allfives_env.encoding import ACTION_FEATURES, pieces_table

    for piece in OBSERVATION_PIECES:
        expression = re.sub(r"(\d)([A-Z(])", r"\1*\2", piece.shape.replace(" x ", "*"))
        assert re.fullmatch(r"[\dPTVF()+*\- ]+", expression), piece.shape
        for players in (2, 3, 4):
            for tiles, values in ((28, 7), (55, 10), (91, 13)):
                given = {"P": players, "T": tiles, "V": values, "F": len(ACTION_FEATURES)}
                assert eval(expression, {"__builtins__": {}}, given) == piece.size(players, tiles, values), piece.name
        assert f"``{piece.name}``" in pieces_table()
    import allfives_env.encoding as encoding

    assert pieces_table() in (encoding.__doc__ or "")
