"""The replay viewer's data: a verified replay walked event by event into frames of the table.

:func:`replay_data` first verifies a replay with :func:`~allfives_env.core.replay.load_replay` (a corrupt
or foreign file raises :class:`~allfives_env.core.errors.ReplayError`), then walks the verified event log
with the deals of the replay and a :class:`~allfives_env.core.board.Board` of the engine, building one
*frame* per event: the state of the table right after that event (count, open ends, scores, every hand
face up, the boneyard, whose turn it is, the event's text). The frames are computed with the engine's own
board and count, so a page only draws them: the browser never re-implements a rule, and what it shows is
what the engine had. :mod:`allfives_env.viewer` embeds this data in its HTML page.

Board geometry is :mod:`allfives_env.board_layout`'s, in its units (one half of a tile is a 1 x 1 square,
the spinner or the lead at the origin), which the page uses as SVG units as they are; the arms bend after
:data:`ARM_LIMITS` (the page scales its viewBox to the layout, so everything stays on screen).
:func:`board_layout` gives one board's geometry in the page's format.

Size. A long game has thousands of events, so tile positions are not repeated in every frame: within a
hand the positions of the tiles already down do not change when a tile is added (only the first double,
which turns the line into a spinner cross, re-centres the table), so the frames share *layouts*: a frame
shows the first ``placed`` tiles of ``layouts[layout]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Union

from .board_layout import Layout, lay_out
from .core.board import Board
from .core.events import SLOT_NAMES, Draw, Event, GameOver, HandStart, Pass, Play, Settlement
from .core.game import Game
from .core.replay import game_record, load_replay, read_record
from .core.rules import Rules

__all__ = ["ARM_LIMITS", "FrameWalk", "Source", "TableNames", "board_layout", "replay_data", "result_text",
           "turns_after"]

Source = Union[str, Path, dict[str, Any], Game]

#: Straight run of the W/E arms and of the N/S arms, in units from where the arm starts, before it turns:
#: five tiles across, two up and down (the board is wider than high). Fixed, unlike the raster frame's,
#: so that tiles already down keep their places while a hand goes on.
ARM_LIMITS = (10.5, 4.5)
_DECIMALS = 3  # coordinates are rounded to this many decimals for the page


def _r(x: float) -> float:
    """Round a coordinate for the page (and turn -0.0 into 0.0)."""
    return round(x, _DECIMALS) + 0.0


def _page_tiles(layout: Layout) -> list[list[Any]]:
    """The layout's tiles as the page draws them: ``[tile, x, y, w, h, p1, p2]``."""
    return [[t.tile, _r(t.x0), _r(t.y0), _r(t.x1 - t.x0), _r(t.y1 - t.y0), t.first, t.second] for t in layout.tiles]


def board_layout(board: Board) -> tuple[list[list[Any]], dict[int, tuple[float, float]]]:
    """Geometry of ``board`` in units (one tile half = 1 x 1, the centre tile at the origin).

    Returns the tiles as ``[tile, x, y, w, h, p1, p2]`` (``p1`` is the pip on the left half when
    ``w > h``, else on the top half; a double is drawn crosswise to its arm) and, per open end, the
    anchor point of its marker (where the next tile's matching half would go).
    """
    layout = lay_out(board, ARM_LIMITS)
    return _page_tiles(layout), {e.slot: (_r(e.x), _r(e.y)) for e in layout.ends}


class TableNames:
    """Seat and side names used in every text: P0, P1, ...; teams as P0+P2 (the viewer's and the web
    game's)."""

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


def _play_text(ev: Play, names: TableNames, tiles: Any, lead: bool, spinner_made: bool) -> str:
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


