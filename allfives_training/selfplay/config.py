"""The self-play recipe's config (``configs/selfplay_2p.yaml``): typed sections checked key by key with the
training package's schema (:mod:`allfives_training.schema`), the shared sections where the meaning is the
same (evaluation, checkpoints, output), and its own where the recipe differs (a self-play batch, a critic that
sees every hand, shaping towards wins, a league drawn per game).

Its unit of time is the *update* (one rollout of ``env.num_envs`` games x ``env.steps`` steps, then PPO):
``evaluation.every``, ``checkpoint.every`` and ``league.snapshot_every`` count updates, so a resumed run
evaluates, checkpoints and snapshots at exactly the updates an uninterrupted one does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from allfives_env.core.outcome import REWARD_MODES
from allfives_training.schema import (
    MAX_PROCESSES, ConfigError, Section, boolean, build_rules, check_agent_specs, choice, integer, load_checked,
    number, optional, path_text, read_checked, resolve, section, setting, text,
)
from allfives_training.sections import (
    CheckpointConfig, EvaluationConfig, OutputConfig, name_setting, opponents_setting, rules_setting, seed_setting,
)

__all__ = ["SelfPlayConfig", "load_selfplay_config", "selfplay_config_from", "validate_selfplay_config"]

#: Games of the self-play batch: its rollout is held in memory (about 6 kB an observation).
MAX_SELFPLAY_GAMES = 1 << 16
MAX_ROLLOUT_STEPS = 1 << 20
MAX_UPDATES = 10**9


@dataclass
class SelfPlayEnvConfig(Section):
    """The self-play batch: every seat of every game is played by the learner or a league opponent."""

    num_envs: int = setting(256, integer(1, MAX_SELFPLAY_GAMES))
    """games stepped together (1..65536)"""
    steps: int = setting(32, integer(1, MAX_ROLLOUT_STEPS))
    """steps of every game per rollout; a rollout is num_envs x steps decisions, not all the learner's"""
    reward: str = setting("win", choice(*REWARD_MODES))
    """win (+1/-1 at the game's end) | points (score changes / target)"""
    shaping: str = setting("win_potential", choice("win_potential", "none"))
    """win_potential: add each seat's change in its side's chance to win (allfives_training/win_potential.py)
    to its rewards, so points count as progress towards the target; none: the reward alone"""
    potential_games: int = setting(4000, integer(1, 10**6))
    """expert games that measure the win table (built once per run, saved in <run>/win_table.json)"""
    obs_version: int = setting(1, integer(1, 2))
    """the observation layout the actor reads: 1, or 2 with the race pieces (fives each side needs, pips left,
    the end-of-hand bonus, each other seat's last turns; docs/observations.md); the policy file records it"""


@dataclass
class SelfPlayNetworkConfig(Section):
    """The actor (position MLP and shared placement scorer, exported to a numpy policy) and the critic."""

    hidden: int = setting(128, integer(1, 4096))
    """units of each of the two hidden layers of the actor's trunk and of the critic"""
    scorer_hidden: int = setting(32, integer(1, 4096))
    """units of the placement scorer's hidden layer"""
    critic: str = setting("full", choice("full", "own"))
    """full: the critic reads every hand and the boneyard (training only; the actor never sees them); own: the
    seat's own observation"""
    score_gain: float = setting(1.0, number(0.0, 100.0))
    """the logits layer's starting weight from each placement's score to its own logit"""
    scorer_context: bool = setting(False, boolean)
    """the placement scorer also reads the trunk's output (the position), not only the placement's features
    (the policy file records it; the numpy agent plays it)"""


@dataclass
class SelfPlayPPOConfig(Section):
    """Clipped PPO over each rollout's learner decisions."""

    learning_rate: float = setting(3e-4, number(0.0, 1.0, lo_open=True))
    """Adam's step size (0, 1]"""
    anneal: bool = setting(True, boolean)
    """decay the learning rate linearly over total_steps, to 1% of learning_rate"""
    gamma: float = setting(0.995, number(0.0, 1.0, lo_open=True))
    """discount per decision of the same seat (0, 1]"""
    gae_lambda: float = setting(0.95, number(0.0, 1.0))
    """GAE's lambda [0, 1]"""
    epochs: int = setting(2, integer(1, 100))
    """passes over each rollout"""
    minibatches: int = setting(4, integer(1, 4096))
    """minibatches per pass"""
    clip: float = setting(0.2, number(0.0, 10.0, lo_open=True))
    """PPO's ratio clip (and the value clip)"""
    ent_coef: float = setting(0.01, number(0.0, 100.0))
    """entropy bonus weight"""
    vf_coef: float = setting(0.5, number(0.0, 100.0))
    """value loss weight"""
    max_grad_norm: float = setting(0.5, number(0.0, 1000.0, lo_open=True))
    """gradient norm clip"""


@dataclass
class SelfPlayLeagueConfig(Section):
    """Who sits opposite the learner, drawn per game at every deal."""

    self_play: float = setting(0.5, number(0.0, 1.0))
    """share of games in which the learner plays every seat (both sides learn from the same game)"""
    opponents: dict[str, float] = opponents_setting({"expert": 1.0, "greedy": 0.25})
    """the fixed opponents of the other games and their weights (agents with a batch twin: random, greedy,
    expert, policy files)"""
    snapshots: float = setting(1.0, number(0.0, 1e9))
    """the weight of the learner's own snapshots, shared among them, next to the opponents' weights"""
    snapshot_every: int = setting(50, integer(1, MAX_UPDATES))
    """updates between snapshots of the learner (each a numpy policy file in <run>/league/)"""
    max_snapshots: int = setting(5, integer(1, 1000))
    """snapshots kept in the league (the newest)"""


