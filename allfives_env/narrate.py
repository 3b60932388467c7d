"""Game events as lines of text for people: what the demo and the terminal game print as play goes on.

:class:`Narrator` steps a game and prints every new event (plays with their count and points, draws,
passes, hand starts, settlements); when a hand ends it also prints the table as it stood at that moment,
before the next deal clears it. ``viewer`` hides the tiles other seats draw (a player at the table only
learns that they drew).
"""

from __future__ import annotations

from typing import Any, Optional, TextIO

from .core.events import SLOT_NAMES, Draw, GameOver, HandStart, Pass, Play, Settlement
from .core.game import Game
from .render import layout_lines

__all__ = ["Narrator", "describe_event"]


def describe_event(event: Any, game: Game, names: list[str], viewer: Optional[int] = None) -> Optional[str]:
    """One line for ``event`` (None for the game-over marker, which the result line covers)."""
    tiles = game.tiles
    if type(event) is Play:
        score = f", scores {event.points}" if event.points else ""
        play = f"{tiles.name(event.tile)}@{SLOT_NAMES[event.slot]}"
        return f"{names[event.seat]} plays {play} (count {event.count}{score})"
    if type(event) is Draw:
        hidden = viewer is not None and event.seat != viewer
        return f"{names[event.seat]} draws {'a tile' if hidden else tiles.name(event.tile)}"
    if type(event) is Pass:
        return f"{names[event.seat]} passes"
    if type(event) is HandStart:
        return f"--- hand {event.hand}: {names[event.leader]} leads; scores {list(event.scores)}"
    if type(event) is Settlement:
        return (f"hand {event.hand} ends ({event.result}): pips {list(event.pips)}, changes {list(event.deltas)}, "
                f"scores {list(event.scores)}")
    if type(event) is GameOver:
        return None
    return str(event)


class Narrator:
    """Prints a game's events to ``out`` as they happen (``quiet``: prints nothing, the demo's --quiet)."""

    def __init__(self, game: Game, names: list[str], out: TextIO, viewer: Optional[int] = None,
                 quiet: bool = False) -> None:
        self.game, self.names, self.out, self.viewer, self.quiet = game, names, out, viewer, quiet
        self.printed = 0

    def flush(self) -> None:
        """Print the events not printed yet."""
        if not self.quiet:
            for event in self.game.events[self.printed:]:
                line = describe_event(event, self.game, self.names, self.viewer)
                if line:
                    print(line, file=self.out)
        self.printed = len(self.game.events)

    def step(self, action: int) -> None:
        """Play ``action``, printing what follows; at a hand's end, the table as it stood then."""
        game = self.game
        self.flush()
        hand = game.hand_number
        probe = None if self.quiet else game.clone()
        game.step(action)
        if probe is not None and (game.hand_number != hand or game.over):
            # the real game has already dealt the next hand: replay the move on a copy that stops at the
            # hand's end, print up to its settlement, then the table as it stood
            probe.stop_after_hand = True
            probe.step(action)
            for event in probe.events[self.printed:]:
                line = describe_event(event, probe, self.names, self.viewer)
                if line:
                    print(line, file=self.out)
            self.printed += sum(1 for e in probe.events[self.printed:] if type(e) is not GameOver)
            table = "\n".join("  " + line for line in layout_lines(probe))
            print("Table at the end of the hand:\n" + table, file=self.out)
        self.flush()
