"""What one seat may see of a game: :class:`PlayerView`, the only window agents get on the table.

Information hiding is structural: a view holds the game privately and answers only public questions
(its own hand, the table, the public event log, hand sizes, scores, known voids, the boneyard's size),
so an agent written against the view's public API cannot reach another seat's tiles or the boneyard
order. Search gets the same protection: :meth:`PlayerView.determinized` hands out a copy of the game in
which every hidden part has been replaced by a guess. Only :class:`OracleView`, which the harness gives
to agents that declare ``uses_hidden_information = True`` (analysis only), exposes the game itself.

The view lives in the core, below the position analysis, the observation encoder and the agents, because
all three read positions through it.
"""

from __future__ import annotations

from typing import Mapping, Optional, Protocol, Sequence

import numpy as np

from .board import Board
from .errors import AllFivesError
from .events import Event, public_events
from .game import Game
from .rules import Rules
from .tiles import TileSet

class Encoder(Protocol):
    """What a view needs of an observation encoder (:class:`allfives_env.encoding.ObservationEncoder`):
    named here so that the core does not import the encoder, which is built on the core."""

    def encode(self, game: Game, seat: int) -> np.ndarray: ...

    def action_mask(self, game: Game, seat: int) -> np.ndarray: ...


class PlayerView:
    """Read-only public information for ``seat`` in ``game`` (valid until the game moves on).

    ``board`` is the live table: read it, never mutate it (copy it to try moves, or use
    :meth:`count_after`). ``encoder`` (an :class:`~allfives_env.encoding.ObservationEncoder`) is what
    :meth:`observation` and :meth:`action_mask` use when none is passed.
    """

    __slots__ = ("_game", "seat", "_encoder")

    def __init__(self, game: Game, seat: int, encoder: Optional[Encoder] = None) -> None:
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

    def count_after(self, tile: int, slot: int) -> int:
        """The count the ends would show after ``tile`` is placed on ``slot`` (the caller checked it is legal)."""
        return self._game.board.count_after(tile, slot)

    def points_for_count(self, seat: int, count: int, is_lead: bool = False) -> int:
        """The points ``seat``'s side would be credited for a play making ``count`` now (every rule that
        gates scoring applied: ``lead_scores``, ``score_unit``, ``min_first_score``, ``exact_target``)."""
        return self._game.points_for_count(seat, count, is_lead)

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
        return public_events(self._game.events, self.seat)

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
    def observation(self, encoder: Optional[Encoder] = None) -> np.ndarray:
        """The env observation vector of this seat, by ``encoder`` (default: the view's own). A policy
        trained with other options (the action features) passes its own encoder."""
        return self._encoder_or(encoder).encode(self._game, self.seat)

    def action_mask(self, encoder: Optional[Encoder] = None) -> np.ndarray:
        """The env action mask of this seat."""
        return self._encoder_or(encoder).action_mask(self._game, self.seat)

    def _encoder_or(self, encoder: Optional[Encoder]) -> Encoder:
        chosen = encoder if encoder is not None else self._encoder
        if chosen is None:
            raise AllFivesError(
                "this PlayerView was built without an ObservationEncoder: pass one, view.observation(encoder), "
                "or take the view from env.unwrapped.player_view(agent), which carries the env's"
            )
        return chosen

    # ------------------------------------------------------------------ search
    def determinized(self, other_hands: Mapping[int, int], boneyard: Sequence[int]) -> Game:
        """A search copy of the game (:meth:`Game.fork`) in which every hidden part is replaced: each
        other seat's hand by ``other_hands[seat]`` (a bit mask) and the boneyard by ``boneyard`` (index 0
        drawn first). Nothing of the real hidden state survives in the copy."""
        fork = self._game.fork()
        fork.replace_hidden(self.seat, other_hands, boneyard)
        return fork


class OracleView(PlayerView):
    """A view that also exposes the true game (other hands, boneyard order). Only for agents that
    declare ``uses_hidden_information = True``, as an upper reference in analysis."""

    __slots__ = ()

    @property
    def game(self) -> Game:
        return self._game
