"""The batch engine's data layout: the per-game record, the rules as a vector of integers, tile tables.

The compiled kernels cannot read a :class:`~allfives_env.core.rules.Rules` object or a Python list, so
everything they need is laid out here once per rules object: every option as one integer of a rules
vector (``R[NUM_PLAYERS]``, ``R[TARGET]``, ...), the tile set as small lookup arrays, and the state of
one game as a numpy record (``numpy.dtype`` with fixed-size array fields). ``n`` games are an array of
``n`` such records, which the kernels index game by game; a record is also what a search copies to try
a move, so a "fork" is one ``record.copy()``.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np

from ..core.errors import BatchError
from ..core.options import OPTIONS
from ..core.rules import Rules
from ..core.tiles import tile_set

# ---------------------------------------------------------------- the rules vector (R[...])
(NUM_PLAYERS, PARTNERSHIP, HAND_SIZE, MAX_PIP, TILE_COUNT, NUM_VALUES, RESERVE, FIRST_LEADER, FALLBACK,
 MUST_LEAD, AFTER_BLOCK, MAY_DRAW, MAX_DRAWS, SIDES_FIRST, SNIFF, LEAD_SCORES, SCORE_UNIT, MIN_FIRST,
 WINNER_TAKES, ROUNDING, ROUND_EACH, DIFFERENCE, ALLOW_NEGATIVE, TARGET, IMMEDIATE, EXACT_TARGET, MAX_HANDS,
 NUM_SIDES, DRAW_ACTION, STOP_AFTER_HAND, NUM_ACTIONS, VALUE_BITS) = range(32)
#: R[VALUE_BITS + 2*v + w]: word w of the bit mask of the tiles showing pip value v (tile ids are split
#: into words of :data:`WORD_BITS`, so that every mask is a non-negative int64 even for double-twelve)
WORD_BITS = 60
#: The tile tables follow the rules in the same vector (one array is all a kernel needs besides the game
#: and the log: every extra array argument costs a compiled call about as much as the work it does).
#: R[LOW_AT + t], R[HIGH_AT + t], R[PIPS_AT + t], R[IS_DOUBLE_AT + t] per tile id t; R[DOUBLE_ID_AT + v]
#: per pip value; R[WITH_VALUE_AT + 13*v + k] the k-th tile id showing v.
_MAX_T, _MAX_V = 91, 13
LOW_AT = VALUE_BITS + 2 * _MAX_V
HIGH_AT = LOW_AT + _MAX_T
PIPS_AT = HIGH_AT + _MAX_T
IS_DOUBLE_AT = PIPS_AT + _MAX_T
DOUBLE_ID_AT = IS_DOUBLE_AT + _MAX_T
WITH_VALUE_AT = DOUBLE_ID_AT + _MAX_V
RULES_LEN = WITH_VALUE_AT + _MAX_V * _MAX_V

# choices, in the order of the kernels' tuples in ENCODERS below
FIRST_RANDOM, FIRST_HIGHEST_DOUBLE = 0, 1
FALLBACK_HEAVIEST, FALLBACK_REDEAL, FALLBACK_DRAW = 0, 1, 2
AFTER_RANDOM, AFTER_LOWEST, AFTER_ROTATE = 0, 1, 2
ROUND_NEAREST, ROUND_DOWN, ROUND_NONE = 0, 1, 2

# ---------------------------------------------------------------- the board vector (game.board[...])
B_END = 0  # 0..3: open value of W, E, N, S
B_DOUBLE = 4  # 4..7: the last tile of that arm is a double
B_ARM = 8  # 8..11: tiles in that arm
B_SPINNER = 12  # spinner pip value, -1 before the first double
B_SIZE = 13  # tiles on the table
B_ALL_OPEN = 14  # 1 when N and S are open too (else only W and E, or nothing on an empty board)
B_SPINNER_TILE = 15
B_LEAD = 16  # 1 while a non-double lead sits in the line (it belongs to no arm)
B_SNIFF = 17  # spinner_count == 'sniff'
B_SIDES_FIRST = 18  # spinner_sides_first
BOARD_LEN = 20

# ---------------------------------------------------------------- where a tile is (game.owner[t])
BONEYARD = 8  # 0..3: in that seat's hand
ON_TABLE = 16  # 16 + seat: on the table, played by that seat

# results of a hand (settlement), as in the core's Settlement.result
DOMINO, BLOCKED, BY_TARGET = 0, 1, 2
RESULT_NAMES = ("domino", "blocked", "target")

# event kinds of the replay log (one row of integers per event)
EV_HAND_START, EV_PLAY, EV_DRAW, EV_PASS, EV_SETTLEMENT, EV_GAME_OVER, EV_DEAL = range(7)
EVENT_WIDTH = 16


def log_width(max_pip: int) -> int:
    """Columns of a replay log row: an event, or a deal (kind, hand, leader, opening drawer, the tiles)."""
    return max(EVENT_WIDTH, tile_set(max_pip).size + 4)


class Tables(NamedTuple):
    """The tile set as arrays the kernels read: per tile id its low and high pip, pips and double flag;
    per pip value the double's id and the ids of every tile showing that value (ascending)."""

    low: np.ndarray
    high: np.ndarray
    pips: np.ndarray
    double: np.ndarray
    double_id: np.ndarray
    with_value: np.ndarray  # (V, V): with_value[v, k] = k-th tile id showing v


