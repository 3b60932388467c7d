"""End-to-end training speed: env steps per second of MaskablePPO learning from a training config.

Builds the run exactly as ``allfives train`` does (the config's vec env, network and PPO
settings; one torch thread per process) and times ``model.learn`` alone: rollouts, masks, and the PPO
updates, without evaluations or checkpoints. The targets: >= 3k env steps/s with the
default config on a 2-core machine; for the batch vec env (``vec_env: batch``):
>= 1.5x the default config's 9.2k and >= 3x ppo_2p's 2.2k.

    python benchmarks/training_speed.py                                  # configs/default.yaml, 200k steps
    python benchmarks/training_speed.py --config configs/ppo_2p.yaml --steps 100000
    python benchmarks/training_speed.py --json benchmarks/results/training_speed.json
    python benchmarks/training_speed.py --compare dummy,batch --rounds 3 --steps 40000   # the batch vec env against single-seat envs

``--compare`` times each vec env kind (``--set vec_env=KIND``) in alternating rounds, each in a fresh
process (the machine is noisy: alternation spreads its load over both kinds), and prints every round,
the median per kind and the median of the per-round ratios to the first kind.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def measure(config: str, steps: int, overrides: list[str]) -> dict:
    """Train ``steps`` env steps (rounded up to whole rollouts) after one warm-up rollout; time it."""
    from allfives_training.config import load_config, rollout_size
    from allfives_training.train import Trainer

    cfg = load_config(config, overrides + ["imitation.teacher=null", "league.enabled=false",
                                           "output.tensorboard=false", "output.progress=false"])
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(cfg, Path(tmp), None, progress=False)
        trainer.build()
        model = trainer.model
        rollout = rollout_size(cfg)
        try:
            model.learn(total_timesteps=rollout, reset_num_timesteps=False)  # warm-up: first observations, compiled kernels
            start_steps = model.num_timesteps
            t0 = time.perf_counter()
            model.learn(total_timesteps=steps, reset_num_timesteps=False)
            seconds = time.perf_counter() - t0
            trained = model.num_timesteps - start_steps
        finally:
            trainer.vec_env.close()
    return {
        "config": config, "overrides": overrides, "n_envs": cfg.n_envs, "vec_env": cfg.vec_env,
        "network": cfg.network.to_dict(), "opponents": cfg.opponents,
        "action_features": cfg.env.action_features, "steps": trained, "seconds": round(seconds, 2),
        "steps_per_second": round(trained / seconds, 1),
    }


def compare(config: str, steps: int, overrides: list[str], kinds: list[str], rounds: int) -> dict:
    """``rounds`` alternating rounds of every vec env kind, each measured in a fresh process."""
    load = round(os.getloadavg()[0], 2)  # before the first round: what else the machine was doing
    per_kind: dict[str, list[float]] = {k: [] for k in kinds}
    for r in range(rounds):
        for kind in kinds:
            cmd = [sys.executable, __file__, "--config", config, "--steps", str(steps), "--quiet-json"]
            for item in overrides + [f"vec_env={kind}"]:
                cmd += ["--set", item]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            sps = json.loads(out.strip().splitlines()[-1])["steps_per_second"]
            per_kind[kind].append(sps)
            print(f"round {r + 1} {kind:>8}: {sps:,.0f} env steps/s", flush=True)
    base = per_kind[kinds[0]]
    summary = {k: {"rounds": v, "median": statistics.median(v),
                   "ratio_median": statistics.median(x / b for x, b in zip(v, base))} for k, v in per_kind.items()}
    for k, v in summary.items():
        print(f"{k:>8}: median {v['median']:,.0f} env steps/s, {v['ratio_median']:.2f}x {kinds[0]} (median of "
              f"per-round ratios)")
    return {"config": config, "overrides": overrides, "steps": steps, "kinds": summary,
            "command": "python benchmarks/training_speed.py " + " ".join(sys.argv[1:]), "date": time.strftime("%Y-%m-%d"),
            "load_at_start": load, "cpus": os.cpu_count()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", default="configs/default.yaml")
    p.add_argument("--steps", type=int, default=200_000, help="env steps to time (after a warm-up rollout)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="config override, as for allfives train")
    p.add_argument("--json", help="also write the result to this JSON file")
    p.add_argument("--compare", metavar="KIND,KIND", help="vec env kinds to time in alternating rounds, e.g. "
                   "dummy,batch (the first is the baseline of the ratios)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of --compare")
    p.add_argument("--quiet-json", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.compare:
        result = compare(args.config, args.steps, args.overrides, args.compare.split(","), args.rounds)
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
        return 0
    result = measure(args.config, args.steps, args.overrides)
    if args.quiet_json:
        print(json.dumps(result))
        return 0
    result["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}
    print(f"{result['config']}: {result['steps']:,} env steps in {result['seconds']:.1f} s = "
          f"{result['steps_per_second']:,.0f} env steps/s ({result['n_envs']} envs, {result['vec_env']}, "
          f"net {result['network']['hidden']}, opponents {result['opponents']})")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
