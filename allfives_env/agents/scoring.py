"""Move evaluation shared by the scripted agents: points a placement scores now, and the best reply.

These read a :class:`Game` (a real one through a :class:`PlayerView`, or a search copy) and never
mutate it; trying a placement costs one :meth:`Board.count_after`, no copy.
"""

from __future__ import annotations

from ..core.board import Board
from ..core.game import Game
from ..core.tiles import TileSet


def points_if(game: Game, seat: int, action: int) -> int:
    """Points ``seat`` would score by playing ``action`` now (0 for the draw action)."""
    if action == game.draw_action:
        return 0
    board = game.board
    count = board.count_after(action >> 2, action & 3)
    return game.points_for_count(seat, count, board.size == 0)


def best_reply_points(game: Game, board: Board, replier: int, possible_mask: int) -> int:
    """The most ``replier`` could score on ``board`` with one tile from ``possible_mask``.

    ``board`` is usually a copy with a candidate move already placed; ``possible_mask`` the tiles the
    replier might hold (unseen tiles minus its known voids).
    """
    if board.size == 0 or not possible_mask:
        return 0
    best = 0
    for a in board.placements(possible_mask):
        count = board.count_after(a >> 2, a & 3)
        if count > best and count % 5 == 0:
            best = count
    return game.points_for_count(replier, best) if best else 0


def possible_tiles(tiles: TileSet, unseen_mask: int, void_values: int) -> int:
    """Unseen tiles showing none of the values in ``void_values`` (a bit mask of pip values)."""
    if not void_values:
        return unseen_mask
    excluded = 0
    v = 0
    while void_values:
        if void_values & 1:
            excluded |= tiles.pip_mask[v]
        void_values >>= 1
        v += 1
    return unseen_mask & ~excluded


def heaviest_first_key(tiles: TileSet, action: int) -> int:
    """Sort key that prefers shedding heavy tiles: the pips of the action's tile."""
    return tiles.pips[action >> 2]
