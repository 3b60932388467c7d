"""The RLlib training config (``allfives train-rllib --config configs/rllib_<name>.yaml``): :class:`RLlibConfig`.

Declared and checked like the stable-baselines3 config (:mod:`allfives_training.schema`, :mod:`allfives_training.config`):
one field, one default, one docstring; unknown keys, wrong types and out-of-range values fail with the
file, the dotted key, the value and what is allowed. Files and ``--set`` values are read and bounded
exactly as there (UTF-8, safe YAML, finite numbers, seeds below 2**32, bounded integers).

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

from allfives_env.core.outcome import EPISODE_MODES, REWARD_MODES
from allfives_training.config import ACTIVATIONS
from allfives_training.schema import (
    MAX_CHECKPOINTS_KEPT, MAX_CLIP, MAX_EPOCHS, MAX_GAMES, MAX_GRAD_CLIP, MAX_LEARNING_RATE, MAX_LOSS_WEIGHT,
    MAX_PROCESSES, MAX_REPLAYS, MAX_SEARCH_WORK, MAX_SEED, MAX_STEPS, ConfigError, Section, agent_specs, boolean,
    build_rules, check_agent_specs, choice, integer, layer_sizes, load_checked, number, read_checked,
    opponent_mixture, optional, resolve, rules_options, run_name, search_work, section, setting, writable_dir,
)

__all__ = ["RLlibConfig", "RLlibEnvConfig", "RLlibNetworkConfig", "RLlibPPOConfig", "EnvRunnersConfig",
           "RLlibEvaluationConfig", "RLlibCheckpointConfig", "RLlibOutputConfig", "load_rllib_config",
           "validate_rllib_config", "rllib_config_from", "MAX_SEARCH_WORK", "search_work", "writable_dir"]

MAX_ITERATIONS = 10**9
MAX_BATCH = 10_000_000  # env steps of a training batch
MAX_ENV_RUNNERS = 1024
MAX_ENVS_PER_RUNNER = 4096
MAX_CPUS_PER_RUNNER = 1024.0
#: who RLlib plays: every seat (self-play), one side per episode (multi-agent env), one seat per game of a batch
LEARNERS = ("all", "one_side", "one_seat")


@dataclass
class RLlibEnvConfig(Section):
    """The env: AllFives-v0's vector env of the batch engine (``learners: one_seat``) or the multi-agent env
    (:class:`allfives_training.rllib.env.AllFivesMultiAgentEnv`)."""

    reward: str = setting("points", choice(*REWARD_MODES))
    """win | points"""
    episode: str = setting("game", choice(*EPISODE_MODES))
    """game | hand"""
    action_features: bool = setting(False, boolean)
    """the per-placement features slice (allfives_env/encoding.py)"""


@dataclass
class RLlibNetworkConfig(Section):
    """The actor and critic MLPs (separate) of every module, and the placement scorer: the same networks as
    the stable-baselines3 config's ``network`` (:mod:`allfives_training.rllib.module`)."""

    hidden: list[int] = setting([128, 128], layer_sizes(1))
    """hidden layer sizes"""
    activation: str = setting("relu", choice(*ACTIVATIONS))
    """tanh | relu | elu | leaky_relu | silu"""
    action_scorer: Optional[list[int]] = setting(None, optional(layer_sizes(0)))
    """hidden layers of a scorer shared by every placement's feature row (allfives_training/scorer_policy.py); needs
    env.action_features: true; [] = a linear scorer; null = none"""
    trunk_reads_features: bool = setting(True, boolean)
    """false: the actor and critic MLPs read the observation without the placements' feature rows (the
    scorer reads them); needs action_scorer"""
    score_gain: Optional[float] = setting(1.0, optional(number(0.0, 100.0)))
    """the action head's starting weight from each placement's score to its own logit (the rest of that block
    starts at 0); null = the head's plain start at gain 0.01, which buries the scores; needs action_scorer"""


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
class RLlibEvaluationConfig(Section):
    """Duplicate-deal evaluations of every module against baselines."""

    every: int = setting(10, integer(0, MAX_STEPS))
    """iterations between evaluations (0: final only)"""
    games: int = setting(200, integer(1, MAX_GAMES))
    """games per baseline at each evaluation"""
    final_games: int = setting(1000, integer(1, MAX_GAMES))
    """games per baseline in the final evaluation"""
    baselines: list[str] = setting(["random", "greedy", "expert"], agent_specs)
    """agent specs to play (1 to 100; a searching one at most 10,000 samples per decision)"""
    processes: int = setting(2, integer(1, MAX_PROCESSES))
    """worker processes of each evaluation"""
    seed: int = setting(12345, integer(0, MAX_SEED))
    """the same deals at every evaluation"""
    replays: int = setting(2, integer(0, MAX_REPLAYS))
    """games per baseline of the final evaluation saved as replays"""


