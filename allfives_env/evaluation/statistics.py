"""Statistics: Wilson and Student-t intervals, the t distribution, Bradley-Terry ratings (no scipy needed)."""

from __future__ import annotations

import math
from typing import Any, Sequence, Union

import numpy as np

from ..core.errors import short_repr
from .errors import EvaluationError

Z95 = 1.959963984540054  # the standard normal 97.5% quantile
#: Elo points per factor of 10 in Bradley-Terry strength: the chess convention, which players know.
ELO_SCALE = 400.0

# The incomplete beta function's continued fraction (Numerical Recipes' betacf): divisors are kept off
# zero by _LENTZ_TINY, and the fraction stops when a step changes it by less than _BETACF_EPS (about the
# float64 resolution), or after _BETACF_MAX_TERMS - 1 steps so that no input can loop for long.
_LENTZ_TINY = 1e-300
_BETACF_EPS = 1e-15
_BETACF_MAX_TERMS = 500
# t_quantile bisects until the bracket is this small relative to the quantile (or after so many halvings:
# 200 would take any bracket below float64 resolution).
_BISECTION_RTOL = 1e-12
_BISECTION_STEPS = 200


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion ``successes / n`` (``successes`` may be fractional,
    e.g. wins plus half the draws).

    Wilson rather than the normal ("Wald") interval because win rates near 0 or 1 are common between
    agents of different strength, and there Wald's interval collapses or leaves [0, 1].
    """
    if n <= 0:
        return (float("nan"), float("nan"))
    if not 0 <= successes <= n:
        raise ValueError(f"successes={successes} must lie between 0 and n={n}")
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p) / n + z2 / (4 * n * n), 0.0)) / denom
    lo = 0.0 if successes == 0 else max(0.0, centre - half)  # exactly 0 / 1 at the edges, without rounding
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return (lo, hi)


def _lentz_step(aa: float, c: float, d: float) -> tuple[float, float]:
    """One step of the modified Lentz method: the new ``(c, d)`` for the partial numerator ``aa``."""
    d = 1.0 + aa * d
    d = 1.0 / (d if abs(d) > _LENTZ_TINY else _LENTZ_TINY)
    c = 1.0 + aa / c
    c = c if abs(c) > _LENTZ_TINY else _LENTZ_TINY
    return c, d


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _LENTZ_TINY else _LENTZ_TINY)
    h = d
    for m in range(1, _BETACF_MAX_TERMS):
        m2 = 2 * m
        c, d = _lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), c, d)
        h *= d * c
        c, d = _lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), c, d)
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _BETACF_EPS:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (no scipy needed)."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom, by bisection on the CDF.

    Needed because a mean over a few dozen duplicate sets deserves a t interval, and the project does
    not depend on scipy.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p={p} must lie strictly between 0 and 1")
    if df <= 0:
        raise ValueError(f"df={df} must be positive")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while student_t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if student_t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < _BISECTION_RTOL * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """The mean of ``values`` and its Student-t confidence interval: ``(mean, low, high)``.

    With fewer than two values the interval is undefined and given as NaN.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (float("nan"), float("nan"), float("nan"))
    mean = float(x.mean())
    if x.size < 2:
        return (mean, float("nan"), float("nan"))
    sem = float(x.std(ddof=1)) / math.sqrt(x.size)
    half = t_quantile(0.5 + confidence / 2.0, x.size - 1) * sem
    return (mean, mean - half, mean + half)


def _strongly_connected(beats: np.ndarray) -> bool:
    """True when every agent can be reached from every other along "has scored against" edges: the
    condition (Zermelo, Ford) under which the Bradley-Terry maximum-likelihood ratings are finite."""
    n = beats.shape[0]
    for adjacency in (beats > 0, (beats > 0).T):
        seen = {0}
        frontier = [0]
        while frontier:
            i = frontier.pop()
            for j in np.flatnonzero(adjacency[i]).tolist():
                if j not in seen:
                    seen.add(j)
                    frontier.append(j)
        if len(seen) < n:
            return False
    return True


def bt_log10_strengths(wins: np.ndarray, tol: float = 1e-10, max_iter: int = 100_000) -> np.ndarray:
    """Bradley-Terry strengths by Hunter's MM algorithm, batched over leading axes.

    ``wins[..., i, j]`` is what i scored against j. Returns log10 strengths, mean 0 per batch element.
    MM rather than Newton: every step raises the likelihood, so it cannot diverge on lopsided data, and
    the batch form fits a thousand bootstrap samples at once.
    """
    w = np.asarray(wins, dtype=float)
    n = w.shape[-1]
    total = w.sum(axis=-1)
    games = w + np.swapaxes(w, -1, -2)
    p = np.ones(w.shape[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(max_iter):
            denom = (games / (p[..., :, None] + p[..., None, :])).sum(axis=-1)
            new = total / denom
            log_new = np.log(new)
            log_new -= log_new.mean(axis=-1, keepdims=True)
            new = np.exp(log_new)
            change = np.nanmax(np.abs(log_new - np.log(p))) if n else 0.0
            p = new
            if not change > tol:  # also stops on all-NaN
                break
        return np.log10(p)


def bradley_terry(
    wins: Union[np.ndarray, Sequence[Sequence[float]]], prior: float = 0.0, anchor: int = 0
) -> np.ndarray:
    """Bradley-Terry ratings on the Elo scale (400·log10 of the strength), the ``anchor`` agent at 0.

    ``wins[i][j]`` is what agent i scored against agent j (wins, plus half of any draws). ``prior``
    adds that many virtual games between every pair, split evenly: with ``prior=0`` this is the plain
    maximum-likelihood fit, which exists only when no group of agents won or drew nothing against the
    rest (otherwise an :class:`EvaluationError` says so). A rating difference d means the first agent
    is expected to score 1 / (1 + 10^(-d/400)) against the second, as with Elo.
    """
    w = np.array(wins, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] < 1:
        raise EvaluationError(f"wins must be a square matrix, got shape {w.shape}")
    if (w < 0).any():
        raise EvaluationError("wins must be non-negative")
    if not np.isfinite(w).all():
        raise EvaluationError("wins must be finite numbers")
    n = w.shape[0]
    if not 0 <= anchor < n:
        raise EvaluationError(f"anchor={anchor} is not an agent index 0..{n - 1}")
    np.fill_diagonal(w, 0.0)
    prior = check_prior(prior)
    if prior > 0:
        w = w + (prior / 2.0) * (1.0 - np.eye(n))
    elif n > 1 and not _strongly_connected(w):
        raise EvaluationError(
            "the Bradley-Terry ratings are infinite for these results: some agents never scored against "
            "the others (give prior > 0, e.g. 1 virtual drawn game per pair)"
        )
    if n == 1:
        return np.zeros(1)
    log10_p = bt_log10_strengths(w)
    return ELO_SCALE * (log10_p - log10_p[anchor])


def check_prior(prior: Any) -> float:
    """The Bradley-Terry prior as a float: a finite number >= 0 (0 = the plain maximum-likelihood fit)."""
    value = math.nan
    if not isinstance(prior, bool) and isinstance(prior, (int, float, np.integer, np.floating)):
        try:
            value = float(prior)
        except OverflowError:  # an int past float range
            pass
    if not (math.isfinite(value) and value >= 0):
        raise EvaluationError(f"prior={short_repr(prior)} is not allowed: give a finite number >= 0 (virtual drawn "
                              "games per pair; 0 = none, the plain maximum-likelihood fit)")
    return value
