"""Errors: the exceptions of the evaluation harness.

:class:`EvaluationError` is a run that cannot be done as asked (bad input: refused before any game).
The two others stop a run that was under way: :class:`MoveTimeLimitError`, an agent that took longer than
the run's move time limit (an :class:`~allfives_env.core.errors.AgentError`, like an agent's own
exception), and :class:`WorkerDiedError`, a worker process that ended abruptly. Both carry what they
name as attributes too, which survive pickling (an exception pickles its ``__dict__``), so an error
raised in a worker process arrives whole. The first two are defined with the package's other errors in
:mod:`allfives_env.core.errors` (one game's play raises them below this package) and re-exported here.
"""

from __future__ import annotations

from typing import Any, Optional

from ..core.errors import AllFivesError, EvaluationError, MoveTimeLimitError

__all__ = ["EvaluationError", "MoveTimeLimitError", "WorkerDiedError"]


class WorkerDiedError(AllFivesError, RuntimeError):
    """A worker process of a run ended abruptly (killed, out of memory, ``os._exit``, or stopped after a move
    stuck past its time limit in native code); the run stops at once instead of waiting for it.

    Attributes: ``pid`` and ``exitcode`` of the worker (None where the pool cannot tell which one died),
    ``sets`` (the ``(match-up index, set index)`` it was playing), ``finished_sets`` / ``total_sets``,
    ``finished_games`` and ``finished``: per match-up, the :class:`~allfives_env.evaluation.GameRecord` of
    every duplicate set that had finished, ordered by set (nothing else is lost with the worker)."""

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.pid: Optional[int] = details.get("pid")
        self.exitcode: Optional[int] = details.get("exitcode")
        self.sets: list[tuple[int, int]] = list(details.get("sets", []))
        self.finished_sets: int = details.get("finished_sets", 0)
        self.total_sets: int = details.get("total_sets", 0)
        self.finished_games: int = details.get("finished_games", 0)
        self.finished: list[list[Any]] = details.get("finished", [])
