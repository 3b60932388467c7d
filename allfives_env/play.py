"""``allfives play``: a person plays All Fives in the terminal against registered agents or trained policies.

The person's view is what a seat may see (:func:`allfives_env.render.render_text` for that seat): the
table, the open ends and the count, the scores, hand sizes and their own tiles. Legal moves are listed
with numbers; a move is chosen by number or by name (``6-4@E``, ``draw``). Anything else re-prompts with
the reason, so a typo never ends the game. ``?`` shows the table again, ``q`` stops. At the end, on
``q``, at the end of the input, or on Ctrl-C, the game (finished or not) is saved as a replay, which
``allfives replay FILE`` verifies and ``allfives replay FILE --html OUT.html`` shows in a browser.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, TextIO

from .agents.base import Agent, OracleView, PlayerView
from .agents.registry import make_agent
from .core.actions import action_name, parse_action
from .core.errors import IllegalActionError, RulesError
from .core.game import Game
from .core.replay import save_replay
from .core.rules import Rules
from .narrate import Narrator
from .render import render_text

__all__ = ["play_terminal"]

HELP = "type a move's number or its name (e.g. 6-4@E, or draw), ? to show the table again, q to stop and save"


def _opponents(rules: Rules, human: int, specs: Sequence[str], seed: int) -> dict[int, Agent]:
    """One agent per other seat, from ``specs`` in seat order (the list repeats if it is shorter)."""
    if not specs:
        raise RulesError("give at least one opponent, e.g. --opponents expert")
    others = [s for s in range(rules.num_players) if s != human]
    return {seat: make_agent(specs[i % len(specs)], seed=seed + 1 + seat) for i, seat in enumerate(others)}


def _choose(game: Game, seat: int, names: list[str], inp: TextIO, out: TextIO) -> Optional[int]:
    """Ask the person for a move until they give a legal one; None to stop (q, end of input)."""
    legal = game.legal_actions()
    tiles = game.tiles
    print("", file=out)
    print(render_text(game, seat, names), file=out)
    print("Your moves: " + "  ".join(f"{i}) {action_name(a, tiles)}" for i, a in enumerate(legal, 1)), file=out)
    while True:
        print("your move> ", end="", file=out, flush=True)
        line = inp.readline()
        if not line:
            print("", file=out)
            return None
        text = line.strip()
        if text.lower() in ("q", "quit", "exit"):
            return None
        if text in ("?", "h", "help"):
            print(HELP, file=out)
            print(render_text(game, seat, names), file=out)
            continue
        if not text:
            print(f"(nothing typed) {HELP}", file=out)
            continue
        if text.isdigit():
            k = int(text)
            if 1 <= k <= len(legal):
                return legal[k - 1]
            print(f"there is no move {k}: choose 1..{len(legal)}", file=out)
            continue
        try:
            action = parse_action(text, tiles)
        except IllegalActionError as exc:
            print(f"{exc}; {HELP}", file=out)
            continue
        if action in legal:
            return action
        print(f"{action_name(action, tiles)} is not legal now; legal: {', '.join(action_name(a, tiles) for a in legal)}",
              file=out)


def play_terminal(rules: Rules, opponents: Sequence[str], seat: int = 0, seed: Optional[int] = None,
                  replay_path: Optional[str] = "allfives_game.json", inp: Optional[TextIO] = None,
                  out: Optional[TextIO] = None) -> Game:
    """Play a game with a person at ``seat`` (reading ``inp``, writing ``out``) against ``opponents``
    (agent specs, one per other seat in seat order, repeated if fewer); returns the game. The game is
    saved to ``replay_path`` (None: not saved) when it ends or is stopped."""
    import sys

    inp = sys.stdin if inp is None else inp
    out = sys.stdout if out is None else out
    if not (isinstance(seat, int) and 0 <= seat < rules.num_players):
        raise RulesError(f"seat={seat!r} is not allowed: choose 0..{rules.num_players - 1}")
    if seed is None:
        import secrets

        seed = secrets.randbelow(2**31)
    bots = _opponents(rules, seat, list(opponents), seed)
    names = [f"player_{s}" for s in range(rules.num_players)]
    names[seat] = f"player_{seat} (you)"
    for s, bot in bots.items():
        names[s] = f"{bot.spec()} (player_{s})"
    game = Game(rules, seed)
    narrator = Narrator(game, names, out, viewer=seat)
    print(f"All Fives, {rules.num_players} players, target {rules.target}, seed {seed}. You are player_{seat}"
          + (f" (team {rules.side_of(seat)}: seats {seat} and {(seat + 2) % 4})" if rules.partnership else "")
          + f". {HELP}.", file=out)
    try:
        while not game.over:
            current = game.current
            if current == seat:
                action = _choose(game, seat, names, inp, out)
                if action is None:
                    break
            else:
                bot = bots[current]
                action = bot.act((OracleView if bot.uses_hidden_information else PlayerView)(game, current))
            narrator.step(action)
    except KeyboardInterrupt:
        print("\n(interrupted)", file=out)
    narrator.flush()
    if game.over:
        print("", file=out)
        print(render_text(game, seat, names), file=out)
    else:
        print(f"Stopped in hand {game.hand_number} with scores {game.scores}.", file=out)
    if replay_path:
        path = save_replay(game, replay_path, seed=seed)
        print(f"Game saved to {path} (verify: allfives replay {path}; watch: allfives replay {path} --html "
              f"{Path(path).with_suffix('.html')})", file=out)
    return game
