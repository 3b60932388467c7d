"""The geometry of the table: where every tile and open-end marker of a board goes, in half-tile units.

One layout algorithm for every picture of the board, the ``rgb_array`` frame
(:mod:`allfives_env.render_image`) and the replay viewer's SVG (:mod:`allfives_env.replay_frames`): each
only scales and translates what this module returns into pixels or SVG units.

Units. One half of a tile is a 1 x 1 *cell*, so a tile is 2 x 1 (lying) or 1 x 2 (upright); x runs to the
right and y down, as on a screen. The spinner (or, before the first double, the lead) sits at the origin,
crosswise to the W/E line: the spinner upright, a lead lying. Doubles in an arm lie crosswise to it.

Arms (a pinwheel). Every arm is laid as if it were the E arm, in its own frame where it runs along +x from
the centre and bends towards +y, then turned onto its side by quarter turns: E snakes into the south-east,
S into the south-west, W into the north-west, N into the north-east. An arm runs straight for up to
``limit`` units; then one tile set at right angles under the row's last tile turns the corner, the next row
runs back along the middle of that tile's lower half, no nearer the centre than :data:`NEAR` (clear of the
neighbouring arm, whose crosswise doubles reach 1), turns again, and so on. Rows lie at least 2 + gap apart,
so crosswise doubles of neighbouring rows never meet; and since every arm keeps to its own quadrant, arms
never cross, whatever their lengths. A tile's place depends only on the tiles before it in its arm, so
tiles already down never move while a hand goes on (only the first double, which turns the line into a
spinner cross, re-centres the table).

:func:`lay_out` lays a board out for given straight-run limits; :func:`fit_layout` picks the limits that
show the tiles biggest in a box (the fixed-size raster frame). Each open end gets an *anchor*: the centre
of the cell where the next tile's matching half would go, where its marker is drawn.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional, Sequence

from .core.board import E, N, S, W, Board

__all__ = [
    "GAP", "NEAR", "STRAIGHT", "FIT_LIMITS", "MARKER_REACH", "PlacedTile", "OpenEnd", "Layout", "end_points",
    "lay_out", "fit_layout",
]

#: Gap between neighbouring tiles, in cells.
GAP = 0.12
#: A row coming back towards the centre stops this far from the neighbouring arm's centre line.
NEAR = 1.0 + 2 * GAP
#: A straight-run limit that no arm reaches: the arm never bends.
STRAIGHT = 1e9
#: The straight-run limits :func:`fit_layout` tries, longest (no bend) first.
FIT_LIMITS = (STRAIGHT, 30.0, 24.0, 20.0, 16.0, 13.0, 11.0, 9.0, 8.0, 7.0, 6.0)
#: How far an open end's marker may reach from its anchor, for bounding boxes.
MARKER_REACH = 0.55
#: :func:`fit_layout` counts limits whose scale is within this share of the best as equally good.
FIT_SLACK = 0.97
#: Bend counts are compared with limits capped here, so "no bend" (:data:`STRAIGHT`) ranks above any bend.
_LIMIT_RANK_CAP = 1000.0

CELL = 1.0  # one half of a tile: its width, and half its length
TILE_LENGTH = 2 * CELL
_DOUBLE_HALF_WIDTH = CELL  # a crosswise double reaches this far to each side of its row
_TILE_HALF_WIDTH = CELL / 2
_EPS = 1e-9  # rounding slack when checking whether a tile fits in a row
#: Quarter turns (clockwise on screen) that map the E arm's own frame onto each arm.
QUARTER_TURNS = {E: 0, S: 1, W: 2, N: 3}

Rect = tuple[float, float, float, float]  # x0, y0, x1, y1
_EMPTY_BOX: Rect = (math.inf, math.inf, -math.inf, -math.inf)


class PlacedTile(NamedTuple):
    """A tile of the layout, in cells: ``first`` shows on its left (lying) or top (upright) half."""

    tile: int
    x0: float
    y0: float
    x1: float
    y1: float
    first: int
    second: int
    centre: bool  # the spinner, or the lead of a line without a spinner


class OpenEnd(NamedTuple):
    """An open end: its anchor (cells), the value a tile must show there, and what it adds to the count."""

    slot: int
    x: float
    y: float
    value: int
    points: Optional[int]  # None while the end is open but not counted (an empty arm of the spinner)


class Layout(NamedTuple):
    """A board laid out: tiles (the centre first, then arm by arm W, E, N, S, each from the centre out),
    the open ends in the same slot order, the straight-run limits used (W/E, N/S) and the bounding box
    of the tiles and the markers' reach."""

    tiles: list[PlacedTile]
    ends: list[OpenEnd]
    limits: tuple[float, float]
    box: Rect


class _Piece(NamedTuple):
    """A tile in its arm's own frame: the arm runs along +x from the centre and bends towards +y."""

    x0: float
    y0: float
    x1: float
    y1: float
    dx: int  # direction of travel, from the inner pip to the outer pip
    dy: int
    inner: int
    outer: int
    tile: int


