"""Results: the records and summaries of match-ups and tournaments, and their JSON-ready dicts."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence, Union

from ..core.rules import Rules
from .errors import EvaluationError
from .statistics import mean_interval, wilson_interval


def nan_to_none(x: Optional[float]) -> Optional[float]:
    """A figure for JSON: NaN (and None) as None, anything else as a float."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def none_to_nan(x: Optional[float]) -> float:
    """A figure read from JSON: None as NaN."""
    return float("nan") if x is None else float(x)


def interval_to_list(ci: tuple[float, float]) -> list[Optional[float]]:
    """An interval for JSON: ``[low, high]``, NaN ends as None."""
    return [nan_to_none(ci[0]), nan_to_none(ci[1])]


def interval_from_list(ci: Sequence[Optional[float]]) -> tuple[float, float]:
    """An interval read from JSON: ``(low, high)``, None ends as NaN."""
    if len(ci) != 2:
        raise ValueError(f"an interval must be [low, high], got {ci!r}")
    return (none_to_nan(ci[0]), none_to_nan(ci[1]))


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
    #: per seat, each move's think time; kept only when a run asks for it (the bench's think-time
    #: percentiles), and not part of :meth:`to_dict`: an evaluation's saved results stay as they were
    move_seconds: Optional[list[list[float]]] = None

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
            "win_rate": nan_to_none(self.win_rate), "win_rate_ci": interval_to_list(self.win_rate_ci),
            "even_win_rate": self.even_win_rate,
            "points_per_hand": nan_to_none(self.points_per_hand),
            "points_per_hand_ci": interval_to_list(self.points_per_hand_ci),
            "mean_hands": nan_to_none(self.mean_hands),
            "think_ms": [nan_to_none(t) for t in self.think_ms], "decisions": list(self.decisions),
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
            win_rate=none_to_nan(d["win_rate"]), win_rate_ci=interval_from_list(d["win_rate_ci"]),
            even_win_rate=float(d["even_win_rate"]), points_per_hand=none_to_nan(d["points_per_hand"]),
            points_per_hand_ci=interval_from_list(d["points_per_hand_ci"]), mean_hands=none_to_nan(d["mean_hands"]),
            think_ms=[none_to_nan(t) for t in d["think_ms"]], decisions=[int(x) for x in d["decisions"]],
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


def first_score(record: GameRecord, side_of: Sequence[int]) -> float:
    """1 if a seat of agent 0 won, 0.5 for a draw, else 0."""
    if record.winner is None:
        return 0.5
    return 1.0 if any(record.seats[s] == 0 and side_of[s] == record.winner for s in range(len(side_of))) else 0.0


def first_gain_difference(record: GameRecord, side_of: Sequence[int]) -> float:
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
    scores = [first_score(r, side_of) for r in records]
    games = len(records)
    wins = sum(1 for s in scores if s == 1.0)
    draws = sum(1 for r in records if r.winner is None)
    by_set: dict[int, list[GameRecord]] = {}
    for r in records:
        by_set.setdefault(r.set_index, []).append(r)
    per_set = [
        sum(first_gain_difference(r, side_of) for r in rs) / max(1, sum(r.hands for r in rs)) for rs in by_set.values()
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
            "prior": self.prior, "bootstrap": self.bootstrap, "ratings": [nan_to_none(r) for r in self.ratings],
            "rating_ci": [interval_to_list(ci) for ci in self.rating_ci],
            "win_rates": [[nan_to_none(x) for x in row] for row in self.win_rates],
            "scores": [nan_to_none(s) for s in self.scores], "games": list(self.games),
            "matches": [m.to_dict(include_games) for m in self.matches],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TournamentResult":
        return cls(
            agents=list(d["agents"]), rules=dict(d["rules"]), seed=int(d["seed"]), anchor=str(d["anchor"]),
            prior=float(d["prior"]), bootstrap=int(d["bootstrap"]), ratings=[none_to_nan(r) for r in d["ratings"]],
            rating_ci=[interval_from_list(ci) for ci in d["rating_ci"]],
            win_rates=[[None if x is None else float(x) for x in row] for row in d["win_rates"]],
            scores=[none_to_nan(s) for s in d["scores"]], games=[int(g) for g in d["games"]],
            matches=[MatchResult.from_dict(m) for m in d["matches"]],
        )


Result = Union[MatchResult, TournamentResult]
