"""Observations of ``python_allfives`` for OpenSpiel: tensors built from ``allfives_v0``'s slices, and strings.

The tensor is one flat ``float32`` vector of named pieces (OpenSpiel's ``PyObserver`` reads
``observer.dict``). The pieces are the ``allfives_v0`` observation slices of
:class:`~allfives_env.encoding.ObservationEncoder` (``hand``, ``board``, ``ends``, ``spinner``,
``count``, ``boneyard``, ``hand_sizes``, ``voids``, ``scores``, ``scored``, ``partners``, ``lead``; see
that module for their meaning), ego-centric as there, plus:

==============  ==========  ==============================================================
piece           size        meaning
==============  ==========  ==============================================================
``to_act``      P           1 at the relative seat to act (all zero at chance and terminal nodes)
``history``     M x (P+8+T) information-state tensors only: the current hand's events in order,
                            one row each: relative seat (P), kind (play, forced draw, chosen
                            draw, pass), slot (W, E, N, S), tile (T; the observer's own draws
                            only, other seats' drawn tiles stay hidden). M bounds a hand's events.
==============  ==========  ==============================================================

A public observer (``private_info=NONE``) leaves out ``hand``; a private-only one
(``public_info=False``) keeps only ``hand``. Earlier hands enter the information-state tensor through
the scores only (they cannot change how the game goes on); the information-state **string** is exact
perfect recall: every event of the episode as the player saw it, with its own deals and draws.

At a chance node the pieces describe the game as far as it has got (the table before a deal, the
boneyard before a draw); while the very first hand is dealt, only the player's tiles dealt so far.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ..core.actions import action_name
from ..core.events import Draw, HandStart, Pass, Play, Settlement, public_view
from ..core.game import Game
from ..core.tiles import tile_set
from ..encoding import ObservationEncoder
from .params import GameConfig
from .track import Track

_SLOTS = "WENS"
_KINDS = 4  # play, forced draw, chosen draw, pass


def history_rows(config: GameConfig) -> int:
    """Rows of the ``history`` piece: plays (one per tile), draws (one per boneyard tile), and passes
    (at most one per seat between two plays, plus one per draw when a draw cap forces a pass)."""
    r = config.rules
    return r.tile_count + 2 * r.boneyard_size + r.num_players * (r.tile_count + 1)


class AllFivesObserver:
    """OpenSpiel's Python observer interface (``tensor``, ``dict``, ``set_from``, ``string_from``)."""

    def __init__(self, config: GameConfig, iig_obs_type: Any = None, params: Any = None) -> None:
        if params:
            from ..core.errors import RulesError

            raise RulesError(f"python_allfives observers take no parameters, got {params!r}")
        perfect_recall = bool(getattr(iig_obs_type, "perfect_recall", False))
        public = bool(getattr(iig_obs_type, "public_info", True))
        private = getattr(iig_obs_type, "private_info", None)
        private_name = getattr(private, "name", "SINGLE_PLAYER") if private is not None else "SINGLE_PLAYER"
        self.config = config
        self.perfect_recall = perfect_recall
        self.public = public
        self.private = private_name == "SINGLE_PLAYER"
        self.encoder = ObservationEncoder(config.rules)
        P = config.rules.num_players
        T = config.rules.tile_count
        pieces: list[tuple[str, int, tuple[int, ...]]] = []
        for name, sl in self.encoder.slices.items():
            size = sl.stop - sl.start
            if name == "hand" and not self.private:
                continue
            if name != "hand" and not public:
                continue
            pieces.append((name, size, (size,)))
        if public:
            pieces.append(("to_act", P, (P,)))
            if perfect_recall:
                self.rows = history_rows(config)
                self.row_size = P + _KINDS + 4 + T
                pieces.append(("history", self.rows * self.row_size, (self.rows, self.row_size)))
        self.pieces = pieces
        self.tensor = np.zeros(sum(size for _, size, _ in pieces), np.float32)
        self.dict: dict[str, np.ndarray] = {}
        index = 0
        for name, size, shape in pieces:
            self.dict[name] = self.tensor[index:index + size].reshape(shape)
            index += size

    # ------------------------------------------------------------------ tensors
    def set_from(self, state: Any, player: int) -> None:
        """Fill ``tensor`` with ``state`` as ``player`` sees it."""
        track: Track = state.track
        self.tensor.fill(0.0)
        game = track.view_game
        P = self.config.rules.num_players
        if game is None:
            if "hand" in self.dict:
                h = self.config.rules.hand_size
                for i, t in enumerate(track.deal_so_far()):
                    if i // h == player:
                        self.dict["hand"][t] = 1.0
            return
        full = self.encoder.encode(game, player)
        for name, sl in self.encoder.slices.items():
            if name in self.dict:
                self.dict[name][:] = full[sl]
        if "to_act" in self.dict and not track.is_chance and game.current >= 0:
            self.dict["to_act"][(game.current - player) % P] = 1.0
        if "history" in self.dict:
            self._write_history(game, player)

    def _write_history(self, game: Game, player: int) -> None:
        P = self.config.rules.num_players
        rows = self.dict["history"]
        start = game.hand_records[-1].first_event + 1 if game.hand_records else len(game.events)
        r = 0
        for e in game.events[start:]:
            if type(e) is Play:
                col, tile, slot = 0, e.tile, e.slot
            elif type(e) is Draw:
                col, tile, slot = (1 if e.forced else 2), (e.tile if e.seat == player else -1), -1
            elif type(e) is Pass:
                col, tile, slot = 3, -1, -1
            else:
                continue
            if r >= self.rows:  # pragma: no cover - history_rows bounds a hand
                break
            row = rows[r]
            row[(e.seat - player) % P] = 1.0
            row[P + col] = 1.0
            if slot >= 0:
                row[P + _KINDS + slot] = 1.0
            if tile >= 0:
                row[P + _KINDS + 4 + tile] = 1.0
            r += 1

    # ------------------------------------------------------------------ strings
    def string_from(self, state: Any, player: int) -> str:
        """The information-state string (perfect recall) or the observation string, by the observer's type."""
        track: Track = state.track
        if self.perfect_recall:
            return information_state_string(track, player, self.private, self.public)
        return observation_string(track, player, self.private, self.public)


