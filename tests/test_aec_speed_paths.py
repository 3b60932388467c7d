"""The fast paths of the AEC loop give what the plain computation gives.

The encoder keeps one buffer per seat and brings it up to date between observations (tiles played, hand,
scores, voids, boneyard); the game takes numpy integers without a second try. These tests hold the
incremental observation against one built from nothing at every step, over random rule sets, seats
observed at random moments, copies and caller-given ``out`` arrays.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from allfives_env import allfives_v0
from allfives_env.core import Game, IllegalActionError, Rules
from allfives_env.encoding import ObservationEncoder

from helpers import wide_random_rules


def fresh_observation(rules: Rules, game: Game, seat: int, action_features: bool = False) -> np.ndarray:
    """The observation from an encoder that has never seen the game: every slice written from scratch."""
    return ObservationEncoder(rules, action_features).encode(game, seat)


@pytest.mark.parametrize("trial", range(12))
def test_incremental_observations_equal_fresh_ones(trial: int) -> None:
    rng = np.random.default_rng(100 + trial)
    rules = wide_random_rules(rng)
    game = Game(rules, seed=int(rng.integers(2**32)))
    enc = ObservationEncoder(rules)
    steps = 0
    while not game.over and steps < 400:
        # some seats are looked at often, some rarely: both catch-up paths run
        for seat in range(rules.num_players):
            if rng.random() < 0.6:
                got = enc.encode(game, seat)
                assert got.dtype == np.float32 and got.flags.owndata
                assert got.tobytes() == fresh_observation(rules, game, seat).tobytes()
        game.step(game.legal[int(rng.integers(len(game.legal)))])
        steps += 1


def test_out_arrays_of_any_dtype_get_the_plain_stores() -> None:
    rules = Rules(num_players=3)
    game = Game(rules, seed=5)
    rng = np.random.default_rng(5)
    enc = ObservationEncoder(rules)
    for _ in range(40):
        seat = game.current
        want = fresh_observation(rules, game, seat)
        out32 = np.full(enc.size, 7.0, np.float32)
        assert enc.encode(game, seat, out32) is out32
        assert out32.tobytes() == want.tobytes()
        out64 = np.full(enc.size, 7.0, np.float64)
        enc.encode(game, seat, out64)
        # every entry as a float64 store of the same Python value: equal to the float32 one where exact
        assert np.allclose(out64, want, atol=1e-6)
        game.step(game.legal[int(rng.integers(len(game.legal)))])


def test_state_uses_the_same_public_slices() -> None:
    rules = Rules(num_players=4, partnership=True)
    game = Game(rules, seed=9)
    rng = np.random.default_rng(9)
    enc = ObservationEncoder(rules)
    for _ in range(60):
        if game.over:
            break
        state = enc.state(game)
        base = enc.T * enc.P + enc.T
        public = state[base:base + enc.size]
        want = fresh_observation(rules, game, 0)
        hand = enc.slices["hand"]
        assert not public[hand].any()
        want[hand] = 0.0
        assert public.tobytes() == want.tobytes()
        game.step(game.legal[int(rng.integers(len(game.legal)))])


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_env_copies_keep_observing_like_the_original(how: str) -> None:
    env = allfives_v0.raw_env(num_players=2, reward="points")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(25):
        obs, *_ = env.last()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    other = pickle.loads(pickle.dumps(env)) if how == "pickle" else copy.deepcopy(env)
    while env.agents:
        a, b = env.last(), other.last()
        assert a[0]["observation"].tobytes() == b[0]["observation"].tobytes()
        assert a[0]["action_mask"].tobytes() == b[0]["action_mask"].tobytes()
        assert a[1:] == b[1:]
        if a[2] or a[3]:
            env.step(None)
            other.step(None)
            continue
        action = rng.choice(np.flatnonzero(a[0]["action_mask"]))  # a numpy integer, as samplers give
        env.step(action)
        other.step(int(action))


def test_numpy_integer_actions_play_and_fail_like_ints() -> None:
    a, b = Game(seed=1), Game(seed=1)
    while not a.over:
        action = a.legal[0]
        a.step(np.int64(action))
        b.step(action)
        assert a.events == b.events and a.legal == b.legal
    with pytest.raises(Exception) as np_err:
        a.step(np.int64(0))
    with pytest.raises(Exception) as int_err:
        b.step(0)
    assert type(np_err.value) is type(int_err.value) and str(np_err.value) == str(int_err.value)
    g = Game(seed=2)
    for bad in (np.int64(10**6), True, 1.0, "3"):
        with pytest.raises(IllegalActionError):
            g.step(bad)


@pytest.mark.parametrize("trial", range(10))
def test_board_keeps_its_count_and_counted_ends(trial: int) -> None:
    """Board.place keeps total, counting_slots and spinner_in_count; they equal the answers worked out
    from the layout (count(), counted(slot) slot by slot, the spinner's 2v rule) after every play, on
    copies too."""
    rng = np.random.default_rng(300 + trial)
    rules = wide_random_rules(rng)
    game = Game(rules, seed=int(rng.integers(2**32)))
    while not game.over:
        board = game.board
        for b in (board, board.copy(), pickle.loads(pickle.dumps(board))):
            assert b.total == (b.count() if b.size else 0)
            assert b.counted_slots() == b.counting_slots == tuple(s for s in range(4) if b.counted(s))
            assert b.spinner_counts() == b.spinner_in_count == (b.spinner >= 0 and not (b.arm_len[0] and b.arm_len[1]))
        if board.size:
            assert game.events[-1].kind != "play" or game.events[-1].count == board.total
        game.step(game.legal[int(rng.integers(len(game.legal)))])


@pytest.mark.parametrize("trial", range(4))
def test_public_events_is_public_view_of_each_event(trial: int) -> None:
    """The env's info and PlayerView.events read a whole log through public_events, which writes the test
    out instead of calling public_view per event: the same events for every viewer (None: nobody's)."""
    from allfives_env.core.events import public_events, public_view

    rng = np.random.default_rng(500 + trial)
    rules = wide_random_rules(rng)
    game = Game(rules, seed=int(rng.integers(2**32)))
    while not game.over:
        game.step(game.legal[int(rng.integers(len(game.legal)))])
    hidden = 0
    for viewer in [None, *range(rules.num_players)]:
        expected = [public_view(e, viewer) for e in game.events]
        assert public_events(game.events, viewer) == expected
        assert [type(e) for e in public_events(game.events, viewer)] == [type(e) for e in expected]
        hidden += sum(a != b for a, b in zip(expected, game.events))
    assert hidden, "some draws must be hidden from someone, or the test checks nothing"
