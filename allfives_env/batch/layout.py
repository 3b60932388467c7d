"""The batch engine's data layout: the per-game record, the rules as a vector of integers, tile tables.

The compiled kernels cannot read a :class:`~allfives_env.core.rules.Rules` object or a Python list, so
everything they need is laid out here once per rules object: every option as one integer of a rules
vector (``R[NUM_PLAYERS]``, ``R[TARGET]``, ...), the tile set as small lookup arrays, and the state of
one game as a numpy record (``numpy.dtype`` with fixed-size array fields). ``n`` games are an array of
``n`` such records, which the kernels index game by game; a record is also what a search copies to try
a move, so a "fork" is one ``record.copy()``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

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

# choices, in the order of Rules' CHOICES tuples
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


def rules_vector(rules: Rules, stop_after_hand: bool = False) -> np.ndarray:
    """Every option of ``rules`` as one integer, at the indices named above."""
    from ..core.rules import CHOICES

    r = np.zeros(RULES_LEN, dtype=np.int64)
    tiles = tile_set(rules.max_pip)
    choice = lambda name: CHOICES[name].index(getattr(rules, name))  # noqa: E731
    r[NUM_PLAYERS] = rules.num_players
    r[PARTNERSHIP] = rules.partnership
    r[HAND_SIZE] = rules.hand_size
    r[MAX_PIP] = rules.max_pip
    r[TILE_COUNT] = tiles.size
    r[NUM_VALUES] = tiles.num_values
    r[RESERVE] = rules.boneyard_reserve
    r[FIRST_LEADER] = choice("first_leader")
    r[FALLBACK] = choice("no_double_fallback")
    r[MUST_LEAD] = rules.must_lead_it
    r[AFTER_BLOCK] = choice("after_block")
    r[MAY_DRAW] = rules.may_draw_when_able
    r[MAX_DRAWS] = -1 if rules.max_draws_per_turn is None else rules.max_draws_per_turn
    r[SIDES_FIRST] = rules.spinner_sides_first
    r[SNIFF] = rules.spinner_count == "sniff"
    r[LEAD_SCORES] = rules.lead_scores
    r[SCORE_UNIT] = rules.score_unit
    r[MIN_FIRST] = rules.min_first_score
    r[WINNER_TAKES] = rules.hand_end == "winner_takes"
    r[ROUNDING] = choice("rounding")
    r[ROUND_EACH] = rules.bonus_round == "round_each"
    r[DIFFERENCE] = rules.blocked_award == "difference"
    r[ALLOW_NEGATIVE] = rules.allow_negative
    r[TARGET] = rules.target
    r[IMMEDIATE] = rules.win_check == "immediate"
    r[EXACT_TARGET] = rules.exact_target
    r[MAX_HANDS] = -1 if rules.max_hands is None else rules.max_hands
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
