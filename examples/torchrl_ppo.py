"""Masked PPO self-play on All Fives with TorchRL: one file to read top to bottom and copy.

What it shows: the project's PettingZoo AEC environment (``allfives_v0.raw_env``) driven by TorchRL's own
:class:`~torchrl.envs.libs.pettingzoo.PettingZooWrapper` with ``use_mask=True``, a
:class:`~torchrl.collectors.Collector` (single process), a :class:`~torchrl.modules.ProbabilisticActor` sampling
from a :class:`~torchrl.modules.MaskedCategorical` over the env's action mask, :class:`~torchrl.objectives.value.GAE`
and :class:`~torchrl.objectives.ClipPPOLoss`. The network starts from random weights; both seats share it
(self-play). At the end the greedy policy plays ``random`` through the project's evaluation harness
(:func:`allfives_env.evaluation.evaluate`: duplicate deals, Wilson 95% interval) on evaluation seeds the
training never used, and each match-up prints one ``eval vs random`` line.

How the AEC game becomes tensors: both seats sit in one TorchRL group, ``"players"``, so every step carries
both seats' observations ``[2, obs]``, action masks ``[2, actions]`` and a ``mask`` ``[2]`` that is True for
the one seat that acts. GAE runs along time for each seat (its rewards arrive on every step, including the
opponent's moves: the ``points`` reward is the zero-sum score change); the PPO update then keeps only the
acting seat's rows, since the other seat's sampled action never reached the game.

The network: with ``action_features=True`` every legal placement carries a row of 12 numbers (points now,
the opponent's best reply, ...; see :mod:`allfives_env.encoding`). One small scorer reads each row and
adds its output to the logit of that placement, on top of an MLP over the position; this is what lets a
policy learn in minutes rather than millions of steps.

Run::

    pip install -e ".[examples]"        # or: pip install torchrl==0.14.1 tensordict==0.14.3
    python examples/torchrl_ppo.py --frames 65536 --eval-games 1000   # the README's measured run
    python examples/torchrl_ppo.py --smoke   # seconds: what CI runs

Every value is checked before the training (:func:`parse_args`): one that cannot run (``--lr nan``, ``--epochs 0``,
``--players 7``, a folder where ``--json`` wants a file) ends the run with one ``error: ...`` line naming the flag,
exit status 2; a ``--json`` file that cannot be written at the end (a full disk), with one line and exit status 1.

Randomness: deals come from the env's seeded generator (``--seed``); TorchRL samples actions and
minibatches from torch's generator, seeded once here with ``torch.manual_seed(--seed)`` (TorchRL offers
no per-call generator for these).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, NoReturn, Optional, Sequence

import numpy as np
import torch
from pettingzoo.utils import BaseWrapper
from tensordict import TensorDict
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.data import LazyTensorStorage, ReplayBuffer
from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

from allfives_env import allfives_v0
from allfives_env.agents import Agent, PlayerView, register_agent
from allfives_env.cli.options import seed_type
from allfives_env.core.errors import AgentError, AllFivesError, short_repr
from allfives_env.core.rules import Rules
from allfives_env.core.seeds import MAX_SEED
from allfives_env.encoding import ObservationEncoder
from allfives_env.evaluation import MAX_GAMES, evaluate
from allfives_env.paths import check_output

GROUP = "players"
OBS = (GROUP, "observation", "observation")  # the AEC dict observation, its action_mask moved out by TorchRL
AGENT_NAME = "torchrl-ppo"


@dataclass
class Config:
    """Every knob of a run; the command line (``--help``) is built from the same names."""

    frames: int = 65_536  # env steps collected in all (one seat acts per step)
    frames_per_batch: int = 2_048
    epochs: int = 4
    minibatch: int = 256
    lr: float = 3e-4
    gamma: float = 0.99
    lmbda: float = 0.95
    clip: float = 0.2
    entropy: float = 0.01
    hidden: int = 128
    players: int = 2
    seed: int = 0
    eval_games: int = 400
    eval_seeds: tuple[int, ...] = (1001, 2002)
    no_baseline: bool = False  # skip evaluating the untrained network first
    json: str = ""  # write the run's figures (settings, times, results per evaluation seed) to this file


SMOKE = dict(frames=256, frames_per_batch=128, epochs=1, minibatch=64, eval_games=4)


# ----------------------------------------------------------------------------------------------- the env
class _TensorInfos(BaseWrapper):
    """The env with empty ``infos``: TorchRL turns every info entry into a fixed-shape tensor, and ours
    carry the variable-length public event log (which a policy reads from the observation anyway)."""

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        return {agent: {} for agent in self.env.possible_agents}


def make_env(cfg: Config) -> tuple[PettingZooWrapper, ObservationEncoder]:
    """``raw_env`` (the docstring of :mod:`allfives_env.allfives_v0` says why training drives the raw env:
    an illegal action raises instead of silently ending the game) in one TorchRL group, action mask on;
    with the env's encoder, whose layout the observations follow (the evaluation agent encodes with it)."""
    aec = allfives_v0.raw_env(num_players=cfg.players, reward="points", action_features=True)
    env = PettingZooWrapper(_TensorInfos(aec), use_mask=True, group_map={GROUP: list(aec.possible_agents)},
                            seed=cfg.seed)
    return env, aec.encoder