class _Arm(NamedTuple):
    """One arm laid out and turned onto its side: its tiles, its end's anchor (None: not open), its box."""

    tiles: list[PlacedTile]
    anchor: Optional[tuple[float, float]]
    box: Rect


def end_points(board: Board, slot: int) -> Optional[int]:
    """What the open end ``slot`` adds to the count (twice the value on a double), or None when it is not
    counted. With the spinner's own 2v while it counts, these make up :meth:`Board.count`."""
    if not board.counted(slot):
        return None
    value = board.ends[slot]
    return 2 * value if board.arm_len[slot] and board.end_double[slot] else value


def _row_fits(pos: float, length: float, direction: int, far: float) -> bool:
    """Whether a tile ``length`` long fits in a row from ``pos`` running towards ``direction``."""
    if direction > 0:
        return pos + length <= far + _EPS
    return pos - length >= NEAR - _EPS


def _snake(entries: Sequence[tuple[int, int, int]], start: float, limit: float,
           is_double: Sequence[bool]) -> tuple[list[_Piece], tuple[float, float]]:
    """Lay one arm (``(tile, inner pip, outer pip)`` from the centre out) in its own frame, and find its
    end's anchor.

    The arm starts at x = ``start`` on the line y = 0 and runs towards +x; a row may reach x = start +
    ``limit``, a returning row x = :data:`NEAR`. At a row's end the next tile turns the corner: it is set
    upright under the row's last tile, and the next row runs back along the middle of its lower half. No
    arm holds two doubles in a row, so with ``limit`` >= 6 a turn is never followed by another turn.
    """
    far = start + limit
    pieces: list[_Piece] = []
    pos, y, d, half, in_row = start, 0.0, 1, _TILE_HALF_WIDTH, 0
    for tile, inner, outer in entries:
        length = CELL if is_double[tile] else TILE_LENGTH
        if in_row == 0 or _row_fits(pos, length, d, far):
            x0 = pos if d > 0 else pos - length
            half = _DOUBLE_HALF_WIDTH if is_double[tile] else _TILE_HALF_WIDTH
            pieces.append(_Piece(x0, y - half, x0 + length, y + half, d, 0, inner, outer, tile))
            pos += d * (length + GAP)
            in_row += 1
            continue
        end = pos - d * GAP  # the outer edge of the row's last tile
        cx0 = end - CELL if d > 0 else end
        top = y + half + GAP
        pieces.append(_Piece(cx0, top, cx0 + CELL, top + TILE_LENGTH, 0, 1, inner, outer, tile))
        y = top + 1.5 * CELL  # the middle of the corner tile's lower half
        d = -d
        pos = cx0 - GAP if d < 0 else cx0 + CELL + GAP
        half, in_row = _TILE_HALF_WIDTH, 0
    if not pieces:
        return pieces, (start + CELL / 2, 0.0)
    if in_row == 0 or _row_fits(pos, TILE_LENGTH, d, far):
        return pieces, (pos + d * CELL / 2, y)
    end = pos - d * GAP  # the next tile would turn the corner: its first half goes under the last tile
    return pieces, (end - d * CELL / 2, y + half + GAP + CELL / 2)


def _rotate(x: float, y: float, quarter_turns: int) -> tuple[float, float]:
    """Rotate by ``quarter_turns`` x 90 degrees clockwise on screen (y points down)."""
    for _ in range(quarter_turns):
        x, y = -y, x
    return x, y


def _box(tiles: Sequence[PlacedTile], anchor: Optional[tuple[float, float]]) -> Rect:
    """The bounding box of ``tiles`` and of a marker at ``anchor``."""
    rects = [(t.x0, t.y0, t.x1, t.y1) for t in tiles]
    if anchor is not None:
        ax, ay = anchor
        rects.append((ax - MARKER_REACH, ay - MARKER_REACH, ax + MARKER_REACH, ay + MARKER_REACH))
    return _union(rects)


def _union(boxes: Sequence[Rect]) -> Rect:
    if not boxes:
        return _EMPTY_BOX
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def _straight_length(board: Board, slot: int) -> float:
    """How long a straight run arm ``slot`` needs, with a cell to spare: any limit this long lays it straight."""
    is_double = board.tiles.is_double
    return sum((CELL if is_double[t] else TILE_LENGTH) + GAP for t, _, _ in board.arms[slot]) + CELL


def _lay_arm(board: Board, slot: int, start: float, limit: float) -> _Arm:
    """Arm ``slot`` of ``board`` laid out from ``start`` with a straight run of up to ``limit``, turned
    onto its side. Callers pass :data:`STRAIGHT` for any limit of at least :func:`_straight_length`."""
    pieces, (mx, my) = _snake(board.arms[slot], start, limit, board.tiles.is_double)
    k = QUARTER_TURNS[slot]
    tiles = []
    for p in pieces:
        ax, ay = _rotate(p.x0, p.y0, k)
        bx, by = _rotate(p.x1, p.y1, k)
        dx, dy = _rotate(p.dx, p.dy, k)
        first, second = (p.inner, p.outer) if dx > 0 or dy > 0 else (p.outer, p.inner)
        tiles.append(PlacedTile(p.tile, min(ax, bx), min(ay, by), max(ax, bx), max(ay, by), first, second, False))
    anchor = _rotate(mx, my, k) if slot in board.open_slots else None
    return _Arm(tiles, anchor, _box(tiles, anchor))


