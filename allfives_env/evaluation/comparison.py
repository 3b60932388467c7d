"""Comparison: two saved results of the same kind side by side, figure by figure, with notes on the setup."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from .errors import EvaluationError
from .persistence import load_result
from .results import MatchResult, Result, TournamentResult, interval_to_list, nan_to_none


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
        return {"name": self.name, "a": nan_to_none(self.a), "a_ci": interval_to_list(self.a_ci),
                "b": nan_to_none(self.b), "b_ci": interval_to_list(self.b_ci), "diff": nan_to_none(self.diff),
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
