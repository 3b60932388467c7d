"""The ``allfives`` command line: a seeded demo game, replay verification and the observation layout.

``allfives demo --seed 7`` plays a game between uniformly random players and prints it move by move,
with the table drawn at the end of every hand. ``allfives replay FILE`` re-simulates a saved replay and
says whether every event follows from the rules. ``allfives layout`` prints the observation slices.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Optional, Sequence, TextIO

import numpy as np

from .core.errors import AllFivesError
from .core.events import Draw, GameOver, HandStart, Pass, Play, Settlement
from .core.game import Game
from .core.replay import load_replay, save_replay
from .core.rules import Rules
from .encoding import observation_table
from .render import layout_lines, render_text


def _parse_rule(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--rule needs KEY=VALUE (e.g. hand_end=winner_takes), got {text!r}")
    key, value = text.split("=", 1)
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key.strip(), parsed


def _describe(event: Any, game: Game, names: list[str]) -> Optional[str]:
    tiles = game.tiles
    if type(event) is Play:
        score = f", scores {event.points}" if event.points else ""
        return f"{names[event.seat]} plays {tiles.name(event.tile)}@{'WENS'[event.slot]} (count {event.count}{score})"
    if type(event) is Draw:
        return f"{names[event.seat]} draws {tiles.name(event.tile)}"
    if type(event) is Pass:
        return f"{names[event.seat]} passes"
    if type(event) is HandStart:
        return f"--- hand {event.hand}: {names[event.leader]} leads; scores {list(event.scores)}"
    if type(event) is Settlement:
        return f"hand {event.hand} ends ({event.result}): pips {list(event.pips)}, changes {list(event.deltas)}, scores {list(event.scores)}"
    if type(event) is GameOver:
        return None
    return str(event)


def run_demo(seed: int, rules: Rules, replay_path: Optional[str], quiet: bool, out: TextIO = sys.stdout) -> Game:
    """Play one seeded game between random players, printing it; returns the finished game."""
    game = Game(rules, seed)
    chooser = np.random.default_rng([seed, 1])  # the players' own generator, apart from the deal's
    names = [f"player_{s}" for s in range(rules.num_players)]
    printed = 0
    while True:
        if not quiet:
            for event in game.events[printed:]:
                line = _describe(event, game, names)
                if line:
                    print(line, file=out)
        printed = len(game.events)
        if game.over:
            break
        legal = game.legal
        action = legal[int(chooser.integers(len(legal)))]
        hand = game.hand_number
        probe = None if quiet else game.clone()
        game.step(action)
        if probe is not None and (game.hand_number != hand or game.over):
            # print up to the settlement, then the table as it stood when the hand ended
            probe.stop_after_hand = True
            probe.step(action)
            for event in probe.events[printed:]:
                line = _describe(event, probe, names)
                if line:
                    print(line, file=out)
            printed += sum(1 for e in probe.events[printed:] if type(e) is not GameOver)
            table = "\n".join("  " + line for line in layout_lines(probe))
            print("Table at the end of the hand:\n" + table, file=out)
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
    lay = sub.add_parser("layout", help="print the observation layout for some rules")
    lay.add_argument("--players", type=int, default=2)
    lay.add_argument("--rule", type=_parse_rule, action="append", default=[], metavar="KEY=VALUE")
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
        else:
            print(observation_table(Rules.from_options(dict(args.rule), num_players=args.players)))
    except AllFivesError as exc:
        print(f"allfives: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head & co.
        return 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
