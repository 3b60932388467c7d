"""Headless raster rendering of the table for ``render_mode="rgb_array"``: numpy only, no Pillow.

:func:`render_rgb` draws one fixed-size frame (:data:`FRAME_WIDTH` x :data:`FRAME_HEIGHT`, uint8 RGB) of
a :class:`~allfives_env.core.game.Game`. The size never changes, because gymnasium / PettingZoo video
recorders and most training dashboards expect every frame of an episode to have one shape; big layouts
are bent and scaled to fit instead.

What a frame shows:

* header: one panel per seat with its name, its side's score, its hand size as face-down tiles and a
  number; the seat to act is marked in yellow, the viewer is tagged ``YOU``;
* board: the spinner (or, before the first double, the lead) in the centre, drawn crosswise; the W and E
  arms left and right, N and S up and down; doubles crosswise to their arm; each tile with its pips (the
  half that touches the previous tile towards the centre shows the inner pip, as in
  :mod:`allfives_env.render`); each open end carries a round marker: orange with the points that end adds
  to the count, grey with the open value when the end is open but not counted (an empty arm of the
  spinner); the spinner is always framed so it can be found in a big layout, in gold while its own 2v
  is in the count; the last tile played is framed in light blue;
* footer: the viewer's own tiles face up (its playable tiles framed in yellow when it is to act), the
  count in large digits, whether it scores (a positive multiple of 5), how it adds up, whose turn it is
  or the result, the hand number, the boneyard and the target.

Only ``seat``'s hand is ever drawn face up, so a frame can be shown to that player without leaking hidden
information; ``seat=None`` is a spectator view with no hand face up.

Layout of long arms (a pinwheel): each arm first runs straight out of the spinner, then snakes back and
forth inside its own quadrant, E into the south-east, S into the south-west, W into the north-west, N
into the north-east, each turn made by one tile set at right angles. Because every arm keeps to its own
quadrant the arms can never cross, whatever their lengths. The arms stay straight while the straight
cross, scaled to the board area, keeps tiles big enough to read; past that the straight run length is
chosen among a few candidates to give the largest tiles. :func:`layout_board` exposes the result so
tests can check that it stays on the canvas.

Text uses a built-in 5x7 bitmap font (digits, capitals, a little punctuation; lower case is drawn as
upper case). Pips are coloured by value, as on many double-nine and double-twelve sets, which makes
matching ends easy to see. Values 10-12 (double-twelve) are always written in digits, since ten or more
dots cannot be told apart at a glance; smaller values fall back to digits only on tiles too small for
their dot grid.

Everything is drawn with vectorised numpy slice fills; all pips of a frame are stamped in a few fancy-index
assignments. :func:`png_bytes` / :func:`write_png` save frames as PNG with ``zlib`` and ``struct`` alone.
"""

from __future__ import annotations

import math
import struct
import zlib
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple, Optional, Sequence, Union

import numpy as np

from .core.board import E, N, S, W, Board
from .core.game import Game

__all__ = [
    "FRAME_WIDTH", "FRAME_HEIGHT", "BOARD_AREA", "BoardLayout", "LaidTile", "EndMarker", "layout_board",
    "render_rgb", "png_bytes", "write_png", "text_mask",
]

FRAME_WIDTH = 800
FRAME_HEIGHT = 600
HEADER_HEIGHT = 68
FOOTER_HEIGHT = 112
#: the rectangle (x0, y0, x1, y1), end exclusive, in which the layout is drawn
BOARD_AREA = (0, HEADER_HEIGHT, FRAME_WIDTH, FRAME_HEIGHT - FOOTER_HEIGHT)
_BOARD_PAD = 10  # pixels kept free inside the board area (markers may reach into it)
_MAX_UNIT = 28.0  # largest half-tile size in pixels: small layouts should not look bloated
_GOOD_UNIT = 20.0  # half-tile size that reads well: arms bend only to stay at least this big

Color = tuple[int, int, int]

FELT: Color = (18, 102, 62)
FELT_DARK: Color = (12, 80, 48)
PANEL: Color = (28, 36, 46)
PANEL_LINE: Color = (60, 72, 88)
WHITE: Color = (235, 238, 240)
GREY: Color = (150, 156, 162)
YELLOW: Color = (250, 205, 40)
GREEN_TEXT: Color = (110, 230, 120)
ORANGE: Color = (255, 160, 30)
IVORY: Color = (247, 242, 226)
TILE_EDGE: Color = (40, 38, 34)
DIVIDER: Color = (150, 142, 128)
BACK: Color = (178, 52, 48)
BACK_EDGE: Color = (250, 228, 200)
GOLD: Color = (255, 200, 0)
SPINNER_FRAME: Color = (225, 225, 225)
LAST_PLAYED: Color = (120, 200, 255)
TEXT_DARK: Color = (20, 20, 20)

#: pip colour of each value (index = pips); dark, saturated colours that read well on ivory
PIP_COLORS = np.array(
    [
        (0, 0, 0), (0, 105, 200), (0, 135, 60), (200, 30, 30), (125, 72, 20), (25, 40, 160), (185, 115, 0),
        (130, 30, 160), (0, 125, 128), (70, 70, 70), (200, 0, 120), (95, 115, 0), (25, 25, 25),
    ],
    dtype=np.uint8,
)

