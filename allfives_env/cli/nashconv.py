"""``allfives nashconv AGENT ... [--cfr-iterations N] [--json FILE]``: exact exploitability on the miniature
(:mod:`allfives_env.openspiel.miniature`; the [openspiel] extra)."""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import time
from pathlib import Path
from typing import Any

from ..evaluation import EvaluationError
from ..paths import check_output
from .options import int_type

__all__ = ["add_nashconv_parser"]

#: The most CFR+ iterations one command runs (each walks the miniature's tree twice).
MAX_CFR_ITERATIONS = 100_000


def add_nashconv_parser(sub: Any) -> None:
    """``allfives nashconv``: each agent's exact NashConv on the miniature, and a CFR+ solution's."""
    p = sub.add_parser(
        "nashconv", help="exact exploitability (NashConv, in points) of agents on the solvable miniature",
        description="The miniature: 2 players, the double-three set, 2 tiles each, no draws, one hand, in points. "
                    "Each agent becomes a policy over every information state (random: uniform; others: their move, "
                    "reset with --seed there), and OpenSpiel computes its NashConv exactly. --cfr-iterations also "
                    "solves the miniature with OpenSpiel's CFR+ and reports the solution's NashConv. Needs the "
                    "[openspiel] extra.")
    p.add_argument("agents", nargs="*", metavar="AGENT", help="agent specs, e.g. random greedy expert pimc")
    p.add_argument("--cfr-iterations", type=int_type(1, MAX_CFR_ITERATIONS, f"an integer from 1 to {MAX_CFR_ITERATIONS}"),
                   default=None, metavar="N", help="also solve with CFR+ for N iterations")
    p.add_argument("--seed", type=int_type(0, 2**32 - 1, "an integer from 0 to 2**32-1"), default=0,
                   help="the seed each agent is reset with at every information state (default 0)")
    p.add_argument("--save-policy", metavar="FILE",
                   help="with --cfr-iterations: write the CFR+ average policy as a tabular policy file (what "
                        "miniature-cfr plays, allfives_env/policies/miniature_cfr.json)")
    p.add_argument("--json", metavar="FILE", help="write the results as JSON")
    p.set_defaults(handler=_nashconv)


def _nashconv(args: argparse.Namespace) -> int:
    check_output(args.json, "--json")
    check_output(args.save_policy, "--save-policy")
    if not args.agents and args.cfr_iterations is None:
        raise EvaluationError("nashconv: give at least one AGENT, or --cfr-iterations N to solve the miniature")
    if args.save_policy and args.cfr_iterations is None:
        raise EvaluationError("nashconv: --save-policy needs --cfr-iterations N (the solution it saves)")
    from ..openspiel.miniature import MINIATURE, agent_policy, miniature_game, nash_conv, solution_table, solve

    game = miniature_game()
    rows = []
    for spec in args.agents:
        started = time.perf_counter()
        value = nash_conv(game, agent_policy(game, spec, args.seed))
        rows.append({"agent": spec, "nash_conv": value, "seconds": round(time.perf_counter() - started, 1)})
        print(f"{spec:<24} NashConv {value:.4f} points")
    out: dict[str, Any] = {"format": "allfives-nashconv", "version": 1, "game": MINIATURE, "seed": args.seed,
                           "agents": rows, "date": datetime.date.today().isoformat(), "machine": platform.machine(),
                           "python": f"{platform.python_implementation()} {platform.python_version()}"}
    if args.cfr_iterations is not None:
        solution, value, seconds = solve(game, args.cfr_iterations)
        out["cfr_plus"] = {"iterations": args.cfr_iterations, "nash_conv": value, "seconds": round(seconds, 1)}
        print(f"{'CFR+ x ' + str(args.cfr_iterations):<24} NashConv {value:.4f} points ({seconds:.0f} s)")
        if args.save_policy:
            from ..openspiel.tabular import write_tabular_policy

            write_tabular_policy(args.save_policy, solution_table(solution), {
                "game": MINIATURE, "solver": "OpenSpiel CFR+ (cfr.CFRPlusSolver), average policy",
                "iterations": args.cfr_iterations, "nash_conv": value})
            print(f"policy written to {args.save_policy}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
        print(f"JSON written to {args.json}")
    return 0

