"""Reading command-line values: the argparse types and the options that several commands share.

:func:`add_shared_options` adds ``--players``, ``--partnership`` / ``--cut-throat``, ``--rule`` and
``--seed`` to a command, the same way for every command that has them; :func:`rules_for` turns what was
given into one :class:`~allfives_env.core.rules.Rules` (see :func:`rules_from_options` for how a flag and a
``--rule`` that disagree are refused).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Callable, Optional, Sequence

from ..core.errors import RulesError, SeedError
from ..core.rules import Rules
from ..core.seeds import MAX_SEED, check_seed

__all__ = ["add_shared_options", "int_type", "read_float", "rules_for", "rules_from_options", "seed_type", "shorten"]

#: The most rule value characters (no rules option needs more; a longer one is a paste gone wrong).
RULE_VALUE_MAX = 200
#: The most characters of a user's text quoted back in a message.
QUOTE_MAX = 40
#: Integer texts with more digits than this are out of range before ``int`` reads them (it refuses over
#: 4300 digits, and no option takes a number near this long).
DIGITS_MAX = 100
#: The count of players the team flags mean when no count is given: the only count that has teams.
TEAM_PLAYERS = 4
#: How the seed's range reads in help and messages.
SEED_RANGE = "0 to 2**63-1"
SEED_ALLOWED = f"an integer from {SEED_RANGE} ({MAX_SEED})"
#: The example in ``--rule``'s help unless a command gives its own.
RULE_EXAMPLE = "hand_end=winner_takes"


def shorten(text: str, limit: int = QUOTE_MAX) -> str:
    """``text`` for a message: at most ``limit`` characters of its repr."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def _read_int(text: str, allowed: str) -> int:
    """``text`` as an integer, else an ArgumentTypeError that says ``allowed``."""
    stripped = text.strip()
    if len(stripped) > DIGITS_MAX and stripped.lstrip("+-").isdecimal():
        raise argparse.ArgumentTypeError(f"{shorten(text)} is out of range: give {allowed}")
    try:
        return int(stripped)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shorten(text)} is not an integer: give {allowed}") from None


def read_float(text: str, allowed: str) -> float:
    """``text`` as a float, else an ArgumentTypeError that says ``allowed`` (the range check is the caller's)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shorten(text)} is not a number: {allowed}") from None


def int_type(low: int, high: int, allowed: str) -> Callable[[str], int]:
    """An argparse type: an integer from ``low`` to ``high``; errors say ``allowed``."""

    def parse(text: str) -> int:
        value = _read_int(text, allowed)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{shorten(str(value))} is out of range: give {allowed}")
        return value

    return parse


def seed_type(text: str) -> int:
    """``--seed``: an integer, checked by the library's one rule for seeds (:func:`check_seed`)."""
    try:
        return check_seed(_read_int(text, SEED_ALLOWED), allow_none=False)
    except SeedError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_rule(text: str) -> tuple[str, Any]:
    """``--rule KEY=VALUE``: VALUE read as JSON (a number, true/false, null) where it parses, else a word."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--rule needs KEY=VALUE (e.g. hand_end=winner_takes), got {shorten(text)}")
    key, value = text.split("=", 1)
    key = key.strip()
    if len(value) > RULE_VALUE_MAX:
        raise argparse.ArgumentTypeError(f"--rule {shorten(key)}: the value is {len(value)} characters long; "
                                         f"a rules value is a number, true/false, null or a word")
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value.strip()
    except (ValueError, RecursionError) as exc:  # e.g. more digits than int() reads, nesting too deep
        raise argparse.ArgumentTypeError(f"--rule {shorten(key)}: cannot read the value ({exc})") from None
    if parsed is not None and not isinstance(parsed, (str, int, float, bool)):
        raise argparse.ArgumentTypeError(f"--rule {shorten(key)}={value}: a rules value is a number, true/false, "
                                         f"null or a word, not a JSON {type(parsed).__name__}")
    return key, parsed


def add_shared_options(parser: argparse.ArgumentParser, rule_example: str = RULE_EXAMPLE, *,
                       seeds: Optional[str] = None, seed_default: Optional[int] = 0, seed_first: bool = False,
                       before_seed: Optional[Callable[[argparse.ArgumentParser], object]] = None) -> None:
    """The options several commands share: ``--players``, ``--partnership`` / ``--cut-throat`` and
    ``--rule`` (read by :func:`rules_for`), and ``--seed`` where ``seeds`` says what it seeds.

    ``--seed`` follows the rules options and whatever ``before_seed`` adds (a command's options that its
    help lists in between), or, with ``seed_first``, comes before them all. ``seed_default`` None means
    the command picks a fresh seed."""
    if seeds is not None and seed_first:
        _add_seed_option(parser, seeds, seed_default)
    parser.add_argument("--players", type=int, default=None,
                        help="number of players, 2-4 (default 2; the same as --rule num_players=N)")
    team = parser.add_mutually_exclusive_group()
    team.add_argument("--partnership", dest="partnership", action="store_const", const=True, default=None,
                      help="4 players in teams 0+2 vs 1+3 (the 4-player default)")
    team.add_argument("--cut-throat", dest="partnership", action="store_const", const=False,
                      help="4 players (or --players 3), each for themselves")
    parser.add_argument("--rule", type=parse_rule, action="append", default=[], metavar="KEY=VALUE",
                        help=f"a rules option, e.g. --rule {rule_example} (repeatable; one that contradicts "
                             "--players or --partnership/--cut-throat is an error)")
    if before_seed is not None:
        before_seed(parser)
    if seeds is not None and not seed_first:
        _add_seed_option(parser, seeds, seed_default)


def _add_seed_option(parser: argparse.ArgumentParser, seeds: str, default: Optional[int]) -> None:
    shown = "default: a fresh one, printed" if default is None else f"default {default}"
    parser.add_argument("--seed", type=seed_type, default=default,
                        help=f"seed of {seeds}, {SEED_RANGE} ({shown})")


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
            raise RulesError(f"--players {players} contradicts --rule num_players="
                             f"{_json_text(options['num_players'])}: give one of them (or the same value)")
        options.setdefault("num_players", players)
    if partnership is not None:
        flag = "--partnership" if partnership else "--cut-throat"
        rule = options.get("partnership")
        if rule not in (None, "auto") and rule != partnership:
            raise RulesError(f"{flag} contradicts --rule partnership={_json_text(rule)}: give one of them "
                             "(or the same value)")
        options["partnership"] = partnership
        options.setdefault("num_players", TEAM_PLAYERS)
    return Rules.from_options(options)


def rules_for(args: argparse.Namespace) -> Rules:
    """Rules from ``--rule`` options with ``--players`` and ``--partnership/--cut-throat`` (see
    :func:`rules_from_options`)."""
    return rules_from_options(args.rule, args.players, args.partnership)
