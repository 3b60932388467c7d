"""Learner steps per second of the Gymnasium vector env on the batch engine, against Gymnasium's
``SyncVectorEnv`` over the one-game env, in the same run.

One process pinned to one CPU, 2-player default rules, ``reward="win"``, ``episode="game"``, uniform random
legal learner actions:

* ``vector_steps_per_s``: ``gymnasium.make_vec("AllFives-v0", num_envs=N, vectorization_mode=
  "vector_entry_point")`` (N = 4096 by default) with ``random`` opponents; a learner step is one game's
  learner decision, with every opponent reply, reward, autoreset and the next observation it brings;
* ``vector_steps_per_s_expert``: the same with ``expert`` opponents;
* ``sync_vector_steps_per_s``: ``gymnasium.make_vec(..., vectorization_mode="sync")`` (``SyncVectorEnv`` of
  the one-game env), ``random`` opponents, ``--sync-envs`` games;
* ``ratio_vs_sync``: the first over the third.

The learner's random actions cost nothing measurable next to a step: the vector env's come from the batch
engine's own random-legal kernel, the sync env's from the masks in its info. Steps of games that only
restart (Gymnasium's next-step autoreset) are not counted. The first call's compile time is measured apart
(``first_reset_s``: building the env and its first reset, numba cache warm).

    python benchmarks/vector_throughput.py --seconds 5 --json benchmarks/results/vector_throughput.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Callable

import gymnasium
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import allfives_env  # noqa: E402,F401  (registers AllFives-v0)
from benchmarks.provenance import stamped, write_report  # noqa: E402
from benchmarks.throughput import pin_one_core  # noqa: E402


def timed(step: Callable[[], int], seconds: float, warmup: float = 1.0) -> float:
    """Counted steps per second of ``step`` (it returns how many steps it made), after ``warmup`` s."""
    clock = time.perf_counter
    end = clock() + warmup
    while clock() < end:
        step()
    steps, start = 0, clock()
    while clock() - start < seconds:
        steps += step()
    return steps / (clock() - start)


def vector_rate(opponent: str, num_envs: int, seconds: float, seed: int) -> tuple[float, float]:
    """(learner steps/s, seconds to build and first reset) of the batch-engine vector env."""
    t0 = time.perf_counter()
    env = gymnasium.make_vec("AllFives-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
                             opponents=[opponent])
    env.reset(seed=seed)
    first = time.perf_counter() - t0
    streams = np.arange(num_envs, dtype=np.uint64) + np.uint64(seed)

    def step() -> int:
        waiting = env.action_masks().any(axis=1)
        actions = env.batch.random_actions(streams)
        env.step(np.where(waiting, actions, 0))
        return int(waiting.sum())

    return timed(step, seconds), first


def sync_rate(num_envs: int, seconds: float, seed: int) -> float:
    """Learner steps/s of Gymnasium's SyncVectorEnv over the one-game env (random opponents)."""
    env = gymnasium.make_vec("AllFives-v0", num_envs=num_envs, vectorization_mode="sync", opponents=["random"])
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    state = {"masks": info["action_mask"], "restart": np.zeros(num_envs, dtype=bool)}

    def step() -> int:
        masks = state["masks"]
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        _, _, term, trunc, info = env.step(actions)
        counted = int((~state["restart"]).sum())
        state["masks"], state["restart"] = info["action_mask"], term | trunc
        return counted

    return timed(step, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds per measurement")
    parser.add_argument("--num-envs", type=int, default=4096, help="games of the vector env")
    parser.add_argument("--sync-envs", type=int, default=16, help="one-game envs of the SyncVectorEnv")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this JSON file")
    args = parser.parse_args()
    cpu = pin_one_core()
    load = os.getloadavg()[0]
    fast, first = vector_rate("random", args.num_envs, args.seconds, args.seed)
    print(f"vector env, random opponents, {args.num_envs} games: {fast:,.0f} learner steps/s "
          f"(build + first reset {first:.2f} s)")
    expert, _ = vector_rate("expert", args.num_envs, args.seconds, args.seed)
    print(f"vector env, expert opponents, {args.num_envs} games: {expert:,.0f} learner steps/s")
    sync = sync_rate(args.sync_envs, args.seconds, args.seed)
    print(f"SyncVectorEnv of {args.sync_envs} one-game envs, random opponents: {sync:,.0f} learner steps/s")
    print(f"ratio vector / sync: {fast / sync:.1f}x")
    report = stamped({
        "vector_steps_per_s": fast, "vector_steps_per_s_expert": expert, "sync_vector_steps_per_s": sync,
        "ratio_vs_sync": fast / sync, "first_reset_s": first, "load_at_start": round(load, 2), "num_envs": args.num_envs,
        "sync_envs": args.sync_envs, "seconds": args.seconds, "pinned_cpu": cpu})
    write_report(args.json, report)

if __name__ == "__main__":
    main()
