"""Compiled dealing: each game's random stream, the deal of a hand, and who leads it (docs/rules.md §2).

Every game owns its stream (splitmix64, one 64-bit state in its record): game ``i`` of a batch seeded
``seed`` starts from a state derived from ``(seed, i)`` alone, so it is dealt the same way whatever
the batch size or chunking, and a finished game re-deals from where its own stream stopped. The state
at the start of each episode is kept (``episode_rng``), which is all a replay needs to re-deal it.

The core deals with numpy's generator instead; the two engines deal differently for the same seed, but
a replay records every deal, so the core verifies a batch game move by move (:mod:`.record`).
"""

from __future__ import annotations

import numpy as np
from .jit import njit

from .board import clear_board, hand_placements
from .layout import (
    AFTER_BLOCK, AFTER_LOWEST, AFTER_ROTATE, BONEYARD, DOMINO, EV_DEAL, EV_DRAW, EV_HAND_START, FALLBACK,
    FALLBACK_DRAW, FALLBACK_HEAVIEST, FIRST_LEADER, FIRST_RANDOM, HAND_SIZE, MUST_LEAD, NUM_PLAYERS, NUM_SIDES,
    RESERVE, SIDES_FIRST, SNIFF, TILE_COUNT, WORD_BITS, NUM_VALUES, DOUBLE_ID_AT, PIPS_AT, HIGH_AT, IS_DOUBLE_AT,
)

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, SHIFT32 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32)


@njit(cache=True)
def mix64(z: np.uint64) -> np.uint64:
    """The splitmix64 finaliser: a bijective scramble of 64 bits."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def seed_streams(states: np.ndarray, seed: np.uint64, first: np.uint64) -> None:
    """The initial stream states of games ``first, first+1, ...`` of a batch seeded ``seed``."""
    base = mix64(seed + GOLDEN)
    for i in range(states.shape[0]):
        states[i] = mix64(base ^ mix64((first + np.uint64(i)) * GOLDEN + _MIX1))


@njit(cache=True)
def next_random(g) -> np.uint64:
    """The next 64 random bits of game ``g``'s stream."""
    s = g.rng + GOLDEN
    g.rng = s
    return mix64(s)


@njit(cache=True)
def random_below(g, k: int) -> np.int64:
    """A uniform integer 0..k-1 from ``g``'s stream (multiply-shift on 32 bits; k is at most 91)."""
    return np.int64(((next_random(g) >> SHIFT32) * np.uint64(k)) >> SHIFT32)


@njit(cache=True)
def log_event(elog: np.ndarray, kind: int, a: int, b: int, c: int, d: int, e: int) -> int:
    """Append an event row to the replay log ``elog`` (no rows when a batch is not logging; else row 0
    holds [rows used, overflow flag] and is set to [1, 0] by the caller). Returns the row index, or -1
    when nothing was written (not logging, or the log is full: the overflow flag is then set)."""
    if elog.shape[0] == 0:
        return -1
    k = elog[0, 0]
    if k >= elog.shape[0]:
        elog[0, 1] = 1
        return -1
    elog[k, :] = 0
    elog[k, 0] = kind
    elog[k, 1] = a
    elog[k, 2] = b
    elog[k, 3] = c
    elog[k, 4] = d
    elog[k, 5] = e
    elog[0, 0] = k + 1
    return k


