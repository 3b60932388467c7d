"""The ``render_mode="rgb_array"`` frame: one fixed-size picture of the table (numpy only, no Pillow).

:func:`render_rgb` draws one fixed-size frame (:data:`FRAME_WIDTH` x :data:`FRAME_HEIGHT`, uint8 RGB) of
a :class:`~allfives_env.core.game.Game`. The size never changes, because gymnasium / PettingZoo video
recorders and most training dashboards expect every frame of an episode to have one shape; big layouts
are bent and scaled to fit instead.

What a frame shows:

* header: one panel per seat with its name, its side's score, its hand size as face-down tiles and a
  number; the seat to act is marked in yellow, the viewer is tagged ``YOU``;
* board: the layout of :mod:`allfives_env.board_layout` (the spinner, or before the first double the
  lead, in the centre drawn crosswise; the W and E arms left and right, N and S up and down; doubles
  crosswise to their arm; long arms snaking in a pinwheel), scaled to the board area. Each tile shows its
  pips (the half that touches the previous tile towards the centre shows the inner pip, as in
  :mod:`allfives_env.render`); each open end carries a round marker: orange with the points that end adds
  to the count, grey with the open value when the end is open but not counted (an empty arm of the
  spinner); the spinner is always framed so it can be found in a big layout, in gold while its own 2v
  is in the count; the last tile played is framed in light blue;
* footer: the viewer's own tiles face up (its playable tiles framed in yellow when it is to act), the
  count in large digits, whether it scores (a positive multiple of 5), how it adds up, whose turn it is
  or the result, the hand number, the boneyard and the target.

Only ``seat``'s hand is ever drawn face up, so a frame can be shown to that player without leaking hidden
information; ``seat=None`` is a spectator view with no hand face up.

The arms stay straight while the straight cross, scaled to the board area, keeps tiles big enough to read
(:data:`GOOD_UNIT`); past that :func:`~allfives_env.board_layout.fit_layout` picks the bends that give the
largest tiles. :func:`layout_board` exposes the result in pixels so tests can check that it stays on the
canvas. Drawing primitives, the font and the tiles are in :mod:`allfives_env.raster`; :func:`png_bytes` /
:func:`write_png` (:mod:`allfives_env.png_writer`) save frames as PNG.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np

from .board_layout import end_points, fit_layout
from .core.board import E, N, S, W
from .core.game import Game
from .png_writer import png_bytes, write_png
from .raster import (
    GLYPH_HEIGHT, Color, PipBuffer, disk, draw_back, draw_text, draw_tile, fill, fit_text, outline, pip_radius,
    text_mask, text_width,
)

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
BOARD_PAD = 10  # pixels kept free inside the board area (markers may reach into it)
MAX_UNIT = 28.0  # largest half-tile size in pixels: small layouts should not look bloated
GOOD_UNIT = 20.0  # half-tile size that reads well: arms bend only to stay at least this big
FELT_LINE_INSET = 3  # the dark line around the felt, this far inside the board area
BANNER_TOP, BANNER_BOTTOM = 8, 34  # the game-over banner, below the board area's top
# open ends' markers
MARKER_RADIUS_SHARE = 0.5  # a marker's radius, as a share of the half-tile size...
MARKER_MIN_RADIUS = 8.0  # ... but never under this many pixels
MARKER_RIM = 1.5  # the dark ring around a marker, in pixels
MARKER_MEDIUM_DIGIT = 10.0  # a marker this big writes one digit in MEDIUM text...
MARKER_MEDIUM_TEXT = 14.0  # ... and this big, two
# frames around tiles
SPINNER_FRAME_MARGIN = 3  # the spinner's frame, this many pixels outside the tile...
HIGHLIGHT_MARGIN = 2  # ... the last tile played's and the playable tiles' in the hand, this many
FRAME_LINE = 2  # the thickness of those frames
# text sizes (times the 5x7 font)
SMALL, MEDIUM, LARGE = 1, 2, 3
# header: one panel per seat
PANEL_PAD = 8  # text and tiles start this far inside a panel
ACTING_BAR = 4  # height of the yellow bar over the seat to act (and the dividers' margin)
NAME_Y, SCORE_Y, BACKS_Y, BACKS_COUNT_Y = 8, 28, 42, 45  # the panel's rows
BACK_SIZE = (7, 18)  # a face-down tile in the header, in pixels (width, height)
BACK_STEP = 9  # ... and its pitch
# footer: the hand on the left, the count panel on the right
COUNT_PANEL_WIDTH = 250
COUNT_PANEL_PAD = 12
COUNT_Y, VERDICT_Y, BREAKDOWN_Y, STATUS_Y, INFO_Y = 8, 34, 54, 68, 94  # the count panel's rows
HAND_PAD = 10  # the hand's label and tiles start this far inside the footer
HAND_TILES_Y = 18  # the hand's tiles start this far below the footer's top
HAND_MAX_UNIT = 32.0  # largest half-tile size of the tiles in the footer's hand
HAND_MIN_UNIT = 3
HAND_MAX_ROWS = 4  # a hand grown past its deal wraps into up to this many rows
HAND_PITCH = (1.25, 2.25)  # tile pitch across and down, in half-tiles (a tile is 1 x 2)

FELT: Color = (18, 102, 62)
FELT_DARK: Color = (12, 80, 48)
PANEL: Color = (28, 36, 46)
PANEL_LINE: Color = (60, 72, 88)
WHITE: Color = (235, 238, 240)
GREY: Color = (150, 156, 162)
YELLOW: Color = (250, 205, 40)
GREEN_TEXT: Color = (110, 230, 120)
ORANGE: Color = (255, 160, 30)
GOLD: Color = (255, 200, 0)
SPINNER_FRAME: Color = (225, 225, 225)
LAST_PLAYED: Color = (120, 200, 255)
TEXT_DARK: Color = (20, 20, 20)


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
    bends: tuple[float, float]  # straight run allowed to the W/E and N/S arms (board_layout.STRAIGHT: no bend)


def layout_board(game: Game, area: tuple[int, int, int, int] = BOARD_AREA) -> BoardLayout:
    """Where every tile of the layout and every open-end marker goes, in pixels, inside ``area``.

    The layout of :func:`~allfives_env.board_layout.fit_layout` for the area less :data:`BOARD_PAD`,
    scaled (at most :data:`MAX_UNIT` pixels a half-tile, bent once straight arms would fall below
    :data:`GOOD_UNIT`) and centred in ``area``. Exposed so that tests can check that nothing leaves the
    canvas and no two tiles overlap.
    """
    ax0, ay0, ax1, ay1 = area
    layout, unit = fit_layout(game.board, ax1 - ax0 - 2 * BOARD_PAD, ay1 - ay0 - 2 * BOARD_PAD, MAX_UNIT, GOOD_UNIT)
    if not layout.tiles:
        return BoardLayout([], [], unit, layout.limits)
    bx0, by0, bx1, by1 = layout.box
    ox = ax0 + (ax1 - ax0 - (bx1 - bx0) * unit) / 2 - bx0 * unit
    oy = ay0 + (ay1 - ay0 - (by1 - by0) * unit) / 2 - by0 * unit

    def px(x: float, y: float) -> tuple[int, int]:
        return int(round(ox + x * unit)), int(round(oy + y * unit))

    tiles = [LaidTile(*px(t.x0, t.y0), *px(t.x1, t.y1), t.first, t.second, t.tile, t.centre) for t in layout.tiles]
    radius = max(MARKER_MIN_RADIUS, MARKER_RADIUS_SHARE * unit)
    markers = [
        EndMarker(e.slot, ox + e.x * unit, oy + e.y * unit, radius, e.value, e.points or 0, e.points is not None)
        for e in layout.ends
    ]
    return BoardLayout(tiles, markers, unit, layout.limits)


# ====================================================================== the frame
def _result_text(game: Game, names: list[str]) -> str:
    """Who won (or a draw), and whether the game stopped at ``max_hands``."""
    if game.winner is None:
        text = "DRAW"
    elif game.rules.partnership:
        text = f"TEAM {game.winner}+{game.winner + 2} WINS"
    else:
        text = f"{names[game.winner]} WINS"
    return text + (" (MAX HANDS)" if game.truncated else "")


def _draw_header(img: np.ndarray, game: Game, seat: Optional[int], names: list[str]) -> None:
    """One panel per seat: name, score, hand size (face-down tiles and a number), the seat to act marked."""
    n = game.num_players
    fill(img, 0, 0, FRAME_WIDTH, HEADER_HEIGHT, PANEL)
    sizes = game.hand_sizes()
    width = FRAME_WIDTH // n
    for s in range(n):
        x0 = s * width
        x1 = FRAME_WIDTH if s == n - 1 else x0 + width
        if s:
            fill(img, x0, ACTING_BAR, x0 + 1, HEADER_HEIGHT - ACTING_BAR, PANEL_LINE)
        acting = not game.over and game.current == s
        if acting:
            fill(img, x0, 0, x1, ACTING_BAR, YELLOW)
        label = names[s] + ("  YOU" if seat == s else "")
        inner = x1 - x0 - 2 * PANEL_PAD
        draw_text(img, fit_text(label, MEDIUM, inner), x0 + PANEL_PAD, NAME_Y, MEDIUM, YELLOW if acting else WHITE)
        side = game.side_of[s]
        score = f"{game.scores[side]}"
        if game.rules.partnership:
            score_label = f"TEAM {side}+{side + 2}: {score}"
        else:
            score_label = f"SCORE {score}"
        draw_text(img, fit_text(score_label, SMALL, inner), x0 + PANEL_PAD, SCORE_Y, SMALL, GREY)
        # hand size as face-down tiles and a number
        count_label = f"{sizes[s]}"
        room = inner - text_width(count_label, MEDIUM) - PANEL_PAD
        shown = max(0, min(sizes[s], room // BACK_STEP))
        for i in range(shown):
            bx = x0 + PANEL_PAD + BACK_STEP * i
            draw_back(img, bx, BACKS_Y, bx + BACK_SIZE[0], BACKS_Y + BACK_SIZE[1])
        draw_text(img, count_label, x0 + PANEL_PAD + BACK_STEP * shown + 4, BACKS_COUNT_Y, MEDIUM, WHITE)
    fill(img, 0, HEADER_HEIGHT - 1, FRAME_WIDTH, HEADER_HEIGHT, PANEL_LINE)


def _draw_board(img: np.ndarray, game: Game, names: list[str]) -> None:
    """The felt, the layout (or, before the lead, who is to lead) and a banner once the game is over."""
    ax0, ay0, ax1, ay1 = BOARD_AREA
    fill(img, ax0, ay0, ax1, ay1, FELT)
    inset = FELT_LINE_INSET
    outline(img, ax0 + inset, ay0 + inset, ax1 - inset, ay1 - inset, 1, FELT_DARK)
    if game.board.size == 0:
        if game.over:
            msg = "GAME OVER"
        elif len(game.legal) == 1:  # a rule fixes the lead (must_lead_it: the highest double)
            msg = f"HAND {game.hand_number}: {names[game.current]} MUST LEAD {game.tiles.name(game.legal[0] >> 2)}"
        else:
            msg = f"HAND {game.hand_number}: {names[game.current]} TO LEAD"
        y = (ay0 + ay1) // 2 - GLYPH_HEIGHT
        draw_text(img, fit_text(msg, MEDIUM, ax1 - ax0 - 20), (ax0 + ax1) // 2, y, MEDIUM, WHITE, "center")
    else:
        _draw_layout(img, game)
    if game.over:
        msg = "GAME OVER: " + _result_text(game, names)
        msg = fit_text(msg, MEDIUM, ax1 - ax0 - 40)
        w = text_width(msg, MEDIUM)
        cx = (ax0 + ax1) // 2
        box = (cx - w // 2 - 10, ay0 + BANNER_TOP, cx + w // 2 + 12, ay0 + BANNER_BOTTOM)
        fill(img, *box, PANEL)
        outline(img, *box, FRAME_LINE, YELLOW)
        y = (box[1] + box[3]) // 2 - GLYPH_HEIGHT  # MEDIUM text is 2 x 7 pixels high
        draw_text(img, msg, cx + 1, y, MEDIUM, YELLOW, "center")


def _draw_layout(img: np.ndarray, game: Game) -> None:
    """The tiles on the table, the spinner's and the last tile's frames, and the open ends' markers."""
    board = game.board
    layout = layout_board(game)
    buf = PipBuffer()
    last = game.played[-1][0] if game.played else -1
    for t in layout.tiles:
        draw_tile(img, buf, t.x0, t.y0, t.x1, t.y1, t.first, t.second)
    buf.flush(img, pip_radius(layout.unit))
    for t in layout.tiles:
        if t.centre and board.spinner >= 0:
            # the spinner is always framed so it can be found in a big layout; gold while its 2v counts
            m, color = SPINNER_FRAME_MARGIN, GOLD if board.spinner_counts() else SPINNER_FRAME
        elif t.tile == last:
            m, color = HIGHLIGHT_MARGIN, LAST_PLAYED
        else:
            continue
        outline(img, t.x0 - m, t.y0 - m, t.x1 + m, t.y1 + m, FRAME_LINE, color)
    for marker in layout.markers:
        _draw_marker(img, marker)


