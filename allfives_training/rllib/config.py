"""The RLlib training config (``allfives train-rllib --config configs/rllib_<name>.yaml``): :class:`RLlibConfig`.

Declared and checked like the stable-baselines3 config (:mod:`allfives_training.schema`,
:mod:`allfives_training.config`), one field, one default, one docstring; the sections both share (env,
network, evaluation, checkpoint, output) and the run's name, seed, rules and opponents are declared once
(:mod:`allfives_training.sections`), here with RLlib's defaults. Unknown keys, wrong types and out-of-range
values fail with the file, the dotted key, the value and what is allowed. Files and ``--set`` values are read
and bounded exactly as there (UTF-8, safe YAML, finite numbers, seeds below 2**32, bounded integers).

Every key has a sensible range, not only a type, because a run starts Ray and trains for minutes before a
nonsense value would show: the learning rate is at most 1 (``ppo.lr=1e300`` overflows float32 on the first
step), the loss weights at most 100, ``output.dir`` must be a directory the run can write into (a file or
``/dev/null`` is refused, not found out after training), and a searching baseline or opponent may search
at most :data:`MAX_SEARCH_WORK` samples per decision (``pimc:samples=100000000`` would never finish the
final evaluation). All of it is checked before Ray starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from allfives_training.schema import (
    MAX_CLIP, MAX_EPOCHS, MAX_GRAD_CLIP, MAX_LEARNING_RATE, MAX_LOSS_WEIGHT, MAX_SEARCH_WORK, ConfigError, Section,
    build_rules, check_agent_specs, choice, integer, load_checked, number, optional, read_checked, resolve,
    search_work, section, setting, writable_dir,
)
from allfives_training.sections import (
    CheckpointConfig, EnvConfig, EvaluationConfig, NetworkConfig, OutputConfig, check_network, name_setting,
    opponents_setting, rules_setting, seed_setting,
)

__all__ = ["RLlibConfig", "RLlibPPOConfig", "EnvRunnersConfig", "load_rllib_config", "validate_rllib_config",
           "rllib_config_from", "MAX_SEARCH_WORK", "search_work", "writable_dir"]

MAX_ITERATIONS = 10**9
MAX_BATCH = 10_000_000  # env steps of a training batch
MAX_ENV_RUNNERS = 1024
MAX_ENVS_PER_RUNNER = 4096
MAX_CPUS_PER_RUNNER = 1024.0
#: who RLlib plays: every seat (self-play), one side per episode (multi-agent env), one seat per game of a batch
LEARNERS = ("all", "one_side", "one_seat")


@dataclass
class RLlibPPOConfig(Section):
    """RLlib ``PPOConfig.training`` arguments (under RLlib's names)."""

    lr: float = setting(3e-4, number(0.0, MAX_LEARNING_RATE, lo_open=True))
    """learning rate, in (0, 1]"""
    train_batch_size: int = setting(8000, integer(1, MAX_BATCH))
    """env steps per iteration"""
    minibatch_size: int = setting(512, integer(1, MAX_BATCH))
    """minibatch size (at most train_batch_size)"""
    num_epochs: int = setting(4, integer(1, MAX_EPOCHS))
    """passes over each batch"""
    gamma: float = setting(0.99, number(0.0, 1.0))
    """discount factor"""
    lambda_: float = setting(0.95, number(0.0, 1.0), key="lambda")
    """GAE's lambda (the YAML key is ``lambda``)"""
    clip_param: float = setting(0.2, number(0.0, MAX_CLIP, lo_open=True))
    """PPO's clipping of the probability ratio, in (0, 10]"""
    entropy_coeff: float = setting(0.01, number(0.0, MAX_LOSS_WEIGHT))
    """entropy bonus, in [0, 100]"""
    vf_loss_coeff: float = setting(0.5, number(0.0, MAX_LOSS_WEIGHT))
    """value loss weight, in [0, 100]"""
    grad_clip: Optional[float] = setting(0.5, optional(number(0.0, MAX_GRAD_CLIP, lo_open=True)))
    """gradient clipping's norm, in (0, 1000]; null = none"""
    kl_coeff: float = setting(0.2, number(0.0, MAX_LOSS_WEIGHT))
    """RLlib's adaptive KL penalty's starting weight, in [0, 100]; 0 = no KL term (PPO's clipped loss alone, as
    stable-baselines3 trains)"""


@dataclass
class EnvRunnersConfig(Section):
    """RLlib's sampling processes."""

    num_env_runners: int = setting(2, integer(0, MAX_ENV_RUNNERS))
    """sampling processes (0: sample in the driver)"""
    num_envs_per_env_runner: int = setting(8, integer(1, MAX_ENVS_PER_RUNNER))
    """envs stepped by each (learners: one_seat: the games of its one compiled batch)"""
    num_cpus_per_env_runner: float = setting(1.0, number(0.0, MAX_CPUS_PER_RUNNER))
    """CPUs Ray reserves for each"""


@dataclass
class RLlibConfig(Section):
    """A multi-agent PPO run on Ray RLlib (``allfives train-rllib``)."""

    name: str = name_setting("rllib")
    """run name; the run directory is <output.dir>/<name>"""
    seed: int = seed_setting()
    """seeds RLlib and the evaluation deals"""
    iterations: int = setting(20, integer(1, MAX_ITERATIONS))
    """RLlib training iterations (each samples ppo.train_batch_size env steps, counted over all learning agents)"""
    rules: dict[str, Any] = rules_setting()
    """any rules option of allfives_env.core.Rules"""
    env: EnvConfig = section(EnvConfig, reward="points")
    """reward, episode and observation of the multi-agent env"""
    learners: str = setting("all", choice(*LEARNERS))
    """all: every seat is played by RLlib (self-play); one_side: one side per episode, the others by opponents;
    one_seat: one seat per game on the compiled batch engine (AllFives-v0's vector env), the others batch
    opponents (random, greedy, expert, policy files)"""
    policies: str = setting("shared", choice("shared", "per_team"))
    """shared: one policy for every seat; per_team: one per side"""
    opponents: dict[str, float] = opponents_setting({"random": 1.0, "greedy": 1.0, "expert": 1.0})
    """agent spec -> weight, the other sides' players (learners: one_side); a searching one at most 10,000
    samples per decision"""
    network: NetworkConfig = section(NetworkConfig, hidden=[128, 128], activation="relu")
    """layer sizes and activation of every module"""
    ppo: RLlibPPOConfig = section(RLlibPPOConfig)
    """RLlib PPO's hyper-parameters"""
    env_runners: EnvRunnersConfig = section(EnvRunnersConfig)
    """the sampling processes"""
    evaluation: EvaluationConfig = section(EvaluationConfig, every=10)
    """when, how long and against whom every module is evaluated"""
    checkpoint: CheckpointConfig = section(CheckpointConfig, every=5, keep=2)
    """how often checkpoints are taken and how many are kept"""
    output: OutputConfig = section(OutputConfig)
    """the run directory's parent"""


def validate_rllib_config(raw: Optional[Mapping[str, Any]], source: str = "") -> RLlibConfig:
    """Merge ``raw`` over the defaults of :class:`RLlibConfig`, check everything and return it."""
    where = f"{source}: " if source else ""
    cfg = resolve(RLlibConfig, raw, where)
    rules = build_rules(cfg.rules, where)
    specs = [("opponents", s) for s in cfg.opponents] + [("evaluation.baselines", s) for s in cfg.evaluation.baselines]
    check_agent_specs(specs, rules, where)
    check_network(cfg.network, cfg.env.action_features, where)
    if cfg.learners == "one_seat":
        _check_one_seat(cfg, where)
    ppo = cfg.ppo
    if ppo.minibatch_size > ppo.train_batch_size:
        raise ConfigError(f"{where}ppo.minibatch_size: {ppo.minibatch_size} is more than ppo.train_batch_size "
                          f"({ppo.train_batch_size}); give at most that")
    return cfg


def _check_one_seat(cfg: RLlibConfig, where: str) -> None:
    """learners: one_seat trains one module on the batch engine, against its batch opponents."""
    from allfives_env.batch_opponents import batch_spec_problem

    if cfg.policies != "shared":
        raise ConfigError(f"{where}policies: learners: one_seat trains one module (one seat per game), so it "
                          f"needs policies: shared, got {cfg.policies!r}")
    for spec in cfg.opponents:
        problem = batch_spec_problem(spec)
        if problem is not None:
            raise ConfigError(f"{where}opponents: {problem} (learners: one_seat plays the batch engine's opponents)")


#: Said when a config file is missing: where the RLlib configs are.
RLLIB_CONFIG_HINT = " (the RLlib configs ship in configs/, e.g. configs/rllib_default.yaml)"


def load_rllib_config(path: Union[str, Path], overrides: Optional[list[str]] = None) -> RLlibConfig:
    """Read a YAML RLlib config, apply ``--set`` overrides and validate it."""
    return load_checked(path, overrides, validate_rllib_config, RLLIB_CONFIG_HINT)


def rllib_config_from(config: Any, overrides: Any = ()) -> RLlibConfig:
    """A checked config from a file path, a raw mapping (named ``config`` in errors) or an
    :class:`RLlibConfig`, with ``--set`` overrides."""
    return read_checked(config, overrides, validate_rllib_config, RLLIB_CONFIG_HINT)