@njit(cache=True)
def give(g, seat: int, tile: int) -> None:
    """``tile`` goes to ``seat``'s hand (its owner entry and its bit)."""
    g.owner[tile] = seat
    g.hand_bits[seat, tile // WORD_BITS] |= np.int64(1) << (tile % WORD_BITS)


@njit(cache=True)
def take(g, seat: int, tile: int, where: int) -> None:
    """``tile`` leaves ``seat``'s hand for ``where`` (an owner code: the table, ...)."""
    g.owner[tile] = where
    g.hand_bits[seat, tile // WORD_BITS] &= ~(np.int64(1) << (tile % WORD_BITS))


@njit(cache=True)
def sync_hand_bits(g, R: np.ndarray) -> None:
    """Rebuild the hand bit masks from ``g.owner`` (after writing a position into a record by hand)."""
    g.hand_bits[:, :] = 0
    for t in range(R[TILE_COUNT]):
        if g.owner[t] < 4:
            g.hand_bits[g.owner[t], t // WORD_BITS] |= np.int64(1) << (t % WORD_BITS)


@njit(cache=True)
def _shuffle_deal(g, R: np.ndarray) -> None:
    """A fresh permutation of the set into ``g.deal``; the hands and the boneyard follow from it."""
    T = R[TILE_COUNT]
    deal = g.deal
    for t in range(T):
        deal[t] = t
    for k in range(T - 1, 0, -1):
        j = random_below(g, k + 1)
        tmp = deal[k]
        deal[k] = deal[j]
        deal[j] = tmp
    h = R[HAND_SIZE]
    P = R[NUM_PLAYERS]
    g.hand_bits[:, :] = 0
    for k in range(T):
        t = deal[k]
        if k < P * h:
            give(g, k // h, t)
        else:
            g.owner[t] = BONEYARD
    for s in range(4):
        g.hand_count[s] = h if s < P else 0
    g.next_draw = P * h


@njit(cache=True)
def _first_leader(g, R: np.ndarray):
    """The leader of hand 1 and the tile it must lead (-1: any); leader -1 asks for a redeal."""
    P = R[NUM_PLAYERS]
    if R[FIRST_LEADER] == FIRST_RANDOM:
        return random_below(g, P), -1
    for v in range(R[NUM_VALUES] - 1, -1, -1):
        d = R[DOUBLE_ID_AT + v]
        if g.owner[d] < P:
            return g.owner[d], (d if R[MUST_LEAD] else -1)
    if R[FALLBACK] == FALLBACK_HEAVIEST:
        best = -1
        for t in range(R[TILE_COUNT]):
            if g.owner[t] < P and (best < 0 or R[PIPS_AT + t] > R[PIPS_AT + best]
                                   or (R[PIPS_AT + t] == R[PIPS_AT + best] and R[HIGH_AT + t] > R[HIGH_AT + best])):
                best = t
        return g.owner[best], (best if R[MUST_LEAD] else -1)
    if R[FALLBACK] != FALLBACK_DRAW:
        return -1, -1  # redeal
    drawer = random_below(g, P)
    g.opening_drawer = drawer
    seat = drawer
    T = R[TILE_COUNT]
    while T - g.next_draw > R[RESERVE]:
        tile = g.deal[g.next_draw]
        g.next_draw += 1
        give(g, seat, tile)
        g.hand_count[seat] += 1
        if R[IS_DOUBLE_AT + tile]:
            return seat, (tile if R[MUST_LEAD] else -1)
        seat = (seat + 1) % P
    return -1, -1


@njit(cache=True)
def _later_leader(g, R: np.ndarray) -> int:
    """The leader after a finished hand: the player who dominoed, else by ``after_block``."""
    P = R[NUM_PLAYERS]
    if g.last_result == DOMINO:
        return g.last_dominoer
    if R[AFTER_BLOCK] == AFTER_ROTATE:
        return (g.leader + 1) % P
    if R[AFTER_BLOCK] == AFTER_LOWEST:
        low = g.last_pips[0]
        for s in range(1, P):
            low = min(low, g.last_pips[s])
        tied = 0
        for s in range(P):
            tied += g.last_pips[s] == low
        pick = 0 if tied == 1 else random_below(g, tied)
        for s in range(P):
            if g.last_pips[s] == low:
                if pick == 0:
                    return s
                pick -= 1
    return random_below(g, P)


@njit(cache=True)
def new_hand(g, R: np.ndarray, elog: np.ndarray) -> None:
    """Deal the next hand (redealing while the rules ask for it), choose its leader and offer the lead."""
    P = R[NUM_PLAYERS]
    g.hand_number += 1
    g.opening_drawer = -1
    lead_tile = -1
    while True:
        _shuffle_deal(g, R)
        if g.hand_number > 1:
            leader = _later_leader(g, R)
            break
        leader, lead_tile = _first_leader(g, R)
        if leader >= 0:
            break
        g.opening_drawer = -1
    g.leader = leader
    clear_board(g.board, R[SIDES_FIRST], R[SNIFF])
    for s in range(4):
        g.voids[s] = 0
    g.passes = 0
    g.draws_this_turn = 0
    g.pending_seat = -1
    for s in range(4):  # a new hand clears the turn history (observation version 2)
        for j in range(g.hist.shape[1]):
            for c in range(g.hist.shape[2]):
                g.hist[s, j, c] = 0
    g.turn_seat = -1
    g.current = leader
    if lead_tile >= 0:
        g.legal[0] = lead_tile << 2
        g.n_legal = 1
    else:
        g.n_legal = hand_placements(g.board, g.hand_bits[leader], R, g.legal)
    _log_hand_start(g, R, elog)


@njit(cache=True)
def _log_hand_start(g, R: np.ndarray, elog: np.ndarray) -> None:
    """Replay logging: the deal as dealt (an ``EV_DEAL`` row), the hand_start event, then any opening
    draws."""
    if elog.shape[0] == 0:
        return
    k = log_event(elog, EV_DEAL, g.hand_number, g.leader, g.opening_drawer, 0, 0)
    if k >= 0:
        T = R[TILE_COUNT]
        elog[k, 4:4 + T] = g.deal[:T]
    k = log_event(elog, EV_HAND_START, g.hand_number, g.leader, 0, 0, 0)
    if k >= 0:
        for side in range(R[NUM_SIDES]):
            elog[k, 3 + side] = g.scores[side]
    first_opening = R[NUM_PLAYERS] * R[HAND_SIZE]
    for j in range(first_opening, g.next_draw):
        seat = (g.opening_drawer + j - first_opening) % R[NUM_PLAYERS]
        log_event(elog, EV_DRAW, seat, g.deal[j], 0, 0, 0)


@njit(cache=True)
def new_game(g, R: np.ndarray, elog: np.ndarray) -> None:
    """Start a new episode from the game's stream where it stands (zero scores, hand 1)."""
    g.episode_rng = g.rng
    for s in range(4):
        g.scores[s] = 0
        g.is_in[s] = 0
        g.last_pips[s] = 0
    g.hand_number = 0
    g.hands_completed = 0
    g.over = 0
    g.winner = -1
    g.truncated = 0
    g.decisions = 0
    g.leader = -1
    new_hand(g, R, elog)
