"""The self-play recipe's ablation: the full recipe, then each of its parts switched off in turn, every arm with
the same seed, the same budget of learner decisions and the same final evaluation on fresh duplicate deals.

Arms (``--arms`` picks some; each is a run directory under ``--out``, trained with
``python -m allfives_training.selfplay``):

- ``full``: ``configs/selfplay_2p.yaml`` as shipped (a placement scorer that reads the position, a critic that
  reads every hand, win-potential shaping) started from a clone of ``pimc-sift``'s move values;
- ``no_context``: the placement scorer reads each placement's features only (``network.scorer_context=false``),
  with a clone of its own (the actor's shape differs);
- ``no_critic``: the critic reads the seat's own observation (``network.critic=own``);
- ``no_shaping``: the win reward alone (``env.shaping=none``);
- ``no_clone``: random starting weights (``start=null``);
- ``plus_pieces``: the other way round, the recipe with the race pieces of observation version 2 added
  (``env.obs_version=2``), with a clone of its own.

``no_critic`` and ``no_shaping`` start from the ``full`` arm's clone (its file ``clone/clone.npz``), so the
clone is made once per actor shape; each clone also plays the final evaluation's games alone (rows
``full:clone``, ``no_context:clone``, ``plus_pieces:clone``), which tells what PPO added to it. Each arm
trains to ``--decisions`` learner decisions with the learning rate annealed over that budget, then its trainer
plays ``--games`` games against ``--opponent`` on duplicate deals from ``--seed`` (a seed no training game
uses). Runs resume: run the same command again after an interruption
and every arm continues from its newest checkpoint (finished arms are read, not retrained).

The JSON holds one row per arm: its settings, the learner decisions, the win rate and points per hand with
95% intervals, and the difference from ``full`` (its interval treats the arms as independent samples, which
overstates it: both play the same deals)::

    python benchmarks/selfplay_ablation.py --decisions 4000000 --games 2000 \\
        --json benchmarks/results/selfplay_ablation.json
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.provenance import stamped, write_report  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


class Arm(NamedTuple):
    """One arm: what it switches off, its config overrides, and the arm whose clone it starts from (None: it
    makes its own clone when it starts from one)."""

    name: str
    meaning: str
    overrides: tuple[str, ...]
    clone_of: str | None = None


ARMS: tuple[Arm, ...] = (
    Arm("full", "the recipe as shipped", ("start=clone",)),
    Arm("no_context", "scorer without the position", ("start=clone", "network.scorer_context=false")),
    Arm("no_critic", "critic reads the own observation only", ("network.critic=own",), clone_of="full"),
    Arm("no_shaping", "win reward without the potential", ("env.shaping=none",), clone_of="full"),
    Arm("no_clone", "random starting weights", ("start=null",)),
    Arm("plus_pieces", "nothing: observation version 2 added", ("start=clone", "env.obs_version=2")),
)
ARM_NAMES = tuple(arm.name for arm in ARMS)


def final_row(run_dir: Path, opponent: str) -> dict[str, Any] | None:
    """The arm's final evaluation against ``opponent`` from its ``history.csv`` (None before it has one)."""
    path = run_dir / "history.csv"
    if not path.exists():
        return None
    with path.open(newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["final"] == "True" and r["baseline"] == opponent]
    if not rows:
        return None
    r = rows[-1]
    return {"decisions": int(r["step"]), "games": int(r["games"]), "win_rate": float(r["win_rate"]),
            "win_rate_ci": [float(r["win_rate_lo"]), float(r["win_rate_hi"])],
            "points_per_hand": float(r["points_per_hand"]),
            "points_per_hand_ci": [float(r["points_per_hand_lo"]), float(r["points_per_hand_hi"])]}