# ----------------------------------------------------------------------------------------------- the nets
class PlacementLogits(nn.Module):
    """Logits = an MLP over the position + one shared scorer applied to every placement's feature row.

    The observation is ``[position | features]`` with ``features`` = (4 x tiles) rows of F numbers
    (:data:`ObservationEncoder.slices`); a draw action, where the rules have one, gets the MLP's logit only.
    """

    def __init__(self, encoder: ObservationEncoder, hidden: int) -> None:
        super().__init__()
        feats = encoder.slices["features"]
        self.position = encoder.slices["features"].start
        self.placements = 4 * encoder.T
        self.width = (feats.stop - feats.start) // self.placements
        self.num_actions = encoder.num_actions
        self.trunk = MLP(in_features=self.position, out_features=self.num_actions, num_cells=[hidden, hidden])
        self.scorer = MLP(in_features=self.width, out_features=1, num_cells=[32])
        for head in (self.trunk[-1], self.scorer[-1]):  # start near uniform (CleanRL's 0.01 policy head): the
            nn.init.orthogonal_(head.weight, gain=0.01)   # features alone would make a random net a fair player
            nn.init.zeros_(head.bias)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        rows = obs[..., self.position:].reshape(*obs.shape[:-1], self.placements, self.width)
        scores = self.scorer(rows).squeeze(-1)
        pad = self.num_actions - self.placements
        if pad:
            scores = torch.cat([scores, scores.new_zeros(*scores.shape[:-1], pad)], dim=-1)
        return self.trunk(obs[..., :self.position]) + scores


def make_modules(cfg: Config, env: PettingZooWrapper, encoder: ObservationEncoder) -> tuple[ProbabilisticActor, ValueOperator]:
    """The actor samples from the masked categorical (the env's ``action_mask``); the critic values a seat's observation."""
    logits = TensorDictModule(PlacementLogits(encoder, cfg.hidden), in_keys=[OBS], out_keys=[(GROUP, "logits")])
    actor = ProbabilisticActor(
        logits,
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[env.action_key],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        spec=env.full_action_spec[env.action_key],
    )
    critic = ValueOperator(MLP(in_features=encoder.size, out_features=1, num_cells=[cfg.hidden, cfg.hidden]),
                           in_keys=[OBS], out_keys=[(GROUP, "state_value")])
    return actor, critic


# ----------------------------------------------------------------------------------------------- training
def make_loss(cfg: Config, env: PettingZooWrapper, actor: ProbabilisticActor, critic: ValueOperator) -> tuple[ClipPPOLoss, GAE]:
    """PPO's clipped loss and GAE, both reading the group's nested keys."""
    loss = ClipPPOLoss(actor, critic, clip_epsilon=cfg.clip, entropy_coeff=cfg.entropy, normalize_advantage=True)
    loss.set_keys(action=env.action_key, reward=(GROUP, "reward"), done=(GROUP, "done"),
                  terminated=(GROUP, "terminated"), value=(GROUP, "state_value"),
                  advantage=(GROUP, "advantage"), value_target=(GROUP, "value_target"),
                  sample_log_prob=(GROUP, "action_log_prob"))
    gae = GAE(gamma=cfg.gamma, lmbda=cfg.lmbda, value_network=critic, average_gae=False)
    gae.set_keys(reward=(GROUP, "reward"), done=(GROUP, "done"), terminated=(GROUP, "terminated"),
                 value=(GROUP, "state_value"), advantage=(GROUP, "advantage"), value_target=(GROUP, "value_target"))
    return loss, gae


def acting_rows(batch: TensorDict) -> TensorDict:
    """The rows of the seat that acted at each step (``mask``), as a flat batch under the group key."""
    group = batch.get(GROUP)
    acting = group[group.get("mask")]
    return TensorDict({GROUP: acting}, batch_size=acting.batch_size)


