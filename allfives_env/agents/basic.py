"""The first rungs of the ladder: ``random``, ``greedy`` and ``defensive``.

``greedy`` takes the placement that scores most now; ties go to the heaviest tile (fewer pips left to
lose at the end of the hand), then at random. ``defensive`` scores each placement as its points now
minus the best reply the next player could make with any tile it might hold (every unseen tile, less
the values it is known to lack), with the same tie-breaks. Both draw only when there is nothing to play.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from ..analysis import best_reply_points, points_if, possible_tiles
from .base import Agent, PlayerView


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"

    def act(self, view: PlayerView) -> int:
        legal = view.legal
        return legal[int(self.rng.integers(len(legal)))]


def tied_best(view: PlayerView, evaluate: Callable[[list[int]], Sequence[float]]) -> list[int]:
    """The legal placements ranked first by (value, tile pips), in legal order (``evaluate`` scores a
    list of them at once). Only the draw action when nothing else is legal; a single candidate is
    returned without being evaluated."""
    legal = view.legal
    placements = [a for a in legal if a != view.draw_action] or legal
    if len(placements) == 1:
        return placements
    pips = view.tiles.pips
    scored = [(value, pips[a >> 2], a) for value, a in zip(evaluate(placements), placements)]
    top = max((v, p) for v, p, _ in scored)
    return [a for v, p, a in scored if (v, p) == top]


def choose_best(
    view: PlayerView, evaluate: Callable[[list[int]], Sequence[float]], rng: np.random.Generator
) -> int:
    """The legal placement with the highest value (:func:`tied_best`); ties go to the heaviest tile,
    then to ``rng``. The draw action is taken only when nothing else is legal."""
    best = tied_best(view, evaluate)
    return best[int(rng.integers(len(best)))] if len(best) > 1 else best[0]


class GreedyAgent(Agent):
    """The placement that scores most now."""

    name = "greedy"

    def act(self, view: PlayerView) -> int:
        return choose_best(view, lambda actions: [points_if(view, a) for a in actions], self.rng)


class DefensiveAgent(Agent):
    """Points now minus the next player's best immediate reply (over the tiles it could hold)."""

    name = "defensive"

    def __init__(self, seed: Optional[int] = None, reply_weight: float = 1.0) -> None:
        super().__init__(seed, reply_weight=reply_weight)
        self.reply_weight = float(reply_weight)

    def act(self, view: PlayerView) -> int:
        nxt = (view.seat + 1) % view.num_players
        possible = possible_tiles(view.tiles, view.unseen_mask, view.voids[nxt])
        my_tiles = view.hand_mask
        weight = self.reply_weight

        def value(action: int) -> float:
            now = points_if(view, action)
            if my_tiles == 1 << (action >> 2):
                return now  # this play dominoes: there is no reply
            board = view.board.copy()
            board.place(action >> 2, action & 3)
            return now - weight * best_reply_points(view, board, nxt, possible)

        return choose_best(view, lambda actions: [value(a) for a in actions], self.rng)