def tables_for(max_pip: int) -> Tables:
    """The :class:`Tables` of the double-``max_pip`` set."""
    tiles = tile_set(max_pip)
    with_value = np.zeros((tiles.num_values, tiles.num_values), dtype=np.int32)
    for v in range(tiles.num_values):
        with_value[v] = [t for t in range(tiles.size) if v in tiles.pairs[t]]
    as_array = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
    return Tables(as_array(tiles.low), as_array(tiles.high), as_array(tiles.pips), as_array(tiles.is_double),
                  as_array(tiles.double_id), with_value)


class Encoding(NamedTuple):
    """How one rules option reaches the kernels: ``R[slot]`` holds the index of its value in ``choices``
    (the kernels' order; a 0/1 flag for two), or with ``choices`` empty the integer itself (``none`` for
    None), restricted to ``plays`` when given. A value the kernels do not play is refused with a
    :class:`BatchError`, never played as another. ``slot`` None: the kernels play one value only."""

    slot: Optional[int]
    choices: tuple[Any, ...] = ()
    plays: tuple[int, ...] = ()
    none: int = -1

    def write(self, r: np.ndarray, name: str, value: Any) -> None:
        """Encode ``value`` of option ``name`` into the rules vector ``r``."""
        known = self.choices or self.plays
        if known and value not in known:
            raise BatchError(f"rules option {name}={value!r} is not played by the batch engine (it plays "
                             f"{list(known)}); play these rules with the core (allfives_env.core.Game) or the "
                             "environments")
        if self.slot is not None:
            r[self.slot] = self.choices.index(value) if self.choices else self.none if value is None else value


_SWITCH = (False, True)
#: How each rules option reaches the kernels: one encoding per option of the table
#: (:data:`~allfives_env.core.options.OPTIONS`), no more, no fewer; :func:`rules_vector` refuses every rules
#: object while an option has none.
ENCODERS: dict[str, Encoding] = {
    "num_players": Encoding(NUM_PLAYERS, plays=(2, 3, 4)),
    "partnership": Encoding(PARTNERSHIP, _SWITCH),
    "hand_size": Encoding(HAND_SIZE),
    "max_pip": Encoding(MAX_PIP, plays=(6, 9, 12)),
    "boneyard_reserve": Encoding(RESERVE),
    "first_leader": Encoding(FIRST_LEADER, ("random", "highest_double")),
    "no_double_fallback": Encoding(FALLBACK, ("heaviest_tile", "redeal", "draw_until_double")),
    "must_lead_it": Encoding(MUST_LEAD, _SWITCH),
    "after_block": Encoding(AFTER_BLOCK, ("random", "lowest_pips", "rotate")),
    "may_draw_when_able": Encoding(MAY_DRAW, _SWITCH),
    "max_draws_per_turn": Encoding(MAX_DRAWS),
    "spinner": Encoding(None, ("first_double",)),
    "spinner_sides_first": Encoding(SIDES_FIRST, _SWITCH),
    "spinner_count": Encoding(SNIFF, ("allfives", "sniff")),
    "lead_scores": Encoding(LEAD_SCORES, _SWITCH),
    "score_unit": Encoding(SCORE_UNIT, plays=(1, 5)),
    "min_first_score": Encoding(MIN_FIRST),
    "hand_end": Encoding(WINNER_TAKES, ("deduct_own", "winner_takes")),
    "rounding": Encoding(ROUNDING, ("nearest", "down", "none")),
    "bonus_round": Encoding(ROUND_EACH, ("sum_then_round", "round_each")),
    "blocked_award": Encoding(DIFFERENCE, ("opponents_total", "difference")),
    "allow_negative": Encoding(ALLOW_NEGATIVE, _SWITCH),
    "target": Encoding(TARGET),
    "win_check": Encoding(IMMEDIATE, ("end_of_hand", "immediate")),
    "exact_target": Encoding(EXACT_TARGET, _SWITCH),
    "max_hands": Encoding(MAX_HANDS),
}


