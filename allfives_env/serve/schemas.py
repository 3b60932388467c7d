"""The web game's requests, read strictly: a size-bounded JSON object with known fields of the right types,
or a :class:`RequestError` that says what was wrong and what is allowed, with its HTTP status.

Nothing a request holds becomes a file path, a module name or code: fields are read as plain JSON values,
checked here, and handed to the engine's own checks (:class:`~allfives_env.core.rules.Rules`,
:func:`~allfives_env.agents.make_agent`), whose errors the app turns into 422 answers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, AsyncIterator, Optional

from ..core.errors import AllFivesError, short_repr
from ..core.seeds import MAX_SEED

__all__ = ["MAX_BODY", "MAX_SERVED_HANDS", "MAX_SERVED_TARGET", "NEW_GAME_FIELDS", "NewGame", "RequestError",
           "SettingsError", "read_body", "read_json", "int_field", "new_game", "spec_field"]

#: The largest request body read, in bytes: a new game's settings are well under 2 KiB.
MAX_BODY = 16 * 1024
#: The longest agent spec accepted (``pimc:samples=50,rollout=random`` is 31 characters).
MAX_SPEC = 100
#: The most rules options a new game may set (the table has 26).
MAX_RULES = 40
#: Fields of a new game's settings.
NEW_GAME_FIELDS = ("players", "partnership", "seat", "opponents", "rules", "seed")
#: The most hands a web game may last (its default too): the server keeps every frame of every game in
#: memory, about 2.5 KB a frame and up to ~180 frames a hand (4 players, double-twelve, drawing allowed),
#: so a game stays within ~20 MB however it is played.
MAX_SERVED_HANDS = 50
#: The highest target a web game may set: a person's game, not an endless one (a game that reaches
#: :data:`MAX_SERVED_HANDS` first ends there, as truncated).
MAX_SERVED_TARGET = 1000


class RequestError(AllFivesError, ValueError):
    """A request the server refuses, with the HTTP status of the answer (a 4xx, or a 503 when full);
    ``retry_after`` (seconds) says when the same request may succeed (sent as ``Retry-After``)."""

    def __init__(self, status: int, message: str, retry_after: Optional[int] = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class SettingsError(AllFivesError, ValueError):
    """A setting of the server itself (its caps, windows and rates) that cannot work."""


async def read_body(chunks: AsyncIterator[bytes], declared: Optional[str], limit: int = MAX_BODY) -> bytes:
    """The body from its ``chunks``, refused (413) once it is over ``limit`` bytes: at once when the
    declared Content-Length says so, else as soon as the chunks read pass it (a body sent without a
    length cannot fill memory either)."""
    if declared is not None:
        if not declared.isdigit():
            raise RequestError(400, f"Content-Length {short_repr(declared)} is not a byte count")
        if int(declared) > limit:
            raise RequestError(413, f"the body is {declared} bytes; at most {limit} are read")
    body = bytearray()
    async for chunk in chunks:
        body.extend(chunk)
        if len(body) > limit:
            raise RequestError(413, f"the body is over {limit} bytes; at most {limit} are read")
    return bytes(body)


def read_json(body: bytes, fields: tuple[str, ...]) -> dict[str, Any]:
    """``body`` as a JSON object holding only ``fields`` (an empty body is ``{}``), else 400."""
    if not body.strip():
        return {}
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise RequestError(400, "the body is not UTF-8 text; send a JSON object") from None
    except (ValueError, RecursionError) as exc:  # bad JSON, nesting too deep, an integer of over 4300 digits
        raise RequestError(400, f"the body is not valid JSON ({short_repr(str(exc))}); send a JSON object") from None
    if not isinstance(data, dict):
        raise RequestError(400, f"the body must be a JSON object, got {type(data).__name__}; fields: {list(fields)}")
    unknown = [k for k in data if k not in fields]
    if unknown:
        raise RequestError(400, f"unknown field {short_repr(unknown[0])}; allowed: {list(fields)}")
    return data


def int_field(data: dict[str, Any], name: str, low: int, high: int, default: Optional[int] = None) -> Optional[int]:
    """``data[name]`` as an integer from ``low`` to ``high`` (``default`` when absent or null), else 400."""
    value = data.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(400, f"{name}={short_repr(value)} is not allowed: give an integer from {low} to {high}")
    if not low <= value <= high:
        raise RequestError(400, f"{name}={short_repr(value)} is out of range: give an integer from {low} to {high}")
    return value


def spec_field(value: Any, name: str) -> str:
    """An agent spec (``greedy``, ``pimc:samples=50``): a short string, else 400. The registry checks the rest."""
    if not isinstance(value, str) or not value.strip():
        raise RequestError(400, f"{name}={short_repr(value)} is not allowed: give an agent name such as 'greedy'")
    if len(value) > MAX_SPEC or not value.isprintable():
        raise RequestError(400, f"{name} must be at most {MAX_SPEC} printable characters, e.g. 'pimc:samples=50'")
    return value.strip()


@dataclass(frozen=True)
class NewGame:
    """A new game's settings, checked for types and shape (the rules and agents are checked when built)."""

    players: int
    partnership: Optional[bool]
    seat: int
    opponents: list[str]
    rules: dict[str, Any]
    seed: Optional[int]