@dataclass
class RLlibCheckpointConfig(Section):
    """Checkpoints of the run (:mod:`allfives_training.checkpoint`)."""

    every: int = setting(5, integer(1, MAX_STEPS))
    """iterations between checkpoints"""
    keep: int = setting(2, integer(1, MAX_CHECKPOINTS_KEPT))
    """checkpoints kept on disk (the newest)"""


@dataclass
class RLlibOutputConfig(Section):
    """Where a run writes."""

    dir: str = setting("runs", writable_dir)
    """the folder of run directories: an existing writable directory, or a new path under one"""


@dataclass
class RLlibConfig(Section):
    """A multi-agent PPO run on Ray RLlib (``allfives train-rllib``)."""

    name: str = setting("rllib", run_name)
    """run name; the run directory is <output.dir>/<name>"""
    seed: int = setting(0, integer(0, MAX_SEED))
    """seeds RLlib and the evaluation deals"""
    iterations: int = setting(20, integer(1, MAX_ITERATIONS))
    """RLlib training iterations (each samples ppo.train_batch_size env steps, counted over all learning agents)"""
    rules: dict[str, Any] = setting({}, None, convert=rules_options)
    """any rules option of allfives_env.core.Rules"""
    env: RLlibEnvConfig = section(RLlibEnvConfig)
    """reward, episode and observation of the multi-agent env"""
    learners: str = setting("all", choice(*LEARNERS))
    """all: every seat is played by RLlib (self-play); one_side: one side per episode, the others by opponents;
    one_seat: one seat per game on the compiled batch engine (AllFives-v0's vector env), the others batch
    opponents (random, greedy, expert, policy files)"""
    policies: str = setting("shared", choice("shared", "per_team"))
    """shared: one policy for every seat; per_team: one per side"""
    opponents: dict[str, float] = setting({"random": 1.0, "greedy": 1.0, "expert": 1.0}, None,
                                          convert=opponent_mixture)
    """agent spec -> weight, the other sides' players (learners: one_side); a searching one at most 10,000
    samples per decision"""
    network: RLlibNetworkConfig = section(RLlibNetworkConfig)
    """layer sizes and activation of every module"""
    ppo: RLlibPPOConfig = section(RLlibPPOConfig)
    """RLlib PPO's hyper-parameters"""
    env_runners: EnvRunnersConfig = section(EnvRunnersConfig)
    """the sampling processes"""
    evaluation: RLlibEvaluationConfig = section(RLlibEvaluationConfig)
    """when, how long and against whom every module is evaluated"""
    checkpoint: RLlibCheckpointConfig = section(RLlibCheckpointConfig)
    """how often checkpoints are taken and how many are kept"""
    output: RLlibOutputConfig = section(RLlibOutputConfig)
    """the run directory's parent"""


def validate_rllib_config(raw: Optional[Mapping[str, Any]], source: str = "") -> RLlibConfig:
    """Merge ``raw`` over the defaults of :class:`RLlibConfig`, check everything and return it."""
    where = f"{source}: " if source else ""
    cfg = resolve(RLlibConfig, raw, where)
    rules = build_rules(cfg.rules, where)
    specs = [("opponents", s) for s in cfg.opponents] + [("evaluation.baselines", s) for s in cfg.evaluation.baselines]
    check_agent_specs(specs, rules, where)
    _check_network(cfg.network, cfg.env.action_features, where)
    if cfg.learners == "one_seat":
        _check_one_seat(cfg, where)
    ppo = cfg.ppo
    if ppo.minibatch_size > ppo.train_batch_size:
        raise ConfigError(f"{where}ppo.minibatch_size: {ppo.minibatch_size} is more than ppo.train_batch_size "
                          f"({ppo.train_batch_size}); give at most that")
    return cfg


def _check_network(net: RLlibNetworkConfig, action_features: bool, where: str) -> None:
    """The scorer's keys that only make sense together (as the stable-baselines3 config checks them)."""
    if net.action_scorer is not None and not action_features:
        raise ConfigError(f"{where}network.action_scorer: scores the placements' feature rows, so it needs "
                          f"env.action_features: true (or action_scorer: null), got {net.action_scorer!r}")
    if net.action_scorer is None and net.score_gain not in (None, 1.0):
        raise ConfigError(f"{where}network.score_gain: is the action head's weight on the action scorer's scores, "
                          "so it needs network.action_scorer (a list of hidden sizes), got action_scorer: null")
    if not net.trunk_reads_features and net.action_scorer is None:
        raise ConfigError(f"{where}network.trunk_reads_features: false leaves the placements' feature rows to the "
                          "action scorer, so it needs network.action_scorer (a list of hidden sizes), got "
                          "action_scorer: null")


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
