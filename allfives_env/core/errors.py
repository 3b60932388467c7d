"""The exceptions of All Fives.

Every error the library raises on bad input is one of these, and each is also a ``ValueError`` so that
callers who only know the standard library can still catch them. Messages always say what was wrong and
what would have been allowed, because a user staring at a traceback should not need the source to fix it.
"""

from __future__ import annotations

import reprlib

class _BoundedRepr(reprlib.Repr):
    def repr_int(self, value: int, level: int) -> str:
        if abs(value) >= 10**40:  # str() of a huge int is slow, and refused past 4300 digits
            return f"<an integer of about {int(abs(value).bit_length() * 0.30103) + 1} digits>"
        return repr(value)


_REPR = _BoundedRepr()
_REPR.maxlevel = 3
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlong = 40


def short_repr(value: object) -> str:
    """A bounded ``repr`` for error messages: deep nesting, huge numbers and long strings from a hostile
    file are cut, so describing bad input can neither recurse without end nor flood the terminal."""
    try:
        return _REPR.repr(value)
    except Exception:  # a value whose own __repr__ fails still gets a message
        return f"<{type(value).__name__}>"


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


class SeedError(AllFivesError, ValueError):
    """A seed that is not None or an integer from 0 to 2**63-1 (:data:`~allfives_env.core.seeds.MAX_SEED`)."""


class NotResetError(AllFivesError, RuntimeError):
    """An environment was stepped, observed or rendered before its first ``reset()``."""


class BatchError(AllFivesError, ValueError):
    """A batch engine built or asked with invalid arguments (the number of games, a flag, a game index)."""


class BatchIndexError(BatchError, IndexError):
    """A game index outside a batch."""


class AgentError(AllFivesError, ValueError):
    """An unknown agent name, or parameters the agent does not take. (Defined here, with the other typed
    errors, so that the batch agents raise it without importing the agents package; the registry
    re-exports it.)"""


class EvaluationError(AllFivesError, ValueError):
    """A match-up or tournament that cannot be run as asked, or a file that is not a saved result. (Defined
    here, like :class:`AgentError`, so that one game's play (``allfives_env.match``) raises it without
    importing the evaluation package above it; :mod:`allfives_env.evaluation.errors` re-exports it.)"""


class MoveTimeLimitError(AgentError):
    """An agent took longer than the move time limit over one move (or never returned).

    Attributes: ``agent`` (its spec), ``seat``, ``move`` (the game's move number, from 1), ``limit``
    (seconds) and ``seeds`` (``{"game": ..., "deal": ..., "agent": ...}``: replay the game with them)."""
