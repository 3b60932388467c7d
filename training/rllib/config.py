"""RLlib training configs (``allfives train-rllib --config configs/rllib_<name>.yaml``), validated like the
stable-baselines3 configs (:mod:`training.config`): unknown keys, wrong types and out-of-range values fail
with the file, the dotted key, the value and what is allowed. Files and ``--set`` values are read and
bounded exactly as there (UTF-8, safe YAML, finite numbers, seeds below 2**32, bounded integers).

Schema (defaults in brackets)::

    name: str                 [rllib]      run name; the run directory is <output.dir>/<name>
    seed: int < 2**32         [0]
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
    ACTIVATIONS, MAX_SEED, MAX_STEPS, ConfigError, agent_specs, apply_overrides, boolean, check_agent_specs, choice,
    integer, layer_sizes, number, optional, path_text, read_yaml, resolve_sections, run_name,
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
    "name": run_name, "seed": integer(0, MAX_SEED), "iterations": integer(1, 10**9), "rules": None,
    "env": {"reward": choice("win", "points"), "episode": choice("game", "hand"), "action_features": boolean},
    "learners": choice("all", "one_side"), "policies": choice("shared", "per_team"), "opponents": None,
    "network": {"hidden": layer_sizes(1), "activation": choice(*ACTIVATIONS)},
    "ppo": {"lr": number(0.0, lo_open=True), "train_batch_size": integer(1, 10_000_000),
            "minibatch_size": integer(1, 10_000_000), "num_epochs": integer(1, 10**4), "gamma": number(0.0, 1.0),
            "lambda": number(0.0, 1.0), "clip_param": number(0.0, lo_open=True), "entropy_coeff": number(0.0),
            "vf_loss_coeff": number(0.0), "grad_clip": optional(number(0.0, lo_open=True))},
    "env_runners": {"num_env_runners": integer(0, 1024), "num_envs_per_env_runner": integer(1, 4096),
                    "num_cpus_per_env_runner": number(0.0, 1024.0)},
    "evaluation": {"every": integer(0, MAX_STEPS), "games": integer(1, 10**7), "final_games": integer(1, 10**7),
                   "baselines": agent_specs, "processes": integer(1, 256), "seed": integer(0, MAX_SEED),
                   "replays": integer(0, 1000)},
    "checkpoint": {"every": integer(1, MAX_STEPS), "keep": integer(1, 10_000)},
    "output": {"dir": path_text},
}


def validate_rllib_config(raw: Optional[Mapping[str, Any]], source: str = "") -> dict[str, Any]:
    """Merge ``raw`` over :data:`RLLIB_DEFAULTS`, check everything and return the resolved config."""
    where = f"{source}: " if source else ""
    cfg, rules = resolve_sections(raw, RLLIB_DEFAULTS, RLLIB_SCHEMA, where)
    check_agent_specs([("opponents", s) for s in cfg["opponents"]]
                      + [("evaluation.baselines", s) for s in cfg["evaluation"]["baselines"]], rules, where)
    ppo = cfg["ppo"]
    if ppo["minibatch_size"] > ppo["train_batch_size"]:
        raise ConfigError(f"{where}ppo.minibatch_size: {ppo['minibatch_size']} is more than ppo.train_batch_size "
                          f"({ppo['train_batch_size']}); give at most that")
    return cfg


def load_rllib_config(path: Union[str, Path], overrides: Optional[list[str]] = None) -> dict[str, Any]:
    """Read a YAML RLlib config, apply ``--set`` overrides and validate it."""
    raw = read_yaml(path, " (the RLlib configs ship in configs/, e.g. configs/rllib_selfplay.yaml)")
    return validate_rllib_config(apply_overrides(raw, list(overrides or []), str(path)), str(path))