def _event_texts(ev: Event, names: TableNames, tiles: Any, ctx: dict[str, Any]) -> tuple[str, Optional[str]]:
    """(text for everyone who may see it, text for the other seats when it hides a drawn tile)."""
    if type(ev) is HandStart:
        return (f"Hand {ev.hand}: {names.seats[ev.leader]} leads; scores {names.side_list(ev.scores)}", None)
    if type(ev) is Draw:
        who = names.seats[ev.seat]
        if ev.forced:
            how = "cannot play and draws"
        elif not ctx["played"]:
            how = "draws for a double"
        else:
            how = "chooses to draw"
        tile = tiles.name(ev.tile) if ev.tile >= 0 else "a tile"
        return f"{who} {how} {tile}", f"{who} {how} a tile"
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
    or a :class:`Game` (recorded first, so it is checked like a file). Raises :class:`ReplayError` for
    anything :func:`load_replay` rejects. Frame ``k`` (``frames[k]``, shown as step ``k + 1``) is the state
    right after ``game.events[k]``:

    ``step``, ``hand``, ``kind`` (event type), ``seat`` (who acted, or None), ``tile`` (tile id played or
    drawn, or None), ``text`` / ``hidden`` (event text; ``hidden`` hides another seat's drawn tile),
    ``turn`` (the seat whose move comes next, or None), ``count``, ``scores`` (per side), ``sizes`` and
    ``hands`` (tile ids per seat, ascending), ``boneyard`` (tiles left), ``layout`` / ``placed`` (the first
    ``placed`` tiles of ``layouts[layout]`` are on the table), ``ends`` (``[slot, value, counted value or
    None, x, y]`` per open end) and ``spinner_points`` (the spinner's own 2v while it counts, else 0).
    """
    record = game_record(source) if isinstance(source, Game) else read_record(source)
    game = load_replay(record)
    names = TableNames(game.rules)
    walk = FrameWalk(game, names)
    frames = [walk.frame(k, ev, turn) for k, (ev, turn) in enumerate(zip(game.events, turns_after(game)))]
    if frames and frames[-1]["scores"] != list(game.scores):
        raise RuntimeError(f"viewer: final scores {frames[-1]['scores']} differ from the game's {game.scores}")
    return {
        "meta": _meta(game, record, names),
        "names": names.seats,
        "sides": names.sides,
        "side_of": walk.side_of,
        "pairs": [list(p) for p in game.tiles.pairs],
        "hand_steps": walk.hand_steps,
        "layouts": walk.layouts,
        "frames": frames,
    }


def turns_after(game: Game, start: int = 0) -> list[Optional[int]]:
    """Per event from ``start`` on, the seat whose move comes next (the seat of the next play, draw or
    pass in the same hand), or None; after the last event of a game still going on, the seat to act now.
    (A game being played asks only for its new events: the turns of earlier ones do not change.)"""
    events = game.events
    turn_after: list[Optional[int]] = [None] * (len(events) - start)
    nxt: Optional[int] = None
    for k in range(len(events) - 1, start - 1, -1):
        turn_after[k - start] = nxt
        ev = events[k]
        if isinstance(ev, (Play, Draw, Pass)):
            nxt = ev.seat
        elif type(ev) is HandStart:
            nxt = None
    if not game.over and turn_after:
        turn_after[-1] = game.current
    return turn_after


class FrameWalk:
    """The table while the events of a game are replayed one by one, and the layouts seen.

    It reads only events already in the game and the deals of hands already started, so it also follows
    a game still being played (the web game of :mod:`allfives_env.serve` walks each new event as it comes)."""

    def __init__(self, game: Game, names: TableNames) -> None:
        self.game, self.names, self.tiles = game, names, game.tiles
        rules = game.rules
        n = rules.num_players
        self.side_of = [rules.side_of(s) for s in range(n)]
        self.layouts: list[dict[str, Any]] = []
        self.hand_steps: list[int] = []
        self.board: Optional[Board] = None
        self.hands: list[set[int]] = [set() for _ in range(n)]
        self.stock: list[int] = []
        self.scores = list(game.hand_records[0].scores) if game.hand_records else [0] * rules.num_sides
        self.ctx: dict[str, Any] = {"played": False, "last_seat": -1}
        self.hand_index = -1
        self.layout = -1
        self.ends: list[list[Any]] = []
        self.spinner_points = 0

    def frame(self, k: int, ev: Event, turn: Optional[int]) -> dict[str, Any]:
        """Apply event ``k`` and return the frame right after it."""
        text, hidden = self._apply(k, ev)
        board = self.board
        assert board is not None
        return {
            "step": k + 1,
            "hand": self.hand_index + 1,
            "kind": ev.kind,
            "seat": getattr(ev, "seat", None),
            "tile": ev.tile if isinstance(ev, (Play, Draw)) else None,
            "text": text,
            "hidden": hidden,
            "turn": turn,
            "count": board.count() if board.size else 0,
            "scores": list(self.scores),
            "sizes": [len(h) for h in self.hands],
            "hands": [sorted(h) for h in self.hands],
            "boneyard": len(self.stock),
            "layout": self.layout,
            "placed": board.size,
            "ends": self.ends,
            "spinner_points": self.spinner_points,
        }

    def _apply(self, k: int, ev: Event) -> tuple[str, Optional[str]]:
        """Apply event ``k`` to the table; its text and, for a draw, the text that hides the tile."""
        if type(ev) is HandStart:
            self._hand_start(k, ev)
        elif type(ev) is Play:
            return self._play(k, ev), None
        elif type(ev) is Draw:
            if not self.stock or self.stock[0] != ev.tile:
                raise RuntimeError(f"viewer: event {k} draws {ev.tile}, the boneyard's top is {self.stock[:1]}")
            self.stock.pop(0)
            self.hands[ev.seat].add(ev.tile)
        elif isinstance(ev, (Settlement, GameOver)):
            self.scores = list(ev.scores)
        return _event_texts(ev, self.names, self.tiles, self.ctx)

    def _hand_start(self, k: int, ev: HandStart) -> None:
        self.hand_index += 1
        rec = self.game.hand_records[self.hand_index]
        if rec.first_event != k:
            raise RuntimeError(f"viewer: hand {rec.hand} should start at event {rec.first_event}, not {k}")
        rules = self.game.rules
        self.board = Board(self.tiles, rules.spinner_sides_first, rules.spinner_count)
        self.hands = [set(h) for h in rec.hands]
        self.stock = list(rec.boneyard)
        self.scores = list(ev.scores)
        self.ctx = {"played": False, "last_seat": -1}
        self.layout, self.ends, self.spinner_points = -1, [], 0
        self.hand_steps.append(k + 1)

    def _play(self, k: int, ev: Play) -> str:
        board = self.board
        assert board is not None
        had_spinner = board.spinner >= 0
        lead = board.size == 0
        board.place(ev.tile, ev.slot)
        if board.count() != ev.count:
            raise RuntimeError(f"viewer: event {k} counts {ev.count}, the board {board.count()}")
        self.hands[ev.seat].discard(ev.tile)
        self.scores[self.side_of[ev.seat]] += ev.points
        self.ctx["played"] = True
        self.ctx["last_seat"] = ev.seat
        layout = lay_out(board, ARM_LIMITS)
        self.layout = _share_layout(self.layouts, self.layout, _page_tiles(layout), board.spinner_tile)
        self.ends = [[SLOT_NAMES[e.slot], e.value, e.points, _r(e.x), _r(e.y)] for e in layout.ends]
        self.spinner_points = 2 * board.spinner if board.spinner_counts() else 0
        return _play_text(ev, self.names, self.tiles, lead, board.spinner >= 0 and not had_spinner)


def result_text(game: Game, names: TableNames) -> str:
    """The game's result in words: who won, a draw, or "unfinished"."""
    if not game.over:
        return "unfinished"
    if game.winner is None:
        result = "a draw"
    else:
        result = f"{names.sides[game.winner]} {'win' if names.team else 'wins'}"
    return result + (" (max_hands reached)" if game.truncated else "")


def _meta(game: Game, record: dict[str, Any], names: TableNames) -> dict[str, Any]:
    """What the page's header says about the game: players, rules changed from the defaults, result."""
    rules = game.rules
    n = rules.num_players
    defaults = Rules.from_options({"num_players": n}).to_dict()
    changed = {k: v for k, v in rules.to_dict().items() if defaults.get(k) != v}
    seed = record.get("seed")
    agents = record.get("agents")
    return {
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
        "result": result_text(game, names),
        "final_scores": list(game.scores),
    }


def _share_layout(layouts: list[dict[str, Any]], current: int, laid: list[list[Any]], spinner_tile: int) -> int:
    """Index of a layout whose first ``len(laid)`` tiles are exactly ``laid``: the current one grown by
    the new tile when every tile already down kept its place, else a new layout."""
    if current >= 0:
        known = layouts[current]["tiles"]
        if len(known) == len(laid) - 1:
            place = {t[0]: t for t in laid}
            if all(place.pop(t[0], None) == t for t in known):
                known.extend(place.values())  # the one new tile
                return current
    layouts.append({"spinner": spinner_tile, "tiles": [list(t) for t in laid]})
    return len(layouts) - 1
