"""The self-play league: the learner plays a mixture of baseline agents and frozen snapshots of itself.

How it works
------------
* Every ``league.snapshot_every`` steps (at the next rollout boundary) the current policy is exported to
  ``<run>/league/snapshot_<step>.npz``, the same numpy file format users load with
  ``make_agent("ppo", path=...)``, and it joins the opponents as the spec ``ppo:path=<file>``.
* The newest ``league.max_snapshots`` snapshots are in the mixture; older ones drop out (their files stay
  on disk). Snapshots play greedily (the argmax of their masked logits), so they are fixed opponents.
* Each episode draws its opponent from the mixture: the snapshots share ``league.weight`` of the
  probability evenly, the baselines share the rest in proportion to their configured weights. Before the
  first snapshot the baselines have it all. (In a 3-4 player game every other seat draws on its own.)
* The mixture is handed to every env with ``env_method("set_opponents", specs, weights)``, which every vec
  env kind answers: the single-seat env (:meth:`~allfives_env.single_seat.AllFivesSingleSeatEnv.set_opponents`)
  and the vector env behind ``vec_env: batch`` check it at once and draw from it from each game's next
  episode on, so no episode changes opponents half-way; each env's generator carries on, so runs stay
  reproducible from the seed.
* The league (the snapshot list) is saved with every checkpoint, so ``--resume`` restores it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import gymnasium as gym
import numpy as np

from allfives_env.single_seat import AllFivesSingleSeatEnv
from allfives_training.threads import one_torch_thread


def make_env(env_kwargs: Mapping[str, Any], opponents: Sequence[str], weights: Sequence[float]) -> gym.Env:
    """One training env: the single-seat env against this mixture (the league replaces it through
    ``set_opponents``) in SB3's ``Monitor`` (episode returns and lengths for the logs). Sets one torch
    thread in the process that builds it (subprocess workers)."""
    from stable_baselines3.common.monitor import Monitor

    one_torch_thread(if_imported=True)
    return Monitor(AllFivesSingleSeatEnv(opponents=list(opponents), opponent_weights=list(weights), **env_kwargs))


class League:
    """The opponent mixture: baselines with weights, plus the newest snapshots of the learner."""

    def __init__(self, baselines: Mapping[str, float], enabled: bool = False, weight: float = 0.5,
                 max_snapshots: int = 5, run_dir: Optional[Path] = None,
                 snapshots: Optional[Sequence[Mapping[str, Any]]] = None) -> None:
        self.baselines = dict(baselines)
        self.enabled = enabled
        self.weight = float(weight)
        self.max_snapshots = int(max_snapshots)
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.snapshots: list[dict[str, Any]] = [dict(s) for s in (snapshots or [])]

    def _abs(self, rel: str) -> str:
        return str(self.run_dir / rel) if self.run_dir is not None and not os.path.isabs(rel) else rel

    def active(self) -> list[dict[str, Any]]:
        """The snapshots in the mixture (the newest ``max_snapshots``)."""
        return self.snapshots[-self.max_snapshots:] if self.enabled else []

    def mixture(self) -> tuple[list[str], list[float]]:
        """Opponent specs and probabilities (summing to 1)."""
        specs = list(self.baselines)
        base = np.array([self.baselines[s] for s in specs], dtype=float)
        base = base / base.sum()
        active = self.active()
        if not active:
            return specs, [float(w) for w in base]
        share = self.weight
        weights = list(base * (1.0 - share)) + [share / len(active)] * len(active)
        specs = specs + [f"ppo:path={self._abs(s['path'])}" for s in active]
        return specs, [float(w) for w in weights]

    def add(self, step: int, path: Path) -> None:
        rel = os.path.relpath(path, self.run_dir) if self.run_dir is not None else str(path)
        self.snapshots.append({"step": int(step), "path": rel})

    def snapshot_path(self, step: int) -> Path:
        assert self.run_dir is not None
        return self.run_dir / "league" / f"snapshot_{step:010d}.npz"

    def state(self) -> dict[str, Any]:
        return {"snapshots": [dict(s) for s in self.snapshots]}

    def describe(self) -> str:
        specs, weights = self.mixture()
        return ", ".join(f"{s} {w:.2f}" for s, w in zip(specs, weights))
