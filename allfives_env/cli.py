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
import math
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, TextIO

import numpy as np

from .core.errors import AllFivesError, RulesError
from .core.game import Game
from .core.replay import load_replay, save_replay
from .core.rules import Rules
from .core.seeds import MAX_SEED, check_seed
from .encoding import observation_table
from .narrate import Narrator
from .render import render_text


#: The most rule value characters (no rules option needs more; a longer one is a paste gone wrong).
_RULE_VALUE_MAX = 200


def _short(text: str, limit: int = 40) -> str:
    """``text`` for a message: at most ``limit`` characters of its repr."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def _int_type(low: int, high: int, allowed: str) -> Callable[[str], int]:
    """An argparse type: an integer from ``low`` to ``high``; errors say ``allowed``."""

    def parse(text: str) -> int:
        stripped = text.strip()
        if len(stripped) > 100 and stripped.lstrip("+-").isdecimal():  # int() would refuse over 4300 digits
            raise argparse.ArgumentTypeError(f"{_short(text)} is out of range: give {allowed}")
        try:
            value = int(stripped)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{_short(text)} is not an integer: give {allowed}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{_short(str(value))} is out of range: give {allowed}")
        return value

    return parse


_seed_type = _int_type(0, MAX_SEED, f"an integer from 0 to 2**63-1 ({MAX_SEED})")


def _prior_type(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_short(text)} is not a number: give a finite number >= 0") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not allowed: give a finite number >= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not allowed: give a finite number >= 0 (0 = no prior)")
    return value


def _parse_rule(text: str) -> tuple[str, Any]:
    """``--rule KEY=VALUE``: VALUE read as JSON (a number, true/false, null) where it parses, else a word."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--rule needs KEY=VALUE (e.g. hand_end=winner_takes), got {_short(text)}")
    key, value = text.split("=", 1)
    key = key.strip()
    if len(value) > _RULE_VALUE_MAX:
        raise argparse.ArgumentTypeError(f"--rule {_short(key)}: the value is {len(value)} characters long; "
                                         f"a rules value is a number, true/false, null or a word")
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value.strip()
    except (ValueError, RecursionError) as exc:  # e.g. more digits than int() reads, nesting too deep
        raise argparse.ArgumentTypeError(f"--rule {_short(key)}: cannot read the value ({exc})") from None
    if parsed is not None and not isinstance(parsed, (str, int, float, bool)):
        raise argparse.ArgumentTypeError(f"--rule {_short(key)}={value}: a rules value is a number, true/false, "
                                         f"null or a word, not a JSON {type(parsed).__name__}")
    return key, parsed


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


def rules_from_options(rule_options: Sequence[tuple[str, Any]], players: Optional[int],
                       partnership: Optional[bool]) -> Rules:
    """The rules of a command from its ``--rule`` options, ``--players`` and ``--partnership`` /
    ``--cut-throat`` (None: not given): one rule for every command.

    A flag and a ``--rule`` that say different things are an error naming both; otherwise whichever is
    given counts (``--rule num_players=4`` alone means 4 players). A team flag without any player count
    means 4 players, the only count that has teams to choose. A ``--rule`` given twice with different
    values is an error too.
    """
    options: dict[str, Any] = {}
    for key, value in rule_options:
        if key in options and options[key] != value:
            raise RulesError(f"--rule {key} is given twice, as {key}={_json_text(options[key])} and "
                             f"{key}={_json_text(value)}: give it once")
        options[key] = value
    if players is not None:
        if "num_players" in options and options["num_players"] != players:
            raise RulesError(f"--players {players} contradicts --rule num_players={_json_text(options['num_players'])}: "
                             "give one of them (or the same value)")
        options.setdefault("num_players", players)
    if partnership is not None:
        flag = "--partnership" if partnership else "--cut-throat"
        rule = options.get("partnership")
        if rule not in (None, "auto") and rule != partnership:
            raise RulesError(f"{flag} contradicts --rule partnership={_json_text(rule)}: give one of them "
                             "(or the same value)")
        options["partnership"] = partnership
        options.setdefault("num_players", 4)
    return Rules.from_options(options)


