"""The league's mixture reaches every vec env kind through ``env_method("set_opponents", specs, weights)``:
the single-seat env takes a new mixture from its next reset on, checked at once, and a refused call changes
nothing; the kinds a training config offers are ``batch``, ``subproc`` and ``dummy``."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from allfives_env.core.errors import AgentError, AllFivesError
from allfives_env.single_seat import AllFivesSingleSeatEnv

pytest.importorskip("stable_baselines3")

from allfives_training.league import make_env  # noqa: E402
from allfives_training.vec_env import VEC_ENV_KINDS, make_batch_vec_env, make_vec_env  # noqa: E402


def _episode(env: AllFivesSingleSeatEnv, rng: np.random.Generator) -> list[bytes]:
    """One episode of random legal learner moves: every observation, as bytes."""
    obs, _ = env.reset()
    seen = [obs.tobytes()]
    while True:
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        seen.append(obs.tobytes())
        if terminated or truncated:
            return seen


def test_set_opponents_takes_effect_at_the_next_reset() -> None:
    env = AllFivesSingleSeatEnv(opponents=["random"], num_players=3, target=60)
    env.reset(seed=1)
    playing = list(env._seated)
    env.set_opponents(["greedy", "expert"], [0.0, 1.0])
    assert env._seated == playing and env.opponent_specs == ["random"]  # this episode keeps its opponents
    env.reset()
    assert env.opponent_specs == ["greedy", "expert"]
    assert [type(a).__name__ for s, a in enumerate(env._seated) if s != env.seat] == ["ExpertAgent"] * 2


def test_a_refused_mixture_changes_nothing() -> None:
    """Bad specs and weights are refused at the call, with the vector env's message, and the env plays on as
    if the call had not been made."""
    plain, refused = (AllFivesSingleSeatEnv(opponents=["greedy"], target=60) for _ in range(2))
    plain.reset(seed=7)
    refused.reset(seed=7)
    for specs, weights in ((["nobody"], None), (["random"], [-1.0]), ([], None), (["random", 3], None)):
        with pytest.raises(AgentError):
            refused.set_opponents(specs, weights)
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    for _ in range(3):
        assert _episode(plain, rng_a) == _episode(refused, rng_b)


def test_the_generator_carries_on_through_a_new_mixture() -> None:
    """Setting the same mixture again changes no deal and no move: the env's generator goes on, so a run
    with a league stays reproducible from its seed."""
    kept, reset = (AllFivesSingleSeatEnv(opponents=["random", "greedy"], target=60) for _ in range(2))
    kept.reset(seed=3)
    reset.reset(seed=3)
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(3):
        reset.set_opponents(["random", "greedy"], [0.5, 0.5])
        assert _episode(kept, rng_a) == _episode(reset, rng_b)


@pytest.mark.parametrize("kind", ["dummy", "subproc", "batch"])
def test_every_kind_answers_the_leagues_set_opponents(kind: str) -> None:
    env_kwargs = {"target": 60}
    if kind == "batch":
        venv = make_batch_vec_env(2, env_kwargs, ["random"])
    else:
        venv = make_vec_env([functools.partial(make_env, env_kwargs, ["random"], [1.0])] * 2, kind)
    try:
        venv.seed(0)
        venv.reset()
        venv.env_method("set_opponents", ["greedy"], [1.0])
        if kind != "subproc":  # SB3's SubprocVecEnv worker dies on any error an env raises
            with pytest.raises(AgentError, match="nobody"):
                venv.env_method("set_opponents", ["nobody"], [1.0])
        venv.reset()
        assert venv.get_attr("opponent_specs") == [["greedy"], ["greedy"]]
        masks = np.stack(venv.env_method("action_masks"))
        venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))
    finally:
        venv.close()


def test_the_vec_env_kinds_are_batch_subproc_and_dummy() -> None:
    assert VEC_ENV_KINDS == ("batch", "subproc", "dummy")
    fn = functools.partial(make_env, {}, ["random"], [1.0])
    for kind in ("batched", "batch", "Dummy"):
        with pytest.raises(AllFivesError, match="vec_env kind"):
            make_vec_env([fn, fn], kind)
