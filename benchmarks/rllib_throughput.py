"""Throughput of ``allfives train-rllib`` with 1 and 2 env runners: env steps per second of whole training
iterations (sampling + PPO update) and of sampling alone, the same 128 games of the batch engine split over
the runners.

    python benchmarks/rllib_throughput.py                      # configs/rllib_default.yaml, 1 and 2 runners
    python benchmarks/rllib_throughput.py --runners 1 2 4 --iterations 6 --out benchmarks/results/rllib_throughput.json

Each setting builds the config's algorithm on a fresh local Ray, trains ``--iterations`` iterations and
times those after the first (start-up and first compilations left out). Sampling throughput is the
iterations' env steps over RLlib's own sampling timer (``timers/env_runner_sampling_timer``, the driver's
wait for the runners' samples), so it shows what more runners buy before the single learner caps it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]


def measure(config: str, runners: int, total_envs: int, iterations: int, overrides: Sequence[str]) -> dict[str, Any]:
    """One setting on a fresh local Ray: ``runners`` env runners sharing ``total_envs`` games."""
    import ray

    from allfives_training.rllib.config import rllib_config_from
    from allfives_training.rllib.train import build_algo_config

    per_runner = max(1, total_envs // max(1, runners))
    cfg = rllib_config_from(config, [*overrides, f"env_runners.num_env_runners={runners}",
                                     f"env_runners.num_envs_per_env_runner={per_runner}"])
    load = os.getloadavg()[0]
    ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        algo = build_algo_config(cfg).build_algo()
        try:
            first = algo.train()
            steps0, wall, sampling = int(first["num_env_steps_sampled_lifetime"]), 0.0, 0.0
            for _ in range(iterations - 1):
                t0 = time.perf_counter()
                result = algo.train()
                wall += time.perf_counter() - t0
                sampling += float(result["timers"]["env_runner_sampling_timer"])
            steps = int(result["num_env_steps_sampled_lifetime"]) - steps0
        finally:
            algo.stop()
    finally:
        ray.shutdown()
    return {"env_runners": runners, "envs_per_runner": per_runner, "iterations_timed": iterations - 1,
            "env_steps": steps, "seconds": round(wall, 2), "env_steps_per_s": round(steps / wall, 1),
            "sampling_env_steps_per_s": round(steps / sampling, 1) if sampling else None,
            "loadavg_1min_before": load}


def main(argv: Sequence[str] = ()) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "rllib_default.yaml"))
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--total-envs", type=int, default=128, help="games of the batch engine, split over runners")
    parser.add_argument("--iterations", type=int, default=5, help="training iterations per setting (>= 2)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "rllib_throughput.json"))
    args = parser.parse_args(list(argv) or None)
    if args.iterations < 2:
        parser.error("--iterations must be at least 2: the first iteration is not timed")
    rows = []
    for runners in args.runners:
        rows.append(measure(args.config, runners, args.total_envs, args.iterations, args.overrides))
        print(json.dumps(rows[-1]), flush=True)
    report = {"config": os.path.relpath(args.config, ROOT), "overrides": args.overrides, "cpus": os.cpu_count(),
              "python": platform.python_version(), "date": time.strftime("%Y-%m-%d", time.gmtime()), "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return report


if __name__ == "__main__":
    main()