def _rules_for(args: argparse.Namespace) -> Rules:
    """Rules from ``--rule`` options with ``--players`` and ``--partnership/--cut-throat`` (see
    :func:`rules_from_options`)."""
    return rules_from_options(args.rule, args.players, args.partnership)


def _check_output(path: Optional[str], option: str, folder: bool = False) -> None:
    """Fail now, before any game is played, when ``path`` cannot be written: a directory where a file is
    asked for (or a file where a folder is), or a parent directory that does not exist (OSErrors)."""
    if not path:
        return
    p = Path(path)
    if folder:
        if p.exists() and not p.is_dir():
            raise NotADirectoryError(f"{option} {path}: not a directory (give a folder for the games)")
        return
    if p.is_dir():
        raise IsADirectoryError(f"{option} {path}: is a directory; give a file path")
    if not p.parent.is_dir():
        raise FileNotFoundError(f"{option} {path}: the directory {p.parent} does not exist")
    if not os.access(p.parent, os.W_OK):
        raise PermissionError(f"{option} {path}: the directory {p.parent} is not writable")


def run_demo(seed: int, rules: Rules, replay_path: Optional[str], quiet: bool, out: Optional[TextIO] = None) -> Game:
    """Play one seeded game between random players, printing it; returns the finished game."""
    out = sys.stdout if out is None else out
    seed = check_seed(seed, allow_none=False)
    _check_output(replay_path, "--replay")
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


def _add_player_options(p: argparse.ArgumentParser, rule_help: str = "e.g. --rule hand_end=winner_takes") -> None:
    """``--players``, ``--partnership`` / ``--cut-throat`` and ``--rule`` (read by :func:`_rules_for`)."""
    p.add_argument("--players", type=int, default=None,
                   help="number of players, 2-4 (default 2; the same as --rule num_players=N)")
    team = p.add_mutually_exclusive_group()
    team.add_argument("--partnership", dest="partnership", action="store_const", const=True, default=None,
                      help="4 players in teams 0+2 vs 1+3 (the 4-player default)")
    team.add_argument("--cut-throat", dest="partnership", action="store_const", const=False,
                      help="4 players (or --players 3), each for themselves")
    p.add_argument("--rule", type=_parse_rule, action="append", default=[], metavar="KEY=VALUE",
                   help=f"a rules option, {rule_help} (repeatable; one that contradicts --players or "
                        "--partnership/--cut-throat is an error)")


def _processes_limit() -> int:
    return 4 * max(1, os.cpu_count() or 1)