def clone_row(run_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The arm's clone (before any PPO) on the final evaluation's deals; kept in ``clone/evaluation.json`` so a
    second call reads it."""
    cached = run_dir / "clone" / "evaluation.json"
    key = {"opponent": args.opponent, "games": args.games, "seed": args.seed}
    if cached.exists():
        found = json.loads(cached.read_text())
        if found.get("key") == key:
            return dict(found["row"])
    from allfives_env.evaluation import evaluate
    from allfives_training.schema import build_rules, read_yaml

    rules = build_rules(read_yaml(run_dir / "config.yaml").get("rules", {}), "")
    match = evaluate([f"ppo:path={run_dir / 'clone' / 'clone.npz'}", args.opponent], rules, games=args.games,
                     seed=args.seed, processes=args.processes, progress=False)
    low, high = match.win_rate_ci
    ppr_low, ppr_high = match.points_per_hand_ci
    row = {"decisions": 0, "games": match.games, "win_rate": match.win_rate, "win_rate_ci": [low, high],
           "points_per_hand": match.points_per_hand, "points_per_hand_ci": [ppr_low, ppr_high]}
    cached.write_text(json.dumps({"key": key, "row": row}) + "\n")
    return row


def train_arm(arm: Arm, args: argparse.Namespace) -> float:
    """Train (or resume) one arm to its budget and final evaluation; returns the seconds it took now."""
    run_dir = args.out / arm.name
    overrides = list(arm.overrides)
    if arm.clone_of is not None:
        clone = args.out / arm.clone_of / "clone" / "clone.npz"
        if not clone.is_file():
            raise SystemExit(f"arm {arm.name} starts from {clone}, which does not exist yet: train the "
                             f"{arm.clone_of} arm first (--arms {arm.clone_of},{arm.name})")
        overrides.append(f"start={clone}")
    overrides += [f"seed={args.train_seed}", f"total_steps={args.decisions}", "evaluation.every=0",
                  f"evaluation.final_games={args.games}", f"evaluation.baselines=[{args.opponent}]",
                  f"evaluation.seed={args.seed}", f"evaluation.processes={args.processes}",
                  f"clone.decisions={args.clone_decisions}", "clone.processes=1", *args.overrides]
    command = [sys.executable, "-m", "allfives_training.selfplay", "--config", str(args.config)]
    if (run_dir / "config.yaml").exists():
        command += ["--resume", str(run_dir)]
    else:
        command += ["--run-dir", str(run_dir)]
    for item in overrides:
        command += ["--set", item]
    start = time.perf_counter()
    with (args.out / f"{arm.name}.log").open("a") as log:
        done = subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"arm {arm.name} failed (exit {done.returncode}); see {args.out / (arm.name + '.log')}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "selfplay_2p.yaml")
    parser.add_argument("--arms", default=",".join(ARM_NAMES), help=f"comma-separated, of {', '.join(ARM_NAMES)}")
    parser.add_argument("--decisions", type=int, default=4_000_000, help="learner decisions per arm")
    parser.add_argument("--clone-decisions", type=int, default=40_000, help="positions per clone round")
    parser.add_argument("--games", type=int, default=2000, help="final evaluation games per arm")
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--seed", type=int, default=9300, help="the evaluation's duplicate deals")
    parser.add_argument("--train-seed", type=int, default=1)
    parser.add_argument("--processes", type=int, default=1, help="evaluation processes")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "ablation", help="the arms' run directories")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="an override for every arm (e.g. --set env.num_envs=128)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    chosen = [name.strip() for name in args.arms.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in ARM_NAMES]
    if unknown or not chosen:
        parser.error(f"--arms {args.arms!r}: choose among {', '.join(ARM_NAMES)}")
    if args.decisions < 1 or args.games < 1 or args.clone_decisions < 1:
        parser.error("--decisions, --games and --clone-decisions must be >= 1")
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for arm in ARMS:
        if arm.name not in chosen:
            continue
        seconds = 0.0
        if final_row(args.out / arm.name, args.opponent) is None:
            seconds = train_arm(arm, args)
        result = final_row(args.out / arm.name, args.opponent)
        if result is None:
            raise SystemExit(f"arm {arm.name} ended without a final evaluation against {args.opponent}")
        rows.append({"arm": arm.name, "meaning": arm.meaning, "overrides": list(arm.overrides),
                     "clone_of": arm.clone_of, "seconds_this_call": round(seconds, 1), **result})
        print(f"{arm.name}: {100 * result['win_rate']:.1f}% [{100 * result['win_rate_ci'][0]:.1f}, "
              f"{100 * result['win_rate_ci'][1]:.1f}] vs {args.opponent} after {result['decisions']:,} decisions",
              flush=True)
        if arm.clone_of is None and "start=clone" in arm.overrides:
            alone = clone_row(args.out / arm.name, args)
            rows.append({"arm": f"{arm.name}:clone", "meaning": f"the {arm.name} arm's clone alone, no PPO",
                         "overrides": list(arm.overrides), "clone_of": None, "seconds_this_call": 0.0, **alone})
    full = next((r for r in rows if r["arm"] == "full"), None)
    for row in rows:
        if full is not None and row is not full:
            p, q, n, m = row["win_rate"], full["win_rate"], row["games"], full["games"]
            half = 1.96 * math.sqrt(p * (1 - p) / n + q * (1 - q) / m)
            row["vs_full"] = p - q
            row["vs_full_ci"] = [p - q - half, p - q + half]
    write_report(args.json, stamped({"config": str(args.config.relative_to(ROOT) if args.config.is_absolute()
                                                     and ROOT in args.config.parents else args.config),
                                     "opponent": args.opponent, "seed": args.seed, "train_seed": args.train_seed,
                                     "decisions": args.decisions, "clone_decisions": args.clone_decisions,
                                     "games": args.games, "rows": rows}))


if __name__ == "__main__":
    main()
