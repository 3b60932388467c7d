"""The batch engine's data layout: the per-game record, the rules as a vector of integers, tile tables.

The compiled kernels cannot read a :class:`~allfives_env.core.rules.Rules` object or a Python list, so
everything they need is laid out here once per rules object (:func:`layout_for`, a :class:`BatchLayout`
that the engine, its observers and agents share): every option as one integer of a rules vector
(``R[NUM_PLAYERS]``, ``R[TARGET]``, ...), the tile set as small lookup arrays, and the state of one game as
a numpy record (``numpy.dtype`` with fixed-size array fields). ``n`` games are an array of ``n`` such
records, which the kernels index game by game; a record is also what a search copies to try a move, so a
"fork" is one ``record.copy()``.

Nothing here is numbered by hand: the rules vector holds the options in the order of the option table
(:data:`~allfives_env.core.options.OPTIONS`), then the :data:`DERIVED` values, then the tile tables, so a
new option takes the next slot and moves what follows on its own. What the kernels play of each option is
stated in :data:`ENCODERS`; a value they do not play is refused, never played as another.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, NamedTuple

import numpy as np

from ..core.errors import BatchError, short_repr
from ..core.options import OPTIONS
from ..core.rules import Rules
from ..core.tiles import TileSet, tile_set
from ..core.values import is_integer

# ---------------------------------------------------------------- the rules vector (R[...])
#: The values the kernels read that no option holds, after the options in the rules vector, each with
#: how it follows from the rules and the set (``stop_after_hand`` is how a batch plays, not a rule: each
#: batch writes it into its own copy of the vector, :meth:`BatchLayout.rules_vector`).
DERIVED: tuple[tuple[str, Callable[[Rules, TileSet], int]], ...] = (
    ("tile_count", lambda r, t: t.size),
    ("num_values", lambda r, t: t.num_values),
    ("num_sides", lambda r, t: r.num_sides),
    ("draw_action", lambda r, t: t.size * 4 if r.may_draw_when_able else -1),
    ("num_actions", lambda r, t: t.size * 4 + (1 if r.may_draw_when_able else 0)),
    ("stop_after_hand", lambda r, t: 0),
    ("history", lambda r, t: 0),
)
#: R[SLOT[name]]: every option of the table in the table's order, then the derived values.
SLOT: dict[str, int] = {name: k for k, name in enumerate([o.name for o in OPTIONS] + [d for d, _ in DERIVED])}

# The slots the kernels read, by the names they use (numba reads them as constants when it compiles).
NUM_PLAYERS = SLOT["num_players"]
PARTNERSHIP = SLOT["partnership"]
HAND_SIZE = SLOT["hand_size"]
MAX_PIP = SLOT["max_pip"]
RESERVE = SLOT["boneyard_reserve"]
FIRST_LEADER = SLOT["first_leader"]
FALLBACK = SLOT["no_double_fallback"]
MUST_LEAD = SLOT["must_lead_it"]
AFTER_BLOCK = SLOT["after_block"]
MAY_DRAW = SLOT["may_draw_when_able"]
MAX_DRAWS = SLOT["max_draws_per_turn"]
SIDES_FIRST = SLOT["spinner_sides_first"]
SNIFF = SLOT["spinner_count"]
LEAD_SCORES = SLOT["lead_scores"]
SCORE_UNIT = SLOT["score_unit"]
MIN_FIRST = SLOT["min_first_score"]
WINNER_TAKES = SLOT["hand_end"]
ROUNDING = SLOT["rounding"]
ROUND_EACH = SLOT["bonus_round"]
DIFFERENCE = SLOT["blocked_award"]
ALLOW_NEGATIVE = SLOT["allow_negative"]
TARGET = SLOT["target"]
IMMEDIATE = SLOT["win_check"]
EXACT_TARGET = SLOT["exact_target"]
MAX_HANDS = SLOT["max_hands"]
TILE_COUNT = SLOT["tile_count"]
NUM_VALUES = SLOT["num_values"]
NUM_SIDES = SLOT["num_sides"]
DRAW_ACTION = SLOT["draw_action"]
NUM_ACTIONS = SLOT["num_actions"]
STOP_AFTER_HAND = SLOT["stop_after_hand"]
#: 1 when the batch keeps each seat's turn history (``hist``; observation version 2 reads it)
HISTORY = SLOT["history"]
#: R[VALUE_BITS + 2*v + w]: word w of the bit mask of the tiles showing pip value v (tile ids are split
#: into words of :data:`WORD_BITS`, so that every mask is a non-negative int64 even for double-twelve)
VALUE_BITS = len(SLOT)
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


class Encoding(NamedTuple):
    """What the kernels play of one rules option, and how its value reaches them in ``R[SLOT[name]]``.

    ``plays``: the values the kernels play. With ``integer`` false (:func:`choice`, :data:`SWITCH`,
    :func:`only`) R holds the value's index in ``plays``, the kernels' order; with ``integer`` true
    (:func:`integer`) R holds the integer itself (``none`` for None), any integer the rules allow when
    ``plays`` is empty. A value outside what the encoding plays is refused with a :class:`BatchError`, never
    played as another: an encoding cannot accept a value without saying what the kernels do with it."""

    plays: tuple[Any, ...]
    integer: bool = False
    none: int = -1

    def code(self, name: str, value: Any) -> int:
        """The integer the kernels read for ``value`` of option ``name``, or a :class:`BatchError`."""
        if self.integer and not (value is None or is_integer(value)):
            raise BatchError(f"rules option {name}={short_repr(value)} is not an integer, and its encoding in "
                             "allfives_env/batch/layout.py ENCODERS hands the kernels the integer itself")
        if (self.plays or not self.integer) and value not in self.plays:
            raise BatchError(f"rules option {name}={value!r} is not played by the batch engine (it plays "
                             f"{list(self.plays)}); play these rules with the core (allfives_env.core.Game) or the "
                             "environments")
        if not self.integer:
            return self.plays.index(value)
        return self.none if value is None else int(value)


def choice(*values: Any) -> Encoding:
    """The kernels play each of ``values``: R holds the value's index in this order (their constants')."""
    return Encoding(values)


def integer(*plays: int, none: int = -1) -> Encoding:
    """The kernels read the integer itself (``none`` for None): every integer the rules allow, or only
    ``plays`` when given."""
    return Encoding(plays, integer=True, none=none)


def only(value: Any) -> Encoding:
    """The kernels play ``value`` alone and read nothing: the option's other values are refused. An option
    the kernels do not play yet is declared so, at its default, until its rule is written in them."""
    return Encoding((value,))


#: A true/false option: R holds 0 or 1.
SWITCH = choice(False, True)
#: What the kernels play of each rules option: one encoding per option of the table
#: (:data:`~allfives_env.core.options.OPTIONS`), no more, no fewer; :func:`layout_for` refuses every rules
#: object while an option has none, and every value its encoding does not play.
ENCODERS: dict[str, Encoding] = {
    "num_players": integer(2, 3, 4),
    "partnership": SWITCH,
    "hand_size": integer(),
    "max_pip": integer(3, 6, 9, 12),
    "boneyard_reserve": integer(),
    "first_leader": choice("random", "highest_double"),
    "no_double_fallback": choice("heaviest_tile", "redeal", "draw_until_double"),
    "must_lead_it": SWITCH,
    "after_block": choice("random", "lowest_pips", "rotate"),
    "may_draw_when_able": SWITCH,
    "max_draws_per_turn": integer(),
    "spinner": only("first_double"),
    "spinner_sides_first": SWITCH,
    "spinner_count": choice("allfives", "sniff"),
    "lead_scores": SWITCH,
    "score_unit": integer(1, 5),
    "min_first_score": integer(),
    "hand_end": choice("deduct_own", "winner_takes"),
    "rounding": choice("nearest", "down", "none"),
    "bonus_round": choice("sum_then_round", "round_each"),
    "blocked_award": choice("opponents_total", "difference"),
    "allow_negative": SWITCH,
    "target": integer(),
    "win_check": choice("end_of_hand", "immediate"),
    "exact_target": SWITCH,
    "max_hands": integer(),
}


def _codes(name: str) -> range:
    """The codes of option ``name``'s choices, in its encoder's order (the kernels' names unpack them)."""
    return range(len(ENCODERS[name].plays))


# choices, by the codes the kernels compare R[...] with
FIRST_RANDOM, FIRST_HIGHEST_DOUBLE = _codes("first_leader")
FALLBACK_HEAVIEST, FALLBACK_REDEAL, FALLBACK_DRAW = _codes("no_double_fallback")
AFTER_RANDOM, AFTER_LOWEST, AFTER_ROTATE = _codes("after_block")
ROUND_NEAREST, ROUND_DOWN, ROUND_NONE = _codes("rounding")

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

# ---------------------------------------------------------------- the turn history (game.hist[seat, turn, ...])
HIST_TURNS = 2  # = encoding.HISTORY_TURNS
HIST_COLUMNS = 7  # = len(encoding.HISTORY_COLUMNS), in its order:
H_EXISTS, H_PLACED, H_PASSED, H_DRAWN, H_POINTS, H_PIPS, H_BEST = range(HIST_COLUMNS)

# ---------------------------------------------------------------- where a tile is (game.owner[t])
BONEYARD = 8  # 0..3: in that seat's hand
ON_TABLE = 16  # 16 + seat: on the table, played by that seat

# results of a hand (settlement), as in the core's Settlement.result
DOMINO, BLOCKED, BY_TARGET = 0, 1, 2
RESULT_NAMES = ("domino", "blocked", "target")

# event kinds of the replay log (one row of integers per event)
EV_HAND_START, EV_PLAY, EV_DRAW, EV_PASS, EV_SETTLEMENT, EV_GAME_OVER, EV_DEAL = range(7)
EVENT_WIDTH = 16


class Tables(NamedTuple):
    """The tile set as arrays the kernels read: per tile id its low and high pip, pips and double flag;
    per pip value the double's id and the ids of every tile showing that value (ascending)."""

    low: np.ndarray
    high: np.ndarray
    pips: np.ndarray
    double: np.ndarray
    double_id: np.ndarray
    with_value: np.ndarray  # (V, V): with_value[v, k] = k-th tile id showing v


class _SetPart(NamedTuple):
    """What depends on the tile set alone, shared by every rules object of that set."""

    tiles: TileSet
    tables: Tables
    dtype: np.dtype
    max_legal: int
    log_width: int
    tail: np.ndarray  # R[VALUE_BITS:]: the value bit masks and the tile tables


def _tables(tiles: TileSet) -> Tables:
    """The :class:`Tables` of ``tiles`` (read-only: one copy serves every batch of the set)."""
    with_value = np.zeros((tiles.num_values, tiles.num_values), dtype=np.int32)
    for v in range(tiles.num_values):
        with_value[v] = [t for t in range(tiles.size) if v in tiles.pairs[t]]
    as_array = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
    tables = Tables(as_array(tiles.low), as_array(tiles.high), as_array(tiles.pips), as_array(tiles.is_double),
                    as_array(tiles.double_id), with_value)
    for table in tables:
        table.setflags(write=False)  # shared by every batch of the set
    return tables


def _tail(tiles: TileSet, t: Tables) -> np.ndarray:
    """R[VALUE_BITS:]: the bit masks of the tiles showing each value, then the tile tables."""
    r = np.zeros(RULES_LEN, dtype=np.int64)
    T, V = tiles.size, tiles.num_values
    for v in range(V):
        for tile in t.with_value[v]:
            r[VALUE_BITS + 2 * v + tile // WORD_BITS] |= 1 << (int(tile) % WORD_BITS)
    for at, values in ((LOW_AT, t.low), (HIGH_AT, t.high), (PIPS_AT, t.pips), (IS_DOUBLE_AT, t.double)):
        r[at:at + T] = values
    r[DOUBLE_ID_AT:DOUBLE_ID_AT + V] = t.double_id
    for v in range(V):
        r[WITH_VALUE_AT + _MAX_V * v:WITH_VALUE_AT + _MAX_V * v + V] = t.with_value[v]
    return r[VALUE_BITS:]


def _state_dtype(T: int, max_legal: int) -> np.dtype:
    """The record of one game (aligned; array fields are sized for the set of ``T`` tiles, four seats at most)."""
    return np.dtype([
        ("owner", np.int8, (T,)),  # where each tile is: a seat's hand, the boneyard, the table
        ("deal", np.int16, (T,)),  # this hand's deal: seat s holds [s*h, (s+1)*h), the boneyard follows
        ("legal", np.int16, (max_legal,)),  # legal actions of the seat to act, in the core's order
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
        # observation version 2 (kept only when R[HISTORY]): per seat its last HIST_TURNS turns of this hand,
        # newest first, HIST_COLUMNS integers each; the seat whose turn is open (-1: none)
        ("hist", np.int8, (4, HIST_TURNS, HIST_COLUMNS)), ("turn_seat", np.int32),  # int8: every value < 128
    ], align=True)


@lru_cache(maxsize=None)
def _set_part(max_pip: int) -> _SetPart:
    """The set's part of every layout, built once per set. The largest legal set: a lead from a hand of
    every tile, or four ends each matched by every tile showing its value, plus the draw action. A log row
    holds an event, or a deal (kind, hand, leader, opening drawer, the tiles)."""
    tiles = tile_set(max_pip)
    tables = _tables(tiles)
    legal = max(tiles.size, 4 * tiles.num_values) + 1
    tail = _tail(tiles, tables)
    tail.setflags(write=False)
    return _SetPart(tiles, tables, _state_dtype(tiles.size, legal), legal, max(EVENT_WIDTH, tiles.size + 4), tail)


def state_dtype(max_pip: int) -> np.dtype:
    """The record of one game of the double-``max_pip`` set (built once per set)."""
    return _set_part(max_pip).dtype


@dataclass(frozen=True, eq=False)
class BatchLayout:
    """Everything the kernels need for one rules object, built once (:func:`layout_for`) and shared by every
    batch, observer and agent of those rules: the tile set and its :class:`Tables`, the game record type
    (``dtype``), the largest legal set (``max_legal``), the columns of a replay log row (``log_width``),
    the action ids, and the rules vector (``vector``, read-only: :meth:`rules_vector` gives a batch its own)."""

    rules: Rules
    tiles: TileSet
    tables: Tables
    dtype: np.dtype
    max_legal: int
    log_width: int
    num_actions: int
    draw_action: int
    vector: np.ndarray

    def rules_vector(self, stop_after_hand: bool = False, history: bool = False) -> np.ndarray:
        """A writable copy of the rules vector (the kernels are compiled for plain arrays), ending episodes
        at the end of each hand when ``stop_after_hand``, keeping the turn history when ``history``."""
        r = self.vector.copy()
        r[STOP_AFTER_HAND] = bool(stop_after_hand)
        r[HISTORY] = bool(history)
        return r


@lru_cache(maxsize=64)
def _built(rules: Rules, codes: tuple[tuple[str, int], ...]) -> BatchLayout:
    """The layout of ``rules`` whose options the kernels read as ``codes`` (part of the key, so that a
    changed encoder makes a new layout)."""
    part = _set_part(rules.max_pip)
    r = np.zeros(RULES_LEN, dtype=np.int64)
    for name, code in codes:
        r[SLOT[name]] = code
    for name, value in DERIVED:
        r[SLOT[name]] = value(rules, part.tiles)
    r[VALUE_BITS:] = part.tail
    r.setflags(write=False)
    return BatchLayout(rules, part.tiles, part.tables, part.dtype, part.max_legal, part.log_width,
                       int(r[NUM_ACTIONS]), int(r[DRAW_ACTION]), r)


def layout_for(rules: Rules) -> BatchLayout:
    """The :class:`BatchLayout` of ``rules``, built once per rules object (the checks run every call).

    Raises :class:`BatchError` when an option of the table has no encoder (the kernels would play the
    rules without it) or a value is one its encoder does not play."""
    names = {o.name for o in OPTIONS}
    unencoded = [o.name for o in OPTIONS if o.name not in ENCODERS]
    if unencoded or len(ENCODERS) != len(names):
        unknown = sorted(set(ENCODERS) - names)
        raise BatchError(f"the batch engine has no encoding for rules option(s) {unencoded}"
                         f"{f' and encodes unknown option(s) {unknown}' if unknown else ''}: it cannot play these "
                         "rules; give the option its Encoding in allfives_env/batch/layout.py ENCODERS (only(default) "
                         "until the kernels play its other values), or play these rules with the core "
                         "(allfives_env.core.Game)")
    return _built(rules, tuple((name, e.code(name, getattr(rules, name))) for name, e in ENCODERS.items()))


def rules_vector(rules: Rules, stop_after_hand: bool = False) -> np.ndarray:
    """Every option of ``rules`` as one integer, at the slots named above, by :data:`ENCODERS`, then the
    derived values and the tile tables: a writable copy of the vector of :func:`layout_for` (which raises
    its :class:`BatchError`)."""
    return layout_for(rules).rules_vector(stop_after_hand)
