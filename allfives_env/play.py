"""``allfives play``: a person plays All Fives in the terminal against registered agents or trained policies.

The person's view is what a seat may see (:func:`allfives_env.render.render_text` for that seat): the
table, the open ends and the count, the scores, hand sizes and their own tiles. Legal moves are listed
with numbers; a move is chosen by number or by name (``6-4@E``, ``draw``). Anything else re-prompts with
the reason, so a typo never ends the game (numbers may be written in any script's decimal digits, as
``int`` reads them; ``²``, control characters, bytes that are not UTF-8 and overlong lines re-prompt).
``?`` shows the table again, ``q`` stops. The opponents are built and checked against the rules before
the first move. However the game ends (its end, ``q``, the end of the input, Ctrl-C, an error inside an
opponent), it is saved as a replay, which ``allfives replay FILE`` verifies and ``allfives replay FILE
--html OUT.html`` shows in a browser; if that file cannot be written, a copy goes to the temp directory.
"""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence, TextIO, Union

import numpy as np

from .agents.base import Agent, OracleView, PlayerView
from .agents.registry import AgentError, check_agent_rules, make_agent
from .core.actions import move_name, parse_action
from .core.errors import IllegalActionError, RulesError, short_repr
from .core.game import Game
from .core.replay import save_replay
from .core.rules import Rules
from .core.seeds import check_seed
from .core.tiles import TileSet
from .narrate import Narrator
from .paths import check_output
from .render import render_text

__all__ = ["DEFAULT_REPLAY", "GAMES_FOLDER", "games_folder_path", "play_terminal"]

HELP = ("type a move's number or its name (e.g. 6-4@E, 3-0 lead, or draw), ? to show the table and your moves "
        "again, q to stop and save")
#: The longest line read as a move; anything longer re-prompts without being echoed.
MAX_LINE = 40
#: The folder a game is saved in unless told where (a new file each game, named by its start time and seed),
#: so that playing in a checkout leaves one ignored folder rather than files beside the sources.
GAMES_FOLDER = "games"


class _SaveInGamesFolder:
    """The default of ``play_terminal``'s ``replay_path``: a new file under :data:`GAMES_FOLDER`."""

    def __repr__(self) -> str:
        return f"DEFAULT_REPLAY (a new file under {GAMES_FOLDER}/)"


#: Save the game as a new file under :data:`GAMES_FOLDER` (the default); a path saves there, None does not save.
DEFAULT_REPLAY = _SaveInGamesFolder()
#: A seed picked for the person (it is printed, to play the same deals again) is below this.
FRESH_SEED_LIMIT = 2**31
#: What stops the game when typed at the prompt, and what shows the help and the table again.
QUIT_WORDS, HELP_WORDS = ("q", "quit", "exit"), ("?", "h", "help")


def _opponents(rules: Rules, human: int, specs: Sequence[str], seed: int) -> dict[int, Agent]:
    """One agent per other seat, from ``specs`` in seat order (the list repeats if it is shorter), each
    built and checked against ``rules`` now, so that no game starts that an opponent cannot play."""
    specs = [] if isinstance(specs, str) else list(specs)  # a bare string would be read letter by letter
    if not specs:
        raise AgentError("give at least one opponent, e.g. --opponents expert")
    others = [s for s in range(rules.num_players) if s != human]
    if len(specs) > len(others):
        raise AgentError(f"{len(specs)} opponents given for {len(others)} other seat{'s' if len(others) > 1 else ''} "
                         f"({rules.num_players} players): give at most {len(others)}")
    bots = {}
    for i, seat in enumerate(others):
        bot = make_agent(specs[i % len(specs)], seed=seed + 1 + seat)
        check_agent_rules(bot, rules)
        bots[seat] = bot
    return bots


def _read_move(text: str, legal: list[int], tiles: TileSet, lead: bool) -> tuple[Optional[int], str]:
    """(the legal action ``text`` names, "") or (None, why not)."""
    if len(text) > MAX_LINE:
        return None, f"that line is {len(text)} characters long, too long for a move; {HELP}"
    if not text.isprintable():
        return None, f"that line has control characters in it ({text!r}); {HELP}"
    if text.isdecimal():  # digits of any script, as int() reads them: ٣ and ３ are 3
        k = int(text)
        if 1 <= k <= len(legal):
            return legal[k - 1], ""
        return None, f"there is no move {k}: choose 1..{len(legal)}"
    if text.isnumeric():  # ², ½, Ⅻ: numeric but not a number int() reads
        return None, f"{text!r} is not a move number: type the number with the digits 0-9, 1..{len(legal)}"
    try:
        action = parse_action(text, tiles)
    except IllegalActionError as exc:
        return None, f"{exc}; {HELP}"
    if action in legal:
        return action, ""
    return None, (f"{move_name(action, tiles, lead)} is not legal now; legal: "
                  f"{', '.join(move_name(a, tiles, lead) for a in legal)}")


def _moves_line(legal: list[int], tiles: TileSet, lead: bool) -> str:
    """The numbered list of legal moves, a lead named as one (``3-0 lead``), not by an end it has not got."""
    return "Your moves: " + "  ".join(f"{i}) {move_name(a, tiles, lead)}" for i, a in enumerate(legal, 1))


