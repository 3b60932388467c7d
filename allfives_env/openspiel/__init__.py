"""All Fives in OpenSpiel: the ``python_allfives`` game, and OpenSpiel's search bots as our agents.

``import allfives_env.openspiel`` registers ``python_allfives`` with pyspiel (like OpenSpiel's own
``open_spiel.python.games``), after which ``pyspiel.load_game("python_allfives", {"players": 4})``
works. It needs the optional extra: ``pip install -e ".[openspiel]"``; without it, importing this
package raises :class:`OpenSpielUnavailableError` (an ``ImportError``) saying so. ``import allfives_env``
never imports pyspiel.

Modules, one job each: :mod:`.params` (parameters, checks, bounds), :mod:`.track` (the core game
under explicit chance nodes; serialization), :mod:`.sampler` (guessing a hand's hidden past),
:mod:`.resample` (``resample_from_infostate``), :mod:`.observer` (tensors and strings), :mod:`.game`
(the pyspiel classes and the registration), :mod:`.position` (a state for an agent's view),
:mod:`.bots` (``openspiel-ismcts`` and ``openspiel-mcts``). The agent registry names the bots by the path
of :mod:`.bots` and imports it only when one is built, so ``make_agent("openspiel-ismcts")`` works without
importing this package first, and nothing below this package imports it.
"""

from __future__ import annotations

from .errors import INSTALL_HINT, OpenSpielStateError, OpenSpielUnavailableError, unavailable

try:
    import pyspiel  # noqa: F401
except ImportError as _exc:
    raise unavailable(_exc) from None

from .game import GAME_TYPE, SHORT_NAME, AllFivesGame, AllFivesState, load_game  # noqa: E402  (registers the game)
from .params import DEFAULTS, GameConfig, make_config  # noqa: E402

__all__ = [
    "AllFivesGame", "AllFivesState", "DEFAULTS", "GAME_TYPE", "GameConfig", "INSTALL_HINT", "OpenSpielStateError",
    "OpenSpielUnavailableError", "SHORT_NAME", "load_game", "make_config",
]
