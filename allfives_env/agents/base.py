"""The agent protocol: what a player may see (:class:`PlayerView`) and how it answers (:class:`Agent`).

Every agent, scripted or learned, is an object with ``act(view) -> action id`` and ``reset(seed)``.
A :class:`PlayerView` is the seat's window on the game: its own hand, the table, the public event log,
hand sizes, scores, known voids, and the env observation and mask for learned agents. It never exposes
another seat's tiles or the boneyard order; only :class:`OracleView`, which the harness hands to agents
that declare ``uses_hidden_information = True`` (analysis only), does.

Agents own a seeded ``numpy.random.Generator`` (``self.rng``) and never touch global randomness, so a
match is reproducible from its seeds.
"""

from __future__ import annotations

import functools
import inspect
import json
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from ..core.board import Board
from ..core.events import Event, public_view
from ..core.game import Game
from ..core.rules import Rules
from ..core.tiles import TileSet

if TYPE_CHECKING:  # pragma: no cover
    from ..encoding import ObservationEncoder


class PlayerView:
    """Read-only public information for ``seat`` in ``game`` (valid until the game moves on).

    ``board`` is the live table: read it, never mutate it (copy it to try moves, or use
    :meth:`Board.count_after`).
    """

    __slots__ = ("_game", "seat", "_encoder")

    def __init__(self, game: Game, seat: int, encoder: Optional["ObservationEncoder"] = None) -> None:
        self._game = game
        self.seat = seat
        self._encoder = encoder

    # ------------------------------------------------------------------ the seat itself
    @property
    def rules(self) -> Rules:
        return self._game.rules

    @property
    def tiles(self) -> TileSet:
        return self._game.tiles

    @property
    def side(self) -> int:
        """This seat's scoring side."""
        return self._game.side_of[self.seat]

    @property
    def side_of(self) -> tuple[int, ...]:
        """Scoring side of every seat."""
        return self._game.side_of

    @property
    def num_players(self) -> int:
        return self._game.num_players

    @property
    def hand_mask(self) -> int:
        """Own tiles as a bit mask (bit t = tile id t)."""
        return self._game.hands[self.seat]

    @property
    def hand(self) -> list[int]:
        """Own tile ids, ascending."""
        return self._game.tiles.tiles_of(self._game.hands[self.seat])

    @property
    def legal(self) -> list[int]:
        """Legal action ids, ascending (empty unless this seat is to act)."""
        return sorted(self._game.legal) if self._game.current == self.seat else []

    @property
    def draw_action(self) -> int:
        """The id of "draw" under ``may_draw_when_able``, else -1."""
        return self._game.draw_action

    # ------------------------------------------------------------------ the table and the log
    @property
    def board(self) -> Board:
        return self._game.board

    @property
    def count(self) -> int:
        return self._game.count()

    @property
    def played(self) -> list[tuple[int, int]]:
        """(tile, seat) of every tile on the table, in the order played."""
        return list(self._game.played)

    @property
    def played_mask(self) -> int:
        """Tiles on the table as a bit mask."""
        mask = 0
        for tile, _ in self._game.played:
            mask |= 1 << tile
        return mask

    @property
    def unseen_mask(self) -> int:
        """Tiles this seat cannot see: in other hands or in the boneyard."""
        return self._game.tiles.full_mask & ~self.hand_mask & ~self.played_mask

    @property
    def events(self) -> list[Event]:
        """The public event log of the whole game, other seats' drawn tiles hidden."""
        seat = self.seat
        return [public_view(e, seat) for e in self._game.events]

    @property
    def hand_sizes(self) -> list[int]:
        return self._game.hand_sizes()

    @property
    def boneyard_size(self) -> int:
        return self._game.boneyard_size

    @property
    def drawable(self) -> int:
        """Tiles that may still be drawn (boneyard minus the reserve)."""
        return self._game.drawable

    @property
    def voids(self) -> list[int]:
        """Per seat, a bit mask of pip values that seat is known not to hold."""
        return list(self._game.voids)

    @property
    def scores(self) -> list[int]:
        """Per side."""
        return list(self._game.scores)

    @property
    def is_in(self) -> list[bool]:
        """Per side: has scored already (matters under ``min_first_score``)."""
        return list(self._game.is_in)

    @property
    def hand_number(self) -> int:
        return self._game.hand_number

    @property
    def current_player(self) -> int:
        return self._game.current

    # ------------------------------------------------------------------ learned agents
    def observation(self, encoder: Optional["ObservationEncoder"] = None) -> np.ndarray:
        """The env observation vector of this seat, by ``encoder`` (default: the view's own, or the
        plain encoder of the rules). A policy trained with other options (the action features) passes
        its own encoder."""
        return (encoder or self._require_encoder()).encode(self._game, self.seat)

    def action_mask(self, encoder: Optional["ObservationEncoder"] = None) -> np.ndarray:
        """The env action mask of this seat."""
        return (encoder or self._require_encoder()).action_mask(self._game, self.seat)

    def _require_encoder(self) -> "ObservationEncoder":
        if self._encoder is None:
            from ..encoding import ObservationEncoder

            self._encoder = ObservationEncoder(self._game.rules)
        return self._encoder

    # ------------------------------------------------------------------ search
    def determinized(self, other_hands: dict[int, int], boneyard: list[int]) -> Game:
        """A search copy of the game (:meth:`Game.fork`) in which every hidden part is replaced: each
        other seat's hand by ``other_hands[seat]`` (a bit mask) and the boneyard by ``boneyard`` (index 0
        drawn first). Nothing of the real hidden state survives in the copy."""
        game = self._game
        fork = game.fork()
        for seat in range(game.num_players):
            if seat != self.seat:
                fork.hands[seat] = other_hands[seat]
        fork._stock = list(reversed(boneyard))
        return fork


class OracleView(PlayerView):
    """A view that also exposes the true game (other hands, boneyard order). Only for agents that
    declare ``uses_hidden_information = True``, as an upper reference in analysis."""

    __slots__ = ()

    @property
    def game(self) -> Game:
        return self._game


class Agent:
    """Base class of every agent. Subclasses implement :meth:`act`.

    ``name`` is the registry name; ``params`` the keyword arguments it was built with that differ from
    the subclass's defaults (so a worker process can rebuild it from :meth:`spec`, and specs stay short):
    subclasses pass every parameter to ``super().__init__`` and the defaults are dropped here.
    ``uses_hidden_information`` is True only for analysis oracles.
    """

    name = "agent"
    uses_hidden_information = False

    def __init__(self, seed: Optional[int] = None, **params: Any) -> None:
        defaults = _init_defaults(type(self))
        self.params = {k: v for k, v in params.items() if k not in defaults or defaults[k] != v}
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: Optional[int] = None) -> None:
        """Start a new game; reseed the agent's own generator (None keeps it running)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, view: PlayerView) -> int:
        """Return a legal action id for ``view.seat``."""
        raise NotImplementedError

    def __call__(self, view: PlayerView) -> int:
        return self.act(view)

    def spec(self) -> str:
        """A string that :func:`allfives_env.agents.make_agent` turns back into this agent."""
        if not self.params:
            return self.name
        return self.name + ":" + ",".join(f"{k}={_spec_value(v)}" for k, v in sorted(self.params.items()))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec()}>"


@functools.lru_cache(maxsize=None)
def _init_defaults(cls: type) -> dict[str, Any]:
    """The keyword defaults of ``cls.__init__``."""
    return {
        name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def _spec_value(value: Any) -> str:
    """A parameter as the registry reads it back: JSON for numbers, booleans and null, strings as they are."""
    return value if isinstance(value, str) else json.dumps(value)
