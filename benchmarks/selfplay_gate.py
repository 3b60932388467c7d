"""The self-play recipe's gate: a run's snapshots against a strong opponent (``pimc`` by default), as training
goes on.

Each snapshot the run wrote (``<run>/league/update_*.npz``, every ``league.snapshot_every`` updates) plays
``--games`` games against ``--opponent`` on duplicate deals from ``--seed``, a seed no training game uses; the
learner decisions behind it are read from the run's ``curve.json``. ``--every K`` takes every K-th snapshot
(the newest always). The JSON holds one row per snapshot with its win rate and 95% interval, and the run's
own evaluations so far (``evaluations``: its ``history.csv``, against its baselines on its evaluation deals):

    python benchmarks/selfplay_gate.py --run runs/selfplay_2p --games 400 --every 4 \\
        --json benchmarks/results/selfplay_gate.json
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from allfives_env.evaluation import evaluate  # noqa: E402
from allfives_training.schema import build_rules, read_yaml  # noqa: E402
from benchmarks.provenance import stamped, write_report  # noqa: E402

SNAPSHOT = re.compile(r"update_(\d{8})\.npz$")


def snapshots(run: Path, every: int) -> list[tuple[int, Path]]:
    """(update, path) of the run's snapshots, every ``every``-th and the newest, oldest first."""
    found = sorted((int(m.group(1)), p) for p in (run / "league").iterdir() if (m := SNAPSHOT.match(p.name)))
    chosen = found[every - 1::every]
    if found and (not chosen or chosen[-1] != found[-1]):
        chosen.append(found[-1])
    return chosen


def run_evaluations(run: Path) -> list[dict[str, object]]:
    """The run's own evaluation rows (``history.csv``), numbers as numbers."""
    path = run / "history.csv"
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return [{"decisions": int(r["step"]), "baseline": r["baseline"], "games": int(r["games"]),
                 "win_rate": float(r["win_rate"]), "win_rate_lo": float(r["win_rate_lo"]),
                 "win_rate_hi": float(r["win_rate_hi"]), "final": r["final"] == "True"}
                for r in csv.DictReader(handle)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, required=True, help="a self-play run directory")
    parser.add_argument("--opponent", default="pimc", help="the agent spec to play (default pimc)")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=9100, help="the duplicate deals (no training game uses it)")
    parser.add_argument("--every", type=int, default=1, help="every K-th snapshot (and the newest)")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    config = read_yaml(args.run / "config.yaml")
    rules = build_rules(config.get("rules", {}), "")
    curve = json.loads((args.run / "curve.json").read_text()) if (args.run / "curve.json").exists() else []
    steps_at = {row["update"]: row["steps"] for row in curve}
    rows = []
    for update, path in snapshots(args.run, max(1, args.every)):
        match = evaluate([f"ppo:path={path}", args.opponent], rules, games=args.games, seed=args.seed,
                         processes=args.processes, progress=False)
        low, high = match.win_rate_ci
        rows.append({"update": update, "decisions": steps_at.get(update), "games": match.games,
                     "win_rate": match.win_rate, "win_rate_lo": low, "win_rate_hi": high})
        print(f"update {update:,} ({steps_at.get(update, 0):,} decisions): {100 * match.win_rate:.1f}% "
              f"[{100 * low:.1f}, {100 * high:.1f}] vs {args.opponent}", flush=True)
    write_report(args.json, stamped({"run": str(args.run), "opponent": args.opponent, "seed": args.seed,
                                     "rows": rows,
                                     "evaluations": run_evaluations(args.run)}))


if __name__ == "__main__":
    main()
