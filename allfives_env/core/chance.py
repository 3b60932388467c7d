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
from typing import TYPE_CHECKING, Any, Optional, Sequence

from .chance_node import CHANCE, ChanceNode
from .errors import DealError, IllegalActionError, RulesError, SeedError, short_repr
from .values import is_integer

__all__ = ["CHANCE", "ChanceNode", "ExplicitChance", "check_chance", "deal_outcomes", "is_deal_outcome"]

if TYPE_CHECKING:  # the game's parts this mixin works on: named for the type checker only
    from .deal import _HandStart
    from .rules import Rules
    from .tiles import TileSet

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


class ExplicitChance:
    """The explicit-chance half of :class:`~allfives_env.core.game.Game` (a mixin: it works on the game's
    own attributes, ``chance_node`` and the hand being dealt, ``_start``). The game stops at a node with
    :meth:`_await`; :meth:`apply_chance` decides it through the same functions a seeded game calls."""

    chance_node: Optional[ChanceNode]
    # the game's own state this mixin reads and writes (set by Game and Dealing)
    rules: Rules
    tiles: TileSet
    over: bool
    current: int
    legal: tuple[int, ...]
    _start: Optional[_HandStart]
    _stock: list[int]

    if TYPE_CHECKING:  # the game's own steps a chance outcome runs (defined by Game and Dealing)
        def _drew(self, seat: int, forced: bool, tile: int) -> None: ...
        def _deal_tile(self, tile: int) -> None: ...
        def _run_start(self, node: Optional[ChanceNode]) -> None: ...
        def _picked(self, i: int) -> Optional[ChanceNode]: ...
        def _opening_drew(self, tile: int) -> Optional[ChanceNode]: ...
        @property
        def _opening_hand(self) -> _HandStart: ...

    def is_chance_node(self) -> bool:
        """Whether the game waits for a chance outcome (only ever under ``chance="explicit"``)."""
        return self.chance_node is not None

    def chance_outcomes(self) -> list[tuple[int, Fraction]]:
        """The outcomes of the chance node with their exact probabilities (summing to 1), ascending; empty
        when the game is not at a chance node. See the module doc for what the outcomes are."""
        node = self.chance_node
        if node is None:
            return []
        if node.kind == "deal":
            return deal_outcomes(self._opening_hand.dealt, self.rules.hand_size, self.tiles.size)
        if node.kind == "pick":
            return [(i, Fraction(1, node.choices)) for i in range(node.choices)]
        stock = self._stock if node.kind == "draw" else self._opening_hand.stock
        p = Fraction(1, len(stock))
        return [(t, p) for t in sorted(stock)]

    def apply_chance(self, outcome: int) -> None:
        """Decide the chance node with ``outcome`` (one of :meth:`chance_outcomes`) and run on to the next
        node. Raises :class:`IllegalActionError` for anything else (the message lists the outcomes allowed),
        and at a node that is not a chance node, leaving the game as it was."""
        node = self.chance_node
        if node is None:
            where = "the game is over" if self.over else f"seat {self.current} is to act (use step)"
            raise IllegalActionError(f"apply_chance({short_repr(outcome)}): not a chance node: {where}")
        if not is_integer(outcome) or not self._is_outcome(node, int(outcome)):
            allowed = [o for o, _ in self.chance_outcomes()]
            raise IllegalActionError(f"chance outcome {short_repr(outcome)} is not possible at this {node.kind} "
                                     f"node; allowed: {short_repr(allowed)}")
        value = int(outcome)
        self.chance_node = None
        kind = node.kind
        if kind == "draw":
            self._drew(node.seat, node.forced, value)
        elif kind == "deal":
            self._deal_tile(value)
        else:
            self._run_start(self._picked(value) if kind == "pick" else self._opening_drew(value))

    def _is_outcome(self, node: ChanceNode, value: int) -> bool:
        """Whether ``value`` is an outcome of ``node`` (without listing them all)."""
        if node.kind == "pick":
            return 0 <= value < node.choices
        if node.kind == "deal":
            return is_deal_outcome(self._opening_hand.dealt, self.rules.hand_size, self.tiles.size, value)
        return value in (self._stock if node.kind == "draw" else self._opening_hand.stock)

    def deal_so_far(self) -> tuple[int, ...]:
        """The tiles chance has dealt so far in a hand that has not opened yet (at its deal nodes, and
        after them at its leader pick), in deal order, seat 0's first; empty once the hand is open."""
        start = self._start
        return tuple(start.dealt) if start is not None else ()

    def _await(self, node: ChanceNode) -> None:
        """Stop at chance node ``node``: no seat acts until :meth:`apply_chance` decides it."""
        self.chance_node = node
        self.current = CHANCE
        self.legal = ()


def check_chance(chance: Any, seed: Any, deal_seed: Any, deals: Sequence[Any]) -> bool:
    """Whether ``chance`` asks for explicit chance; refuses an unknown mode, and with explicit chance the
    arguments that would decide what chance decides."""
    if chance == "seeded":
        return False
    if chance != "explicit":
        raise RulesError(f"chance={short_repr(chance)} is not allowed: give 'seeded' (the default: a generator "
                         "decides every random event) or 'explicit' (the caller does, through apply_chance)")
    if seed is not None or deal_seed is not None:
        raise SeedError("chance='explicit' leaves every random event to apply_chance: give no seed or deal_seed")
    if deals:
        raise DealError("chance='explicit' deals every hand through apply_chance: give no fixed deals")
    return True
