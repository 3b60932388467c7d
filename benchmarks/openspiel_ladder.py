"""Our ladder against outside anchors: ``expert``, ``pimc`` and the shipped policies vs OpenSpiel's ISMCTS.

Each row is one duplicate-deal match-up from the evaluation harness (:func:`allfives_env.evaluation.evaluate`),
from our agent's point of view, against ``openspiel-ismcts`` (OpenSpiel's ``ISMCTSBot`` with random
rollouts to the hand end, see :mod:`allfives_env.openspiel.bots`) at two budgets, on 2 players and on
4-player partnership (our agent's team against a team of two ISMCTS bots). ISMCTS in Python is slow
(about 0.15 s a searched move at 100 simulations and 1.4 s at 1000 on the shared 2-core machine), so the
game counts are small and the intervals wide; the points-per-hand interval, over every hand played, is
the finer figure. Match-ups run in the order listed; once ``--budget-minutes`` of wall time have passed
no new one starts, and the skipped ones are listed (so a run is bounded).

Run::

    python benchmarks/openspiel_ladder.py --processes 2 --json benchmarks/results/openspiel_ladder.json
    python benchmarks/openspiel_ladder.py --games-100 20 --games-1000 6 --games-4p-100 12 --games-4p-1000 4
    python benchmarks/openspiel_ladder.py --ours ppo-2p ppo-4p --json benchmarks/results/openspiel_ladder.json --merge

Figures depend only on ``--seed`` (not on ``--processes``); think times are measured (milliseconds per
move over all of an agent's moves, forced ones included).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Optional

from allfives_env.evaluation import evaluate

OURS_2P = ("expert", "pimc", "pimc-net", "ppo-2p")
OURS_4P = ("expert", "pimc", "ppo-4p")
BUDGETS = (100, 1000)


def plan(args: argparse.Namespace) -> list[tuple[int, int, str, int]]:
    """(players, sims, our agent, games) in the order they run: the cheap budget first."""
    rows = []
    for sims in BUDGETS:
        for players, ours, games in ((2, OURS_2P, args.games_100 if sims == 100 else args.games_1000),
                                     (4, OURS_4P, args.games_4p_100 if sims == 100 else args.games_4p_1000)):
            rows.extend((players, sims, agent, games) for agent in ours
                        if args.ours is None or agent in args.ours)
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The README table: one line per match-up."""
    lines = ["| players | ours | vs | games | win rate of ours [95% CI] | points/hand, ours minus ISMCTS [95% CI] | "
             "ms/move ours | ms/move ISMCTS |", "|---|---|---|---:|---|---|---:|---:|"]
    for r in rows:
        lo, hi = r["win_rate_ci"]
        plo, phi = r["points_per_hand_ci"]
        lines.append(
            f"| {r['setup']} | `{r['ours']}` | `{r['opponent']}` | {r['games']} | {r['win_rate']:.1%} "
            f"[{lo:.1%}, {hi:.1%}] | {r['points_per_hand']:+.2f} [{plo:+.2f}, {phi:+.2f}] | "
            f"{r['think_ms'][0]:.1f} | {r['think_ms'][1]:.0f} |"
        )
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games-100", type=int, default=20, help="2-player games per match-up at 100 simulations")
    parser.add_argument("--games-1000", type=int, default=6, help="2-player games per match-up at 1000 simulations")
    parser.add_argument("--games-4p-100", type=int, default=12, help="4-player games per match-up at 100 simulations")
    parser.add_argument("--games-4p-1000", type=int, default=4, help="4-player games per match-up at 1000 simulations")
    parser.add_argument("--seed", type=int, default=20260613)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--budget-minutes", type=float, default=55.0, help="start no match-up after this (default 55)")
    parser.add_argument("--ours", nargs="+", metavar="AGENT",
                        help=f"run only these of our agents (of {sorted(set(OURS_2P + OURS_4P))})")
    parser.add_argument("--json", metavar="PATH", help="write all figures as JSON")
    parser.add_argument("--merge", action="store_true",
                        help="with --json: keep that file's other rows, replacing those this run measured again")
    args = parser.parse_args(argv)

    def log(text: str) -> None:
        print(text, flush=True)

    start = time.monotonic()
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    for players, sims, ours, games in plan(args):
        opponent = f"openspiel-ismcts:sims={sims}"
        label = f"{ours} vs {opponent} ({players}p)"
        if (time.monotonic() - start) / 60 > args.budget_minutes:
            skipped.append(label)
            log(f"skipped (budget spent): {label}")
            continue
        t0 = time.monotonic()
        match = evaluate([ours, opponent], {"num_players": players}, games=games, seed=args.seed,
                         processes=args.processes, progress=False)
        seconds = time.monotonic() - t0
        row = {
            "setup": "2" if players == 2 else "4 (partnership)", "players": players, "ours": ours,
            "opponent": opponent, "sims": sims, "games": match.games, "wins": match.wins, "losses": match.losses,
            "draws": match.draws, "win_rate": match.win_rate, "win_rate_ci": list(match.win_rate_ci),
            "points_per_hand": match.points_per_hand, "points_per_hand_ci": list(match.points_per_hand_ci),
            "mean_hands": match.mean_hands, "think_ms": list(match.think_ms), "decisions": list(match.decisions),
            "seconds": seconds,
        }
        rows.append(row)
        lo, hi = match.win_rate_ci
        log(f"{label:<44} {match.games:>3} games  win {match.win_rate:6.1%} [{lo:6.1%}, {hi:6.1%}]  "
            f"{match.points_per_hand:+6.2f}/hand [{match.points_per_hand_ci[0]:+.2f}, {match.points_per_hand_ci[1]:+.2f}]  "
            f"ms/move {match.think_ms[0]:.1f} / {match.think_ms[1]:.0f}  ({seconds:.0f} s)")
    total = time.monotonic() - start
    log("\n" + markdown(rows))
    log(f"\nwall time {total / 60:.1f} min; seed {args.seed}; processes {args.processes}; "
        f"load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.json:
        if args.merge and os.path.isfile(args.json):
            with open(args.json, encoding="utf-8") as fh:
                before = json.load(fh)
            fresh = {(r["players"], r["ours"], r["sims"]) for r in rows}
            kept = [r for r in before.get("rows", []) if (r["players"], r["ours"], r["sims"]) not in fresh]
            order = [(p, s, o) for p, s, o, _ in plan(argparse.Namespace(**{**vars(args), "ours": None}))]
            rows = sorted(kept + rows, key=lambda r: order.index((r["players"], r["sims"], r["ours"]))
                          if (r["players"], r["sims"], r["ours"]) in order else len(order))
        report = {"seed": args.seed, "processes": args.processes, "wall_seconds": total, "rows": rows,
                  "skipped": skipped, "load_average_end": os.getloadavg()[0], "cpu_count": os.cpu_count(),
                  "command": "python benchmarks/openspiel_ladder.py " + " ".join(argv if argv is not None else sys.argv[1:])}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
        log(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
