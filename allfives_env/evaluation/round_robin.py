"""Round robin: :func:`tournament` plays every pair of agents on common deals and rates them (Bradley-Terry)."""

from __future__ import annotations

import itertools
from typing import Optional, Sequence

import numpy as np

from ..agents import parse_agent_spec
from ..core.rules import Rules
from ..core.seeds import check_seed
from .checks import (AgentLike, RulesLike, check_agents, check_bootstrap, check_move_time_limit, check_run_args,
                     resolve_rules)
from .results import MatchResult, TournamentResult, first_score, summarize_match
from .runner import run_matchups
from .scheduling import bootstrap_generator, duplicate_orders, sets_for
from .statistics import ELO_SCALE, bradley_terry, bt_log10_strengths, check_prior

# the percentiles of the bootstrap ratings that bound their 95% intervals
_CI_PERCENTILES = [2.5, 97.5]


def _anchor_index(specs: Sequence[str]) -> int:
    for i, spec in enumerate(specs):
        name, params = parse_agent_spec(spec)
        if name == "random" and not params:
            return i
    return 0


def _pair_scores(match: MatchResult, side_of: Sequence[int]) -> np.ndarray:
    """Per duplicate set: (first agent's score, second agent's score), draws half each."""
    per_set: dict[int, list[float]] = {}
    for rec in match.records:
        mine = first_score(rec, side_of)
        acc = per_set.setdefault(rec.set_index, [0.0, 0.0])
        acc[0] += mine
        acc[1] += 1.0 - mine
    return np.array([per_set[s] for s in sorted(per_set)], dtype=float)


def _bootstrap_intervals(
    per_set: np.ndarray, pairs: Sequence[tuple[int, int]], n: int, seed: int, prior: float, bootstrap: int,
    anchor: int,
) -> list[tuple[float, float]]:
    """95% percentile intervals of the ratings over ``bootstrap`` resamples of the duplicate sets; the
    set indices are drawn jointly for all pairs, since set i has the same deals in every pair."""
    if bootstrap <= 0:
        return [(float("nan"), float("nan"))] * n
    sets = per_set.shape[1]
    draws = bootstrap_generator(seed).integers(0, sets, size=(bootstrap, sets))
    counts = np.stack([np.bincount(row, minlength=sets) for row in draws]).astype(float)  # (B, sets)
    boot = np.zeros((bootstrap, n, n))
    for p, (i, j) in enumerate(pairs):
        boot[:, i, j] = counts @ per_set[p, :, 0]
        boot[:, j, i] = counts @ per_set[p, :, 1]
    if prior > 0:
        boot += (prior / 2.0) * (1.0 - np.eye(n))
    log10_p = bt_log10_strengths(boot)
    elo = ELO_SCALE * (log10_p - log10_p[:, anchor:anchor + 1])
    lo, hi = np.percentile(elo, _CI_PERCENTILES, axis=0)
    return [(float(a), float(b)) for a, b in zip(lo, hi)]


def _rate(
    specs: list[str], rules: Rules, seed: int, prior: float, bootstrap: int, pairs: Sequence[tuple[int, int]],
    matches: list[MatchResult],
) -> TournamentResult:
    """The tournament's ratings, intervals, win-rate matrix and scores from its played match-ups."""
    n = len(specs)
    anchor = _anchor_index(specs)
    side_of = [rules.side_of(s) for s in range(rules.num_players)]
    per_set = np.stack([_pair_scores(m, side_of) for m in matches])  # (pairs, sets, 2)
    wins = np.zeros((n, n))
    for (i, j), ps in zip(pairs, per_set):
        wins[i, j] += ps[:, 0].sum()
        wins[j, i] += ps[:, 1].sum()
    ratings = bradley_terry(wins, prior=prior, anchor=anchor)
    rating_ci = _bootstrap_intervals(per_set, pairs, n, seed, prior, bootstrap, anchor)
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
        agents=specs, rules=rules.to_dict(), seed=seed, anchor=specs[anchor], prior=float(prior), bootstrap=bootstrap,
        ratings=[float(x) for x in ratings], rating_ci=rating_ci, win_rates=win_rates,
        scores=[float(totals[i] / games[i]) if games[i] else float("nan") for i in range(n)],
        games=[int(g) for g in games], matches=matches,
    )


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
    move_time_limit: Optional[float] = None,
) -> TournamentResult:
    """A round robin: every pair of ``agents`` plays a duplicate match-up of ``games_per_pair`` games
    (rounded up to whole sets; with 3 players or 4 cut-throat, each agent is the hero against a field of
    the other in turn), then Bradley-Terry ratings with bootstrap intervals.

    The ``random`` agent is the rating anchor (0) when present, else the first agent. ``prior`` virtual
    drawn games per pair keep the ratings finite when an agent wins (or loses) every game, in the fit
    and in the bootstrap resamples; it shifts ratings only slightly once pairs have hundreds of games.
    ``move_time_limit`` and the errors that stop a run: as for :func:`~allfives_env.evaluation.evaluate`.
    """
    r = resolve_rules(rules, num_players)
    seed = check_seed(seed, allow_none=False)
    check_run_args(processes, games_per_pair, "games_per_pair")
    check_bootstrap(bootstrap)
    limit = check_move_time_limit(move_time_limit)
    prior = check_prior(prior)  # now, not after every game has been played
    specs = check_agents(agents, r, distinct=True)
    balanced = not r.partnership and r.num_players > 2
    orders = duplicate_orders(r, 2, balanced)
    sets = sets_for(games_per_pair, orders)
    pairs = list(itertools.combinations(range(len(specs)), 2))
    matchups = [((specs[i], specs[j]), orders) for i, j in pairs]
    records = run_matchups(r, matchups, sets, seed, processes, progress, f"tournament of {len(specs)}", mp_context,
                           limit)
    matches = [summarize_match([specs[i], specs[j]], r, seed, balanced, orders, recs)
               for (i, j), recs in zip(pairs, records)]
    return _rate(specs, r, seed, prior, bootstrap, pairs, matches)
