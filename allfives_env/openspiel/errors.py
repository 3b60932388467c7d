"""The errors of the OpenSpiel bridge: what a caller can catch besides the core's own.

Bad game parameters raise the core's :class:`~allfives_env.core.errors.RulesError`, illegal actions its
:class:`~allfives_env.core.errors.IllegalActionError`, corrupt serialized states its
:class:`~allfives_env.core.errors.ReplayError`. Two things are this bridge's own: OpenSpiel not being
installed (an ``ImportError`` too, so ``except ImportError`` keeps working), and a request the game
cannot answer at this node (resampling at a chance node) or with these arguments (a player id that is
not a seat).
"""

from __future__ import annotations

from ..core.errors import AllFivesError

#: What to run when pyspiel is missing.
INSTALL_HINT = 'pip install -e ".[openspiel]"  (installs open_spiel==2.0.2)'


class OpenSpielUnavailableError(AllFivesError, ImportError):
    """OpenSpiel (the ``pyspiel`` module) is not installed: the game and the OpenSpiel agents need it."""


class OpenSpielStateError(AllFivesError, ValueError):
    """A state method asked at a node where it has no answer (e.g. resampling at a chance node), or given
    arguments it cannot take (a player id that is not a seat, a sampler that is not callable)."""


def unavailable(exc: BaseException) -> OpenSpielUnavailableError:
    """The error to raise when importing pyspiel failed with ``exc``."""
    return OpenSpielUnavailableError(
        f"OpenSpiel is not installed (import pyspiel failed: {exc}); install the extra: {INSTALL_HINT}"
    )
