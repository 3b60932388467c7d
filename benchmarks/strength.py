"""Strength of the agent ladder, measured with the duplicate-deal evaluation harness.

Acceptance checks (2-player default rules, games to the target, duplicate deals):

* ``greedy`` beats ``random`` in >= 90% of games;
* each rung beats the one below it with the lower end of its Wilson 95% interval above 50%:
  ``defensive`` > ``greedy``, ``expert`` > ``defensive``, ``pimc`` (200 samples) > ``expert``;
* ``pimc`` with 200 samples thinks under 0.2 s per move on average (one core).

``--tournament`` also plays the whole ladder round robin, on 2 players and on 4-player partnership, and
prints the Bradley-Terry rating tables (markdown, for the README).

Run::

    python benchmarks/strength.py                      # ladder checks, 1000 games (pimc: 300)
    python benchmarks/strength.py --games 400 --pimc-games 100 --processes 2 --json strength.json
    python benchmarks/strength.py --tournament --tournament-games 100 --processes 2

Figures depend only on ``--seed`` (not on ``--processes``); think times are measured.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Optional

from allfives_env.evaluation import evaluate, format_tournament, tournament

LADDER = [
    # (first, second, criterion, threshold)
    ("greedy", "random", "win rate", 0.90),
    ("defensive", "greedy", "lower 95%", 0.50),
    ("expert", "defensive", "lower 95%", 0.50),
    ("pimc", "expert", "lower 95%", 0.50),
    ("expert", "greedy", "lower 95%", 0.50),  # was a small assertion in the test suite; strength belongs here
]
PIMC_SECONDS_PER_MOVE = 0.2


def run_ladder(games: int, pimc_games: int, seed: int, processes: int, log: Any) -> list[dict[str, Any]]:
    """Play each rung against the one below and check the acceptance criteria."""
    rows = []
    for first, second, criterion, threshold in LADDER:
        n = pimc_games if "pimc" in (first, second) else games
        start = time.perf_counter()
        match = evaluate([first, second], {"num_players": 2}, games=n, seed=seed, processes=processes, progress=True)
        seconds = time.perf_counter() - start
        lo, hi = match.win_rate_ci
        value = match.win_rate if criterion == "win rate" else lo
        ok = value >= threshold if criterion == "win rate" else value > threshold
        think = {name: ms / 1000 for name, ms in zip(match.agents, match.think_ms)}
        row = {
            "match": f"{first} vs {second}", "games": match.games, "win_rate": match.win_rate, "ci": [lo, hi],
            "points_per_hand": match.points_per_hand, "ppH_ci": list(match.points_per_hand_ci),
            "criterion": f"{criterion} {'>=' if criterion == 'win rate' else '>'} {threshold:.0%}",
            "passed": bool(ok), "seconds": seconds, "think_ms": {k: v * 1000 for k, v in think.items()},
        }
        rows.append(row)
        log(f"  {row['match']:<22} {match.games:>5}  {match.win_rate:6.1%}  [{lo:6.1%}, {hi:6.1%}]  "
            f"{match.points_per_hand:+6.2f}/hand  {row['criterion']:<16} {'PASS' if ok else 'FAIL'}  ({seconds:.0f} s)")
        if "pimc" in think:
            per_move = think["pimc"]
            log(f"      pimc thinks {per_move * 1000:.1f} ms per move on average over all its moves "
                f"({'PASS' if per_move < PIMC_SECONDS_PER_MOVE else 'FAIL'}: target < {PIMC_SECONDS_PER_MOVE * 1000:.0f} ms)")
            row["pimc_ms_per_move"] = per_move * 1000
    return rows


def pimc_search_time(games: int, seed: int) -> float:
    """Seconds per *searched* move of ``pimc`` (200 samples) against ``expert``: the moves with one legal
    action, which it plays without searching, left out. One process."""
    from allfives_env.agents import make_agent
    from allfives_env.core import Rules
    from allfives_env.match import play_game

    pimc = make_agent("pimc", seed=seed)
    for i in range(games):
        play_game(Rules(), [pimc, make_agent("expert", seed=seed)] if i % 2 == 0 else [make_agent("expert", seed=seed), pimc],
                  seed=seed + i)
    return pimc.seconds_per_move


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games per ladder match-up without pimc (default 1000)")
    parser.add_argument("--pimc-games", type=int, default=300, help="games for the pimc match-up (default 300)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--skip-ladder", action="store_true", help="only run the tournaments")
    parser.add_argument("--tournament", action="store_true", help="also run the ladder round robin (2p and 4p partnership)")
    parser.add_argument("--tournament-games", type=int, default=100, help="games per pair in the tournaments")
    parser.add_argument("--json", metavar="PATH", help="write all figures as JSON")
    args = parser.parse_args(argv)
    log = print
    report: dict[str, Any] = {"seed": args.seed}
    if not args.skip_ladder:
        log(f"Ladder, 2 players, default rules, duplicate deals, seed {args.seed}:")
        log(f"  {'match':<22} {'games':>5}  {'win':>6}  {'95% interval':<18}  {'points':<12} {'criterion':<16} result")
        report["ladder"] = run_ladder(args.games, args.pimc_games, args.seed, args.processes, log)
        searched = pimc_search_time(4, args.seed)
        report["pimc_ms_per_searched_move"] = searched * 1000
        log(f"  pimc (200 samples), moves with a real choice only: {searched * 1000:.1f} ms per move "
            f"({'PASS' if searched < PIMC_SECONDS_PER_MOVE else 'FAIL'}: target < {PIMC_SECONDS_PER_MOVE * 1000:.0f} ms)")
    if args.tournament:
        ladder = ["random", "greedy", "defensive", "expert", "pimc"]
        report["tournaments"] = {}
        for label, options in (("2 players", {"num_players": 2}), ("4 players, partnership", {"num_players": 4})):
            start = time.perf_counter()
            result = tournament(ladder, options, games_per_pair=args.tournament_games, seed=args.seed,
                                processes=args.processes, progress=True)
            log(f"\nTournament, {label}, {args.tournament_games} games per pair ({time.perf_counter() - start:.0f} s):")
            log(format_tournament(result))
            report["tournaments"][label] = result.to_dict(include_games=False)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
        log(f"\nresults written to {args.json}")
    failed = [row["match"] for row in report.get("ladder", []) if not row["passed"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
