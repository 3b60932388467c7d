"""How close is a trained policy to the search it should match or beat (a distilled policy against its teacher)?

A distilled policy is judged by its win rate in the end, but a match says nothing about *where* it falls
short of its teacher. This script replays the teacher's own positions and asks, at every decision with a
real choice:

* **agreement**: does the agent pick the teacher's move? The teacher is measured against a second copy
  of itself with another seed (its *self-agreement*): a search that draws its guesses at random does not
  pick the same move every time, so no student can agree with it more often than that.
* **regret**: how many points does the agent's move lose against the best move, by a reference search
  that plays every candidate out on the same ``--reference-samples`` guesses without elimination and
  adds ``pimc``'s default ``expert`` prior, as ``pimc`` ranks its moves
  (:meth:`allfives_env.agents.search.PIMCAgent.move_scores`)? The teacher's second copy gives the
  regret of the teacher's own noise; a student with far more regret than that loses its games in the
  decisions the regret column counts, and the ``> 20 pts`` column says how often it blunders.

The positions come from games the teacher plays in the single-seat env against the same opponent mixture
the imitation warm start records against (``expert`` 3 : ``greedy`` 1), default 2-player rules.

    python benchmarks/distill_gap.py ppo-2p --decisions 2000 --seed 5
    python benchmarks/distill_gap.py ppo-2p ppo:path=runs/ppo_2p/policy.npz --teacher pimc-sift --json gap.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BLUNDER = 20.0  # points of regret that count as a blunder in the table
REGRET_CAP = 200.0  # a rollout value that includes a won or lost game is capped, so one case cannot dominate


def measure(specs: Sequence[str], teacher: str, reference: str, decisions: int, seed: int) -> list[dict[str, Any]]:
    """One row per agent (the teacher and its second copy first): agreement with the teacher and regret under
    the reference search, over ``decisions`` searched teacher decisions."""
    from allfives_env.agents import make_agent
    from allfives_env.agents.base import PlayerView
    from allfives_env.single_seat import AllFivesSingleSeatEnv

    env = AllFivesSingleSeatEnv(opponents=["expert", "greedy"], opponent_weights=[3.0, 1.0], reward="points",
                                episode="game")
    streams = np.random.SeedSequence(seed).generate_state(4)
    lead = make_agent(teacher, seed=int(streams[0]))
    ref = make_agent(reference, seed=int(streams[1]))
    if not hasattr(ref, "move_scores"):
        raise SystemExit(f"--reference {reference!r} is not a search agent with move_scores (try pimc)")
    # row 0 is the teacher itself (the moves it plays), row 1 a second copy of it with another seed
    names = [teacher, f"{teacher} (second seed)"] + list(specs)
    others = [make_agent(teacher, seed=int(streams[2]))] + [make_agent(s, seed=int(streams[3])) for s in specs]
    agree = np.zeros(len(names))
    regret = np.zeros((len(names), decisions))
    rng = np.random.default_rng(seed)
    n = 0
    t0 = time.perf_counter()
    while n < decisions:
        env.reset(seed=int(rng.integers(2**31 - 1)))
        for agent in [lead, ref] + others:
            agent.reset(int(rng.integers(2**31 - 1)))
        done = False
        while not done:
            view = PlayerView(env.game, env.seat)
            legal = view.legal
            action = lead.act(view)
            if len(legal) > 1 and n < decisions:
                values = dict(zip(legal, ref.move_scores(view, legal)))
                best = max(values.values())
                for k, choice in enumerate([action] + [agent.act(view) for agent in others]):
                    agree[k] += choice == action
                    regret[k, n] = min(best - values[choice], REGRET_CAP)
                n += 1
            _, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    seconds = time.perf_counter() - t0
    rows = [{"agent": name, "agreement": float(a / decisions), "regret": float(r.mean()),
             "blunders": float((r > BLUNDER).mean()), "decisions": decisions, "seconds": seconds}
            for name, a, r in zip(names, agree, regret)]
    return rows


def table(rows: Sequence[dict[str, Any]], teacher: str, reference: str) -> str:
    lines = [f"| agent | agrees with {teacher} | regret, points/decision (by {reference}) | regret > {BLUNDER:g} pts |",
             "|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['agent']} | {r['agreement']:.1%} | {r['regret']:.2f} | {r['blunders']:.1%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("specs", nargs="*", default=["ppo-2p", "expert"], help="agents to compare with the teacher "
                   "(default ppo-2p expert)")
    p.add_argument("--teacher", default="pimc-sift", help="the search whose positions and moves are the labels")
    p.add_argument("--reference-samples", type=int, default=200,
                   help="guesses of the reference search (expert rollouts, no elimination, pimc's "
                   "default expert prior; default 200)")
    p.add_argument("--decisions", type=int, default=2000, help="searched teacher decisions to score (default 2000)")
    p.add_argument("--seed", type=int, default=5, help="seed of the games and the agents (default 5)")
    p.add_argument("--json", help="also write the rows to this JSON file")
    args = p.parse_args(argv)
    reference = f"pimc:rollout=expert,samples={args.reference_samples}"
    rows = measure(args.specs, args.teacher, reference, args.decisions, args.seed)
    print(f"{args.decisions} searched decisions of {args.teacher}, seed {args.seed}, {rows[0]['seconds']:.0f} s")
    print(table(rows, args.teacher, reference))
    if args.json:
        Path(args.json).write_text(json.dumps({"teacher": args.teacher, "reference": reference, "seed": args.seed,
                                               "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
