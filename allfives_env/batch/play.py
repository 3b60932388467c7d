"""Compiled turns: a play, the forced draws and passes that follow, the settlement and the win check.

A line-by-line port of :class:`allfives_env.core.game.Game`'s stepping (docs/rules.md §3, §6, §7), on one
game record at a time: :func:`advance` applies the seat's decision, then runs everything up to the
next decision, exactly as ``Game.step`` does; the differential tests hold the two to the same events.

Every kernel takes the same arguments: the game record ``g``, the rules vector ``R`` (:mod:`.layout`;
it holds the tile tables too) and the replay log ``elog`` (:func:`.dealing.log_event`), which has no
rows unless a replay is being rebuilt. Few arguments on
purpose: each array argument costs a compiled call about as much as a small kernel's work.
"""

from __future__ import annotations

import numpy as np
from .jit import njit

from .board import count, hand_placements, open_values, place, tile_placements
from .dealing import give, log_event, new_hand, take
from .layout import (
    ALLOW_NEGATIVE, BLOCKED, BY_TARGET, DIFFERENCE, DOMINO, DRAW_ACTION, EV_DRAW, EV_GAME_OVER, EV_PASS, EV_PLAY,
    EV_SETTLEMENT, EXACT_TARGET, IMMEDIATE, LEAD_SCORES, MAX_DRAWS, MAX_HANDS, MIN_FIRST, NUM_PLAYERS, NUM_SIDES,
    ON_TABLE, PARTNERSHIP, RESERVE, ROUND_DOWN, ROUND_EACH, ROUND_NEAREST, ROUNDING, SCORE_UNIT, STOP_AFTER_HAND,
    TARGET, TILE_COUNT, WINNER_TAKES, B_SIZE, LOW_AT, HIGH_AT, PIPS_AT, B_ALL_OPEN, B_ARM, B_DOUBLE, B_END, H_BEST,
    H_DRAWN, H_EXISTS, H_PASSED, H_PIPS, H_PLACED, H_POINTS, HISTORY, HIST_COLUMNS, NUM_VALUES, WITH_VALUE_AT,
)


@njit(cache=True)
def side_of(R: np.ndarray, seat: int) -> int:
    """The scoring side of a seat."""
    return seat % 2 if R[PARTNERSHIP] else seat


@njit(cache=True)
def points_for_count(g, R: np.ndarray, seat: int, c: int, is_lead: bool) -> int:
    """Points credited to ``seat``'s side for a play making count ``c`` (every scoring gate applied)."""
    if c % 5 or c == 0:
        return 0
    if is_lead and not R[LEAD_SCORES]:
        return 0
    side = side_of(R, seat)
    if not g.is_in[side] and c < R[MIN_FIRST]:
        return 0
    points = c // R[SCORE_UNIT]
    if R[EXACT_TARGET] and g.scores[side] + points > R[TARGET]:
        return 0
    return points


