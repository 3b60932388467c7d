"""The ``allfives`` command line: a seeded demo game, replay verification, the observation layout, and
the evaluation harness.

``allfives demo --seed 7`` plays a game between uniformly random players and prints it move by move,
with the table drawn at the end of every hand. ``allfives replay FILE`` re-simulates a saved replay and
says whether every event follows from the rules. ``allfives layout`` prints the observation slices.

``allfives evaluate greedy random --games 2000`` plays a duplicate-deal match-up and reports the first
agent's win rate and points per hand with 95% intervals; ``allfives tournament random greedy defensive``
plays every pair and prints Bradley-Terry ratings (Elo scale) and the pairwise win rates;
``allfives compare a.json b.json`` sets two saved results side by side; ``allfives bench expert --track 2p``
runs the frozen bench protocol and writes a bench card. Agents are spec strings such as
``pimc:samples=50``; ``allfives agents`` lists the registered ones.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional, Sequence

from ..core.errors import AllFivesError
from .bench import add_bench_parser
from .nashconv import add_nashconv_parser
from .games import add_demo_parser, add_layout_parser, add_play_parser, add_replay_parser, run_demo
from .matches import add_agents_parser, add_compare_parser, add_evaluate_parser, add_tournament_parser
from .options import rules_from_options
from .serve import add_serve_parser
from ..plain_text import plain_text

__all__ = ["build_parser", "main", "rules_from_options", "run_demo"]

#: Exit statuses: done; refused (a bad argument, file or rule); stopped with Ctrl-C (128 + SIGINT).
EXIT_OK, EXIT_ERROR, EXIT_INTERRUPTED = 0, 2, 130
#: What to do when memory runs out (a huge --games or --bootstrap).
OUT_OF_MEMORY = "out of memory; ask for fewer games (--games) or resamples (--bootstrap)"


def build_parser() -> argparse.ArgumentParser:
    """The ``allfives`` parser: every command, each setting ``handler`` (args -> exit status)."""
    parser = argparse.ArgumentParser(prog="allfives", description=plain_text(__doc__ or ""),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for add_parser in (add_demo_parser, add_replay_parser, add_layout_parser, add_play_parser, add_agents_parser,
                       add_evaluate_parser,
                       add_tournament_parser, add_compare_parser, add_bench_parser, add_nashconv_parser, add_serve_parser,
                       _add_training_parsers):
        add_parser(sub)
    return parser


def _add_training_parsers(sub: Any) -> None:
    """``train`` and ``train-rllib``, from ``allfives_training/`` (it ships with the repository), where importable:
    running them needs the [train] / [rllib] extras, listing them does not."""
    try:
        from allfives_training.train import add_train_parser, run_train
    except ImportError:
        pass
    else:
        add_train_parser(sub).set_defaults(handler=run_train)
    try:
        from allfives_training.exploit import add_exploit_parser
    except ImportError:
        pass
    else:
        add_exploit_parser(sub)
    try:
        from allfives_training.rllib.train import add_train_rllib_parser, run_train_rllib
    except ImportError:
        pass
    else:
        add_train_rllib_parser(sub).set_defaults(handler=run_train_rllib)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``allfives`` console script: parse ``argv``, run the command, and turn every
    refusal into one ``allfives: error: ...`` line and an exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except BrokenPipeError:  # output piped into head & co.
        return EXIT_OK
    except KeyboardInterrupt:
        print("\nallfives: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (AllFivesError, OSError, MemoryError) as exc:  # OSError: a file that cannot be read or written
        message = OUT_OF_MEMORY if isinstance(exc, MemoryError) else _one_line(exc)
        print(f"allfives: error: {message}", file=sys.stderr)
        return EXIT_ERROR


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (a file name with a newline in it cannot split it)."""
    return str(exc).replace("\n", " ")
