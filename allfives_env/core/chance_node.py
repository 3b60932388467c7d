"""The chance node a game with explicit chance waits at, apart from the steps that decide it.

:mod:`allfives_env.core.chance` decides chance nodes and :mod:`allfives_env.core.deal` deals up to them:
both name the node, so it lives here, below both, and neither imports the other for it.
"""

from __future__ import annotations

from typing import NamedTuple

#: The chance node kinds (:mod:`allfives_env.core.chance` says what each one decides).
CHANCE_KINDS = ("deal", "pick", "draw", "opening_draw")
#: ``Game.current`` at a chance node (-1 is a finished game; seats are 0 and up).
CHANCE = -2


class ChanceNode(NamedTuple):
    """The chance node a game with explicit chance waits at: its ``kind`` (:data:`CHANCE_KINDS`), the seat
    that draws (-1 for a deal or a pick), whether that draw is forced (False for a chosen draw), and for a
    pick the number of choices."""

    kind: str
    seat: int = -1
    forced: bool = False
    choices: int = 0
