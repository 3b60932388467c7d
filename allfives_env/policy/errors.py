"""The one error of trained-policy files: :class:`PolicyError`."""

from __future__ import annotations

from ..core.errors import AllFivesError


class PolicyError(AllFivesError, ValueError):
    """A policy file that cannot be read, is not a policy file, or does not fit the game."""
