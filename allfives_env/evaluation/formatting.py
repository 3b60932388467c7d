"""Formatting: match-ups, tournaments and comparisons as readable text tables."""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

from .comparison import Comparison
from .results import MatchResult, TournamentResult


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
