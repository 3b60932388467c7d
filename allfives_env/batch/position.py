"""A position seen by one seat, written into a batch game record for search (public information only).

:func:`public_vector` reads a :class:`~allfives_env.core.view.PlayerView` through its public API alone
(the table from ``view.board``, its own hand, the tiles played, hand sizes, scores, known voids, the
boneyard's size, the legal moves and the public event log) into one integer vector, and the compiled
:func:`write_position` turns that vector into the one-hand game the batch engine plays forward: the
record of :func:`~allfives_env.batch.layout.state_dtype` under the rules vector of :func:`search_rules`
(``stop_after_hand``, as a :meth:`Game.fork <allfives_env.core.game.Game.fork>`). One vector and one
compiled write keep the Python side of a search decision to a few dozen microseconds.

The turn counters the core keeps privately are derived from the public log (:func:`turn_state`):
passes in a row since the last play, the draws of the seat to act this turn, and the void that a forced
draw of a playable tile leaves pending until it is played.

What the seat cannot see (the other hands, the boneyard order) comes from a guess given by the caller,
exactly as :meth:`PlayerView.determinized` takes one; without a guess every unseen tile is put in the
boneyard as a placeholder for the compiled sampler (:mod:`.search`) to deal out.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping, NamedTuple, Optional, Sequence

import numpy as np
from .jit import njit

from ..core.board import ALL_SLOTS
from ..core.errors import DealError, short_repr
from ..core.values import is_integer
from ..core.events import Draw, HandStart, Pass, Play
from ..core.rules import Rules
from ..core.view import PlayerView
from .layout import (
    B_ALL_OPEN, B_ARM, B_DOUBLE, B_END, B_LEAD, B_SIDES_FIRST, B_SIZE, B_SNIFF, B_SPINNER, B_SPINNER_TILE,
    BOARD_LEN, BONEYARD, ON_TABLE, TILE_COUNT, layout_for, state_dtype,
)
from .dealing import sync_hand_bits

# ---------------------------------------------------------------- the public vector (pub[...])
(P_CURRENT, P_HAND_NUMBER, P_NEXT_DRAW, P_PASSES, P_DRAWS, P_PENDING_SEAT, P_PENDING_MASK, P_N_LEGAL) = range(8)
P_BOARD = 8  # BOARD_LEN entries: the board vector
P_HAND_COUNT = P_BOARD + BOARD_LEN  # 4 per seat
P_VOIDS = P_HAND_COUNT + 4  # 4 per seat
P_SCORES = P_VOIDS + 4  # 4 per side
P_IS_IN = P_SCORES + 4  # 4 per side
P_OWNER = P_IS_IN + 4  # T entries: owner codes (unseen tiles: BONEYARD placeholders unless guessed)
# then T entries of the deal order (the boneyard from P_OWNER + T + next_draw on), then the legal moves


class TurnState(NamedTuple):
    """The core's private turn counters, as the public log tells them."""

    passes: int  # passes in a row since the last play of the hand
    draws_this_turn: int  # draws of the seat to act since its turn began
    pending_seat: int  # the seat whose forced draw of a playable tile leaves a void pending, else -1


@lru_cache(maxsize=64)
def search_rules(rules: Rules) -> np.ndarray:
    """The rules vector of a search copy: the rules, with play stopping at the end of the hand (built
    once per rules object and shared: read it, never write it)."""
    return layout_for(rules).rules_vector(stop_after_hand=True)  # writeable: the kernels are compiled for plain arrays


#: The game record type of the double-``max_pip`` set (:func:`.layout.state_dtype`, built once per set).
record_dtype = state_dtype


def turn_state(events: Sequence[object]) -> TurnState:
    """Passes, draws this turn and the pending void of the hand in progress, from the public log,
    read backwards from its end to the last play (or the hand's start).

    The core counts passes since the last play, and draws since the turn began (a play or a pass ends
    a turn; draws before any turn are the opening ``draw_until_double`` ones, not a seat's). A forced
    draw is the last event only when the drawn tile could be played: that is when the core keeps the
    seat's void pending until the tile is played.
    """
    last = events[-1] if events else None
    pending = last.seat if type(last) is Draw and last.forced else -1
    passes = draws = 0
    counting_draws = True
    for k in range(len(events) - 1, -1, -1):
        kind = type(events[k])
        if kind is Play:
            return TurnState(passes, draws, pending)
        if kind is HandStart:
            break
        if kind is Pass:
            passes += 1
            counting_draws = False
        elif kind is Draw and counting_draws:
            draws += 1
    return TurnState(passes, 0 if counting_draws else draws, pending)  # no turn yet: opening draws only