def train(cfg: Config, baseline: bool = True, log: bool = True) -> tuple[ProbabilisticActor, ObservationEncoder]:
    """Collect self-play batches and run ``cfg.epochs`` of minibatch PPO on each; returns the actor.
    ``baseline``: first evaluate the untrained network the same way, so the final lines show what training added."""
    env, encoder = make_env(cfg)
    actor, critic = make_modules(cfg, env, encoder)
    if baseline:
        evaluate_vs_random(cfg, actor, encoder, "untrained")
    loss, gae = make_loss(cfg, env, actor, critic)
    optim = torch.optim.Adam(loss.parameters(), lr=cfg.lr)
    collector = Collector(env, actor, frames_per_batch=cfg.frames_per_batch, total_frames=cfg.frames,
                          auto_register_policy_transforms=False)  # a feed-forward policy needs no InitTracker
    buffer = ReplayBuffer(storage=LazyTensorStorage(cfg.frames_per_batch), sampler=SamplerWithoutReplacement(),
                          batch_size=cfg.minibatch)
    start, seen = time.perf_counter(), 0
    for batch in collector:
        with torch.no_grad():
            gae(batch)
        rows = acting_rows(batch)
        buffer.empty()
        buffer.extend(rows)
        for _ in range(cfg.epochs * max(1, len(rows) // cfg.minibatch)):
            out = loss(buffer.sample())
            total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
            optim.zero_grad()
            total.backward()
            nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
            optim.step()
        seen += batch.numel()
        if log:
            # self-play is zero-sum, so the mean reward says nothing; the points scored per move rise as
            # both seats learn to score (the reward is a score difference / target, on both seats' rows)
            scored = batch.get(("next", GROUP, "reward")).clamp(min=0).sum().item() * encoder.rules.target
            print(f"frames {seen:>7}  {time.perf_counter() - start:5.0f}s  points scored/move {scored / batch.numel():5.2f}"
                  f"  entropy {out['entropy'].item():.2f}  loss {total.item():+.3f}", flush=True)
    collector.shutdown()
    return actor, encoder


# ----------------------------------------------------------------------------------------------- evaluation
class TorchRLAgent(Agent):
    """The trained policy as a project :class:`Agent`: it observes its seat with the encoder it was trained
    with (the same vector the env gives) and plays the legal action of highest logit."""

    name = AGENT_NAME

    def __init__(self, seed: Optional[int] = None, *, actor: ProbabilisticActor, encoder: ObservationEncoder) -> None:
        super().__init__(seed)
        self.logits = actor.module[0].module  # TensorDictModule -> PlacementLogits
        self.encoder = encoder

    def check_rules(self, rules: Rules) -> None:
        """The harness asks before the first game: the network only fits the rules it was trained for."""
        if rules != self.encoder.rules:
            raise AgentError(f"agent {self.name!r} was trained for {self.encoder.rules}, not {rules}")

    def act(self, view: PlayerView) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        obs = torch.as_tensor(view.observation(self.encoder))
        with torch.no_grad():
            logits = self.logits(obs).numpy()
        return legal[int(np.argmax(logits[legal]))]


def evaluate_vs_random(cfg: Config, actor: ProbabilisticActor, encoder: ObservationEncoder, label: str) -> list[Any]:
    """One duplicate match-up against ``random`` per evaluation seed, through the project's harness.

    The agent is registered under :data:`AGENT_NAME` with a factory holding the trained network, so the
    harness builds it from its name like any agent (one process: the network lives in this one)."""
    register_agent(AGENT_NAME, lambda seed=None: TorchRLAgent(seed, actor=actor, encoder=encoder),
                   "the policy trained by examples/torchrl_ppo.py (this process only)")
    results = []
    for seed in cfg.eval_seeds:
        match = evaluate([AGENT_NAME, "random"], encoder.rules, games=cfg.eval_games, seed=seed, processes=1,
                         progress=False)
        low, high = match.win_rate_ci
        print(f"{label} vs random (seed {seed}, {match.games} games): win rate {match.win_rate:.1%} "
              f"[95% CI {low:.1%} - {high:.1%}]", flush=True)
        results.append(match)
    return results


# ----------------------------------------------------------------------------------------------- command line
#: The most frames one batch may hold (``--frames-per-batch``): the collector and the replay buffer keep both
#: seats' observations of every frame in memory, some 20 kB a frame, so this is some 5 GB.
MAX_BATCH = 1 << 18
POSITIVE = (lambda v: 0 < v < math.inf, "must be a finite number > 0")
#: What each number of Config may be: a test and the words that say what it allows (NaN fails every comparison).
LIMITS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "frames": (lambda v: v >= 1, "must be at least 1"),
    "frames_per_batch": (lambda v: 1 <= v <= MAX_BATCH, f"must be from 1 to {MAX_BATCH:,}"),
    "epochs": (lambda v: v >= 1, "must be at least 1"),
    "minibatch": (lambda v: v >= 1, "must be at least 1"),
    "lr": (lambda v: 0 < v <= 1, "must be in (0, 1]"),  # as a training config allows: larger steps diverge
    "gamma": (lambda v: 0 < v <= 1, "must be in (0, 1]"),
    "lmbda": (lambda v: 0 <= v <= 1, "must be in [0, 1]"),
    "clip": POSITIVE,
    "entropy": (lambda v: 0 <= v < math.inf, "must be a finite number >= 0"),
    "hidden": (lambda v: 1 <= v <= 4096, "must be from 1 to 4096"),
    "seed": (lambda v: 0 <= v <= MAX_SEED, f"must be an integer from 0 to {MAX_SEED}"),
    "eval_games": (lambda v: 1 <= v <= MAX_GAMES, f"must be from 1 to {MAX_GAMES:,}"),
}


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one ``error: ...`` line (exit 2): the flag and what it allows, not the usage."""

    def error(self, message: str) -> NoReturn:
        fail(message)


def fail(message: str, code: int = 2) -> NoReturn:
    """End the run with one line on stderr: what to change, where a traceback would send the reader to the source."""
    print("error: " + " ".join(message.split()), file=sys.stderr)
    raise SystemExit(code)


def parse_args(argv: Optional[Sequence[str]] = None) -> Config:
    """``--frames``, ``--seed``, ``--eval-games``, ``--eval-seeds``, ... and ``--smoke`` (a tiny run for CI).
    Every value is checked here, before any training: one that cannot run is one line naming the flag, exit 2."""
    defaults = Config()
    p = OneLineParser(description=__doc__.splitlines()[0])
    for name, value in vars(defaults).items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, tuple):
            p.add_argument(flag, type=seed_type, nargs="+", default=list(value))
        elif isinstance(value, bool):
            p.add_argument(flag, action="store_true")
        else:
            p.add_argument(flag, type=type(value), default=value)
    p.add_argument("--smoke", action="store_true", help=f"a tiny run for CI: {SMOKE}")
    args = vars(p.parse_args(argv))
    if args.pop("smoke"):
        args.update(SMOKE)
    cfg = Config(**{**args, "eval_seeds": tuple(args["eval_seeds"])})
    for name, (ok, allowed) in LIMITS.items():
        if not ok(getattr(cfg, name)):
            fail(f"--{name.replace('_', '-')} {short_repr(getattr(cfg, name))}: {allowed}")
    if cfg.seed in cfg.eval_seeds:
        fail(f"--eval-seeds {list(cfg.eval_seeds)} must differ from the training --seed {cfg.seed}: evaluate on "
             "fresh deals")
    if cfg.frames < cfg.frames_per_batch or cfg.minibatch > cfg.frames_per_batch:
        fail(f"need --frames >= --frames-per-batch >= --minibatch, got --frames {cfg.frames}, --frames-per-batch "
             f"{cfg.frames_per_batch} and --minibatch {cfg.minibatch}")
    try:
        Rules(num_players=cfg.players)
    except AllFivesError as exc:
        fail(f"--players {cfg.players}: {exc}")
    try:
        check_output(cfg.json, "--json")
    except OSError as exc:
        fail(str(exc))
    return cfg


def main(argv: Optional[Sequence[str]] = None) -> int:
    cfg = parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(cfg.seed)
    start, load = time.perf_counter(), os.getloadavg()[0]
    actor, encoder = train(cfg, baseline=not cfg.no_baseline)
    trained = time.perf_counter() - start
    print(f"trained {cfg.frames} frames in {trained:.0f}s", flush=True)
    results = evaluate_vs_random(cfg, actor, encoder, "eval")
    total = time.perf_counter() - start
    print(f"total wall time {total:.0f}s")
    if cfg.json:
        try:
            write_figures(cfg, results, trained, total, load, list(argv) if argv is not None else sys.argv[1:])
        except OSError as exc:  # a full disk, a folder gone since the start: one line, exit 1
            fail(f"--json {cfg.json}: could not write it: {exc.strerror or exc}", code=1)
    return 0


def write_figures(cfg: Config, results: list[Any], trained: float, total: float, load: float,
                  argv: list[str]) -> None:
    """The run's figures as JSON (``--json``): what the documentation's table is generated from."""
    import json
    import platform
    from dataclasses import asdict
    from datetime import date

    rows = [{"opponent": "random", "eval_seed": seed, "games": m.games, "win_rate": m.win_rate,
             "win_rate_lo": m.win_rate_ci[0], "win_rate_hi": m.win_rate_ci[1]}
            for seed, m in zip(cfg.eval_seeds, results)]
    figures = {"command": "python examples/torchrl_ppo.py " + " ".join(argv), "date": date.today().isoformat(),
               "machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "load_at_start": round(load, 2),
               "train_seconds": round(trained, 1), "wall_seconds": round(total, 1),
               "config": {k: v for k, v in asdict(cfg).items() if k != "json"}, "results": rows}
    with open(cfg.json, "w") as out:
        json.dump(figures, out, indent=1)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AllFivesError as exc:  # the package's errors say what was wrong and what is allowed: that line alone
        fail(str(exc))
