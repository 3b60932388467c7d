"""The stable-baselines3 training config: :class:`TrainConfig`, its sections, and loading one from YAML.

A config file is a mapping of sections; anything left out takes the default declared below (one field,
one default, one docstring); the sections and settings ``allfives train-rllib`` shares are declared once in
:mod:`allfives_training.sections`. :func:`load_config` reads a file, applies ``--set`` overrides and checks it
(:mod:`allfives_training.schema`: unknown keys, wrong types and out-of-range values fail with :class:`ConfigError`
naming the file, the dotted key, the value and what is allowed, with a "did you mean" for misspelt keys),
then checks what only the whole config can tell (the seat against the players, the rollout against the
batch size, every agent spec built once). ``allfives train --print-config`` shows the resolved config;
step counts (``total_steps``, ``*.every``) are at most 10**12, seeds below 2**32.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from allfives_training.schema import (
    MAX_CLIP, MAX_EPOCHS, MAX_GRAD_CLIP, MAX_LEARNING_RATE, MAX_LOSS_WEIGHT, MAX_PROCESSES, MAX_STEPS, ConfigError,
    Section, apply_overrides, boolean, build_rules, check_agent_specs, choice, integer, load_checked, number,
    optional, read_checked, read_yaml, resolve, section, setting, text,
)
from allfives_training.sections import (
    ACTIVATIONS, CheckpointConfig, EnvConfig, EvaluationConfig, NetworkConfig, OutputConfig, check_network,
    name_setting, opponents_setting, rules_setting, seed_setting,
)
from allfives_training.run_plan import ConfigKind
from allfives_training.runs import latest_checkpoint
from allfives_training.vec_env import VEC_ENV_KINDS

__all__ = [
    "ConfigError", "TrainConfig", "SingleSeatEnvConfig", "LeagueConfig", "ImitationConfig", "PPOConfig",
    "TrainEvaluationConfig", "TrainOutputConfig", "ACTIVATIONS", "load_config", "validate_config", "config_from",
    "rollout_size", "apply_overrides", "read_yaml",
]

MAX_ENVS = 4096
MAX_SUBPROC_ENVS = 256  # vec_env: subproc starts one process per env
MAX_ROLLOUT = 10_000_000  # n_envs x ppo.n_steps: the rollout buffer holds this many observations
MAX_SEAT = 3  # 4 players at most
MAX_DECISIONS = 10**8  # imitation decisions: the recorded observations must fit in memory
MAX_IMITATION_EPOCHS = 10**6
MAX_IMITATION_BATCH = 10**7
MAX_SNAPSHOTS = 1000


@dataclass
class SingleSeatEnvConfig(EnvConfig):
    """The single-seat env the learner plays (:class:`allfives_env.single_seat.AllFivesSingleSeatEnv`): the shared
    env keys and the learner's seat and partner."""

    place_after = {"seat": "episode", "partner": "seat"}
    seat: Optional[int] = setting(None, optional(integer(0, MAX_SEAT)))
    """the learner's seat; null = random each episode"""
    partner: Optional[str] = setting(None, optional(text))
    """agent spec for the partner seat (4-player partnership)"""


@dataclass
class LeagueConfig(Section):
    """Self-play: frozen snapshots of the learner join the opponents (:mod:`allfives_training.league`)."""

    enabled: bool = setting(False, boolean)
    """add frozen snapshots of the learner to the opponents"""
    snapshot_every: int = setting(100_000, integer(1, MAX_STEPS))
    """steps between snapshots"""
    max_snapshots: int = setting(5, integer(1, MAX_SNAPSHOTS))
    """keep the newest N snapshots in the mixture"""
    weight: float = setting(0.5, number(0.0, 1.0, hi_open=True))
    """share of the opponent draws that go to snapshots (split evenly between them); baselines share the rest"""


@dataclass
class ImitationConfig(Section):
    """Warm start: clone a teacher before PPO (:mod:`allfives_training.imitation`)."""

    teacher: Optional[str] = setting(None, optional(text))
    """agent spec of the teacher (e.g. expert); null = no warm start"""
    decisions: int = setting(200_000, integer(2, MAX_DECISIONS))
    """teacher decisions recorded in the run's env and opponents"""
    epochs: int = setting(8, integer(1, MAX_IMITATION_EPOCHS))
    """passes over the recorded decisions"""
    batch_size: int = setting(1024, integer(1, MAX_IMITATION_BATCH))
    """decisions per gradient step"""
    learning_rate: float = setting(1e-3, number(0.0, MAX_LEARNING_RATE, lo_open=True))
    """Adam's learning rate while cloning, in (0, 1]"""
    value: bool = setting(True, boolean)
    """also fit the critic to the recorded returns"""
    processes: int = setting(2, integer(1, MAX_PROCESSES))
    """worker processes that play the teacher's games"""