def _draw_marker(img: np.ndarray, m: EndMarker) -> None:
    """An open end's marker: orange with the points it adds to the count, grey with its value."""
    disk(img, m.x, m.y, m.radius + MARKER_RIM, TEXT_DARK)
    disk(img, m.x, m.y, m.radius, ORANGE if m.counted else GREY)
    label = str(m.points if m.counted else m.value)
    big = (m.radius >= MARKER_MEDIUM_DIGIT and len(label) == 1) or m.radius >= MARKER_MEDIUM_TEXT
    scale = MEDIUM if big else SMALL
    y = int(round(m.y)) - (GLYPH_HEIGHT * scale) // 2
    draw_text(img, label, int(round(m.x)) + 1, y, scale, TEXT_DARK, "center")


def _draw_hand(img: np.ndarray, game: Game, seat: Optional[int], names: list[str], x0: int, y0: int, x1: int,
               y1: int) -> None:
    """The viewer's own hand, face up, in as many rows as give the biggest tiles."""
    if seat is None:
        draw_text(img, "SPECTATOR VIEW: NO HAND SHOWN", x0 + HAND_PAD, y0 + 8, SMALL, GREY)
        return
    hand = game.hand(seat)
    label = fit_text(f"{names[seat]}'S HAND ({len(hand)})", SMALL, x1 - x0 - 2 * HAND_PAD)
    draw_text(img, label, x0 + HAND_PAD, y0 + 6, SMALL, GREY)
    if not hand:
        draw_text(img, "(EMPTY)", x0 + HAND_PAD, y0 + 30, MEDIUM, GREY)
        return
    playable: set[int] = set()
    if not game.over and game.current == seat:
        playable = {a >> 2 for a in game.legal if a != game.draw_action}
    top, avail_w, avail_h = y0 + HAND_TILES_Y, x1 - x0 - 2 * HAND_PAD, y1 - y0 - 24
    pitch_x, pitch_y = HAND_PITCH
    # as many rows as give the biggest tiles (a hand can grow far past its deal under may_draw_when_able)
    unit, per_row = max(
        (min(avail_w / (per_row * pitch_x), (avail_h / rows) / pitch_y, HAND_MAX_UNIT), per_row)
        for rows in range(1, HAND_MAX_ROWS + 1)
        for per_row in (math.ceil(len(hand) / rows),)
    )
    u = max(HAND_MIN_UNIT, int(unit))
    step_x, step_y = max(u + 2, int(u * pitch_x)), max(2 * u + 2, int(u * pitch_y))
    buf = PipBuffer()
    boxes = []
    tiles = game.tiles
    for i, t in enumerate(hand):
        r, c = divmod(i, per_row)
        tx, ty = x0 + HAND_PAD + c * step_x, top + r * step_y
        draw_tile(img, buf, tx, ty, tx + u, ty + 2 * u, tiles.high[t], tiles.low[t])
        boxes.append((t, tx, ty))
    buf.flush(img, pip_radius(u))
    for t, tx, ty in boxes:
        if t in playable:
            m = HIGHLIGHT_MARGIN
            outline(img, tx - m, ty - m, tx + u + m, ty + 2 * u + m, FRAME_LINE, YELLOW)


