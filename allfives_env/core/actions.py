"""Action ids: ``action = tile_id * 4 + slot`` (slot 0=W, 1=E, 2=N, 3=S; a lead uses slot 0).

Under ``may_draw_when_able`` one more id, ``tile_count * 4``, means "draw a tile". Names look like
``6-4@E`` (higher pip first) and ``draw``; a person is shown a lead as ``3-0 lead`` (:func:`move_name`); :func:`parse_action` reads them back, so error messages and
logs can be pasted into code.
"""

from __future__ import annotations

from typing import Any, Iterable, Union

import numpy as np

from .board import ALL_SLOTS
from .errors import IllegalActionError
from .events import SLOT_NAMES
from .tiles import TileSet
from .values import is_integer

DRAW_NAME = "draw"
#: The word after a tile that names a lead (the first tile of a hand, on an empty table, has no end).
LEAD_WORD = "lead"


def is_action_id(value: Any, count: int) -> bool:
    """Whether ``value`` is an action id 0..count-1: an integer (Python, numpy, or a 0-d integer array as
    vectorised callers pass), not a bool. Checked here rather than with gymnasium's
    ``Discrete.contains``, which overflows on huge integers."""
    if isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer):
        value = value.item()
    return is_integer(value) and 0 <= value < count


def encode_action(tile: int, slot: int) -> int:
    """The action id of placing ``tile`` on ``slot``."""
    if slot not in ALL_SLOTS:
        raise IllegalActionError(f"slot {slot!r} is not one of 0=W, 1=E, 2=N, 3=S")
    return tile * 4 + slot


def decode_action(action: int) -> tuple[int, int]:
    """``(tile_id, slot)`` of a placement action id."""
    return action >> 2, action & 3


def num_actions(tiles: TileSet, may_draw_when_able: bool) -> int:
    """Size of the action space: 4 per tile, plus the draw action when drawing is a choice."""
    return tiles.size * 4 + (1 if may_draw_when_able else 0)


def action_name(action: int, tiles: TileSet) -> str:
    """``"6-4@E"`` for a placement, ``"draw"`` for the draw action."""
    if action == tiles.size * 4:
        return DRAW_NAME
    tile, slot = decode_action(action)
    if not 0 <= tile < tiles.size:
        return f"<invalid action {action}>"
    return f"{tiles.name(tile)}@{SLOT_NAMES[slot]}"


def describe_action(action: int, tiles: TileSet, num_actions: int) -> str:
    """How a refusal names ``action``: ``"action 17 (4-1@E)"``, or ``"action 999 (out of range 0..112)"``."""
    if 0 <= action < num_actions:
        return f"action {action} ({action_name(action, tiles)})"
    return f"action {action} (out of range 0..{num_actions - 1})"


def describe_legal(legal: Iterable[int], tiles: TileSet) -> str:
    """How a refusal lists what was allowed: ``"legal actions: 4-1@E, draw (ids [17, 112])"``."""
    ids = [int(a) for a in legal]
    return f"legal actions: {', '.join(action_name(a, tiles) for a in ids)} (ids {ids})"


def move_name(action: int, tiles: TileSet, lead: bool) -> str:
    """What a person is shown for ``action``: ``"3-0 lead"`` when it opens the hand (``lead``: the table is
    empty, so the slot means nothing and ``3-0@W`` would name an end that does not exist yet), else
    :func:`action_name`. :func:`parse_action` reads both forms back."""
    if lead and action != tiles.size * 4:
        tile, _ = decode_action(action)
        if 0 <= tile < tiles.size:
            return f"{tiles.name(tile)} {LEAD_WORD}"
    return action_name(action, tiles)


def parse_action(text: Union[str, int], tiles: TileSet) -> int:
    """The id of ``"6-4@E"``, ``"4-6@e"``, ``"draw"`` or a lead ``"3-0 lead"`` (the id of ``3-0@W``: a lead
    uses slot 0); an int passes through after a range check."""
    if isinstance(text, int):
        if not 0 <= text <= tiles.size * 4:
            raise IllegalActionError(f"action {text} is out of range 0..{tiles.size * 4}")
        return text
    t = text.strip()
    if t.lower() == DRAW_NAME:
        return tiles.size * 4
    words = t.split()
    if len(words) == 2 and words[1].lower() == LEAD_WORD:
        try:
            return tiles.parse(words[0]) * 4
        except ValueError as exc:
            raise IllegalActionError(f"cannot read action {text!r}: {exc}") from None
    if "@" not in t:
        raise IllegalActionError(f"cannot read action {text!r}: write 'a-b@END' with END one of W, E, N, S, "
                                 f"'a-b lead' for a lead, or 'draw'")
    tile_text, slot_text = t.split("@", 1)
    slot_text = slot_text.strip().upper()
    if slot_text not in SLOT_NAMES:
        raise IllegalActionError(f"cannot read action {text!r}: the end must be one of W, E, N, S")
    try:
        tile = tiles.parse(tile_text.strip())
    except ValueError as exc:
        raise IllegalActionError(f"cannot read action {text!r}: {exc}") from None
    return tile * 4 + SLOT_NAMES.index(slot_text)
