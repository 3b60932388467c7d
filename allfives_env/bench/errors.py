"""Errors of the bench: :class:`BenchError`, a bench that cannot be run, resumed or read as asked."""

from __future__ import annotations

from ..core.errors import AllFivesError

__all__ = ["BenchError"]


class BenchError(AllFivesError, ValueError):
    """The bench refused something: a deal suite that is not the frozen one, a track or agent it cannot
    play, a journal of another run, a card it cannot read, or a run that stopped (an agent that crashed or
    ran past the move time limit: the message names the opponent, the deal and the move)."""