def _draw_footer(img: np.ndarray, game: Game, seat: Optional[int], names: list[str]) -> None:
    """The hand on the left; the count, how it adds up, whose turn it is and the game's state on the right."""
    y0 = FRAME_HEIGHT - FOOTER_HEIGHT
    fill(img, 0, y0, FRAME_WIDTH, FRAME_HEIGHT, PANEL)
    fill(img, 0, y0, FRAME_WIDTH, y0 + 1, PANEL_LINE)
    split = FRAME_WIDTH - COUNT_PANEL_WIDTH
    fill(img, split, y0 + 6, split + 1, FRAME_HEIGHT - 6, PANEL_LINE)
    _draw_hand(img, game, seat, names, 0, y0, split, FRAME_HEIGHT)
    board = game.board
    x = split + COUNT_PANEL_PAD
    width = FRAME_WIDTH - x - PANEL_PAD
    count = game.count()
    scores = board.size > 0 and count > 0 and count % 5 == 0
    draw_text(img, f"COUNT {count}", x, y0 + COUNT_Y, LARGE, GREEN_TEXT if scores else WHITE)
    if board.size == 0:
        draw_text(img, "NO TILES YET", x, y0 + VERDICT_Y, MEDIUM, GREY)
    else:
        verdict = "SCORES" if scores else "NO SCORE"
        draw_text(img, verdict, x, y0 + VERDICT_Y, MEDIUM, GREEN_TEXT if scores else GREY)
        parts = []
        for slot, name in zip((W, E, N, S), "WENS"):
            points = end_points(board, slot)
            if points is not None:
                parts.append(f"{name}{points}")
        if board.spinner_counts():
            parts.append(f"SPIN {2 * board.spinner}")
        draw_text(img, fit_text(" + ".join(parts), SMALL, width), x, y0 + BREAKDOWN_Y, SMALL, GREY)
    if game.over:
        status, color = _result_text(game, names), YELLOW
    else:
        status, color = f"{names[game.current]} TO ACT", YELLOW if game.current == seat else WHITE
    draw_text(img, fit_text(status, MEDIUM, width), x, y0 + STATUS_Y, MEDIUM, color)
    info = f"HAND {game.hand_number}  BONEYARD {game.boneyard_size}  TARGET {game.rules.target}"
    draw_text(img, fit_text(info, SMALL, width), x, y0 + INFO_Y, SMALL, GREY)


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

