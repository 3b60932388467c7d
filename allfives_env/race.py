"""Observation version 2, "pieces for the race": what the ``needs``, ``pips``, ``bonus`` and ``history`` pieces
and the ``pips_after`` / ``cross`` action-feature columns hold, and the Python encoder's writers of them.

:mod:`allfives_env.encoding` declares the pieces (:data:`~allfives_env.encoding.OBSERVATION_PIECES`, each with
the first version that has it) and calls these writers for a version-2 encoder; the compiled batch observer
(:mod:`allfives_env.batch.observe`) writes the same values with the same integer quotients, each taken once in
float64 and rounded once to float32, and ``tests/test_observation_v2.py`` holds the two equal.

Definitions (public information and the observer's own hand only):

* a *five* is a score step of 5 count points (5 points, or 1 point under ``score_unit=5``); ``needs`` is the
  number a side still needs to reach the target (:func:`need_fives`);
* the *unseen* tiles are those neither on the table nor in the observer's hand; pips are divided by the
  whole set's pips (:func:`pip_total`: 168, 495, 1092), so every ``pips`` entry lies in [0, 1];
* ``bonus`` / ``cross`` bound the end-of-hand bonus from above (:func:`bonus_bound`): under
  ``hand_end='winner_takes'`` a side gains at most its opponents' pips, which are at most the unseen pips
  (the observer's side) or the unseen pips plus the observer's hand (another side), rounded as the rules round
  a bonus; under ``deduct_own`` nobody gains at hand end, so both are 0. ``exact_target`` voiding and the
  blocked-hand awards (smaller) are not modelled: the bound is only an upper bound;
* a *turn* is a seat's run of events: draws, then a play or a pass (:class:`History`); "best on offer" is the
  most count points any placement of a tile not on the table could have made on the board at the turn's start
  (:func:`best_on_offer`: a count that is a multiple of 5, before the side's scoring gates ``lead_scores``,
  ``min_first_score`` and ``exact_target``). A new hand clears the history; the opening draws of
  ``draw_until_double`` choose the leader and are no turn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core.board import Board
from .core.events import Draw, HandStart, Pass, Play
from .core.game import Game
from .core.rules import Rules
from .core.tiles import TileSet

#: ``needs``: one-hot of the fives a side still needs, 1..NEED_BINS, then one column for "more".
NEED_BINS = 12
#: ``history``: the last turns kept per other seat, newest first.
HISTORY_TURNS = 2
#: ``history``: the columns of one turn.
HISTORY_COLUMNS = ("exists", "placed", "passed", "drew", "points", "pips", "best")
#: ``history``'s ``drew``: tiles drawn in the turn over this (4 or more reads as 1).
DRAW_CAP = 4
#: The action-feature columns version 2 adds after :data:`~allfives_env.encoding.ACTION_FEATURES`.
ACTION_FEATURES_V2 = ("pips_after", "cross")
#: ``history``'s ``points`` and ``best`` columns: count points over this (the features' POINT_SCALE).
HISTORY_POINT_DIVISOR = 20


def pip_total(tiles: TileSet) -> int:
    """The pips of the whole set (168, 495, 1092): the divisor of the ``pips`` piece and ``pips_after``."""
    return sum(tiles.pips)


def need_fives(rules: Rules, score: int) -> int:
    """The fives (steps of 5 count points) a side with ``score`` still needs to reach the target; 0 at or
    past it."""
    short = rules.target - score
    return (short * rules.score_unit + 4) // 5 if short > 0 else 0


def bonus_bound(rules: Rules, pips: int, opposing_seats: int) -> int:
    """An upper bound, in points, of the end-of-hand bonus a side can gain when its opponents hold at most
    ``pips`` pips over ``opposing_seats`` hands: 0 unless ``hand_end='winner_takes'``; else those pips rounded
    as the rules round a bonus (``round_each`` with nearest rounding may gain 2 pips per hand but the first
    from rounding each hand up: the bound adds them before rounding)."""
    if rules.hand_end != "winner_takes":
        return 0
    extra = 2 * (opposing_seats - 1) if rules.bonus_round == "round_each" and rules.rounding == "nearest" else 0
    return rules.pips_to_points(pips + extra)


def best_on_offer(board: Board, unplayed: int) -> int:
    """The most count points (a count that is a multiple of 5, before the side's scoring gates) any
    placement of a tile of ``unplayed`` could make on ``board``."""
    best = 0
    if board.size == 0:
        low, high = board.low, board.high
        m = unplayed
        while m:
            bit = m & -m
            t = bit.bit_length() - 1
            m ^= bit
            c = 2 * low[t] if low[t] == high[t] else low[t] + high[t]
            if c > best and c % 5 == 0:
                best = c
        return best
    for slot in board.open_slots:
        m = unplayed & board.pip_mask[board.ends[slot]]
        while m:
            bit = m & -m
            m ^= bit
            c = board.count_after(bit.bit_length() - 1, slot)
            if c > best and c % 5 == 0:
                best = c
    return best


def write_race(enc: Any, game: Game, seat: int, out: np.ndarray, private: bool) -> None:
    """Version 2's pieces as ``seat`` sees them into ``out`` (zeros there): ``needs``, ``history`` and,
    when ``private`` (they read the seat's hand), ``pips`` and ``bonus``. Integer quotients are taken
    once in float64, as the batch observer takes them."""
    rules = enc.rules
    P = enc.P
    s = enc.slices
    rot = enc.rotations[seat]
    side_of = game.side_of
    scores = game.scores
    o_needs = s["needs"].start
    width = NEED_BINS + 1
    for k in range(P):
        need = need_fives(rules, scores[side_of[rot[k]]])
        if need:
            out[o_needs + k * width + min(need, width) - 1] = 1.0
    write_history(enc, game, seat, out)
    if not private:
        return
    tiles = enc.tiles
    hands = game.hands
    own_mask = hands[seat]
    played = 0
    for t, _ in game.played:
        played |= 1 << t
    unseen_mask = ((1 << enc.T) - 1) & ~own_mask & ~played
    own = tiles.pips_of(own_mask)
    unseen = tiles.pips_of(unseen_mask)
    n_unseen = unseen_mask.bit_count()
    total = enc.pip_total
    op = s["pips"].start
    out[op] = own / total
    out[op + 1] = unseen / total
    if n_unseen:
        for k in range(1, P):
            out[op + 1 + k] = (hands[rot[k]].bit_count() * unseen) / (n_unseen * total)
        out[op + 1 + P] = (game.boneyard_size * unseen) / (n_unseen * total)
    out[op + 2 + P] = own_mask.bit_count() / enc.T
    if rules.hand_end == "winner_takes":
        ob = s["bonus"].start
        my_side = side_of[seat]
        for k in range(P):
            side = side_of[rot[k]]
            opposing = sum(1 for x in side_of if x != side)
            bound = bonus_bound(rules, unseen if side == my_side else unseen + own, opposing)
            if scores[side] + bound >= rules.target:
                out[ob + k] = 1.0


def write_history(enc: Any, game: Game, seat: int, out: np.ndarray) -> None:
    """The ``history`` slice (zeros on entry): each other seat's last turns of this hand."""
    history = enc.turn_history
    if history is None or not history.follows(game):
        history = enc.turn_history = History(game)
    history.catch_up(game)
    C = len(HISTORY_COLUMNS)
    H = HISTORY_TURNS
    pip_scale = 2 * enc.rules.max_pip
    o = enc.slices["history"].start
    rot = enc.rotations[seat]
    for k in range(1, enc.P):
        for j, turn in enumerate(history.turns[rot[k]]):
            base = o + ((k - 1) * H + j) * C
            exists, placed, passed, drew, points, pips, best = turn
            out[base] = 1.0
            if placed:
                out[base + 1] = 1.0
                out[base + 5] = pips / pip_scale
            if passed:
                out[base + 2] = 1.0
            if drew:
                out[base + 3] = min(drew, DRAW_CAP) / DRAW_CAP
            if points:
                out[base + 4] = points / HISTORY_POINT_DIVISOR
            if best:
                out[base + 6] = best / HISTORY_POINT_DIVISOR


def write_race_features(enc: Any, game: Game, seat: int, out: np.ndarray, actions: list[int], rows: list) -> None:
    """Version 2's action-feature columns: ``pips_after`` (the hand's pips after the play / the set's
    pips) and ``cross`` (the play's points reach the target, or, when it empties the hand, its points
    plus the largest bonus the rules can give: :func:`bonus_bound` of the unseen pips)."""
    rules = enc.rules
    tiles = enc.tiles
    own_mask = game.hands[seat]
    own = tiles.pips_of(own_mask)
    side = game.side_of[seat]
    score = game.scores[side]
    domino = own_mask.bit_count() == 1
    bound = 0
    if domino:
        played = 0
        for t, _ in game.played:
            played |= 1 << t
        unseen = tiles.pips_of(((1 << enc.T) - 1) & ~own_mask & ~played)
        bound = bonus_bound(rules, unseen, sum(1 for x in game.side_of if x != side))
    F = len(enc.feature_names)
    first = enc.features_offset + len(enc.feature_names) - len(ACTION_FEATURES_V2)
    total = enc.pip_total
    target = rules.target
    for action, row in zip(actions, rows):
        o = first + action * F
        out[o] = (own - tiles.pips[action >> 2]) / total
        if score + row.now >= target or (domino and score + row.now + bound >= target):
            out[o + 1] = 1.0


class History:
    """Version 2's turn history of one game's current hand, read from its public event log and brought up to
    date incrementally: per seat its last :data:`HISTORY_TURNS` turns, newest first, each the list
    ``[exists, placed, passed, drawn, count points, tile pips, best on offer]`` (integers).

    A turn is a seat's run of events: draws, then a play or a pass (a run of draws alone is a turn in
    progress). The opening draws of ``draw_until_double`` choose the leader and are no turn. "Best on
    offer" is the most count points any placement of a tile not on the table could have made on the board
    at the turn's start (:func:`best_on_offer`), read from a copy of the board replayed from the plays."""

    __slots__ = ("game", "hand", "start", "seen", "turns", "turn_seat", "board", "unplayed", "pips", "unit")

    def __init__(self, game: Game) -> None:
        self.game = game
        self.hand = game.hand_number
        events = game.events
        start = len(events) - 1
        while start >= 0 and type(events[start]) is not HandStart:
            start -= 1
        # the events after the hand start, less the opening draws
        self.start = self.seen = start + 1 + (getattr(game, "opening_draws", 0) if start >= 0 else 0)
        self.turns: list[list[list[int]]] = [[] for _ in range(game.num_players)]
        self.turn_seat = -1
        rules = game.rules
        self.board = Board(game.tiles, rules.spinner_sides_first, rules.spinner_count)
        self.unplayed = (1 << game.tiles.size) - 1
        self.pips = game.tiles.pips
        self.unit = rules.score_unit

    def follows(self, game: Game) -> bool:
        """Whether this history can be brought up to date for ``game`` (the same game and hand, its log grown)."""
        return game is self.game and game.hand_number == self.hand and len(game.events) >= self.seen

    def catch_up(self, game: Game) -> None:
        """Read the events logged since the last call."""
        events = game.events
        for i in range(self.seen, len(events)):
            e: Any = events[i]  # a Play, Draw or Pass below (``type(e) is``: the engine's own test)
            kind = type(e)
            if kind is not Play and kind is not Draw and kind is not Pass:
                continue
            seat = e.seat
            if seat != self.turn_seat:
                turns = self.turns[seat]
                turns.insert(0, [1, 0, 0, 0, 0, 0, best_on_offer(self.board, self.unplayed)])
                del turns[HISTORY_TURNS:]
                self.turn_seat = seat
            turn = self.turns[seat][0]
            if kind is Draw:
                turn[3] += 1
            elif kind is Play:
                turn[1] = 1
                turn[4] = e.points * self.unit
                turn[5] = self.pips[e.tile]
                self.board.place(e.tile, e.slot)
                self.unplayed &= ~(1 << e.tile)
                self.turn_seat = -1
            else:
                turn[2] = 1
                self.turn_seat = -1
        self.seen = len(events)
