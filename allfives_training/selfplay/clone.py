"""The recipe's start: the actor cloned from a search, on the search's move values and the student's own states.

Why not plain behaviour cloning: a clone trained on the search's chosen moves (the argmax) learns which move
won, not by how much, and sees only the states the teacher's own play reaches. Here each target is the
search's whole ranking, a softmax of its move values (``pimc``'s mean rollout points per legal move) at
``temperature`` points, so two nearly equal moves both keep their weight and a blunder is told from a
near miss; and after a first round on ``expert`` play, each round's states come from the student's own play
(sampling its policy), DAgger-style, so the clone is taught in the positions its own mistakes lead to.

Recording: ``decisions`` positions per round, every seat of every game played by the round's player, the
teacher asked at every decision with more than one legal move. The rounds' records are saved as they finish
(``<run>/clone/round_K.npz``, plain arrays, read back without pickle) so that a run interrupted in a later round
records only what it lacks. Training: cross-entropy of the actor's masked softmax against the targets, Adam,
``epochs`` passes per round over everything recorded so far; the share of held-out positions where the actor's
best move is the teacher's is reported.
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path
from typing import Any, Callable, Optional, cast

import numpy as np
import torch

from allfives_env.agents import PlayerView, make_agent
from allfives_env.agents.base import Analyst
from allfives_env.core.game import Game
from allfives_env.core.rules import Rules
from allfives_env.encoding import ObservationEncoder
from allfives_env.policy import NumpyPolicy, load_policy
from allfives_training.selfplay.network import SelfPlayNet, export_actor

__all__ = ["CloneRecord", "record_round", "fit_clone", "build_clone"]

HOLDOUT = 0.05
MAX_SEED = 2**31 - 1


class CloneRecord:
    """Recorded positions: observations (with action features), legal masks and the teacher's target
    distributions over the actions."""

    def __init__(self, obs: np.ndarray, masks: np.ndarray, targets: np.ndarray) -> None:
        # the targets as saved (float16): a record read back trains exactly as the one just played
        self.obs, self.masks, self.targets = obs, masks, targets.astype(np.float16).astype(np.float32)

    def __len__(self) -> int:
        return len(self.obs)

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(tmp, obs=self.obs, masks=self.masks, targets=self.targets.astype(np.float16))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, obs_size: int, num_actions: int) -> Optional["CloneRecord"]:
        """The record at ``path``, or None when it is missing, unreadable or of another shape (recorded again)."""
        try:
            with np.load(path, allow_pickle=False) as data:
                obs, masks, targets = data["obs"], data["masks"], data["targets"].astype(np.float32)
        except (OSError, ValueError, KeyError, EOFError):
            return None
        n = len(obs)
        if obs.shape != (n, obs_size) or masks.shape != (n, num_actions) or targets.shape != (n, num_actions) \
                or obs.dtype != np.float32 or masks.dtype != np.bool_ or not np.isfinite(obs).all():
            return None
        return cls(obs, masks, targets)

    @classmethod
    def join(cls, records: list["CloneRecord"]) -> "CloneRecord":
        return cls(*(np.concatenate([getattr(r, k) for r in records]) for k in ("obs", "masks", "targets")))


def soft_targets(values: list[float], temperature: float) -> np.ndarray:
    """The softmax of the search's move values at ``temperature`` points (a move the search dropped, -inf,
    gets 0)."""
    v = np.asarray(values, dtype=np.float64)
    e = np.where(np.isfinite(v), np.exp((v - v[np.isfinite(v)].max()) / temperature), 0.0)
    return e / e.sum()


def _move(policy: Optional[NumpyPolicy], expert: Any, view: PlayerView, rng: np.random.Generator,
          encoder: ObservationEncoder) -> int:
    """The round's player's move: ``expert``'s, or one sampled from the student's policy."""
    legal = view.legal
    if policy is None:
        return int(expert.act(view))
    if len(legal) == 1:
        return legal[0]
    logits = policy.forward(view.observation(encoder)[None])[0][legal].astype(np.float64)
    p = np.exp(logits - logits.max())
    return legal[int(rng.choice(len(legal), p=p / p.sum()))]


def _play(args: tuple[Any, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One worker's share of a round: seeded games until ``decisions`` positions are recorded."""
    rules_dict, player, teacher_spec, decisions, temperature, seed, obs_version = args
    rules = Rules.from_options(rules_dict)
    encoder = ObservationEncoder(rules, action_features=True, obs_version=obs_version)
    rng = np.random.default_rng(seed)
    teacher = cast(Analyst, make_agent(teacher_spec, seed=int(rng.integers(MAX_SEED))))
    policy: Optional[NumpyPolicy] = load_policy(player) if player != "expert" else None
    expert = make_agent("expert", seed=int(rng.integers(MAX_SEED)))
    obs: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    targets: list[np.ndarray] = []
    while len(obs) < decisions:
        game = Game(rules, np.random.default_rng(int(rng.integers(MAX_SEED))))
        while not game.over and len(obs) < decisions:
            view = PlayerView(game, game.current_player)
            legal = view.legal
            if len(legal) > 1:
                target = np.zeros(encoder.num_actions, dtype=np.float32)
                target[legal] = soft_targets(teacher.move_scores(view, legal), temperature)
                seen = encoder.encode(game, game.current_player)
                mask = np.zeros(encoder.num_actions, dtype=bool)
                mask[legal] = True
                obs.append(seen)
                masks.append(mask)
                targets.append(target)
            game.step(_move(policy, expert, view, rng, encoder))
    return np.array(obs, dtype=np.float32), np.array(masks), np.array(targets, dtype=np.float32)


