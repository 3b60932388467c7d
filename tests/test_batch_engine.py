"""The compiled batch engine against the Python core: replays verified event by event, decisions,
legal sets and scores compared step by step, determinism, errors and the cache (every rules option:
``tests/test_batch_coverage.py``)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from allfives_env.batch import BatchGame
from allfives_env.core import Deal, Game, Rules
from allfives_env.core.errors import (
    AllFivesError, BatchError, BatchIndexError, GameOverError, IllegalActionError, ReplayError, RulesError, SeedError,
)
from allfives_env.core.replay import load_replay
from allfives_env.encoding import ObservationEncoder
from helpers import same_state, wide_random_rules


def play_out(batch: BatchGame, seed: int = 0) -> None:
    """Random legal play until every game of ``batch`` is over."""
    streams = np.arange(batch.n, dtype=np.uint64) + np.uint64(seed)
    while not batch.done.all():
        batch.step(batch.random_actions(streams))


def verify_all(batch: BatchGame) -> None:
    """Every game's replay re-simulates in the core to the same end."""
    for i in range(batch.n):
        game = load_replay(batch.replay(i))
        assert game.scores == list(batch.scores[i])
        assert game.over == bool(batch.done[i])
        assert (game.winner if game.winner is not None else -1) == batch.winner[i]
        assert game.truncated == bool(batch.truncated[i])


def test_random_games_verify_through_the_core_over_many_rule_sets() -> None:
    rng = np.random.default_rng(12)
    for trial in range(16):
        rules = wide_random_rules(rng, max_pips=(6, 6, 6, 9) if trial % 8 else (12,))
        batch = BatchGame(rules, 6, seed=trial, stop_after_hand=trial % 5 == 0)
        play_out(batch, seed=trial)
        verify_all(batch)


def core_twin(rules: Rules, record: dict) -> Game:
    """A core game dealt the deals of a batch game's replay (leaders checked against the rules)."""
    deals = [Deal.from_tiles(rules, h["deal"]["hands"], h["deal"]["boneyard"], h["leader"], None, h["opening_drawer"])
             for h in record["hands"]]
    return Game(rules, 0, deals=deals, check_leaders=True, scores=record["hands"][0]["scores_before"],
                stop_after_hand=record["stop_after_hand"])


def test_decision_by_decision_the_batch_matches_the_core() -> None:
    """Masks, seats to act, scores and hands agree after every decision, on the core's deals."""
    rng = np.random.default_rng(5)
    for trial in range(8):
        rules = wide_random_rules(rng, max_pips=(6, 9))
        played = BatchGame(rules, 3, seed=100 + trial)
        play_out(played, seed=trial)
        enc = ObservationEncoder(rules)
        for i in range(played.n):
            game = core_twin(rules, played.replay(i))
            twin = BatchGame(rules, 3, seed=100 + trial)  # the same games again, stepped one decision at a time
            for action in played.decisions(i):
                mask = twin.legal_mask()[i]
                assert twin.current[i] == game.current
                assert np.array_equal(mask, enc.action_mask(game, game.current).astype(bool))
                assert list(twin.scores[i]) == game.scores and twin.hand_number[i] == game.hand_number
                acts = np.full(twin.n, -1)
                acts[i] = action
                twin.step(acts)
                game.step(int(action))
            assert game.over and twin.done[i] and list(twin.scores[i]) == game.scores


def test_deterministic_for_a_seed_and_independent_of_chunking() -> None:
    rules = Rules(num_players=3, target=100)
    a, b = BatchGame(rules, 8, seed=9), BatchGame(rules, 8, seed=9)
    chunk = BatchGame(rules, 4, seed=9, first_game=4)
    play_out(a, seed=1)
    play_out(b, seed=1)
    streams = np.arange(4, 8, dtype=np.uint64) + np.uint64(1)
    while not chunk.done.all():
        chunk.step(chunk.random_actions(streams))
    assert same_state(a.S, b.S)
    assert same_state(a.S[4:], chunk.S)
    other = BatchGame(rules, 8, seed=10)  # another seed deals other games
    assert (a.S["episode_rng"] != other.S["episode_rng"]).all()
    assert sum(a.replay(i)["hands"][0]["deal"] != other.replay(i)["hands"][0]["deal"] for i in range(8)) == 8


def test_reset_done_deals_new_episodes_from_each_games_stream() -> None:
    batch = BatchGame(Rules(target=60), 5, seed=2)
    play_out(batch)
    first = [batch.replay(i) for i in range(5)]
    restarted = batch.reset_done()
    assert restarted.all() and not batch.done.any()
    assert (batch.hand_number == 1).all() and (batch.scores == 0).all()
    play_out(batch, seed=3)
    verify_all(batch)
    assert [batch.replay(i)["hands"][0]["deal"] for i in range(5)] != [r["hands"][0]["deal"] for r in first]


