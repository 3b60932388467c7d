"""The exceptions of All Fives.

Every error the library raises on bad input is one of these, and each is also a ``ValueError`` so that
callers who only know the standard library can still catch them. Messages always say what was wrong and
what would have been allowed, because a user staring at a traceback should not need the source to fix it.
"""

from __future__ import annotations


class AllFivesError(Exception):
    """Base class of every error raised by the All Fives engine and environment."""


class RulesError(AllFivesError, ValueError):
    """An invalid rules option, or a combination of options that cannot be played."""


class DealError(AllFivesError, ValueError):
    """A fixed deal (hands, boneyard, leader, scores) that does not fit the rules or the tile set."""


class IllegalActionError(AllFivesError, ValueError):
    """An action id that is out of range or not legal in the current position."""


class GameOverError(AllFivesError, RuntimeError):
    """A move was asked of a game that has already ended."""


class ReplayError(AllFivesError, ValueError):
    """A replay record that is corrupt, foreign, or does not follow from the rules."""