def core_order(legal: Sequence[int], draw_action: int) -> list[int]:
    """Legal action ids in the engine's order (end by end, tiles ascending within an end, "draw" last),
    from the ascending ids a view gives."""
    placements = sorted((a for a in legal if a != draw_action), key=lambda a: (a & 3, a >> 2))
    return placements + [a for a in legal if a == draw_action]


def board_values(view: PlayerView) -> list[int]:
    """The table of ``view.board`` (its public attributes) as the batch board vector."""
    board = view.board
    rules = view.rules
    b = [0] * BOARD_LEN
    b[B_END:B_END + 4] = board.ends
    b[B_DOUBLE:B_DOUBLE + 4] = [int(x) for x in board.end_double]
    b[B_ARM:B_ARM + 4] = board.arm_len
    b[B_SPINNER] = board.spinner
    b[B_SPINNER_TILE] = board.spinner_tile
    b[B_SIZE] = board.size
    b[B_ALL_OPEN] = int(tuple(board.open_slots) == ALL_SLOTS)
    b[B_LEAD] = int(board.lead is not None)
    b[B_SNIFF] = int(rules.spinner_count == "sniff")
    b[B_SIDES_FIRST] = int(rules.spinner_sides_first)
    return b


def check_hidden(view: PlayerView, other_hands: Mapping[int, int], boneyard: Sequence[int]) -> list[int]:
    """The boneyard guess as tile ids, once ``other_hands`` and ``boneyard`` together place every tile
    ``view.seat`` cannot see exactly once: each other seat a bit mask of its known hand size, the
    boneyard its known size, no tile it holds or that is on the table. Anything else is a
    :class:`DealError`: the kernels would index their tile arrays with it."""
    tiles = view.tiles
    seat = view.seat
    sizes = view.hand_sizes
    if not isinstance(other_hands, Mapping):
        raise DealError(f"other_hands must map each other seat to a tile mask; got {short_repr(other_hands)}")
    others = [s for s in range(view.rules.num_players) if s != seat]
    keys = list(other_hands)
    if not all(is_integer(s) for s in keys) or sorted(int(s) for s in keys) != others:
        raise DealError(f"other_hands must have exactly the seats {others}; got {short_repr(list(other_hands))}")
    unseen = tiles.full_mask & ~tiles.mask_of(view.hand) & ~view.played_mask
    placed = 0
    for s in others:
        given = other_hands[s]
        mask = int(given) if is_integer(given) else -1
        if mask < 0 or mask & ~unseen or bin(mask).count("1") != sizes[s]:
            raise DealError(f"other_hands[{s}]={short_repr(given)} is not allowed: give a mask of {sizes[s]} "
                            f"tiles that seat {seat} cannot see")
        if mask & placed:
            raise DealError(f"other_hands[{s}] shares tiles with another seat's hand")
        placed |= mask
    listed: Optional[list[Any]]  # whatever the caller gave, until the checks below
    try:
        listed = list(boneyard)  # once: an iterator would be used up by the check
    except TypeError:  # not iterable
        listed = None
    bone = [int(t) for t in listed] if listed is not None and all(is_integer(t) for t in listed) else None
    rest = unseen & ~placed
    if bone is None or len(bone) != view.boneyard_size or len(set(bone)) != len(bone) \
            or any(not 0 <= t < tiles.size or not rest >> t & 1 for t in bone):
        raise DealError(f"boneyard={short_repr(boneyard)} is not allowed: give the {view.boneyard_size} distinct "
                        f"tile ids that are in no hand and not on the table")
    return bone


