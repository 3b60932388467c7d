"""Decisions per second of the self-play env on the batch engine, against the single-seat vector env's learner
steps per second, in the same run.

One process pinned to one CPU, 2-player default rules, ``reward="win"``, ``episode="game"``, observations on:

* ``selfplay_decisions_per_s``: :class:`~allfives_env.selfplay.AllFivesSelfPlayEnv` (``--num-envs`` games,
  4096 by default), a uniformly random legal action for the seat to act in every game, drawn by the batch
  engine's random-legal kernel (``BatchGame.random_actions``, one stream per game) inside the timed loop. A
  decision is an action applied to a live game, with the rewards of every seat, the autoreset, the next
  observation and mask it brings; the steps of games that only start again (next-step autoreset) are not
  counted;
* ``vector_steps_per_s``: the vector env's learner steps per second with ``random`` opponents, measured as
  ``benchmarks/vector_throughput.py`` measures it (its functions, imported);
* ``ratio_vs_vector``: the first over the second.

The first call's compile time is measured apart (``first_reset_s``: building the env and its first reset,
numba cache warm).

    python benchmarks/selfplay_throughput.py --seconds 5 --json benchmarks/results/selfplay_throughput.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from allfives_env.selfplay import AllFivesSelfPlayEnv  # noqa: E402
from benchmarks.provenance import stamped, write_report  # noqa: E402
from benchmarks.throughput import pin_one_core  # noqa: E402
from benchmarks.vector_throughput import timed, vector_rate  # noqa: E402

#: decisions per second the self-play env should reach on one core
TARGET = 1_000_000


def selfplay_rate(num_envs: int, seconds: float, seed: int) -> tuple[float, float]:
    """(decisions/s, seconds to build and first reset) of the self-play env under random legal play."""
    t0 = time.perf_counter()
    env = AllFivesSelfPlayEnv(num_envs)
    env.reset(seed=seed)
    first = time.perf_counter() - t0
    streams = np.arange(num_envs, dtype=np.uint64) + np.uint64(seed)

    def step() -> int:
        batch = env.batch
        assert batch is not None  # reset built it
        waiting = env.action_masks().any(axis=1)
        actions = batch.random_actions(streams)  # -1 in a finished game: the env ignores its action
        env.step(actions)
        return int(waiting.sum())

    return timed(step, seconds), first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds per measurement")
    parser.add_argument("--num-envs", type=int, default=4096, help="games of each env")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this JSON file")
    args = parser.parse_args()
    cpu = pin_one_core()
    load = os.getloadavg()[0]
    rate, first = selfplay_rate(args.num_envs, args.seconds, args.seed)
    print(f"self-play env, {args.num_envs} games: {rate:,.0f} decisions/s (build + first reset {first:.2f} s)")
    vector, _ = vector_rate("random", args.num_envs, args.seconds, args.seed)
    print(f"vector env, random opponents, {args.num_envs} games: {vector:,.0f} learner steps/s")
    print(f"ratio self-play / vector: {rate / vector:.2f}x; target {TARGET:,} decisions/s: "
          f"{'met' if rate >= TARGET else 'NOT met'}")
    report = stamped({
        "selfplay_decisions_per_s": rate, "vector_steps_per_s": vector, "ratio_vs_vector": rate / vector,
        "first_reset_s": first, "target_decisions_per_s": TARGET, "target_met": rate >= TARGET,
        "load_at_start": round(load, 2), "num_envs": args.num_envs, "seconds": args.seconds, "pinned_cpu": cpu})
    write_report(args.json, report)


if __name__ == "__main__":
    main()
