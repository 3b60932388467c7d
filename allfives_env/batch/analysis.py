"""Compiled position analysis: :func:`allfives_env.analysis.placement_features` on a batch game record.

A line-by-line port of the Python analysis, from the view of one seat of a game record: public
information and that seat's own hand only (the unseen tiles are those in no own hand and not on the
table; hand sizes, known voids, scores and the drawable part of the boneyard are public). Every float is
computed with the same float64 operations in the same order as the Python reference, so the action
features of the observation and the ``expert`` batch agent's values are bit-identical to the core's.

A placement's features are one row of float64 numbers, in the columns named below (``KIND`` ...
``P_LOSE``, the fields of :class:`allfives_env.analysis.PlacementFeatures`); integer features are
stored exactly. Tile sets are bit masks of two words (:data:`.layout.WORD_BITS` tile ids each), and the
kernels take preallocated work arrays (:func:`make_work`), so analysing a position allocates nothing.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from .jit import njit

from ..analysis import DOMINO, NORMAL, WINS
from .board import count_after, hand_placements, place
from .layout import (
    B_ARM, B_DOUBLE, B_END, B_SIZE, B_SNIFF, B_SPINNER, BOARD_LEN, HIGH_AT, IMMEDIATE, IS_DOUBLE_AT, LOW_AT, NUM_PLAYERS, NUM_VALUES, ON_TABLE, PARTNERSHIP,
    PIPS_AT, RESERVE, SCORE_UNIT, TARGET, TILE_COUNT, VALUE_BITS, WORD_BITS, BatchLayout,
)
from .play import points_for_count, side_of

__all__ = ["DOMINO", "NORMAL", "WINS", "Work", "make_work", "placement_rows"]

#: The columns of a placement row, in the order of :class:`allfives_env.analysis.PlacementFeatures`.
KIND, NOW, PIPS, DOUBLE, DENY, BLOCK, MATE, FOLLOW, FIT, SHOWN, P_LOSE, ROW_LEN = range(12)

# rows of Work.ints: a placement list, per tile -1 or the best count seen, tile masks, the actions analysed
BUF, SEEN, MASKS, ACTIONS = range(4)
# Work.ints[MASKS, ...]: word pairs of the opponent's possible tiles, the partner's, our kept tiles; the
# slot bases of the board after the candidate placement (slot_bases)
OPP_MASK, MATE_MASK, KEPT_MASK, BASES = 0, 2, 4, 6
# rows of Work.floats: no-hit chances of the opponent, of the partner; reply utilities
Q_OPP, Q_MATE, UTILS = range(3)


class Work(NamedTuple):
    """The analysis' work arrays for one set (never used by two calls at once)."""

    ints: np.ndarray  # int64 (4, W): rows BUF, SEEN (all -1 between calls), MASKS, ACTIONS
    floats: np.ndarray  # float64 (3, T + 2): rows Q_OPP, Q_MATE, UTILS
    after: np.ndarray  # int32 (BOARD_LEN,): the board after the candidate placement
    rows: np.ndarray  # float64 (max_legal, ROW_LEN): one row per analysed placement


def make_work(layout: BatchLayout) -> Work:
    """Fresh work arrays for the set of ``layout``."""
    T = layout.tiles.size
    legal = layout.max_legal
    ints = np.zeros((4, max(T, legal) + 1), dtype=np.int64)
    ints[SEEN, :] = -1
    return Work(ints, np.zeros((3, T + 2), dtype=np.float64), np.zeros(BOARD_LEN, dtype=np.int32),
                np.zeros((legal, ROW_LEN), dtype=np.float64))


@njit(cache=True)
def bit_count(m: int) -> int:
    """Set bits of a non-negative int64."""
    n = 0
    while m:
        m &= m - 1
        n += 1
    return n


@njit(cache=True)
def slot_bases(b: np.ndarray, bases: np.ndarray) -> None:
    """``bases[s]`` = the count after a placement on slot ``s`` of the non-empty board ``b``, less the new
    end's own part (:func:`placed_count`): the count of every other end, and the spinner's pips as the
    arms stand after the placement. Integer for integer :func:`.board.count_after`, at one addition a
    placement: the replies and follow-ups try every fitting tile on the same board."""
    if b[B_SPINNER] < 0:  # a line: the other end, whatever is placed (a first double adds 2v)
        bases[0] = b[B_END + 1]
        bases[1] = b[B_END]
        bases[2] = 0
        bases[3] = 0
        return
    total = 0
    for k in range(4):
        if b[B_ARM + k]:
            total += 2 * b[B_END + k] if b[B_DOUBLE + k] else b[B_END + k]
    spinner = b[B_SPINNER]
    for s in range(4):
        base = total
        if b[B_ARM + s]:
            base -= 2 * b[B_END + s] if b[B_DOUBLE + s] else b[B_END + s]
        if not ((b[B_ARM] > 0 or s == 0) and (b[B_ARM + 1] > 0 or s == 1)):
            base += 2 * spinner
        elif b[B_SNIFF]:
            base += spinner * ((b[B_ARM + 2] == 0 and s != 2) + (b[B_ARM + 3] == 0 and s != 3))
        bases[s] = base


