"""The ``expert`` heuristic's constants: its default weights and decision priorities.

Why a module of their own: the Python agent (:mod:`allfives_env.agents.expert`, where the module
docstring says what each weight rewards) and its compiled port (:mod:`allfives_env.batch.agents`) must
read the same numbers, and the batch engine sits below the agents package, so neither may hold them for
the other.
"""

from __future__ import annotations

from .analysis import GAME_WINNING_REPLY_COST

__all__ = ["DEFAULT_WEIGHTS", "DOMINO_PRIORITY", "MOBILITY_CAP", "WIN_PRIORITY"]

#: Decision priorities above any weighted value: a play that wins the game beats everything, a domino
#: (the hand ends, nobody replies) beats every ordinary play; within each, more points first.
WIN_PRIORITY = 1e9
DOMINO_PRIORITY = 1e6

#: Default weights, tuned by coordinate search on duplicate 2-player matches against ``defensive``
#: (see the module docstring for what each one rewards). All are in count points whatever
#: ``score_unit`` is, except ``late_hand``, a number of tiles. The constructor's defaults read this table.
DEFAULT_WEIGHTS: dict[str, float] = {
    "w_score": 1.0,
    "w_deny": 1.0,
    "w_target": GAME_WINNING_REPLY_COST,
    "w_danger": 0.5,
    "danger_margin": 35.0,
    "w_block": 7.5,
    "w_follow": 0.3,
    "w_mobility": 1.5,
    "w_variety": 0.5,
    "w_pips": 0.15,
    "w_pips_late": 0.6,
    "w_double": 5.0,
    "late_hand": 1.0,
    "w_partner": 0.0,
}
#: Kept tiles that fit the new ends count for mobility up to this many.
MOBILITY_CAP = 3