@njit(cache=True)
def round_pips(R: np.ndarray, p: int) -> int:
    """A pip total rounded under ``rounding`` (nearest: 0-2 down, 3-4 up)."""
    if R[ROUNDING] == ROUND_NEAREST:
        return 5 * ((p + 2) // 5)
    if R[ROUNDING] == ROUND_DOWN:
        return 5 * (p // 5)
    return p


@njit(cache=True)
def pips_to_points(R: np.ndarray, p: int) -> int:
    """Rounded pips in score units."""
    return round_pips(R, p) // R[SCORE_UNIT]


@njit(cache=True)
def top_side(g, R: np.ndarray, require_target: bool) -> int:
    """The side with the unique highest score (at or above the target if asked), else -1."""
    sides = R[NUM_SIDES]
    top = g.scores[0]
    for s in range(1, sides):
        top = max(top, g.scores[s])
    if require_target and top < R[TARGET]:
        return -1
    found = -1
    for s in range(sides):
        if g.scores[s] == top:
            if found >= 0:
                return -1
            found = s
    return found


@njit(cache=True)
def best_on_offer(g, R: np.ndarray) -> int:
    """The most count points (a multiple of 5, before the side's scoring gates) any placement of a tile not
    on the table could make on the board now (:func:`allfives_env.encoding.best_on_offer`).

    Per open end one count, not one per tile: a tile v-x on an end of value v leaves that end showing x (2x
    for the double v-v, which counts 2x at an arm's end and, as a line's first double, 2v plus the other
    end as the new spinner), and nothing else of the count depends on x, so the count after it is the count
    with that arm one tile longer and its end at 0, plus x or 2x."""
    b = g.board
    best = 0
    if b[B_SIZE] == 0:
        for t in range(R[TILE_COUNT]):
            if g.owner[t] < ON_TABLE:
                lo = R[LOW_AT + t]
                hi = R[HIGH_AT + t]
                c = 2 * lo if lo == hi else lo + hi
                if c > best and c % 5 == 0:
                    best = c
        return best
    for slot in range(4 if b[B_ALL_OPEN] else 2):
        v = b[B_END + slot]
        was_double = b[B_DOUBLE + slot]
        b[B_END + slot] = 0
        b[B_DOUBLE + slot] = 0
        b[B_ARM + slot] += 1
        rest = count(b)
        b[B_END + slot] = v
        b[B_DOUBLE + slot] = was_double
        b[B_ARM + slot] -= 1
        at = WITH_VALUE_AT + 13 * v
        for k in range(R[NUM_VALUES]):
            t = R[at + k]
            if g.owner[t] < ON_TABLE:
                x = R[LOW_AT + t] + R[HIGH_AT + t] - v
                c = rest + (2 * x if x == v else x)
                if c > best and c % 5 == 0:
                    best = c
    return best


@njit(cache=True)
def _turn(g, R: np.ndarray, seat: int) -> None:
    """The turn history (``R[HISTORY]`` only): ``seat`` acts; it starts a turn unless its turn is open
    (drawing): the older turn moves down, the new one exists and records the best on offer."""
    if g.turn_seat == seat:
        return
    for c in range(HIST_COLUMNS):
        g.hist[seat, 1, c] = g.hist[seat, 0, c]
        g.hist[seat, 0, c] = 0
    g.hist[seat, 0, H_EXISTS] = 1
    g.hist[seat, 0, H_BEST] = best_on_offer(g, R)
    g.turn_seat = seat


@njit(cache=True)
def can_draw(g, R: np.ndarray) -> bool:
    """Tiles above the reserve, and the per-turn draw cap not reached."""
    return R[TILE_COUNT] - g.next_draw > R[RESERVE] and (R[MAX_DRAWS] < 0 or g.draws_this_turn < R[MAX_DRAWS])


@njit(cache=True)
def _ask(g, R: np.ndarray, seat: int, n: int) -> None:
    """``seat`` is to act with ``n`` placements in ``g.legal`` (plus "draw" when drawing is a choice)."""
    if R[DRAW_ACTION] >= 0 and can_draw(g, R):
        g.legal[n] = R[DRAW_ACTION]
        n += 1
    g.current = seat
    g.n_legal = n


@njit(cache=True)
def _draw(g, R: np.ndarray, seat: int, forced: bool, elog: np.ndarray) -> int:
    """``seat`` takes the top of the boneyard; what it reveals about the seat's hand goes to its voids."""
    if R[HISTORY]:
        _turn(g, R, seat)
        g.hist[seat, 0, H_DRAWN] += 1
    tile = g.deal[g.next_draw]
    g.next_draw += 1
    give(g, seat, tile)
    g.hand_count[seat] += 1
    g.draws_this_turn += 1
    log_event(elog, EV_DRAW, seat, tile, 1 if forced else 0, 0, 0)
    if forced:
        open_mask = open_values(g.board)
        tile_bits = (1 << R[LOW_AT + tile]) | (1 << R[HIGH_AT + tile])
        if open_mask & tile_bits:
            g.voids[seat] = open_mask & ~tile_bits  # it plays the tile at once; until then it holds those values
            g.pending_seat = seat
            g.pending_mask = open_mask
        else:
            g.voids[seat] = open_mask
    else:
        g.voids[seat] = 0
        g.pending_seat = -1
    return tile


@njit(cache=True)
def offer(g, R, seat, elog) -> None:
    """Find the next seat with a choice from ``seat`` on: forced draws and passes happen here, and a
    hand in which every seat passes with the boneyard at its reserve is settled as blocked."""
    P = R[NUM_PLAYERS]
    while True:
        n = hand_placements(g.board, g.hand_bits[seat], R, g.legal)
        if n:
            _ask(g, R, seat, n)
            return
        while can_draw(g, R):
            tile = _draw(g, R, seat, True, elog)
            n = tile_placements(g.board, tile, R[LOW_AT:HIGH_AT], R[HIGH_AT:PIPS_AT], g.legal, 0)
            if n:
                _ask(g, R, seat, n)
                return
        g.voids[seat] |= open_values(g.board)
        if R[HISTORY]:
            _turn(g, R, seat)
            g.hist[seat, 0, H_PASSED] = 1
            g.turn_seat = -1
        log_event(elog, EV_PASS, seat, 0, 0, 0, 0)
        g.passes += 1
        if g.passes >= P and R[TILE_COUNT] - g.next_draw <= R[RESERVE]:
            settle(g, R, BLOCKED, -1, elog)
            return
        seat = (seat + 1) % P
        g.draws_this_turn = 0


@njit(cache=True)
def play(g, R, action, elog) -> None:
    """Place the tile, count, credit the points, check for a win, settle a domino, pass the turn on."""
    tile = action >> 2
    slot = action & 3
    seat = g.current
    is_lead = g.board[B_SIZE] == 0
    if R[HISTORY]:
        _turn(g, R, seat)
    place(g.board, tile, slot, R[LOW_AT:HIGH_AT], R[HIGH_AT:PIPS_AT])
    take(g, seat, tile, ON_TABLE + seat)
    g.hand_count[seat] -= 1
    g.passes = 0
    if g.pending_seat >= 0:
        if g.pending_seat == seat:
            g.voids[seat] |= g.pending_mask
        g.pending_seat = -1
    c = count(g.board)
    points = points_for_count(g, R, seat, c, is_lead)
    if points:
        side = side_of(R, seat)
        g.scores[side] += points
        g.is_in[side] = 1
    if R[HISTORY]:
        g.hist[seat, 0, H_PLACED] = 1
        g.hist[seat, 0, H_POINTS] = points * R[SCORE_UNIT]
        g.hist[seat, 0, H_PIPS] = R[PIPS_AT + tile]
        g.turn_seat = -1
    log_event(elog, EV_PLAY, seat, tile, slot, c, points)
    if points and R[IMMEDIATE] and top_side(g, R, True) >= 0:
        settle(g, R, BY_TARGET, -1, elog)
        return
    if g.hand_count[seat] == 0:
        settle(g, R, DOMINO, seat, elog)
        return
    g.draws_this_turn = 0
    offer(g, R, (seat + 1) % R[NUM_PLAYERS], elog)


@njit(cache=True)
def advance(g, R, action, elog) -> None:
    """Apply the decision ``action`` (legal: checked by the caller) of the seat to act."""
    g.decisions += 1
    if action == R[DRAW_ACTION]:
        _draw(g, R, g.current, False, elog)
        offer(g, R, g.current, elog)
    else:
        play(g, R, action, elog)


@njit(cache=True)
def _award(R: np.ndarray, parts: np.ndarray, k: int) -> int:
    """Points for the pip totals ``parts[:k]`` under ``bonus_round``."""
    if R[ROUND_EACH]:
        total = 0
        for i in range(k):
            total += pips_to_points(R, parts[i])
        return total
    return pips_to_points(R, parts[:k].sum())


@njit(cache=True)
def _winner_takes(g, R: np.ndarray, result: int, dominoer: int, seat_pips: np.ndarray, deltas: np.ndarray) -> None:
    """docs/rules.md §6.3: the winner gains the opponents' pips (never a partner's)."""
    P = R[NUM_PLAYERS]
    sides = R[NUM_SIDES]
    side_pips = np.zeros(4, dtype=np.int64)
    for s in range(P):
        side_pips[side_of(R, s)] += seat_pips[s]
    parts = np.zeros(4, dtype=np.int64)
    if result == DOMINO:
        w = side_of(R, dominoer)
        k = 0
        for s in range(P):
            if side_of(R, s) != w:
                parts[k] = seat_pips[s]
                k += 1
        deltas[w] += _award(R, parts, k)
        return
    low = side_pips[:sides].min()
    tied = 0
    for s in range(sides):
        tied += side_pips[s] == low
    if tied == 1:
        w = 0
        while side_pips[w] != low:
            w += 1
        k = 0
        if not R[DIFFERENCE]:
            for s in range(P):
                if side_of(R, s) != w:
                    parts[k] = seat_pips[s]
                    k += 1
        else:
            for s in range(sides):
                if s != w:
                    parts[k] = side_pips[s] - low
                    k += 1
        deltas[w] += _award(R, parts, k)
    elif tied == 2 and P == 3:
        third = 0
        while side_pips[third] == low:
            third += 1
        total = side_pips[third] - (low if R[DIFFERENCE] else 0)
        half = 5 * ((round_pips(R, total) // 2) // 5)
        for s in range(3):
            if s != third:
                deltas[s] += half // R[SCORE_UNIT]


@njit(cache=True)
def settle(g, R, result, dominoer, elog) -> None:
    """End the hand: deduct or award the pips (not after a win by target), then end the game or deal on."""
    P = R[NUM_PLAYERS]
    sides = R[NUM_SIDES]
    seat_pips = np.zeros(4, dtype=np.int64)
    for t in range(R[TILE_COUNT]):
        if g.owner[t] < P:
            seat_pips[g.owner[t]] += R[PIPS_AT + t]
    deltas = np.zeros(4, dtype=np.int64)
    if result != BY_TARGET:
        if R[WINNER_TAKES]:
            _winner_takes(g, R, result, dominoer, seat_pips, deltas)
        else:
            for s in range(P):
                deltas[side_of(R, s)] -= pips_to_points(R, seat_pips[s])
        _apply_deltas(g, R, deltas)
    k = log_event(elog, EV_SETTLEMENT, g.hand_number, result, 0, 0, 0)
    if k >= 0:
        for s in range(4):
            elog[k, 3 + s] = seat_pips[s]
            elog[k, 7 + s] = deltas[s]
            elog[k, 11 + s] = g.scores[s]
    g.last_result = result
    g.last_dominoer = dominoer
    for s in range(4):
        g.last_pips[s] = seat_pips[s]
    g.hands_completed += 1
    winner = top_side(g, R, True)
    if winner >= 0:
        finish(g, R, winner, 0, elog)
    elif R[STOP_AFTER_HAND]:
        finish(g, R, -1, 0, elog)
    elif R[MAX_HANDS] >= 0 and g.hands_completed >= R[MAX_HANDS]:
        finish(g, R, top_side(g, R, False), 1, elog)
    else:
        new_hand(g, R, elog)


@njit(cache=True)
def _apply_deltas(g, R: np.ndarray, deltas: np.ndarray) -> None:
    """Add the settlement to the scores: a bonus past an exact target is void; no score below zero
    unless ``allow_negative``."""
    for side in range(R[NUM_SIDES]):
        new = g.scores[side] + deltas[side]
        if deltas[side] > 0 and R[EXACT_TARGET] and new > R[TARGET]:
            deltas[side] = 0
            continue
        if not R[ALLOW_NEGATIVE] and new < 0:
            deltas[side] = -g.scores[side] if g.scores[side] > 0 else 0
            new = g.scores[side] + deltas[side]
        g.scores[side] = new


@njit(cache=True)
def finish(g, R: np.ndarray, winner: int, truncated: int, elog: np.ndarray) -> None:
    """The game is over: no seat acts any more."""
    g.over = 1
    g.winner = winner
    g.truncated = truncated
    g.current = -1
    g.n_legal = 0
    k = log_event(elog, EV_GAME_OVER, winner, truncated, 0, 0, 0)
    if k >= 0:
        for s in range(4):
            elog[k, 3 + s] = g.scores[s]
