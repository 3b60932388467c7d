"""How a stretch of play came out for each side: the reward rule, and the reward and episode modes it serves.

:func:`side_rewards` is the one statement of the rule. The AEC env, the single-seat env, the OpenSpiel game
and the batched training env all call it, on one game (a list of gains) or on many at once (an array whose
last axis is the side); the compiled search (``batch/search.py: rollout_value``) keeps the same formula in
numba, and ``tests/test_reward_rule.py`` proves the two equal on random inputs.

* ``"points"``: a side's points gained minus the mean gained by the other sides, over a scale (the target,
  or OpenSpiel's ``point_scale``). The shares of all sides sum to zero: a point scored is a point the others
  lost, whatever the number of sides.
* ``"win"``: when the episode has ended, +1 to the winning side and -1 to every other (or the others share
  the -1, for OpenSpiel's zero-sum utilities); 0 all round when nobody won. A one-hand episode
  (``episode="hand"``) that ends without a game winner is won by the side with the unique top gain of the
  hand, and drawn on a tie.

Which gains a caller passes (since the last step, since the learner's last action, since the episode began)
is the caller's credit rule; the rule here only turns gains into rewards.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

#: What a reward is paid for: the game's result, or the points of every step.
REWARD_MODES = ("win", "points")
#: What an episode is: a whole game, or one hand (the game stops after it).
EPISODE_MODES = ("game", "hand")


def side_rewards(mode: str, gains: Any, ended: Any = True, winner: Any = -1, *, hand: bool = False,
                 scale: float = 1.0, inverse: bool = False, split_loss: bool = False) -> Any:
    """Every side's reward under reward ``mode``: for one game given as a list (or tuple) of gains, a list
    of floats; for an array of gains (last axis: the sides; any leading axes are games), a float64 array
    of its shape.

    ``ended`` and ``winner`` (one per game; winner -1: none) matter to ``"win"`` only, and ``gains`` there
    are the episode's, for the one-hand winner (``hand``). ``"points"`` divides each share by ``scale``,
    or with ``inverse`` multiplies it by ``1.0 / scale``: the AEC env's rounding, kept because the two
    differ in the last bit for about one share in five. ``split_loss``: the losers share -1 (zero-sum),
    else each gets -1.
    """
    one = isinstance(gains, (list, tuple))
    if mode == "points":
        if one:  # plain Python numbers: no numpy round trip on the AEC env's per-step path
            total = sum(gains)
            return [_share(mine, total, len(gains), scale, inverse) for mine in gains]
        g = np.asarray(gains, dtype=np.int64)
        return _share(g, g.sum(axis=-1, keepdims=True), g.shape[-1], scale, inverse)
    g = np.asarray(gains, dtype=np.int64)
    sides = g.shape[-1]
    won_by = np.asarray(winner, dtype=np.int64)
    if hand:
        unique = (g == g.max(axis=-1, keepdims=True)).sum(axis=-1) == 1
        won_by = np.where((won_by < 0) & unique, g.argmax(axis=-1), won_by)
    decided = np.asarray(ended, dtype=bool) & (won_by >= 0)
    lose = -1.0 / (sides - 1) if split_loss else -1.0
    result = np.where(decided[..., None], np.where(np.arange(sides) == won_by[..., None], 1.0, lose), 0.0)
    return result.tolist() if one else result


def _share(mine: Any, total: Any, sides: int, scale: float, inverse: bool) -> Any:
    """The ``"points"`` rule for Python numbers and numpy arrays alike: a side's gain minus the mean gain
    of the others, scaled."""
    share = mine - (total - mine) / (sides - 1)
    return share * (1.0 / scale) if inverse else share / scale


def zero_sum_share(gains: Sequence[int], side: int) -> float:
    """``side``'s ``"points"`` share (unscaled) of one stretch: its gain minus the mean gain of the other
    sides. The one-side form of :func:`side_rewards` for the Python search's rollouts."""
    gains = list(gains)
    return _share(gains[side], sum(gains), len(gains), 1.0, False)