# ====================================================================== the 5x7 font
# one glyph per line: the character, then its 7 rows of 5 pixels ("#" = ink)
_FONT_SOURCE = r"""
0 .###. #...# #..## #.#.# ##..# #...# .###.
1 ..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.
2 .###. #...# ....# ...#. ..#.. .#... #####
3 ##### ...#. ..#.. ...#. ....# #...# .###.
4 ...#. ..##. .#.#. #..#. ##### ...#. ...#.
5 ##### #.... ####. ....# ....# #...# .###.
6 ..##. .#... #.... ####. #...# #...# .###.
7 ##### ....# ...#. ..#.. .#... .#... .#...
8 .###. #...# #...# .###. #...# #...# .###.
9 .###. #...# #...# .#### ....# ...#. .##..
A .###. #...# #...# ##### #...# #...# #...#
B ####. #...# #...# ####. #...# #...# ####.
C .###. #...# #.... #.... #.... #...# .###.
D ###.. #..#. #...# #...# #...# #..#. ###..
E ##### #.... #.... ####. #.... #.... #####
F ##### #.... #.... ####. #.... #.... #....
G .###. #...# #.... #.### #...# #...# .####
H #...# #...# #...# ##### #...# #...# #...#
I .###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.
J ..### ...#. ...#. ...#. ...#. #..#. .##..
K #...# #..#. #.#.. ##... #.#.. #..#. #...#
L #.... #.... #.... #.... #.... #.... #####
M #...# ##.## #.#.# #.#.# #...# #...# #...#
N #...# #...# ##..# #.#.# #..## #...# #...#
O .###. #...# #...# #...# #...# #...# .###.
P ####. #...# #...# ####. #.... #.... #....
Q .###. #...# #...# #...# #.#.# #..#. .##.#
R ####. #...# #...# ####. #.#.. #..#. #...#
S .#### #.... #.... .###. ....# ....# ####.
T ##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..
U #...# #...# #...# #...# #...# #...# .###.
V #...# #...# #...# #...# #...# .#.#. ..#..
W #...# #...# #...# #.#.# #.#.# #.#.# .#.#.
X #...# #...# .#.#. ..#.. .#.#. #...# #...#
Y #...# #...# .#.#. ..#.. ..#.. ..#.. ..#..
Z ##### ....# ...#. ..#.. .#... #.... #####
: ..... .##.. .##.. ..... .##.. .##.. .....
- ..... ..... ..... .###. ..... ..... .....
+ ..... ..#.. ..#.. ##### ..#.. ..#.. .....
= ..... ..... ##### ..... ##### ..... .....
. ..... ..... ..... ..... ..... .##.. .##..
, ..... ..... ..... ..... .##.. ..#.. .#...
/ ..... ....# ...#. ..#.. .#... #.... .....
( ...#. ..#.. .#... .#... .#... ..#.. ...#.
) .#... ..#.. ...#. ...#. ...#. ..#.. .#...
_ ..... ..... ..... ..... ..... ..... #####
! ..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..
? .###. #...# ....# ...#. ..#.. ..... ..#..
# .#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.
% ##... ##..# ...#. ..#.. .#... #..## ...##
* ..... ..#.. #.#.# .###. #.#.# ..#.. .....
< ...#. ..#.. .#... #.... .#... ..#.. ...#.
> .#... ..#.. ...#. ....# ...#. ..#.. .#...
' ..#.. ..#.. .#... ..... ..... ..... .....
@ .###. #...# #.### #.#.# #.### #.... .###.
| ..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..
[ .###. .#... .#... .#... .#... .#... .###.
] .###. ...#. ...#. ...#. ...#. ...#. .###.
"""


def _build_font() -> np.ndarray:
    """The glyph table: ``table[ord(c)]`` is the 7x5 bool bitmap of character ``c`` (space: all off)."""
    table = np.zeros((128, 7, 5), dtype=bool)
    for line in _FONT_SOURCE.strip().splitlines():
        ch, *rows = line.split()
        assert len(ch) == 1 and len(rows) == 7 and all(len(r) == 5 for r in rows), line
        table[ord(ch)] = np.array([[c == "#" for c in r] for r in rows], dtype=bool)
    return table


_FONT = _build_font()
_KNOWN = np.zeros(128, dtype=bool)
_KNOWN[[ord(line.split()[0]) for line in _FONT_SOURCE.strip().splitlines()] + [ord(" ")]] = True


@lru_cache(maxsize=2048)
def text_mask(text: str, scale: int = 1) -> np.ndarray:
    """The pixels of ``text`` in the built-in 5x7 font, ``scale`` times enlarged, as a read-only bool mask.

    Cached: a frame draws the same few labels (``COUNT``, seat names, numbers) every time, and a cache hit
    is much cheaper than rebuilding the mask.
    """
    codes = [ord(c) for c in text.upper()]
    codes = [c if c < 128 and _KNOWN[c] else ord("?") for c in codes]
    if not codes:
        return np.zeros((7 * scale, 0), dtype=bool)
    glyphs = np.concatenate([_FONT[codes], np.zeros((len(codes), 7, 1), dtype=bool)], axis=2)
    mask = glyphs.transpose(1, 0, 2).reshape(7, len(codes) * 6)[:, :-1]
    if scale > 1:
        mask = mask.repeat(scale, axis=0).repeat(scale, axis=1)
    mask.setflags(write=False)
    return mask


def _text_width(text: str, scale: int) -> int:
    return max(0, (6 * len(text) - 1) * scale)


