"""Batched observations: the ``allfives_v0`` observation vector of one seat of every game, compiled.

:class:`BatchObserver` writes, for each game of a :class:`~allfives_env.batch.engine.BatchGame`, the
vector that :meth:`allfives_env.encoding.ObservationEncoder.encode` gives for the same position and
seat, bit for bit: the same slices (their offsets are read from an encoder, so the two layouts cannot
diverge), the same float64 arithmetic rounded once to float32 (``count * (1 / (8 max_pip))``,
``boneyard / T``, scores over the target clipped to +-2, ...). With ``action_features=True`` the
``features`` slice is filled too, for a game whose observed seat is the seat to act, as the encoder
does: the placement analysis is the compiled port in :mod:`.analysis`.

Which seat: ``seats[i]`` when given (any seat, also of a finished game), else the seat to act in game
``i``; a finished game, which has no seat to act, is then observed from seat 0 (the encoder encodes a
finished game too: the last hand's table, the final scores).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from .jit import njit

from ..core.errors import BatchError, RulesError, short_repr
from ..core.rules import Rules
from ..analysis import GAME_WINNING_REPLY_COST
from ..encoding import (
    ACTION_FEATURES, ACTION_FEATURES_V2, DRAW_CAP, FIT_CAP, HISTORY_COLUMNS, HISTORY_POINT_DIVISOR, HISTORY_TURNS,
    NEED_BINS, OBS_LAYOUT_VERSION, OBSERVATION_PIECES, POINT_SCALE, SCORE_CLIP, check_obs_version, observation_slices,
)
from .analysis import (
    ACTIONS, BLOCK, DENY, DOUBLE, DOMINO, FIT, FOLLOW, KIND, NOW, P_LOSE, PIPS, SHOWN, WINS, make_work, placement_rows,
)
from .board import count, counted, spinner_counts
from .checks import batch_game, flag, integer_values, kernel_buffer
from .layout import (
    B_ALL_OPEN, B_ARM, B_DOUBLE, B_END, B_SIZE, B_SPINNER, DRAW_ACTION, H_BEST, H_DRAWN, H_EXISTS, H_PASSED, H_PIPS,
    H_PLACED, H_POINTS, HIST_COLUMNS, HIST_TURNS, MAX_PIP, NUM_PLAYERS, NUM_VALUES, ON_TABLE, PIPS_AT, RESERVE,
    ROUND_EACH, ROUND_NEAREST, ROUNDING, SCORE_UNIT, TARGET, TILE_COUNT, WINNER_TAKES, layout_for,
)
from .play import pips_to_points, side_of

#: The slices of the observation, in the order of the offsets vector the kernels read: the encoder's
#: declaration (:data:`~allfives_env.encoding.OBSERVATION_PIECES`). A new piece there fails the unpacking
#: below until its writer is added here too.
SLICES = tuple(piece.name for piece in OBSERVATION_PIECES)
(O_HAND, O_BOARD, O_ENDS, O_SPINNER, O_COUNT, O_BONEYARD, O_SIZES, O_VOIDS, O_SCORES, O_SCORED, O_PARTNERS,
 O_LEAD, O_NEEDS, O_PIPS, O_BONUS, O_HISTORY, O_FEATURES) = range(len(SLICES))
_F = len(ACTION_FEATURES)
_F2 = _F + len(ACTION_FEATURES_V2)
_NEED_WIDTH = NEED_BINS + 1
assert (HIST_TURNS, HIST_COLUMNS) == (HISTORY_TURNS, len(HISTORY_COLUMNS))
assert HISTORY_COLUMNS.index("best") == H_BEST and HISTORY_COLUMNS.index("drew") == H_DRAWN


@njit(cache=True)
def _unseen(g, R: np.ndarray, seat: int):
    """(own pips, own tiles, unseen pips, unseen tiles, the whole set's pips) as ``seat`` sees them."""
    own = 0
    own_n = 0
    unseen = 0
    unseen_n = 0
    total = 0
    for t in range(R[TILE_COUNT]):
        p = R[PIPS_AT + t]
        total += p
        w = g.owner[t]
        if w == seat:
            own += p
            own_n += 1
        elif w < ON_TABLE:
            unseen += p
            unseen_n += 1
    return own, own_n, unseen, unseen_n, total


@njit(cache=True)
def _bonus_bound(R: np.ndarray, pips: int, opposing: int) -> int:
    """:func:`allfives_env.encoding.bonus_bound`: the largest end-of-hand bonus (points) from ``pips``."""
    if not R[WINNER_TAKES]:
        return 0
    extra = 2 * (opposing - 1) if R[ROUND_EACH] and R[ROUNDING] == ROUND_NEAREST else 0
    return pips_to_points(R, pips + extra)


@njit(cache=True)
def _opposing(R: np.ndarray, side: int) -> int:
    """The seats not on ``side``."""
    n = 0
    for s in range(R[NUM_PLAYERS]):
        if side_of(R, s) != side:
            n += 1
    return n


@njit(cache=True)
def _write_race(g, R: np.ndarray, seat: int, row: np.ndarray, O: np.ndarray) -> None:
    """Version 2's ``needs``, ``pips``, ``bonus`` and ``history`` slices (``row`` zero there), with the
    encoder's integer quotients taken once in float64."""
    P = R[NUM_PLAYERS]
    T = R[TILE_COUNT]
    my_side = side_of(R, seat)
    own, own_n, unseen, unseen_n, total = _unseen(g, R, seat)
    op = O[O_PIPS]
    row[op] = own / total
    row[op + 1] = unseen / total
    if unseen_n:
        for k in range(1, P):
            row[op + 1 + k] = (g.hand_count[(seat + k) % P] * unseen) / (unseen_n * total)
        row[op + 1 + P] = ((T - g.next_draw) * unseen) / (unseen_n * total)
    row[op + 2 + P] = own_n / T
    pip_scale = 2 * R[MAX_PIP]
    for k in range(P):
        other = (seat + k) % P
        side = side_of(R, other)
        score = g.scores[side]
        short = R[TARGET] - score
        if short > 0:
            need = (short * R[SCORE_UNIT] + 4) // 5
            row[O[O_NEEDS] + k * _NEED_WIDTH + min(need, _NEED_WIDTH) - 1] = 1.0
        if R[WINNER_TAKES]:
            bound = _bonus_bound(R, unseen if side == my_side else unseen + own, _opposing(R, side))
            if score + bound >= R[TARGET]:
                row[O[O_BONUS] + k] = 1.0
        if k == 0:
            continue
        for j in range(HIST_TURNS):
            if not g.hist[other, j, H_EXISTS]:
                continue
            base = O[O_HISTORY] + ((k - 1) * HIST_TURNS + j) * HIST_COLUMNS
            row[base] = 1.0
            if g.hist[other, j, H_PLACED]:
                row[base + 1] = 1.0
                row[base + 5] = g.hist[other, j, H_PIPS] / pip_scale
            if g.hist[other, j, H_PASSED]:
                row[base + 2] = 1.0
            drawn = g.hist[other, j, H_DRAWN]
            if drawn:
                row[base + 3] = min(drawn, DRAW_CAP) / DRAW_CAP
            if g.hist[other, j, H_POINTS]:
                row[base + 4] = g.hist[other, j, H_POINTS] / HISTORY_POINT_DIVISOR
            if g.hist[other, j, H_BEST]:
                row[base + 6] = g.hist[other, j, H_BEST] / HISTORY_POINT_DIVISOR


@njit(cache=True)
def _write_table(g, R: np.ndarray, seat: int, row: np.ndarray, O: np.ndarray) -> None:
    """The ``hand``, ``board``, ``ends``, ``spinner`` and ``lead`` slices (``row`` is zero)."""
    P = R[NUM_PLAYERS]
    V = R[NUM_VALUES]
    oh = O[O_HAND]
    ob = O[O_BOARD]
    for t in range(R[TILE_COUNT]):
        w = g.owner[t]
        if w == seat:
            row[oh + t] = 1.0
        elif w >= ON_TABLE:
            rel = w - ON_TABLE - seat  # the relative seat that played it, without a division
            row[ob + t * P + (rel + P if rel < 0 else rel)] = 1.0
    b = g.board
    if b[B_SIZE] == 0:
        row[O[O_LEAD]] = 1.0
        return
    for slot in range(4):
        base = O[O_ENDS] + slot * (V + 3)
        if slot < 2 or b[B_ALL_OPEN]:
            row[base + b[B_END + slot]] = 1.0
            row[base + V] = 1.0
        if counted(b, slot):
            row[base + V + 1] = 1.0
        if b[B_ARM + slot] and b[B_DOUBLE + slot]:
            row[base + V + 2] = 1.0
    if b[B_SPINNER] >= 0:
        row[O[O_SPINNER]] = 1.0
        row[O[O_SPINNER] + 1 + b[B_SPINNER]] = 1.0
        if spinner_counts(b):
            row[O[O_SPINNER] + 1 + V] = 1.0


@njit(cache=True)
def _write_public(g, R: np.ndarray, seat: int, row: np.ndarray, O: np.ndarray) -> None:
    """The ``count``, ``boneyard``, ``hand_sizes``, ``voids``, ``scores``, ``scored`` and ``partners``
    slices, with the encoder's float64 operations, each rounded once to float32."""
    P = R[NUM_PLAYERS]
    V = R[NUM_VALUES]
    T = R[TILE_COUNT]
    c = count(g.board)
    row[O[O_COUNT]] = c * (1.0 / (8 * R[MAX_PIP]))
    if c and c % 5 == 0:
        row[O[O_COUNT] + 1] = 1.0
    boneyard = T - g.next_draw
    row[O[O_BONEYARD]] = boneyard / T
    row[O[O_BONEYARD] + 1] = max(0, boneyard - R[RESERVE]) / T
    my_side = side_of(R, seat)
    for k in range(P):
        other = (seat + k) % P
        side = side_of(R, other)
        if k:
            row[O[O_SIZES] + k - 1] = g.hand_count[other] / T
            m = g.voids[other]
            for v in range(V):
                if (m >> v) & 1:
                    row[O[O_VOIDS] + (k - 1) * V + v] = 1.0
        value = g.scores[side] / R[TARGET]
        row[O[O_SCORES] + k] = SCORE_CLIP if value > SCORE_CLIP else (-SCORE_CLIP if value < -SCORE_CLIP else value)
        if g.is_in[side]:
            row[O[O_SCORED] + k] = 1.0
        if side == my_side:
            row[O[O_PARTNERS] + k] = 1.0


@njit(cache=True)
def _write_features(g, R, seat, row, O, ints, floats, after, rows) -> None:
    """The ``features`` slice of the seat to act: one row of ACTION_FEATURES per legal placement."""
    m = 0
    for k in range(g.n_legal):
        a = g.legal[k]
        if a != R[DRAW_ACTION]:
            ints[ACTIONS, m] = a
            m += 1
    if m == 0:
        return
    placement_rows(g, R, seat, m, GAME_WINNING_REPLY_COST, False, ints, floats, after, rows)
    unit = R[SCORE_UNIT] * POINT_SCALE
    pip_scale = 1.0 / (2 * R[MAX_PIP])
    inv_v = 1.0 / R[NUM_VALUES]
    race = O[O_NEEDS] >= 0
    F = _F2 if race else _F
    own = 0
    total = 0
    score = g.scores[side_of(R, seat)]
    bound = 0
    if race:
        own, own_n, unseen, unseen_n, total = _unseen(g, R, seat)
        if g.hand_count[seat] == 1:
            side = side_of(R, seat)
            bound = _bonus_bound(R, unseen, _opposing(R, side))
    for j in range(m):
        r = rows[j]
        o = O[O_FEATURES] + ints[ACTIONS, j] * F
        kind = r[KIND]
        row[o] = 1.0
        row[o + 1] = 1.0 if kind == WINS else 0.0
        row[o + 2] = 1.0 if kind == DOMINO else 0.0
        row[o + 3] = r[NOW] * unit
        row[o + 4] = r[DENY] * POINT_SCALE
        row[o + 5] = r[P_LOSE]
        row[o + 6] = r[BLOCK]
        row[o + 7] = r[FOLLOW] * unit
        row[o + 8] = min(r[FIT], FIT_CAP) / FIT_CAP
        row[o + 9] = r[SHOWN] * inv_v
        row[o + 10] = r[PIPS] * pip_scale
        row[o + 11] = r[DOUBLE]
        if race:
            row[o + 12] = (own - R[PIPS_AT + (ints[ACTIONS, j] >> 2)]) / total
            if score + r[NOW] >= R[TARGET] or (g.hand_count[seat] == 1 and score + r[NOW] + bound >= R[TARGET]):
                row[o + 13] = 1.0


@njit(cache=True)
def observe_games(S, R, seats, out, O) -> None:
    """``out[i]`` = the observation of game ``i`` from ``seats[i]`` (-1: the seat to act, seat 0 once the
    game is over), all but the ``features`` slice, which is left at zero."""
    for i in range(S.shape[0]):
        g = S[i]
        seat = seats[i]
        if seat < 0:
            seat = 0 if g.over else g.current
        row = out[i]
        row[:] = 0.0
        _write_table(g, R, seat, row, O)
        _write_public(g, R, seat, row, O)
        if O[O_NEEDS] >= 0:
            _write_race(g, R, seat, row, O)


@njit(cache=True)
def observe_features(S, R, seats, out, O, ints, floats, after, rows) -> None:
    """The ``features`` slice of ``out[i]`` where game ``i``'s observed seat (as in :func:`observe_games`)
    is the seat to act; the slice must be zero on entry."""
    for i in range(S.shape[0]):
        g = S[i]
        seat = seats[i]
        if g.over or (seat >= 0 and seat != g.current):
            continue
        _write_features(g, R, g.current, out[i], O, ints, floats, after, rows)


class BatchObserver:
    """The observations of a batch of games under one rules object, as
    :class:`~allfives_env.encoding.ObservationEncoder` ``(rules, action_features)`` encodes them.

    ``size`` is the length of one observation; :meth:`observe` fills an ``(n, size)`` float32 array.
    """

    def __init__(self, rules: Rules, action_features: bool = False, obs_version: int = OBS_LAYOUT_VERSION) -> None:
        """Offsets from the encoder's declared layout (:func:`~allfives_env.encoding.observation_slices`: no
        encoder is built), and the analysis' work arrays, for the rules' :class:`~.layout.BatchLayout`.
        Version 2 reads the batch's turn history: its batches must be built with ``history=True``."""
        if not isinstance(rules, Rules):
            raise RulesError(f"rules must be a Rules object, got {short_repr(rules)}")
        self.action_features = flag(action_features, "action_features")
        self.obs_version = check_obs_version(obs_version)
        layout = layout_for(rules)
        self.rules = rules
        self.slices = observation_slices(rules.num_players, layout.tiles, self.action_features, self.obs_version)
        self.size = max(s.stop for s in self.slices.values())
        self.offsets = np.array([self.slices[name].start if name in self.slices else -1 for name in SLICES],
                                dtype=np.int64)
        self.work = make_work(layout)

    def observe(self, batch: Any, seats: Optional[np.ndarray] = None, out: Optional[np.ndarray] = None) -> np.ndarray:
        """float32 ``(n, size)``: each game's observation from ``seats[i]`` (an int array of shape
        ``(n,)``; None or -1 = the seat to act, seat 0 for a finished game). ``out`` is reused when
        given (float32, C-contiguous, writable, shape ``(n, size)``)."""
        batch = batch_game(batch, "BatchObserver.observe")
        if batch.rules is not self.rules and batch.rules != self.rules:
            raise RulesError("this BatchObserver was built for other rules than the batch's")
        if self.obs_version >= 2 and not getattr(batch, "history", False):
            raise BatchError("observation version 2 reads each seat's turn history, which this batch does not keep: "
                             "build it with BatchGame(..., history=True)")
        n = batch.n
        chosen = np.full(n, -1, dtype=np.int64) if seats is None else self._checked_seats(seats, n)
        if out is None:
            out = np.empty((n, self.size), dtype=np.float32)
        else:
            out = kernel_buffer(out, "out", (n, self.size), np.float32, owner=batch.S)
        R = batch.rules_vector
        observe_games(batch.S, R, chosen, out, self.offsets)
        if self.action_features:
            w = self.work
            observe_features(batch.S, R, chosen, out, self.offsets, w.ints, w.floats, w.after, w.rows)
        return out

    def _checked_seats(self, seats: Any, n: int) -> np.ndarray:
        """``seats`` as an int64 (n,) array of -1 or seats of the game, or a clear error."""
        arr = integer_values(seats, "seats", (n,))
        if arr.size and (arr.min() < -1 or arr.max() >= self.rules.num_players):
            bad = int(arr.min()) if arr.min() < -1 else int(arr.max())
            raise BatchError(f"seats must be -1 (the seat to act) or a seat 0..{self.rules.num_players - 1}; "
                             f"got {bad}")
        return arr
