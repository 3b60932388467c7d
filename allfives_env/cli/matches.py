"""The commands about agents: ``agents`` lists them; ``evaluate``, ``tournament`` and ``compare`` measure them
(a parser and a runner each).

They run :mod:`allfives_env.evaluation`; each ``add_*_parser`` adds its command to the ``allfives``
subparsers and sets ``handler``, the function that runs it and returns the exit status.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..agents.registry import describe_agents, has_batch_twin
from ..evaluation import (
    MAX_BOOTSTRAP,
    MAX_GAMES,
    MAX_MOVE_TIME_LIMIT,
    MIN_MOVE_TIME_LIMIT,
    EvaluationError,
    compare,
    evaluate,
    format_comparison,
    format_match,
    format_tournament,
    save_csv,
    save_json,
    save_sample_games,
    tournament,
)
from ..evaluation.checks import check_move_time_limit
from ..evaluation.statistics import check_prior
from ..paths import check_output
from .options import add_shared_options, int_type, read_float, rules_for, shorten

__all__ = ["add_agents_parser", "add_compare_parser", "add_evaluate_parser", "add_tournament_parser"]

#: ``evaluate``'s games unless told otherwise, in all.
MATCH_GAMES = 1000
#: ``tournament``'s games unless told otherwise, per pair of agents.
PAIR_GAMES = 400
#: Bootstrap resamples for the rating intervals unless told otherwise.
BOOTSTRAP = 1000
#: Virtual drawn games per pair in the rating fit unless told otherwise.
PRIOR = 1.0
#: How many games ``--save-games`` saves unless told otherwise, and the most it may be asked for.
SAVE_COUNT, MAX_SAVE_COUNT = 2, 10_000
#: Worker processes allowed per CPU of the machine it runs on (more only queue up).
PROCESSES_PER_CPU = 4


def _prior_type(text: str) -> float:
    """``--prior``: a finite number >= 0 (:func:`~allfives_env.evaluation.statistics.check_prior`)."""
    value = read_float(text, "give a finite number >= 0")
    try:
        return check_prior(value)
    except EvaluationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seconds_type(text: str) -> float:
    """``--move-time-limit``: seconds, checked by :func:`~allfives_env.evaluation.checks.check_move_time_limit`."""
    allowed = f"give a number of seconds from {MIN_MOVE_TIME_LIMIT:g} to {MAX_MOVE_TIME_LIMIT:g}"
    value = read_float(text, allowed)
    try:
        return check_move_time_limit(value)
    except EvaluationError as exc:
        if MIN_MOVE_TIME_LIMIT <= value <= MAX_MOVE_TIME_LIMIT:  # in range: the platform cannot keep a limit
            raise argparse.ArgumentTypeError(str(exc)) from None
        raise argparse.ArgumentTypeError(f"{shorten(text)} is out of range: {allowed}") from None


def _add_run_options(p: argparse.ArgumentParser, games_help: str, games_default: int) -> None:
    """The options of a run of games: the shared ones, ``--games``, ``--processes`` and the outputs."""

    def add_games(p: argparse.ArgumentParser) -> None:
        p.add_argument("--games", type=int_type(1, MAX_GAMES, f"an integer from 1 to {MAX_GAMES}"),
                       default=games_default, help=f"{games_help} (default {games_default})")

    add_shared_options(p, seeds="the deals and the agents", before_seed=add_games)
    limit = PROCESSES_PER_CPU * max(1, os.cpu_count() or 1)
    p.add_argument("--processes",
                   type=int_type(1, limit, f"an integer from 1 to {limit} ({PROCESSES_PER_CPU} x the CPUs here)"),
                   default=1, help="worker processes (default 1); results do not depend on it")
    p.add_argument("--move-time-limit", type=_seconds_type, default=None, metavar="SECONDS",
                   help="stop the run with an error naming the agent, seat, move and seeds if any agent takes "
                        "longer than this over one move (default: no limit)")
    p.add_argument("--json", metavar="PATH", help="save the result as JSON (for allfives compare)")
    p.add_argument("--csv", metavar="PATH", help="save the result tables as CSV")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _check_outputs(args: argparse.Namespace) -> None:
    check_output(args.json, "--json")
    check_output(args.csv, "--csv")


def _save_outputs(result: Any, args: argparse.Namespace) -> None:
    if args.json:
        print(f"JSON written to {save_json(result, args.json)}")
    if args.csv:
        print("CSV written to " + ", ".join(str(p) for p in save_csv(result, args.csv)))


def add_evaluate_parser(sub: Any) -> None:
    """``allfives evaluate``: a duplicate-deal match-up of the first agent against the others."""
    p = sub.add_parser("evaluate", help="a duplicate-deal match-up: win rate and points per hand with 95%% CIs",
                       description="Play the same deals with the agents in every seat order and report the first "
                                   "agent's results. One agent per side, or two for 'the first against a field of "
                                   "the second' with 3 players or 4 cut-throat.")
    p.add_argument("agents", nargs="+", metavar="AGENT", help="agent specs, e.g. greedy or pimc:samples=50")
    _add_run_options(p, "total games, rounded up to whole duplicate sets", MATCH_GAMES)
    p.add_argument("--balanced", action="store_true",
                   help="with 2 agents and 3+ cut-throat players, also play the second against a field of the first")
    p.add_argument("--save-games", metavar="DIR",
                   help="also save the first games of the match-up as replays in DIR (watch: allfives replay F --html)")
    p.add_argument("--save-count", type=int_type(1, MAX_SAVE_COUNT, f"an integer from 1 to {MAX_SAVE_COUNT}"),
                   default=None, metavar="N", help=f"how many games --save-games saves (default {SAVE_COUNT})")
    p.set_defaults(handler=_evaluate)


def _evaluate(args: argparse.Namespace) -> int:
    rules = rules_for(args)
    _check_outputs(args)
    if args.save_count is not None and not args.save_games:
        raise EvaluationError("--save-count needs --save-games DIR (where to save the games)")
    check_output(args.save_games, "--save-games", folder=True)
    if args.balanced and (len(args.agents) != 2 or rules.partnership or rules.num_players < 3):
        raise EvaluationError(
            "--balanced needs 2 agents and 3 players or 4 cut-throat (the first against a field of the second, "
            "then the other way round)")
    result = evaluate(args.agents, rules, games=args.games, seed=args.seed, processes=args.processes,
                      progress=not args.no_progress, balanced=args.balanced, move_time_limit=args.move_time_limit)
    print(format_match(result))
    if args.save_games:
        count = SAVE_COUNT if args.save_count is None else args.save_count
        paths = save_sample_games(args.agents, rules, args.save_games, count, seed=args.seed, balanced=args.balanced)
        print(f"{len(paths)} sample games saved as replays in {Path(args.save_games)}/ (watch one: allfives replay "
              f"{paths[0]} --html game.html)")
    _save_outputs(result, args)
    return 0


def add_tournament_parser(sub: Any) -> None:
    """``allfives tournament``: a round robin with Bradley-Terry ratings."""
    p = sub.add_parser("tournament", help="every pair of agents, Bradley-Terry ratings and pairwise win rates",
                       description="A round robin on duplicate deals; ratings on the Elo scale with random "
                                   "(else the first agent) at 0 and bootstrap 95% intervals.")
    p.add_argument("agents", nargs="+", metavar="AGENT", help="agent specs, at least 2")
    _add_run_options(p, "games per pair, rounded up to whole duplicate sets", PAIR_GAMES)
    p.add_argument("--bootstrap", type=int_type(0, MAX_BOOTSTRAP, f"an integer from 0 to {MAX_BOOTSTRAP}"),
                   default=BOOTSTRAP,
                   help=f"bootstrap resamples for the rating intervals (default {BOOTSTRAP}, 0 = none)")
    p.add_argument("--prior", type=_prior_type, default=PRIOR,
                   help=f"virtual drawn games per pair in the rating fit, so unbeaten records stay finite: a "
                        f"finite number >= 0 (default {PRIOR:g}; 0 = the plain fit, which fails on unbeaten records)")
    p.set_defaults(handler=_tournament)


def _tournament(args: argparse.Namespace) -> int:
    rules = rules_for(args)
    _check_outputs(args)
    result = tournament(args.agents, rules, games_per_pair=args.games, seed=args.seed, processes=args.processes,
                        progress=not args.no_progress, bootstrap=args.bootstrap, prior=args.prior,
                        move_time_limit=args.move_time_limit)
    print(format_tournament(result))
    _save_outputs(result, args)
    return 0


def add_compare_parser(sub: Any) -> None:
    """``allfives compare A B``: two saved results side by side."""
    p = sub.add_parser("compare", help="compare two saved results (JSON from --json)")
    p.add_argument("a")
    p.add_argument("b")
    p.set_defaults(handler=_compare)


def _compare(args: argparse.Namespace) -> int:
    comparison = compare(args.a, args.b)
    print(f"a = {args.a}\nb = {args.b}")
    print(format_comparison(comparison))
    return 0


def add_agents_parser(sub: Any) -> None:
    """``allfives agents``: the registered agents, read from the registry so that the list cannot drift."""
    p = sub.add_parser("agents", help="list the registered agents (the names evaluate, tournament and play take)",
                       description="List the registered agents with what each does; 'vector env' marks those with "
                                   "a batch twin, which the vector env and vec_env: batch training can seat as "
                                   "opponents.")
    p.set_defaults(handler=_agents)


def _agents(args: argparse.Namespace) -> int:
    described = describe_agents()
    width = max(map(len, described), default=0)
    for name, description in described.items():
        marker = " [vector env]" if has_batch_twin(name) else ""
        print(f"{name:<{width}}  {description}{marker}")
    return 0
