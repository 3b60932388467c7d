"""``pimc-net`` (pimc whose prior adds a trained policy's preferences) against ``pimc``.

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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # search_vs_pimc, run as a script


def main(argv: list[str] | None = None) -> int:
    from search_vs_pimc import HEADER, run_rows

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
    specs = [(f"{w:g}", f"pimc-net:samples={args.samples},policy={args.policy},policy_weight={w}") for w in args.weights]
    run_rows(specs, f"pimc:samples={args.samples}", args.players, args.games, [args.seed], args.processes, args.json,
             header=HEADER.replace("| agent |", "| policy weight |", 1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
