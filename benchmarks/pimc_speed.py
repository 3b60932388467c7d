"""Think time of ``pimc`` per searched move on the batch engine against the Python engine, and a
duplicate match between the two (the target: the same move quality at <= 5 ms per searched move with
200 samples).

What is measured:

* **think time**: positions are collected from duplicate-style games of ``expert`` against itself
  (default rules, 2 players unless ``--players``), keeping every decision with a real choice (two or
  more legal moves) that the searching seat would face; each engine's ``pimc`` (``samples=200``, prior
  ``expert``, greedy rollouts: the registry defaults) then decides every position once, timed with
  ``time.perf_counter`` (wall) and ``time.process_time`` (CPU, less sensitive to other processes on a
  shared machine). Median, mean and 90th percentile per searched move; forced moves are not counted.
  The ``expert`` prior's own share is timed apart. Numba's compile (or the load of its on-disk cache)
  happens in a warm-up decision first, reported as ``first_call_s`` and excluded.
* **duplicate match**: ``pimc`` (batch) against ``pimc:engine=python`` with the project's harness
  (:func:`allfives_env.evaluation.evaluate`, duplicate deals, both seat orders per deal, fresh seeds),
  its win rate with a Wilson 95% interval and the points-per-hand difference with a Student-t 95%
  interval over duplicate sets. "No significant difference" means 0.5 lies in the win-rate interval and
  0 in the points interval.

Measured (shared 2-core machine, load 6-11 from other work; the command below, 52 min)::

    batch  pimc               per searched move: cpu median 2.26 ms (mean 2.85, p90 5.65), wall median 2.34 ms
    python pimc:engine=python per searched move: cpu median 92.5 ms (mean 108), wall median 130 ms
    expert prior alone: 0.17 ms median
    duplicate match, 200 games (100 sets), seed 20260602: win rate of the batch pimc 0.555
    [0.486, 0.622], points/hand +0.94 [-0.65, +2.53]: no significant difference

Run::

    python benchmarks/pimc_speed.py --positions 200 --python-positions 60 --match-games 200 --processes 2 \\
        --progress --json pimc_speed.json
    python benchmarks/pimc_speed.py --match-games 0          # think times only

``--also SPEC ...`` times more batch-engine agents on the same positions, after ``pimc``: the rollout
policies' cost (``pimc:prior=none,samples=100`` against ``pimc:prior=none,rollout=expert,samples=100``)
or ``pimc-sift`` against ``pimc``::

    python benchmarks/pimc_speed.py --python-positions 0 --also pimc:prior=none,samples=100 \
        pimc:prior=none,rollout=expert,samples=100 pimc-sift
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Optional

import numpy as np

from allfives_env.agents import PlayerView, make_agent
from allfives_env.core import Game, Rules
from allfives_env.evaluation import evaluate

TARGET_MS = 5.0


def collect_positions(rules: Rules, count: int, seed: int) -> list[Game]:
    """Decision points with a real choice from games of ``expert`` against itself (copies of the game)."""
    rng = np.random.default_rng(seed)
    players = [make_agent("expert", seed=s) for s in range(rules.num_players)]
    positions: list[Game] = []
    while len(positions) < count:
        game = Game(rules, int(rng.integers(1 << 31)))
        while not game.over and len(positions) < count:
            seat = game.current
            view = PlayerView(game, seat)
            if len(game.legal) > 1 and rng.random() < 0.5:
                positions.append(game.clone())
            game.step(players[seat].act(view))
    return positions


def summary(seconds: list[float]) -> dict[str, float]:
    """Median, mean and 90th percentile in milliseconds."""
    ms = np.asarray(seconds) * 1000.0
    return {"median_ms": float(np.median(ms)), "mean_ms": float(ms.mean()), "p90_ms": float(np.percentile(ms, 90)),
            "n": int(ms.size)}


def time_engine(spec: str, positions: list[Game], seed: int) -> dict[str, Any]:
    """One engine's think time per searched move over ``positions`` (after a warm-up decision)."""
    agent = make_agent(spec, seed=seed)
    first = positions[0]
    start = time.perf_counter()
    agent.act(PlayerView(first, first.current))
    first_call = time.perf_counter() - start
    wall, cpu = [], []
    for game in positions:
        view = PlayerView(game, game.current)
        t0, c0 = time.perf_counter(), time.process_time()
        action = agent.act(view)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
        assert action in game.legal
    return {"spec": agent.spec(), "first_call_s": first_call, "wall": summary(wall), "cpu": summary(cpu)}


