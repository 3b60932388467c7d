"""The public event log: every play, draw, pass, settlement and game end, as small immutable records.

Events are ``NamedTuple`` values because the engine writes several per turn and search agents replay
whole games: tuples are the cheapest records Python has. :func:`event_to_dict` / :func:`event_from_dict`
give the JSON form used by replays and ``infos``.

A :class:`Draw` carries the drawn tile, which only the drawer may see: :func:`public_view` hides it
(``tile=-1``) for everyone else.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Union

from .errors import ReplayError
from .tiles import TileSet

SLOT_NAMES = ("W", "E", "N", "S")


class HandStart(NamedTuple):
    """A new hand was dealt; ``leader`` plays first. ``scores`` are per side, before the hand."""

    hand: int
    leader: int
    scores: tuple[int, ...]
    kind = "hand_start"


class Play(NamedTuple):
    """``seat`` placed ``tile`` on ``slot`` (0=W, 1=E, 2=N, 3=S; a lead uses 0); the ends then counted
    ``count`` and the seat's side was credited ``points`` (0 when the count is not a multiple of 5, or the
    play was void under ``min_first_score`` / ``exact_target``)."""

    seat: int
    tile: int
    slot: int
    count: int
    points: int
    kind = "play"


class Draw(NamedTuple):
    """``seat`` drew ``tile`` from the boneyard (``-1`` in another seat's view). ``forced`` is True when
    the seat drew because it had no legal placement (it then holds none of the open values)."""

    seat: int
    tile: int
    forced: bool
    kind = "draw"


class Pass(NamedTuple):
    """``seat`` could neither play nor draw."""

    seat: int
    kind = "pass"


class Settlement(NamedTuple):
    """The end of a hand. ``result`` is ``"domino"``, ``"blocked"`` or ``"target"`` (the game was won
    during the hand, no settlement made); ``pips`` per seat; ``deltas`` and ``scores`` per side."""

    hand: int
    result: str
    pips: tuple[int, ...]
    deltas: tuple[int, ...]
    scores: tuple[int, ...]
    kind = "settlement"


class GameOver(NamedTuple):
    """The game ended. ``winner`` is a side, or None for a draw (possible only when ``truncated``, the
    ``max_hands`` cap, or for a single-hand episode)."""

    winner: Optional[int]
    scores: tuple[int, ...]
    truncated: bool
    kind = "game_over"


Event = Union[HandStart, Play, Draw, Pass, Settlement, GameOver]
_BY_KIND = {cls.kind: cls for cls in (HandStart, Play, Draw, Pass, Settlement, GameOver)}


def public_view(event: Event, viewer: Optional[int]) -> Event:
    """The event as ``viewer`` may see it: other seats' drawn tiles become ``-1``."""
    if type(event) is Draw and event.seat != viewer and event.tile >= 0:
        return Draw(event.seat, -1, event.forced)
    return event


def event_to_dict(event: Event, tiles: TileSet) -> dict[str, Any]:
    """JSON form of an event; tiles as ``[low, high]`` pairs and slots by name."""
    out: dict[str, Any] = {"type": event.kind}
    for name, value in zip(event._fields, event):
        if name == "tile":
            value = list(tiles.pairs[value]) if value >= 0 else None
        elif name == "slot":
            value = SLOT_NAMES[value]
        elif isinstance(value, tuple):
            value = list(value)
        out[name] = value
    return out


def event_from_dict(data: Any, tiles: TileSet, where: str = "event") -> Event:
    """Parse the JSON form back into an event, failing with :class:`ReplayError` naming ``where``."""
    if not isinstance(data, dict) or data.get("type") not in _BY_KIND:
        raise ReplayError(f"{where}: not an event record (expected an object whose 'type' is one of {list(_BY_KIND)}): {data!r}")
    cls = _BY_KIND[data["type"]]
    values = []
    for name in cls._fields:
        if name not in data:
            raise ReplayError(f"{where}: {data['type']} event lacks the field {name!r}")
        value = data[name]
        try:
            if name == "tile":
                value = -1 if value is None else tiles.parse(value)
            elif name == "slot":
                if value not in SLOT_NAMES:
                    raise ReplayError(f"{where}: slot {value!r} is not one of {list(SLOT_NAMES)}")
                value = SLOT_NAMES.index(value)
            elif isinstance(value, list):
                value = tuple(value)
        except ValueError as exc:
            if isinstance(exc, ReplayError):
                raise
            raise ReplayError(f"{where}: {exc}") from None
        values.append(value)
    return cls(*values)
