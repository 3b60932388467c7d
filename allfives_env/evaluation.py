"""Evaluation: duplicate-deal match-ups, round-robin tournaments with ratings, statistics, saved results.

Why duplicate deals: in All Fives the deal decides much of a game, so two agents compared on independent
deals need many thousands of games before skill shows through the luck. A *duplicate set* replays the
same deals (hands, boneyard order, leader seat) with the agents in every seat order of the match-up, so
each agent plays the good and the bad cards in turn and the deal luck cancels inside the set:

========================  ===================================================================
players                   one duplicate set (agent indices by seat)
========================  ===================================================================
2                         ``(A, B)``, ``(B, A)``
4, partnership            ``(A, B, A, B)``, ``(B, A, B, A)``: the teams swap cards
3 / 4 cut-throat, k=n     every permutation of the n agents (6 or 24 games)
3 / 4 cut-throat, k=2     "A vs a field of B": every distinct seat order of ``A, B, B(, B)``;
                          ``balanced=True`` adds "B vs a field of A" (the tournament's choice,
                          so that a pair's result does not depend on who was the hero)
========================  ===================================================================

Every game of a set is played with :func:`allfives_env.match.play_game` with the same game seed and
deal seed: the game deals hand k from its own generator seeded ``(deal_seed, k)``, so the deals do not
depend on how the earlier hands went. Seeds come from ``numpy.random.SeedSequence(seed)`` spawn keys
(set index; set index and game index for the agents), never from global state, and results are put in
order of set index, so the numbers depend on ``seed`` only, never on ``processes``. (Think times are
measured, so they vary from run to run.) Set i uses the same deals in every match-up of a tournament,
which makes the pairs' results comparable on common deals.

Workers rebuild agents from their spec strings (:func:`allfives_env.agents.make_agent`), one instance
per seat, and call ``reset(seed)`` before every game: an agent's ``reset`` must forget everything that
could change its play, or its results would depend on which games a worker happened to run before.

Public API: :func:`evaluate` (one match-up -> :class:`MatchResult`), :func:`tournament` (every pair ->
:class:`TournamentResult`), :func:`duplicate_orders`, :func:`set_seeds`, :func:`agent_seeds`, the
statistics :func:`wilson_interval`, :func:`mean_interval`, :func:`t_quantile`, :func:`bradley_terry`,
and :func:`save_json`, :func:`save_csv`, :func:`load_result`, :func:`compare` with the text formatters.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import multiprocessing
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, TextIO, Union

import numpy as np

from .agents import Agent, make_agent, parse_agent_spec
from .agents.registry import check_agent_rules
from .core.errors import AllFivesError
from .core.rules import Rules
from .match import play_game

RESULT_FORMAT = "allfives-evaluation"
#: The most games one run plays (``games``, ``games_per_pair``): every game's record is kept in memory.
MAX_GAMES = 10_000_000
#: The most bootstrap resamples of a tournament's rating intervals (they are held in memory at once).
MAX_BOOTSTRAP = 100_000
RESULT_VERSION = 1
Z95 = 1.959963984540054  # the standard normal 97.5% quantile

RulesLike = Union[Rules, Mapping[str, Any], None]
AgentLike = Union[str, Agent]

__all__ = [
    "Comparison", "ComparisonRow", "EvaluationError", "GameRecord", "MatchResult", "TournamentResult",
    "agent_seeds", "bradley_terry", "compare", "duplicate_orders", "evaluate", "format_comparison",
    "format_match", "format_tournament", "load_result", "mean_interval", "resolve_rules", "save_csv",
    "save_json", "save_sample_games", "set_seeds", "student_t_cdf", "summarize_match", "t_quantile", "tournament",
    "wilson_interval",
]


class EvaluationError(AllFivesError, ValueError):
    """A match-up or tournament that cannot be run as asked, or a file that is not a saved result."""


# ====================================================================== statistics
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


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
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
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if student_t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
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


def _bt_log10_strengths(wins: np.ndarray, tol: float = 1e-10, max_iter: int = 100_000) -> np.ndarray:
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
    prior = _check_prior(prior)
    if prior > 0:
        w = w + (prior / 2.0) * (1.0 - np.eye(n))
    elif n > 1 and not _strongly_connected(w):
        raise EvaluationError(
            "the Bradley-Terry ratings are infinite for these results: some agents never scored against "
            "the others (give prior > 0, e.g. 1 virtual drawn game per pair)"
        )
    if n == 1:
        return np.zeros(1)
    log10_p = _bt_log10_strengths(w)
    return 400.0 * (log10_p - log10_p[anchor])


def _check_prior(prior: Any) -> float:
    """The Bradley-Terry prior as a float: a finite number >= 0 (0 = the plain maximum-likelihood fit)."""
    if isinstance(prior, bool) or not isinstance(prior, (int, float, np.integer, np.floating)) \
            or not math.isfinite(prior) or prior < 0:
        raise EvaluationError(f"prior={prior!r} is not allowed: give a finite number >= 0 (virtual drawn games per "
                              "pair; 0 = none, the plain maximum-likelihood fit)")
    return float(prior)


# ====================================================================== seeds and seat orders
def resolve_rules(rules: RulesLike = None, num_players: Optional[int] = None) -> Rules:
    """A :class:`Rules` from a Rules object, an options mapping (``{"hand_end": "winner_takes"}``) or
    None (the defaults), with ``num_players`` applied when given."""
    if isinstance(rules, Rules):
        if num_players is not None and num_players != rules.num_players:
            raise EvaluationError(
                f"num_players={num_players} contradicts the given rules ({rules.num_players} players): "
                "give one or the other"
            )
        return rules
    if rules is not None and not isinstance(rules, Mapping):
        raise EvaluationError(f"rules must be a Rules object or a mapping of options, got {type(rules).__name__}")
    overrides = {} if num_players is None else {"num_players": num_players}
    return Rules.from_options(dict(rules or {}), **overrides)


def _distinct_orders(multiset: Sequence[int]) -> list[tuple[int, ...]]:
    return sorted(set(itertools.permutations(multiset)))


def duplicate_orders(rules: Rules, num_agents: int, balanced: bool = False) -> list[tuple[int, ...]]:
    """The seat orders of one duplicate set: each a tuple giving, per seat, the index of the agent there.

    ``num_agents`` is one per side, or 2 for "hero vs a field" with 3 players or 4 cut-throat (the
    first agent in one seat, the second in all others); ``balanced`` then adds the orders with the roles
    swapped. See the module docstring for the table.
    """
    n = rules.num_players
    if rules.partnership:
        if num_agents != 2:
            raise EvaluationError(
                f"a partnership match-up takes 2 agents (one per team, seats 0+2 and 1+3), got {num_agents}"
            )
        return [(0, 1, 0, 1), (1, 0, 1, 0)]
    if num_agents == n:
        return list(itertools.permutations(range(n)))
    if num_agents == 2:
        orders = _distinct_orders((0,) + (1,) * (n - 1))
        if balanced:
            orders += _distinct_orders((1,) + (0,) * (n - 1))
        return orders
    if n == 2:
        raise EvaluationError(f"a 2-player match-up takes 2 agents, got {num_agents}")
    raise EvaluationError(
        f"a {n}-player cut-throat match-up takes {n} agents (one per player) or 2 (the first against a "
        f"field of the second), got {num_agents}"
    )


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise EvaluationError(f"seed={seed!r} must be a non-negative integer")
    return int(seed)


def set_seeds(seed: int, set_index: int) -> tuple[int, int]:
    """``(game_seed, deal_seed)`` shared by every game of duplicate set ``set_index``.

    Child ``set_index`` of ``SeedSequence(seed)`` (the spawn key), so any set's seeds can be computed
    on its own, in any worker, in any order.
    """
    state = np.random.SeedSequence(_check_seed(seed), spawn_key=(int(set_index),)).generate_state(2)
    return int(state[0]), int(state[1])


def agent_seeds(seed: int, set_index: int, game_index: int, num_players: int) -> list[int]:
    """The per-seat agent seeds of game ``game_index`` of duplicate set ``set_index``."""
    ss = np.random.SeedSequence(_check_seed(seed), spawn_key=(int(set_index), int(game_index)))
    return [int(s) for s in ss.generate_state(num_players)]


# ====================================================================== results
def _nan_to_none(x: float) -> Optional[float]:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _none_to_nan(x: Optional[float]) -> float:
    return float("nan") if x is None else float(x)


def _interval_to_list(ci: tuple[float, float]) -> list[Optional[float]]:
    return [_nan_to_none(ci[0]), _nan_to_none(ci[1])]


def _interval_from_list(ci: Sequence[Optional[float]]) -> tuple[float, float]:
    if len(ci) != 2:
        raise ValueError(f"an interval must be [low, high], got {ci!r}")
    return (_none_to_nan(ci[0]), _none_to_nan(ci[1]))


@dataclass
class GameRecord:
    """One game of a duplicate set: who sat where, who won, what each side gained, and the effort."""

    set_index: int
    game_index: int
    seats: tuple[int, ...]  # agent index of the match-up in each seat
    winner: Optional[int]  # winning side, None for a draw
    gains: list[int]  # per side
    hands: int
    truncated: bool
    decisions: list[int]  # per seat
    think_seconds: list[float]  # per seat

    def to_dict(self) -> dict[str, Any]:
        return {
            "set": self.set_index, "game": self.game_index, "seats": list(self.seats), "winner": self.winner,
            "gains": list(self.gains), "hands": self.hands, "truncated": self.truncated,
            "decisions": list(self.decisions), "think": [round(t, 7) for t in self.think_seconds],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "GameRecord":
        return cls(int(d["set"]), int(d["game"]), tuple(d["seats"]), d["winner"], list(d["gains"]), int(d["hands"]),
                   bool(d["truncated"]), list(d["decisions"]), [float(t) for t in d["think"]])


@dataclass
class MatchResult:
    """The summary of one match-up, from the point of view of the first agent (``agents[0]``).

    ``win_rate`` counts draws half, with a Wilson 95% interval over games. ``points_per_hand`` is the
    first agent's sides' mean gain minus the other sides' mean gain, per hand played, computed per
    duplicate set (the sample unit, since games inside a set are not independent) and averaged, with a
    Student-t 95% interval over sets. ``even_win_rate`` is what the first agent would score if all were
    equally strong (1/3 as the hero of a 3-player field). ``think_ms[k]`` is agent k's mean think time
    per decision, in milliseconds.
    """

    agents: list[str]
    rules: dict[str, Any]
    seed: int
    balanced: bool
    orders: list[tuple[int, ...]]
    sets: int
    games: int
    wins: int
    losses: int
    draws: int
    truncated: int
    win_rate: float
    win_rate_ci: tuple[float, float]
    even_win_rate: float
    points_per_hand: float
    points_per_hand_ci: tuple[float, float]
    mean_hands: float
    think_ms: list[float]
    decisions: list[int]
    records: list[GameRecord] = field(default_factory=list, repr=False)

    @property
    def label(self) -> str:
        """``"greedy vs random"``."""
        return " vs ".join(self.agents)

    def to_dict(self, include_games: bool = True) -> dict[str, Any]:
        """A JSON-ready dict (NaN written as null); ``include_games`` keeps the per-game records."""
        d: dict[str, Any] = {
            "agents": list(self.agents), "rules": dict(self.rules), "seed": self.seed, "balanced": self.balanced,
            "orders": [list(o) for o in self.orders], "sets": self.sets, "games": self.games,
            "wins": self.wins, "losses": self.losses, "draws": self.draws, "truncated": self.truncated,
            "win_rate": _nan_to_none(self.win_rate), "win_rate_ci": _interval_to_list(self.win_rate_ci),
            "even_win_rate": self.even_win_rate,
            "points_per_hand": _nan_to_none(self.points_per_hand),
            "points_per_hand_ci": _interval_to_list(self.points_per_hand_ci),
            "mean_hands": _nan_to_none(self.mean_hands),
            "think_ms": [_nan_to_none(t) for t in self.think_ms], "decisions": list(self.decisions),
        }
        if include_games:
            d["records"] = [r.to_dict() for r in self.records]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "MatchResult":
        return cls(
            agents=list(d["agents"]), rules=dict(d["rules"]), seed=int(d["seed"]), balanced=bool(d["balanced"]),
            orders=[tuple(o) for o in d["orders"]], sets=int(d["sets"]), games=int(d["games"]),
            wins=int(d["wins"]), losses=int(d["losses"]), draws=int(d["draws"]), truncated=int(d["truncated"]),
            win_rate=_none_to_nan(d["win_rate"]), win_rate_ci=_interval_from_list(d["win_rate_ci"]),
            even_win_rate=float(d["even_win_rate"]), points_per_hand=_none_to_nan(d["points_per_hand"]),
            points_per_hand_ci=_interval_from_list(d["points_per_hand_ci"]), mean_hands=_none_to_nan(d["mean_hands"]),
            think_ms=[_none_to_nan(t) for t in d["think_ms"]], decisions=[int(x) for x in d["decisions"]],
            records=[GameRecord.from_dict(r) for r in d.get("records", [])],
        )

    def summary_row(self) -> dict[str, Any]:
        """One flat row (CSV, tables)."""
        row: dict[str, Any] = {"matchup": self.label}
        for k, a in enumerate(self.agents):
            row[f"agent_{k + 1}"] = a
        row.update({
            "players": self.rules.get("num_players"), "partnership": self.rules.get("partnership"),
            "sets": self.sets, "games": self.games, "wins": self.wins, "losses": self.losses, "draws": self.draws,
            "win_rate": self.win_rate, "win_rate_lo": self.win_rate_ci[0], "win_rate_hi": self.win_rate_ci[1],
            "even_win_rate": self.even_win_rate, "points_per_hand": self.points_per_hand,
            "points_per_hand_lo": self.points_per_hand_ci[0], "points_per_hand_hi": self.points_per_hand_ci[1],
            "mean_hands": self.mean_hands, "truncated": self.truncated,
        })
        for k, t in enumerate(self.think_ms):
            row[f"think_ms_{k + 1}"] = t
        return row


def _first_score(record: GameRecord, side_of: Sequence[int]) -> float:
    """1 if a seat of agent 0 won, 0.5 for a draw, else 0."""
    if record.winner is None:
        return 0.5
    return 1.0 if any(record.seats[s] == 0 and side_of[s] == record.winner for s in range(len(side_of))) else 0.0


def _first_gain_difference(record: GameRecord, side_of: Sequence[int]) -> float:
    """Mean gain of agent 0's sides minus the mean gain of the other sides."""
    mine = sorted({side_of[s] for s in range(len(side_of)) if record.seats[s] == 0})
    others = [side for side in range(len(record.gains)) if side not in mine]
    if not mine or not others:
        return 0.0
    return sum(record.gains[s] for s in mine) / len(mine) - sum(record.gains[s] for s in others) / len(others)


