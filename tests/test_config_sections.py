"""The sections and settings both training configs have are declared once (allfives_training/sections.py): the
stable-baselines3 and the RLlib config refuse a bad value of them in the same words, and differ only where
the trainers do (a default, a key only one of them has)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("yaml")

from allfives_training import sections  # noqa: E402
from allfives_training.config import TrainConfig, validate_config  # noqa: E402
from allfives_training.rllib.config import RLlibConfig, validate_rllib_config  # noqa: E402
from allfives_training.schema import ConfigError  # noqa: E402

SHARED = {"env": sections.EnvConfig, "network": sections.NetworkConfig, "evaluation": sections.EvaluationConfig,
          "checkpoint": sections.CheckpointConfig, "output": sections.OutputConfig}

#: bad values of the keys both configs have, one or more per key
BAD: list[tuple[str, Any]] = [
    ("name", "a/b"), ("seed", 2**32), ("seed", True), ("rules", 5), ("rules", {"num_players": 7}),
    ("opponents", {"random": -1}), ("opponents", []), ("opponents", {"nobody": 1}),
    ("env", {"reward": "score"}), ("env", {"episode": 1}), ("env", {"action_features": "no"}),
    ("network", {"hidden": []}), ("network", {"activation": "sigmoid"}), ("network", {"action_scorer": [8]}),
    ("network", {"score_gain": 2.0}), ("network", {"trunk_reads_features": False}),
    ("evaluation", {"every": -1}), ("evaluation", {"games": 0}), ("evaluation", {"final_games": 1.5}),
    ("evaluation", {"baselines": []}), ("evaluation", {"baselines": ["nobody"]}), ("evaluation", {"processes": 0}),
    ("evaluation", {"seed": -1}), ("evaluation", {"replays": 10**9}),
    ("checkpoint", {"every": 0}), ("checkpoint", {"keep": 0}), ("checkpoint", {"kep": 1}), ("checkpoint", "x"),
    ("output", {"dir": ""}), ("output", {"dir": "/dev/null"}),
]


def test_each_shared_section_is_one_class() -> None:
    for key, shared in SHARED.items():
        sb3, rllib = type(getattr(TrainConfig(), key)), type(getattr(RLlibConfig(), key))
        assert rllib is shared and issubclass(sb3, shared), (key, sb3, rllib)


@pytest.mark.parametrize("key, value", BAD, ids=[f"{k}={v!r}" for k, v in BAD])
def test_both_configs_refuse_a_bad_shared_value_in_the_same_words(key: str, value: Any) -> None:
    messages = []
    for validate in (validate_config, validate_rllib_config):
        with pytest.raises(ConfigError) as caught:
            validate({key: value}, "run.yaml")
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and messages[0].startswith("run.yaml: ")


def test_the_trainers_keep_their_own_defaults_also_when_a_section_is_given_in_part() -> None:
    sb3, rllib = TrainConfig(), RLlibConfig()
    assert (sb3.evaluation.every, sb3.checkpoint.every, sb3.checkpoint.keep) == (100_000, 50_000, 3)
    assert (rllib.evaluation.every, rllib.checkpoint.every, rllib.checkpoint.keep) == (10, 5, 2)
    assert (sb3.network.hidden, sb3.network.activation, sb3.env.reward) == ([64, 64], "tanh", "win")
    assert (rllib.network.hidden, rllib.network.activation, rllib.env.reward) == ([128, 128], "relu", "points")
    given = validate_rllib_config({"checkpoint": {"keep": 4}, "network": {"hidden": [8]}, "env": {"episode": "hand"}})
    assert (given.checkpoint.every, given.checkpoint.keep) == (5, 4)
    assert (given.network.hidden, given.network.activation, given.env.reward) == ([8], "relu", "points")
    given.network.hidden.append(9)  # a default is copied into each config, never shared between them
    assert RLlibConfig().network.hidden == [128, 128]


def test_only_the_stable_baselines3_run_has_its_extra_keys() -> None:
    """An evaluation before the first step, a progress bar, a seat and a partner: refused by RLlib by name."""
    for key, value in (("evaluation", {"at_start": False}), ("output", {"progress": False}), ("env", {"seat": 0})):
        assert validate_config({key: value}) is not None
        with pytest.raises(ConfigError, match=f"{key}: unknown key '{next(iter(value))}'; allowed keys"):
            validate_rllib_config({key: value})


def test_a_section_default_that_names_no_key_is_a_declaration_error() -> None:
    from allfives_training.schema import section

    with pytest.raises(TypeError, match=r"CheckpointConfig has no fields \['evry'\]"):
        section(sections.CheckpointConfig, evry=5)


def test_the_keys_a_trainer_adds_to_a_shared_section_keep_their_place() -> None:
    """``--print-config`` and a run's config.yaml list a section's keys in the order its config always had."""
    sb3 = TrainConfig().to_dict()
    assert list(sb3["env"]) == ["reward", "episode", "seat", "partner", "action_features"]
    assert list(sb3["evaluation"]) == ["every", "at_start", "games", "final_games", "baselines", "processes", "seed",
                                       "replays"]
    assert list(RLlibConfig().to_dict()["evaluation"]) == [k for k in sb3["evaluation"] if k != "at_start"]
    with pytest.raises(ConfigError, match="evaluation.at_start: must be true or false"):  # checked in that order too
        validate_config({"evaluation": {"games": 0, "at_start": 1}})
