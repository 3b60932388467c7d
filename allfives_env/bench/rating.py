"""Ratings on the bench's fixed scale (see :mod:`.protocol` for the model).

Why a model with ``k``: in ``3p`` the agent plays against a field of two copies of the opponent, and its
even share is 1/3, not 1/2. The chance that a side of rating ``r`` wins against ``k`` opposing sides of rating
``s`` is ``1 / (1 + k * 10 ** ((s - r) / 400))`` (Bradley-Terry strengths ``10 ** (r / 400)``, the winner one of
``1 + k`` sides), which is the Elo curve when ``k = 1``. Draws count half a win.

:func:`fit_ratings` fits every free player of a set of results at once (how the anchors were made);
:func:`agent_rating` fits one agent against fixed anchors, vectorized over bootstrap resamples. Both add
``prior`` virtual games per pairing scored at the even share, so that an agent that wins every game still
gets a finite rating.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from ..evaluation.statistics import ELO_SCALE
from .errors import BenchError

__all__ = ["Pairing", "agent_rating", "expected_score", "fit_ratings"]

#: d(log-odds)/d(rating)
_C = math.log(10.0) / ELO_SCALE
#: Newton steps are clipped to this many rating points, and stop below _TOL.
_MAX_STEP, _TOL, _MAX_ITER = 400.0, 1e-9, 200

#: (player, opponent, score, games, k): what ``player`` scored (wins plus half the draws) in ``games``
#: games against ``k`` opposing sides of ``opponent``
Pairing = tuple[str, str, float, int, int]


def expected_score(r: np.ndarray | float, s: np.ndarray | float, k: int) -> np.ndarray:
    """The chance that a side of rating ``r`` beats ``k`` opposing sides of rating ``s``."""
    return 1.0 / (1.0 + k * np.power(10.0, (np.asarray(s, dtype=float) - np.asarray(r, dtype=float)) / ELO_SCALE))


def agent_rating(scores: np.ndarray, games: np.ndarray, anchors: Sequence[float], k: int,
                 prior: float = 1.0) -> np.ndarray:
    """The maximum-likelihood rating of an agent that scored ``scores[..., o]`` in ``games[..., o]`` games
    against opponents of fixed ratings ``anchors[o]``; leading axes (bootstrap resamples) are fitted at once."""
    s = np.asarray(scores, dtype=float) + prior / (1.0 + k)
    n = np.asarray(games, dtype=float) + prior
    a = np.asarray(anchors, dtype=float)
    r = np.zeros(s.shape[:-1])
    for _ in range(_MAX_ITER):
        p = expected_score(r[..., None], a, k)
        gradient = _C * (s - n * p).sum(axis=-1)
        curvature = _C * _C * (n * p * (1.0 - p)).sum(axis=-1)
        step = np.clip(gradient / curvature, -_MAX_STEP, _MAX_STEP)
        r = r + step
        if np.max(np.abs(step), initial=0.0) < _TOL:
            break
    return r


def fit_ratings(pairings: Sequence[Pairing], fixed: Mapping[str, float], prior: float = 1.0) -> dict[str, float]:
    """Every player's rating from ``pairings``, the players in ``fixed`` held at their ratings (at least one
    must be: the scale has no origin otherwise). Newton's method on the concave log-likelihood."""
    if not fixed:
        raise BenchError("fit_ratings needs at least one player of fixed rating (the scale's origin)")
    players = sorted({p for pairing in pairings for p in pairing[:2]} | set(fixed))
    free = [p for p in players if p not in fixed]
    index = {p: i for i, p in enumerate(free)}
    ratings = {p: float(fixed.get(p, 0.0)) for p in players}
    for _ in range(_MAX_ITER):
        gradient = np.zeros(len(free))
        hessian = np.zeros((len(free), len(free)))
        for player, opponent, score, games, k in pairings:
            p = float(expected_score(ratings[player], ratings[opponent], k))
            n = games + prior
            residual = _C * (score + prior / (1.0 + k) - n * p)
            weight = _C * _C * n * p * (1.0 - p)
            for who, sign in ((player, 1.0), (opponent, -1.0)):
                if who in index:
                    gradient[index[who]] += sign * residual
            for a in (player, opponent):
                for b in (player, opponent):
                    if a in index and b in index:
                        hessian[index[a], index[b]] += weight * (1.0 if a == b else -1.0)
        if not free:
            break
        step = np.clip(np.linalg.solve(hessian, gradient), -_MAX_STEP, _MAX_STEP)
        for name, i in index.items():
            ratings[name] += float(step[i])
        if np.max(np.abs(step)) < _TOL:
            break
    return ratings
