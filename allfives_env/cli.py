"""The ``allfives`` command line: a seeded demo game, replay verification, the observation layout, and
the evaluation harness.

``allfives demo --seed 7`` plays a game between uniformly random players and prints it move by move,
with the table drawn at the end of every hand. ``allfives replay FILE`` re-simulates a saved replay and
says whether every event follows from the rules. ``allfives layout`` prints the observation slices.

``allfives evaluate greedy random --games 2000`` plays a duplicate-deal match-up and reports the first
agent's win rate and points per hand with 95% intervals; ``allfives tournament random greedy defensive``
plays every pair and prints Bradley-Terry ratings (Elo scale) and the pairwise win rates;
``allfives compare a.json b.json`` sets two saved results side by side. Agents are spec strings such as
``pimc:samples=50``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional, Sequence, TextIO

import numpy as np

from .core.errors import AllFivesError
from .core.game import Game
from .core.replay import load_replay, save_replay
from .core.rules import Rules
from .encoding import observation_table
from .narrate import Narrator
from .render import render_text


def _parse_rule(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--rule needs KEY=VALUE (e.g. hand_end=winner_takes), got {text!r}")
    key, value = text.split("=", 1)
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key.strip(), parsed


def run_demo(seed: int, rules: Rules, replay_path: Optional[str], quiet: bool, out: TextIO = sys.stdout) -> Game:
    """Play one seeded game between random players, printing it; returns the finished game."""
    game = Game(rules, seed)
    chooser = np.random.default_rng([seed, 1])  # the players' own generator, apart from the deal's
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


def _rules_for(args: argparse.Namespace) -> Rules:
    """Rules from ``--rule`` options, with ``--players`` and ``--partnership/--cut-throat`` on top."""
    options = dict(args.rule)
    if args.players is not None:
        options["num_players"] = args.players
    if args.partnership is not None:
        options["partnership"] = args.partnership
    return Rules.from_options(options)


def _add_player_options(p: argparse.ArgumentParser) -> None:
    """``--players`` and ``--partnership`` / ``--cut-throat`` (read by :func:`_rules_for`)."""
    p.add_argument("--players", type=int, default=None, help="number of players, 2-4 (default 2)")
    team = p.add_mutually_exclusive_group()
    team.add_argument("--partnership", dest="partnership", action="store_const", const=True, default=None,
                      help="4 players in teams 0+2 vs 1+3 (the 4-player default)")
    team.add_argument("--cut-throat", dest="partnership", action="store_const", const=False,
                      help="4 players, each for themselves")


def _add_run_options(p: argparse.ArgumentParser, games_help: str, games_default: int) -> None:
    _add_player_options(p)
    p.add_argument("--games", type=int, default=games_default, help=games_help)
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the agents (default 0)")
    p.add_argument("--processes", type=int, default=1, help="worker processes (default 1); results do not depend on it")
    p.add_argument("--rule", type=_parse_rule, action="append", default=[], metavar="KEY=VALUE",
                   help="a rules option, e.g. --rule hand_end=winner_takes (repeatable)")
    p.add_argument("--json", metavar="PATH", help="save the result as JSON (for allfives compare)")
    p.add_argument("--csv", metavar="PATH", help="save the result tables as CSV")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _save_outputs(result: Any, args: argparse.Namespace) -> None:
    from .evaluation import save_csv, save_json

    if args.json:
        print(f"JSON written to {save_json(result, args.json)}")
    if args.csv:
        print("CSV written to " + ", ".join(str(p) for p in save_csv(result, args.csv)))


def _run_evaluation_command(args: argparse.Namespace) -> None:
    from . import evaluation

    if args.command == "compare":
        comparison = evaluation.compare(args.a, args.b)
        print(f"a = {args.a}\nb = {args.b}")
        print(evaluation.format_comparison(comparison))
        return
    rules = _rules_for(args)
    if args.command == "evaluate":
        result = evaluation.evaluate(args.agents, rules, games=args.games, seed=args.seed, processes=args.processes,
                                     progress=not args.no_progress, balanced=args.balanced)
        print(evaluation.format_match(result))
        if args.save_games:
            paths = evaluation.save_sample_games(args.agents, rules, args.save_games, args.save_count, seed=args.seed,
                                                 balanced=args.balanced)
            print(f"{len(paths)} sample games saved as replays in {args.save_games}/ (watch one: allfives replay "
                  f"{paths[0]} --html game.html)")
    else:
        result = evaluation.tournament(args.agents, rules, games_per_pair=args.games, seed=args.seed,
                                       processes=args.processes, progress=not args.no_progress,
                                       bootstrap=args.bootstrap, prior=args.prior)
        print(evaluation.format_tournament(result))
    _save_outputs(result, args)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``allfives`` console script."""
    parser = argparse.ArgumentParser(prog="allfives", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="play and print a seeded game between random players")
    demo.add_argument("--seed", type=int, default=0, help="seed of the deal and of the random players (default 0)")
    demo.add_argument("--players", type=int, default=2, help="number of players, 2-4 (default 2)")
    demo.add_argument("--rule", type=_parse_rule, action="append", default=[], metavar="KEY=VALUE",
                      help="a rules option, e.g. --rule hand_end=winner_takes (repeatable)")
    demo.add_argument("--replay", metavar="PATH", help="write the game's replay JSON here")
    demo.add_argument("--quiet", action="store_true", help="print only the final position and result")
    rep = sub.add_parser("replay", help="verify a replay file by re-simulating it")
    rep.add_argument("path")
    rep.add_argument("--show", action="store_true", help="print the final position")
    rep.add_argument("--html", metavar="OUT.html",
                     help="also write a self-contained HTML viewer that steps through the game (works offline)")
    lay = sub.add_parser("layout", help="print the observation layout for some rules")
    lay.add_argument("--players", type=int, default=2)
    lay.add_argument("--rule", type=_parse_rule, action="append", default=[], metavar="KEY=VALUE")
    lay.add_argument("--action-features", action="store_true", help="with the per-placement features slice")
    play = sub.add_parser("play", help="play against agents or trained policies in the terminal",
                          description="Play All Fives in the terminal against registered agents or trained policies "
                                      "(ppo-2p, ppo:path=FILE.npz). Moves by number or name (6-4@E); the game is "
                                      "saved as a replay at the end or when stopped (q, Ctrl-C, end of input).")
    _add_player_options(play)
    play.add_argument("--opponents", nargs="+", default=["expert"], metavar="AGENT",
                      help="agent specs for the other seats in seat order, repeated if fewer (default expert)")
    play.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    play.add_argument("--seed", type=int, default=None, help="seed of the deals (default: a fresh one, printed)")
    play.add_argument("--rule", type=_parse_rule, action="append", default=[], metavar="KEY=VALUE",
                      help="a rules option, e.g. --rule target=150 (repeatable)")
    play.add_argument("--replay", default="allfives_game.json", metavar="PATH",
                      help="where to save the game (default allfives_game.json)")
    play.add_argument("--no-save", action="store_true", help="do not save the game")
    ev = sub.add_parser("evaluate", help="a duplicate-deal match-up: win rate and points per hand with 95%% CIs",
                        description="Play the same deals with the agents in every seat order and report the first "
                                    "agent's results. One agent per side, or two for 'the first against a field of "
                                    "the second' with 3 players or 4 cut-throat.")
    ev.add_argument("agents", nargs="+", metavar="AGENT", help="agent specs, e.g. greedy or pimc:samples=50")
    _add_run_options(ev, "total games, rounded up to whole duplicate sets (default 1000)", 1000)
    ev.add_argument("--balanced", action="store_true",
                    help="with 2 agents and 3+ cut-throat players, also play the second against a field of the first")
    ev.add_argument("--save-games", metavar="DIR",
                    help="also save the first games of the match-up as replays in DIR (watch: allfives replay F --html)")
    ev.add_argument("--save-count", type=int, default=2, metavar="N", help="how many games --save-games saves (default 2)")
    tour = sub.add_parser("tournament", help="every pair of agents, Bradley-Terry ratings and pairwise win rates",
                          description="A round robin on duplicate deals; ratings on the Elo scale with random "
                                      "(else the first agent) at 0 and bootstrap 95% intervals.")
    tour.add_argument("agents", nargs="+", metavar="AGENT", help="agent specs, at least 2")
    _add_run_options(tour, "games per pair, rounded up to whole duplicate sets (default 400)", 400)
    tour.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the rating intervals")
    tour.add_argument("--prior", type=float, default=1.0,
                      help="virtual drawn games per pair in the rating fit, so unbeaten records stay finite (default 1)")
    cmp_ = sub.add_parser("compare", help="compare two saved results (JSON from --json)")
    cmp_.add_argument("a")
    cmp_.add_argument("b")
    try:  # `allfives train`: training/ ships with the repository and needs the [train] extra to run
        from training.train import add_train_parser, run_train
    except ImportError:
        run_train = None
    else:
        add_train_parser(sub)
    try:  # `allfives train-rllib`: needs the [rllib] extra to run, not to be listed
        from training.rllib.train import add_train_rllib_parser, run_train_rllib
    except ImportError:
        run_train_rllib = None
    else:
        add_train_rllib_parser(sub)
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            rules = Rules.from_options(dict(args.rule), num_players=args.players)
            run_demo(args.seed, rules, args.replay, args.quiet)
        elif args.command == "replay":
            game = load_replay(args.path)
            print(f"{args.path}: valid replay, {game.hands_completed} hands, {len(game.events)} events, "
                  f"scores {game.scores}, winner {game.winner}")
            if args.show:
                print(render_text(game, 0))
            if args.html:
                from .viewer import write_replay_html

                write_replay_html(args.path, args.html)
                print(f"Viewer written to {args.html} (open it in any browser; it needs no network)")
        elif args.command == "play":
            from .play import play_terminal

            play_terminal(_rules_for(args), args.opponents, seat=args.seat, seed=args.seed,
                          replay_path=None if args.no_save else args.replay)
        elif args.command == "layout":
            print(observation_table(Rules.from_options(dict(args.rule), num_players=args.players),
                                    action_features=args.action_features))
        elif args.command == "train":
            return run_train(args)
        elif args.command == "train-rllib":
            return run_train_rllib(args)
        else:
            _run_evaluation_command(args)
    except AllFivesError as exc:
        print(f"allfives: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head & co.
        return 0
    except OSError as exc:  # a file that cannot be read or written
        print(f"allfives: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
