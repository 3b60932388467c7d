"""The config sections and settings both trainers share, declared once for ``allfives train`` and ``train-rllib``.

The stable-baselines3 config (:class:`allfives_training.config.TrainConfig`) and the RLlib one
(:class:`allfives_training.rllib.config.RLlibConfig`) both have a run name, a seed, rules, an opponent
mixture, and the sections below. Each is one class here, so a key is checked, and a bad value refused,
with the same words by both commands. Where the trainers differ, they say so without a copy: a different
default through :func:`~allfives_training.schema.section`'s ``defaults`` (RLlib's runs count iterations, not
env steps), an extra key through a subclass (only the stable-baselines3 run evaluates before its first
step, draws a progress bar, or seats a partner).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from allfives_env.core.outcome import EPISODE_MODES, REWARD_MODES
from allfives_training.schema import (
    MAX_CHECKPOINTS_KEPT, MAX_GAMES, MAX_PROCESSES, MAX_REPLAYS, MAX_SEED, MAX_STEPS, ConfigError, Section,
    agent_specs, boolean, choice, integer, layer_sizes, number, opponent_mixture, optional, rules_options, run_name,
    setting, writable_dir,
)

__all__ = ["ACTIVATIONS", "EnvConfig", "NetworkConfig", "EvaluationConfig", "CheckpointConfig", "OutputConfig",
           "check_network", "name_setting", "seed_setting", "rules_setting", "opponents_setting"]

ACTIVATIONS = ("tanh", "relu", "elu", "leaky_relu", "silu")


# ---------------------------------------------------------------------------------------------- settings
# A dataclass field belongs to one class, so the settings both configs hold are made by these functions.
def name_setting(default: str) -> Any:
    """The run name: it names the run directory ``<output.dir>/<name>``."""
    return setting(default, run_name)


def seed_setting() -> Any:
    """The run's seed (below 2**32, numpy's legacy seeding's bound)."""
    return setting(0, integer(0, MAX_SEED))


def rules_setting() -> Any:
    """The ``rules`` mapping, checked by ``Rules.from_options`` once the whole config is read."""
    return setting({}, None, convert=rules_options)


def opponents_setting(default: dict[str, float]) -> Any:
    """The opponent mixture: agent spec -> weight, in any of the forms :func:`opponent_mixture` reads."""
    return setting(default, None, convert=opponent_mixture)


# ---------------------------------------------------------------------------------------------- sections
@dataclass
class EnvConfig(Section):
    """The env the learner plays: its reward, its episodes and its observation."""

    reward: str = setting("win", choice(*REWARD_MODES))
    """win | points"""
    episode: str = setting("game", choice(*EPISODE_MODES))
    """game | hand"""
    action_features: bool = setting(False, boolean)
    """add the per-placement features slice to the observation (see allfives_env/encoding.py; slower env,
    faster learning)"""


@dataclass
class NetworkConfig(Section):
    """The actor and critic networks (separate MLPs), and the placement scorer."""

    hidden: list[int] = setting([64, 64], layer_sizes(1))
    """hidden layers of the actor and of the critic; 1 to 64 layers of 1..65536 units"""
    activation: str = setting("tanh", choice(*ACTIVATIONS))
    """tanh | relu | elu | leaky_relu | silu"""
    action_scorer: Optional[list[int]] = setting(None, optional(layer_sizes(0)))
    """hidden layers of a scorer shared by every placement's feature row (allfives_training/scorer_policy.py); needs
    env.action_features: true; [] = a linear scorer; null = none"""
    trunk_reads_features: bool = setting(True, boolean)
    """false: the actor and critic MLPs read the observation without the placements' feature rows, which
    the action scorer reads (a much cheaper update); needs action_scorer"""
    score_gain: Optional[float] = setting(1.0, optional(number(0.0, 100.0)))
    """the action head's starting weight from each placement's score to that placement's own logit (the rest
    of that block starts at 0), so the scorer steers the policy from the first step; null = the head's plain
    orthogonal start at gain 0.01, which buries the scores under the trunk (from scratch PPO then stalls below
    greedy: see the README's "Why PPO from scratch stalled"); needs action_scorer"""


@dataclass
class EvaluationConfig(Section):
    """Duplicate-deal evaluations against baselines during and after training."""

    every: int = setting(100_000, integer(0, MAX_STEPS))
    """how far apart evaluations are, in the run's unit (env steps in allfives train, iterations in
    allfives train-rllib); 0: only the final one"""
    games: int = setting(200, integer(1, MAX_GAMES))
    """games per baseline at each evaluation (whole duplicate sets)"""
    final_games: int = setting(1000, integer(1, MAX_GAMES))
    """games per baseline in the final evaluation"""
    baselines: list[str] = setting(["random", "greedy", "expert"], agent_specs)
    """agent specs to play (1 to 100; a searching one at most 10,000 samples per decision)"""
    processes: int = setting(2, integer(1, MAX_PROCESSES))
    """worker processes of each evaluation"""
    seed: int = setting(12345, integer(0, MAX_SEED))
    """the same deals at every evaluation, so the curve is comparable"""
    replays: int = setting(2, integer(0, MAX_REPLAYS))
    """games per baseline of the final evaluation saved as replays in <run>/replays/ (allfives replay F --html
    OUT.html)"""


@dataclass
class CheckpointConfig(Section):
    """Checkpoints of the run (:mod:`allfives_training.checkpoint`)."""

    every: int = setting(50_000, integer(1, MAX_STEPS))
    """how far apart checkpoints are, in the run's unit (env steps, or iterations); a killed run loses at most
    this"""
    keep: int = setting(3, integer(1, MAX_CHECKPOINTS_KEPT))
    """checkpoints kept on disk (the newest)"""


@dataclass
class OutputConfig(Section):
    """Where a run writes."""

    dir: str = setting("runs", writable_dir)
    """the folder of run directories (a directory the run can write into, or a new path under one)"""


# ---------------------------------------------------------------------------------------------- checks
def check_network(net: NetworkConfig, action_features: bool, where: str) -> None:
    """The scorer's keys that only make sense together (the same for both trainers' networks)."""
    if net.action_scorer is not None and not action_features:
        raise ConfigError(f"{where}network.action_scorer: scores the placements' feature rows, so it needs "
                          f"env.action_features: true (or action_scorer: null), got {net.action_scorer!r}")
    if net.action_scorer is None and net.score_gain not in (None, 1.0):
        raise ConfigError(f"{where}network.score_gain: is the action head's weight on the action scorer's scores, so "
                          f"it needs network.action_scorer (a list of hidden sizes), got action_scorer: null")
    if not net.trunk_reads_features and net.action_scorer is None:
        raise ConfigError(f"{where}network.trunk_reads_features: false leaves the placements' feature rows to "
                          f"the action scorer, so it needs network.action_scorer (a list of hidden sizes), "
                          f"got action_scorer: null")