@dataclass
class PPOConfig(Section):
    """sb3-contrib ``MaskablePPO`` hyper-parameters (passed to it by name)."""

    learning_rate: float = setting(3e-4, number(0.0, MAX_LEARNING_RATE, lo_open=True))
    """Adam's learning rate, in (0, 1]"""
    n_steps: int = setting(128, integer(1, MAX_ROLLOUT))
    """steps per env per rollout (rollout = n_envs x n_steps)"""
    batch_size: int = setting(512, integer(1, MAX_ROLLOUT))
    """minibatch size"""
    n_epochs: int = setting(4, integer(1, MAX_EPOCHS))
    """passes over each rollout"""
    gamma: float = setting(0.995, number(0.0, 1.0))
    """discount factor"""
    gae_lambda: float = setting(0.95, number(0.0, 1.0))
    """GAE's lambda"""
    clip_range: float = setting(0.2, number(0.0, MAX_CLIP, lo_open=True))
    """PPO's clipping of the probability ratio, in (0, 10]"""
    ent_coef: float = setting(0.01, number(0.0, MAX_LOSS_WEIGHT))
    """entropy bonus, in [0, 100]"""
    vf_coef: float = setting(0.5, number(0.0, MAX_LOSS_WEIGHT))
    """value loss weight, in [0, 100]"""
    max_grad_norm: float = setting(0.5, number(0.0, MAX_GRAD_CLIP, lo_open=True))
    """gradient clipping's norm, in (0, 1000]"""
    target_kl: Optional[float] = setting(None, optional(number(0.0, MAX_LOSS_WEIGHT, lo_open=True)))
    """stop an update's epochs early past this KL divergence, in (0, 100]; null = never"""
    normalize_advantage: bool = setting(True, boolean)
    """normalise each minibatch's advantages"""


@dataclass
class TrainEvaluationConfig(EvaluationConfig):
    """The shared evaluation keys, and one that only this trainer has: an evaluation before the first step."""

    place_after = {"at_start": "every"}
    at_start: bool = setting(True, boolean)
    """also evaluate the untrained policy (the curve's first point)"""


@dataclass
class TrainOutputConfig(OutputConfig):
    """Where a run writes (the shared key), and what it shows."""

    tensorboard: bool = setting(True, boolean)
    """TensorBoard logs in <run>/tb"""
    progress: bool = setting(True, boolean)
    """a progress bar on stderr"""
    plot: bool = setting(True, boolean)
    """learning_curve.png at the end (needs matplotlib)"""


@dataclass
class TrainConfig(Section):
    """A MaskablePPO training run (``allfives train``)."""

    name: str = name_setting("run")
    """run name; the run directory is <output.dir>/<name> (letters, digits, . _ - +, up to 100 characters)"""
    seed: int = seed_setting()
    """seeds torch, the envs, and the evaluation deals"""
    total_steps: int = setting(300_000, integer(1, MAX_STEPS))
    """learner env steps (decisions) to train for"""
    n_envs: int = setting(32, integer(1, MAX_ENVS))
    """parallel envs (n_envs x ppo.n_steps at most 10,000,000)"""
    vec_env: str = setting("batch", choice(*VEC_ENV_KINDS))
    """batch: the n_envs games in one compiled batch in the training process, opponents random/greedy/expert/
    policy files only (allfives_training/batch_vec_env.py) | subproc: a process per env (n_envs <= 256) | dummy:
    the envs one after another in the training process (allfives_training/vec_env.py)"""
    workers: int = setting(2, integer(1, MAX_PROCESSES))
    """read and not used: no vec env kind takes a worker count (subproc starts one process per env, batch and
    dummy none); accepted so that the config.yaml of every run, which lists it, still loads on --resume"""
    rules: dict[str, Any] = rules_setting()
    """any rules option of allfives_env.core.Rules"""
    env: SingleSeatEnvConfig = section(SingleSeatEnvConfig)
    """the single-seat env the learner plays: reward, episode, seat, partner, action features"""
    opponents: dict[str, float] = opponents_setting({"random": 1.0, "greedy": 1.0})
    """agent spec -> mixture weight (or a list of specs, or a list of {agent: spec, weight: w}); drawn afresh
    every episode; at most 100 specs, weights finite in [0, 1e9]"""
    league: LeagueConfig = section(LeagueConfig)
    """frozen snapshots of the learner among the opponents (off by default)"""
    imitation: ImitationConfig = section(ImitationConfig)
    """the warm start: clone a teacher before PPO (off by default)"""
    network: NetworkConfig = section(NetworkConfig)
    """layer sizes and activation of the actor and the critic"""
    ppo: PPOConfig = section(PPOConfig)
    """MaskablePPO's hyper-parameters"""
    evaluation: TrainEvaluationConfig = section(TrainEvaluationConfig)
    """when, how long and against whom the policy is evaluated"""
    checkpoint: CheckpointConfig = section(CheckpointConfig)
    """how often checkpoints are taken and how many are kept"""
    output: TrainOutputConfig = section(TrainOutputConfig)
    """the run directory's parent, TensorBoard, progress bar and plot"""


