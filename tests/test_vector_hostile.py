"""Hostile input to the vector env (allfives_env/vector.py) and to the arguments it shares with the
single-seat env: every refusal is one of the package's typed errors, the two envs refuse the same input the
same way, and a refused call changes nothing (the env then plays on exactly like an untouched copy)."""

from __future__ import annotations

import copy
import itertools
import re
import shutil
import tracemalloc
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from allfives_env.agents.registry import make_agent
from allfives_env.batch import engine
from allfives_env.core import Rules
from allfives_env.core.errors import AgentError, BatchError
from allfives_env.policy import PolicyError, shipped_policy_path
from allfives_env.single_seat import AllFivesSingleSeatEnv
from allfives_env import vector
from allfives_env.vector import AllFivesVectorEnv, memory_needed


def _legal_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random legal action per game (0 for a game with none: it restarts at this step)."""
    return (rng.random(masks.shape) * masks).argmax(axis=1)


def _plays_on_alike(env: AllFivesVectorEnv, twin: AllFivesVectorEnv, steps: int = 25) -> None:
    """Step both envs with the same random legal actions, then reset both from their own generators:
    every return value is the same, so ``env`` is in the state ``twin`` is in."""
    rng = np.random.default_rng(11)
    for _ in range(steps):
        actions = _legal_actions(env.action_masks(), rng)
        got, want = env.step(actions), twin.step(actions)
        for a, b in zip(got[:4], want[:4]):
            np.testing.assert_array_equal(a, b)
        for key in ("action_mask", "seat", "scores", "hand"):
            np.testing.assert_array_equal(got[4][key], want[4][key])
        np.testing.assert_array_equal(env.seated, twin.seated)
    np.testing.assert_array_equal(env.reset()[0], twin.reset()[0])
    np.testing.assert_array_equal(env.seated, twin.seated)


def _single_plays_on_alike(env: AllFivesSingleSeatEnv, twin: AllFivesSingleSeatEnv, steps: int = 40) -> None:
    """The single-seat counterpart of :func:`_plays_on_alike`."""
    for _ in range(steps):
        if env.game.over:
            np.testing.assert_array_equal(env.reset()[0], twin.reset()[0])
            continue
        action = int(np.flatnonzero(env.action_masks())[0])
        got, want = env.step(action), twin.step(action)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:4] == want[1:4]


def _started(**kwargs: Any) -> AllFivesVectorEnv:
    env = AllFivesVectorEnv(8, **kwargs)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(4):
        env.step(_legal_actions(env.action_masks(), rng))
    return env


# --------------------------------------------------------------------------- a refused reset changes nothing
def test_a_refused_reset_leaves_the_vector_env_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    env = _started(opponents=["expert", "random"], reward="points")
    twin = copy.deepcopy(env)
    with monkeypatch.context() as patch:
        patch.setattr(engine, "available_memory", lambda: 0)  # the new batch is refused for its memory
        for seed in (None, 5):
            with pytest.raises(BatchError, match="memory available"):
                env.reset(seed=seed)
    _plays_on_alike(env, twin)


@pytest.mark.parametrize("damage", ["deleted", "corrupted"])
@pytest.mark.parametrize("kind", ["vector", "single"])
def test_a_policy_file_gone_after_construction_plays_on_from_memory(tmp_path: Path, kind: str,
                                                                    damage: str) -> None:
    """The opponent read its file when it joined: a reset neither reads it again nor breaks the env."""
    path = tmp_path / "snapshot.npz"
    shutil.copyfile(shipped_policy_path("ppo-2p"), path)
    spec = f"ppo:path={path}"
    if kind == "vector":
        env: Any = _started(opponents=[spec, "random"])
    else:
        env = AllFivesSingleSeatEnv(opponents=[spec, "random"])
        env.reset(seed=3)
    twin = copy.deepcopy(env)
    if damage == "deleted":
        path.unlink()
    else:
        path.write_bytes(b"PK\x03\x04 not a policy")
    for seed in (9, None):
        obs, info = env.reset(seed=seed)
        np.testing.assert_array_equal(obs, twin.reset(seed=seed)[0])
    if kind == "vector":
        _plays_on_alike(env, twin)
    else:
        _single_plays_on_alike(env, twin)


def test_a_policy_for_other_rules_is_refused_at_construction_by_both_envs() -> None:
    """Not at the first reset, where the single-seat env was left half-dealt."""
    messages = []
    for build in (lambda: AllFivesSingleSeatEnv(opponents=["ppo-2p"], num_players=3),
                  lambda: AllFivesVectorEnv(2, opponents=["ppo-2p"], num_players=3),
                  lambda: AllFivesSingleSeatEnv(opponents=["random"], partner="ppo-2p", num_players=4,
                                                partnership=True)):
        with pytest.raises(PolicyError, match="trained for num_players=2") as info:
            build()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


# -------------------------------------------------------------------------- one rule for spec parameters
REFUSED_SPECS = [
    "random:seed=5", "greedy:seed=5", "expert:seed=5", "ppo-2p:seed=1", "pimc:seed=5",
    "random:depth=2", "greedy:w_score=1", "expert:w_bogus=1", "ppo-2p:path=other.npz",
    "expert:w_score=abc", "expert:w_score=true", "expert:w_score=1e999", "ppo-2p:sample=maybe",
    "ppo-2p:temperature=0", "ppo", "ppo:path=/no/such/policy.npz",
    "expert:w_score", "expert:w_score=1,w_score=2", "expertt", "",
]


def _refusal(build: Callable[[], Any]) -> str:
    with pytest.raises(AgentError) as info:
        build()
    return str(info.value)


@pytest.mark.parametrize("spec", REFUSED_SPECS)
def test_a_bad_spec_is_refused_alike_by_the_registry_and_both_envs(spec: str) -> None:
    env = AllFivesVectorEnv(2)
    messages = {
        "registry": _refusal(lambda: make_agent(spec)),
        "single-seat env": _refusal(lambda: AllFivesSingleSeatEnv(opponents=[spec])),
        "vector env": _refusal(lambda: AllFivesVectorEnv(2, opponents=[spec])),
        "set_opponents": _refusal(lambda: env.set_opponents([spec])),
        "vector partner": _refusal(lambda: AllFivesVectorEnv(2, opponents=["random"], partner=spec,
                                                             num_players=4, partnership=True)),
    }
    assert len(set(messages.values())) == 1, messages


@pytest.mark.parametrize("spec", ["random", "expert:w_score=2,w_deny=0.5", "ppo-2p:temperature=0.5",
                                  "ppo-2p:sample=false"])
def test_a_good_spec_is_accepted_by_both_envs(spec: str) -> None:
    AllFivesSingleSeatEnv(opponents=[spec]).reset(seed=0)
    AllFivesVectorEnv(2, opponents=[spec]).reset(seed=0)


# ------------------------------------------------------------------------------------- opponent weights
@pytest.mark.parametrize("weights", [[1e308, 1e308], [1.7e308, 1.7e308], [np.float64(1e308)] * 2,
                                     np.array([1e308, 1e308]), [0.0, 0.0], [1.0, -0.0 - 1e-300]])
def test_weights_whose_sum_is_not_finite_and_positive_are_refused_by_both_envs(weights: Any) -> None:
    allowed = "finite, non-negative weight per opponent .2., with a sum that is finite .* greater than 0"
    for build in (lambda: AllFivesSingleSeatEnv(opponents=["random", "greedy"], opponent_weights=weights),
                  lambda: AllFivesVectorEnv(2, opponents=["random", "greedy"], opponent_weights=weights)):
        with pytest.raises(AgentError, match=allowed):
            build()
    env = _started(opponents=["random"])
    twin = copy.deepcopy(env)
    with pytest.raises(AgentError, match=allowed):
        env.set_opponents(["random", "greedy"], weights)
    _plays_on_alike(env, twin)


def test_huge_weights_whose_sum_is_finite_mix_evenly() -> None:
    env = AllFivesVectorEnv(200, opponents=["random", "greedy"], opponent_weights=[8e307, 8e307], seat=0)
    env.reset(seed=0)
    drawn = [env.seated_specs(i)[1] for i in range(200)]
    assert 60 < drawn.count("random") < 140 and drawn.count("random") + drawn.count("greedy") == 200
    single = AllFivesSingleSeatEnv(opponents=["random", "greedy"], opponent_weights=[8e307, 8e307])
    np.testing.assert_array_equal(single.opponent_weights, [0.5, 0.5])


# ----------------------------------------------------------------------------------------------- memory
@pytest.mark.parametrize("num_envs", [4096, 2**22])
def test_a_vector_env_too_large_for_memory_is_refused_before_anything_is_allocated(
        monkeypatch: pytest.MonkeyPatch, num_envs: int) -> None:
    available = 64 * 2**20
    monkeypatch.setattr(vector, "available_memory", lambda: available)
    big = dict(num_players=4, max_pip=12, action_features=True)
    tracemalloc.start()
    try:
        with pytest.raises(BatchError, match=r"num_envs=\d+ needs about [\d.]+ GiB .* more than the 0.1 GiB of "
                                             r"memory available: use num_envs=\d+ or fewer") as info:
            AllFivesVectorEnv(num_envs, **big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"{peak} bytes allocated before the refusal"
    fits = int(re.search(r"use num_envs=(\d+)", str(info.value)).group(1))
    rules = Rules(num_players=4, max_pip=12)
    assert memory_needed(rules, fits, True) <= available < memory_needed(rules, fits + 1, True)
    assert memory_needed(rules, 2**22, True) > 77 * 2**30  # the observation space's bounds alone are 77.5 GiB
    env = AllFivesVectorEnv(fits, **big)
    assert env.observation_space.shape == (fits, 4961)


def test_memory_needed_counts_the_engine_and_the_observations() -> None:
    rules = Rules()
    plain, recorded = memory_needed(rules, 10), memory_needed(rules, 10, record=True)
    assert recorded - plain == engine.memory_needed(rules, 10) - engine.memory_needed(rules, 10, record=False)
    assert memory_needed(rules, 10, action_features=True) > plain > engine.memory_needed(rules, 10, record=False)


# --------------------------------------------------------------------------------- set_opponents indices
GOOD_INDICES = {
    "generator": lambda: (i for i in (5, 0, 2)),
    "range": lambda: range(0, 6, 2),
    "int32 array": lambda: np.array([2, 0], dtype=np.int32),
    "uint8 array": lambda: np.array([7], dtype=np.uint8),
    "set": lambda: {1, 3},
    "one index": lambda: np.int64(4),
}


@pytest.mark.parametrize("form", sorted(GOOD_INDICES))
def test_indices_may_be_any_iterable_of_game_indices(form: str) -> None:
    env = _started(opponents=["random"])
    twin = copy.deepcopy(env)
    given = GOOD_INDICES[form]()
    as_list = [int(given)] if form == "one index" else [int(i) for i in GOOD_INDICES[form]()]
    env.set_opponents(["greedy"], indices=given)
    twin.set_opponents(["greedy"], indices=as_list)
    chosen = np.zeros(8, dtype=bool)
    chosen[as_list] = True
    greedy = env.pool.specs.index("greedy")
    assert (env.pool.weights[:, greedy] == chosen).all()
    _plays_on_alike(env, twin, steps=60)


@pytest.mark.parametrize("empty", [[], (), np.array([], dtype=np.int64), range(0), iter(())])
def test_empty_indices_name_no_game_and_change_nothing(empty: Any) -> None:
    env = _started(opponents=["random"])
    twin = copy.deepcopy(env)
    env.set_opponents(["greedy"], indices=empty)
    assert env.pool.specs == twin.pool.specs
    _plays_on_alike(env, twin)
    with pytest.raises(AgentError, match="at least one"):  # the mixture is still checked
        env.set_opponents([], indices=[])


@pytest.mark.parametrize("indices,words", [
    ([True], "holds True"), ([1.0], "holds 1.0"), (np.array([0.5]), "holds 0.5"),
    (np.array([True, False]), "holds True"), ([8], "holds 8"), ([-1], "holds -1"), ([0, 2**70], "holds"),
    ([3, 1, 3], r"names games \[3\] more than once"), ("01", "indices='01'"), (2.0, "indices=2.0"),
    ([[0, 1]], r"holds \[0, 1\]"), (np.array([[0, 1]]), r"holds \[0, 1\]"), (object(), "indices=<object"),
    (itertools.count(), "more than the 8 games"), (list(range(9)), "more than the 8 games"),
])
def test_bad_indices_are_refused_naming_the_range_and_change_nothing(indices: Any, words: str) -> None:
    env = _started(opponents=["random"])
    twin = copy.deepcopy(env)
    with pytest.raises(AgentError, match=words) as info:
        env.set_opponents(["greedy"], indices=indices)
    assert "0..7" in str(info.value)
    _plays_on_alike(env, twin)


def test_a_refused_set_opponents_leaves_the_pool_and_its_generator_as_they_were() -> None:
    """The first spec's agent would be built (and a seed drawn for it) before the second is refused."""
    env = _started(opponents=["random"])
    twin = copy.deepcopy(env)
    with pytest.raises(AgentError, match="does not exist|no such|cannot"):
        env.set_opponents(["greedy", "ppo:path=/no/such/policy.npz"], indices=[0, 1])
    assert env.pool.specs == twin.pool.specs and env.pool.weights.shape == twin.pool.weights.shape
    env.set_opponents(["expert"])
    twin.set_opponents(["expert"])
    _plays_on_alike(env, twin, steps=60)
