"""Every env front end refuses a bad shared argument with the same typed error and the same message.

The front ends: the PettingZoo env (``raw_env`` and ``env()``), the single-seat env, the vector env
(``make_vec``), the SB3 adapter over it (``vec_env: batch``), and RLlib's two envs (the multi-agent env and
the vector env's creator; skipped without the [rllib] extra). Each argument is checked by one checker
(:mod:`allfives_env.seat_setup`), so a table of bad values must give one (type, message) per row, whichever
front end took it.
"""

from __future__ import annotations

import importlib.util
import math
from typing import Any, Callable

import gymnasium
import numpy as np
import pytest

import allfives_env  # noqa: F401  (registers AllFives-v0)
from allfives_env import allfives_v0
from allfives_env.core.errors import AgentError, AllFivesError, BatchError, IllegalActionError, RulesError
from allfives_env.single_seat import AllFivesSingleSeatEnv


def _rllib_multi_agent(**kwargs: Any) -> Any:
    pytest.importorskip("ray.rllib")
    from allfives_training.rllib.env import AllFivesMultiAgentEnv

    if "opponents" in kwargs:  # the multi-agent env takes the mixture as one mapping spec -> weight
        opponents, weights = kwargs.pop("opponents"), kwargs.pop("opponent_weights", None)
        kwargs["opponents"] = opponents if weights is None else dict(zip(opponents, weights))
        kwargs["learners"] = "one_side"
    return AllFivesMultiAgentEnv(kwargs)


def _rllib_vector(**kwargs: Any) -> Any:
    pytest.importorskip("ray.rllib")
    from allfives_training.rllib.vector_env import make_vector_env

    return make_vector_env({"num_envs": 2, **kwargs})


def _sb3_batch(**kwargs: Any) -> Any:
    pytest.importorskip("stable_baselines3")
    from allfives_training.batch_vec_env import BatchSingleSeatVecEnv

    return BatchSingleSeatVecEnv(2, **kwargs)


FRONT_ENDS: dict[str, Callable[..., Any]] = {
    "raw_env": allfives_v0.raw_env,
    "env": allfives_v0.env,
    "single_seat": AllFivesSingleSeatEnv,
    "vector": lambda **kw: gymnasium.make_vec("AllFives-v0", num_envs=2, vectorization_mode="vector_entry_point", **kw),
    "sb3_batch": _sb3_batch,
    "rllib_multi_agent": _rllib_multi_agent,
    "rllib_vector": _rllib_vector,
}

#: argument -> the front ends that take it (the PettingZoo env has no opponents and no learner seat)
TAKES = {
    "reward": list(FRONT_ENDS),
    "episode": list(FRONT_ENDS),
    "action_features": list(FRONT_ENDS),
    "seat": ["single_seat", "vector", "sb3_batch", "rllib_vector"],
    "opponents": ["single_seat", "vector", "sb3_batch", "rllib_multi_agent", "rllib_vector"],
    "illegal_action": ["single_seat"],
    "illegal_reward": ["single_seat"],
}

BAD = [
    ("reward", "money"),
    ("reward", ["win"]),
    ("episode", "round"),
    ("action_features", "yes"),
    ("action_features", 1),
    ("seat", 2),
    ("seat", -1),
    ("seat", 0.5),
    ("opponents", []),
    ("opponents", 5),
    ("opponents", [3]),
    ("illegal_action", "ignore"),
    ("illegal_reward", math.nan),
]


@pytest.mark.parametrize("name,value", BAD, ids=[f"{n}={v!r}" for n, v in BAD])
def test_a_bad_argument_gets_one_typed_error_from_every_front_end(name: str, value: Any) -> None:
    refusals = {}
    for front in TAKES[name]:
        with pytest.raises(AllFivesError) as caught:
            FRONT_ENDS[front](**{name: value})
        refusals[front] = (type(caught.value), str(caught.value))
    assert len(set(refusals.values())) == 1, refusals
    kind, message = next(iter(refusals.values()))
    assert kind in (RulesError, AgentError)
    assert f"{name}=" in message or "opponent" in message, message


def test_a_bad_mixture_weight_gets_one_typed_error_from_every_front_end() -> None:
    refusals = {}
    for front in TAKES["opponents"]:
        with pytest.raises(AgentError) as caught:
            FRONT_ENDS[front](opponents=["random", "greedy"], opponent_weights=[1.0, -1.0])
        refusals[front] = str(caught.value)
    assert len(set(refusals.values())) == 1, refusals
    assert "opponent_weights=" in next(iter(refusals.values()))


def test_render_modes_are_named_by_one_checker() -> None:
    """Each env renders its own set of modes, and names it in the same words."""
    with pytest.raises(RulesError, match=r"render_mode='svg' is not allowed: choose 'ansi' or 'human' or 'rgb_array' "
                                         r"or None"):
        allfives_v0.raw_env(render_mode="svg")
    with pytest.raises(RulesError, match=r"render_mode='svg' is not allowed: choose 'ansi' or 'rgb_array' or None"):
        AllFivesSingleSeatEnv(render_mode="svg")
    with pytest.raises(RulesError, match="render_mode="):
        AllFivesSingleSeatEnv(render_mode=["ansi"])  # unhashable: refused by the checker, not a TypeError


def test_rllib_multi_agent_env_refuses_bad_rules_and_actions_with_typed_errors() -> None:
    pytest.importorskip("ray.rllib")
    from allfives_training.rllib.env import AllFivesMultiAgentEnv

    with pytest.raises(RulesError, match="rules=5"):
        AllFivesMultiAgentEnv({"rules": 5})
    env = AllFivesMultiAgentEnv({"rules": {"num_players": 2}})
    obs, _ = env.reset(seed=1)
    agent = next(iter(obs))
    before = env.raw.game.clone()
    for bad in ({agent: "x"}, {agent: 1.5}, {agent: None}, {"player_9": 0}, [0]):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    assert env.raw.game.legal == before.legal and env.raw.game.scores == before.scores
    assert env.raw.agent_selection == agent


@pytest.mark.parametrize("count", ["x", 2.5, 0, True])
def test_a_bad_number_of_games_gets_one_typed_error_from_every_batch_front_end(count: Any) -> None:
    """The vector env, the SB3 adapter and RLlib's creator all leave the count to the vector env's check
    (RLlib's creator read it with int() before: 2.5 became 2, 'x' a bare ValueError)."""
    pytest.importorskip("stable_baselines3")
    from allfives_training.batch_vec_env import BatchSingleSeatVecEnv

    makers = [lambda: gymnasium.make_vec("AllFives-v0", num_envs=count, vectorization_mode="vector_entry_point"),
              lambda: BatchSingleSeatVecEnv(count)]
    if importlib.util.find_spec("ray") is not None:
        from allfives_training.rllib.vector_env import make_vector_env

        makers.append(lambda: make_vector_env({"num_envs": count}))
    refusals = set()
    for make in makers:
        with pytest.raises(BatchError) as caught:
            make()
        refusals.add(str(caught.value))
    assert len(refusals) == 1 and "num_envs=" in refusals.pop()
