"""Drawing on numpy RGB images: a 5x7 bitmap font, rectangles, round dots and domino tiles.

Everything works in pixels on an ``HxWx3`` uint8 array, clips to it and draws with vectorised slice
fills. Tiles are drawn face up (pips coloured by value, or digits) or face down; the pips of a picture are
collected in a :class:`PipBuffer` and stamped in one fancy-index assignment per size. Text uses the
built-in font (digits, capitals, a little punctuation; lower case is drawn as upper case). Values 10-12
(double-twelve) are always written in digits, since ten or more dots cannot be told apart at a glance;
smaller values fall back to digits only on tiles too small for their dot grid.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = [
    "Color", "PIP_COLORS", "IVORY", "text_mask", "text_width", "fit_text", "fill", "outline", "draw_text",
    "disks", "disk", "PipBuffer", "draw_tile", "draw_back", "pip_radius",
]

Color = tuple[int, int, int]

IVORY: Color = (247, 242, 226)
TILE_EDGE: Color = (40, 38, 34)
DIVIDER: Color = (150, 142, 128)
BACK: Color = (178, 52, 48)
BACK_EDGE: Color = (250, 228, 200)

#: pip colour of each value (index = pips); dark, saturated colours that read well on ivory
PIP_COLORS = np.array(
    [
        (0, 0, 0), (0, 105, 200), (0, 135, 60), (200, 30, 30), (125, 72, 20), (25, 40, 160), (185, 115, 0),
        (130, 30, 160), (0, 125, 128), (70, 70, 70), (200, 0, 120), (95, 115, 0), (25, 25, 25),
    ],
    dtype=np.uint8,
)

# ====================================================================== the 5x7 font
GLYPH_HEIGHT = 7
GLYPH_WIDTH = 5
GLYPH_ADVANCE = GLYPH_WIDTH + 1  # one blank column between characters
_ASCII = 128  # the font covers (part of) ASCII; anything else is drawn as "?"

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
    table = np.zeros((_ASCII, GLYPH_HEIGHT, GLYPH_WIDTH), dtype=bool)
    for line in _FONT_SOURCE.strip().splitlines():
        ch, *rows = line.split()
        assert len(ch) == 1 and len(rows) == GLYPH_HEIGHT and all(len(r) == GLYPH_WIDTH for r in rows), line
        table[ord(ch)] = np.array([[c == "#" for c in r] for r in rows], dtype=bool)
    return table


_FONT = _build_font()
_KNOWN = np.zeros(_ASCII, dtype=bool)
_KNOWN[[ord(line.split()[0]) for line in _FONT_SOURCE.strip().splitlines()] + [ord(" ")]] = True


@lru_cache(maxsize=2048)
def text_mask(text: str, scale: int = 1) -> np.ndarray:
    """The pixels of ``text`` in the built-in 5x7 font, ``scale`` times enlarged, as a read-only bool mask.

    Cached: a frame draws the same few labels (``COUNT``, seat names, numbers) every time, and a cache hit
    is much cheaper than rebuilding the mask.
    """
    codes = [ord(c) for c in text.upper()]
    codes = [c if c < _ASCII and _KNOWN[c] else ord("?") for c in codes]
    if not codes:
        return np.zeros((GLYPH_HEIGHT * scale, 0), dtype=bool)
    spacing = np.zeros((len(codes), GLYPH_HEIGHT, GLYPH_ADVANCE - GLYPH_WIDTH), dtype=bool)
    glyphs = np.concatenate([_FONT[codes], spacing], axis=2)
    width = len(codes) * GLYPH_ADVANCE - (GLYPH_ADVANCE - GLYPH_WIDTH)  # no spacing after the last glyph
    mask = glyphs.transpose(1, 0, 2).reshape(GLYPH_HEIGHT, len(codes) * GLYPH_ADVANCE)[:, :width]
    if scale > 1:
        mask = mask.repeat(scale, axis=0).repeat(scale, axis=1)
    mask.setflags(write=False)
    return mask


def text_width(text: str, scale: int) -> int:
    """The width in pixels of ``text`` drawn ``scale`` times enlarged (no spacing after the last glyph)."""
    return max(0, (GLYPH_ADVANCE * len(text) - 1) * scale)


def fit_text(text: str, scale: int, width: int) -> str:
    """``text`` cut to ``width`` pixels (names can be long; panels are not)."""
    most = max(0, (width // scale + 1) // GLYPH_ADVANCE)
    return text if len(text) <= most else text[: max(0, most - 1)] + "."


# ====================================================================== primitives (all clip to the canvas)
def fill(img: np.ndarray, x0: float, y0: float, x1: float, y1: float, color: Color) -> None:
    """Fill the rectangle (x0, y0, x1, y1), end exclusive, with ``color``."""
    h, w = img.shape[:2]
    x0, y0 = max(int(x0), 0), max(int(y0), 0)
    x1, y1 = min(int(x1), w), min(int(y1), h)
    if x0 < x1 and y0 < y1:
        img[y0:y1, x0:x1] = color


def outline(img: np.ndarray, x0: int, y0: int, x1: int, y1: int, t: int, color: Color) -> None:
    """A rectangle outline ``t`` pixels thick, drawn inside (x0, y0, x1, y1)."""
    fill(img, x0, y0, x1, y0 + t, color)
    fill(img, x0, y1 - t, x1, y1, color)
    fill(img, x0, y0, x0 + t, y1, color)
    fill(img, x1 - t, y0, x1, y1, color)


def _blit(img: np.ndarray, mask: np.ndarray, x: int, y: int, color: Color) -> None:
    h, w = mask.shape
    H, W = img.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, W), min(y + h, H)
    if x0 < x1 and y0 < y1:
        img[y0:y1, x0:x1][mask[y0 - y:y1 - y, x0 - x:x1 - x]] = color


def draw_text(img: np.ndarray, text: str, x: int, y: int, scale: int, color: Color, align: str = "left") -> int:
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


def disks(img: np.ndarray, cx: np.ndarray, cy: np.ndarray, radius: float, colors: np.ndarray) -> None:
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


def disk(img: np.ndarray, cx: float, cy: float, radius: float, color: Color) -> None:
    """One round dot of ``radius`` pixels centred at (cx, cy)."""
    disks(img, np.array([cx]), np.array([cy]), radius, np.array([color], dtype=np.uint8))


# ====================================================================== pips
DOTS_MIN_HALF = 12  # a half this many pixels across shows 1-6 as dots
GRID9_MIN_HALF = 17  # ... and 7-9, whose 3x3 grid needs more room
PIP_RADIUS_SHARE = 0.095  # pip radius, as a share of the half-tile size
THICK_DIVIDER_MIN = 30  # tiles at least this many pixels across get a 2-pixel divider
_DIGIT_HEIGHT_SHARE = 0.62  # a value written in digits fills at most this share of its half's height
_DIGIT_WIDTH_SHARE = 0.9  # ... and of its width
# where the dots sit in a half, as shares of its size: near edge, middle, far edge
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
        return half >= DOTS_MIN_HALF
    if value <= 9:
        return half >= GRID9_MIN_HALF
    return False


class PipBuffer:
    """Collects pip centres so that all pips of one size are stamped in one numpy call."""

    def __init__(self) -> None:
        self.x: list[float] = []
        self.y: list[float] = []
        self.v: list[int] = []

    def flush(self, img: np.ndarray, radius: float) -> None:
        """Stamp every collected pip with ``radius`` and empty the buffer."""
        if self.x:
            disks(img, np.array(self.x), np.array(self.y), radius, PIP_COLORS[np.array(self.v)])
        self.x.clear()
        self.y.clear()
        self.v.clear()


def _draw_half(img: np.ndarray, buf: PipBuffer, x0: int, y0: int, x1: int, y1: int, value: int,
               long_axis_x: bool) -> None:
    """One half of a tile: dots when they fit, else the number in digits."""
    if value <= 0:
        return
    w, h = x1 - x0, y1 - y0
    side = min(w, h)
    if _pips_fit(value, side):  # only 1-9 ever fit as dots
        for u, v in _PIPS[value]:
            if long_axis_x:
                u, v = v, u  # lines of pips run along the tile's long side
            buf.x.append(x0 + u * (w - 1))
            buf.y.append(y0 + v * (h - 1))
            buf.v.append(value)
        return
    label = str(value)
    scale = max(1, min(int(_DIGIT_HEIGHT_SHARE * side) // GLYPH_HEIGHT,
                       int(_DIGIT_WIDTH_SHARE * side) // max(1, GLYPH_ADVANCE * len(label) - 1)))
    r, g, b = (int(c) for c in PIP_COLORS[min(value, len(PIP_COLORS) - 1)])
    draw_text(img, label, (x0 + x1) // 2 + 1, (y0 + y1) // 2 - (GLYPH_HEIGHT * scale) // 2, scale, (r, g, b), "center")


def draw_tile(img: np.ndarray, buf: PipBuffer, x0: int, y0: int, x1: int, y1: int, first: int,
              second: int) -> None:
    """A face-up tile: ``first`` on its left (or top) half, ``second`` on the right (or bottom) half."""
    fill(img, x0, y0, x1, y1, TILE_EDGE)
    fill(img, x0 + 1, y0 + 1, x1 - 1, y1 - 1, IVORY)
    horizontal = (x1 - x0) >= (y1 - y0)
    t = 2 if min(x1 - x0, y1 - y0) >= THICK_DIVIDER_MIN else 1
    if horizontal:
        mid = (x0 + x1) // 2
        fill(img, mid - t // 2, y0 + 2, mid - t // 2 + t, y1 - 2, DIVIDER)
        _draw_half(img, buf, x0 + 1, y0 + 1, mid - 1, y1 - 1, first, True)
        _draw_half(img, buf, mid + 1, y0 + 1, x1 - 1, y1 - 1, second, True)
    else:
        mid = (y0 + y1) // 2
        fill(img, x0 + 2, mid - t // 2, x1 - 2, mid - t // 2 + t, DIVIDER)
        _draw_half(img, buf, x0 + 1, y0 + 1, x1 - 1, mid - 1, first, False)
        _draw_half(img, buf, x0 + 1, mid + 1, x1 - 1, y1 - 1, second, False)


def draw_back(img: np.ndarray, x0: int, y0: int, x1: int, y1: int) -> None:
    """A face-down tile (another seat's hand)."""
    fill(img, x0, y0, x1, y1, BACK_EDGE)
    fill(img, x0 + 1, y0 + 1, x1 - 1, y1 - 1, BACK)


def pip_radius(unit: float) -> float:
    """The radius of the pips on tiles whose half is ``unit`` pixels across."""
    return max(1.0, PIP_RADIUS_SHARE * unit)

