"""Fit the bench's anchor ratings: a round robin among the protocol's opponents, per track.

Every pair of :data:`allfives_env.bench.protocol.OPPONENTS` plays ``--sets`` duplicate sets on deals of
``--seed`` (not the suites' deals); in ``3p`` each pair plays both "A against a field of B" and the reverse.
The ratings are fitted jointly with :func:`allfives_env.bench.rating.fit_ratings` (``random`` at 0), in the
model the bench rates agents with, and written with every pair's score. They were copied once into
``allfives_env/bench/protocol.py`` (``ANCHORS``) when protocol 1 was frozen.

    python benchmarks/bench_anchors.py --tracks 2p,3p,4p --sets 300 --processes 16 \\
        --json benchmarks/results/bench_anchors.json
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import platform
import sys
import time
from pathlib import Path

from allfives_env.bench import protocol
from allfives_env.bench.rating import fit_ratings
from allfives_env.core.rules import Rules
from allfives_env.evaluation.results import first_score
from allfives_env.evaluation.runner import play_sets
from allfives_env.evaluation.scheduling import duplicate_orders, planned_sets


def calibrate(track: str, sets: int, seed: int, processes: int, progress: bool) -> dict:
    """The fitted ratings and every pair's result on one track."""
    t = protocol.TRACKS[track]
    rules = Rules.from_options(dict(t.rules))
    side_of = [rules.side_of(s) for s in range(rules.num_players)]
    opponents = list(protocol.OPPONENTS)
    pairs = list(itertools.combinations(opponents, 2))
    balanced = rules.num_players == 3
    orders = duplicate_orders(rules, 2, balanced=balanced)
    matchups = [((a, b), orders) for a, b in pairs]
    started = time.perf_counter()
    records = play_sets(rules, matchups, planned_sets(seed, sets), processes, progress, f"anchors {track}",
                        move_time_limit=protocol.MOVE_TIME_LIMIT)
    pairings = []
    rows = []
    for (a, b), recs in zip(pairs, records):
        for hero, field, hero_index in ((a, b, 0), (b, a, 1)):
            # the games in which `hero` held the distinguished role: in 2p/4p every game, in 3p its own orders
            mine = [r for r in recs if not balanced or sum(1 for w in r.seats if w == hero_index) == 1]
            flipped = [r if hero_index == 0 else type(r)(r.set_index, r.game_index, tuple(1 - w for w in r.seats),
                                                         r.winner, r.gains, r.hands, r.truncated, r.decisions,
                                                         r.think_seconds) for r in mine]
            score = sum(first_score(r, side_of) for r in flipped)
            pairings.append((hero, field, score, len(flipped), t.opposing_sides))
            rows.append({"agent": hero, "opponent": field, "score": score, "games": len(flipped)})
            if not balanced:
                break  # in 2p/4p the reverse pairing is the same games seen from the other side
    ratings = fit_ratings(pairings, {"random": 0.0})
    return {"ratings": {o: ratings[o] for o in opponents}, "pairs": rows, "sets": sets,
            "seconds": round(time.perf_counter() - started, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tracks", default="2p,3p,4p")
    parser.add_argument("--sets", type=int, default=300, help="duplicate sets per pair (default 300)")
    parser.add_argument("--seed", type=int, default=35, help="the deals' seed; not a suite's (default 35)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()
    out = {"protocol": protocol.PROTOCOL_VERSION, "opponents": list(protocol.OPPONENTS), "seed": args.seed,
           "date": datetime.date.today().isoformat(), "machine": platform.machine(),
           "python": f"{platform.python_implementation()} {platform.python_version()}",
           "processes": args.processes, "command": "python " + " ".join(sys.argv), "tracks": {}}
    for track in args.tracks.split(","):
        out["tracks"][track] = calibrate(track, args.sets, args.seed, args.processes, not args.no_progress)
        args.json.write_text(json.dumps(out, indent=1) + "\n")
        print(track, {k: round(v) for k, v in out["tracks"][track]["ratings"].items()}, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
