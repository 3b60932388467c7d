"""The engine under the OpenSpiel state: the core :class:`~allfives_env.core.game.Game`, driven by chance
outcomes that arrive one at a time.

The core deals, picks random leaders and draws from the boneyard inside ``Game.step``; OpenSpiel wants
each of those random events as a chance node of its own. So the core gets a random source that knows
only the chance outcomes decided so far (:class:`_Feed`, standing in for its ``numpy`` generator and
for the top of the boneyard). When the core asks for one more, the feed raises :class:`_NeedChance`:
the step stops half done and the state becomes a chance node. A copy of the game from before the step
(the checkpoint) is kept; once chance has answered, the step is run again on a fresh copy of it, with
the feed now knowing the answer. Rerunning is exact because the core is deterministic given its random
draws. So the rules stay the core's alone: nothing here re-implements them.

Chance outcomes (see :mod:`.params` for the action ids):

* **the deal**: one node per dealt tile, seat 0's tiles first, then seat 1's, ... Each seat's tiles come
  in ascending id order, so a hand is dealt by exactly one sequence; the probability of each next tile is
  its exact conditional probability under a uniformly random hand (``C(tiles above it, k-1) /
  C(tiles left above the last one, k)`` with ``k`` tiles still to give that seat).
* **a random leader** (``first_leader="random"``, or a random ``after_block``): one node, outcome
  ``tile_count + i`` for the core's draw ``i`` of ``k`` (a seat, or a pick among the tied seats).
* **every boneyard draw**, forced or chosen: one node whose outcomes are the boneyard's tiles, uniform.

Forced passes are automatic, as in the core: a seat with no placement and nothing to draw is passed
over, and the pass is in the event log (and so in the information-state strings). A seat is never asked
to act without a choice.
"""

from __future__ import annotations

import json
from functools import lru_cache
from math import comb
from typing import Any, Optional

import numpy as np

from ..core.actions import action_name
from ..core.errors import IllegalActionError, ReplayError, short_repr
from ..core.events import HandStart
from ..core.game import Game, HandRecord
from ..core.outcome import side_rewards
from .params import GameConfig, make_config

#: The ``format`` field of a serialized state.
STATE_FORMAT = "allfives-openspiel-state"
STATE_VERSION = 1
#: The most characters a serialized state may have (a 200-hand double-twelve game is far below it).
MAX_STATE_CHARS = 5_000_000


class _NeedChance(Exception):
    """The core asked for a random outcome chance has not decided yet (internal control flow)."""

    def __init__(self, kind: str, info: Any) -> None:
        super().__init__(kind)
        self.kind = kind  # "deal", "pick" or "draw"
        self.info = info  # deal: the tiles taken so far; pick: k; draw: the boneyard's tiles


#: The bit generator every feed carries (never drawn from: a feed answers from its outcomes); one shared
#: instance, since seeding a new one costs more than the rest of a step.
_BITS = np.random.PCG64(0)


class _Feed(np.random.Generator):
    """The core's random source: answers from the chance outcomes decided so far, in the order the core
    asks, and raises :class:`_NeedChance` past them. It is a ``Generator`` so the core takes it as its
    ``rng``; the boneyard (:class:`_Boneyard`) asks it which tile is drawn."""

    def __init__(self, outcomes: list[int], tile_count: int, dealt: int) -> None:
        super().__init__(_BITS)
        self.outcomes = outcomes
        self.pos = 0
        self.tile_count = tile_count
        self.dealt = dealt  # tiles in all hands together

    def _next(self, kind: str, info: Any) -> int:
        if self.pos >= len(self.outcomes):
            raise _NeedChance(kind, info)
        value = self.outcomes[self.pos]
        self.pos += 1
        return value

    def permutation(self, x: Any, *args: Any, **kwargs: Any) -> np.ndarray:  # type: ignore[override]
        """The deal: the hands' tiles in deal order, then the rest (the boneyard, whose order is chance's
        to decide draw by draw)."""
        taken: list[int] = []
        while len(taken) < self.dealt:
            taken.append(self._next("deal", tuple(taken)))
        chosen = set(taken)
        return np.array(taken + [t for t in range(int(x)) if t not in chosen])

    def integers(self, low: Any, *args: Any, **kwargs: Any) -> int:  # type: ignore[override]
        """A random leader: the core draws ``integers(k)``."""
        return self._next("pick", int(low)) - self.tile_count

    def draw(self, boneyard: list[int]) -> int:
        """The tile drawn from ``boneyard`` now."""
        return self._next("draw", tuple(sorted(boneyard)))


