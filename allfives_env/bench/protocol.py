"""The bench protocol, version 1: what a bench run plays and how its rating is scaled. Frozen.

A number is comparable between researchers only when everything that makes it is fixed: the rules, the
deals, the opponents and their settings, the seat orders, the number of games, the time an agent may take
and the rating's scale. This module fixes all of them for protocol 1; a change to any of them is a new
protocol version, with new suite files and new anchors, and cards of different versions are never mixed.

Per track (``2p``, ``3p``, ``4p``) the agent meets every opponent of :data:`OPPONENTS` on the same deals
(the track's deal suite, see :mod:`.suites`):

* ``2p``: one against one, each deal played twice with the seats swapped;
* ``3p``: cut-throat, the agent against two copies of the opponent, each deal played in the 3 seat orders;
* ``4p``: partnership, the agent and a copy of itself as partner against a team of two opponents, each
  deal played twice with the teams swapped.

The number of deals gives a 95% interval of at most about ±2.5 points on each win rate (Wilson, at an even
win rate: 1,600 games in 2p and 4p, 1,602 in 3p). ``--quick`` plays the suite's first deals only: a sanity
check whose card says ``quick`` and never enters a leaderboard.

The rating is on the Elo scale with ``random`` at 0: the chance that a side of rating ``r`` beats ``k``
opposing sides of rating ``s`` (``k`` = 1, or 2 in ``3p``) is ``1 / (1 + k * 10 ** ((s - r) / 400))``. The
opponents' ratings (:data:`ANCHORS`) were fitted once, from a round robin among them on other deals
(``benchmarks/bench_anchors.py``), and are frozen: a card's rating is the one rating that best explains its
results against those fixed anchors (:mod:`.rating`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

#: The protocol's version: in every suite file and every card.
PROTOCOL_VERSION = 1

#: The opponents of every track, in the order a card lists them; spec strings with their settings fixed
#: (``pimc`` at 200 sampled worlds a move; each agent's seed comes from the suite, per game and seat).
OPPONENTS: tuple[str, ...] = ("random", "greedy", "expert", "pimc:samples=200", "pimc-sift")

#: Seconds (wall clock) any agent may spend on one move (the agent's and the opponents'); a slower move ends the run.
MOVE_TIME_LIMIT = 1.0


@dataclass(frozen=True)
class Track:
    """One track: its rules options, its deals in a full and a quick run, and how many sides oppose the agent."""

    name: str
    rules: Mapping[str, Any]
    sets: int  # duplicate sets (deals) of a full run
    quick_sets: int  # the first deals, played by --quick
    opposing_sides: int  # k in the rating's model: 1 side against the agent, or 2 in cut-throat 3p

    @property
    def suite_name(self) -> str:
        return f"v{PROTOCOL_VERSION}-{self.name}"


#: The tracks of protocol 1 (the rules are the defaults for that many players).
TRACKS: dict[str, Track] = {
    "2p": Track("2p", {"num_players": 2}, sets=800, quick_sets=40, opposing_sides=1),
    "3p": Track("3p", {"num_players": 3}, sets=534, quick_sets=27, opposing_sides=2),
    "4p": Track("4p", {"num_players": 4, "partnership": True}, sets=800, quick_sets=40, opposing_sides=1),
}

#: The opponents' ratings per track (Elo scale, ``random`` = 0), fitted by ``benchmarks/bench_anchors.py``
#: (``benchmarks/results/bench_anchors.json``) and frozen here.
ANCHORS: dict[str, dict[str, float]] = {
    "2p": {"random": 0.0, "greedy": 789.6, "expert": 1189.8, "pimc:samples=200": 1313.1, "pimc-sift": 1366.1},
    "3p": {"random": 0.0, "greedy": 887.9, "expert": 1041.9, "pimc:samples=200": 1127.3, "pimc-sift": 1146.4},
    "4p": {"random": 0.0, "greedy": 817.3, "expert": 1038.9, "pimc:samples=200": 1113.7, "pimc-sift": 1094.9},
}
