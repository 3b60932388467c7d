"""Who plays each seat of each game of the self-play batch: the learner, or a league opponent.

Why a league: a policy trained only against itself can drift into habits that only it fails to punish; one
trained only against fixed opponents learns to exploit them. Each game is drawn at its deal: with probability
``self_play`` the learner plays every seat (both sides learn from the same game, partners included); else it
plays one side and every other side gets one opponent, drawn from the fixed opponents (``expert``,
``greedy``, a clone's policy file, ...) and the learner's own snapshots (numpy policy files written every
``snapshot_every`` updates; the newest ``max_snapshots`` are kept), with the configured weights.

The opponents are batch agents held by an :class:`~allfives_env.batch_opponents.OpponentPool` (the vector
env's): each kind chooses for all the games it sits in with one compiled call or one batched forward pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from allfives_env.batch import BatchGame
from allfives_env.batch_opponents import OpponentPool
from allfives_training.selfplay.config import SelfPlayLeagueConfig

__all__ = ["League", "snapshot_spec"]


def snapshot_spec(path: Path) -> str:
    """The agent spec that plays a snapshot file (the ``ppo`` agent, greedily in the batch)."""
    return f"ppo:path={path}"


class League:
    """The seating of ``n`` games under ``rules`` (see the module docstring): ``learner`` (bool ``(n, P)``), the
    seats the learner plays, and ``opponent`` (int ``(n, P)``), the pool index of the agent in each other seat
    (-1 at the learner's)."""

    def __init__(self, cfg: SelfPlayLeagueConfig, rules: Any, n: int) -> None:
        self.cfg, self.rules, self.n = cfg, rules, n
        self.players = rules.num_players
        self.side_of = np.array([rules.side_of(s) for s in range(self.players)], dtype=np.int64)
        self.sides = rules.num_sides
        self.pool = OpponentPool(rules, n)
        self.fixed = [spec for spec, weight in cfg.opponents.items() if weight > 0]
        self.snapshots: list[str] = []
        self.learner = np.ones((n, self.players), dtype=bool)
        self.opponent = np.full((n, self.players), -1, dtype=np.int64)
        self.rng = np.random.default_rng(0)

    # ------------------------------------------------------------------ the league's members
    def add_snapshot(self, path: Path) -> None:
        """Let the snapshot at ``path`` play from the next deal on; the oldest beyond ``max_snapshots`` leave
        (the games where they sit play on until their next deal)."""
        self.snapshots.append(snapshot_spec(path))
        del self.snapshots[:-self.cfg.max_snapshots]

    def restore(self, snapshots: list[str]) -> None:
        """The snapshot specs of a checkpoint (their files are in the run's league folder)."""
        self.snapshots = list(snapshots)[-self.cfg.max_snapshots:]

    def restart(self, rng: np.random.Generator) -> None:
        """A new chunk of the run: every game is seated again from ``rng`` (the chunk's generator), and the
        opponents are built again as they are first seated, each with a stream drawn from it, so a run resumed at
        a chunk's start plays that chunk exactly as an uninterrupted one does (and a chunk holds only the agents
        it seats)."""
        self.rng = rng
        self.pool = OpponentPool(self.rules, self.n)  # built afresh: a resumed run holds no agents to carry over
        self.pool.reseed(rng)
        self.seat(np.arange(self.n))

    def _mixture(self) -> tuple[list[str], np.ndarray]:
        specs = list(self.fixed)
        weights = [self.cfg.opponents[s] for s in self.fixed]
        if self.snapshots and self.cfg.snapshots > 0:
            specs += self.snapshots
            weights += [self.cfg.snapshots / len(self.snapshots)] * len(self.snapshots)
        w = np.asarray(weights, dtype=np.float64)
        return specs, w / w.sum() if w.sum() > 0 else w

    # ------------------------------------------------------------------ seating
    def seat(self, games: np.ndarray) -> None:
        """Draw the seating of ``games`` (their next episode), as the module docstring says."""
        m = len(games)
        if not m:
            return
        specs, weights = self._mixture()
        selfplay = self.rng.random(m) < self.cfg.self_play
        if not specs:
            selfplay[:] = True
        learner_side = self.rng.integers(self.sides, size=m)
        ids = np.asarray(self.pool.ids(specs), dtype=np.int64) if specs else np.zeros(0, dtype=np.int64)
        drawn = ids[self.rng.choice(len(specs), size=(m, self.sides), p=weights)] if specs else \
            np.full((m, self.sides), -1, dtype=np.int64)
        learner = (self.side_of[None, :] == learner_side[:, None]) | selfplay[:, None]
        self.learner[games] = learner
        self.opponent[games] = np.where(learner, -1, drawn[:, self.side_of])

    def act(self, batch: BatchGame, seat: np.ndarray, where: np.ndarray) -> np.ndarray:
        """int64 ``(n,)``: the opponents' moves in the games ``where`` (bool; each at an opponent's turn, its seat
        ``seat``), -1 elsewhere."""
        actions = np.full(self.n, -1, dtype=np.int64)
        if not where.any():
            return actions
        who = np.where(where, self.opponent[np.arange(self.n), seat], -1)
        for k in np.unique(who[where]).tolist():
            chosen = who == k
            actions[chosen] = self.pool.act(k, batch, chosen)[chosen]
        return actions