class _Boneyard(list):
    """The core's stock: the boneyard's tiles, in no particular order; ``pop`` asks the feed which one is
    drawn. Slices (the core copies the stock with ``[:]``) stay boneyards."""

    def __init__(self, tiles: Any = (), feed: Optional[_Feed] = None) -> None:
        super().__init__(tiles)
        self.feed = feed

    def pop(self, index: Any = -1) -> int:  # type: ignore[override]
        tile = self.feed.draw(self)  # type: ignore[union-attr]
        self.remove(tile)
        return tile

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return _Boneyard(list.__getitem__(self, index), self.feed)
        return list.__getitem__(self, index)


@lru_cache(maxsize=None)
def _empty_feed(tile_count: int, dealt: int) -> _Feed:
    """The feed of a game between chance nodes: it knows no outcome, so it raises at once and never changes."""
    return _Feed([], tile_count, dealt)


def copy_game(game: Game) -> Game:
    """An independent copy of a core game with its logs and its feed: ``Game.fork`` (the core's copy of
    everything mutable) with what a fork drops put back; the feed is shared or rebound by the caller."""
    other = game.fork()
    other.events = game.events[:]
    other.hand_records = game.hand_records[:]
    other.stop_after_hand = game.stop_after_hand
    other.rng = game.rng
    return other


