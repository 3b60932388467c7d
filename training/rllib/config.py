"""RLlib training configs (``allfives train-rllib --config configs/rllib_<name>.yaml``), validated like the
stable-baselines3 configs (:mod:`training.config`): unknown keys, wrong types and out-of-range values fail
with the file, the dotted key, the value and what is allowed.

Schema (defaults in brackets)::

    name: str                 [rllib]      run name; the run directory is <output.dir>/<name>
    seed: int >= 0            [0]
    iterations: int >= 1      [20]         RLlib training iterations (each samples ppo.train_batch_size
                                           env steps, counted over all learning agents)
    rules: mapping            [{}]         any rules option of allfives_env.core.Rules
    env:
      reward: str             [points]     win | points
      episode: str            [game]       game | hand
      action_features: bool   [false]      the per-placement features slice (allfives_env/encoding.py)
    learners: str             [all]        all: every seat is played by RLlib (self-play);
                                           one_side: one side per episode, the others by `opponents`
    policies: str             [shared]     shared: one policy for every seat; per_team: one per side
    opponents: mapping        [{random: 1, greedy: 1, expert: 1}]   spec -> weight (learners: one_side)
    network:
      hidden: [int, ...]      [[128, 128]] actor and critic MLPs (separate)
      activation: str         [relu]       tanh | relu | elu | leaky_relu | silu
    ppo:
      lr: float               [0.0003]
      train_batch_size: int   [8000]       env steps per iteration
      minibatch_size: int     [512]
      num_epochs: int         [4]
      gamma: float            [0.99]
      lambda: float           [0.95]
      clip_param: float       [0.2]
      entropy_coeff: float    [0.01]
      vf_loss_coeff: float    [0.5]
      grad_clip: float | null [0.5]
    env_runners:
      num_env_runners: int >= 0        [2]   sampling processes (0: sample in the driver)
      num_envs_per_env_runner: int >= 1 [8]
      num_cpus_per_env_runner: float   [1]
    evaluation:
      every: int >= 0         [10]         iterations between duplicate-deal evaluations (0: final only)
      games: int >= 1         [200]
      final_games: int >= 1   [1000]
      baselines: [spec, ...]  [[random, greedy, expert]]
      processes: int >= 1     [2]
      seed: int >= 0          [12345]
      replays: int >= 0       [2]          games per baseline of the final evaluation saved as replays
    checkpoint:
      every: int >= 1         [5]          iterations between checkpoints
      keep: int >= 1          [2]
    output:
      dir: str                [runs]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional, Union

from training.config import (
    ACTIVATIONS, ConfigError, _bool, _choice, _hidden, _int, _name, _num, _optional, _specs, _str, apply_overrides,
    resolve_sections,
)

__all__ = ["RLLIB_DEFAULTS", "load_rllib_config", "validate_rllib_config"]

RLLIB_DEFAULTS: dict[str, Any] = {
    "name": "rllib",
    "seed": 0,
    "iterations": 20,
    "rules": {},
    "env": {"reward": "points", "episode": "game", "action_features": False},
    "learners": "all",
    "policies": "shared",
    "opponents": {"random": 1.0, "greedy": 1.0, "expert": 1.0},
    "network": {"hidden": [128, 128], "activation": "relu"},
    "ppo": {"lr": 3e-4, "train_batch_size": 8000, "minibatch_size": 512, "num_epochs": 4, "gamma": 0.99,
            "lambda": 0.95, "clip_param": 0.2, "entropy_coeff": 0.01, "vf_loss_coeff": 0.5, "grad_clip": 0.5},
    "env_runners": {"num_env_runners": 2, "num_envs_per_env_runner": 8, "num_cpus_per_env_runner": 1.0},
    "evaluation": {"every": 10, "games": 200, "final_games": 1000, "baselines": ["random", "greedy", "expert"],
                   "processes": 2, "seed": 12345, "replays": 2},
    "checkpoint": {"every": 5, "keep": 2},
    "output": {"dir": "runs"},
}

RLLIB_SCHEMA: dict[str, Any] = {
    "name": _name, "seed": _int(0), "iterations": _int(1), "rules": None,
    "env": {"reward": _choice("win", "points"), "episode": _choice("game", "hand"), "action_features": _bool},
    "learners": _choice("all", "one_side"), "policies": _choice("shared", "per_team"), "opponents": None,
    "network": {"hidden": _hidden, "activation": _choice(*ACTIVATIONS)},
    "ppo": {"lr": _num(0.0, lo_open=True), "train_batch_size": _int(1), "minibatch_size": _int(1),
            "num_epochs": _int(1), "gamma": _num(0.0, 1.0), "lambda": _num(0.0, 1.0),
            "clip_param": _num(0.0, lo_open=True), "entropy_coeff": _num(0.0), "vf_loss_coeff": _num(0.0),
            "grad_clip": _optional(_num(0.0, lo_open=True))},
    "env_runners": {"num_env_runners": _int(0), "num_envs_per_env_runner": _int(1),
                    "num_cpus_per_env_runner": _num(0.0)},
    "evaluation": {"every": _int(0), "games": _int(1), "final_games": _int(1), "baselines": _specs,
                   "processes": _int(1), "seed": _int(0), "replays": _int(0)},
    "checkpoint": {"every": _int(1), "keep": _int(1)},
    "output": {"dir": _str},
}


def validate_rllib_config(raw: Optional[Mapping[str, Any]], source: str = "") -> dict[str, Any]:
    """Merge ``raw`` over :data:`RLLIB_DEFAULTS`, check everything and return the resolved config."""
    where = f"{source}: " if source else ""
    cfg, _ = resolve_sections(raw, RLLIB_DEFAULTS, RLLIB_SCHEMA, where)
    from allfives_env.agents import make_agent

    for section, specs in (("opponents", list(cfg["opponents"])), ("evaluation.baselines",
                                                                   cfg["evaluation"]["baselines"])):
        for spec in specs:
            try:
                make_agent(spec)
            except ValueError as exc:
                raise ConfigError(f"{where}{section}: {exc}") from None
    ppo = cfg["ppo"]
    if ppo["minibatch_size"] > ppo["train_batch_size"]:
        raise ConfigError(f"{where}ppo.minibatch_size: {ppo['minibatch_size']} is more than ppo.train_batch_size "
                          f"({ppo['train_batch_size']}); give at most that")
    return cfg


def load_rllib_config(path: Union[str, Path], overrides: Optional[list[str]] = None) -> dict[str, Any]:
    """Read a YAML RLlib config, apply ``--set`` overrides and validate it."""
    import yaml

    p = Path(path)
    try:
        raw = yaml.safe_load(p.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {p} does not exist (the RLlib configs ship in configs/, e.g. "
                          "configs/rllib_selfplay.yaml)") from None
    except OSError as exc:
        raise ConfigError(f"config file {p} cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{p}: not valid YAML: {exc}") from None
    return validate_rllib_config(apply_overrides(raw, list(overrides or [])), str(p))
