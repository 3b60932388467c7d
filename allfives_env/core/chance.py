"""Chance nodes of a game with explicit chance (``Game(rules, chance="explicit")``).

A seeded game draws its random events from its generator inside ``step``; a game with explicit chance
stops at each of them instead, so that a driver (OpenSpiel, an exact enumeration, a test) decides them
and knows their probabilities. The chance nodes, and their outcomes:

* ``"deal"``: one node per dealt tile, seat 0's tiles first, then seat 1's, ... Each seat's tiles come in
  ascending id order, so a hand is dealt by exactly one sequence of outcomes, and each next tile has its
  exact conditional probability under a uniformly random deal (:func:`deal_outcomes`). The boneyard is
  what is left, in no order: its order is decided draw by draw.
* ``"pick"``: a uniform choice among ``k`` seats (a random leader, a random opening drawer, a tie broken at
  random); outcome ``i`` in ``0..k-1`` is the ``i``-th of them, as a seeded game's ``integers(k)`` gives it.
* ``"draw"`` and ``"opening_draw"``: a tile drawn from the boneyard (in play, or by
  ``no_double_fallback="draw_until_double"`` before the lead), uniform over the boneyard's tiles.

Probabilities are exact :class:`fractions.Fraction` values, so they sum to exactly 1 at every node.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import NamedTuple, Sequence

#: The chance node kinds (see the module doc).
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


def _tiles_above(dealt: Sequence[int], hand_size: int, tile_count: int) -> tuple[list[int], int]:
    """The tiles the current seat's next dealt tile may be (above its last one, not dealt yet) and how many
    tiles that seat still gets."""
    in_seat = len(dealt) % hand_size
    low = dealt[-1] if in_seat else -1
    chosen = set(dealt)
    return [t for t in range(low + 1, tile_count) if t not in chosen], hand_size - in_seat


def deal_outcomes(dealt: Sequence[int], hand_size: int, tile_count: int) -> list[tuple[int, Fraction]]:
    """The next dealt tile after ``dealt`` (the deal so far, in deal order) with its probability, ascending.

    A seat's ``k`` remaining tiles are a uniform ``k``-subset of the tiles above its last one; the lowest of
    them is ``above[i]`` with probability ``C(len(above) - i - 1, k - 1) / C(len(above), k)``. Tiles that
    would leave too few above them for the rest of the hand are left out (probability 0).
    """
    above, k = _tiles_above(dealt, hand_size, tile_count)
    total = comb(len(above), k)
    out = []
    for i, tile in enumerate(above):
        ways = comb(len(above) - i - 1, k - 1)
        if not ways:
            break
        out.append((tile, Fraction(ways, total)))
    return out


def is_deal_outcome(dealt: Sequence[int], hand_size: int, tile_count: int, tile: int) -> bool:
    """Whether ``tile`` is among :func:`deal_outcomes` (without building the list)."""
    in_seat = len(dealt) % hand_size
    if not 0 <= tile < tile_count or tile in dealt or (in_seat and tile <= dealt[-1]):
        return False
    above = sum(1 for t in range(tile + 1, tile_count) if t not in dealt)
    return above >= hand_size - in_seat - 1
