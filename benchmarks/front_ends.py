"""Learner env steps per second of each training vec env kind, through stable-baselines3's ``VecEnv``
interface, as MaskablePPO drives it: ``env_method("action_masks")``, then ``step`` with a uniformly random
legal action per env.

The kinds (``vec_env`` in a training config, :mod:`allfives_training.vec_env`):

* ``batch``: one compiled batch of ``n_envs`` games in this process (:mod:`allfives_training.batch_vec_env`);
  only opponents with a batch twin (``random``, ``greedy``, ``expert``, policy files) can play in it;
* ``subproc``: SB3's ``SubprocVecEnv``, one process per single-seat env;
* ``dummy``: SB3's ``DummyVecEnv``, every single-seat env in this process.

Each kind is measured for the same ``n_envs`` against opponents with a batch twin (``random``, ``expert``)
and one without (``defensive``), where ``batch`` is refused (the figure is ``null``, with the reason). The
single-seat envs are built by :func:`allfives_training.league.make_env`, the training factory. A step
counts ``n_envs`` learner decisions (SB3 auto-resets a finished env inside the step). The processes are
not pinned: the subprocess kinds need every core, so run it on an otherwise idle machine; building the envs
and one warm-up second are not timed.

    python benchmarks/front_ends.py --seconds 3 --json benchmarks/results/front_ends.json
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from allfives_env.core.errors import AllFivesError  # noqa: E402
from benchmarks.provenance import stamped, write_report  # noqa: E402
from allfives_training.league import make_env  # noqa: E402
from allfives_training.vec_env import VEC_ENV_KINDS, make_batch_vec_env, make_vec_env  # noqa: E402

#: the single-seat env of the measurements: 2 players, default rules, the default config's reward
ENV_KWARGS = {"reward": "points", "episode": "game"}


def build(kind: str, n_envs: int, opponent: str) -> Any:
    """The vec env of ``kind`` over ``n_envs`` single-seat envs (or games) against ``opponent``."""
    if kind == "batch":
        return make_batch_vec_env(n_envs, ENV_KWARGS, [opponent])
    fn = functools.partial(make_env, ENV_KWARGS, [opponent], [1.0])
    return make_vec_env([fn] * n_envs, kind)


def rate(kind: str, n_envs: int, opponent: str, seconds: float, seed: int) -> dict[str, Any]:
    """Learner steps/s of one kind (``steps_per_s``), or ``refused`` with the package's reason."""
    t0 = time.perf_counter()
    try:
        venv = build(kind, n_envs, opponent)
    except AllFivesError as exc:
        return {"steps_per_s": None, "refused": str(exc)}
    try:
        venv.seed(seed)
        venv.reset()
        built = time.perf_counter() - t0
        rng = np.random.default_rng(seed)

        def step() -> None:
            masks = np.stack(venv.env_method("action_masks"))
            venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))

        clock = time.perf_counter
        end = clock() + 1.0
        while clock() < end:
            step()
        steps, start = 0, clock()
        while clock() - start < seconds:
            step()
            steps += n_envs
        return {"steps_per_s": round(steps / (clock() - start), 1), "build_and_reset_s": round(built, 2)}
    finally:
        venv.close()


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per measurement")
    parser.add_argument("--n-envs", default="32,128", help="comma-separated env counts")
    parser.add_argument("--opponents", default="random,expert,defensive", help="comma-separated agent specs")
    parser.add_argument("--kinds", default=",".join(VEC_ENV_KINDS), help="comma-separated vec env kinds")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this JSON file")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    results: list[dict[str, Any]] = []
    for n_envs in (int(n) for n in args.n_envs.split(",")):
        for opponent in args.opponents.split(","):
            for kind in args.kinds.split(","):
                row = {"kind": kind, "n_envs": n_envs, "opponent": opponent,
                       **rate(kind, n_envs, opponent, args.seconds, args.seed)}
                results.append(row)
                shown = "refused" if row["steps_per_s"] is None else f"{row['steps_per_s']:,.0f} steps/s"
                print(f"{kind:8s} n_envs={n_envs:4d} vs {opponent:10s} {shown}", flush=True)
    report = stamped({"results": results, "env_kwargs": ENV_KWARGS, "seconds": args.seconds,
                      "load_at_start": round(load, 2), "cpus": os.cpu_count()}, argv)
    write_report(args.json, report)


if __name__ == "__main__":
    main()
