"""Evaluation: duplicate-deal match-ups, round-robin tournaments with ratings, statistics, saved results.

This face re-exports the public API; the work is done in one module per job, each importing only the
ones listed before it:

* :mod:`.errors` -- :class:`EvaluationError`, :class:`MoveTimeLimitError`, :class:`WorkerDiedError`
* :mod:`.statistics` -- Wilson and Student-t intervals, the t distribution, Bradley-Terry ratings
* :mod:`.checks` -- what a run may be asked for (rules, seed, sizes, agents)
* :mod:`.scheduling` -- duplicate sets: seat orders and the seeds of every game (why duplicate deals: there)
* :mod:`.results` -- :class:`GameRecord`, :class:`MatchResult`, :class:`TournamentResult` and their dicts
* :mod:`.runner` -- playing the scheduled sets, in this process or a pool, with a progress bar
* :mod:`.persistence` -- :func:`save_json`, :func:`save_csv`, :func:`load_result`, :func:`save_sample_games`
* :mod:`.matchup` -- :func:`evaluate`, one match-up
* :mod:`.round_robin` -- :func:`tournament`, every pair and the ratings
* :mod:`.comparison` -- :func:`compare`, two results side by side
* :mod:`.formatting` -- the text tables of results and comparisons
"""

from __future__ import annotations

from .checks import MAX_BOOTSTRAP, MAX_GAMES, MAX_MOVE_TIME_LIMIT, MIN_MOVE_TIME_LIMIT, AgentLike, RulesLike, resolve_rules
from .comparison import Comparison, ComparisonRow, compare
from .errors import EvaluationError, MoveTimeLimitError, WorkerDiedError
from .formatting import format_comparison, format_match, format_tournament
from .matchup import evaluate
from .persistence import RESULT_FORMAT, RESULT_VERSION, load_result, save_csv, save_json, save_sample_games
from .results import GameRecord, MatchResult, Result, TournamentResult, summarize_match
from .round_robin import tournament
from .scheduling import agent_seeds, duplicate_orders, set_seeds
from .statistics import Z95, bradley_terry, mean_interval, student_t_cdf, t_quantile, wilson_interval

__all__ = [
    "Comparison", "ComparisonRow", "EvaluationError", "GameRecord", "MatchResult", "MoveTimeLimitError",
    "TournamentResult", "WorkerDiedError",
    "agent_seeds", "bradley_terry", "compare", "duplicate_orders", "evaluate", "format_comparison",
    "format_match", "format_tournament", "load_result", "mean_interval", "resolve_rules", "save_csv",
    "save_json", "save_sample_games", "set_seeds", "student_t_cdf", "summarize_match", "t_quantile", "tournament",
    "wilson_interval",
    # constants and type aliases, public since the package was one module
    "AgentLike", "MAX_BOOTSTRAP", "MAX_GAMES", "MAX_MOVE_TIME_LIMIT", "MIN_MOVE_TIME_LIMIT", "RESULT_FORMAT", "RESULT_VERSION", "Result", "RulesLike", "Z95",
]