def _fit_text(text: str, scale: int, width: int) -> str:
    """``text`` cut to ``width`` pixels (names can be long; panels are not)."""
    most = max(0, (width // scale + 1) // 6)
    return text if len(text) <= most else text[: max(0, most - 1)] + "."


# ====================================================================== primitives (all clip to the canvas)
def _fill(img: np.ndarray, x0: float, y0: float, x1: float, y1: float, color: Color) -> None:
    h, w = img.shape[:2]
    x0, y0 = max(int(x0), 0), max(int(y0), 0)
    x1, y1 = min(int(x1), w), min(int(y1), h)
    if x0 < x1 and y0 < y1:
        img[y0:y1, x0:x1] = color


def _frame(img: np.ndarray, x0: int, y0: int, x1: int, y1: int, t: int, color: Color) -> None:
    """A rectangle outline ``t`` pixels thick, drawn inside (x0, y0, x1, y1)."""
    _fill(img, x0, y0, x1, y0 + t, color)
    _fill(img, x0, y1 - t, x1, y1, color)
    _fill(img, x0, y0, x0 + t, y1, color)
    _fill(img, x1 - t, y0, x1, y1, color)


def _blit(img: np.ndarray, mask: np.ndarray, x: int, y: int, color: Color) -> None:
    h, w = mask.shape
    H, W = img.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, W), min(y + h, H)
    if x0 < x1 and y0 < y1:
        img[y0:y1, x0:x1][mask[y0 - y:y1 - y, x0 - x:x1 - x]] = color


def _text(img: np.ndarray, text: str, x: int, y: int, scale: int, color: Color, align: str = "left") -> int:
    """Draw ``text`` with its top at ``y``; ``align`` says whether ``x`` is its left, centre or right.
    Returns the x just after the text."""
    mask = text_mask(text, scale)
    if align == "center":
        x -= mask.shape[1] // 2
    elif align == "right":
        x -= mask.shape[1]
    _blit(img, mask, int(x), int(y), color)
    return int(x) + mask.shape[1]


@lru_cache(maxsize=128)
def _disk_offsets(diameter: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel offsets (dy, dx) of a round dot ``diameter`` pixels across.

    The dot is laid on its own pixel grid (centred between pixels when the diameter is even) and keeps
    the pixels whose centres lie inside the circle: small dots come out round, not as plus signs.
    """
    c = np.arange(diameter) - (diameter - 1) / 2.0
    yy, xx = np.meshgrid(c, c, indexing="ij")
    inside = yy * yy + xx * xx <= (diameter / 2.0) ** 2 + 1e-9
    shift = diameter // 2
    ys, xs = np.nonzero(inside)
    return (ys - shift).astype(np.intp), (xs - shift).astype(np.intp)


def _disks(img: np.ndarray, cx: np.ndarray, cy: np.ndarray, radius: float, colors: np.ndarray) -> None:
    """Stamp many disks of one radius at once: one fancy-index assignment for all of them."""
    if len(cx) == 0:
        return
    dy, dx = _disk_offsets(max(2, int(round(2 * radius))))
    ys = (np.rint(cy).astype(np.intp)[:, None] + dy[None, :]).ravel()
    xs = (np.rint(cx).astype(np.intp)[:, None] + dx[None, :]).ravel()
    cols = np.repeat(np.asarray(colors, dtype=np.uint8).reshape(-1, 3), len(dy), axis=0)
    h, w = img.shape[:2]
    ok = (ys >= 0) & (ys < h) & (xs >= 0) & (xs < w)
    img[ys[ok], xs[ok]] = cols[ok]


def _disk(img: np.ndarray, cx: float, cy: float, radius: float, color: Color) -> None:
    _disks(img, np.array([cx]), np.array([cy]), radius, np.array([color], dtype=np.uint8))


# ====================================================================== pips
_A, _B, _C = 0.26, 0.5, 0.74
_GRID9 = [(u, v) for v in (_A, _B, _C) for u in (_A, _B, _C)]
_PIPS: dict[int, list[tuple[float, float]]] = {
    0: [],
    1: [(_B, _B)],
    2: [(_A, _A), (_C, _C)],
    3: [(_A, _A), (_B, _B), (_C, _C)],
    4: [(_A, _A), (_C, _A), (_A, _C), (_C, _C)],
    5: [(_A, _A), (_C, _A), (_B, _B), (_A, _C), (_C, _C)],
    6: [(u, v) for u in (_A, _C) for v in (_A, _B, _C)],
    7: [(u, v) for u in (_A, _C) for v in (_A, _B, _C)] + [(_B, _B)],
    8: [p for p in _GRID9 if p != (_B, _B)],
    9: _GRID9,
}


def _pips_fit(value: int, half: float) -> bool:
    """Whether a half ``half`` pixels wide can show ``value`` as readable dots (else: digits).

    Ten or more dots cannot be told apart at a glance on any tile size we draw, so 10-12 are always
    digits; 7-9 need a bigger half than 1-6 for their 3x3 grid to stay distinct."""
    if value <= 6:
        return half >= 12
    if value <= 9:
        return half >= 17
    return False


class _PipBuffer:
    """Collects pip centres so that all pips of one size are stamped in one numpy call."""

    def __init__(self) -> None:
        self.x: list[float] = []
        self.y: list[float] = []
        self.v: list[int] = []

    def flush(self, img: np.ndarray, radius: float) -> None:
        if self.x:
            _disks(img, np.array(self.x), np.array(self.y), radius, PIP_COLORS[np.array(self.v)])
        self.x.clear()
        self.y.clear()
        self.v.clear()


def _draw_half(img: np.ndarray, buf: _PipBuffer, x0: int, y0: int, x1: int, y1: int, value: int,
               long_axis_x: bool) -> None:
    """One half of a tile: dots when they fit, else the number in digits."""
    if value <= 0:
        return
    w, h = x1 - x0, y1 - y0
    side = min(w, h)
    if _pips_fit(value, side) and value in _PIPS:
        for u, v in _PIPS[value]:
            if long_axis_x:
                u, v = v, u  # lines of pips run along the tile's long side
            buf.x.append(x0 + u * (w - 1))
            buf.y.append(y0 + v * (h - 1))
            buf.v.append(value)
        return
    label = str(value)
    scale = max(1, min(int(0.62 * side) // 7, int(0.9 * side) // max(1, 6 * len(label) - 1)))
    r, g, b = (int(c) for c in PIP_COLORS[min(value, len(PIP_COLORS) - 1)])
    color = (r, g, b)
    _text(img, label, (x0 + x1) // 2 + 1, (y0 + y1) // 2 - (7 * scale) // 2, scale, color, align="center")


def _draw_tile(img: np.ndarray, buf: _PipBuffer, x0: int, y0: int, x1: int, y1: int, first: int,
               second: int) -> None:
    """A face-up tile: ``first`` on its left (or top) half, ``second`` on the right (or bottom) half."""
    _fill(img, x0, y0, x1, y1, TILE_EDGE)
    _fill(img, x0 + 1, y0 + 1, x1 - 1, y1 - 1, IVORY)
    horizontal = (x1 - x0) >= (y1 - y0)
    t = 2 if min(x1 - x0, y1 - y0) >= 30 else 1
    if horizontal:
        mid = (x0 + x1) // 2
        _fill(img, mid - t // 2, y0 + 2, mid - t // 2 + t, y1 - 2, DIVIDER)
        _draw_half(img, buf, x0 + 1, y0 + 1, mid - 1, y1 - 1, first, True)
        _draw_half(img, buf, mid + 1, y0 + 1, x1 - 1, y1 - 1, second, True)
    else:
        mid = (y0 + y1) // 2
        _fill(img, x0 + 2, mid - t // 2, x1 - 2, mid - t // 2 + t, DIVIDER)
        _draw_half(img, buf, x0 + 1, y0 + 1, x1 - 1, mid - 1, first, False)
        _draw_half(img, buf, x0 + 1, mid + 1, x1 - 1, y1 - 1, second, False)


def _draw_back(img: np.ndarray, x0: int, y0: int, x1: int, y1: int) -> None:
    """A face-down tile (another seat's hand)."""
    _fill(img, x0, y0, x1, y1, BACK_EDGE)
    _fill(img, x0 + 1, y0 + 1, x1 - 1, y1 - 1, BACK)


def _pip_radius(unit: float) -> float:
    return max(1.0, 0.095 * unit)


# ====================================================================== layout of the board
_GAP = 0.12  # between tiles, in half-tile units
_NEAR = 1.0 + 2 * _GAP  # a bent arm keeps this far from the neighbouring arm's centre line
_STRAIGHT = 1e9
_LIMITS = (_STRAIGHT, 30.0, 24.0, 20.0, 16.0, 13.0, 11.0, 9.0, 8.0, 7.0, 6.0)
_TURNS = {W: 2, E: 0, N: 3, S: 1}  # quarter turns clockwise from the canonical east arm


class _Piece(NamedTuple):
    """A tile in an arm's own frame: the arm runs along +x from the centre, and bends towards +y."""

    x0: float
    y0: float
    x1: float
    y1: float
    dx: int  # direction of travel (inner pip -> outer pip)
    dy: int
    inner: int
    outer: int
    tile: int


class LaidTile(NamedTuple):
    """A tile of the layout, in pixels (end exclusive): ``first`` shows on the left/top half."""

    x0: int
    y0: int
    x1: int
    y1: int
    first: int
    second: int
    tile: int
    centre: bool  # the spinner, or the lead of a line without spinner


class EndMarker(NamedTuple):
    """An open end: where its marker sits (pixels), its value, what it adds to the count."""

    slot: int
    x: float
    y: float
    radius: float
    value: int  # the open value (what a tile must show to go there)
    points: int  # what the end adds to the count now (0 when not counted)
    counted: bool


class BoardLayout(NamedTuple):
    """The board drawn in the board area: tiles and end markers in pixels, ``unit`` = half-tile size."""

    tiles: list[LaidTile]
    markers: list[EndMarker]
    unit: float
    bends: tuple[float, float]  # straight run allowed to the W/E and N/S arms (1e9: no bend)


def _snake(entries: Sequence[tuple[int, int, int]], start: float, limit: float,
           tiles_low: Sequence[int], tiles_high: Sequence[int]) -> tuple[list[_Piece], tuple[float, float]]:
    """Lay one arm in its canonical frame and say where the marker of its open end goes.

    The arm starts at x = ``start`` on the line y = 0 and runs towards +x; a row may reach x = start +
    ``limit``, a returning row x = ``_NEAR``. At a row's end the next tile turns the corner: it is set
    upright (1 wide, 2 long) under the row's last tile, and the next row runs back along the middle of its
    lower half. Rows are at least 2 + gap apart, so doubles (2 across) of neighbouring rows never meet, and
    since no arm holds two doubles in a row a turn never needs to follow a turn when ``limit`` >= 6.
    """
    x_far = start + limit
    pieces: list[_Piece] = []
    pos, y, d, half, in_row = start, 0.0, 1, 0.5, 0
    for tile, inner, outer in entries:
        double = tiles_low[tile] == tiles_high[tile]
        length = 1.0 if double else 2.0
        fits = pos + length <= x_far + 1e-9 if d > 0 else pos - length >= _NEAR - 1e-9
        if fits or in_row == 0:
            x0 = pos if d > 0 else pos - length
            hw = 1.0 if double else 0.5
            pieces.append(_Piece(x0, y - hw, x0 + length, y + hw, d, 0, inner, outer, tile))
            pos += d * (length + _GAP)
            half = hw
            in_row += 1
            continue
        end = pos - d * _GAP  # outer edge of the row's last tile
        cx0 = end - 1.0 if d > 0 else end
        top = y + half + _GAP
        pieces.append(_Piece(cx0, top, cx0 + 1.0, top + 2.0, 0, 1, inner, outer, tile))
        y = top + 1.5
        d = -d
        pos = cx0 - _GAP if d < 0 else cx0 + 1.0 + _GAP
        half, in_row = 0.5, 0
    if not pieces:
        return pieces, (start + 0.5, 0.0)
    fits = in_row == 0 or (pos + 2.0 <= x_far + 1e-9 if d > 0 else pos - 2.0 >= _NEAR - 1e-9)
    if fits:
        return pieces, (pos + d * 0.5, y)
    end = pos - d * _GAP
    return pieces, (end - d * 0.5, y + half + _GAP + 0.5)


def _turn(x: float, y: float, k: int) -> tuple[float, float]:
    """Rotate by ``k`` quarter turns clockwise on screen (y points down)."""
    for _ in range(k):
        x, y = -y, x
    return x, y


class _WorldTile(NamedTuple):
    x0: float
    y0: float
    x1: float
    y1: float
    first: int
    second: int
    tile: int
    centre: bool


def _to_world(pieces: list[_Piece], k: int) -> list[_WorldTile]:
    out = []
    for p in pieces:
        ax, ay = _turn(p.x0, p.y0, k)
        bx, by = _turn(p.x1, p.y1, k)
        dx, dy = _turn(p.dx, p.dy, k)
        if dx > 0 or dy > 0:
            first, second = p.inner, p.outer
        else:
            first, second = p.outer, p.inner
        out.append(_WorldTile(min(ax, bx), min(ay, by), max(ax, bx), max(ay, by), first, second, p.tile, False))
    return out


def _bbox(tiles: list[_WorldTile], marker: Optional[tuple[float, float]]) -> tuple[float, float, float, float]:
    xs0 = [t.x0 for t in tiles]
    ys0 = [t.y0 for t in tiles]
    xs1 = [t.x1 for t in tiles]
    ys1 = [t.y1 for t in tiles]
    if marker is not None:
        xs0.append(marker[0] - 0.55)
        xs1.append(marker[0] + 0.55)
        ys0.append(marker[1] - 0.55)
        ys1.append(marker[1] + 0.55)
    if not xs0:
        return (math.inf, math.inf, -math.inf, -math.inf)
    return (min(xs0), min(ys0), max(xs1), max(ys1))


def _end_points(board: Board, slot: int) -> tuple[int, bool]:
    """What end ``slot`` adds to the count, and whether it counts (mirrors :meth:`Board.count`)."""
    if not board.counted(slot):
        return 0, False
    if board.spinner >= 0 and board.arm_len[slot] == 0:
        return board.spinner, True  # sniff: an uncovered N/S end counts the spinner value
    v = board.ends[slot]
    return (2 * v if board.end_double[slot] else v), True


def layout_board(game: Game, area: tuple[int, int, int, int] = BOARD_AREA) -> BoardLayout:
    """Where every tile of the layout and every open-end marker goes, in pixels, inside ``area``.

    Keeps the arms straight while that leaves tiles big enough to read; otherwise tries a few
    straight-run lengths for the W/E and the N/S arms and keeps the one with the largest tiles (the
    fewest bends among near-equals), then centres the layout's bounding box in
    ``area``. Exposed so that tests can check that nothing leaves the canvas and no two tiles overlap.
    """
    board = game.board
    if board.size == 0:
        return BoardLayout([], [], _MAX_UNIT, (_STRAIGHT, _STRAIGHT))
    low, high = board.low, board.high
    if board.spinner >= 0:
        v = board.spinner
        centre = [_WorldTile(-0.5, -1.0, 0.5, 1.0, v, v, board.spinner_tile, True)]
        starts = {W: 0.5 + _GAP, E: 0.5 + _GAP, N: 1.0 + _GAP, S: 1.0 + _GAP}
        slots: tuple[int, ...] = (W, E, N, S)
    else:
        assert board.lead is not None
        tile, wpip, epip = board.lead
        centre = [_WorldTile(-1.0, -0.5, 1.0, 0.5, wpip, epip, tile, True)]
        starts = {W: 1.0 + _GAP, E: 1.0 + _GAP}
        slots = (W, E)
    open_slots = set(board.open_slots)
    # per arm and straight-run limit: the world tiles, the marker, the bounding box
    options: dict[int, dict[float, tuple[list[_WorldTile], Optional[tuple[float, float]], tuple]]] = {}
    for slot in slots:
        k = _TURNS[slot]
        per: dict[float, tuple[list[_WorldTile], Optional[tuple[float, float]], tuple]] = {}
        straight_len = sum(1.0 + _GAP if low[t] == high[t] else 2.0 + _GAP for t, _, _ in board.arms[slot]) + 1.0
        for limit in _LIMITS:
            if limit != _STRAIGHT and limit >= straight_len:
                continue  # would not bend: same as straight
            pieces, mark = _snake(board.arms[slot], starts[slot], limit, low, high)
            world = _to_world(pieces, k)
            wmark = _turn(mark[0], mark[1], k) if slot in open_slots else None
            per[limit] = (world, wmark, _bbox(world, wmark))
        options[slot] = per
    cb = _bbox(centre, None)
    ax0, ay0, ax1, ay1 = area
    aw, ah = ax1 - ax0 - 2 * _BOARD_PAD, ay1 - ay0 - 2 * _BOARD_PAD
    candidates = []
    for lh in _LIMITS:
        for lv in (_LIMITS if board.spinner >= 0 else (_STRAIGHT,)):
            boxes = [cb]
            for slot in slots:
                per = options[slot]
                limit = lh if slot in (W, E) else lv
                boxes.append(per[limit][2] if limit in per else per[_STRAIGHT][2])
            bx0 = min(b[0] for b in boxes)
            by0 = min(b[1] for b in boxes)
            bx1 = max(b[2] for b in boxes)
            by1 = max(b[3] for b in boxes)
            unit = min(aw / (bx1 - bx0), ah / (by1 - by0), _MAX_UNIT)
            candidates.append((unit, min(lh, 1000.0) + min(lv, 1000.0), lh, lv, (bx0, by0, bx1, by1)))
    # a straight cross reads best: keep it while its tiles are big enough to read; once the arms must
    # bend anyway, take (nearly) the largest tiles, with the fewest bends among near-equals
    straight = candidates[0]
    if straight[0] >= _GOOD_UNIT:
        chosen = straight
    else:
        enough = 0.97 * max(c[0] for c in candidates)
        chosen = max((c for c in candidates if c[0] >= enough), key=lambda c: (c[1], c[0]))
    unit, _, lh, lv, (bx0, by0, bx1, by1) = chosen
    ox = ax0 + (ax1 - ax0 - (bx1 - bx0) * unit) / 2 - bx0 * unit
    oy = ay0 + (ay1 - ay0 - (by1 - by0) * unit) / 2 - by0 * unit

    def px(x: float, y: float) -> tuple[int, int]:
        return int(round(ox + x * unit)), int(round(oy + y * unit))

    laid: list[LaidTile] = []
    markers: list[EndMarker] = []
    world_tiles = list(centre)
    for slot in slots:
        per = options[slot]
        limit = lh if slot in (W, E) else lv
        world, wmark, _ = per[limit] if limit in per else per[_STRAIGHT]
        world_tiles.extend(world)
        if wmark is not None:
            points, counted = _end_points(board, slot)
            mx, my = ox + wmark[0] * unit, oy + wmark[1] * unit
            markers.append(EndMarker(slot, mx, my, max(8.0, 0.5 * unit), board.ends[slot], points, counted))
    for t in world_tiles:
        x0, y0 = px(t.x0, t.y0)
        x1, y1 = px(t.x1, t.y1)
        laid.append(LaidTile(x0, y0, x1, y1, t.first, t.second, t.tile, t.centre))
    return BoardLayout(laid, markers, unit, (lh, lv))


# ====================================================================== the frame
def _result_text(game: Game, names: list[str]) -> str:
    if game.winner is None:
        text = "DRAW"
    elif game.rules.partnership:
        text = f"TEAM {game.winner}+{game.winner + 2} WINS"
    else:
        text = f"{names[game.winner]} WINS"
    return text + (" (MAX HANDS)" if game.truncated else "")


def _draw_header(img: np.ndarray, game: Game, seat: Optional[int], names: list[str]) -> None:
    n = game.num_players
    _fill(img, 0, 0, FRAME_WIDTH, HEADER_HEIGHT, PANEL)
    sizes = game.hand_sizes()
    width = FRAME_WIDTH // n
    for s in range(n):
        x0 = s * width
        x1 = FRAME_WIDTH if s == n - 1 else x0 + width
        if s:
            _fill(img, x0, 4, x0 + 1, HEADER_HEIGHT - 4, PANEL_LINE)
        acting = not game.over and game.current == s
        if acting:
            _fill(img, x0, 0, x1, 4, YELLOW)
        label = names[s] + ("  YOU" if seat == s else "")
        _text(img, _fit_text(label, 2, x1 - x0 - 16), x0 + 8, 8, 2, YELLOW if acting else WHITE)
        side = game.side_of[s]
        score = f"{game.scores[side]}"
        if game.rules.partnership:
            score_label = f"TEAM {side}+{side + 2}: {score}"
        else:
            score_label = f"SCORE {score}"
        _text(img, _fit_text(score_label, 1, x1 - x0 - 16), x0 + 8, 28, 1, GREY)
        # hand size as face-down tiles and a number
        count_label = f"{sizes[s]}"
        room = x1 - x0 - 16 - _text_width(count_label, 2) - 8
        shown = max(0, min(sizes[s], room // 9))
        for i in range(shown):
            bx = x0 + 8 + 9 * i
            _draw_back(img, bx, 42, bx + 7, 60)
        _text(img, count_label, x0 + 8 + 9 * shown + 4, 45, 2, WHITE)
    _fill(img, 0, HEADER_HEIGHT - 1, FRAME_WIDTH, HEADER_HEIGHT, PANEL_LINE)


def _draw_board(img: np.ndarray, game: Game, names: list[str]) -> None:
    ax0, ay0, ax1, ay1 = BOARD_AREA
    _fill(img, ax0, ay0, ax1, ay1, FELT)
    _frame(img, ax0 + 3, ay0 + 3, ax1 - 3, ay1 - 3, 1, FELT_DARK)
    board = game.board
    if board.size == 0:
        if game.over:
            msg = "GAME OVER"
        elif len(game.legal) == 1:  # a rule fixes the lead (must_lead_it: the highest double)
            msg = f"HAND {game.hand_number}: {names[game.current]} MUST LEAD {game.tiles.name(game.legal[0] >> 2)}"
        else:
            msg = f"HAND {game.hand_number}: {names[game.current]} TO LEAD"
        _text(img, _fit_text(msg, 2, ax1 - ax0 - 20), (ax0 + ax1) // 2, (ay0 + ay1) // 2 - 7, 2, WHITE, "center")
    else:
        layout = layout_board(game)
        buf = _PipBuffer()
        last = game.played[-1][0] if game.played else -1
        for t in layout.tiles:
            _draw_tile(img, buf, t.x0, t.y0, t.x1, t.y1, t.first, t.second)
        buf.flush(img, _pip_radius(layout.unit))
        for t in layout.tiles:
            if t.centre and board.spinner >= 0:
                # the spinner is always framed so it can be found in a big layout; gold while its 2v counts
                counts = board.spinner_counts()
                _frame(img, t.x0 - 3, t.y0 - 3, t.x1 + 3, t.y1 + 3, 2, GOLD if counts else SPINNER_FRAME)
            elif t.tile == last:
                _frame(img, t.x0 - 2, t.y0 - 2, t.x1 + 2, t.y1 + 2, 2, LAST_PLAYED)
        for m in layout.markers:
            color = ORANGE if m.counted else GREY
            _disk(img, m.x, m.y, m.radius + 1.5, TEXT_DARK)
            _disk(img, m.x, m.y, m.radius, color)
            label = str(m.points if m.counted else m.value)
            scale = 2 if (m.radius >= 10 and len(label) == 1) or m.radius >= 14 else 1
            _text(img, label, int(round(m.x)) + 1, int(round(m.y)) - (7 * scale) // 2, scale, TEXT_DARK, "center")
    if game.over:
        msg = "GAME OVER: " + _result_text(game, names)
        msg = _fit_text(msg, 2, ax1 - ax0 - 40)
        w = _text_width(msg, 2)
        cx = (ax0 + ax1) // 2
        _fill(img, cx - w // 2 - 10, ay0 + 8, cx + w // 2 + 12, ay0 + 34, PANEL)
        _frame(img, cx - w // 2 - 10, ay0 + 8, cx + w // 2 + 12, ay0 + 34, 2, YELLOW)
        _text(img, msg, cx + 1, ay0 + 14, 2, YELLOW, "center")


def _draw_hand(img: np.ndarray, game: Game, seat: Optional[int], names: list[str], x0: int, y0: int, x1: int,
               y1: int) -> None:
    if seat is None:
        _text(img, "SPECTATOR VIEW: NO HAND SHOWN", x0 + 10, y0 + 8, 1, GREY)
        return
    hand = game.hand(seat)
    _text(img, _fit_text(f"{names[seat]}'S HAND ({len(hand)})", 1, x1 - x0 - 20), x0 + 10, y0 + 6, 1, GREY)
    if not hand:
        _text(img, "(EMPTY)", x0 + 10, y0 + 30, 2, GREY)
        return
    playable: set[int] = set()
    if not game.over and game.current == seat:
        playable = {a >> 2 for a in game.legal if a != game.draw_action}
    top, avail_w, avail_h = y0 + 18, x1 - x0 - 20, y1 - y0 - 24
    # as many rows as give the biggest tiles (a hand can grow far past its deal under may_draw_when_able)
    unit, per_row = max(
        (min(avail_w / (per_row * 1.25), (avail_h / rows) / 2.25, 32.0), per_row)
        for rows in (1, 2, 3, 4)
        for per_row in (math.ceil(len(hand) / rows),)
    )
    u = max(3, int(unit))
    step_x, step_y = max(u + 2, int(u * 1.25)), max(2 * u + 2, int(u * 2.25))
    buf = _PipBuffer()
    boxes = []
    tiles = game.tiles
    for i, t in enumerate(hand):
        r, c = divmod(i, per_row)
        tx, ty = x0 + 10 + c * step_x, top + r * step_y
        _draw_tile(img, buf, tx, ty, tx + u, ty + 2 * u, tiles.high[t], tiles.low[t])
        boxes.append((t, tx, ty))
    buf.flush(img, _pip_radius(u))
    for t, tx, ty in boxes:
        if t in playable:
            _frame(img, tx - 2, ty - 2, tx + u + 2, ty + 2 * u + 2, 2, YELLOW)


def _draw_footer(img: np.ndarray, game: Game, seat: Optional[int], names: list[str]) -> None:
    y0 = FRAME_HEIGHT - FOOTER_HEIGHT
    _fill(img, 0, y0, FRAME_WIDTH, FRAME_HEIGHT, PANEL)
    _fill(img, 0, y0, FRAME_WIDTH, y0 + 1, PANEL_LINE)
    split = FRAME_WIDTH - 250
    _fill(img, split, y0 + 6, split + 1, FRAME_HEIGHT - 6, PANEL_LINE)
    _draw_hand(img, game, seat, names, 0, y0, split, FRAME_HEIGHT)
    board = game.board
    x = split + 12
    count = game.count()
    scores = board.size > 0 and count > 0 and count % 5 == 0
    _text(img, f"COUNT {count}", x, y0 + 8, 3, GREEN_TEXT if scores else WHITE)
    if board.size == 0:
        _text(img, "NO TILES YET", x, y0 + 34, 2, GREY)
    else:
        _text(img, "SCORES" if scores else "NO SCORE", x, y0 + 34, 2, GREEN_TEXT if scores else GREY)
        parts = []
        for slot, name in zip((W, E, N, S), "WENS"):
            points, counted = _end_points(board, slot)
            if counted:
                parts.append(f"{name}{points}")
        if board.spinner_counts():
            parts.append(f"SPIN {2 * board.spinner}")
        _text(img, _fit_text(" + ".join(parts), 1, FRAME_WIDTH - x - 8), x, y0 + 54, 1, GREY)
    if game.over:
        status, color = _result_text(game, names), YELLOW
    else:
        status, color = f"{names[game.current]} TO ACT", YELLOW if game.current == seat else WHITE
    _text(img, _fit_text(status, 2, FRAME_WIDTH - x - 8), x, y0 + 68, 2, color)
    info = f"HAND {game.hand_number}  BONEYARD {game.boneyard_size}  TARGET {game.rules.target}"
    _text(img, _fit_text(info, 1, FRAME_WIDTH - x - 8), x, y0 + 94, 1, GREY)


def render_rgb(game: Optional[Game], seat: Optional[int] = None, agent_names: Optional[list[str]] = None) -> np.ndarray:
    """An image (``FRAME_HEIGHT x FRAME_WIDTH x 3``, uint8 RGB) of the current position as ``seat`` sees it.

    Only ``seat``'s tiles are drawn face up (others appear as face-down tiles and a number), so the frame
    is safe to show to that player; ``seat=None`` is a spectator view with no hand face up.
    ``agent_names`` labels the seats (default ``P0``, ``P1``, ...). Works for every rules option, an empty
    table and a finished game (which shows the final layout and the result). ``game=None`` (an env
    rendered before its first reset) gives a black frame of the same size, as gymnasium expects.
    """
    if game is None:
        return np.zeros((FRAME_HEIGHT, FRAME_WIDTH, 3), dtype=np.uint8)
    n = game.num_players
    if seat is not None and not (isinstance(seat, (int, np.integer)) and 0 <= int(seat) < n):
        raise ValueError(f"seat={seat!r} is not a seat of this game: give 0..{n - 1} or None (spectator)")
    seat = None if seat is None else int(seat)
    if agent_names is not None and len(agent_names) < n:
        raise ValueError(f"agent_names has {len(agent_names)} names for {n} seats")
    names = [str(a).upper() for a in agent_names[:n]] if agent_names is not None else [f"P{s}" for s in range(n)]
    img = np.empty((FRAME_HEIGHT, FRAME_WIDTH, 3), dtype=np.uint8)
    _draw_header(img, game, seat, names)
    _draw_board(img, game, names)
    _draw_footer(img, game, seat, names)
    return img


# ====================================================================== PNG
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def png_bytes(image: np.ndarray) -> bytes:
    """Encode an ``HxWx3`` (RGB), ``HxWx4`` (RGBA) or ``HxW`` (grey) uint8 image as PNG.

    A minimal encoder (one IDAT chunk, filter 0 on every row) so frames can be saved without Pillow; any
    PNG reader opens the result.
    """
    arr = np.asarray(image)
    if arr.dtype != np.uint8:
        raise TypeError(f"png_bytes needs a uint8 image, got dtype {arr.dtype}")
    if arr.ndim == 2:
        color_type, channels = 0, 1
    elif arr.ndim == 3 and arr.shape[2] in (3, 4):
        color_type, channels = (2, 3) if arr.shape[2] == 3 else (6, 4)
    else:
        raise ValueError(f"png_bytes needs an HxW, HxWx3 or HxWx4 image, got shape {arr.shape}")
    h, w = arr.shape[:2]
    if h == 0 or w == 0:
        raise ValueError(f"png_bytes needs a non-empty image, got shape {arr.shape}")
    raw = np.zeros((h, 1 + w * channels), dtype=np.uint8)
    raw[:, 1:] = arr.reshape(h, w * channels)
    header = struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)
    return (_PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
            + _chunk(b"IEND", b""))


def write_png(image: np.ndarray, path: Union[str, Path]) -> Path:
    """Save ``image`` as a PNG file at ``path`` (see :func:`png_bytes`) and return the path."""
    path = Path(path)
    path.write_bytes(png_bytes(image))
    return path
