"""The commands about one game: ``demo``, ``replay``, ``layout`` and ``play`` (a parser and a runner each).

Each ``add_*_parser`` adds its command to the ``allfives`` subparsers and sets ``handler``, the function
that runs it and returns the exit status.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional, TextIO

import numpy as np

from ..core.game import Game
from ..core.replay import load_replay, save_replay
from ..core.rules import Rules
from ..core.seeds import check_seed
from ..encoding import OBS_LAYOUT_VERSION, OBS_VERSIONS, observation_table
from ..narrate import Narrator
from ..paths import check_output
from ..play import DEFAULT_REPLAY, GAMES_FOLDER, play_terminal
from ..render import render_text
from ..viewer import write_replay_html
from .options import add_shared_options, rules_for

__all__ = ["add_demo_parser", "add_layout_parser", "add_play_parser", "add_replay_parser", "run_demo"]

#: The demo players choose with the seed's second stream, apart from the deal's.
PLAYERS_STREAM = 1


def run_demo(seed: int, rules: Rules, replay_path: Optional[str], quiet: bool, out: Optional[TextIO] = None) -> Game:
    """Play one seeded game between random players, printing it; returns the finished game."""
    out = sys.stdout if out is None else out
    seed = check_seed(seed, allow_none=False)
    check_output(replay_path, "--replay")
    game = Game(rules, seed)
    chooser = np.random.default_rng([seed, PLAYERS_STREAM])
    names = [f"player_{s}" for s in range(rules.num_players)]
    narrator = Narrator(game, names, out, quiet=quiet)
    while not game.over:
        legal = game.legal
        narrator.step(legal[int(chooser.integers(len(legal)))])
    print("", file=out)
    print(render_text(game, 0, names), file=out)
    if game.winner is None:
        print(f"Result after {game.hands_completed} hands: draw, scores {game.scores}", file=out)
    else:
        who = f"team {game.winner}+{game.winner + 2}" if rules.partnership else names[game.winner]
        print(f"Result after {game.hands_completed} hands: {who} wins with scores {game.scores}", file=out)
    if replay_path:
        save_replay(game, replay_path, seed=seed)
        print(f"Replay written to {replay_path} (verify it with: allfives replay {replay_path})", file=out)
    return game


def add_demo_parser(sub: Any) -> None:
    """``allfives demo``: a seeded game between random players, printed."""
    p = sub.add_parser("demo", help="play and print a seeded game between random players")
    add_shared_options(p, seeds="the deal and of the random players", seed_first=True)
    p.add_argument("--replay", metavar="PATH", help="write the game's replay JSON here")
    p.add_argument("--quiet", action="store_true", help="print only the final position and result")
    p.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    run_demo(args.seed, rules_for(args), args.replay, args.quiet)
    return 0


def add_replay_parser(sub: Any) -> None:
    """``allfives replay FILE``: re-simulate a saved game, optionally show it or write its HTML viewer."""
    p = sub.add_parser("replay", help="verify a replay file by re-simulating it")
    p.add_argument("path")
    p.add_argument("--show", action="store_true", help="print the final position")
    p.add_argument("--html", metavar="OUT.html",
                   help="also write a self-contained HTML viewer that steps through the game (works offline)")
    p.set_defaults(handler=_replay)


def _replay(args: argparse.Namespace) -> int:
    game = load_replay(args.path)
    print(f"{args.path}: valid replay, {game.hands_completed} hands, {len(game.events)} events, "
          f"scores {game.scores}, winner {game.winner}")
    if args.show:
        print(render_text(game, 0))
    if args.html:
        write_replay_html(args.path, args.html)
        print(f"Viewer written to {args.html} (open it in any browser; it needs no network)")
    return 0


def add_layout_parser(sub: Any) -> None:
    """``allfives layout``: the observation slices for some rules."""
    p = sub.add_parser("layout", help="print the observation layout for some rules")
    add_shared_options(p, "max_pip=9")
    p.add_argument("--action-features", action="store_true", help="with the per-placement features slice")
    p.add_argument("--obs-version", type=int, choices=OBS_VERSIONS, default=OBS_LAYOUT_VERSION,
                   help="the observation version (default %(default)s; 2 adds needs, pips, bonus and history)")
    p.set_defaults(handler=_layout)


def _layout(args: argparse.Namespace) -> int:
    print(observation_table(rules_for(args), action_features=args.action_features, obs_version=args.obs_version))
    return 0


def add_play_parser(sub: Any) -> None:
    """``allfives play``: a person against agents in the terminal (:mod:`allfives_env.play`)."""
    p = sub.add_parser("play", help="play against agents or trained policies in the terminal",
                       description="Play All Fives in the terminal against registered agents or trained policies "
                                   "(ppo-2p, ppo:path=FILE.npz). Moves by number or name (6-4@E); the game is "
                                   "saved as a replay at the end or when stopped (q, Ctrl-C, end of input).")
    add_shared_options(p, "target=150", seeds="the deals", seed_default=None, before_seed=_add_seat_options)
    p.add_argument("--save", "--replay", dest="save", default=None, metavar="PATH",
                   help=f"where to save the game (default: a new file under {GAMES_FOLDER}/, named by the time and "
                        f"the seed)")
    p.add_argument("--no-save", action="store_true", help="do not save the game")
    p.set_defaults(handler=_play)


def _add_seat_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--opponents", nargs="+", default=["expert"], metavar="AGENT",
                   help="agent specs for the other seats in seat order, repeated if fewer (default expert)")
    p.add_argument("--seat", type=int, default=0, help="your seat (default 0)")


def _play(args: argparse.Namespace) -> int:
    play_terminal(rules_for(args), args.opponents, seat=args.seat, seed=args.seed,
                  replay_path=None if args.no_save else (DEFAULT_REPLAY if args.save is None else args.save))
    return 0