def rollout_size(cfg: TrainConfig) -> int:
    """Env steps per PPO rollout: ``n_envs * ppo.n_steps``."""
    return int(cfg.n_envs) * int(cfg.ppo.n_steps)


def _check_combinations(cfg: TrainConfig, rules: Any, where: str) -> None:
    """What no single key can tell: values that do not fit together, or only fail mid-run."""
    seat, net, ppo = cfg.env.seat, cfg.network, cfg.ppo
    if seat is not None and seat >= rules.num_players:
        raise ConfigError(f"{where}env.seat: must be null or 0..{rules.num_players - 1} for "
                          f"{rules.num_players} players, got {seat}")
    check_network(net, cfg.env.action_features, where)
    if cfg.env.partner is not None and not rules.partnership:
        raise ConfigError(f"{where}env.partner: only a partnership game has a partner seat "
                          f"(rules.num_players: 4), got partner {cfg.env.partner!r}")
    rollout = rollout_size(cfg)
    if rollout > MAX_ROLLOUT:
        raise ConfigError(f"{where}n_envs x ppo.n_steps: {cfg.n_envs} x {ppo.n_steps} = {rollout:,} steps a "
                          f"rollout; give at most {MAX_ROLLOUT:,}")
    if cfg.vec_env == "subproc" and cfg.n_envs > MAX_SUBPROC_ENVS:
        raise ConfigError(f"{where}n_envs: {cfg.n_envs} with vec_env: subproc would start one process per env; "
                          f"give at most {MAX_SUBPROC_ENVS}, or vec_env: batch or dummy (in the training process)")
    if cfg.vec_env == "batch":
        _check_batch_opponents(cfg, where)
    if ppo.batch_size < 2 and ppo.normalize_advantage:
        raise ConfigError(f"{where}ppo.batch_size: 1 with ppo.normalize_advantage: true divides each minibatch's "
                          "advantages by their standard deviation, which one sample does not have (nan); give at "
                          "least 2, or normalize_advantage: false")
    if ppo.batch_size > rollout:
        raise ConfigError(f"{where}ppo.batch_size: {ppo.batch_size} is more than a rollout "
                          f"(n_envs x ppo.n_steps = {rollout}); give at most {rollout}")
    if cfg.checkpoint.every < rollout:
        raise ConfigError(f"{where}checkpoint.every: {cfg.checkpoint.every} is shorter than a rollout "
                          f"(n_envs x ppo.n_steps = {rollout}); checkpoints are taken between rollouts, give "
                          f"at least {rollout}")


def _check_batch_opponents(cfg: TrainConfig, where: str) -> None:
    """vec_env: batch plays only the agents registered with a batch twin: fail now, not at the first rollout."""
    from allfives_env.batch_opponents import batch_spec_problem

    keys = [("opponents", s) for s in cfg.opponents] + ([("env.partner", cfg.env.partner)] if cfg.env.partner else [])
    for key, spec in keys:
        problem = batch_spec_problem(spec)
        if problem is not None:
            raise ConfigError(f"{where}{key}: {problem}")


def validate_config(raw: Optional[Mapping[str, Any]], source: str = "") -> TrainConfig:
    """Merge ``raw`` over the defaults of :class:`TrainConfig`, check everything, and return it.

    Rules options, agent specs (built once with ``make_agent``) and the policy files they name are
    checked too, so a bad config fails here and not minutes into a run.
    """
    where = f"{source}: " if source else ""
    cfg = resolve(TrainConfig, raw, where)
    rules = build_rules(cfg.rules, where)
    _check_combinations(cfg, rules, where)
    specs = [("opponents", s) for s in cfg.opponents] + [("evaluation.baselines", s)
                                                         for s in cfg.evaluation.baselines]
    if cfg.env.partner is not None:
        specs.append(("env.partner", cfg.env.partner))
    if cfg.imitation.teacher is not None:
        specs.append(("imitation.teacher", cfg.imitation.teacher))
    check_agent_specs(specs, rules, where)
    return cfg


#: How ``allfives train`` reads its configs and finds a run's newest checkpoint (:mod:`.run_plan`).
TRAIN_RUNS = ConfigKind(validate_config, latest_checkpoint,
                        missing_hint=" (the configs ship in configs/, e.g. configs/default.yaml)")


def load_config(path: Union[str, Path], overrides: Optional[list[str]] = None) -> TrainConfig:
    """Read a YAML config, apply ``--set`` overrides and validate it."""
    return load_checked(path, overrides, validate_config, TRAIN_RUNS.missing_hint)


def config_from(config: Any, overrides: Any = ()) -> TrainConfig:
    """A checked config from a file path, a raw mapping (named ``config`` in errors) or a
    :class:`TrainConfig` (checked again, as its mapping), with ``--set`` overrides."""
    return read_checked(config, overrides, validate_config, TRAIN_RUNS.missing_hint)
