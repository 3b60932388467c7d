"""Throughput of the compiled batch engine against the Python core (its targets: at least 15x the core).

One process pinned to one CPU, 2-player default rules, uniform random legal play:

* ``engine_decisions_per_s``: the Python core, ``core.Game.step`` (benchmarks/throughput.py's loop (a));
* ``batch_decisions_per_s``: :class:`BatchGame` with ``n`` games: ``legal_mask()``, a random legal
  action per game (``random_actions``), ``step()`` (legality checked), ``reset_done()``;
* ``batch_obs_decisions_per_s``: the same plus the observation of every game's seat to act
  (``BatchObserver.observe``, identical to ``ObservationEncoder``).

``--obs-version 2`` measures observation version 2 instead: both batch loops keep the turn history
(``BatchGame(history=True)``, which version 2 reads) and the observer writes version 2.

Only decisions of live games are counted; dealing new episodes is inside the timed loop. The compile
time is measured apart, in fresh processes with an empty numba cache directory (``cold_start_s``: import,
compile, first step) and again with that cache filled (``warm_start_s``: what every later process pays).

    python benchmarks/batch_throughput.py --seconds 3 --json results.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from allfives_env.batch import BatchGame  # noqa: E402
from allfives_env.batch.observe import BatchObserver  # noqa: E402
from allfives_env.core import Rules  # noqa: E402
from benchmarks.throughput import engine_episode, pin_one_core, time_loop  # noqa: E402

_START_SCRIPT = (
    "import time; t = time.perf_counter()\n"
    "import numpy as np\n"
    "from allfives_env.batch import BatchGame\n"
    "from allfives_env.batch.observe import BatchObserver\n"
    "from allfives_env.core import Rules\n"
    "b = BatchGame(Rules(), 64, seed=0); s = np.zeros(64, np.uint64)\n"
    "b.legal_mask(); b.step(b.random_actions(s)); b.reset_done(); BatchObserver(Rules()).observe(b)\n"
    "print(time.perf_counter() - t)\n"
)


def start_seconds(cache_dir: str) -> float:
    """Wall time of a fresh process that imports the engine and plays one batch step (with an observation),
    numba caching in ``cache_dir``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    out = subprocess.run([sys.executable, "-c", _START_SCRIPT], check=True, capture_output=True, text=True, env=env,
                         cwd=Path(__file__).resolve().parent.parent)
    return float(out.stdout.strip().splitlines()[-1])


def batch_rate(rules: Rules, n: int, seconds: float, seed: int, observe: bool,
               obs_version: int = 1) -> tuple[float, int]:
    """Live-game decisions per second of the batch loop (and the decisions counted)."""
    batch = BatchGame(rules, n, seed=seed, record=False, history=obs_version >= 2)
    observer = BatchObserver(rules, False, obs_version) if observe else None
    mask = np.zeros((n, batch.num_actions), dtype=np.bool_)
    obs = np.zeros((n, observer.size), dtype=np.float32) if observer else None
    streams = np.arange(n, dtype=np.uint64) + np.uint64(seed)
    clock = time.perf_counter
    decisions = 0
    start = clock()
    end = start + seconds
    while clock() < end:
        for _ in range(8):
            if observer is not None:
                observer.observe(batch, out=obs)
            batch.legal_mask(out=mask)
            actions = batch.random_actions(streams)
            decisions += int((actions >= 0).sum())
            batch.step(actions)
            batch.reset_done()
    return decisions / (clock() - start), decisions


def measure(seconds: float, n: int, seed: int, players: int, obs_version: int = 1) -> dict[str, Any]:
    """Every figure of the report, in one process."""
    rules = Rules(num_players=players)
    cpu = pin_one_core()
    with tempfile.TemporaryDirectory() as cache:
        cold = start_seconds(cache)
        warm = min(start_seconds(cache) for _ in range(3))
    batch_rate(rules, 256, 0.5, seed, True, obs_version)  # compiled/loaded outside the timed loops
    decisions, episodes, elapsed = time_loop(engine_episode(players, seed), seconds)
    engine = decisions / elapsed
    batch, batch_count = batch_rate(rules, n, seconds, seed, False, obs_version)
    batch_obs, obs_count = batch_rate(rules, n, seconds, seed, True, obs_version)
    return {
        "players": players, "obs_version": obs_version, "n": n, "seconds": seconds, "cpu": cpu, "python": sys.version.split()[0],
        "engine_decisions_per_s": engine, "engine_decisions": decisions,
        "batch_decisions_per_s": batch, "batch_decisions": batch_count,
        "batch_obs_decisions_per_s": batch_obs, "batch_obs_decisions": obs_count,
        "ratio_vs_engine": batch / engine, "batch_obs_ratio_vs_engine": batch_obs / engine,
        "cold_start_s": cold, "warm_start_s": warm,
        "targets": {"batch_decisions_per_s >= 3M": batch >= 3e6, "ratio_vs_engine >= 15": batch / engine >= 15,
                    "batch_obs_decisions_per_s >= 1M": batch_obs >= 1e6, "warm_start_s < 2": warm < 2},
    }


def main(argv: Optional[list[str]] = None) -> int:
    """Run the measurement, print it, optionally write JSON; exit 1 under --strict if a target fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--n", type=int, default=4096, help="games in the batch")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--obs-version", type=int, choices=(1, 2), default=1,
                        help="observation version of the batch loops (2: with the turn history)")
    args = parser.parse_args(argv)
    report = measure(args.seconds, args.n, args.seed, args.players, args.obs_version)
    for key, value in report.items():
        if key != "targets":
            print(f"{key:28s} {value:,.2f}" if isinstance(value, float) else f"{key:28s} {value}")
    for name, ok in report["targets"].items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 1 if args.strict and not all(report["targets"].values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
