"""Search agents against ``pimc`` on duplicate deals (the target: a search stronger than ``pimc``
at equal or lower think time).

Each row is one duplicate-deal match (:func:`allfives_env.evaluation.evaluate`, both seat orders per
deal) of an agent spec against the opponent (default ``pimc``, 200 samples), on one seed; the think time
per move of both (forced moves included) is measured inside the same match, so a busy machine slows
both alike and the ratio stays fair. One game per agent in this process first builds the compiled
kernels (numba, ``cache=True``), so no compile is counted as think time; the warm-up's seconds are
printed apart. Tune on some seeds, then confirm on fresh ones:

    python benchmarks/search_vs_pimc.py pimc-sift --games 1000 --seeds 2026 4242 --json benchmarks/results/pimc_sift.json
    python benchmarks/search_vs_pimc.py pimc:rollout=expert,samples=50 pimc-sift:z=2 --games 200 --seeds 31
    python benchmarks/search_vs_pimc.py pimc-sift --players 4 --games 400 --seeds 2026
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

HEADER = ("| agent | seed | games | win rate [95% CI] | points/hand [95% CI] | ms/move agent | ms/move opponent | "
          "wall |\n|---|---:|---:|---|---|---:|---:|---:|")


def warm_up(specs: Sequence[str], players: int) -> float:
    """Play one game with each spec in every seat, in this process, so that the compiled kernels they
    use are built and cached before any match (numba's first call compiles, and a worker process then
    loads the cache in a fraction of a second instead of counting a compile as think time). Returns the
    seconds it took (compile time included)."""
    from allfives_env.agents import make_agent
    from allfives_env.core.rules import Rules
    from allfives_env.match import play_game

    t0 = time.perf_counter()
    rules = Rules(num_players=players)
    for spec in specs:
        play_game(rules, [make_agent(spec, seed=s) for s in range(players)], seed=0)
    return time.perf_counter() - t0


def match_row(spec: str, opponent: str, players: int, games: int, seed: int, processes: int) -> dict[str, Any]:
    """One duplicate-deal match of ``spec`` against ``opponent`` (every other seat), as a JSON-ready row."""
    from allfives_env.core.rules import Rules
    from allfives_env.evaluation import evaluate

    t0 = time.perf_counter()
    m = evaluate([spec, opponent], Rules(num_players=players), games=games, seed=seed, processes=processes,
                 progress=False)
    return {"spec": spec, "opponent": opponent, "players": players, "games": m.games, "seed": seed,
            "win_rate": m.win_rate, "win_rate_ci": list(m.win_rate_ci), "points_per_hand": m.points_per_hand,
            "points_per_hand_ci": list(m.points_per_hand_ci), "think_ms": list(m.think_ms),
            "wall_seconds": round(time.perf_counter() - t0, 1)}


def table_line(row: dict[str, Any], label: str) -> str:
    """``row`` as a line of :data:`HEADER`'s table, its agent column reading ``label``."""
    lo, hi = row["win_rate_ci"]
    plo, phi = row["points_per_hand_ci"]
    mine, theirs = row["think_ms"]
    return (f"| {label} | {row['seed']} | {row['games']} | {row['win_rate']:.1%} [{lo:.1%}, {hi:.1%}] | "
            f"{row['points_per_hand']:+.2f} [{plo:+.2f}, {phi:+.2f}] | {mine:.2f} | {theirs:.2f} | "
            f"{row['wall_seconds']:.0f} s |")


def run_rows(specs: Sequence[tuple[str, str]], opponent: str, players: int, games: int, seeds: Sequence[int],
             processes: int, json_path: str | None, header: str = HEADER) -> list[dict[str, Any]]:
    """Play every (label, spec) on every seed against ``opponent``, printing a table line per match as it
    ends; write the rows to ``json_path`` when given."""
    seconds = warm_up([spec for _, spec in specs] + [opponent], players)
    print(f"(warm-up, compiling or loading the kernels: {seconds:.1f} s, not counted)\n{header}", flush=True)
    rows = []
    for label, spec in specs:
        for seed in seeds:
            row = match_row(spec, opponent, players, games, seed, processes)
            rows.append(row)
            print(table_line(row, label), flush=True)
    if json_path:
        Path(json_path).write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("specs", nargs="+", help="agent specs to match against the opponent (e.g. pimc-sift)")
    p.add_argument("--opponent", default="pimc", help="the opponent's spec (default pimc, 200 samples)")
    p.add_argument("--players", type=int, default=2, help="players (default 2)")
    p.add_argument("--games", type=int, default=1000, help="games per match (default 1000)")
    p.add_argument("--seeds", type=int, nargs="+", default=[2026], help="the deals' seeds, one match each (default 2026)")
    p.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--json", help="also write the rows to this JSON file")
    args = p.parse_args(argv)
    run_rows([(s, s) for s in args.specs], args.opponent, args.players, args.games, args.seeds, args.processes,
             args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