def time_prior(positions: list[Game]) -> dict[str, Any]:
    """The ``expert`` prior's evaluation of every placement, per position (part of both engines' time)."""
    expert = make_agent("expert")
    wall = []
    for game in positions:
        view = PlayerView(game, game.current)
        placements = [a for a in view.legal if a != view.draw_action]
        t0 = time.perf_counter()
        expert.evaluate(view, placements)
        wall.append(time.perf_counter() - t0)
    return {"wall": summary(wall)}


def duplicate_match(rules: Rules, games: int, seed: int, processes: int, progress: bool) -> dict[str, Any]:
    """``pimc`` (batch) against ``pimc:engine=python`` on duplicate deals, from the batch side's view."""
    start = time.perf_counter()
    result = evaluate(["pimc", "pimc:engine=python"], rules, games=games, seed=seed, processes=processes,
                      progress=progress)
    lo, hi = result.win_rate_ci
    plo, phi = result.points_per_hand_ci
    return {
        "agents": result.agents, "games": result.games, "sets": result.sets, "seed": seed,
        "wins": result.wins, "losses": result.losses, "draws": result.draws,
        "win_rate": result.win_rate, "win_rate_ci": [lo, hi],
        "points_per_hand": result.points_per_hand, "points_per_hand_ci": [plo, phi],
        "think_ms_per_decision": result.think_ms, "decisions": result.decisions,
        "no_significant_difference": bool(lo <= 0.5 <= hi and plo <= 0.0 <= phi),
        "seconds": time.perf_counter() - start,
    }


def main(argv: Optional[list[str]] = None) -> int:
    """Parse the options, run the measurements, print them and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--positions", type=int, default=200, help="positions timed with the batch engine")
    parser.add_argument("--python-positions", type=int, default=60,
                        help="the first so many of them timed with the Python engine too (0: skip)")
    parser.add_argument("--match-games", type=int, default=0, help="games of the duplicate match (0: skip)")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--seed", type=int, default=20260601, help="seeds the positions and the match")
    parser.add_argument("--progress", action="store_true", help="show the match's progress on stderr")
    parser.add_argument("--also", nargs="*", default=[], metavar="SPEC",
                        help="more batch-engine agent specs to time on the same positions")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 if the batch median (CPU) exceeds 5 ms or the match shows a difference")
    args = parser.parse_args(argv)
    rules = Rules(num_players=args.players)
    positions = collect_positions(rules, args.positions, args.seed)
    out: dict[str, Any] = {"rules": rules.to_dict(), "samples": 200, "target_ms": TARGET_MS}
    out["batch"] = time_engine("pimc", positions, args.seed)
    report("batch ", out["batch"])
    out["also"] = [time_engine(spec, positions, args.seed) for spec in args.also]
    for row in out["also"]:
        report("batch ", row)
    if args.python_positions:
        out["python"] = time_engine("pimc:engine=python", positions[:args.python_positions], args.seed)
        report("python", out["python"])
    out["prior"] = time_prior(positions)
    print(f"expert prior alone: median {out['prior']['wall']['median_ms']:.2f} ms per searched move")
    if args.match_games:
        out["match"] = duplicate_match(rules, args.match_games, args.seed + 1, args.processes, args.progress)
        m = out["match"]
        print(f"duplicate match {' vs '.join(m['agents'])}: {m['games']} games ({m['sets']} sets), win rate "
              f"{m['win_rate']:.3f} [{m['win_rate_ci'][0]:.3f}, {m['win_rate_ci'][1]:.3f}], points/hand "
              f"{m['points_per_hand']:+.2f} [{m['points_per_hand_ci'][0]:+.2f}, {m['points_per_hand_ci'][1]:+.2f}]; "
              f"{'no significant difference' if m['no_significant_difference'] else 'SIGNIFICANT DIFFERENCE'} "
              f"({m['seconds']:.0f} s)")
    passed = out["batch"]["cpu"]["median_ms"] <= TARGET_MS and out.get("match", {}).get("no_significant_difference", True)
    out["passed"] = passed
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
        print(f"results written to {args.json}")
    return 1 if args.strict and not passed else 0


def report(label: str, row: dict[str, Any]) -> None:
    """One engine's line."""
    w, c = row["wall"], row["cpu"]
    print(f"{label} {row['spec']:<22} per searched move: wall median {w['median_ms']:7.2f} ms (mean {w['mean_ms']:.2f}, "
          f"p90 {w['p90_ms']:.2f}), cpu median {c['median_ms']:7.2f} ms over {w['n']} positions; "
          f"first call (compile or cache load) {row['first_call_s']:.2f} s")


if __name__ == "__main__":
    sys.exit(main())
