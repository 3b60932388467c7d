"""The public event log: every play, draw, pass, settlement and game end, as small immutable records.

Events are ``NamedTuple`` values because the engine writes several per turn and search agents replay
whole games: tuples are the cheapest records Python has. Each event class is a ``NamedTuple`` of its
fields plus its ``kind``, a class constant, added by a subclass because a ``NamedTuple`` body may hold
fields only. The event classes are final: code tells events apart with ``type(e) is Play`` (the fastest
test), which a subclass would slip past. :func:`event_to_dict` / :func:`event_from_dict`
give the JSON form used by replays and ``infos``.

A :class:`Draw` carries the drawn tile, which only the drawer may see: :func:`public_view` hides it
(``tile=-1``) for everyone else.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple, Optional, Sequence, Union, final, overload

from .errors import DealError, ReplayError, short_repr
from .tiles import TileSet

SLOT_NAMES = ("W", "E", "N", "S")


class _HandStartFields(NamedTuple):
    hand: int
    leader: int
    scores: tuple[int, ...]


@final
class HandStart(_HandStartFields):
    """A new hand was dealt; ``leader`` plays first. ``scores`` are per side, before the hand."""

    __slots__ = ()
    kind: ClassVar[str] = "hand_start"


class _PlayFields(NamedTuple):
    seat: int
    tile: int
    slot: int
    count: int  # type: ignore[assignment]  # shadows tuple.count (unused on events); replays name the field
    points: int


@final
class Play(_PlayFields):
    """``seat`` placed ``tile`` on ``slot`` (0=W, 1=E, 2=N, 3=S; a lead uses 0); the ends then counted
    ``count`` and the seat's side was credited ``points`` (0 when the count is not a multiple of 5, or the
    play was void under ``min_first_score`` / ``exact_target``)."""

    __slots__ = ()
    kind: ClassVar[str] = "play"


class _DrawFields(NamedTuple):
    seat: int
    tile: int
    forced: bool


@final
class Draw(_DrawFields):
    """``seat`` drew ``tile`` from the boneyard (``-1`` in another seat's view). ``forced`` is True when
    the seat drew because it had no legal placement (it then holds none of the open values)."""

    __slots__ = ()
    kind: ClassVar[str] = "draw"


class _PassFields(NamedTuple):
    seat: int


@final
class Pass(_PassFields):
    """``seat`` could neither play nor draw."""

    __slots__ = ()
    kind: ClassVar[str] = "pass"


class _SettlementFields(NamedTuple):
    hand: int
    result: str
    pips: tuple[int, ...]
    deltas: tuple[int, ...]
    scores: tuple[int, ...]


@final
class Settlement(_SettlementFields):
    """The end of a hand. ``result`` is ``"domino"``, ``"blocked"`` or ``"target"`` (the game was won
    during the hand, no settlement made); ``pips`` per seat; ``deltas`` and ``scores`` per side."""

    __slots__ = ()
    kind: ClassVar[str] = "settlement"


class _GameOverFields(NamedTuple):
    winner: Optional[int]
    scores: tuple[int, ...]
    truncated: bool


@final
class GameOver(_GameOverFields):
    """The game ended. ``winner`` is a side, or None for a draw (possible only when ``truncated``, the
    ``max_hands`` cap, or for a single-hand episode)."""

    __slots__ = ()
    kind: ClassVar[str] = "game_over"


Event = Union[HandStart, Play, Draw, Pass, Settlement, GameOver]
#: The events of a turn: what a hand's play is made of, between its HandStart and its Settlement.
TurnEvent = Union[Play, Draw, Pass]
_BY_KIND = {cls.kind: cls for cls in (HandStart, Play, Draw, Pass, Settlement, GameOver)}


@overload
def public_view(event: TurnEvent, viewer: Optional[int]) -> TurnEvent: ...
@overload
def public_view(event: Event, viewer: Optional[int]) -> Event: ...


def public_view(event: Event, viewer: Optional[int]) -> Event:
    """The event as ``viewer`` may see it: other seats' drawn tiles become ``-1``."""
    if type(event) is Draw and event.seat != viewer and event.tile >= 0:
        return Draw(event.seat, -1, event.forced)
    return event


_new_record = tuple.__new__  # a NamedTuple from a tuple of all its fields, without its Python-level __new__


def public_events(events: Sequence[Event], viewer: Optional[int]) -> list[Event]:
    """:func:`public_view` of each event, as a list: one call for a whole log (the env's ``info`` and a
    seat's :class:`~allfives_env.core.view.PlayerView` ask for one every step, so the test is written out
    here instead of a call per event, and a hidden draw is built without the NamedTuple's ``__new__``)."""
    return [_new_record(Draw, (e.seat, -1, e.forced)) if type(e) is Draw and e.seat != viewer and e.tile >= 0
            else e for e in events]


def event_to_dict(event: Event, tiles: TileSet) -> dict[str, Any]:
    """JSON form of an event; tiles as ``[low, high]`` pairs and slots by name."""
    out: dict[str, Any] = {"type": event.kind}
    value: Any  # each field in turn, its type known by its name only
    for name, value in zip(event._fields, event):
        if name == "tile":
            value = list(tiles.pairs[value]) if value >= 0 else None
        elif name == "slot":
            value = SLOT_NAMES[value]
        elif isinstance(value, tuple):
            value = list(value)
        out[name] = value
    return out


#: What each JSON field of an event must hold: replays are checked field by field, so that a value of
#: the wrong type (a bool for a seat, a string for the scores) is refused instead of compared loosely.
_FIELD_KINDS = {
    "hand": "int", "leader": "int", "seat": "int", "count": "int", "points": "int",
    "tile": "tile", "slot": "slot", "forced": "bool", "truncated": "bool", "result": "str",
    "scores": "ints", "pips": "ints", "deltas": "ints", "winner": "int_or_none",
}
_KIND_TEXT = {
    "int": "an integer", "tile": "a tile [a, b]", "slot": f"one of {list(SLOT_NAMES)}", "bool": "true or false",
    "str": "a string", "ints": "a list of integers", "int_or_none": "an integer or null",
}


def _is_int(value: Any) -> bool:
    return type(value) is int


def event_from_dict(data: Any, tiles: TileSet, where: str = "event") -> Event:
    """Parse the JSON form back into an event, failing with :class:`ReplayError` naming ``where``.

    Strict: the ``type`` must be a known event kind, every field of that kind must be present with a
    value of its type (integers are JSON integers, not bools or floats), and no other field may appear.
    """
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in _BY_KIND:
        raise ReplayError(
            f"{where}: not an event record (expected an object whose 'type' is one of {list(_BY_KIND)}): "
            f"{short_repr(data)}"
        )
    cls = _BY_KIND[kind]
    extra = sorted(str(k) for k in data if k != "type" and k not in cls._fields)
    if extra:
        raise ReplayError(f"{where}: {kind} event has unknown field(s) {short_repr(extra)}; its fields are {list(cls._fields)}")
    values = []
    for name in cls._fields:
        if name not in data:
            raise ReplayError(f"{where}: {kind} event lacks the field {name!r}")
        values.append(_field(name, data[name], tiles, kind, where))
    return cls(*values)


def _field(name: str, value: Any, tiles: TileSet, kind: str, where: str) -> Any:
    """One event field, checked against its kind and converted to the engine's form."""
    expected = _FIELD_KINDS[name]
    if expected == "tile":
        if value is None and kind == "draw":
            return -1  # another seat's draw, hidden
        try:
            return tiles.parse(value)
        except DealError as exc:
            raise ReplayError(f"{where}: {exc}") from None
    if expected == "slot":
        if isinstance(value, str) and value in SLOT_NAMES:
            return SLOT_NAMES.index(value)
    elif expected == "int":
        if _is_int(value):
            return value
    elif expected == "int_or_none":
        if value is None or _is_int(value):
            return value
    elif expected == "bool":
        if isinstance(value, bool):
            return value
    elif expected == "str":
        if isinstance(value, str):
            return value
    elif isinstance(value, list) and all(_is_int(x) for x in value):
        return tuple(value)
    raise ReplayError(f"{where}: {kind} field {name!r} must be {_KIND_TEXT[expected]}, got {short_repr(value)}")