def new_game(data: dict[str, Any]) -> NewGame:
    """The settings of ``POST /api/games``: ``players`` (2-4), ``partnership`` (true/false/null),
    ``seat`` (0..players-1), ``opponents`` (agent specs for the other seats in seat order; one is repeated),
    ``rules`` (other rules options by name) and ``seed``."""
    players = int_field(data, "players", 2, 4, default=2)
    assert players is not None
    seat = int_field(data, "seat", 0, players - 1, default=0)
    assert seat is not None
    partnership = data.get("partnership")
    if partnership is not None and not isinstance(partnership, bool):
        raise RequestError(400, f"partnership={short_repr(partnership)} is not allowed: give true, false or null")
    opponents = data.get("opponents", ["greedy"])
    if not isinstance(opponents, list) or not opponents or len(opponents) > players - 1:
        raise RequestError(400, f"opponents={short_repr(opponents)} is not allowed: give a list of 1 to {players - 1} "
                                "agent names, one per other seat in seat order (one is repeated)")
    specs = [spec_field(spec, f"opponents[{i}]") for i, spec in enumerate(opponents)]
    rules = data.get("rules", {})
    if not isinstance(rules, dict) or len(rules) > MAX_RULES:
        raise RequestError(400, f"rules={short_repr(rules)} is not allowed: give an object of at most {MAX_RULES} "
                                "rules options, e.g. {\"target\": 100}")
    rules = dict(rules)
    for key, value in rules.items():
        if key in ("num_players", "partnership"):
            raise RequestError(400, f"rules may not set {key!r}: give it as the field "
                                    f"{'players' if key == 'num_players' else 'partnership'}")
        if not (value is None or isinstance(value, (bool, int, str))) or (isinstance(value, str) and len(value) > MAX_SPEC):
            raise RequestError(400, f"rules option {short_repr(key)}={short_repr(value)} is not allowed: give a "
                                    "number, true/false, a short word or null")
    _web_game_size(rules)
    seed = int_field(data, "seed", 0, MAX_SEED)
    return NewGame(players, partnership, seat, [specs[i % len(specs)] for i in range(players - 1)], rules, seed)


def _web_game_size(rules: dict[str, Any]) -> None:
    """Bound how long a web game may last (``target``, ``max_hands``), so one game cannot fill the
    server's memory or make every reload of it slow; an unset ``max_hands`` becomes the web cap (the
    engine's own default, 200 hands, is an RL safety net, not a person's game)."""
    if rules.get("target") not in (None, "auto"):
        int_field(rules, "target", 1, MAX_SERVED_TARGET)
    if "max_hands" in rules and rules["max_hands"] is None:
        raise RequestError(400, f"max_hands=None (no cap) is not allowed here: give an integer from 1 to "
                                f"{MAX_SERVED_HANDS} (the server keeps every game in memory)")
    rules["max_hands"] = int_field(rules, "max_hands", 1, MAX_SERVED_HANDS, default=MAX_SERVED_HANDS)
