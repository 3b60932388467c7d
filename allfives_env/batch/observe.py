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
from ..encoding import ACTION_FEATURES, FIT_CAP, OBSERVATION_PIECES, POINT_SCALE, SCORE_CLIP, observation_slices
from .analysis import (
    ACTIONS, BLOCK, DENY, DOUBLE, DOMINO, FIT, FOLLOW, KIND, NOW, P_LOSE, PIPS, SHOWN, WINS, make_work, placement_rows,
)
from .board import count, counted, spinner_counts
from .checks import batch_game, flag, integer_values, kernel_buffer
from .layout import (
    B_ALL_OPEN, B_ARM, B_DOUBLE, B_END, B_SIZE, B_SPINNER, DRAW_ACTION, MAX_PIP, NUM_PLAYERS, NUM_VALUES, ON_TABLE,
    RESERVE, SCORE_UNIT, TARGET, TILE_COUNT, layout_for,
)
from .play import side_of

#: The slices of the observation, in the order of the offsets vector the kernels read: the encoder's
#: declaration (:data:`~allfives_env.encoding.OBSERVATION_PIECES`). A new piece there fails the unpacking
#: below until its writer is added here too.
SLICES = tuple(piece.name for piece in OBSERVATION_PIECES)
(O_HAND, O_BOARD, O_ENDS, O_SPINNER, O_COUNT, O_BONEYARD, O_SIZES, O_VOIDS, O_SCORES, O_SCORED, O_PARTNERS,
 O_LEAD, O_FEATURES) = range(len(SLICES))
_F = len(ACTION_FEATURES)


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
    for j in range(m):
        r = rows[j]
        o = O[O_FEATURES] + ints[ACTIONS, j] * _F
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

    def __init__(self, rules: Rules, action_features: bool = False) -> None:
        """Offsets from the encoder's declared layout (:func:`~allfives_env.encoding.observation_slices`: no
        encoder is built), and the analysis' work arrays, for the rules' :class:`~.layout.BatchLayout`."""
        if not isinstance(rules, Rules):
            raise RulesError(f"rules must be a Rules object, got {short_repr(rules)}")
        self.action_features = flag(action_features, "action_features")
        layout = layout_for(rules)
        self.rules = rules
        self.slices = observation_slices(rules.num_players, layout.tiles, self.action_features)
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
