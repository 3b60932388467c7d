"""The engine under the OpenSpiel state: the core :class:`~allfives_env.core.game.Game` with explicit
chance (``chance="explicit"``), whose chance nodes are OpenSpiel's, one for one.

The core stops at each random event and lists its outcomes with their probabilities
(:mod:`allfives_env.core.chance`); this module only renames them to OpenSpiel's action ids and keeps the
history. So the rules stay the core's alone: nothing here re-implements them.

Chance outcomes (see :mod:`.params` for the action ids):

* **the deal**: one node per dealt tile, seat 0's tiles first, then seat 1's, ... Each seat's tiles come
  in ascending id order, so a hand is dealt by exactly one sequence; the probability of each next tile is
  its exact conditional probability under a uniformly random hand (``C(tiles above it, k-1) /
  C(tiles left above the last one, k)`` with ``k`` tiles still to give that seat).
* **a random leader** (``first_leader="random"``, or a random ``after_block``): one node, outcome
  ``tile_count + i`` for the core's pick ``i`` of ``k`` (a seat, or a pick among the tied seats).
* **every boneyard draw**, forced or chosen: one node whose outcomes are the boneyard's tiles, uniform.

Probabilities are the core's exact fractions as floats. Forced passes are automatic, as in the core: a
seat with no placement and nothing to draw is passed over, and the pass is in the event log (and so in
the information-state strings). A seat is never asked to act without a choice.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ..core.actions import action_name
from ..core.errors import IllegalActionError, ReplayError, short_repr
from ..core.game import Game
from ..core.outcome import side_rewards
from .params import GameConfig, make_config

#: The ``format`` field of a serialized state.
STATE_FORMAT = "allfives-openspiel-state"
STATE_VERSION = 1
#: The most characters a serialized state may have (a 200-hand double-twelve game is far below it).
MAX_STATE_CHARS = 5_000_000


class Track:
    """One OpenSpiel state's engine: the core game (with explicit chance) and the history of actions."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.rules = config.rules
        self.game = Game(self.rules, stop_after_hand=config.episode == "hand", chance="explicit")
        # the episode's starting scores (``scores``/``scored``), set before the first deal so that its
        # records carry them; set directly, because a mid-game position may hold scores a new game would
        # refuse (a unique top score past the target under ``win_check="end_of_hand"``)
        self.game.scores = list(config.scores)
        self.game.is_in = list(config.scored)
        self.history: list[int] = []
        self.hand_start = 0  # history index where the current hand's deal began
        self.hand_picks: list[int] = []  # the current hand's leader pick outcomes (0 or 1)
        self.hand_cache: Any = None  # the bridge's cached state at hand_start (shared by copies)

    # ------------------------------------------------------------------ copies
    def copy(self) -> "Track":
        """An independent copy (the hand cache is never mutated, so it is shared)."""
        other = Track.__new__(Track)
        other.__dict__.update(self.__dict__)
        other.game = self.game.clone()
        other.history = self.history[:]
        other.hand_picks = self.hand_picks[:]
        return other

    def __deepcopy__(self, memo: dict) -> "Track":
        return self.copy()

    def __reduce__(self) -> tuple:
        """Pickles as its plain-text serialization (see :meth:`serialize`), never as live objects."""
        return (restore, (self.serialize(),))

    # ------------------------------------------------------------------ queries
    @property
    def is_chance(self) -> bool:
        return self.game.chance_node is not None

    @property
    def is_terminal(self) -> bool:
        return self.game.over

    @property
    def current_player(self) -> int:
        """The seat to act; -1 at a chance node; -4 when terminal (OpenSpiel's ids)."""
        game = self.game
        if game.chance_node is not None:
            return -1
        return -4 if game.over else game.current

    @property
    def view_game(self) -> Optional[Game]:
        """The game observations describe (None while the first hand is being dealt: nothing is open yet)."""
        return self.game if self.game.hand_records else None

    def legal_actions(self) -> list[int]:
        if self.is_chance:
            return [a for a, _ in self.chance_outcomes()]
        return sorted(self.game.legal)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(outcome, probability) pairs of the chance node, ascending: the core's, as action ids and floats."""
        node = self.game.chance_node
        assert node is not None, "chance outcomes are asked at a chance node"
        shift = self.rules.tile_count if node.kind == "pick" else 0
        return [(o + shift, float(p)) for o, p in self.game.chance_outcomes()]

    def deal_so_far(self) -> tuple[int, ...]:
        """At a deal or leader-pick node: the tiles dealt in this hand so far, in deal order."""
        return self.game.deal_so_far()

    def returns(self) -> list[float]:
        """Per player: 0 until the episode ends; then by ``returns`` (see :mod:`.params`)."""
        n = self.rules.num_players
        if not self.is_terminal:
            return [0.0] * n
        game = self.game
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
        tiles = self.game.tiles
        if player >= 0:
            return action_name(int(action), tiles)
        if action >= tiles.size:
            return f"pick {action - tiles.size}"
        node = self.game.chance_node
        kind = "tile" if node is None else "deal" if node.kind == "deal" else "draw"
        return f"{kind} {tiles.name(int(action))}"

    # ------------------------------------------------------------------ moving
    def apply(self, action: int) -> None:
        """Apply a chance outcome or a player action; refuse anything not legal here (changing nothing)."""
        action = int(action)
        game = self.game
        node = game.chance_node
        if node is not None:
            tiles = self.rules.tile_count
            # the core's outcome: a pick's index, a tile id; -1 for an id of the other kind
            outcome = (action - tiles if action >= tiles else -1) if node.kind == "pick" else (action if action < tiles else -1)
            try:
                game.apply_chance(outcome)
            except IllegalActionError:
                raise IllegalActionError(
                    f"chance outcome {action} is not possible at this chance node ({node.kind}); possible: "
                    f"{short_repr([a for a, _ in self.chance_outcomes()])}"
                ) from None
            if node.kind == "pick":
                self.hand_picks.append(action)
        else:
            if game.over:
                raise IllegalActionError(f"action {action}: the episode is over (terminal state)")
            if action not in game.legal:
                raise IllegalActionError(game.illegal_message(action))
            game.step(action)
        self.history.append(action)
        node = game.chance_node
        if node is not None and node.kind == "deal" and not game.deal_so_far():  # a new hand's deal begins
            self.hand_start = len(self.history)
            self.hand_picks = []
            self.hand_cache = None

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
