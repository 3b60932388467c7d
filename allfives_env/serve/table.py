"""What one seat of a game being played may see: the viewer's frames, walked as events come, with the other
hands and their drawn tiles hidden, and the seat's legal moves described for the page.

The frames are :mod:`allfives_env.replay_frames`' (the replay viewer's), computed by the engine's own board
and count as each event arrives, so the web page draws them with the viewer's code and decides no rule.
Before a frame leaves the server, :func:`seat_frame` takes out what the seat cannot see: the other hands
(sent as ``null``; their sizes stay) and the tile another seat drew. At a hand's end (a settlement, the
game's end) the hands are shown face up, as players at a table show theirs for the tally.
"""

from __future__ import annotations

from typing import Any, Optional

from ..core.actions import decode_action, move_name
from ..core.events import SLOT_NAMES
from ..core.game import Game
from ..core.view import PlayerView
from ..replay_frames import FrameWalk, TableNames, turns_after

__all__ = ["LiveTable", "legal_moves", "seat_frame", "table_names"]

#: Frames after which every hand is shown face up: the tally of a hand's end.
REVEALING = ("settlement", "game_over")


class LiveTable:
    """The frames of a game being played: :meth:`update` walks the events added since the last call."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.names = TableNames(game.rules)
        self.walk = FrameWalk(game, self.names)
        self.frames: list[dict[str, Any]] = []
        self.update()

    def update(self) -> int:
        """Walk the new events into frames; returns how many there are now."""
        start = len(self.frames)
        events = self.game.events
        if start < len(events):
            turns = turns_after(self.game, start)
            self.frames.extend(self.walk.frame(k, events[k], turns[k - start]) for k in range(start, len(events)))
        return len(self.frames)

    def seat_frames(self, seat: int, since: int, until: Optional[int] = None) -> list[dict[str, Any]]:
        """Frames ``since`` (an index, 0 for all) up to ``until`` (None: the last) as ``seat`` may see them."""
        layouts = self.walk.layouts
        return [seat_frame(f, seat, layouts) for f in self.frames[since:until]]


def seat_frame(frame: dict[str, Any], seat: int, layouts: list[dict[str, Any]]) -> dict[str, Any]:
    """``frame`` as ``seat`` may see it, with the tiles on the table spelled out (``tiles``, ``spinner``)
    instead of the viewer's shared ``layout`` index: the page keeps no layouts of its own."""
    out = {k: v for k, v in frame.items() if k not in ("hidden", "layout")}
    layout = layouts[frame["layout"]] if frame["layout"] >= 0 else None
    out["tiles"] = layout["tiles"][: frame["placed"]] if layout else []
    out["spinner"] = layout["spinner"] if layout else -1
    if frame["kind"] not in REVEALING:
        out["hands"] = [hand if s == seat else None for s, hand in enumerate(frame["hands"])]
        if frame["hidden"] is not None and frame["seat"] != seat:
            out["text"], out["tile"] = frame["hidden"], None
    return out


def legal_moves(game: Game, seat: int) -> list[dict[str, Any]]:
    """The legal moves of ``seat`` when it is to act (else none): per move its action id, name (a lead is
    named ``3-0 lead``: on an empty table there is no end yet to name), tile and end (None for a lead or a
    draw), and the count and points it would make."""
    if game.over or game.current != seat:
        return []
    view = PlayerView(game, seat)
    lead = view.board.size == 0
    moves = []
    for action in sorted(view.legal):
        move: dict[str, Any] = {"action": action, "name": move_name(action, view.tiles, lead), "tile": None,
                                "end": None, "count": None, "points": None}
        if action != view.draw_action:
            tile, slot = decode_action(action)
            count = view.count_after(tile, slot)
            move.update(tile=tile, end=None if lead else SLOT_NAMES[slot], count=count,
                        points=view.points_for_count(seat, count, is_lead=lead))
        moves.append(move)
    return moves


def table_names(table: LiveTable) -> dict[str, Any]:
    """The names the page writes: seats, sides, each seat's side, and the tiles' pips by id."""
    rules = table.game.rules
    return {
        "names": table.names.seats,
        "sides": table.names.sides,
        "side_of": [rules.side_of(s) for s in range(rules.num_players)],
        "pairs": [list(p) for p in table.game.tiles.pairs],
    }