def _add_run_options(p: argparse.ArgumentParser, games_help: str, games_default: int) -> None:
    from .evaluation import MAX_GAMES

    _add_player_options(p)
    p.add_argument("--games", type=_int_type(1, MAX_GAMES, f"an integer from 1 to {MAX_GAMES}"), default=games_default,
                   help=games_help)
    p.add_argument("--seed", type=_seed_type, default=0, help="seed of the deals and the agents, 0 to 2**63-1 (default 0)")
    limit = _processes_limit()
    p.add_argument("--processes", type=_int_type(1, limit, f"an integer from 1 to {limit} (4 x the CPUs here)"),
                   default=1, help="worker processes (default 1); results do not depend on it")
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
    _check_output(args.json, "--json")
    _check_output(args.csv, "--csv")
    if args.command == "evaluate":
        if args.save_count is not None and not args.save_games:
            raise evaluation.EvaluationError("--save-count needs --save-games DIR (where to save the games)")
        _check_output(args.save_games, "--save-games", folder=True)
        if args.balanced and (len(args.agents) != 2 or rules.partnership or rules.num_players < 3):
            raise evaluation.EvaluationError(
                "--balanced needs 2 agents and 3 players or 4 cut-throat (the first against a field of the second, "
                "then the other way round)")
        result = evaluation.evaluate(args.agents, rules, games=args.games, seed=args.seed, processes=args.processes,
                                     progress=not args.no_progress, balanced=args.balanced)
        print(evaluation.format_match(result))
        if args.save_games:
            count = 2 if args.save_count is None else args.save_count
            paths = evaluation.save_sample_games(args.agents, rules, args.save_games, count, seed=args.seed,
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
    demo.add_argument("--seed", type=_seed_type, default=0,
                      help="seed of the deal and of the random players, 0 to 2**63-1 (default 0)")
    _add_player_options(demo)
    demo.add_argument("--replay", metavar="PATH", help="write the game's replay JSON here")
    demo.add_argument("--quiet", action="store_true", help="print only the final position and result")
    rep = sub.add_parser("replay", help="verify a replay file by re-simulating it")
    rep.add_argument("path")
    rep.add_argument("--show", action="store_true", help="print the final position")
    rep.add_argument("--html", metavar="OUT.html",
                     help="also write a self-contained HTML viewer that steps through the game (works offline)")
    lay = sub.add_parser("layout", help="print the observation layout for some rules")
    _add_player_options(lay, "e.g. --rule max_pip=9")
    lay.add_argument("--action-features", action="store_true", help="with the per-placement features slice")
    play = sub.add_parser("play", help="play against agents or trained policies in the terminal",
                          description="Play All Fives in the terminal against registered agents or trained policies "
                                      "(ppo-2p, ppo:path=FILE.npz). Moves by number or name (6-4@E); the game is "
                                      "saved as a replay at the end or when stopped (q, Ctrl-C, end of input).")
    _add_player_options(play, "e.g. --rule target=150")
    play.add_argument("--opponents", nargs="+", default=["expert"], metavar="AGENT",
                      help="agent specs for the other seats in seat order, repeated if fewer (default expert)")
    play.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    play.add_argument("--seed", type=_seed_type, default=None,
                      help="seed of the deals, 0 to 2**63-1 (default: a fresh one, printed)")
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
    ev.add_argument("--save-count", type=_int_type(1, 10_000, "an integer from 1 to 10000"), default=None, metavar="N",
                    help="how many games --save-games saves (default 2)")
    tour = sub.add_parser("tournament", help="every pair of agents, Bradley-Terry ratings and pairwise win rates",
                          description="A round robin on duplicate deals; ratings on the Elo scale with random "
                                      "(else the first agent) at 0 and bootstrap 95% intervals.")
    tour.add_argument("agents", nargs="+", metavar="AGENT", help="agent specs, at least 2")
    _add_run_options(tour, "games per pair, rounded up to whole duplicate sets (default 400)", 400)
    from .evaluation import MAX_BOOTSTRAP

    tour.add_argument("--bootstrap", type=_int_type(0, MAX_BOOTSTRAP, f"an integer from 0 to {MAX_BOOTSTRAP}"),
                      default=1000, help="bootstrap resamples for the rating intervals (default 1000, 0 = none)")
    tour.add_argument("--prior", type=_prior_type, default=1.0,
                      help="virtual drawn games per pair in the rating fit, so unbeaten records stay finite: a "
                           "finite number >= 0 (default 1; 0 = the plain fit, which fails on unbeaten records)")
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
            run_demo(args.seed, _rules_for(args), args.replay, args.quiet)
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
            print(observation_table(_rules_for(args), action_features=args.action_features))
        elif args.command == "train":
            return run_train(args)
        elif args.command == "train-rllib":
            return run_train_rllib(args)
        else:
            _run_evaluation_command(args)
    except AllFivesError as exc:
        print(f"allfives: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head & co.
        return 0
    except OSError as exc:  # a file that cannot be read or written
        print(f"allfives: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nallfives: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print("allfives: error: out of memory; ask for fewer games (--games) or resamples (--bootstrap)",
              file=sys.stderr)
        return 2
    return 0


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (a file name with a newline in it cannot split it)."""
    return " ".join(str(exc).split("\n"))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