class Track:
    """One OpenSpiel state's engine: the core game, the chance node in progress, and the history.

    At a player or terminal node ``game`` is the live core game. At a chance node ``need`` says what the
    core asked for; ``checkpoint`` is the game before the step that asked (None while the first hand is
    dealt), ``pending`` the player action to run again (None: start the game), ``outcomes`` chance's
    answers since the checkpoint, and ``partial`` the game as far as the step got (for observations).
    """

    __slots__ = ("config", "rules", "game", "partial", "checkpoint", "pending", "outcomes", "need", "history",
                 "hand_start", "hand_picks", "hand_cache")

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.rules = config.rules
        self.game: Optional[Game] = None
        self.partial: Optional[Game] = None
        self.checkpoint: Optional[Game] = None
        self.pending: Optional[int] = None
        self.outcomes: list[int] = []
        self.need: Optional[_NeedChance] = None
        self.history: list[int] = []
        self.hand_start = 0  # history index where the current hand's deal began
        self.hand_picks: list[int] = []  # the current hand's leader pick outcomes (0 or 1)
        self.hand_cache: Any = None  # the bridge's cached state at hand_start (shared by copies)
        # a new game's first request is always the first hand's deal (no core game is built until it is
        # dealt; draw_until_double, which could draw first, is refused by the parameters)
        self.need = _NeedChance("deal", ())

    # ------------------------------------------------------------------ copies
    def copy(self) -> "Track":
        """An independent copy (the checkpoint and the hand cache are never mutated, so they are shared)."""
        other = Track.__new__(Track)
        other.config = self.config
        other.rules = self.rules
        other.game = None if self.game is None else copy_game(self.game)  # the empty feed is shared
        other.partial = self.partial
        other.checkpoint = self.checkpoint
        other.pending = self.pending
        other.outcomes = self.outcomes[:]
        other.need = self.need
        other.history = self.history[:]
        other.hand_start = self.hand_start
        other.hand_picks = self.hand_picks[:]
        other.hand_cache = self.hand_cache
        return other

    def __deepcopy__(self, memo: dict) -> "Track":
        return self.copy()

    def __reduce__(self) -> tuple:
        """Pickles as its plain-text serialization (see :meth:`serialize`), never as live objects."""
        return (restore, (self.serialize(),))

    # ------------------------------------------------------------------ queries
    @property
    def is_chance(self) -> bool:
        return self.need is not None

    @property
    def is_terminal(self) -> bool:
        return self.need is None and self.game is not None and self.game.over

    @property
    def current_player(self) -> int:
        """The seat to act; -1 at a chance node; -4 when terminal (OpenSpiel's ids)."""
        if self.need is not None:
            return -1
        assert self.game is not None
        return -4 if self.game.over else self.game.current

    @property
    def view_game(self) -> Optional[Game]:
        """The game observations describe: the live game, or at a chance node the game as far as the
        interrupted step got (None while the first hand is being dealt)."""
        return self.game if self.need is None else self.partial

    def legal_actions(self) -> list[int]:
        if self.need is not None:
            return [a for a, _ in self.chance_outcomes()]
        assert self.game is not None
        return sorted(self.game.legal)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(outcome, probability) pairs of the chance node, ascending."""
        need = self.need
        assert need is not None
        if need.kind == "pick":
            k = need.info
            return [(self.rules.tile_count + i, 1.0 / k) for i in range(k)]
        if need.kind == "draw":
            p = 1.0 / len(need.info)
            return [(t, p) for t in need.info]
        return self._deal_outcomes(need.info)

    def _deal_outcomes(self, taken: tuple[int, ...]) -> list[tuple[int, float]]:
        """The next dealt tile: the lowest of the current seat's tiles still to deal (see module doc)."""
        h = int(self.rules.hand_size)  # type: ignore[arg-type]
        in_seat = len(taken) % h
        low = taken[-1] if in_seat else -1
        k = h - in_seat
        chosen = set(taken)
        above = [t for t in range(low + 1, self.rules.tile_count) if t not in chosen]
        total = comb(len(above), k)
        out = []
        for i, t in enumerate(above):
            ways = comb(len(above) - i - 1, k - 1)
            if ways:
                out.append((t, ways / total))
        return out

    def _possible(self, action: int) -> bool:
        """Whether ``action`` is an outcome of the current chance node (without listing them all)."""
        need = self.need
        assert need is not None
        if need.kind == "pick":
            return 0 <= action - self.rules.tile_count < need.info
        if need.kind == "draw":
            return action in need.info
        taken = need.info
        h = int(self.rules.hand_size)  # type: ignore[arg-type]
        in_seat = len(taken) % h
        if not 0 <= action < self.rules.tile_count or action in taken or (in_seat and action <= taken[-1]):
            return False
        above = sum(1 for t in range(action + 1, self.rules.tile_count) if t not in taken)
        return above >= h - in_seat - 1

    def deal_so_far(self) -> tuple[int, ...]:
        """At a deal or leader-pick node: the tiles dealt in this hand so far, in deal order."""
        need = self.need
        if need is None:
            return ()
        if need.kind == "deal":
            return need.info
        if need.kind == "pick":
            dealt = self.rules.num_players * int(self.rules.hand_size)  # type: ignore[arg-type]
            return tuple(self._deal_outcome_list()[:dealt])
        return ()

    def _deal_outcome_list(self) -> list[int]:
        """Outcomes since the checkpoint from the start of the pending hand's deal."""
        dealt = self.rules.num_players * int(self.rules.hand_size)  # type: ignore[arg-type]
        tiles = self.rules.tile_count
        # the deal is the run of tile outcomes right before the pick outcome(s)
        end = len(self.outcomes)
        while end and self.outcomes[end - 1] >= tiles:
            end -= 1
        return self.outcomes[end - dealt:end]

    def returns(self) -> list[float]:
        """Per player: 0 until the episode ends; then by ``returns`` (see :mod:`.params`)."""
        n = self.rules.num_players
        if not self.is_terminal:
            return [0.0] * n
        game = self.game
        assert game is not None
        side_of = game.side_of
        gains = [now - then for now, then in zip(game.scores, self.config.scores)]
        winner = game.winner
        sides = side_rewards(self.config.returns, gains, True, -1 if winner is None else winner,
                             hand=self.config.episode == "hand", scale=self.config.point_scale,
                             split_loss=True)
        return [sides[side_of[s]] for s in range(n)]

    def action_to_string(self, player: int, action: int) -> str:
        """Names of actions: ``6-4@E`` / ``draw`` for players, ``deal 6-4`` / ``draw 6-4`` / ``pick 2``
        for chance (by the kind of the current chance node; ``tile 6-4`` elsewhere)."""
        tiles = self.rules.tile_count
        ts = self.game.tiles if self.game is not None else None
        from ..core.tiles import tile_set

        ts = ts or tile_set(self.rules.max_pip)
        if player >= 0:
            return action_name(int(action), ts)
        if action >= tiles:
            return f"pick {action - tiles}"
        kind = self.need.kind if self.need is not None else "tile"
        return f"{kind} {ts.name(int(action))}"

    # ------------------------------------------------------------------ moving
    def apply(self, action: int) -> None:
        """Apply a chance outcome or a player action; refuse anything not legal here."""
        action = int(action)
        need = self.need
        if need is not None:
            if not self._possible(action):
                raise IllegalActionError(
                    f"chance outcome {action} is not possible at this chance node ({need.kind}); possible: "
                    f"{short_repr([a for a, _ in self.chance_outcomes()])}"
                )
            self.history.append(action)
            self.outcomes.append(action)
            if action >= self.rules.tile_count:
                self.hand_picks.append(action)
            dealt = self.rules.num_players * int(self.rules.hand_size)  # type: ignore[arg-type]
            if need.kind == "deal" and len(need.info) + 1 < dealt:
                self.need = _NeedChance("deal", need.info + (action,))  # the core asks for the whole deal at once
                return
            self._run()
            return
        game = self.game
        assert game is not None
        if game.over:
            raise IllegalActionError(f"action {action}: the episode is over (terminal state)")
        if action not in game.legal:
            raise IllegalActionError(game.illegal_message(action))
        self.history.append(action)
        if self._no_chance_after(game, action):
            game.step(action)
            return
        self.checkpoint = copy_game(game)
        self.pending = action
        self.outcomes = []
        try:
            game.step(action)
        except _NeedChance as need_exc:
            self._interrupted(game, need_exc)
            return
        self.checkpoint = None
        self.pending = None
        self._settled(game)

    @staticmethod
    def _no_chance_after(game: Game, action: int) -> bool:
        """Whether the step surely needs no chance outcome, so no checkpoint: a play that leaves the mover
        a tile (no hand end) after which the next seat can play (no draw). Most plays are such."""
        if action == game.draw_action:
            return False
        seat = game.current
        tile = action >> 2
        if game.hands[seat] == 1 << tile:
            return False
        board = game.board.copy()
        board.place(tile, action & 3)
        nxt = seat + 1 if seat + 1 < game.num_players else 0
        opens = board.open_values_mask()
        pip_mask = game.tiles.pip_mask
        held = game.hands[nxt]
        return any(held & pip_mask[v] for v in range(game.tiles.num_values) if opens >> v & 1)

    def _bound(self, game: Game, outcomes: list[int]) -> Game:
        """``game`` with a feed over ``outcomes`` as its random source and its boneyard's (no outcomes:
        the shared empty feed, which never changes since it only ever raises)."""
        r = self.rules
        if outcomes:
            feed = _Feed(outcomes, r.tile_count, r.num_players * int(r.hand_size))  # type: ignore[arg-type]
        else:
            feed = _empty_feed(r.tile_count, r.num_players * int(r.hand_size))  # type: ignore[arg-type]
        game.rng = feed
        stock = game.stock
        if isinstance(stock, _Boneyard):
            stock.feed = feed
        return game

    def _run(self) -> None:
        """(Re)run the pending operation from the checkpoint with the outcomes known so far."""
        outcomes = self.outcomes
        try:
            if self.checkpoint is None:
                r = self.rules
                feed = _Feed(outcomes, r.tile_count, r.num_players * int(r.hand_size))  # type: ignore[arg-type]
                game = Game(r, seed=feed, stop_after_hand=self.config.episode == "hand")
                self._start_scores(game)
            else:
                game = self._bound(copy_game(self.checkpoint), outcomes)
                game.step(self.pending)  # type: ignore[arg-type]
        except _NeedChance as need_exc:
            if need_exc.kind == "deal" and not need_exc.info:
                self.hand_start = len(self.history)
                self.hand_picks = []
                self.hand_cache = None
            self.need = need_exc
            self.partial = None if self.checkpoint is None else self._partial_after_failure()
            return
        assert game.rng.pos == len(outcomes), "chance outcomes left unused"
        self.need = None
        self.partial = None
        self.checkpoint = None
        self.pending = None
        self._settled(game)

    def _partial_after_failure(self) -> Game:
        """The game as far as the step gets with the outcomes known (it stops where the chance node is)."""
        game = self._bound(copy_game(self.checkpoint), self.outcomes)  # type: ignore[arg-type]
        try:
            game.step(self.pending)  # type: ignore[arg-type]
        except _NeedChance:
            pass
        return game

    def _interrupted(self, game: Game, need_exc: _NeedChance) -> None:
        """The player's step stopped at a chance node: ``game`` is as far as it got."""
        if need_exc.kind == "deal" and not need_exc.info:
            self.hand_start = len(self.history)
            self.hand_picks = []
            self.hand_cache = None
        self.need = need_exc
        self.partial = game
        self.game = None

    def _settled(self, game: Game) -> None:
        """A step ran to its end: a fresh hand gets a lazy boneyard, and the game no feed outcomes."""
        stock = game.stock
        if not isinstance(stock, _Boneyard):
            game.stock = _Boneyard(stock)
        self.game = self._bound(game, [])

    def _start_scores(self, game: Game) -> None:
        """Starting scores of the episode (``scores``/``scored``), written where the core keeps them: set
        after construction, because a mid-game position may hold scores a new game would refuse (a unique
        top score past the target under ``win_check="end_of_hand"``)."""
        scores = list(self.config.scores)
        if not any(scores) and not any(self.config.scored):
            return
        game.scores = scores
        game.is_in = list(self.config.scored)
        game.events[0] = HandStart(1, game.events[0].leader, tuple(scores))
        r = game.hand_records[0]
        game.hand_records[0] = HandRecord(r.hand, r.hands, r.boneyard, r.leader, tuple(scores), r.first_event,
                                          r.opening_drawer, r.redeals, r.leader_fixed)

    # ------------------------------------------------------------------ serialization
    def serialize(self) -> str:
        """Plain JSON: the format, the game parameters and the action history (chance and players)."""
        return json.dumps({"format": STATE_FORMAT, "version": STATE_VERSION, "params": self.config.as_dict(),
                           "history": self.history}, separators=(",", ":"), sort_keys=True)


