"""Errors: the one exception of the evaluation harness, raised for a run that cannot be done as asked."""

from __future__ import annotations

from ..core.errors import AllFivesError


class EvaluationError(AllFivesError, ValueError):
    """A match-up or tournament that cannot be run as asked, or a file that is not a saved result."""
