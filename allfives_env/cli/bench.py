"""``allfives bench AGENT --track 2p|3p|4p [--quick] [--json FILE]``: the frozen bench protocol (see
:mod:`allfives_env.bench`), printed as a table and written as a bench card."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..bench import TRACKS, format_card, run_bench
from ..bench.protocol import MOVE_TIME_LIMIT, OPPONENTS
from ..paths import check_output
from .matches import PROCESSES_PER_CPU
from .options import int_type

__all__ = ["add_bench_parser"]


def add_bench_parser(sub: Any) -> None:
    """``allfives bench``: one agent through a track's frozen suite of deals and opponents."""
    p = sub.add_parser(
        "bench", help="the frozen bench: an agent against fixed opponents on fixed deals, a rating and a card",
        description=(f"Bench an agent (protocol 1): it plays every opponent ({', '.join(OPPONENTS)}) on the "
                     "track's frozen duplicate deals, with a move time limit of "
                     f"{MOVE_TIME_LIMIT:g} s (wall clock), and gets a win rate and points per hand against each (95% "
                     "intervals), a rating on the fixed scale (random = 0) and its think time per move. With "
                     "--json the card is written there and the run journalled beside it: the same command resumes "
                     "a run that stopped."))
    p.add_argument("agent", metavar="AGENT", help="an agent spec, e.g. expert, ppo-2p or ppo:path=runs/x/policy.npz")
    p.add_argument("--track", choices=list(TRACKS), default="2p",
                   help="2p (one against one), 3p (against two of each opponent) or 4p (the agent and its copy as "
                        "partners against each team); default 2p")
    p.add_argument("--quick", action="store_true",
                   help="the first deals only: a sanity check in about 2 minutes whose card never joins a leaderboard")
    limit = PROCESSES_PER_CPU * max(1, os.cpu_count() or 1)
    p.add_argument("--processes",
                   type=int_type(1, limit, f"an integer from 1 to {limit} ({PROCESSES_PER_CPU} x the CPUs here)"),
                   default=1, help="worker processes (default 1); results do not depend on it")
    p.add_argument("--json", metavar="FILE", help="write the bench card here (and journal the run in FILE.journal)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(handler=_bench)


def _bench(args: argparse.Namespace) -> int:
    check_output(args.json, "--json")
    card = run_bench(args.agent, args.track, quick=args.quick, json_path=args.json, processes=args.processes,
                     progress=not args.no_progress, log=lambda text: print(text, file=sys.stderr))
    print(format_card(card))
    if args.json:
        print(f"bench card written to {args.json}")
    return 0