def _names(tiles: Any, ids: Any) -> str:
    return " ".join(tiles.name(t) for t in ids) or "-"


@lru_cache(maxsize=65536)
def _event_line(event: Any, max_pip: int) -> str:
    """One event as a line (events are values, so the text is cached: strings are asked for often)."""
    tiles = tile_set(max_pip)
    kind = type(event)
    if kind is Play:
        return f"{event.seat}: {action_name(event.tile * 4 + event.slot, tiles)} count {event.count} +{event.points}"
    if kind is Draw:
        what = tiles.name(event.tile) if event.tile >= 0 else "?"
        return f"{event.seat}: draws {what}{'' if event.forced else ' (chosen)'}"
    if kind is Pass:
        return f"{event.seat}: passes"
    if kind is HandStart:
        return f"hand {event.hand}: seat {event.leader} leads, scores {list(event.scores)}"
    if kind is Settlement:
        return (f"hand {event.hand} {event.result}: pips {list(event.pips)} deltas {list(event.deltas)} "
                f"scores {list(event.scores)}")
    return f"game over: winner side {event.winner}, scores {list(event.scores)}"


def event_lines(game: Game, player: int, private: bool = True) -> list[str]:
    """Every event of ``game`` as ``player`` saw it, one line each, with its deal at each hand start."""
    tiles = game.tiles
    max_pip = tiles.max_pip
    viewer = player if private else None
    lines = []
    for e in game.events:
        if type(e) is Draw:
            e = public_view(e, viewer)
        lines.append(_event_line(e, max_pip))
        if type(e) is HandStart and private:
            deal = game.hand_records[e.hand - 1].hands[player]
            lines.append(f"you were dealt {_names(tiles, sorted(deal))}")
    return lines


def _pending_lines(track: Track, player: int, private: bool) -> list[str]:
    """At a chance node: what happened since the last event the game logged (the deal so far, a chosen
    draw whose tile is not known yet)."""
    if not track.is_chance:
        return []
    tiles = tile_set(track.rules.max_pip)
    lines = []
    dealt = track.deal_so_far()
    if dealt:
        h = track.rules.hand_size
        mine = sorted(t for i, t in enumerate(dealt) if i // h == player) if private else []
        lines.append(f"dealing: {len(dealt)} tiles dealt, yours so far {_names(tiles, mine)}")
    node = track.game.chance_node
    if node is not None and node.kind == "draw" and not node.forced:  # the tile is chance's to decide yet
        lines.append(f"{node.seat}: draws (chosen)")
    return lines


def information_state_string(track: Track, player: int, private: bool = True, public: bool = True) -> str:
    """``player``'s whole history as it saw it: deals, plays, draws, passes, settlements."""
    lines = [f"seat {player}"]
    game = track.view_game
    if game is not None:
        lines.extend(event_lines(game, player, private))
    lines.extend(_pending_lines(track, player, private))
    if not public:
        lines = [line for line in lines if line.startswith(("seat", "you", "dealing"))]
    return "\n".join(lines)


def observation_string(track: Track, player: int, private: bool = True, public: bool = True) -> str:
    """The position now as ``player`` sees it (no history): table, scores, sizes, own tiles."""
    game = track.view_game
    tiles = tile_set(track.rules.max_pip)
    if game is None:
        dealt = track.deal_so_far()
        h = track.rules.hand_size
        mine = sorted(t for i, t in enumerate(dealt) if i // h == player) if private else []
        return f"seat {player} | dealing hand 1 | yours so far {_names(tiles, mine)}"
    parts = [f"seat {player}"]
    if public:
        board = game.board
        ends = " ".join(f"{_SLOTS[s]}={board.ends[s]}" for s in board.open_slots) if board.size else "empty"
        to_act = "chance" if track.is_chance else ("over" if game.over else str(game.current))
        parts += [f"hand {game.hand_number}", f"to act {to_act}", f"scores {game.scores}",
                  f"table {_names(tiles, [t for t, _ in game.played])}", f"ends {ends} count {game.count()}",
                  f"sizes {game.hand_sizes()}", f"boneyard {game.boneyard_size}"]
    if private:
        parts.append(f"yours {_names(tiles, game.hand(player))}")
    return " | ".join(parts)


def position_summary(track: Track) -> str:
    """Everything about a state, hidden tiles included (OpenSpiel's ``ToString``, for debugging)."""
    game = track.view_game
    head = f"history {track.history}"
    if game is None:
        return head
    tiles = game.tiles
    hands = " / ".join(_names(tiles, game.hand(s)) for s in range(game.num_players))
    node = "chance" if track.is_chance else ("terminal" if game.over else f"seat {game.current}")
    return f"{head}\nnode {node} | hand {game.hand_number} | scores {game.scores} | hands {hands}"