def record_round(rules: Rules, player: str, teacher: str, decisions: int, temperature: float, seed: int,
                 processes: int = 1, obs_version: int = 1) -> CloneRecord:
    """``decisions`` positions of games played by ``player`` (``"expert"`` or a policy file, sampled), every one
    with the teacher's targets, observed under ``obs_version``; split over ``processes`` workers, each with its
    own seed from ``seed``."""
    seeds = np.random.SeedSequence(seed).generate_state(processes, np.uint32).tolist()
    shares = [decisions // processes + (k < decisions % processes) for k in range(processes)]
    jobs = [(rules.to_dict(), player, teacher, share, temperature, s, obs_version)
            for share, s in zip(shares, seeds) if share]
    if processes == 1:
        parts = [_play(job) for job in jobs]
    else:
        with mp.get_context("fork").Pool(processes) as pool:
            parts = pool.map(_play, jobs)
    return CloneRecord(*(np.concatenate([p[k] for p in parts]) for k in range(3)))


def fit_clone(net: SelfPlayNet, record: CloneRecord, epochs: int, learning_rate: float, seed: int,
              batch_size: int = 512) -> dict[str, float]:
    """Train the actor on ``record`` (cross-entropy to the soft targets); returns the held-out agreement with
    the teacher's best move and the held-out cross-entropy."""
    generator = torch.Generator().manual_seed(seed)
    n = len(record)
    order = torch.randperm(n, generator=generator)
    held = order[:max(1, int(n * HOLDOUT))]
    train = order[len(held):]
    obs, masks = torch.from_numpy(record.obs), torch.from_numpy(record.masks)
    targets = torch.from_numpy(record.targets)
    params = [p for name, p in net.named_parameters() if not name.startswith("critic.")]
    optimizer = torch.optim.Adam(params, lr=learning_rate)
    for _ in range(epochs):
        shuffled = train[torch.randperm(len(train), generator=generator)]
        for start in range(0, len(shuffled), batch_size):
            mb = shuffled[start:start + batch_size]
            loss = -(targets[mb] * net.log_probs(obs[mb], masks[mb])).sum(1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        logp = net.log_probs(obs[held], masks[held])
        agree = (logp.argmax(1) == targets[held].argmax(1)).float().mean()
        ce = -(targets[held] * logp).sum(1).mean()
    return {"agreement": float(agree), "cross_entropy": float(ce), "positions": n}


def build_clone(net: SelfPlayNet, rules: Rules, folder: Path, teacher: str, decisions: int, rounds: int,
                temperature: float, epochs: int, learning_rate: float, seed: int, processes: int,
                log: Callable[[str], None] = print) -> Path:
    """The rounds of recording and fitting (module docstring); the clone's policy file ``folder/clone.npz``.
    A round already recorded in ``folder`` is read instead of played again."""
    folder.mkdir(parents=True, exist_ok=True)
    records: list[CloneRecord] = []
    player = "expert"
    for k in range(rounds):
        path = folder / f"round_{k}.npz"
        record = CloneRecord.load(path, net.shape.obs_size, net.shape.num_actions)
        if record is None or len(record) < decisions:
            record = record_round(rules, player, teacher, decisions, temperature, seed + k, processes,
                                  net.shape.obs_version)
            record.save(path)
        records.append(record)
        figures = fit_clone(net, CloneRecord.join(records), epochs, learning_rate, seed + k)
        log(f"clone round {k + 1}/{rounds}: {figures['positions']:,} positions, held-out agreement with the teacher "
            f"{100 * figures['agreement']:.1f}%, cross-entropy {figures['cross_entropy']:.3f}")
        player = str(export_actor(net, rules, folder / f"student_{k}.npz"))
    out = export_actor(net, rules, folder / "clone.npz", metadata={"teacher": teacher, "rounds": rounds,
                                                                    "decisions_per_round": decisions})
    return out
