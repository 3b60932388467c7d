"""The large differential run of the batch engine against the Python core.

Plays ``--games`` random games in the compiled batch engine over ``--rule-sets`` random rule sets (every
option of docs/rules.md §8, :func:`allfives_env.rule_sampler.random_rules`) and verifies every one through
:func:`allfives_env.core.replay.load_replay`, which re-simulates the game with the Python core and
compares every event (plays, counts, points, draws, passes, settlements, the end). Any disagreement is
printed with its rules, seed and game index and makes the exit status 1.

    python benchmarks/batch_exactness.py --games 100000 --rule-sets 250 --processes 2 --json exactness.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from allfives_env.batch import BatchGame  # noqa: E402
from allfives_env.core.errors import ReplayError  # noqa: E402
from allfives_env.core.replay import load_replay  # noqa: E402
from allfives_env.rule_sampler import random_rules  # noqa: E402


def check_rule_set(job: tuple[int, int, int]) -> dict[str, Any]:
    """Play ``games`` random games of rule set ``index`` (rules from ``seed + index``) and verify each."""
    index, games, seed = job
    rules = random_rules(np.random.default_rng([seed, index]))
    batch = BatchGame(rules, games, seed=seed + index)
    streams = np.arange(games, dtype=np.uint64) + np.uint64(index)
    decisions = 0
    while not batch.done.all():
        actions = batch.random_actions(streams)
        decisions += int((actions >= 0).sum())
        batch.step(actions)
    failures = []
    for i in range(games):
        try:
            game = load_replay(batch.replay(i))
            if game.scores != list(batch.scores[i]) or not game.over:
                failures.append(f"game {i}: final scores {list(batch.scores[i])}, core {game.scores}")
        except ReplayError as exc:
            failures.append(f"game {i}: {exc}")
    return {"index": index, "games": games, "decisions": decisions, "players": rules.num_players,
            "max_pip": rules.max_pip, "failures": failures[:3], "failed": len(failures),
            "rules": rules.to_dict() if failures else None}


def main(argv: Optional[list[str]] = None) -> int:
    """Run the differential check over the rule sets, in ``--processes`` worker processes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--rule-sets", type=int, default=250)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--progress", action="store_true", help="print a line per rule set to stderr")
    args = parser.parse_args(argv)
    per_set = max(1, args.games // args.rule_sets)
    jobs = [(k, per_set, args.seed) for k in range(args.rule_sets)]
    start = time.perf_counter()
    BatchGame(random_rules(np.random.default_rng(0)), 1, seed=0)  # compile (or load) once before forking
    results = []
    with mp.get_context("fork").Pool(args.processes) as pool:
        for result in pool.imap_unordered(check_rule_set, jobs):
            results.append(result)
            if args.progress:
                done = sum(r["games"] for r in results)
                print(f"{done:,} games, {sum(r['failed'] for r in results)} failed, "
                      f"{time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - start
    failed = [r for r in results if r["failed"]]
    summary = {
        "games": sum(r["games"] for r in results), "decisions": sum(r["decisions"] for r in results),
        "rule_sets": len(results), "failed_games": sum(r["failed"] for r in failed), "seconds": elapsed,
        "by_players": {p: sum(r["games"] for r in results if r["players"] == p) for p in (2, 3, 4)},
        "by_max_pip": {m: sum(r["games"] for r in results if r["max_pip"] == m) for m in (6, 9, 12)},
        "failures": failed, "seed": args.seed,
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "failures"}, indent=1))
    for r in failed:
        print("FAILED rule set", r["index"], r["rules"], *r["failures"], sep="\n  ")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
