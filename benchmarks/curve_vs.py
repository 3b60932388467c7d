"""A run's learning curve against a baseline it was not evaluated against while training (e.g. ``pimc``).

Training evaluates against cheap baselines as it goes (``evaluation.baselines``); a search opponent is
too slow for that. This replays the curve afterwards: every snapshot the run exported for its evaluations
(``<run>/evals/policy_<step>.npz``, plus the final ``policy.npz``) plays ``--baseline`` on the same
duplicate deals (``--seed``), and the rows join the run's own history in one CSV and one plot.

    python benchmarks/curve_vs.py runs/ppo_2p --baseline pimc --games 100 --every 1000000 \\
        --out benchmarks/results/ppo_2p
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def snapshots(run: Path, every: int) -> list[tuple[int, Path, bool]]:
    """(step, file, final) of the run's evaluation snapshots on a grid of ``every`` steps, and the final."""
    found = sorted((int(p.stem.split("_")[1]), p) for p in (run / "evals").glob("policy_*.npz"))
    final = None
    if (run / "policy.npz").is_file():
        from allfives_env.policy import read_policy_header

        final = int(read_policy_header(run / "policy.npz")["metadata"]["step"])
        found = [(step, path) for step, path in found if step <= final]  # a stopped run may have run past it
    picked, last_bucket = [], -1
    for step, path in found:  # the first snapshot at or after each multiple of every, as the run evaluates
        if step // every > last_bucket:
            picked.append((step, path, False))
            last_bucket = step // every
    if final is not None:
        picked.append((final, run / "policy.npz", True))
    return picked


def main(argv: list[str] | None = None) -> int:
    from allfives_env.core.rules import Rules
    from allfives_env.evaluation import evaluate
    from allfives_env.policy import read_policy_header

    from allfives_training.report import HISTORY_FIELDS, history_row, plot_learning_curve

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path, help="a finished run directory")
    p.add_argument("--baseline", default="pimc", help="the opponent (agent spec, default pimc)")
    p.add_argument("--games", type=int, default=100, help="games per snapshot (default 100)")
    p.add_argument("--every", type=int, default=1_000_000, help="at most one snapshot per this many steps")
    p.add_argument("--seed", type=int, default=12345, help="the deals' seed (default 12345, the run's)")
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--out", type=Path, required=True, help="prefix of the CSV and PNG written")
    args = p.parse_args(argv)
    with open(args.run / "eval_history.csv", newline="") as f:
        history = [{k: (v if k == "baseline" else (v == "True") if k == "final" else int(v) if k in ("step", "games")
                else float(v)) for k, v in r.items()}
                   for r in csv.DictReader(f)]
    rules = Rules.from_options(read_policy_header(args.run / "policy.npz")["rules"])
    for step, path, final in snapshots(args.run, args.every):
        match = evaluate([f"ppo:path={path}", args.baseline], rules, games=args.games, seed=args.seed,
                         processes=args.processes, progress=False)
        row = history_row(step, args.baseline, match, final)
        row["final"] = False  # one curve: the final point is the last step of it
        history.append(row)
        lo, hi = match.win_rate_ci
        print(f"step {step:>10,}: {match.win_rate:.3f} [{lo:.3f}, {hi:.3f}] vs {args.baseline}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{args.out}_eval_history.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=HISTORY_FIELDS)
        writer.writeheader()
        writer.writerows(sorted(history, key=lambda r: (r["baseline"], r["step"])))
    note = plot_learning_curve(Path(f"{args.out}_learning_curve.png"), history,
                               f"{args.run.name}: win rate vs baselines ({args.games} games per point vs "
                               f"{args.baseline})")
    print(f"wrote {args.out}_eval_history.csv and " + (f"{args.out}_learning_curve.png" if note is None else note))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