@njit(cache=True)
def placed_count(b: np.ndarray, bases: np.ndarray, R: np.ndarray, action: int) -> int:
    """The count after the legal placement ``action`` on ``b`` (:func:`slot_bases` of ``b`` given): the
    base of its slot plus the new end's part, 2v for a double, else the tile's other pip."""
    t = action >> 2
    slot = action & 3
    lo = R[LOW_AT + t]
    hi = R[HIGH_AT + t]
    if lo == hi:
        return bases[slot] + 2 * lo
    return bases[slot] + (hi if lo == b[B_END + slot] else lo)


@njit(cache=True)
def possible_tiles(g, R: np.ndarray, seat: int, void_values: int, masks: np.ndarray, at: int) -> int:
    """``masks[at:at+2]`` = the tiles ``seat`` cannot see (in another hand or the boneyard) that show
    none of the values of ``void_values``; returns how many."""
    masks[at] = 0
    masks[at + 1] = 0
    for t in range(R[TILE_COUNT]):
        w = g.owner[t]
        if w < ON_TABLE and w != seat:
            masks[at + t // WORD_BITS] |= np.int64(1) << (t % WORD_BITS)
    v = 0
    while void_values:
        if void_values & 1:
            masks[at] &= ~R[VALUE_BITS + 2 * v]
            masks[at + 1] &= ~R[VALUE_BITS + 2 * v + 1]
        void_values >>= 1
        v += 1
    return bit_count(masks[at]) + bit_count(masks[at + 1])


@njit(cache=True)
def no_hit_chances(pool: int, hand: int, upto: int, q: np.ndarray) -> None:
    """``q[k]`` = chance that a uniform ``hand``-tile draw from ``pool`` tiles misses ``k`` given tiles,
    for k = 0..upto (hypergeometric; the Python reference's operations in its order)."""
    q[0] = 1.0
    p = 1.0
    for k in range(upto):
        if pool - k <= 0 or pool - hand - k <= 0:
            p = 0.0
        else:
            p *= (pool - hand - k) / (pool - k)
        q[k + 1] = p


@njit(cache=True)
def expected_best(utils: np.ndarray, k: int, q: np.ndarray) -> float:
    """The expected maximum of the replies ``utils[:k]`` (sorted descending in place, then summed in that
    order: the k-th best counts when the k better ones are all missing)."""
    for i in range(1, k):
        u = utils[i]
        j = i - 1
        while j >= 0 and utils[j] < u:
            utils[j + 1] = utils[j]
            j -= 1
        utils[j + 1] = u
    total = 0.0
    for i in range(k):
        total += utils[i] * (q[i] - q[i + 1])
    return total


@njit(cache=True)
def replies(g, R: np.ndarray, after: np.ndarray, bases: np.ndarray, mask: np.ndarray, seat: int, room: int,
            cost: float, ints: np.ndarray, utils: np.ndarray):
    """The scoring replies ``seat`` could make on ``after`` with a tile of ``mask`` (two words), one per
    tile (its best end), as utilities in count points written to ``utils`` (a reply worth ``room`` points
    or more, ``room`` >= 0, wins the game and adds ``cost``). Returns (replies, tiles that fit any end,
    replies that win the game). ``bases``: :func:`slot_bases` of ``after``. ``ints[SEEN]`` is all -1 on
    entry and on return."""
    buf = ints[BUF]
    seen = ints[SEEN]
    n = hand_placements(after, mask, R, buf)
    fits = 0
    for j in range(n):
        a = buf[j]
        t = a >> 2
        if seen[t] < 0:
            seen[t] = 0
            fits += 1
        c = placed_count(after, bases, R, a)
        if c % 5 == 0 and c and c > seen[t]:
            seen[t] = c
    unit = R[SCORE_UNIT]
    k = 0
    winning = 0
    for j in range(n):
        t = buf[j] >> 2
        c = seen[t]
        if c < 0:
            continue
        seen[t] = -1
        if c == 0:
            continue
        p = points_for_count(g, R, seat, c, False)
        if p:
            wins = 0 <= room <= p
            winning += 1 if wins else 0
            utils[k] = p * unit + (cost if wins else 0.0)
            k += 1
    return k, fits, winning


@njit(cache=True)
def follow_up(after: np.ndarray, bases: np.ndarray, R: np.ndarray, kept: np.ndarray, ints: np.ndarray):
    """Our own next turn on ``after`` (``bases``: its :func:`slot_bases`) with the tiles of ``kept`` (two
    words): the best scoring count, the kept tiles that fit some end, the distinct pip values kept."""
    buf = ints[BUF]
    seen = ints[SEEN]
    n = hand_placements(after, kept, R, buf)
    best = 0
    fit = 0
    for j in range(n):
        a = buf[j]
        t = a >> 2
        if seen[t] < 0:
            seen[t] = 0
            fit += 1
        c = placed_count(after, bases, R, a)
        if c % 5 == 0 and c > best:
            best = c
    for j in range(n):
        seen[buf[j] >> 2] = -1
    shown = 0
    for w in range(2):
        m = kept[w]
        for v in range(R[NUM_VALUES]):
            if m & R[VALUE_BITS + 2 * v + w]:
                shown |= 1 << v
    return best, fit, bit_count(shown)


@njit(cache=True)
def normal_row(g, R, seat, tile, nxt, opp_room, opp_pool, drawable, cost, mate_seat, ints, floats, after,
               row) -> None:
    """The columns after DOUBLE of a placement of ``tile`` after which the hand goes on (``after`` is
    the board it leaves; KIND, NOW, PIPS and DOUBLE are filled by the caller)."""
    masks = ints[MASKS]
    q_opp = floats[Q_OPP]
    utils = floats[UTILS]
    bases = masks[BASES:BASES + 4]
    slot_bases(after, bases)
    k, fits, winning = replies(g, R, after, bases, masks[OPP_MASK:OPP_MASK + 2], nxt, opp_room, cost, ints, utils)
    row[DENY] = expected_best(utils, k, q_opp) if k else 0.0
    row[BLOCK] = (q_opp[fits] if fits < opp_pool + 1 else 0.0) * (1.0 if drawable else 2.0)
    row[P_LOSE] = 1.0 - q_opp[winning] if winning < opp_pool + 1 else 1.0
    mate = 0.0
    if mate_seat >= 0:
        k, _, _ = replies(g, R, after, bases, masks[MATE_MASK:MATE_MASK + 2], mate_seat, -1, cost, ints, utils)
        if k:
            mate = expected_best(utils, k, floats[Q_MATE])
    row[MATE] = mate
    kept = masks[KEPT_MASK:KEPT_MASK + 2]
    kept[0] = g.hand_bits[seat, 0]
    kept[1] = g.hand_bits[seat, 1]
    kept[tile // WORD_BITS] &= ~(np.int64(1) << (tile % WORD_BITS))
    best_follow, fit, shown = follow_up(after, bases, R, kept, ints)
    row[FOLLOW] = points_for_count(g, R, seat, best_follow, False) if best_follow else 0
    row[FIT] = fit
    row[SHOWN] = shown


@njit(cache=True)
def start_row(row: np.ndarray, kind: int, now: int, R: np.ndarray, tile: int) -> None:
    """A row with only KIND, NOW, PIPS and DOUBLE filled (all a winning or dominoing placement has)."""
    row[:] = 0.0
    row[KIND] = kind
    row[NOW] = now
    row[PIPS] = R[PIPS_AT + tile]
    row[DOUBLE] = R[IS_DOUBLE_AT + tile]


@njit(cache=True)
def placement_rows(g, R, seat, m, cost, partner, ints, floats, after, rows):
    """The feature rows of the placements ``ints[ACTIONS, :m]`` of ``seat`` into ``rows[:m]`` (the
    Python :func:`~allfives_env.analysis.placement_features` with ``winning_reply_cost=cost`` and
    ``partner``), and its :class:`~allfives_env.analysis.Position`: (opponent_room,
    smallest_opponent_hand)."""
    P = R[NUM_PLAYERS]
    b = g.board
    my_side = side_of(R, seat)
    immediate = R[IMMEDIATE] == 1
    nxt = (seat + 1) % P
    masks = ints[MASKS]
    opp_pool = possible_tiles(g, R, seat, g.voids[nxt], masks, OPP_MASK)
    opp_room = R[TARGET] - g.scores[side_of(R, nxt)]
    no_hit_chances(opp_pool, g.hand_count[nxt], opp_pool, floats[Q_OPP])
    drawable = max(0, R[TILE_COUNT] - g.next_draw - R[RESERVE])
    mate_seat = (seat + 2) % P if R[PARTNERSHIP] and partner else -1
    if mate_seat >= 0:
        mate_pool = possible_tiles(g, R, seat, g.voids[mate_seat], masks, MATE_MASK)
        no_hit_chances(mate_pool, g.hand_count[mate_seat], mate_pool, floats[Q_MATE])
    smallest = -1
    for s in range(P):
        if side_of(R, s) != my_side and (smallest < 0 or g.hand_count[s] < smallest):
            smallest = g.hand_count[s]
    my_room = R[TARGET] - g.scores[my_side]
    is_lead = b[B_SIZE] == 0
    low = R[LOW_AT:HIGH_AT]
    high = R[HIGH_AT:PIPS_AT]
    for j in range(m):
        action = ints[ACTIONS, j]
        tile = action >> 2
        slot = action & 3
        row = rows[j]
        now = points_for_count(g, R, seat, count_after(b, tile, slot, low, high), is_lead)
        if now and immediate and now >= my_room:
            start_row(row, WINS, now, R, tile)
        elif g.hand_count[seat] == 1:
            start_row(row, DOMINO, now, R, tile)
        else:
            start_row(row, NORMAL, now, R, tile)
            after[:] = b
            place(after, tile, slot, low, high)
            normal_row(g, R, seat, tile, nxt, opp_room if immediate else -1, opp_pool, drawable, cost, mate_seat,
                       ints, floats, after, row)
    return opp_room, smallest
