"""How a stretch of play came out for each side: the zero-sum share of points, and who won a hand.

Rewards (both environments) and the search agent's rollout values are built from these, so that a
point means the same to a learner, to the env and to the search.
"""

from __future__ import annotations

from typing import Optional, Sequence


def zero_sum_share(gains: Sequence[int], side: int) -> float:
    """``side``'s gain minus the mean gain of the other sides: what it won relative to the table. The
    shares of all sides sum to zero, so a point scored is a point the others lost."""
    mine = gains[side]
    return mine - (sum(gains) - mine) / (len(gains) - 1)


def top_gainer(gains: Sequence[int]) -> Optional[int]:
    """The side with the unique highest gain (the winner of a single-hand episode), or None on a tie."""
    best = max(gains)
    return gains.index(best) if list(gains).count(best) == 1 else None
