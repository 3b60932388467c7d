"""A self-contained HTML viewer for replays: ``allfives replay GAME.json --html OUT.html``.

:func:`replay_html` turns a replay into ONE HTML file that steps through the game in any browser,
offline: inline CSS, inline JavaScript and inline SVG, no fonts, images, scripts or requests from
anywhere else (a Content-Security-Policy in the page forbids them too), so the file can be mailed,
attached to an issue or opened from a CI artifact as it is.

How it works. The replay is first verified with :func:`~allfives_env.core.replay.load_replay` (a corrupt
or foreign file raises :class:`~allfives_env.core.errors.ReplayError` and no HTML is produced). The
verified event log is then walked event by event, with the deals of the replay and a
:class:`~allfives_env.core.board.Board` of the engine, to build one *frame* per event: the state of the
table right after that event (count, open ends, scores, every hand face up, the boneyard, whose turn it
is, the event's text). The frames are computed here, in Python, with the engine's own board and count,
so the page only draws them: the browser never re-implements a rule, and what it shows is what the
engine had. :func:`replay_data` returns the same data for tests and other front ends.

Board geometry is computed here too (:func:`board_layout`), in *units* where one half of a tile is a
1 x 1 square: the spinner (or the lead) sits at the origin, the W and E arms run horizontally, N and S
vertically, a double is drawn crosswise. An arm longer than a few tiles turns clockwise (E turns down,
S left, W up, N right) and snakes back and forth inside its own quadrant, clear of the next arm, so no
two tiles ever overlap however long the arms get; the page then scales the SVG viewBox to the layout,
so everything stays on screen.

Size. A long game has thousands of events, so tile positions are not repeated in every frame: within a
hand the positions of the tiles already down do not change when a tile is added (only the first double,
which turns the line into a spinner cross, re-centres the table), so the frames share *layouts*: a frame
shows the first ``placed`` tiles of ``layouts[layout]``.

Everything embedded is escaped: the data is JSON inside ``<script type="application/json">`` with
``<``, ``>`` and ``&`` written as ``\\u003c``-style escapes (a ``</script>`` in a string cannot end the
element), the title is HTML-escaped, and the page inserts text with ``textContent`` only.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any, Optional, Union

from .core.board import E, N, S, W, Board
from .core.events import SLOT_NAMES, Draw, Event, GameOver, HandStart, Pass, Play, Settlement
from .core.game import Game
from .core.replay import game_record, load_replay, read_record
from .core.rules import Rules

__all__ = ["board_layout", "replay_data", "replay_html", "write_replay_html"]

Source = Union[str, Path, dict[str, Any], Game]

#: Straight run of an arm, in units from the centre, before it turns (W/E: about five tiles; N/S: about
#: two, because the board is wider than high).
ARM_LIMIT_HORIZONTAL = 11.0
ARM_LIMIT_VERTICAL = 5.5
#: Rows of a snaking arm come back no closer to the centre than this (the next arm's doubles reach 1).
ARM_MIN_X = 1.8
#: Gap between neighbouring tiles, in units.
GAP = 0.08

# clockwise order of the arms from E, and the number of quarter turns that map the E arm onto each
_QUARTER_TURNS = {E: 0, S: 1, W: 2, N: 3}

Rect = tuple[float, float, float, float]  # x0, y0, x1, y1


def _rotate(point: tuple[float, float], quarter_turns: int) -> tuple[float, float]:
    """Rotate clockwise on screen (y points down) by ``quarter_turns`` x 90 degrees."""
    x, y = point
    for _ in range(quarter_turns % 4):
        x, y = -y, x
    return x, y


def _arm_local(
    arm: list[tuple[int, int, int, bool]], ext: float, limit: float
) -> tuple[list[tuple[int, Rect, tuple[float, float], tuple[float, float], int, int]], tuple[float, float]]:
    """Lay out one arm as if it were the E arm: a snake in the quadrant x > 0, y > -1 (screen y down).

    The arm runs along +x up to ``limit``, turns down (+y) for one tile (two when the first is a
    double, so the next row clears a crosswise double; more while the row back would not hold a tile),
    runs back along -x no nearer than :data:`ARM_MIN_X` (clear of the S arm, whose crosswise doubles
    reach x = 1), turns down again, and so on. Rows are separated by the turn, so no two tiles of the
    arm overlap, and the arm never leaves its quadrant.

    ``arm`` lists (tile, inner pip, outer pip, is double) from the centre outward; ``ext`` is how far the
    centre tile reaches along the arm. Returns per tile (tile, rect, inner-half centre, outer-half centre,
    inner pip, outer pip) and the anchor of the open end (where the next tile's inner half would go).
    """
    out = []
    px, py = ext + GAP, 0.0  # entry point: the middle of the edge the next tile starts from
    dx, dy = 1.0, 0.0  # direction of travel
    row_dir = 1.0  # direction of the current (or last) row along x
    down_run = 0.0  # length run downward since the last row, -1 while in a row
    last: Optional[tuple[float, float, float]] = None  # outer-half centre and half width of the last tile

    def entry(length: float) -> tuple[float, float, float, float]:
        """Where a tile of ``length`` along the arm goes next: (entry x, entry y, dx, dy)."""
        if dy == 0.0 and last is not None:  # in a row: turn down when the tile would leave it
            end = px + dx * length
            if end > limit or end < ARM_MIN_X:
                ox, oy, half = last
                return ox, oy + half + GAP, 0.0, 1.0
        if dy == 1.0 and down_run >= 2.0:  # a turn is done: the next row runs back if the tile fits
            ox, oy, half = last  # type: ignore[misc]
            ndx = -row_dir
            start = ox + ndx * (half + GAP)
            if ARM_MIN_X <= start + ndx * length <= limit:
                return start, oy, ndx, 0.0
        return px, py, dx, dy

    for tile, inner, outer, double in arm:
        length = 1.0 if double else 2.0
        ex, ey, ndx, ndy = entry(length)
        if ndy == 1.0 and dy == 0.0:
            down_run = 0.0
        elif ndy == 0.0 and dy == 1.0:
            row_dir = ndx
        dx, dy = ndx, ndy
        width = 2.0 if double else 1.0  # across the direction of travel
        ax, ay = ex - dy * width / 2, ey - dx * width / 2  # one corner of the entry edge
        bx, by = ex + dx * length + dy * width / 2, ey + dy * length + dx * width / 2
        rect = (min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))
        if double:
            ic = oc = (ex + dx * 0.5, ey + dy * 0.5)
        else:
            ic, oc = (ex + dx * 0.5, ey + dy * 0.5), (ex + dx * 1.5, ey + dy * 1.5)
        px, py = ex + dx * (length + GAP), ey + dy * (length + GAP)
        if dy == 1.0:
            down_run += length
        last = (oc[0], oc[1], width / 2)
        out.append((tile, rect, ic, oc, inner, outer))
    ex, ey, ndx, ndy = entry(2.0)
    return out, (ex + ndx * 0.45, ey + ndy * 0.45)


def board_layout(board: Board) -> tuple[list[list[Any]], dict[int, tuple[float, float]]]:
    """Geometry of ``board`` in units (one tile half = 1 x 1, the centre tile at the origin).

    Returns the tiles as ``[tile, x, y, w, h, p1, p2]`` (``p1`` is the pip on the left half when
    ``w > h``, else on the top half; a double is drawn crosswise to its arm) and, per slot with a
    place for a tile, the anchor point of that open end. Pure geometry: nothing here depends on
    the rules, so it is tested for overlaps on many random boards.
    """
    tiles: list[list[Any]] = []
    anchors: dict[int, tuple[float, float]] = {}
    if board.size == 0:
        return tiles, anchors
    is_double = board.tiles.is_double
    if board.spinner >= 0:
        v = board.spinner
        tiles.append([board.spinner_tile, -0.5, -1.0, 1.0, 2.0, v, v])
        exts = {W: 0.5, E: 0.5, N: 1.0, S: 1.0}
        slots: tuple[int, ...] = (W, E, N, S)
    else:
        assert board.lead is not None  # a non-empty board without a spinner is a line with a lead
        tile, west, east = board.lead
        tiles.append([tile, -1.0, -0.5, 2.0, 1.0, west, east])
        exts = {W: 1.0, E: 1.0}
        slots = (W, E)
    for slot in slots:
        limit = ARM_LIMIT_HORIZONTAL if slot in (W, E) else ARM_LIMIT_VERTICAL
        arm = [(t, inner, outer, is_double[t]) for t, inner, outer in board.arms[slot]]
        local, anchor = _arm_local(arm, exts[slot], limit)
        k = _QUARTER_TURNS[slot]
        for tile, (x0, y0, x1, y1), ic, oc, inner, outer in local:
            ax, ay = _rotate((x0, y0), k)
            bx, by = _rotate((x1, y1), k)
            rx, ry = min(ax, bx), min(ay, by)
            w, h = abs(bx - ax), abs(by - ay)
            ric, roc = _rotate(ic, k), _rotate(oc, k)
            inner_first = ric[0] < roc[0] if w > h else ric[1] < roc[1]
            p1, p2 = (inner, outer) if inner_first else (outer, inner)
            tiles.append([tile, _r(rx), _r(ry), _r(w), _r(h), p1, p2])
        ax, ay = _rotate(anchor, k)
        anchors[slot] = (_r(ax), _r(ay))
    return tiles, anchors


def _r(x: float) -> float:
    """Round a coordinate for the page (and turn -0.0 into 0.0)."""
    return round(x, 3) + 0.0


class _Names:
    """Seat and side names used in every text: P0, P1, ...; teams as P0+P2."""

    def __init__(self, rules: Rules) -> None:
        n = rules.num_players
        self.seats = [f"P{s}" for s in range(n)]
        self.sides = [
            "+".join(f"P{s}" for s in range(n) if rules.side_of(s) == side) for side in range(rules.num_sides)
        ]
        self.team = rules.num_sides < n

    def side_list(self, values: Any) -> str:
        return ", ".join(f"{name} {v}" for name, v in zip(self.sides, values))


def _signed(x: int) -> str:
    return f"+{x}" if x > 0 else str(x)


def _play_text(ev: Play, names: _Names, tiles: Any, lead: bool, spinner_made: bool) -> str:
    a, b = tiles.pairs[ev.tile]
    tile = f"{b}-{a}"
    who = names.seats[ev.seat]
    if lead:
        text = f"{who} leads {tile}" + (" (the spinner)" if spinner_made else "")
    else:
        text = f"{who} plays {tile} on {SLOT_NAMES[ev.slot]}" + (" (the spinner)" if spinner_made else "")
    if ev.points:
        return f"{text}: count {ev.count}, scores {ev.points}"
    if ev.count and ev.count % 5 == 0:
        return f"{text}: count {ev.count}, no points under these rules"
    return f"{text}: count {ev.count}"


def _event_texts(ev: Event, names: _Names, tiles: Any, ctx: dict[str, Any]) -> tuple[str, Optional[str]]:
    """(text for everyone who may see it, text for the other seats when it hides a drawn tile)."""
    if type(ev) is HandStart:
        return (f"Hand {ev.hand}: {names.seats[ev.leader]} leads; scores {names.side_list(ev.scores)}", None)
    if type(ev) is Draw:
        who = names.seats[ev.seat]
        if ev.forced:
            how, hidden_how = "cannot play and draws", "cannot play and draws"
        elif not ctx["played"]:
            how = hidden_how = "draws for a double"
        else:
            how = hidden_how = "chooses to draw"
        tile = tiles.name(ev.tile) if ev.tile >= 0 else "a tile"
        return f"{who} {how} {tile}", f"{who} {hidden_how} a tile"
    if type(ev) is Pass:
        return f"{names.seats[ev.seat]} cannot play or draw and passes", None
    if type(ev) is Settlement:
        pips = ", ".join(f"{s} {p}" for s, p in zip(names.seats, ev.pips))
        if ev.result == "target":
            return f"Hand {ev.hand} ends: the target is reached; scores {names.side_list(ev.scores)}", None
        if ev.result == "domino":
            head = f"Hand {ev.hand} ends: {names.seats[ctx['last_seat']]} dominoes"
        else:
            head = f"Hand {ev.hand} ends blocked"
        changes = [f"{name} {_signed(d)}" for name, d in zip(names.sides, ev.deltas) if d]
        return (f"{head}; pips left {pips}; {', '.join(changes) if changes else 'no points'}; "
                f"scores {names.side_list(ev.scores)}"), None
    if type(ev) is GameOver:
        capped = " (max_hands reached)" if ev.truncated else ""
        if ev.winner is None:
            return f"Game over: a draw{capped}; scores {names.side_list(ev.scores)}", None
        verb = "win" if names.team else "wins"
        return f"Game over: {names.sides[ev.winner]} {verb}{capped}; scores {names.side_list(ev.scores)}", None
    raise TypeError(f"unexpected event {ev!r}")  # Play is handled by the caller


def replay_data(source: Source) -> dict[str, Any]:
    """Verify a replay and compute everything the page shows: one frame per event, and the layouts.

    ``source`` is a replay path, a JSON string, a record dict (:func:`game_record` / :func:`read_record`)
    or a :class:`Game` (recorded first, so it is checked like a file). Raises :class:`ReplayError` for anything :func:`load_replay` rejects. Frame ``k`` (``frames[k]``,
    shown as step ``k + 1``) is the state right after ``game.events[k]``:

    ``step``, ``hand``, ``kind`` (event type), ``seat`` (who acted, or None), ``tile`` (tile id played or
    drawn, or None), ``text`` / ``hidden`` (event text; ``hidden`` hides another seat's drawn tile),
    ``turn`` (the seat whose move comes next, or None), ``count``, ``scores`` (per side), ``sizes`` and
    ``hands`` (tile ids per seat, ascending), ``boneyard`` (tiles left), ``layout`` / ``placed`` (the first
    ``placed`` tiles of ``layouts[layout]`` are on the table), ``ends`` (``[slot, value, counted value or
    None, x, y]`` per open end) and ``spinner_points`` (the spinner's own 2v while it counts, else 0).
    """
    record = game_record(source) if isinstance(source, Game) else read_record(source)
    game = load_replay(record)
    return _frames(game, record)


def _frames(game: Game, record: dict[str, Any]) -> dict[str, Any]:
    rules = game.rules
    tiles = game.tiles
    names = _Names(rules)
    n = rules.num_players
    side_of = [rules.side_of(s) for s in range(n)]
    # the seat of the next seat event (play, draw, pass) in the same hand: whose move comes next
    turn_after: list[Optional[int]] = [None] * len(game.events)
    nxt: Optional[int] = None
    for k in range(len(game.events) - 1, -1, -1):
        turn_after[k] = nxt
        ev = game.events[k]
        if isinstance(ev, (Play, Draw, Pass)):
            nxt = ev.seat
        elif type(ev) is HandStart:
            nxt = None
    if not game.over and game.events:
        turn_after[-1] = game.current

    layouts: list[dict[str, Any]] = []
    frames: list[dict[str, Any]] = []
    hand_steps: list[int] = []
    board: Optional[Board] = None
    hands: list[set[int]] = [set() for _ in range(n)]
    stock: list[int] = []
    scores = list(game.hand_records[0].scores) if game.hand_records else [0] * rules.num_sides
    ctx: dict[str, Any] = {"played": False, "last_seat": -1}
    hand_index = -1
    current_layout = -1
    ends: list[list[Any]] = []
    spinner_points = 0
    for k, ev in enumerate(game.events):
        hidden: Optional[str] = None
        seat: Optional[int] = getattr(ev, "seat", None)
        tile: Optional[int] = None
        if type(ev) is HandStart:
            hand_index += 1
            rec = game.hand_records[hand_index]
            if rec.first_event != k:
                raise RuntimeError(f"viewer: hand {rec.hand} should start at event {rec.first_event}, not {k}")
            board = Board(tiles, rules.spinner_sides_first, rules.spinner_count)
            hands = [set(h) for h in rec.hands]
            stock = list(rec.boneyard)
            scores = list(ev.scores)
            ctx = {"played": False, "last_seat": -1}
            current_layout, ends, spinner_points = -1, [], 0
            hand_steps.append(k + 1)
            text, _ = _event_texts(ev, names, tiles, ctx)
        elif type(ev) is Play:
            assert board is not None
            had_spinner = board.spinner >= 0
            lead = board.size == 0
            board.place(ev.tile, ev.slot)
            if board.count() != ev.count:
                raise RuntimeError(f"viewer: event {k} counts {ev.count}, the board {board.count()}")
            hands[ev.seat].discard(ev.tile)
            scores[side_of[ev.seat]] += ev.points
            ctx["played"] = True
            ctx["last_seat"] = ev.seat
            tile = ev.tile
            text = _play_text(ev, names, tiles, lead, board.spinner >= 0 and not had_spinner)
            laid, anchors = board_layout(board)
            current_layout = _share_layout(layouts, current_layout, laid, board.spinner_tile)
            ends = []
            for slot in board.open_slots:
                value = board.ends[slot]
                counted = None
                if board.counted(slot):
                    counted = 2 * value if board.arm_len[slot] and board.end_double[slot] else value
                x, y = anchors.get(slot, (0.0, 0.0))
                ends.append([SLOT_NAMES[slot], value, counted, x, y])
            spinner_points = 2 * board.spinner if board.spinner_counts() else 0
        elif type(ev) is Draw:
            if not stock or stock[0] != ev.tile:
                raise RuntimeError(f"viewer: event {k} draws {ev.tile}, the boneyard's top is {stock[:1]}")
            stock.pop(0)
            hands[ev.seat].add(ev.tile)
            tile = ev.tile
            text, hidden = _event_texts(ev, names, tiles, ctx)
        elif type(ev) is Settlement:
            scores = list(ev.scores)
            text, _ = _event_texts(ev, names, tiles, ctx)
        elif type(ev) is GameOver:
            scores = list(ev.scores)
            text, _ = _event_texts(ev, names, tiles, ctx)
        else:  # Pass
            text, _ = _event_texts(ev, names, tiles, ctx)
        assert board is not None
        frames.append({
            "step": k + 1,
            "hand": hand_index + 1,
            "kind": ev.kind,
            "seat": seat,
            "tile": tile,
            "text": text,
            "hidden": hidden,
            "turn": turn_after[k],
            "count": board.count() if board.size else 0,
            "scores": list(scores),
            "sizes": [len(h) for h in hands],
            "hands": [sorted(h) for h in hands],
            "boneyard": len(stock),
            "layout": current_layout,
            "placed": board.size,
            "ends": ends,
            "spinner_points": spinner_points,
        })
    if frames and frames[-1]["scores"] != list(game.scores):
        raise RuntimeError(f"viewer: final scores {frames[-1]['scores']} differ from the game's {game.scores}")

    defaults = Rules.from_options({"num_players": rules.num_players}).to_dict()
    changed = {k: v for k, v in rules.to_dict().items() if defaults.get(k) != v}
    seed = record.get("seed")
    agents = record.get("agents")
    if game.over:
        if game.winner is None:
            result = "a draw"
        else:
            result = f"{names.sides[game.winner]} {'win' if names.team else 'wins'}"
        result += " (max_hands reached)" if game.truncated else ""
    else:
        result = "unfinished"
    return {
        "meta": {
            "players": n,
            "target": rules.target,
            "max_pip": rules.max_pip,
            "partnership": rules.partnership,
            "seed": seed if isinstance(seed, (int, str)) and not isinstance(seed, bool) else None,
            # who played each seat, when the record says (allfives evaluate --save-games writes "agents")
            "agents": [str(a) for a in agents] if isinstance(agents, list) and len(agents) == n else None,
            "rules": changed,
            "hands": len(game.hand_records),
            "events": len(game.events),
            "result": result,
            "final_scores": list(game.scores),
        },
        "names": names.seats,
        "sides": names.sides,
        "side_of": side_of,
        "pairs": [list(p) for p in tiles.pairs],
        "hand_steps": hand_steps,
        "layouts": layouts,
        "frames": frames,
    }


def _share_layout(layouts: list[dict[str, Any]], current: int, laid: list[list[Any]], spinner_tile: int) -> int:
    """Index of a layout whose first ``len(laid)`` tiles are exactly ``laid``: the current one grown by
    the new tile when every tile already down kept its place, else a new layout."""
    if current >= 0:
        known = layouts[current]["tiles"]
        if len(known) == len(laid) - 1:
            place = {t[0]: t for t in laid}
            if all(place.get(t[0]) == t for t in known):
                new = [t for t in laid if t[0] not in {u[0] for u in known}]
                known.extend(new)
                return current
    layouts.append({"spinner": spinner_tile, "tiles": [list(t) for t in laid]})
    return len(layouts) - 1


def _script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` can end it or open a comment."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def replay_html(source: Source, title: Optional[str] = None) -> str:
    """One self-contained HTML page that steps through the replay ``source`` (a path, a JSON string, a
    record dict or a :class:`Game`). Raises :class:`ReplayError` for a corrupt or foreign replay, before any HTML is made.

    ``title`` defaults to the file name. The page has stable element ids for scripts and tests:
    ``count``, ``scores`` (with ``score-0``, ``score-1``, ... per side), ``event``, ``step`` ("N / total",
    N from 1), ``first``, ``prev``, ``next``, ``last``, ``hand-select``, ``view-select``, ``board``,
    ``hands``, ``chart``, ``log``; ``#step=N`` in the URL opens it at step N (``#step=N&view=S``: as
    seat S sees it, other hands face down).
    """
    if title is None:
        if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith("{")):
            title = f"All Fives replay: {Path(source).name}"
        else:
            title = "All Fives replay"
    data = replay_data(source)
    data["meta"]["title"] = title
    parts = {"TITLE": html.escape(title, quote=True), "CSS": _CSS, "JS": _JS, "DATA": _script_json(data)}
    # one pass: text put in for one placeholder (a title "x%%JS%%") is never scanned for another
    return _PLACEHOLDER.sub(lambda m: parts[m.group(1)], _PAGE)


#: The placeholders of :data:`_PAGE`.
_PLACEHOLDER = re.compile(r"%%(TITLE|CSS|JS|DATA)%%")


def write_replay_html(source: Source, path: Union[str, Path], title: Optional[str] = None) -> Path:
    """Write :func:`replay_html` of ``source`` to ``path`` (UTF-8) and return the path.

    The replay is verified first, so a bad replay raises :class:`ReplayError` and leaves no file behind.
    """
    page = replay_html(source, title)
    path = Path(path)
    path.write_text(page, encoding="utf-8")
    return path


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%%TITLE%%</title>
<style>
%%CSS%%
</style>
</head>
<body>
<header>
  <h1 id="title">%%TITLE%%</h1>
  <div id="meta"></div>
</header>
<nav id="controls">
  <button id="first" type="button" title="First step (Home)">|&#x25C0; First</button>
  <button id="prev-hand" type="button" title="Previous hand (Page Up)">&#x00AB; Hand</button>
  <button id="prev" type="button" title="Previous step (Left arrow)">&#x25C0; Prev</button>
  <button id="next" type="button" title="Next step (Right arrow)">Next &#x25B6;</button>
  <button id="next-hand" type="button" title="Next hand (Page Down)">Hand &#x00BB;</button>
  <button id="last" type="button" title="Last step (End)">Last &#x25B6;|</button>
  <span class="stepbox">Step <span id="step"></span></span>
  <input id="slider" type="range" min="1" value="1" aria-label="step">
  <label>Jump to <select id="hand-select"></select></label>
  <label>Show <select id="view-select"></select></label>
</nav>
<main>
  <section id="left">
    <div id="event-bar"><span id="event-hand"></span> <span id="event"></span></div>
    <svg id="board" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="the table"></svg>
    <div id="ends-line"><span id="status"></span> <span id="ends"></span></div>
    <div id="hands"></div>
  </section>
  <aside id="right">
    <div id="scoreboard">
      <div class="countbox"><div class="label">Count</div><div id="count">0</div></div>
      <div class="scorebox"><div class="label">Scores <span id="target"></span></div><div id="scores"></div></div>
    </div>
    <svg id="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 320 130" role="img" aria-label="scores over time"></svg>
    <ol id="log"></ol>
  </aside>
</main>
<script type="application/json" id="replay-data">%%DATA%%</script>
<script>
%%JS%%
</script>
</body>
</html>
"""

_CSS = """
:root { --felt: #1f5e3b; --felt-dark: #174a2e; --ink: #1d2330; --muted: #5d6675; --hl: #ffd54a;
        --side0: #d9480f; --side1: #1971c2; --side2: #2f9e44; --side3: #9c36b5; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.35 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       color: var(--ink); background: #eef1f4; }
header { display: flex; align-items: baseline; gap: 16px; padding: 8px 14px 2px; flex-wrap: wrap; }
h1 { font-size: 17px; margin: 0; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 45%; }
#meta { color: var(--muted); font-size: 13px; }
#controls { display: flex; align-items: center; gap: 6px; padding: 6px 14px; flex-wrap: wrap; }
button { font: inherit; padding: 3px 9px; border: 1px solid #b8c0cc; border-radius: 5px; background: #fff;
         cursor: pointer; }
button:hover:not(:disabled) { background: #e7f0ff; }
button:disabled { opacity: .45; cursor: default; }
select, input { font: inherit; }
.stepbox { margin: 0 4px 0 8px; font-variant-numeric: tabular-nums; min-width: 118px; }
#slider { flex: 1 1 160px; min-width: 120px; }
label { color: var(--muted); }
main { display: grid; grid-template-columns: minmax(0, 1fr) 350px; gap: 12px; padding: 4px 14px 14px; }
#left { min-width: 0; }
#event-bar { background: #fff; border: 1px solid #d5dbe3; border-radius: 7px; padding: 7px 10px; min-height: 36px;
             font-size: 15px; margin-bottom: 8px; }
#event-hand { display: inline-block; background: var(--ink); color: #fff; border-radius: 4px; padding: 0 6px;
              font-size: 12px; margin-right: 4px; }
#event { font-weight: 600; }
#board { display: block; width: 100%; height: 390px; background: radial-gradient(circle at 50% 45%, var(--felt), var(--felt-dark));
         border-radius: 10px; }
#ends-line { margin: 6px 2px 8px; color: var(--ink); min-height: 20px; }
#status { color: var(--muted); margin-right: 10px; }
.tile rect.face { fill: #fffdf6; stroke: #2b2b2b; stroke-width: .05; }
.tile.spinner rect.face { fill: #fff3cf; }
.tile.last rect.face { stroke: var(--hl); stroke-width: .16; }
.tile line { stroke: #6d6d6d; stroke-width: .04; }
.tile circle { fill: #111; }
.tile.back rect.face { fill: #34495e; stroke: #1b2631; }
.tile.back circle { fill: #5d7286; }
.tile.new rect.face { stroke: var(--hl); stroke-width: .16; }
.end circle { stroke-width: .07; stroke-dasharray: .18 .12; }
.end.counted circle { fill: rgba(255, 213, 74, .22); stroke: var(--hl); }
.end.uncounted circle { fill: rgba(255, 255, 255, .08); stroke: #c7d3cc; }
.end text { font-size: .5px; text-anchor: middle; dominant-baseline: central; fill: #fff; font-weight: 700; }
.board-note { font-size: .8px; fill: #d8efe0; text-anchor: middle; }
#hands { display: grid; gap: 6px; }
.hand { display: flex; align-items: center; gap: 10px; background: #fff; border: 1px solid #d5dbe3; border-radius: 7px;
        padding: 5px 10px; min-height: 56px; }
.hand.turn { border-color: #e0a800; box-shadow: 0 0 0 2px rgba(255, 213, 74, .55); }
.hand .who { width: 92px; flex: none; }
.hand .who b { display: block; }
.hand .who small { color: var(--muted); }
.hand svg { height: 44px; }
.badge { display: inline-block; font-size: 11px; background: var(--hl); border-radius: 3px; padding: 0 4px; margin-left: 4px; }
#scoreboard { display: flex; gap: 10px; margin-bottom: 8px; }
.countbox, .scorebox { background: #fff; border: 1px solid #d5dbe3; border-radius: 7px; padding: 6px 10px; }
.countbox { width: 86px; text-align: center; }
.scorebox { flex: 1; }
.label { color: var(--muted); font-size: 12px; }
#count { font-size: 28px; font-weight: 700; font-variant-numeric: tabular-nums; }
#count.scores { color: #2b8a3e; }
#scores { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 15px; margin-top: 3px; }
#scores .side { white-space: nowrap; }
#scores .swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
#scores b { font-size: 20px; font-variant-numeric: tabular-nums; }
#chart { display: block; width: 100%; height: 130px; background: #fff; border: 1px solid #d5dbe3; border-radius: 7px;
         cursor: crosshair; }
#chart text { font-size: 9px; fill: var(--muted); }
#log { list-style: none; margin: 8px 0 0; padding: 0; background: #fff; border: 1px solid #d5dbe3; border-radius: 7px;
       height: 390px; overflow-y: auto; position: relative; font-size: 12.5px; }
#log li { padding: 2px 8px; cursor: pointer; border-left: 3px solid transparent; }
#log li .n { color: #98a1ad; display: inline-block; min-width: 38px; font-variant-numeric: tabular-nums; }
#log li.hs { background: #f1f3f6; font-weight: 600; margin-top: 2px; }
#log li.sc { color: #2b8a3e; }
#log li.end { font-weight: 600; }
#log li:hover { background: #eef4ff; }
#log li.current { background: #fff3bf; border-left-color: #e0a800; }
@media (max-width: 900px) { main { grid-template-columns: 1fr; } h1 { max-width: 100%; } }
"""

_JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("replay-data").textContent);
  var F = D.frames, TOTAL = F.length, SVGNS = "http://www.w3.org/2000/svg";
  var COLORS = ["#d9480f", "#1971c2", "#2f9e44", "#9c36b5"];
  var cur = -1, view = "all";
  function $(id) { return document.getElementById(id); }
  function svg(tag, attrs, parent) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) { e.setAttribute(k, attrs[k]); } }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function html(tag, cls, text, parent) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function clear(e) { while (e.firstChild) { e.removeChild(e.firstChild); } }

  // pip spots in a 1 x 1 half, for a half of a vertical tile (transposed on horizontal tiles)
  function spots(v) {
    var a = 0.26, m = 0.5, b = 0.74, s = [];
    if (v <= 9) {
      var grid = {
        0: [], 1: [[m, m]], 2: [[a, a], [b, b]], 3: [[a, a], [m, m], [b, b]],
        4: [[a, a], [b, a], [a, b], [b, b]], 5: [[a, a], [b, a], [m, m], [a, b], [b, b]],
        6: [[a, a], [b, a], [a, m], [b, m], [a, b], [b, b]],
        7: [[a, a], [b, a], [a, m], [m, m], [b, m], [a, b], [b, b]],
        8: [[a, a], [m, a], [b, a], [a, m], [b, m], [a, b], [m, b], [b, b]],
        9: [[a, a], [m, a], [b, a], [a, m], [m, m], [b, m], [a, b], [m, b], [b, b]]
      };
      return grid[v];
    }
    var rows = [0.2, 0.4, 0.6, 0.8];
    for (var i = 0; i < 4; i++) { s.push([0.22, rows[i]]); s.push([0.78, rows[i]]); }
    var mid = v === 10 ? [0.35, 0.65] : v === 11 ? [0.2, 0.5, 0.8] : rows;
    for (var j = 0; j < mid.length; j++) { s.push([0.5, mid[j]]); }
    return s;
  }
  function drawHalf(g, x, y, v, horizontal) {
    var r = v > 9 ? 0.068 : v > 6 ? 0.082 : 0.092, pts = spots(v);
    for (var i = 0; i < pts.length; i++) {
      var px = horizontal ? pts[i][1] : pts[i][0], py = horizontal ? pts[i][0] : pts[i][1];
      svg("circle", {cx: x + px, cy: y + py, r: r}, g);
    }
  }
  function drawTile(parent, x, y, w, h, p1, p2, cls, label) {
    var g = svg("g", {"class": "tile" + (cls ? " " + cls : "")}, parent);
    if (label) { svg("title", {}, g).textContent = label; }
    svg("rect", {"class": "face", x: x + 0.02, y: y + 0.02, width: w - 0.04, height: h - 0.04, rx: 0.13}, g);
    if (p1 === null) { svg("circle", {cx: x + w / 2, cy: y + h / 2, r: 0.16}, g); return g; }
    var horizontal = w > h;
    if (horizontal) {
      svg("line", {x1: x + 1, y1: y + 0.14, x2: x + 1, y2: y + h - 0.14}, g);
      drawHalf(g, x, y, p1, true); drawHalf(g, x + 1, y, p2, true);
    } else {
      svg("line", {x1: x + 0.14, y1: y + 1, x2: x + w - 0.14, y2: y + 1}, g);
      drawHalf(g, x, y, p1, false); drawHalf(g, x, y + 1, p2, false);
    }
    return g;
  }
  function tileName(id) { var p = D.pairs[id]; return p[1] + "-" + p[0]; }
  function seatVisible(seat) { return view === "all" || String(seat) === view; }
  function eventText(f) { return f.hidden !== null && !seatVisible(f.seat) ? f.hidden : f.text; }

  // ---------------------------------------------------------------- static parts
  function buildMeta() {
    var m = D.meta, parts = [];
    parts.push(m.players + " players" + (m.partnership ? " (teams " + D.sides.join(" vs ") + ")" : ""));
    parts.push(m.max_pip === 6 ? "double-six" : "double-" + (m.max_pip === 9 ? "nine" : "twelve"));
    parts.push("target " + m.target);
    if (m.agents) { parts.push(m.agents.map(function (a, s) { return "P" + s + " " + a; }).join(", ")); }
    if (m.seed !== null && m.seed !== undefined) { parts.push("seed " + m.seed); }
    parts.push(m.hands + (m.hands === 1 ? " hand" : " hands"));
    parts.push(m.events + " events");
    parts.push("result: " + m.result);
    var rules = [];
    for (var k in m.rules) { if (Object.prototype.hasOwnProperty.call(m.rules, k)) { rules.push(k + "=" + m.rules[k]); } }
    if (rules.length) { parts.push("rules: " + rules.join(", ")); }
    $("meta").textContent = parts.join(" \u00b7 ");
    $("target").textContent = "(target " + m.target + ")";
    document.title = m.title;
  }
  function buildSelects() {
    var hs = $("hand-select");
    for (var h = 0; h < D.hand_steps.length; h++) {
      var o = html("option", null, "Hand " + (h + 1), hs); o.value = String(h + 1);
    }
    var vs = $("view-select");
    var all = html("option", null, "All hands face up", vs); all.value = "all";
    for (var s = 0; s < D.names.length; s++) {
      var o2 = html("option", null, D.names[s] + "'s view", vs); o2.value = String(s);
    }
    hs.addEventListener("change", function () { go(D.hand_steps[parseInt(hs.value, 10) - 1] - 1); });
    vs.addEventListener("change", function () { view = vs.value; fillLog(); var c = cur; cur = -1; go(c); });
    var sl = $("slider"); sl.max = String(TOTAL);
    sl.addEventListener("input", function () { go(parseInt(sl.value, 10) - 1); });
  }
  var logItems = [];
  function buildLog() {
    var log = $("log");
    for (var k = 0; k < TOTAL; k++) {
      var f = F[k], li = html("li", null, null, log);
      if (f.kind === "hand_start") { li.className = "hs"; }
      else if (f.kind === "play" && k > 0 && sum(f.scores) !== sum(F[k - 1].scores)) { li.className = "sc"; }
      else if (f.kind === "settlement" || f.kind === "game_over") { li.className = "end"; }
      html("span", "n", f.step, li);
      html("span", "t", "", li);
      li.setAttribute("data-step", String(f.step));
      li.addEventListener("click", (function (i) { return function () { go(i); }; })(k));
      logItems.push(li);
    }
    fillLog();
  }
  function sum(a) { var t = 0; for (var i = 0; i < a.length; i++) { t += a[i]; } return t; }
  function fillLog() {
    for (var k = 0; k < TOTAL; k++) { logItems[k].lastChild.textContent = eventText(F[k]); }
  }

  // ---------------------------------------------------------------- score chart
  var chartX = function () { return 0; }, chartCursor = null;
  function buildChart() {
    var c = $("chart"), W = 320, H = 130, L = 34, R = 8, T = 10, B = 18;
    var lo = 0, hi = D.meta.target, k, s;
    for (k = 0; k < TOTAL; k++) {
      for (s = 0; s < F[k].scores.length; s++) { lo = Math.min(lo, F[k].scores[s]); hi = Math.max(hi, F[k].scores[s]); }
    }
    if (hi === lo) { hi = lo + 1; }
    var sx = function (i) { return L + (W - L - R) * (TOTAL > 1 ? i / (TOTAL - 1) : 0); };
    var sy = function (v) { return T + (H - T - B) * (hi - v) / (hi - lo); };
    chartX = sx;
    svg("line", {x1: L, x2: W - R, y1: sy(0), y2: sy(0), stroke: "#c5ccd6", "stroke-width": 1}, c);
    svg("line", {x1: L, x2: W - R, y1: sy(D.meta.target), y2: sy(D.meta.target), stroke: "#e8590c",
                 "stroke-width": 1, "stroke-dasharray": "4 3"}, c);
    svg("text", {x: L - 4, y: sy(D.meta.target) + 3, "text-anchor": "end"}, c).textContent = String(D.meta.target);
    svg("text", {x: L - 4, y: sy(0) + 3, "text-anchor": "end"}, c).textContent = "0";
    if (lo < 0 && sy(lo) - sy(0) > 10) { svg("text", {x: L - 4, y: sy(lo) + 3, "text-anchor": "end"}, c).textContent = String(lo); }
    svg("text", {x: L, y: H - 4}, c).textContent = "step 1";
    svg("text", {x: W - R, y: H - 4, "text-anchor": "end"}, c).textContent = "step " + TOTAL;
    for (s = 0; s < D.sides.length; s++) {
      var pts = [], prev = null;
      for (k = 0; k < TOTAL; k++) {
        var v = F[k].scores[s];
        if (prev !== null && v !== prev) { pts.push(sx(k).toFixed(1) + "," + sy(prev).toFixed(1)); }
        if (prev === null || v !== prev || k === TOTAL - 1) { pts.push(sx(k).toFixed(1) + "," + sy(v).toFixed(1)); }
        prev = v;
      }
      svg("polyline", {points: pts.join(" "), fill: "none", stroke: COLORS[s % 4], "stroke-width": 1.6,
                       "stroke-linejoin": "round", "class": "series", id: "series-" + s}, c);
    }
    chartCursor = svg("line", {y1: T - 4, y2: H - B + 2, stroke: "#1d2330", "stroke-width": 1, id: "chart-cursor"}, c);
    c.addEventListener("click", function (e) {
      var r = c.getBoundingClientRect(), x = (e.clientX - r.left) * W / r.width;
      var i = Math.round((x - L) / (W - L - R) * (TOTAL - 1));
      go(Math.max(0, Math.min(TOTAL - 1, i)));
    });
  }

  // ---------------------------------------------------------------- board
  function drawBoard(f) {
    var b = $("board");
    clear(b);
    var minX = -12, maxX = 12, minY = -6.5, maxY = 6.5, i;
    var tiles = f.layout >= 0 ? D.layouts[f.layout].tiles.slice(0, f.placed) : [];
    var spinner = f.layout >= 0 ? D.layouts[f.layout].spinner : -1;
    for (i = 0; i < tiles.length; i++) {
      var t = tiles[i];
      minX = Math.min(minX, t[1] - 1); minY = Math.min(minY, t[2] - 1);
      maxX = Math.max(maxX, t[1] + t[3] + 1); maxY = Math.max(maxY, t[2] + t[4] + 1);
    }
    for (i = 0; i < f.ends.length; i++) {
      minX = Math.min(minX, f.ends[i][3] - 1.2); maxX = Math.max(maxX, f.ends[i][3] + 1.2);
      minY = Math.min(minY, f.ends[i][4] - 1.2); maxY = Math.max(maxY, f.ends[i][4] + 1.2);
    }
    b.setAttribute("viewBox", [minX, minY, maxX - minX, maxY - minY].join(" "));
    b.setAttribute("preserveAspectRatio", "xMidYMid meet");
    var g = svg("g", {}, b);
    for (i = 0; i < tiles.length; i++) {
      var u = tiles[i], cls = [];
      if (u[0] === spinner) { cls.push("spinner"); }
      if (f.kind === "play" && u[0] === f.tile) { cls.push("last"); }
      drawTile(g, u[1], u[2], u[3], u[4], u[5], u[6], cls.join(" "),
               tileName(u[0]) + (u[0] === spinner ? " (spinner)" : ""));
    }
    for (i = 0; i < f.ends.length; i++) {
      var e = f.ends[i], counted = e[2] !== null;
      var eg = svg("g", {"class": "end " + (counted ? "counted" : "uncounted")}, g);
      svg("title", {}, eg).textContent = e[0] + " end: " + e[1] + (counted ? " (counts " + e[2] + ")" : " (open, not counted yet)");
      svg("circle", {cx: e[3], cy: e[4], r: 0.42}, eg);
      svg("text", {x: e[3], y: e[4] + 0.02}, eg).textContent = counted ? String(e[2]) : String(e[1]);
    }
    if (!tiles.length) {
      var note = svg("text", {x: 0, y: 0, "class": "board-note"}, g);
      note.textContent = f.kind === "hand_start" || f.kind === "draw" ? "Hand " + f.hand + ": the table is empty" : "";
    }
  }
  function describeEnds(f) {
    if (!f.placed) { return "No tiles down yet: any tile may lead."; }
    var parts = [], i;
    for (i = 0; i < f.ends.length; i++) {
      var e = f.ends[i];
      if (e[2] === null) { parts.push(e[0] + " " + e[1] + " (not counted yet)"); }
      else if (e[2] !== e[1]) { parts.push(e[0] + " " + e[1] + "-" + e[1] + " = " + e[2]); }
      else { parts.push(e[0] + " " + e[2]); }
    }
    if (f.spinner_points) { parts.push("spinner " + f.spinner_points); }
    return "Open ends: " + parts.join(" \u00b7 ") + "  \u2192 count " + f.count +
           (f.count && f.count % 5 === 0 ? " (a multiple of 5)" : "");
  }

  // ---------------------------------------------------------------- hands
  function drawHands(f) {
    var box = $("hands");
    clear(box);
    for (var s = 0; s < f.hands.length; s++) {
      var row = html("div", "hand" + (f.turn === s ? " turn" : ""), null, box);
      row.id = "hand-" + s;
      var who = html("div", "who", null, row);
      var name = html("b", null, D.names[s], who);
      if (D.names.length > D.sides.length) { name.style.color = COLORS[D.side_of[s] % 4]; }
      else { name.style.color = COLORS[s % 4]; }
      if (f.turn === s) { html("span", "badge", "to play", name); }
      html("small", null, f.sizes[s] + (f.sizes[s] === 1 ? " tile" : " tiles"), who);
      var n = f.hands[s].length, W = Math.max(1, n * 1.15), up = seatVisible(s);
      var sv = svg("svg", {viewBox: "-0.05 -0.05 " + (W + 0.1) + " 2.1", width: (W + 0.1) * 21, height: 44}, row);
      for (var i = 0; i < n; i++) {
        var id = f.hands[s][i], p = D.pairs[id];
        var cls = up ? "" : "back";
        if (up && f.kind === "draw" && f.seat === s && f.tile === id) { cls = "new"; }
        drawTile(sv, i * 1.15, 0, 1, 2, up ? p[1] : null, up ? p[0] : null, cls, up ? tileName(id) : "hidden tile");
      }
    }
  }

  // ---------------------------------------------------------------- stepping
  function go(i) {
    i = Math.max(0, Math.min(TOTAL - 1, i | 0));
    if (i === cur) { return; }
    var old = cur;
    cur = i;
    var f = F[i];
    $("step").textContent = f.step + " / " + TOTAL;
    $("event").textContent = eventText(f);
    $("event-hand").textContent = "Hand " + f.hand;
    $("count").textContent = String(f.count);
    $("count").className = f.count && f.count % 5 === 0 ? "scores" : "";
    for (var s = 0; s < f.scores.length; s++) { $("score-" + s).textContent = String(f.scores[s]); }
    var status = [];
    if (f.turn !== null) { status.push(D.names[f.turn] + " to play"); }
    status.push("boneyard " + f.boneyard);
    $("status").textContent = status.join(" \u00b7 ");
    $("ends").textContent = describeEnds(f);
    drawBoard(f);
    drawHands(f);
    $("hand-select").value = String(f.hand);
    $("slider").value = String(f.step);
    $("first").disabled = $("prev").disabled = $("prev-hand").disabled = i === 0;
    $("last").disabled = $("next").disabled = i === TOTAL - 1;
    $("next-hand").disabled = f.hand >= D.hand_steps.length;
    if (old >= 0) { logItems[old].classList.remove("current"); }
    var li = logItems[i], log = $("log");
    li.classList.add("current");
    if (li.offsetTop < log.scrollTop || li.offsetTop + li.offsetHeight > log.scrollTop + log.clientHeight) {
      log.scrollTop = li.offsetTop - log.clientHeight / 2;
    }
    if (chartCursor) { chartCursor.setAttribute("x1", chartX(i)); chartCursor.setAttribute("x2", chartX(i)); }
    var hash = "#step=" + f.step + (view === "all" ? "" : "&view=" + view);
    if (location.hash !== hash) {
      try { history.replaceState(null, "", hash); } catch (err) { /* some file:// setups refuse: ignore */ }
    }
  }
  function handJump(delta) {
    var h = F[cur].hand + delta;
    if (delta < 0 && F[cur].step !== D.hand_steps[F[cur].hand - 1]) { h = F[cur].hand; }
    h = Math.max(1, Math.min(D.hand_steps.length, h));
    go(D.hand_steps[h - 1] - 1);
  }
  function fromHash() {
    var h = location.hash || "", m = /step=(\d+)/.exec(h), v = /view=(all|\d+)/.exec(h);
    if (v && (v[1] === "all" || parseInt(v[1], 10) < D.names.length) && v[1] !== view) {
      view = v[1]; $("view-select").value = view; fillLog(); cur = -1;
    }
    return m ? parseInt(m[1], 10) - 1 : (cur < 0 ? 0 : cur);
  }
  function buildScores() {
    var box = $("scores");
    for (var s = 0; s < D.sides.length; s++) {
      var span = html("span", "side", null, box);
      var sw = html("span", "swatch", null, span); sw.style.background = COLORS[s % 4];
      span.appendChild(document.createTextNode(D.sides[s] + " "));
      var b = html("b", null, "0", span); b.id = "score-" + s;
      if (s < D.sides.length - 1) { span.appendChild(document.createTextNode(" ")); }
    }
  }

  buildMeta(); buildSelects(); buildScores(); buildLog(); buildChart();
  $("first").addEventListener("click", function () { go(0); });
  $("prev").addEventListener("click", function () { go(cur - 1); });
  $("next").addEventListener("click", function () { go(cur + 1); });
  $("last").addEventListener("click", function () { go(TOTAL - 1); });
  $("prev-hand").addEventListener("click", function () { handJump(-1); });
  $("next-hand").addEventListener("click", function () { handJump(1); });
  document.addEventListener("keydown", function (e) {
    var tag = e.target && e.target.tagName;
    if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA" || e.altKey || e.ctrlKey || e.metaKey) { return; }
    var moves = {ArrowLeft: function () { go(cur - 1); }, ArrowRight: function () { go(cur + 1); },
                 Home: function () { go(0); }, End: function () { go(TOTAL - 1); },
                 PageUp: function () { handJump(-1); }, PageDown: function () { handJump(1); }};
    if (moves[e.key]) { e.preventDefault(); moves[e.key](); }
  });
  window.addEventListener("hashchange", function () { go(fromHash()); });
  go(fromHash());
  document.body.setAttribute("data-ready", "1");
})();
"""


# ---------------------------------------------------------------------------------------------- screenshots
#: Flags for headless Chromium in a sandbox without network: without the background-networking ones it
#: keeps trying to reach Google's hosts and can hang; --no-sandbox because CI runs as root.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def find_chromium() -> Optional[str]:
    """The path of a Chromium-family browser on PATH, or None."""
    import shutil

    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


def screenshot(html_path: Union[str, Path], png_path: Union[str, Path], step: int = 1,
               size: tuple[int, int] = (1280, 800)) -> Path:
    """A PNG of the viewer page ``html_path`` opened at ``step``, taken with headless Chromium (for docs
    and visual checks). Raises FileNotFoundError naming the package to install when there is no browser."""
    import subprocess
    import tempfile

    chromium = find_chromium()
    if chromium is None:
        raise FileNotFoundError("no chromium on PATH: install Debian's chromium package (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="allfives-chromium-") as profile:
        subprocess.run(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={Path(png_path).resolve()}",
             f"--window-size={size[0]},{size[1]}", f"{Path(html_path).resolve().as_uri()}#step={int(step)}"],
            check=True, capture_output=True, timeout=60,
        )
    return Path(png_path)