class _Arms:
    """The arms of ``board`` laid out on demand, each once per distinct layout: every limit the whole arm
    fits in lays it the same way (straight)."""

    def __init__(self, board: Board, starts: dict[int, float]) -> None:
        self.board, self.starts = board, starts
        self.straight = {slot: _straight_length(board, slot) for slot in starts}
        self.laid: dict[tuple[int, float], _Arm] = {}

    def get(self, slot: int, limit: float) -> _Arm:
        if limit >= self.straight[slot]:
            limit = STRAIGHT
        arm = self.laid.get((slot, limit))
        if arm is None:
            arm = self.laid[slot, limit] = _lay_arm(self.board, slot, self.starts[slot], limit)
        return arm

    def chosen(self, limits: tuple[float, float]) -> dict[int, _Arm]:
        """Every arm laid with its limit of ``limits`` (the W/E one, then the N/S one)."""
        return {slot: self.get(slot, _limit(slot, limits)) for slot in self.starts}


def _centre(board: Board) -> tuple[PlacedTile, dict[int, float]]:
    """The centre tile (the spinner upright, or the lead lying) and where each of its arms starts."""
    if board.spinner >= 0:
        v = board.spinner
        tile = PlacedTile(board.spinner_tile, -CELL / 2, -CELL, CELL / 2, CELL, v, v, True)
        return tile, {W: CELL / 2 + GAP, E: CELL / 2 + GAP, N: CELL + GAP, S: CELL + GAP}
    assert board.lead is not None  # a non-empty board without a spinner is a line with a lead
    lead, west, east = board.lead
    tile = PlacedTile(lead, -CELL, -CELL / 2, CELL, CELL / 2, west, east, True)
    return tile, {W: CELL + GAP, E: CELL + GAP}


def _limit(slot: int, limits: tuple[float, float]) -> float:
    """The straight-run limit of arm ``slot``: ``limits`` holds the W/E one, then the N/S one."""
    return limits[0] if slot in (W, E) else limits[1]


def _assemble(board: Board, centre: PlacedTile, arms: dict[int, _Arm], limits: tuple[float, float]) -> Layout:
    tiles = [centre]
    ends = []
    for slot, arm in arms.items():
        tiles.extend(arm.tiles)
        if arm.anchor is not None:
            ends.append(OpenEnd(slot, arm.anchor[0], arm.anchor[1], board.ends[slot], end_points(board, slot)))
    box = _union([_box([centre], None)] + [arm.box for arm in arms.values()])
    return Layout(tiles, ends, limits, box)


def lay_out(board: Board, limits: tuple[float, float] = (STRAIGHT, STRAIGHT)) -> Layout:
    """Lay ``board`` out with straight runs of up to ``limits`` cells (the W/E arms', the N/S arms')."""
    if board.size == 0:
        return Layout([], [], limits, _EMPTY_BOX)
    centre, starts = _centre(board)
    return _assemble(board, centre, _Arms(board, starts).chosen(limits), limits)


def fit_layout(board: Board, width: float, height: float, most: float = math.inf,
               enough: float = math.inf) -> tuple[Layout, float]:
    """The layout of ``board`` whose tiles come out biggest in a ``width`` x ``height`` box, and its scale
    (box units per cell, at most ``most``).

    Straight arms read best, so they are kept while they give a scale of at least ``enough`` (and then no
    bent arm is laid at all: this runs for every ``rgb_array`` frame). Past that, the limits of
    :data:`FIT_LIMITS` (one for the W/E arms, one for N/S) are tried and the pair with (nearly,
    :data:`FIT_SLACK`) the biggest scale and the fewest bends among those is kept.
    """
    if board.size == 0:
        return lay_out(board), most
    centre, starts = _centre(board)
    arms = _Arms(board, starts)
    centre_box = _box([centre], None)

    def scale_of(limits: tuple[float, float]) -> float:
        x0, y0, x1, y1 = _union([centre_box] + [arm.box for arm in arms.chosen(limits).values()])
        return min(width / (x1 - x0), height / (y1 - y0), most)

    limits = (STRAIGHT, STRAIGHT)
    scale = scale_of(limits)
    if scale < enough:
        vertical = FIT_LIMITS if board.spinner >= 0 else (STRAIGHT,)  # a line has no N/S arms
        candidates = [
            (scale_of(pair), sum(min(limit, _LIMIT_RANK_CAP) for limit in pair), pair)
            for pair in ((h, v) for h in FIT_LIMITS for v in vertical)
        ]
        good = FIT_SLACK * max(c[0] for c in candidates)
        scale, _, limits = max((c for c in candidates if c[0] >= good), key=lambda c: (c[1], c[0]))
    return _assemble(board, centre, arms.chosen(limits), limits), scale