def summarize_match(
    agents: Sequence[str], rules: Rules, seed: int, balanced: bool, orders: Sequence[tuple[int, ...]],
    records: Sequence[GameRecord],
) -> MatchResult:
    """Reduce the game records of one match-up (ordered by set and game) to a :class:`MatchResult`."""
    side_of = [rules.side_of(s) for s in range(rules.num_players)]
    scores = [_first_score(r, side_of) for r in records]
    games = len(records)
    wins = sum(1 for s in scores if s == 1.0)
    draws = sum(1 for r in records if r.winner is None)
    by_set: dict[int, list[GameRecord]] = {}
    for r in records:
        by_set.setdefault(r.set_index, []).append(r)
    per_set = [
        sum(_first_gain_difference(r, side_of) for r in rs) / max(1, sum(r.hands for r in rs)) for rs in by_set.values()
    ]
    ppd, lo, hi = mean_interval(per_set)
    k = len(agents)
    think = [0.0] * k
    decisions = [0] * k
    for r in records:
        for seat, who in enumerate(r.seats):
            think[who] += r.think_seconds[seat]
            decisions[who] += r.decisions[seat]
    even = sum(len({side_of[s] for s in range(len(o)) if o[s] == 0}) / rules.num_sides for o in orders) / len(orders)
    return MatchResult(
        agents=list(agents), rules=rules.to_dict(), seed=seed, balanced=balanced, orders=[tuple(o) for o in orders],
        sets=len(by_set), games=games, wins=wins, losses=games - wins - draws, draws=draws,
        truncated=sum(1 for r in records if r.truncated),
        win_rate=(sum(scores) / games) if games else float("nan"),
        win_rate_ci=wilson_interval(sum(scores), games),
        even_win_rate=even, points_per_hand=ppd, points_per_hand_ci=(lo, hi),
        mean_hands=(sum(r.hands for r in records) / games) if games else float("nan"),
        think_ms=[1000.0 * t / d if d else float("nan") for t, d in zip(think, decisions)],
        decisions=decisions, records=list(records),
    )


