"""Why PPO from scratch stalled below ``greedy``: the controlled runs behind the training docs' table.

Each row is one short training run from random weights (``allfives train`` with the shipped default
config and the overrides below), changing one thing against a fixed set-up, then the final evaluation
against ``greedy`` on duplicate deals. The fixed set-up is the default config as it stood before the placement scorer's start (``score_gain``)
with the action features and a ``[32]`` placement scorer over a position-only trunk: 32 envs x 128 steps,
learning rate 1e-3, opponents ``random``, ``greedy`` and ``expert``. Runs are deterministic for a seed on
one machine (the batch env deals from the seed; one torch thread), so ``--repeat`` re-runs a row and
checks that it lands on the same figure.

    python benchmarks/learning_diagnostic.py                      # every row, 300k steps each (~10 min)
    python benchmarks/learning_diagnostic.py --only gain_1 sb3_head --steps 300000
    python benchmarks/learning_diagnostic.py --json benchmarks/results/learning_diagnostic.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The fixed set-up, on top of configs/default.yaml.
BASE = [
    "n_envs=32", "ppo.n_steps=128", "ppo.batch_size=512", "ppo.learning_rate=0.001",
    "opponents={random: 1, greedy: 1, expert: 1}", "env.action_features=true", "network.action_scorer=[32]",
    "network.trunk_reads_features=false", "evaluation.at_start=false", "evaluation.every=1000000000",
    "evaluation.baselines=[greedy]", "evaluation.replays=0", "checkpoint.every=1000000000",
    "output.tensorboard=false", "output.plot=false", "output.progress=false",
]

#: name -> (what changes, the overrides)
ROWS = {
    "sb3_head": ("SB3's action head (score_gain: null)", ["network.score_gain=null"]),
    "sb3_head_no_entropy": ("SB3's head, ppo.ent_coef: 0", ["network.score_gain=null", "ppo.ent_coef=0.0"]),
    "sb3_head_gamma_1": ("SB3's head, ppo.gamma: 1.0", ["network.score_gain=null", "ppo.gamma=1.0"]),
    "sb3_head_greedy_only": ("SB3's head, opponents greedy only",
                             ["network.score_gain=null", "opponents={greedy: 1}"]),
    "gain_0.1": ("score_gain: 0.1", ["network.score_gain=0.1"]),
    "gain_1": ("score_gain: 1", ["network.score_gain=1.0"]),
    "gain_1_win_reward": ("score_gain: 1, env.reward: win", ["network.score_gain=1.0", "env.reward=win"]),
}


def run_row(name: str, steps: int, games: int, seed: int) -> dict:
    """Train one row's config from random weights and evaluate it against ``greedy``."""
    from allfives_training.train import train

    what, overrides = ROWS[name]
    extra = [f"total_steps={steps}", f"evaluation.final_games={games}", f"seed={seed}"]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "log.txt", "w") as log:
        summary = train(ROOT / "configs" / "default.yaml", run_dir=str(Path(tmp) / name),
                        overrides=BASE + overrides + extra, progress=False, out=log)
    final = summary["final"][0]
    return {"row": name, "change": what, "overrides": overrides, "steps": summary["steps"], "seed": seed,
            "games": final["games"], "win_rate": final["win_rate"], "ci": [final["win_rate_lo"], final["win_rate_hi"]],
            "wall_seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="+", choices=sorted(ROWS), help="run these rows only")
    p.add_argument("--steps", type=int, default=300_000, help="env steps per run (default 300000)")
    p.add_argument("--games", type=int, default=200, help="duplicate games against greedy per run (default 200)")
    p.add_argument("--seed", type=int, default=0, help="the training seed of every run (default 0)")
    p.add_argument("--repeat", action="store_true", help="run each row twice and report whether they agree")
    p.add_argument("--json", help="also write the rows to this JSON file")
    args = p.parse_args(argv)
    names = args.only or list(ROWS)
    print("| change | win rate vs greedy | 95% CI | wall |\n|---|---:|---|---:|", flush=True)
    results = []
    for name in names:
        row = run_row(name, args.steps, args.games, args.seed)
        if args.repeat:
            again = run_row(name, args.steps, args.games, args.seed)
            row["repeat_win_rate"] = again["win_rate"]
        results.append(row)
        lo, hi = row["ci"]
        same = "" if not args.repeat else f" (repeat: {row['repeat_win_rate']:.1%})"
        print(f"| {row['change']} | {row['win_rate']:.1%}{same} | [{lo:.1%}, {hi:.1%}] | {row['wall_seconds']:.0f} s |",
              flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"base_overrides": BASE, "rows": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