def test_bad_input_gets_typed_errors_and_changes_nothing() -> None:
    with pytest.raises(RulesError):
        BatchGame("default", 2)  # type: ignore[arg-type]
    for n in (0, -1, 1.5, True, "8", 1 << 40):
        with pytest.raises(BatchError, match="n="):
            BatchGame(Rules(), n)  # type: ignore[arg-type]
    for seed in (-1, None, 2**64, 1.0, "7"):
        with pytest.raises(SeedError):
            BatchGame(Rules(), 2, seed=seed)  # type: ignore[arg-type]
    with pytest.raises(BatchError, match="record"):
        BatchGame(Rules(), 2, record="yes")  # type: ignore[arg-type]
    batch = BatchGame(Rules(), 3, seed=1)
    before = batch.S.copy()
    legal = [batch.legal_actions(i)[0] for i in range(3)]
    for bad, what in (([0, 0], "shape"), (np.array(legal, float), "dtype"), ([True, False, True], "dtype"),
                      ([legal[0], legal[1], 111], "game 2"), ([legal[0], 10**12, legal[2]], "out of range")):
        with pytest.raises(IllegalActionError, match=what):
            batch.step(bad)
        assert same_state(batch.S, before)
    with pytest.raises(BatchIndexError):
        batch.replay(3)
    with pytest.raises(BatchIndexError):
        batch.legal_actions(-4)
    play_out(batch)
    with pytest.raises(GameOverError, match="reset_done"):
        batch.step([-1, -1, -1])
    with pytest.raises(ReplayError, match="record=False"):
        BatchGame(Rules(), 2, seed=0, record=False).replay(0)
    assert issubclass(BatchIndexError, IndexError) and issubclass(BatchError, AllFivesError)


def test_minus_one_leaves_a_game_alone() -> None:
    batch = BatchGame(Rules(), 2, seed=4)
    before = batch.S[1:].copy()
    batch.step([batch.legal_actions(0)[0], -1])
    assert same_state(batch.S[1:], before) and batch.S[0]["decisions"] == 1


def test_a_second_process_loads_the_kernels_from_the_cache() -> None:
    """The first process compiles and caches; a second one finds every kernel it runs in the cache."""
    script = (
        "import numpy as np\n"
        "from allfives_env.batch import BatchGame, kernels\n"
        "from allfives_env.core import Rules\n"
        "b = BatchGame(Rules(), 4, seed=0); s = np.zeros(4, np.uint64)\n"
        "b.legal_mask(); b.step(b.random_actions(s)); b.reset_done(); b.replay(0)\n"
        "used = [kernels.start_games, kernels.step_games, kernels.fill_legal_mask, kernels.random_actions]\n"
        "print(sum(sum(f.stats.cache_hits.values()) for f in used), sum(sum(f.stats.cache_misses.values()) for f in used))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, env=env, timeout=600)
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True, env=env, timeout=600)
    hits, misses = map(int, out.stdout.split())
    assert hits >= 4 and misses == 0


def test_step_legal_checks_shape_dtype_and_range_but_trusts_legality() -> None:
    """The trusted path of the library's own agents: what the kernels index with is still checked (numba
    has no bounds checks), a refused call changes nothing, and legal actions play as step plays them."""
    rules = Rules(num_players=2)
    batch, twin = (BatchGame(rules, 6, seed=4, stop_after_hand=True) for _ in range(2))
    before = batch.S.copy()
    for bad, error in (([0] * 5, IllegalActionError), (np.zeros(6, np.float64) + 0.5, IllegalActionError),
                       (np.full(6, batch.num_actions, np.int64), IllegalActionError),
                       (np.full(6, -2, np.int64), IllegalActionError)):
        with pytest.raises(error):
            batch.step_legal(bad)
        assert _same_records(batch.S, before)
    states = np.arange(6, dtype=np.uint64)
    for _ in range(200):
        if batch.done.all():
            break
        acts = batch.random_actions(states)
        batch.step_legal(acts)
        twin.step(acts)
        assert _same_records(batch.S, twin.S)
    assert batch.done.all()


def _same_records(a: np.ndarray, b: np.ndarray) -> bool:
    """Every field of two batches' game records equal (a copy's alignment padding is not copied)."""
    return all(np.array_equal(a[name], b[name]) for name in a.dtype.names)
