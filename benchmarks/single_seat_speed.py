"""Steps per second of the single-seat env (``AllFives-v0``) on one core, under random legal play.

Target: at least 20k learner steps per second against ``random`` opponents. Each step is one
learner action plus everything the opponents do until the learner's next turn, an observation and a
mask; the learner's action is drawn uniformly from ``action_masks()`` with a seeded generator.

Run::

    python benchmarks/single_seat_speed.py                 # 3 s per opponent set, 2 players
    python benchmarks/single_seat_speed.py --seconds 5 --players 2 4 --opponents random greedy expert
    python benchmarks/single_seat_speed.py --action-features   # with the per-placement features slice
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Optional

import numpy as np

from allfives_env.single_seat import AllFivesSingleSeatEnv

TARGET = 20_000


def steps_per_second(opponent: str, players: int, seconds: float, seed: int = 0,
                     action_features: bool = False) -> float:
    """Learner steps per second of wall time against ``opponent`` in every other seat."""
    env = AllFivesSingleSeatEnv(opponents=[opponent], num_players=players, action_features=action_features)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(256):
            legal = env.action_masks().nonzero()[0]
            _, _, terminated, truncated, _ = env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
            if terminated or truncated:
                env.reset()
    return steps / (time.perf_counter() - start)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--players", type=int, nargs="+", default=[2])
    parser.add_argument("--opponents", nargs="+", default=["random"])
    parser.add_argument("--action-features", action="store_true",
                        help="observations with the per-placement features slice (the 20k target is for without)")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    print(f"{'opponent':<12} {'P':>2} {'steps/s':>10}  target")
    for players in args.players:
        for opponent in args.opponents:
            rate = steps_per_second(opponent, players, args.seconds, action_features=args.action_features)
            verdict = ("PASS" if rate >= TARGET else "FAIL") if opponent == "random" and not args.action_features \
                else "-"
            print(f"{opponent:<12} {players:>2} {rate:>10,.0f}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