def _choose(game: Game, seat: int, names: list[str], inp: TextIO, out: TextIO) -> Optional[int]:
    """Ask the person for a move until they give a legal one; None to stop (q, end of input)."""
    legal = game.legal_actions()
    tiles = game.tiles
    lead = game.board.size == 0
    print("", file=out)
    print(render_text(game, seat, names), file=out)
    print(_moves_line(legal, tiles, lead), file=out)
    while True:
        print("your move> ", end="", file=out, flush=True)
        try:
            line = inp.readline()
        except UnicodeDecodeError:
            print(f"that line is not UTF-8 text; {HELP}", file=out)
            continue
        if not line:
            print("", file=out)
            return None
        text = line.strip()
        if text.lower() in QUIT_WORDS:
            return None
        if text in HELP_WORDS:
            print(HELP, file=out)
            print(render_text(game, seat, names), file=out)
            print(_moves_line(legal, tiles, lead), file=out)
            continue
        if not text:
            print(f"(nothing typed) {HELP}", file=out)
            continue
        action, why = _read_move(text, legal, tiles, lead)
        if action is not None:
            return action
        print(why, file=out)


def _save(game: Game, replay_path: str, seed: int, out: TextIO) -> None:
    """Save the game; if ``replay_path`` cannot be written, save a copy in the temp directory instead."""
    try:
        path = save_replay(game, replay_path, seed=seed)
    except OSError as exc:
        fd, fallback = tempfile.mkstemp(prefix="allfives_game_", suffix=".json")
        os.close(fd)
        path = save_replay(game, fallback, seed=seed)
        print(f"Could not save the game to {replay_path} ({exc}).", file=out)
    print(f"Game saved to {path} (verify: allfives replay {path}; watch: allfives replay {path} --html "
          f"{Path(path).with_suffix('.html')})", file=out)


def games_folder_path(seed: int, folder: Union[str, Path] = GAMES_FOLDER) -> str:
    """A path for a new game's replay under ``folder``, named by the local start time and the seed
    (``games/allfives_20261203-214500_seed42.json``), never one that exists already; the folder is made
    here, so that a folder that cannot be made fails before the game, not after it."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"cannot save the game under {folder}/: {folder} is a file (give --save PATH)")
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"allfives_{time.strftime('%Y%m%d-%H%M%S')}_seed{seed}"
    path, n = folder / f"{stem}.json", 2
    while path.exists():
        path, n = folder / f"{stem}_{n}.json", n + 1
    return str(path)


def play_terminal(rules: Rules, opponents: Sequence[str], seat: int = 0, seed: Optional[int] = None,
                  replay_path: Union[str, None, _SaveInGamesFolder] = DEFAULT_REPLAY, inp: Optional[TextIO] = None,
                  out: Optional[TextIO] = None) -> Game:
    """Play a game with a person at ``seat`` (reading ``inp``, writing ``out``) against ``opponents``
    (agent specs, one per other seat in seat order, repeated if fewer); returns the game. The game is
    saved when it ends or is stopped: by default as a new file under :data:`GAMES_FOLDER`, else to
    ``replay_path`` (None: not saved)."""
    inp = _stdin() if inp is None else inp
    out = sys.stdout if out is None else out
    seat = _check_seat(rules, seat)
    seed = check_seed(secrets.randbelow(FRESH_SEED_LIMIT) if seed is None else seed, allow_none=False)
    if not isinstance(replay_path, _SaveInGamesFolder):
        check_output(replay_path, "--save")
    bots = _opponents(rules, seat, opponents, seed)
    if isinstance(replay_path, _SaveInGamesFolder):  # only now that nothing else can refuse the game
        replay_path = games_folder_path(seed)
    names = [f"player_{s}" for s in range(rules.num_players)]
    names[seat] = f"player_{seat} (you)"
    for s, bot in bots.items():
        names[s] = f"{bot.spec()} (player_{s})"
    game = Game(rules, seed)
    print(f"All Fives, {rules.num_players} players, target {rules.target}, seed {seed}. You are player_{seat}"
          + (f" (team {rules.side_of(seat)}: seats {seat} and {(seat + 2) % 4})" if rules.partnership else "")
          + f". {HELP}.", file=out)
    try:
        _play(game, seat, bots, names, inp, out)
    finally:  # whatever happened, even an error inside an opponent: the game so far is kept
        if replay_path:
            _save(game, replay_path, seed, out)
    return game


def _stdin() -> TextIO:
    """Standard input, where bytes that are not UTF-8 become U+FFFD (and so re-prompt)."""
    if hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="replace")
    return sys.stdin


def _check_seat(rules: Rules, seat: object) -> int:
    """``seat`` as an int, once ``rules`` is a Rules object and ``seat`` one of its seats (else RulesError)."""
    if not isinstance(rules, Rules):
        raise RulesError(f"rules must be a Rules object, got {type(rules).__name__}")
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < rules.num_players:
        raise RulesError(f"seat={short_repr(seat)} is not allowed: choose 0..{rules.num_players - 1}")
    return int(seat)


def _play(game: Game, seat: int, bots: dict[int, Agent], names: list[str], inp: TextIO, out: TextIO) -> None:
    """Play ``game`` on until it ends, the person stops or Ctrl-C, printing it as it goes, then the table."""
    narrator = Narrator(game, names, out, viewer=seat)
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