@dataclass
class TournamentResult:
    """A round robin: every pair of ``agents`` played one duplicate match-up (``matches``, pairs in
    order (0,1), (0,2), ..., (1,2), ...).

    ``ratings`` are Bradley-Terry on the Elo scale, ``anchor`` at 0, with 95% percentile intervals from
    ``bootstrap`` resamples of the duplicate sets (set indices drawn jointly for all pairs, since set i
    has the same deals in every pair). ``win_rates[i][j]`` is agent i's score against j (draws half),
    None on the diagonal; ``scores[i]`` agent i's score over all its games.
    """

    agents: list[str]
    rules: dict[str, Any]
    seed: int
    anchor: str
    prior: float
    bootstrap: int
    ratings: list[float]
    rating_ci: list[tuple[float, float]]
    win_rates: list[list[Optional[float]]]
    scores: list[float]
    games: list[int]
    matches: list[MatchResult] = field(default_factory=list, repr=False)

    def pair(self, a: str, b: str) -> MatchResult:
        """The match-up between agents ``a`` and ``b``, whichever order they were played in."""
        for m in self.matches:
            if m.agents == [a, b] or m.agents == [b, a]:
                return m
        raise EvaluationError(f"no match-up between {a!r} and {b!r}; agents: {self.agents}")

    def unbeaten_pairs(self) -> list[tuple[str, str]]:
        """(a, b) for every pair in which b never scored against a: the maximum-likelihood gap between
        them is infinite, so their rating difference rests on ``prior`` (read it as a lower bound)."""
        out = []
        for m in self.matches:
            a, b = m.agents
            if m.games and m.wins == m.games:
                out.append((a, b))
            elif m.games and m.losses == m.games:
                out.append((b, a))
        return out

    def rating_table(self) -> list[dict[str, Any]]:
        """Rows sorted by rating, best first: rank, agent, rating, rating_lo, rating_hi, games, score."""
        order = sorted(range(len(self.agents)), key=lambda i: -self.ratings[i])
        return [
            {"rank": rank + 1, "agent": self.agents[i], "rating": self.ratings[i], "rating_lo": self.rating_ci[i][0],
             "rating_hi": self.rating_ci[i][1], "games": self.games[i], "score": self.scores[i]}
            for rank, i in enumerate(order)
        ]

    def to_dict(self, include_games: bool = True) -> dict[str, Any]:
        return {
            "agents": list(self.agents), "rules": dict(self.rules), "seed": self.seed, "anchor": self.anchor,
            "prior": self.prior, "bootstrap": self.bootstrap, "ratings": [_nan_to_none(r) for r in self.ratings],
            "rating_ci": [_interval_to_list(ci) for ci in self.rating_ci],
            "win_rates": [[_nan_to_none(x) if x is not None else None for x in row] for row in self.win_rates],
            "scores": [_nan_to_none(s) for s in self.scores], "games": list(self.games),
            "matches": [m.to_dict(include_games) for m in self.matches],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TournamentResult":
        return cls(
            agents=list(d["agents"]), rules=dict(d["rules"]), seed=int(d["seed"]), anchor=str(d["anchor"]),
            prior=float(d["prior"]), bootstrap=int(d["bootstrap"]), ratings=[_none_to_nan(r) for r in d["ratings"]],
            rating_ci=[_interval_from_list(ci) for ci in d["rating_ci"]],
            win_rates=[[None if x is None else float(x) for x in row] for row in d["win_rates"]],
            scores=[_none_to_nan(s) for s in d["scores"]], games=[int(g) for g in d["games"]],
            matches=[MatchResult.from_dict(m) for m in d["matches"]],
        )


# ====================================================================== running games
class _Progress:
    """tqdm when it is installed, else a plain counter on stderr; silent when disabled."""

    def __init__(self, total: int, enabled: bool, desc: str, stream: Optional[TextIO] = None) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled
        self.desc = desc
        self.stream = sys.stderr if stream is None else stream  # looked up now: tests and tools swap it
        self._bar: Any = None
        self._last = 0.0
        if not enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            return
        self._bar = tqdm(total=total, desc=desc, unit="game", file=stream, dynamic_ncols=True)

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
            return
        now = time.monotonic()
        if now - self._last >= 0.5 or self.done >= self.total:
            self._last = now
            print(f"\r{self.desc}: {self.done}/{self.total} games", end="", file=self.stream, flush=True)

    def close(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            print(file=self.stream, flush=True)


# a task: (match-up index, agent specs, seat orders, set index, base seed)
_Task = tuple[int, tuple[str, ...], tuple[tuple[int, ...], ...], int, int]
_worker_state: dict[str, Any] = {}  # per worker process: the rules and its agents by (spec, seat)


def _init_worker(rules: Rules) -> None:
    _worker_state.clear()
    _worker_state["rules"] = rules
    _worker_state["agents"] = {}


def _play_set(task: _Task, rules: Rules, cache: dict[tuple[str, int], Agent]) -> list[GameRecord]:
    """Play every game of one duplicate set with the same game and deal seeds."""
    _, specs, orders, set_index, seed = task
    game_seed, deal_seed = set_seeds(seed, set_index)
    n = rules.num_players
    records = []
    for g, order in enumerate(orders):
        agents = []
        for seat, who in enumerate(order):
            key = (specs[who], seat)
            if key not in cache:
                cache[key] = make_agent(specs[who])
            agents.append(cache[key])
        result = play_game(rules, agents, seed=game_seed, deal_seed=deal_seed,
                           agent_seeds=agent_seeds(seed, set_index, g, n))
        records.append(GameRecord(set_index, g, tuple(order), result.winner, result.gains, result.hands,
                                  result.truncated, list(result.decisions), list(result.think_seconds)))
    return records


def _worker_play_set(task: _Task) -> tuple[int, int, list[GameRecord]]:
    return task[0], task[3], _play_set(task, _worker_state["rules"], _worker_state["agents"])


def _run(
    rules: Rules, matchups: Sequence[tuple[tuple[str, ...], Sequence[tuple[int, ...]]]], sets: int, seed: int,
    processes: int, progress: bool, desc: str, mp_context: Optional[str] = None,
) -> list[list[GameRecord]]:
    """Play ``sets`` duplicate sets of every match-up; the records per match-up, ordered by set."""
    tasks: list[_Task] = [
        (m, specs, tuple(orders), s, seed) for s in range(sets) for m, (specs, orders) in enumerate(matchups)
    ]
    total_games = sum(len(orders) for _, orders in matchups) * sets
    results: list[list[Optional[list[GameRecord]]]] = [[None] * sets for _ in matchups]
    if processes == 1:
        bar = _Progress(total_games, progress, desc)
        cache: dict[tuple[str, int], Agent] = {}
        try:
            for task in tasks:
                records = _play_set(task, rules, cache)
                results[task[0]][task[3]] = records
                bar.update(len(records))
        finally:
            bar.close()
    else:
        ctx = multiprocessing.get_context(mp_context)
        chunksize = max(1, min(32, len(tasks) // (processes * 8)))
        # the pool starts before the progress bar, so no tqdm thread exists when workers fork
        with ctx.Pool(processes, initializer=_init_worker, initargs=(rules,)) as pool:
            bar = _Progress(total_games, progress, desc)
            try:
                for m, s, records in pool.imap_unordered(_worker_play_set, tasks, chunksize=chunksize):
                    results[m][s] = records
                    bar.update(len(records))
            finally:
                bar.close()
    return [[r for rs in per_matchup for r in rs] for per_matchup in results]  # type: ignore[union-attr]


def _agent_spec(agent: AgentLike) -> str:
    if isinstance(agent, Agent):
        return agent.spec()
    if not isinstance(agent, str) or not agent.strip():
        raise EvaluationError(f"an agent must be a spec string such as 'greedy' or 'pimc:samples=50', got {agent!r}")
    return agent.strip()


def _check_agents(agents: Sequence[AgentLike], rules: Optional[Rules] = None) -> list[str]:
    """Spec strings, each built once here so that a bad name or parameter, or an agent that cannot play
    ``rules`` (a policy trained for other rules), fails before any game."""
    if isinstance(agents, (str, Agent)) or not isinstance(agents, Sequence):
        raise EvaluationError(f"agents must be a list of spec strings or agents, got {agents!r}")
    specs = [_agent_spec(a) for a in agents]
    for spec in specs:
        agent = make_agent(spec)
        if rules is not None:
            check_agent_rules(agent, rules)
    return specs


def _check_run_args(processes: int, count: int, what: str) -> None:
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise EvaluationError(f"processes={processes!r} must be a positive integer")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_GAMES:
        raise EvaluationError(f"{what}={count!r} is not allowed: give an integer from 1 to {MAX_GAMES}")


def evaluate(
    agents: Sequence[AgentLike],
    rules: RulesLike = None,
    *,
    num_players: Optional[int] = None,
    games: int = 200,
    seed: int = 0,
    processes: int = 1,
    progress: bool = True,
    balanced: bool = False,
    mp_context: Optional[str] = None,
) -> MatchResult:
    """Play one duplicate match-up and summarize it from the first agent's point of view.

    ``agents`` are spec strings (``"greedy"``, ``"pimc:samples=50"``) or agents (their ``spec()`` is
    used), one per side, or two for "the first against a field of the second" with 3 players or 4
    cut-throat. ``games`` is rounded up to whole duplicate sets. ``rules`` is a :class:`Rules` or a
    mapping of rules options; ``num_players`` a shortcut for the player count. The numbers depend only on
    ``seed`` (not on ``processes``), except the measured think times.
    """
    r = resolve_rules(rules, num_players)
    seed = _check_seed(seed)
    _check_run_args(processes, games, "games")
    specs = _check_agents(agents, r)
    orders = duplicate_orders(r, len(specs), balanced)
    sets = -(-games // len(orders))
    (records,) = _run(r, [(tuple(specs), orders)], sets, seed, processes, progress, " vs ".join(specs), mp_context)
    return summarize_match(specs, r, seed, balanced and len(specs) == 2 and not r.partnership and r.num_players > 2,
                           orders, records)


def save_sample_games(
    agents: Sequence[AgentLike],
    rules: RulesLike,
    out_dir: Union[str, Path],
    count: int = 2,
    *,
    num_players: Optional[int] = None,
    seed: int = 0,
    balanced: bool = False,
) -> list[Path]:
    """Replay files of the first ``count`` games that :func:`evaluate` with the same agents, rules and
    ``seed`` plays (same seeds, same seat orders, so the same games), to watch them
    (``allfives replay FILE --html OUT.html``). Each record also lists the agent spec of every seat
    under ``"agents"``. Files: ``<out_dir>/game_<set>_<k>.json``."""
    from .core.game import Game
    from .core.replay import game_record, save_replay

    r = resolve_rules(rules, num_players)
    seed = _check_seed(seed)
    _check_run_args(1, count, "count")
    specs = _check_agents(agents, r)
    orders = duplicate_orders(r, len(specs), balanced)
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for index in range(count):
        set_index, g = divmod(index, len(orders))
        game_seed, deal_seed = set_seeds(seed, set_index)
        order = orders[g]
        game = Game(r, game_seed, deal_seed=deal_seed)
        play_game(r, [make_agent(specs[who]) for who in order], seed=game_seed, game=game,
                  agent_seeds=agent_seeds(seed, set_index, g, r.num_players))
        record = game_record(game, seed=game_seed)
        record["agents"] = [specs[who] for who in order]
        paths.append(save_replay(record, folder / f"game_{set_index:04d}_{g}.json"))
    return paths


def _anchor_index(specs: Sequence[str]) -> int:
    for i, spec in enumerate(specs):
        name, params = parse_agent_spec(spec)
        if name == "random" and not params:
            return i
    return 0


def _pair_scores(match: MatchResult) -> np.ndarray:
    """Per duplicate set: (first agent's score, second agent's score), draws half each."""
    per_set: dict[int, list[float]] = {}
    rules = Rules(**match.rules)
    side_of = [rules.side_of(s) for s in range(rules.num_players)]
    for rec in match.records:
        mine = _first_score(rec, side_of)
        acc = per_set.setdefault(rec.set_index, [0.0, 0.0])
        acc[0] += mine
        acc[1] += 1.0 - mine
    return np.array([per_set[s] for s in sorted(per_set)], dtype=float)


def tournament(
    agents: Sequence[AgentLike],
    rules: RulesLike = None,
    *,
    num_players: Optional[int] = None,
    games_per_pair: int = 200,
    seed: int = 0,
    processes: int = 1,
    progress: bool = True,
    bootstrap: int = 1000,
    prior: float = 1.0,
    mp_context: Optional[str] = None,
) -> TournamentResult:
    """A round robin: every pair of ``agents`` plays a duplicate match-up of ``games_per_pair`` games
    (rounded up to whole sets; with 3 players or 4 cut-throat, each agent is the hero against a field of
    the other in turn), then Bradley-Terry ratings with bootstrap intervals.

    The ``random`` agent is the rating anchor (0) when present, else the first agent. ``prior`` virtual
    drawn games per pair keep the ratings finite when an agent wins (or loses) every game, in the fit
    and in the bootstrap resamples; it shifts ratings only slightly once pairs have hundreds of games.
    """
    r = resolve_rules(rules, num_players)
    seed = _check_seed(seed)
    _check_run_args(processes, games_per_pair, "games_per_pair")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise EvaluationError(f"bootstrap={bootstrap!r} is not allowed: give an integer from 0 to {MAX_BOOTSTRAP}")
    prior = _check_prior(prior)  # now, not after every game has been played
    specs = _check_agents(agents, r)
    if len(specs) < 2:
        raise EvaluationError(f"a tournament needs at least 2 agents, got {specs}")
    # the same agent however it is written ("random:" and "random", "expert:w_score=1" and "expert")
    canonical = [make_agent(s).spec() for s in specs]
    dupes = sorted({s for s, c in zip(specs, canonical) if canonical.count(c) > 1})
    if dupes:
        raise EvaluationError(f"agents must be distinct, got the same agent more than once: {dupes}")
    balanced = not r.partnership and r.num_players > 2
    orders = duplicate_orders(r, 2, balanced)
    sets = -(-games_per_pair // len(orders))
    pairs = list(itertools.combinations(range(len(specs)), 2))
    matchups = [((specs[i], specs[j]), orders) for i, j in pairs]
    records = _run(r, matchups, sets, seed, processes, progress, f"tournament of {len(specs)}", mp_context)
    matches = [summarize_match([specs[i], specs[j]], r, seed, balanced, orders, recs)
               for (i, j), recs in zip(pairs, records)]

    n = len(specs)
    anchor = _anchor_index(specs)
    per_set = np.stack([_pair_scores(m) for m in matches])  # (pairs, sets, 2)
    wins = np.zeros((n, n))
    for (i, j), ps in zip(pairs, per_set):
        wins[i, j] += ps[:, 0].sum()
        wins[j, i] += ps[:, 1].sum()
    ratings = bradley_terry(wins, prior=prior, anchor=anchor)
    if bootstrap > 0:
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2**32 - 1,)))  # apart from the deals
        draws = rng.integers(0, sets, size=(bootstrap, sets))
        counts = np.stack([np.bincount(row, minlength=sets) for row in draws]).astype(float)  # (B, sets)
        boot = np.zeros((bootstrap, n, n))
        for p, (i, j) in enumerate(pairs):
            boot[:, i, j] = counts @ per_set[p, :, 0]
            boot[:, j, i] = counts @ per_set[p, :, 1]
        if prior > 0:
            boot += (prior / 2.0) * (1.0 - np.eye(n))
        log10_p = _bt_log10_strengths(boot)
        elo = 400.0 * (log10_p - log10_p[:, anchor:anchor + 1])
        lo, hi = np.percentile(elo, [2.5, 97.5], axis=0)
        rating_ci = [(float(a), float(b)) for a, b in zip(lo, hi)]
    else:
        rating_ci = [(float("nan"), float("nan"))] * n
    games = np.zeros(n, dtype=int)
    for (i, j), m in zip(pairs, matches):
        games[i] += m.games
        games[j] += m.games
    totals = wins.sum(axis=1)
    win_rates: list[list[Optional[float]]] = [
        [None if i == j else float(wins[i, j] / (wins[i, j] + wins[j, i])) if wins[i, j] + wins[j, i] else None
         for j in range(n)]
        for i in range(n)
    ]
    return TournamentResult(
        agents=specs, rules=r.to_dict(), seed=seed, anchor=specs[anchor], prior=float(prior), bootstrap=bootstrap,
        ratings=[float(x) for x in ratings], rating_ci=rating_ci, win_rates=win_rates,
        scores=[float(totals[i] / games[i]) if games[i] else float("nan") for i in range(n)],
        games=[int(g) for g in games], matches=matches,
    )


# ====================================================================== saving, loading, comparing
Result = Union[MatchResult, TournamentResult]


def save_json(result: Result, path: Union[str, Path], include_games: bool = True) -> Path:
    """Write ``result`` as JSON (with its per-game records unless ``include_games=False``)."""
    kind = "match" if isinstance(result, MatchResult) else "tournament"
    doc = {"format": RESULT_FORMAT, "version": RESULT_VERSION, "kind": kind, "result": result.to_dict(include_games)}
    path = Path(path)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


def load_result(path: Union[str, Path]) -> Result:
    """Read a result written by :func:`save_json`."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise EvaluationError(f"{path}: not a text file, so not an All Fives evaluation result") from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, a 5000-digit number, nesting too deep
        raise EvaluationError(f"{path}: not JSON ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(doc, dict) or doc.get("format") != RESULT_FORMAT:
        raise EvaluationError(f"{path}: not an All Fives evaluation result (no \"format\": \"{RESULT_FORMAT}\")")
    if doc.get("version") != RESULT_VERSION:
        raise EvaluationError(f"{path}: result version {doc.get('version')!r} is not supported (only {RESULT_VERSION})")
    try:
        if doc.get("kind") == "match":
            return _checked_match(MatchResult.from_dict(doc["result"]))
        if doc.get("kind") == "tournament":
            result = TournamentResult.from_dict(doc["result"])
            n = len(result.agents)
            for name in ("ratings", "rating_ci", "win_rates", "scores", "games"):
                if len(getattr(result, name)) != n:
                    raise ValueError(f"{len(getattr(result, name))} {name} for {n} agents")
            if any(len(row) != n for row in result.win_rates):
                raise ValueError(f"win_rates is not a {n} x {n} matrix")
            for m in result.matches:
                _checked_match(m)
            return result
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, IndexError) as exc:
        raise EvaluationError(f"{path}: corrupt evaluation result ({type(exc).__name__}: {exc})") from None
    raise EvaluationError(f"{path}: unknown result kind {doc.get('kind')!r} (expected 'match' or 'tournament')")


def _checked_match(result: MatchResult) -> MatchResult:
    """``result`` if its fields have the shapes a saved match-up has, else a ValueError saying which."""
    if not result.agents or not all(isinstance(a, str) for a in result.agents):
        raise ValueError(f"agents must be a list of spec strings, got {repr(result.agents)[:100]}")
    for name in ("win_rate_ci", "points_per_hand_ci"):
        if len(getattr(result, name)) != 2:
            raise ValueError(f"{name} must be [low, high]")
    return result


def _write_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else [])
        writer.writeheader()
        writer.writerows(rows)


def save_csv(result: Result, path: Union[str, Path]) -> list[Path]:
    """Write the tables of ``result`` as CSV; returns the files written.

    A match-up: one summary row at ``path``. A tournament: the rating table at ``path``, the pairwise
    win-rate matrix at ``<stem>-matrix.csv`` and one row per pair at ``<stem>-pairs.csv``.
    """
    path = Path(path)
    if isinstance(result, MatchResult):
        _write_csv(path, [result.summary_row()])
        return [path]
    _write_csv(path, result.rating_table())
    matrix = path.with_name(path.stem + "-matrix" + path.suffix)
    _write_csv(matrix, [
        {"agent": a, **{b: ("" if x is None else x) for b, x in zip(result.agents, row)}}
        for a, row in zip(result.agents, result.win_rates)
    ])
    pairs = path.with_name(path.stem + "-pairs" + path.suffix)
    _write_csv(pairs, [m.summary_row() for m in result.matches])
    return [path, matrix, pairs]


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> Optional[bool]:
    if any(math.isnan(x) for x in (*a, *b)):
        return None
    return a[0] <= b[1] and b[0] <= a[1]


@dataclass
class ComparisonRow:
    """One figure in two results: the values, their intervals, the difference (b - a) and whether the
    95% intervals overlap (None when an interval is missing). Non-overlapping intervals are a
    conservative sign of a real difference; overlapping ones do not prove there is none."""

    name: str
    a: float
    a_ci: tuple[float, float]
    b: float
    b_ci: tuple[float, float]
    diff: float
    overlap: Optional[bool]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "a": _nan_to_none(self.a), "a_ci": _interval_to_list(self.a_ci),
                "b": _nan_to_none(self.b), "b_ci": _interval_to_list(self.b_ci), "diff": _nan_to_none(self.diff),
                "overlap": self.overlap}


@dataclass
class Comparison:
    """Two saved results side by side: ``rows`` of figures, ``notes`` on what differs in the setup."""

    kind: str
    rows: list[ComparisonRow]
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "rows": [r.to_dict() for r in self.rows], "notes": list(self.notes)}


def _row(name: str, a: float, a_ci: tuple[float, float], b: float, b_ci: tuple[float, float]) -> ComparisonRow:
    return ComparisonRow(name, a, a_ci, b, b_ci, b - a, _overlap(a_ci, b_ci))


def compare(a: Union[Result, str, Path], b: Union[Result, str, Path]) -> Comparison:
    """Compare two results of the same kind (or the files holding them): win rates and points per hand
    of match-ups; ratings and pairwise win rates of tournaments (agents common to both)."""
    ra = load_result(a) if isinstance(a, (str, Path)) else a
    rb = load_result(b) if isinstance(b, (str, Path)) else b
    if type(ra) is not type(rb):
        raise EvaluationError("cannot compare a match-up result with a tournament result")
    notes = []
    if ra.rules != rb.rules:
        changed = sorted(k for k in set(ra.rules) | set(rb.rules) if ra.rules.get(k) != rb.rules.get(k))
        notes.append("the rules differ: " + ", ".join(f"{k} {ra.rules.get(k)!r} -> {rb.rules.get(k)!r}" for k in changed))
    if ra.seed == rb.seed:
        notes.append(f"both used seed {ra.seed}: the same deal seeds, so the two runs are not independent samples")
    rows: list[ComparisonRow] = []
    if isinstance(ra, MatchResult):
        assert isinstance(rb, MatchResult)
        if ra.agents != rb.agents:
            notes.append(f"the agents differ: {ra.label} -> {rb.label}")
        rows.append(_row(f"win rate of {ra.agents[0]}" + ("" if ra.agents[0] == rb.agents[0] else f" / {rb.agents[0]}"),
                         ra.win_rate, ra.win_rate_ci, rb.win_rate, rb.win_rate_ci))
        rows.append(_row("points per hand", ra.points_per_hand, ra.points_per_hand_ci,
                         rb.points_per_hand, rb.points_per_hand_ci))
        return Comparison("match", rows, notes)
    assert isinstance(rb, TournamentResult)
    if ra.anchor != rb.anchor:
        notes.append(f"the rating anchors differ ({ra.anchor} -> {rb.anchor}): ratings are on different scales")
    only = sorted(set(ra.agents) ^ set(rb.agents))
    if only:
        notes.append(f"agents in only one result (left out): {only}")
    common = [x for x in ra.agents if x in rb.agents]
    for name in common:
        i, j = ra.agents.index(name), rb.agents.index(name)
        rows.append(_row(f"rating {name}", ra.ratings[i], ra.rating_ci[i], rb.ratings[j], rb.rating_ci[j]))
    for x, y in itertools.combinations(common, 2):
        ma, mb = ra.pair(x, y), rb.pair(x, y)
        rows.append(_row(f"{x} vs {y} win rate", *_oriented(ma, x), *_oriented(mb, x)))
    return Comparison("tournament", rows, notes)


def _oriented(m: MatchResult, first: str) -> tuple[float, tuple[float, float]]:
    """The win rate and interval of ``first`` in a two-agent match-up, whichever side it played."""
    if m.agents[0] == first:
        return m.win_rate, m.win_rate_ci
    return 1.0 - m.win_rate, (1.0 - m.win_rate_ci[1], 1.0 - m.win_rate_ci[0])


# ====================================================================== text
def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    widths = [max(len(h), *(len(r[k]) for r in rows)) if rows else len(h) for k, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _pct(x: Optional[float]) -> str:
    return "-" if x is None or math.isnan(x) else f"{100 * x:.1f}%"


def _num(x: float, fmt: str = "+.2f") -> str:
    return "n/a" if math.isnan(x) else format(x, fmt)


def _ci(ci: tuple[float, float], fmt: Any) -> str:
    return "n/a" if any(math.isnan(x) for x in ci) else f"{fmt(ci[0])} .. {fmt(ci[1])}"


def _setup(rules: Mapping[str, Any]) -> str:
    n = rules.get("num_players")
    return f"{n} players" + (", partnership" if rules.get("partnership") else (", cut-throat" if n == 4 else ""))


def format_match(result: MatchResult) -> str:
    """A readable summary of a match-up."""
    a = result.agents[0]
    per_set = len(result.orders)
    lines = [
        f"{result.label}: {_setup(result.rules)}, {result.games} games ({result.sets} duplicate sets of {per_set}), "
        f"seed {result.seed}",
        f"  {a}: {result.wins} wins, {result.losses} losses, {result.draws} draws",
        f"  win rate of {a}: {_pct(result.win_rate)} (95% CI {_ci(result.win_rate_ci, _pct)}; "
        f"{_pct(result.even_win_rate)} if equally strong)",
        f"  points per hand, {a} minus the others: {_num(result.points_per_hand)} "
        f"(95% CI {_ci(result.points_per_hand_ci, _num)})",
        f"  game length: {_num(result.mean_hands, '.1f')} hands on average; truncated games: {result.truncated}",
        "  think time per move: " + ", ".join(
            f"{name} {_num(t, '.3f')} ms" for name, t in zip(result.agents, result.think_ms)),
    ]
    return "\n".join(lines)


def format_tournament(result: TournamentResult) -> str:
    """The rating table and the pairwise win-rate matrix."""
    rows = [[str(r["rank"]), r["agent"], _num(r["rating"], "+.0f"), _ci((r["rating_lo"], r["rating_hi"]),
             lambda x: format(x, "+.0f")), str(r["games"]), _pct(r["score"])] for r in result.rating_table()]
    games = result.matches[0].games if result.matches else 0
    head = (f"Tournament: {len(result.agents)} agents, {_setup(result.rules)}, {games} games per pair, seed {result.seed}; "
            f"Bradley-Terry on the Elo scale, {result.anchor} = 0, 95% CI from {result.bootstrap} bootstrap resamples")
    ratings = _table(["rank", "agent", "rating", "95% CI", "games", "score"], rows,
                     [True, False, True, True, True, True])
    short = [a if len(a) <= 12 else a[:11] + "…" for a in result.agents]
    matrix = _table([""] + short, [[short[i]] + [_pct(x) for x in row] for i, row in enumerate(result.win_rates)],
                    [False] + [True] * len(short))
    text = f"{head}\n\n{ratings}\n\nWin rate of the row agent against the column agent:\n{matrix}"
    unbeaten = result.unbeaten_pairs()
    if unbeaten:
        text += ("\nnote: won every game: " + ", ".join(f"{a} over {b}" for a, b in unbeaten)
                 + f"; those rating gaps rest on the prior ({result.prior:g} virtual drawn game(s) per pair) "
                 "and are lower bounds")
    return text


def format_comparison(comparison: Comparison, name_a: str = "a", name_b: str = "b") -> str:
    """The figures of two results side by side."""
    rows = []
    for r in comparison.rows:
        is_rating = r.name.startswith("rating ")
        f = (lambda x: _num(x, "+.0f")) if is_rating else (lambda x: _num(x, ".3f"))
        overlap = {True: "yes", False: "NO", None: "-"}[r.overlap]
        rows.append([r.name, f(r.a), _ci(r.a_ci, f), f(r.b), _ci(r.b_ci, f), _num(r.diff, "+.0f" if is_rating else "+.3f"),
                     overlap])
    table = _table(["figure", name_a, "95% CI", name_b, "95% CI", "b - a", "CIs overlap"], rows,
                   [False, True, True, True, True, True, True])
    notes = "".join(f"\nnote: {n}" for n in comparison.notes)
    return table + notes
