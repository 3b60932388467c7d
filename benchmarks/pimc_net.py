"""``pimc-net`` (pimc whose prior adds a trained policy's preferences) against ``pimc``, issue 14.

Each row is one duplicate-deal match (:func:`allfives_env.evaluation.evaluate`, both seat orders per
deal) of ``pimc-net:policy_weight=W`` against ``pimc``, both with the same samples and greedy rollouts, so
the only difference is the policy's term in the prior; the think time per move of each (forced moves included) shows what the
prior costs. Pick the weight on one seed, then confirm it on a fresh one (``--seed``): the default weight
in :data:`allfives_env.agents.search.PIMC_NET_POLICY_WEIGHT` came from such a sweep.

    python benchmarks/pimc_net.py --weights 1 3 10 --games 200 --seed 7          # the sweep
    python benchmarks/pimc_net.py --weights 3 --games 1000 --seed 2026 --processes 2 --json r.json
    python benchmarks/pimc_net.py --policy ppo:path=runs/ppo_2p/policy.npz --weights 3 --games 400
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    from allfives_env.core.rules import Rules
    from allfives_env.evaluation import evaluate

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--weights", type=float, nargs="+", default=[1.0], help="policy weights to try (points per nat)")
    p.add_argument("--policy", default="ppo-2p", help="the policy agent whose preferences join the prior (default ppo-2p)")
    p.add_argument("--samples", type=int, default=200, help="guesses per searched move, both agents (default 200)")
    p.add_argument("--players", type=int, default=2, help="players (default 2; give a --policy for that count)")
    p.add_argument("--games", type=int, default=200, help="games per weight (default 200)")
    p.add_argument("--seed", type=int, default=2026, help="the deals' seed (default 2026)")
    p.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--json", help="also write the rows to this JSON file")
    args = p.parse_args(argv)
    rules = Rules(num_players=args.players)
    base = f"pimc:samples={args.samples}"
    print("| policy weight | games | win rate of pimc-net [95% CI] | points/hand [95% CI] | ms/move pimc-net | "
          "ms/move pimc | wall |\n|---:|---:|---|---|---:|---:|---:|", flush=True)
    rows = []
    for w in args.weights:
        spec = f"pimc-net:samples={args.samples},policy={args.policy},policy_weight={w}"
        t0 = time.perf_counter()
        m = evaluate([spec, base], rules, games=args.games, seed=args.seed, processes=args.processes, progress=False)
        wall = time.perf_counter() - t0
        row = {"policy_weight": w, "spec": spec, "opponent": base, "games": m.games, "seed": args.seed,
               "win_rate": m.win_rate, "win_rate_ci": list(m.win_rate_ci), "points_per_hand": m.points_per_hand,
               "points_per_hand_ci": list(m.points_per_hand_ci), "think_ms": list(m.think_ms),
               "wall_seconds": round(wall, 1)}
        rows.append(row)
        lo, hi = m.win_rate_ci
        plo, phi = m.points_per_hand_ci
        print(f"| {w:g} | {m.games} | {m.win_rate:.1%} [{lo:.1%}, {hi:.1%}] | {m.points_per_hand:+.2f} "
              f"[{plo:+.2f}, {phi:+.2f}] | {m.think_ms[0]:.2f} | {m.think_ms[1]:.2f} | {wall:.0f} s |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
