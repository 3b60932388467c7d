"""Text rendering of a position: the spinner cross, the open ends, the count, scores and hand sizes.

Only the viewer's own tiles are shown, so a rendering can be printed to a player without leaking
hidden information. Tiles are drawn ``[a|b]`` with the pip that touches the previous tile towards the
spinner (or the lead); the spinner is drawn ``<v|v>``.

Example (lead 6-6, then 6-3@E, 6-2@W, 6-5@N)::

                 [5|6]
    [2|6] <6|6> [6|3]
"""

from __future__ import annotations

from typing import Optional

from .core.actions import move_name
from .core.board import E, N, S, W
from .core.events import SLOT_NAMES
from .core.game import Game


def _tile(a: int, b: int) -> str:
    return f"[{a}|{b}]"


def layout_lines(game: Game) -> list[str]:
    """The table as lines of text: N arm above the spinner, S arm below, W and E on the centre line."""
    board = game.board
    if board.size == 0:
        return ["(empty table)"]
    if board.spinner < 0:
        parts = [_tile(outer, inner) for _, inner, outer in reversed(board.arms[W])]
        if board.lead is not None:
            _, w, e = board.lead
            parts.append(_tile(w, e))
        parts.extend(_tile(inner, outer) for _, inner, outer in board.arms[E])
        return [" ".join(parts)]
    v = board.spinner
    west = " ".join(_tile(outer, inner) for _, inner, outer in reversed(board.arms[W]))
    centre_prefix = (west + " ") if west else ""
    spinner = f"<{v}|{v}>"
    east = " ".join(_tile(inner, outer) for _, inner, outer in board.arms[E])
    column = len(centre_prefix)
    pad = " " * column
    lines = [pad + _tile(outer, inner) for _, inner, outer in reversed(board.arms[N])]
    lines.append(centre_prefix + spinner + ((" " + east) if east else ""))
    lines.extend(pad + _tile(inner, outer) for _, inner, outer in board.arms[S])
    return lines


def render_text(game: Game, viewer: Optional[int] = None, agent_names: Optional[list[str]] = None) -> str:
    """A full text view of the game for ``viewer`` (default: the seat to act)."""
    r = game.rules
    names = agent_names or [f"player_{s}" for s in range(game.num_players)]
    if viewer is None:
        viewer = game.current if game.current >= 0 else 0
    board = game.board
    out = []
    status = "game over" if game.over else f"{names[game.current]} to act"
    out.append(f"All Fives - hand {game.hand_number} - {status}")
    out.extend("  " + line for line in layout_lines(game))
    if board.size:
        ends = []
        for slot in range(4):
            if slot in board.open_slots:
                note = "" if board.counted(slot) else " (not counted)"
                dbl = " double" if board.arm_len[slot] and board.end_double[slot] else ""
                ends.append(f"{SLOT_NAMES[slot]}={board.ends[slot]}{dbl}{note}")
        extra = f" + spinner {2 * board.spinner}" if board.spinner_counts() else ""
        count = board.count()
        scores = " scores" if count and count % 5 == 0 else ""
        out.append(f"Open ends: {', '.join(ends)}{extra}; count {count}{scores}")
    else:
        out.append("Open ends: none yet (lead any tile)")
    if r.partnership:
        score_text = f"team 0+2: {game.scores[0]}, team 1+3: {game.scores[1]}"
    else:
        score_text = ", ".join(f"{names[s]}: {game.scores[s]}" for s in range(game.num_sides))
    out.append(f"Scores (target {r.target}): {score_text}")
    out.append(
        "Hands: " + ", ".join(f"{names[s]} {size}" for s, size in enumerate(game.hand_sizes()))
        + f"; boneyard {game.boneyard_size}"
    )
    hand = " ".join(_tile(game.tiles.high[t], game.tiles.low[t]) for t in game.hand(viewer))
    out.append(f"{names[viewer]}'s hand: {hand or '(empty)'}")
    if not game.over and viewer == game.current:
        lead = game.board.size == 0  # a lead has no end yet: "3-0 lead", not "3-0@W"
        out.append("Legal: " + " ".join(move_name(a, game.tiles, lead) for a in game.legal))
    if game.over:
        if game.winner is None:
            out.append("Result: draw" + (" (max_hands reached)" if game.truncated else ""))
        elif r.partnership:
            out.append(f"Result: team {game.winner}+{game.winner + 2} wins")
        else:
            out.append(f"Result: {names[game.winner]} wins" + (" (max_hands reached)" if game.truncated else ""))
    return "\n".join(out)
