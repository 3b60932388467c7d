"""All Fives Bench: a frozen protocol that gives any agent a comparable number.

``allfives bench AGENT --track 2p`` plays the agent against a fixed suite of opponents on frozen deals and
writes a *bench card*: win rates and points per hand with 95% intervals, one rating on a fixed scale, the
agent's think time, and everything that makes the numbers comparable (protocol and suite versions and hashes,
the policy file's hash, the package version, the rules). The leaderboard is generated from such cards.

* :mod:`.errors` -- :class:`BenchError`
* :mod:`.protocol` -- protocol 1: tracks, opponents, move time limit, deal counts, anchors (frozen)
* :mod:`.suites` -- the deal suite files and their frozen hashes
* :mod:`.rating` -- the fixed-scale rating model and fits
* :mod:`.card` -- bench cards: write, read back and check, show
* :mod:`.journal` -- the journal that lets a stopped run resume
* :mod:`.run` -- :func:`run_bench`
* :mod:`.leaderboard` -- a leaderboard from cards, one protocol only
"""

from __future__ import annotations

from .card import CARD_FORMAT, CARD_VERSION, check_leaderboard_card, format_card, read_card, write_card
from .errors import BenchError
from .leaderboard import load_leaderboard
from .protocol import ANCHORS, MOVE_TIME_LIMIT, OPPONENTS, PROTOCOL_VERSION, TRACKS, Track
from .rating import agent_rating, expected_score, fit_ratings
from .run import run_bench
from .suites import SUITE_SHA256, Suite, load_suite, suite_path

__all__ = [
    "ANCHORS", "BenchError", "CARD_FORMAT", "CARD_VERSION", "MOVE_TIME_LIMIT", "OPPONENTS", "PROTOCOL_VERSION",
    "SUITE_SHA256", "Suite", "TRACKS", "Track", "agent_rating", "check_leaderboard_card", "expected_score",
    "fit_ratings", "format_card", "load_leaderboard", "load_suite", "read_card", "run_bench",
    "suite_path", "write_card",
]