def parse_state(text: Any, expected: Optional[GameConfig] = None) -> tuple[GameConfig, list[int]]:
    """The parameters and history of a serialized state, checked; :class:`ReplayError` for anything else
    (not a string, not JSON, another format or version, other game parameters than ``expected``)."""
    if not isinstance(text, str) or len(text) > MAX_STATE_CHARS:
        raise ReplayError(f"a serialized python_allfives state is a JSON string of at most {MAX_STATE_CHARS} "
                          f"characters, got {short_repr(text)}")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ReplayError(f"not a serialized python_allfives state (not JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("format") != STATE_FORMAT:
        raise ReplayError(f"not a serialized python_allfives state: expected a JSON object with "
                          f"format={STATE_FORMAT!r}, got {short_repr(data)}")
    if data.get("version") != STATE_VERSION:
        raise ReplayError(f"serialized state version {short_repr(data.get('version'))} is not supported "
                          f"(this library reads version {STATE_VERSION})")
    extra = sorted(set(data) - {"format", "version", "params", "history"})
    if extra:
        raise ReplayError(f"serialized state has unknown field(s) {short_repr(extra)}")
    params, history = data.get("params"), data.get("history")
    if not isinstance(params, dict):
        raise ReplayError(f"serialized state: 'params' must be an object, got {short_repr(params)}")
    if not isinstance(history, list) or not all(type(a) is int for a in history):
        raise ReplayError(f"serialized state: 'history' must be a list of integer actions, got {short_repr(history)}")
    try:
        config = make_config(params)
    except Exception as exc:
        raise ReplayError(f"serialized state: bad game parameters: {exc}") from None
    if expected is not None and config.params != expected.params:
        raise ReplayError("serialized state belongs to a game with other parameters: "
                          f"{short_repr(config.as_dict())}, not {short_repr(expected.as_dict())}")
    return config, history


def replay(config: GameConfig, history: list[int]) -> Track:
    """A track with ``history`` applied, each action checked; :class:`ReplayError` at the first that is
    not legal (a corrupt or foreign history)."""
    track = Track(config)
    for i, action in enumerate(history):
        if track.is_terminal:
            raise ReplayError(f"serialized state: action {i} ({action}) comes after the end of the episode")
        try:
            track.apply(action)
        except IllegalActionError as exc:
            raise ReplayError(f"serialized state: action {i} ({action}) is not legal there: {exc}") from None
    return track


def restore(text: str) -> Track:
    """A track from :meth:`Track.serialize` (what unpickling a state calls)."""
    config, history = parse_state(text)
    return replay(config, history)


def new_track(params: Optional[dict] = None) -> Track:
    """A fresh track for parameters (a convenience for tests and tools)."""
    return Track(make_config(params))