@dataclass
class SelfPlayCloneConfig(Section):
    """The actor's start when ``start: clone``: a clone of a search's move values (selfplay/clone.py)."""

    teacher: str = setting("pimc-sift:min_samples=0,samples=40", text)
    """the searching agent whose move values are the targets (it needs move_scores: pimc, pimc-sift, ...)"""
    decisions: int = setting(100_000, integer(1, 10**8))
    """positions recorded per round"""
    rounds: int = setting(2, integer(1, 100))
    """rounds: the first on expert play, each later one on the student's own play"""
    temperature: float = setting(2.0, number(0.0, 1000.0, lo_open=True))
    """the targets' softmax temperature, in points"""
    epochs: int = setting(3, integer(1, 1000))
    """passes over everything recorded so far, per round"""
    learning_rate: float = setting(1e-3, number(0.0, 1.0, lo_open=True))
    """Adam's step size while cloning"""
    processes: int = setting(2, integer(1, MAX_PROCESSES))
    """worker processes recording the positions"""


@dataclass
class SelfPlayConfig(Section):
    """The self-play recipe: a run of ``total_steps`` learner decisions (see the module docstring)."""

    name: str = name_setting("selfplay")
    """the run's name: its directory is <output.dir>/<name>"""
    seed: int = seed_setting()
    """the run's seed: the same seed gives the same run, interrupted or not"""
    total_steps: int = setting(10_000_000, integer(1, 10**12))
    """learner decisions to train"""
    start: Optional[str] = setting(None, optional(path_text))
    """the actor's start: null (random weights), clone (a clone of the clone section's search, made first and
    kept in <run>/clone/), or a numpy policy file of this architecture"""
    rules: dict[str, Any] = rules_setting()
    """rules options (allfives rules-options lists them)"""
    env: SelfPlayEnvConfig = section(SelfPlayEnvConfig)
    network: SelfPlayNetworkConfig = section(SelfPlayNetworkConfig)
    ppo: SelfPlayPPOConfig = section(SelfPlayPPOConfig)
    league: SelfPlayLeagueConfig = section(SelfPlayLeagueConfig)
    clone: SelfPlayCloneConfig = section(SelfPlayCloneConfig)
    evaluation: EvaluationConfig = section(EvaluationConfig, every=100, games=200, final_games=1000,
                                           baselines=["greedy", "expert"], replays=0)
    checkpoint: CheckpointConfig = section(CheckpointConfig, every=25)
    output: OutputConfig = section(OutputConfig)


def validate_selfplay_config(raw: Any, source: str = "") -> SelfPlayConfig:
    """``raw`` (a mapping) checked: every key and value, the rules, every agent spec built once."""
    from allfives_env.batch_opponents import batch_spec_problem

    where = f"{source}: " if source else ""
    cfg = resolve(SelfPlayConfig, raw, where)
    rules = build_rules(cfg.rules, where)
    if cfg.env.num_envs * cfg.env.steps > MAX_ROLLOUT_STEPS:
        raise ConfigError(f"{where}env.num_envs x env.steps = {cfg.env.num_envs * cfg.env.steps:,}: a rollout holds "
                          f"at most {MAX_ROLLOUT_STEPS:,} steps (it is kept in memory)")
    if cfg.league.self_play < 1.0 and not any(w > 0 for w in cfg.league.opponents.values()) \
            and cfg.league.snapshots <= 0:
        raise ConfigError(f"{where}league: self_play {cfg.league.self_play} leaves games for opponents, but no "
                          "opponent and no snapshot has a weight > 0")
    for spec in cfg.league.opponents:
        problem = batch_spec_problem(spec)
        if problem:
            raise ConfigError(f"{where}league.opponents: {problem}")
    if cfg.start not in (None, "clone") and not Path(cfg.start).is_file():
        raise ConfigError(f"{where}start: {cfg.start!r} is not a file (give null, clone, or a numpy policy file)")
    check_agent_specs([("league.opponents", s) for s in cfg.league.opponents]
                      + [("evaluation.baselines", s) for s in cfg.evaluation.baselines]
                      + ([("clone.teacher", cfg.clone.teacher)] if cfg.start == "clone" else []), rules, where)
    if cfg.start == "clone":
        from allfives_env.agents import make_agent
        from allfives_env.agents.base import Analyst

        if not isinstance(make_agent(cfg.clone.teacher), Analyst):
            raise ConfigError(f"{where}clone.teacher: {cfg.clone.teacher!r} gives no move values (move_scores); "
                              "use a search agent such as pimc or pimc-sift")
    return cfg


def load_selfplay_config(path: Union[str, Path], overrides: Optional[list[str]] = None) -> SelfPlayConfig:
    """Read a YAML config, apply ``--set`` overrides and validate it."""
    return load_checked(path, overrides, validate_selfplay_config,
                        " (the recipe's config ships as configs/selfplay_2p.yaml)")


def selfplay_config_from(config: Any, overrides: Any = ()) -> SelfPlayConfig:
    """A checked config from a file path, a raw mapping or a :class:`SelfPlayConfig`, with ``--set`` overrides."""
    return read_checked(config, overrides, validate_selfplay_config)