def rules_vector(rules: Rules, stop_after_hand: bool = False) -> np.ndarray:
    """Every option of ``rules`` as one integer, at the indices named above, by :data:`ENCODERS`.

    Raises :class:`BatchError` when an option of the table has no encoder (the kernels would play the
    rules without it) or a value is one the kernels do not play."""
    unencoded = [o.name for o in OPTIONS if o.name not in ENCODERS]
    if unencoded or len(ENCODERS) != len(OPTIONS):
        unknown = sorted(set(ENCODERS) - {o.name for o in OPTIONS})
        raise BatchError(f"the batch engine has no encoding for rules option(s) {unencoded}"
                         f"{f' and encodes unknown option(s) {unknown}' if unknown else ''}: it cannot play these "
                         "rules; give the option its Encoding in allfives_env/batch/layout.py ENCODERS and its rule "
                         "in the kernels, or play these rules with the core (allfives_env.core.Game)")
    r = np.zeros(RULES_LEN, dtype=np.int64)
    tiles = tile_set(rules.max_pip)
    for name, encoding in ENCODERS.items():
        encoding.write(r, name, getattr(rules, name))
    r[TILE_COUNT] = tiles.size
    r[NUM_VALUES] = tiles.num_values
    r[NUM_SIDES] = rules.num_sides
    r[DRAW_ACTION] = tiles.size * 4 if rules.may_draw_when_able else -1
    r[STOP_AFTER_HAND] = stop_after_hand
    r[NUM_ACTIONS] = tiles.size * 4 + (1 if rules.may_draw_when_able else 0)
    for v in range(tiles.num_values):
        for t in range(tiles.size):
            if v in tiles.pairs[t]:
                r[VALUE_BITS + 2 * v + t // WORD_BITS] |= 1 << (t % WORD_BITS)
    t = tables_for(rules.max_pip)
    T, V = tiles.size, tiles.num_values
    for at, values in ((LOW_AT, t.low), (HIGH_AT, t.high), (PIPS_AT, t.pips), (IS_DOUBLE_AT, t.double)):
        r[at:at + T] = values
    r[DOUBLE_ID_AT:DOUBLE_ID_AT + V] = t.double_id
    for v in range(V):
        r[WITH_VALUE_AT + _MAX_V * v:WITH_VALUE_AT + _MAX_V * v + V] = t.with_value[v]
    return r


def max_legal(max_pip: int) -> int:
    """The most legal actions a seat can ever have: a lead from a hand of every tile, or four ends each
    matched by every tile showing its value, plus the draw action."""
    tiles = tile_set(max_pip)
    return max(tiles.size, 4 * tiles.num_values) + 1


def state_dtype(max_pip: int) -> np.dtype:
    """The record of one game (aligned; array fields are sized for the set, four seats at most)."""
    tiles = tile_set(max_pip)
    T = tiles.size
    return np.dtype([
        ("owner", np.int8, (T,)),  # where each tile is: a seat's hand, the boneyard, the table
        ("deal", np.int16, (T,)),  # this hand's deal: seat s holds [s*h, (s+1)*h), the boneyard follows
        ("legal", np.int16, (max_legal(max_pip),)),  # legal actions of the seat to act, in the core's order
        ("board", np.int32, (BOARD_LEN,)),
        ("hand_count", np.int32, (4,)),
        ("hand_bits", np.int64, (4, 2)),  # per seat: its tiles as bit masks (words of WORD_BITS tile ids)
        ("voids", np.int32, (4,)),  # per seat: bit mask of pip values it is known to lack
        ("scores", np.int32, (4,)),  # per side
        ("is_in", np.int32, (4,)),  # per side: has scored (min_first_score)
        ("last_pips", np.int32, (4,)),  # per seat, at the last settlement (after_block='lowest_pips')
        ("rng", np.uint64), ("episode_rng", np.uint64),
        ("n_legal", np.int32), ("current", np.int32), ("leader", np.int32), ("next_draw", np.int32),
        ("passes", np.int32), ("draws_this_turn", np.int32), ("pending_seat", np.int32), ("pending_mask", np.int32),
        ("hand_number", np.int32), ("hands_completed", np.int32), ("over", np.int32), ("winner", np.int32),
        ("truncated", np.int32), ("last_result", np.int32), ("last_dominoer", np.int32),
        ("opening_drawer", np.int32), ("decisions", np.int32), ("episodes", np.int32),
    ], align=True)