def public_vector(view: PlayerView, other_hands: Optional[Mapping[int, int]] = None,
                  boneyard: Optional[Sequence[int]] = None) -> np.ndarray:
    """Everything :func:`write_position` needs, from ``view``'s public API, as one int64 vector (layout:
    the ``P_*`` offsets). ``other_hands`` (seat -> tile mask) and ``boneyard`` (index 0 drawn next) fill
    the hidden part; without them the unseen tiles are boneyard placeholders."""
    if (other_hands is None) != (boneyard is None):
        raise DealError("give both other_hands and boneyard (the whole hidden part), or neither")
    tiles = view.tiles
    T = tiles.size
    seat = view.seat
    owner = [BONEYARD] * T
    for t in view.hand:
        owner[t] = seat
    for t, who in view.played:
        owner[t] = ON_TABLE + who
    size = view.boneyard_size
    if other_hands is None or boneyard is None:  # both or neither (checked above)
        bone = [t for t in range(T) if owner[t] == BONEYARD][:size]
    else:
        bone = check_hidden(view, other_hands, boneyard)
        for s, mask in other_hands.items():
            for t in tiles.tiles_of(int(mask)):
                owner[t] = int(s)
    in_bone = set(bone)
    deal = [t for t in range(T) if t not in in_bone] + bone
    board = view.board
    turn = turn_state(view.events)
    pending_mask = 0
    if turn.pending_seat >= 0:
        for slot in board.open_slots:
            pending_mask |= 1 << board.ends[slot]
    pad = lambda values: [int(x) for x in values] + [0] * (4 - len(values))  # noqa: E731
    legal = core_order(view.legal, view.draw_action)
    head = [view.current_player, view.hand_number, T - size, turn.passes, turn.draws_this_turn, turn.pending_seat,
            pending_mask, len(legal)]
    return np.array(head + board_values(view) + pad(view.hand_sizes) + pad(view.voids) + pad(view.scores)
                    + pad(view.is_in) + owner + deal + legal, dtype=np.int64)


@njit(cache=True)
def write_position(g, R: np.ndarray, pub: np.ndarray) -> None:
    """Write the position of the public vector ``pub`` (:func:`public_vector`) into the record ``g``:
    the hand in progress, play stopping at its end; nothing else of the record is kept."""
    T = R[TILE_COUNT]
    for k in range(BOARD_LEN):
        g.board[k] = pub[P_BOARD + k]
    for s in range(4):
        g.hand_count[s] = pub[P_HAND_COUNT + s]
        g.voids[s] = pub[P_VOIDS + s]
        g.scores[s] = pub[P_SCORES + s]
        g.is_in[s] = pub[P_IS_IN + s]
        g.last_pips[s] = 0
    for t in range(T):
        g.owner[t] = pub[P_OWNER + t]
        g.deal[t] = pub[P_OWNER + T + t]
    n = pub[P_N_LEGAL]
    for k in range(n):
        g.legal[k] = pub[P_OWNER + 2 * T + k]
    g.n_legal = n
    g.current = pub[P_CURRENT]
    g.hand_number = pub[P_HAND_NUMBER]
    g.next_draw = pub[P_NEXT_DRAW]
    g.passes = pub[P_PASSES]
    g.draws_this_turn = pub[P_DRAWS]
    g.pending_seat = pub[P_PENDING_SEAT]
    g.pending_mask = pub[P_PENDING_MASK]
    g.over = 0
    g.winner = -1
    g.truncated = 0
    g.leader = -1
    g.last_result = -1
    g.last_dominoer = -1
    g.opening_drawer = -1
    g.hands_completed = 0
    g.decisions = 0
    g.episodes = 0
    g.rng = 0
    g.episode_rng = 0
    sync_hand_bits(g, R)


@njit(cache=True)
def write_first(S: np.ndarray, R: np.ndarray, pub: np.ndarray) -> None:
    """:func:`write_position` into ``S[0]``."""
    write_position(S[0], R, pub)


def position_record(view: PlayerView, other_hands: Optional[Mapping[int, int]] = None,
                    boneyard: Optional[Sequence[int]] = None) -> np.ndarray:
    """The position ``view.seat`` sees as a one-game record array (shape (1,)), which plays on to the end
    of the hand under :func:`search_rules`. ``other_hands`` (seat -> tile mask) and ``boneyard`` (index 0
    drawn next) fill the hidden part, as :meth:`PlayerView.determinized` takes them; without them every
    unseen tile is a boneyard placeholder for the compiled sampler."""
    rec = np.zeros(1, dtype=record_dtype(view.rules.max_pip))
    write_first(rec, search_rules(view.rules), public_vector(view, other_hands, boneyard))
    return rec
