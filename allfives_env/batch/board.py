"""The layout on the table as a small integer vector, for the compiled kernels (docs/rules.md §4-5).

The same model as :class:`allfives_env.core.board.Board`, which stays the readable reference: a line of
non-doubles until the first double, which becomes the spinner and turns the layout into four arms
W, E, N, S. Only the numbers play and scoring read are kept (:mod:`.layout` names the entries): each
end's open value, whether its last tile is a double, the tiles in each arm, the spinner's value, the
tiles on the table and whether N/S are open. A copy of the board is a copy of twenty integers, which is
what lets the analysis and the search try a move without undoing it.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from .jit import njit
from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros

from .layout import (
    B_ALL_OPEN, B_ARM, B_DOUBLE, B_END, B_LEAD, B_SIDES_FIRST, B_SIZE, B_SNIFF, B_SPINNER, B_SPINNER_TILE,
    VALUE_BITS, WORD_BITS,
)

# The index of the lowest set bit of an integer (one machine instruction). A numba intrinsic: its Python
# signature takes numba's typing context first, which numba supplies when a kernel calls it with the integer
# alone; named here as what a kernel calls, so that the checker reads the calls below as they run.
trailing_zeros: Callable[[int], int] = _trailing_zeros  # type: ignore[assignment]  # numba adds the context


@njit(cache=True)
def clear_board(b: np.ndarray, sides_first: int, sniff: int) -> None:
    """An empty table under the given spinner rules."""
    b[:] = 0
    b[B_SPINNER] = -1
    b[B_SPINNER_TILE] = -1
    b[B_SIDES_FIRST] = sides_first
    b[B_SNIFF] = sniff


@njit(cache=True)
def open_values(b: np.ndarray) -> int:
    """Bit mask of the pip values that can be matched now (0 on an empty table)."""
    if b[B_SIZE] == 0:
        return 0
    mask = (1 << b[B_END]) | (1 << b[B_END + 1])
    if b[B_ALL_OPEN]:
        mask |= (1 << b[B_END + 2]) | (1 << b[B_END + 3])
    return mask


@njit(cache=True)
def count(b: np.ndarray) -> int:
    """The count of the ends (docs/rules.md §5.1; §5.3 for ``sniff``); 0 on an empty table."""
    if b[B_SIZE] == 0:
        return 0
    if b[B_SPINNER] < 0:
        return b[B_END] + b[B_END + 1]
    total = 0
    for slot in range(4):
        if b[B_ARM + slot]:
            total += 2 * b[B_END + slot] if b[B_DOUBLE + slot] else b[B_END + slot]
    both_sides = b[B_ARM] > 0 and b[B_ARM + 1] > 0
    if not both_sides:
        total += 2 * b[B_SPINNER]
    elif b[B_SNIFF]:
        total += b[B_SPINNER] * ((b[B_ARM + 2] == 0) + (b[B_ARM + 3] == 0))
    return total


@njit(cache=True)
def count_after(b: np.ndarray, tile: int, slot: int, low: np.ndarray, high: np.ndarray) -> int:
    """The count after placing ``tile`` on ``slot`` (legal), without placing it: the end is set, the
    count taken and the end put back; only a first double, which makes the spinner, has its own formula."""
    lo = low[tile]
    hi = high[tile]
    if b[B_SIZE] == 0:
        return 2 * lo if lo == hi else lo + hi
    if lo == hi and b[B_SPINNER] < 0:
        return 2 * lo + (b[B_END + 1] if slot == 0 else b[B_END])
    x = b[B_END + slot]
    was_double = b[B_DOUBLE + slot]
    b[B_END + slot] = hi if lo == x else lo
    b[B_DOUBLE + slot] = 1 if lo == hi else 0
    b[B_ARM + slot] += 1
    result = count(b)
    b[B_END + slot] = x
    b[B_DOUBLE + slot] = was_double
    b[B_ARM + slot] -= 1
    return result


@njit(cache=True)
def counted(b: np.ndarray, slot: int) -> bool:
    """Whether the end ``slot`` adds to the count (the spinner's own 2v is not an end)."""
    if b[B_SIZE] == 0:
        return False
    if b[B_SPINNER] < 0:
        return slot < 2
    if b[B_ARM + slot]:
        return True
    return b[B_SNIFF] == 1 and slot >= 2 and b[B_ARM] > 0 and b[B_ARM + 1] > 0


@njit(cache=True)
def spinner_counts(b: np.ndarray) -> bool:
    """Whether the spinner's own pips (2v) are in the count now."""
    return b[B_SPINNER] >= 0 and not (b[B_ARM] > 0 and b[B_ARM + 1] > 0)


@njit(cache=True)
def _update_open(b: np.ndarray) -> None:
    b[B_ALL_OPEN] = 1 if (not b[B_SIDES_FIRST] or (b[B_ARM] > 0 and b[B_ARM + 1] > 0)) else 0


@njit(cache=True)
def place(b: np.ndarray, tile: int, slot: int, low: np.ndarray, high: np.ndarray) -> None:
    """Put ``tile`` on ``slot`` (legality checked by the caller). A non-double lead has its higher pip
    on W; the first double becomes the spinner, and a line it joins becomes one of its arms."""
    lo = low[tile]
    hi = high[tile]
    if b[B_SIZE] == 0:
        b[B_SIZE] = 1
        if lo == hi:
            b[B_SPINNER] = lo
            b[B_SPINNER_TILE] = tile
            for k in range(4):
                b[B_END + k] = lo
            _update_open(b)
        else:
            b[B_LEAD] = 1
            b[B_END] = hi
            b[B_END + 1] = lo
        return
    x = b[B_END + slot]
    b[B_SIZE] += 1
    if lo == hi and b[B_SPINNER] < 0:
        line = b[B_ARM] + b[B_ARM + 1] + b[B_LEAD]
        b[B_SPINNER] = lo
        b[B_SPINNER_TILE] = tile
        kept = 1 if slot == 0 else 0  # the side the old line fills
        b[B_ARM + kept] = line
        b[B_ARM + slot] = 0
        b[B_END + slot] = lo
        b[B_DOUBLE + slot] = 0
        b[B_END + 2] = lo
        b[B_END + 3] = lo
        b[B_LEAD] = 0
        _update_open(b)
        return
    b[B_END + slot] = hi if lo == x else lo
    b[B_DOUBLE + slot] = 1 if lo == hi else 0
    b[B_ARM + slot] += 1
    if slot < 2 and b[B_SPINNER] >= 0 and b[B_ALL_OPEN] == 0:
        _update_open(b)


@njit(cache=True)
def placements(b: np.ndarray, member: np.ndarray, key: int, with_value: np.ndarray, out: np.ndarray,
               start: int) -> int:
    """Write the legal placement ids (``tile * 4 + slot``) of the tiles ``t`` with ``member[t] == key``
    into ``out`` from ``start`` on, in the core's order (end by end, tiles ascending; on an empty table
    every tile leads on slot 0); return the new end of ``out``."""
    n = start
    if b[B_SIZE] == 0:
        for t in range(member.shape[0]):
            if member[t] == key:
                out[n] = t << 2
                n += 1
        return n
    slots = 4 if b[B_ALL_OPEN] else 2
    values = with_value.shape[1]
    for slot in range(slots):
        v = b[B_END + slot]
        for k in range(values):
            t = with_value[v, k]
            if member[t] == key:
                out[n] = (t << 2) | slot
                n += 1
    return n


@njit(cache=True)
def tile_placements(b: np.ndarray, tile: int, low: np.ndarray, high: np.ndarray, out: np.ndarray,
                    start: int) -> int:
    """The placements of one tile (a tile just drawn), in the core's order; the new end of ``out``."""
    n = start
    if b[B_SIZE] == 0:
        out[n] = tile << 2
        return n + 1
    slots = 4 if b[B_ALL_OPEN] else 2
    for slot in range(slots):
        v = b[B_END + slot]
        if low[tile] == v or high[tile] == v:
            out[n] = (tile << 2) | slot
            n += 1
    return n


@njit(cache=True)
def hand_placements(b: np.ndarray, bits: np.ndarray, R: np.ndarray, out: np.ndarray) -> int:
    """:func:`placements` for a hand given as bit masks (``bits[w]``: word ``w``, see
    :data:`.layout.WORD_BITS`), in the same order: the engine's hot path, which walks only the tiles
    that match instead of testing every tile showing each open value."""
    n = 0
    if b[B_SIZE] == 0:
        for w in range(2):
            m = bits[w]
            while m:
                out[n] = ((trailing_zeros(m) + w * WORD_BITS) << 2)
                n += 1
                m &= m - 1
        return n
    slots = 4 if b[B_ALL_OPEN] else 2
    for slot in range(slots):
        v = b[B_END + slot]
        for w in range(2):
            m = bits[w] & R[VALUE_BITS + 2 * v + w]
            while m:
                out[n] = ((trailing_zeros(m) + w * WORD_BITS) << 2) | slot
                n += 1
                m &= m - 1
    return n
