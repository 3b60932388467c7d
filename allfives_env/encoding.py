"""Observation and action codecs for ``allfives_v0``.

The observation is one flat ``float32`` vector made of named slices, always seen from the observing
seat ("ego-centric"): relative seat 0 is the observer, 1 the next player clockwise, 2 the one after
(the partner in a 4-player partnership), and so on. ``P`` = players, ``T`` = tiles in the set
(28/55/91), ``V`` = pip values (``max_pip + 1``).

Versions (``obs_version``, :data:`OBS_VERSIONS`): version 1 is the default and every shipped policy's; version 2
keeps every version-1 slice where it is and adds the ``needs``, ``pips``, ``bonus`` and ``history`` pieces after
``lead`` (and two more columns to each ``features`` row, :data:`ACTION_FEATURES_V2`); their exact definitions
are in :mod:`allfives_env.race`. Each piece below says the first version that has it (its ``since``).

%%PIECES%%

Action features (``action_features=True``). A flat network has to learn from the raw slices what a
placement would score and what it gives the opponent, which costs millions of steps. The features
hand it the quantities the ``expert`` heuristic weighs (:func:`allfives_env.analysis.placement_features`), per legal
placement, in count points / 20: *legal* (1), *wins* (the play wins the game), *domino* (it empties the
hand), *now* (points it scores), *deny* (the opponent's expected best reply, a game-winning reply
counted 60 more), *p_lose* (the chance the opponent holds a game-winning reply), *block* (the chance the
opponent cannot follow; x2 when it may not draw), *follow* (our best score next turn on the ends left),
*fit* (kept tiles that fit the new ends, /3, at most 1), *shown* (distinct numbers kept / V), *pips*
(the tile's pips / 2 max_pip), *double*. They read public information and the observer's hand only.
They cost about as much as one ``expert`` move per observation, so they are off by default; a policy
trained with them records it and its agent computes them itself.

Actions: ``action = tile_id * 4 + slot`` (see :mod:`allfives_env.core.actions`); the mask is an
``int8`` vector over every action id, all zeros for a seat that is not to act.

:func:`observation_table` prints this layout with the offsets for a given rules object. The slices
are declared once, in :data:`OBSERVATION_PIECES`, which both engines read.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from .core.actions import action_name, decode_action, encode_action, num_actions, parse_action
from .core.errors import RulesError, short_repr
from .core.game import Game
from .core.rules import Rules
from .core.tiles import TileSet, tile_set
from .core.view import PlayerView
from .analysis import DOMINO, WINS, placement_features
from .env_args import OBS_VERSIONS, check_obs_version
from .race import (  # noqa: F401  (the version-2 constants are read from here too)
    ACTION_FEATURES_V2, DRAW_CAP, HISTORY_COLUMNS, HISTORY_POINT_DIVISOR, HISTORY_TURNS, NEED_BINS, History,
    best_on_offer, bonus_bound, need_fives, pip_total, write_race, write_race_features,
)

__all__ = [
    "ACTION_FEATURES", "ACTION_FEATURES_V2", "OBSERVATION_PIECES", "OBS_VERSIONS", "check_obs_version", "feature_names", "ObservationEncoder", "ObservationShape", "Piece", "action_name", "pieces_table", "decode_action", "encode_action", "num_actions", "observation_shape", "observation_slices", "observation_table",
    "parse_action",
]

#: The default version of the observation layout (what every front end encodes unless asked for another);
#: saved policies record the version they were trained with and are encoded with it.
OBS_LAYOUT_VERSION = 1
# OBS_VERSIONS: every observation version this library encodes, 1 (the default) and 2 (1 plus the "race"
# pieces needs, pips, bonus and history, and two more action-feature columns); declared with its checker in
# env_args, below every front end.
#: Scores (in targets) are clipped to +-this in the ``scores`` slice.
SCORE_CLIP = 2.0
#: Columns of one placement's entry in the ``features`` slice (``action_features=True``).
ACTION_FEATURES = ("legal", "wins", "domino", "now", "deny", "p_lose", "block", "follow", "fit", "shown", "pips",
                   "double")
#: Upper bound of the ``features`` slice in the observation space (deny can reach (48 + 60) / 20).
ACTION_FEATURE_HIGH = 8.0


class Piece(NamedTuple):
    """One named slice of the observation: its size from (players, tiles, values), the same size as the
    docs write it (``shape``, in ``P``, ``T``, ``V``; a test holds the two equal) and what it holds.
    ``optional`` pieces are present only with ``action_features=True``; a piece is present from observation
    version ``since`` on (:data:`OBS_VERSIONS`)."""

    name: str
    size: Callable[[int, int, int], int]
    shape: str
    meaning: str
    optional: bool = False
    #: the first observation version that has this piece (1: every version)
    since: int = 1


#: The observation's slices, in order: the one declaration that :class:`ObservationEncoder` (offsets,
#: writers), the compiled :class:`~allfives_env.batch.observe.BatchObserver` (its slice order),
#: :func:`observation_table` (``allfives layout``) and this module's documentation read. A new piece is
#: one entry here plus its writer in each engine; ``tests/test_batch_observe.py`` compares the two writers
#: value for value.
OBSERVATION_PIECES: tuple[Piece, ...] = (
    Piece("hand", lambda P, T, V: T, "T", "1 if the observer holds tile t"),
    Piece("board", lambda P, T, V: T * P, "T x P", "1 at [t, k] if tile t is on the table, played by relative seat k"),
    Piece("ends", lambda P, T, V: 4 * (V + 3), "4 x (V+3)",
          "per end W, E, N, S: one-hot open value (only if a tile may be placed there now), then flags *open*, "
          "*counted* (adds to the count), *double* (the last tile there is a double, counted 2x)"),
    Piece("spinner", lambda P, T, V: V + 2, "V + 2",
          "a spinner is on the table; its value one-hot; its own 2v is still in the count (fewer than two sides "
          "filled)"),
    Piece("count", lambda P, T, V: 2, "2", "the count / (8 x max_pip); 1 if the count scores (multiple of 5)"),
    Piece("boneyard", lambda P, T, V: 2, "2", "boneyard size / T; tiles that may still be drawn / T"),
    Piece("hand_sizes", lambda P, T, V: P - 1, "P - 1", "each other seat's hand size / T (relative seats 1..P-1)"),
    Piece("voids", lambda P, T, V: (P - 1) * V, "(P-1) x V",
          "1 at [k, v] if relative seat k is known to hold no tile showing v (it drew or passed while v was open)"),
    Piece("scores", lambda P, T, V: P, "P",
          "each relative seat's side's score / target, clipped to [-2, 2]"),
    Piece("scored", lambda P, T, V: P, "P", "1 if that seat's side has scored (``min_first_score``)"),
    Piece("partners", lambda P, T, V: P, "P", "1 if relative seat k is on the observer's side (k=0 always)"),
    Piece("lead", lambda P, T, V: 1, "1", "1 if the board is empty (the observer is leading)"),
    Piece("needs", lambda P, T, V: P * (NEED_BINS + 1), "P x 13",
          "version 2: per relative seat, one-hot of the fives (steps of 5 count points: 5 points, or 1 with "
          "score_unit=5) its side still needs to reach the target, columns 1..12 then *more than 12*; all zeros "
          "for a side at or past the target", since=2),
    Piece("pips", lambda P, T, V: P + 3, "P + 3",
          "version 2, pips over the whole set's pips (168/495/1092): the observer's hand; the unseen tiles (not on "
          "the table, not in its hand); each other seat's expected hand (its size x the unseen tiles' mean); the "
          "boneyard's expected pips (same mean); then the observer's tile count / T", since=2),
    Piece("bonus", lambda P, T, V: P, "P",
          "version 2: 1 if relative seat k's side could reach the target with this hand's end-of-hand bonus "
          "(``winner_takes`` only): its score plus the rounded pips bound (the unseen pips for the observer's "
          "side, the unseen pips plus the observer's hand for another side) is at least the target", since=2),
    Piece("history", lambda P, T, V: (P - 1) * HISTORY_TURNS * len(HISTORY_COLUMNS), "(P-1) x 2 x 7",
          "version 2: per other relative seat its last 2 turns of this hand, newest first: the turn exists; it "
          "placed a tile; it passed; tiles drawn / 4 (at most 1); count points scored / 20; the placed tile's pips "
          "/ (2 max_pip); the best count points any tile not on the table could have scored on the board at the "
          "turn's start / 20 (public)", since=2),
    Piece("features", lambda P, T, V: 4 * T * len(ACTION_FEATURES), "4T x F",
          "only with ``action_features=True``: per placement id (``tile*4+slot``), F = 12 numbers describing "
          "that play (below; 14 in version 2); all zeros for placements that are not legal now", optional=True),
)


def pieces_table(width: int = 66, obs_version: Optional[int] = None) -> str:
    """:data:`OBSERVATION_PIECES` as a reStructuredText table (the module's documentation shows it): every
    piece, or those of ``obs_version`` only."""
    import textwrap

    if obs_version is not None:
        obs_version = check_obs_version(obs_version)
    rule = f"{'=' * 18}  {'=' * 13}  {'=' * width}"
    lines = [rule, f"{'slice':<18}  {'size':<13}  meaning", rule]
    for piece in OBSERVATION_PIECES:
        if obs_version is not None and piece.since > obs_version:
            continue
        wrapped = textwrap.wrap(piece.meaning, width) or [""]
        lines.append(f"{'``' + piece.name + '``':<18}  {piece.shape:<13}  {wrapped[0]}".rstrip())
        lines.extend(f"{'':<18}  {'':<13}  {more}" for more in wrapped[1:])
    lines.append(rule)
    return "\n".join(lines)


__doc__ = (__doc__ or "").replace("%%PIECES%%", pieces_table())

#: Count points -> the ``features`` slice (``now``, ``deny``, ``follow``).
POINT_SCALE = 1.0 / 20.0
#: The ``fit`` feature: kept tiles that fit the new ends, over this (3 or more reads as 1).
FIT_CAP = 3.0


def feature_names(obs_version: int = OBS_LAYOUT_VERSION) -> tuple[str, ...]:
    """The columns of one placement's row of the ``features`` slice under ``obs_version``."""
    return ACTION_FEATURES + (ACTION_FEATURES_V2 if obs_version >= 2 else ())


def observation_slices(players: int, tiles: TileSet, action_features: bool,
                       obs_version: int = OBS_LAYOUT_VERSION) -> dict[str, slice]:
    """Where each piece of :data:`OBSERVATION_PIECES` lies in the observation of ``players`` seats playing
    ``tiles`` under observation version ``obs_version`` (the pieces of that version; the ``features``
    piece only with ``action_features``, its rows :func:`feature_names` wide): the one layout that the
    encoder and the batch observer both write."""
    obs_version = check_obs_version(obs_version)
    slices: dict[str, slice] = {}
    offset = 0
    for piece in OBSERVATION_PIECES:
        if piece.since <= obs_version and (action_features or not piece.optional):
            if piece.name == "features":
                size = 4 * tiles.size * len(feature_names(obs_version))
            else:
                size = piece.size(players, tiles.size, tiles.num_values)
            slices[piece.name] = slice(offset, offset + size)
            offset += size
    return slices


class ObservationShape(NamedTuple):
    """What an observation under ``rules`` is, without the encoder's per-seat buffers and tables: where each
    piece lies, its size, the number of actions and the observation space's bounds. The encoder is built
    from it, and a policy file's checks read it, so a policy opponent builds no encoder of its own."""

    rules: Rules
    action_features: bool
    slices: dict[str, slice]
    size: int
    num_actions: int
    low: np.ndarray
    high: np.ndarray
    obs_version: int = OBS_LAYOUT_VERSION


def observation_shape(rules: Rules, action_features: bool = False,
                      obs_version: int = OBS_LAYOUT_VERSION) -> ObservationShape:
    """The :class:`ObservationShape` of ``rules`` (with the ``features`` piece if ``action_features``) under
    observation version ``obs_version``."""
    obs_version = check_obs_version(obs_version)
    tiles = tile_set(rules.max_pip)
    slices = observation_slices(rules.num_players, tiles, action_features, obs_version)
    size = max(s.stop for s in slices.values())
    low = np.zeros(size, dtype=np.float32)
    high = np.ones(size, dtype=np.float32)
    low[slices["scores"]] = -SCORE_CLIP
    high[slices["scores"]] = SCORE_CLIP
    if action_features:
        high[slices["features"]] = ACTION_FEATURE_HIGH
    if obs_version >= 2:
        # history's points and best columns: count points / 20, a count is at most 8 max_pip
        C = len(HISTORY_COLUMNS)
        history = high[slices["history"]].reshape(-1, C)
        history[:, HISTORY_COLUMNS.index("points")] = 8 * rules.max_pip * POINT_SCALE
        history[:, HISTORY_COLUMNS.index("best")] = 8 * rules.max_pip * POINT_SCALE
    return ObservationShape(rules, bool(action_features), slices, size, num_actions(tiles, rules.may_draw_when_able),
                            low, high, obs_version)


class ObservationEncoder:
    """Builds observation vectors, action masks and the full-information state for one rules object.

    The slice offsets are computed once; :meth:`encode` then only writes the non-zero entries, which
    keeps an observation at a few microseconds.
    """

    def __init__(self, rules: Rules, action_features: bool = False, obs_version: int = OBS_LAYOUT_VERSION) -> None:
        if not isinstance(action_features, (bool, np.bool_)):
            raise RulesError(f"action_features={short_repr(action_features)} is not allowed: choose True or False")
        self.obs_version = check_obs_version(obs_version)
        self.rules = rules
        self.action_features = bool(action_features)
        tiles = tile_set(rules.max_pip)
        self.tiles = tiles
        P = self.P = rules.num_players
        T = self.T = tiles.size
        V = self.V = tiles.num_values
        shape = observation_shape(rules, self.action_features, self.obs_version)
        self.feature_names = feature_names(self.obs_version)
        # version 2 (allfives_env.race reads these): the set's pips, the turn history of the game last observed
        self.pip_total = pip_total(tiles)
        self.turn_history: Optional[History] = None
        self.slices, self.size, self.num_actions, self.low, self.high = (shape.slices, shape.size, shape.num_actions,
                                                                         shape.low, shape.high)
        if self.action_features:
            self._o_features = self.features_offset = self.slices["features"].start
        # state: every hand (absolute seats), the boneyard's tiles, the public part seen by seat 0, the seat to act
        self.state_size = T * P + T + self.size + P
        s = self.slices
        self._o_board = s["board"].start
        self._o_ends = s["ends"].start
        self._o_spinner = s["spinner"].start
        self._o_count = s["count"].start
        self._o_boneyard = s["boneyard"].start
        self._o_sizes = s["hand_sizes"].start
        self._o_voids = s["voids"].start
        self._o_scores = s["scores"].start
        self._o_scored = s["scored"].start
        self._o_partners = s["partners"].start
        self._o_lead = s["lead"].start
        self._count_scale = 1.0 / (8 * rules.max_pip)
        self._end_stride = V + 3
        # per slot W, E, N, S: where its one-hot value starts, and its open, counted and double flags
        self._end_entries = [
            (self._o_ends + slot * (V + 3), self._o_ends + slot * (V + 3) + V, self._o_ends + slot * (V + 3) + V + 1,
             self._o_ends + slot * (V + 3) + V + 2)
            for slot in range(4)
        ]
        # per seat: the absolute seat at each relative seat k = 0..P-1
        self._rotations = self.rotations = [tuple((seat + k) % P for k in range(P)) for seat in range(P)]
        # per seat: the partner flags never change
        self._static_ones = [
            [self._o_partners + k for k in range(P) if rules.side_of((seat + k) % P) == rules.side_of(seat)]
            for seat in range(P)
        ]
        # per relative seat k: void bit mask -> indices of the void slice to set (filled on demand)
        self._void_offsets: list[dict[int, list[int]]] = [{} for _ in range(P)]
        # per seat: a buffer holding the slices that only change a little between observations (own hand,
        # board, partners), brought up to date incrementally and copied for each observation
        self._views = [_SeatView(np.zeros(self.size, dtype=np.float32)) for _ in range(P)]  # cleared at first use
        self._voids_slice = s["voids"]
        # per counted-slots tuple (what Board.counting_slots holds): the counted flags to set
        self._counted_flags = {
            slots: tuple(self._end_entries[slot][2] for slot in slots)
            for slots in {tuple(sl for sl in range(4) if (m >> sl) & 1) for m in range(16)}
        }
        # the action mask starts as a copy of this (copying a small array is cheaper than np.zeros)
        self._no_actions = np.zeros(self.num_actions, dtype=np.int8)

    def _clear(self, seat: int, buf: np.ndarray) -> None:
        """``seat``'s buffer as at a hand's start before anything is shown: zeros and the partner flags."""
        buf.fill(0.0)
        for i in self._static_ones[seat]:
            buf[i] = 1.0

    # ------------------------------------------------------------------ observation
    def encode(self, game: Game, seat: int, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The observation vector of ``seat`` (a new array, or ``out`` overwritten when given).

        The seat's buffer already holds the slices that change little (hand, board, partners); the copy
        then gets the public slices, entry by entry. A new copy is written through a ``memoryview``: a
        float32 store that way costs about half an ndarray item store, and an observation makes 15 to 30
        of them (the values stored are the same: both round the Python float to float32 once). An ``out``
        of the caller's is written with ndarray stores, whatever its dtype.
        """
        buf = self._seat_buffer(game, seat)
        if out is None:
            out = buf.copy()
            self._write_public(game, seat, out.data)  # out.data: memoryview(out)
        else:
            out[:] = buf
            self._write_public(game, seat, out)
        if self.obs_version >= 2:
            write_race(self, game, seat, out, True)
        if self.action_features and seat == game.current:
            self._write_features(game, seat, out)
        return out

    def _seat_buffer(self, game: Game, seat: int) -> np.ndarray:
        """``seat``'s buffer brought up to date: tiles played since its last observation, hand changes, and
        the slices that change a few times a hand (scores, voids, boneyard) when they did; rebuilt from
        blank for another game or a new hand."""
        view = self._views[seat]
        buf = view.buf
        played = game.played
        n_played = len(played)
        if view.game is not game or view.hand != game.hand_number or view.n_played > n_played:
            self._clear(seat, buf)
            view.start(game)
        if view.n_played < n_played:
            ob, P = self._o_board, self.P
            for t, by in played[view.n_played:]:
                buf[ob + t * P + (by - seat) % P] = 1.0
            view.n_played = n_played
        m = game.hands[seat]
        changed = m ^ view.hand_mask
        while changed:
            low = changed & -changed
            buf[low.bit_length() - 1] = 1.0 if m & low else 0.0
            changed ^= low
        view.hand_mask = m
        # each check is a short list comparison; the slices it guards take a dozen stores to write
        if game.scores != view.scores or game.is_in != view.is_in:
            self._write_scores(game, seat, buf)
            view.scores, view.is_in = game.scores[:], game.is_in[:]
        if game.voids != view.voids:
            buf[self._voids_slice] = 0.0
            self._write_voids(game, seat, buf)
            view.voids = game.voids[:]
        boneyard = game.boneyard_size
        if boneyard != view.boneyard:
            self._write_boneyard(game, buf)
            view.boneyard = boneyard
        return buf

    def _write_features(self, game: Game, seat: int, out: np.ndarray) -> None:
        """The ``features`` slice: one row of :data:`ACTION_FEATURES` per legal placement."""
        draw = 4 * self.T
        actions = [a for a in game.legal if a != draw]
        if not actions:
            return
        _, rows = placement_features(PlayerView(game, seat), actions)
        F = len(self.feature_names)
        F1 = len(ACTION_FEATURES)
        unit = game.rules.score_unit * POINT_SCALE
        pip_scale = 1.0 / (2 * self.rules.max_pip)
        inv_v = 1.0 / self.V
        base = self._o_features
        for action, row in zip(actions, rows):
            o = base + action * F
            # in the order of ACTION_FEATURES
            out[o:o + F1] = (1.0, row.kind == WINS, row.kind == DOMINO, row.now * unit, row.deny * POINT_SCALE,
                             row.p_lose, row.block, row.follow * unit, min(row.fit, FIT_CAP) / FIT_CAP,
                             row.shown * inv_v, row.pips * pip_scale, row.double)
        if F > F1:
            write_race_features(self, game, seat, out, actions, rows)

    def _board_ones(self, game: Game, seat: int) -> list[int]:
        """Indices of the ``board`` slice's 1-entries as seen by ``seat``."""
        ob, P = self._o_board, self.P
        return [ob + t * P + (by - seat) % P for t, by in game.played]

    def _write_public(self, game: Game, seat: int, out: Any) -> None:
        """Write the public slices that change with every play (``ends``, ``spinner``, ``count``,
        ``hand_sizes``, ``lead``) as ``seat`` sees them into ``out`` (a memoryview or an ndarray, zeros
        there): only their non-zero entries are stored. The other public slices are kept up to date in
        the seat's buffer (:meth:`_seat_buffer`).

        This runs for every observation, so the offsets come from tables built once (:meth:`__init__`),
        the loops run over what is there (open ends, counted ends, other seats), not every slot, and the
        ``ends``/``spinner`` part is written here rather than in a helper (one call less a step).
        """
        board = game.board
        if board.size:
            # ends: per open end its one-hot value and the open flag; the counted flag of every end that
            # counts (the board knows which: allfives, sniff, the line); the double flag of an arm that
            # ends in a double (rare: most boards have none, which one `in` test tells)
            entries = self._end_entries
            ends = board.ends
            for slot in board.open_slots:
                value_base, open_flag, _, _ = entries[slot]
                out[value_base + ends[slot]] = 1.0
                out[open_flag] = 1.0
            for i in self._counted_flags[board.counting_slots]:  # board.counted_slots() without the call
                out[i] = 1.0
            end_double = board.end_double
            if True in end_double:
                arm_len = board.arm_len
                for slot, double in enumerate(end_double):
                    if double and arm_len[slot]:
                        out[entries[slot][3]] = 1.0
            spinner = board.spinner
            if spinner >= 0:
                osp = self._o_spinner
                out[osp] = 1.0
                out[osp + 1 + spinner] = 1.0
                if board.spinner_in_count:  # board.spinner_counts() without the call
                    out[osp + 1 + self.V] = 1.0
            count = board.total  # board.count(), kept by place()
            oc = self._o_count
            out[oc] = count * self._count_scale
            if count and count % 5 == 0:
                out[oc + 1] = 1.0
        else:
            out[self._o_lead] = 1.0  # the count stays 0
        T = self.T
        rot = self._rotations[seat]
        hands = game.hands
        os_ = self._o_sizes - 1
        for k in range(1, self.P):
            out[os_ + k] = hands[rot[k]].bit_count() / T

    def _write_scores(self, game: Game, seat: int, out: Any) -> None:
        """The ``scores`` and ``scored`` slices (every entry written, zeros included)."""
        osc = self._o_scores
        oin = self._o_scored
        target = game.rules.target
        scores = game.scores
        is_in = game.is_in
        side_of = game.side_of
        for k, s in enumerate(self._rotations[seat]):
            side = side_of[s]
            value = scores[side] / target
            out[osc + k] = SCORE_CLIP if value > SCORE_CLIP else (-SCORE_CLIP if value < -SCORE_CLIP else value)
            out[oin + k] = 1.0 if is_in[side] else 0.0

    def _write_voids(self, game: Game, seat: int, out: Any) -> None:
        """The 1-entries of the ``voids`` slice (the slice is zeros)."""
        voids = game.voids
        rot = self._rotations[seat]
        for k in range(1, self.P):
            m = voids[rot[k]]
            if m:
                offsets = self._void_offsets[k].get(m)
                if offsets is None:
                    base = self._o_voids + (k - 1) * self.V
                    offsets = self._void_offsets[k][m] = [base + v for v in range(self.V) if (m >> v) & 1]
                for i in offsets:
                    out[i] = 1.0

    def _write_boneyard(self, game: Game, out: Any) -> None:
        """The ``boneyard`` slice."""
        ob = self._o_boneyard
        out[ob] = game.boneyard_size / self.T
        out[ob + 1] = game.drawable / self.T

    def action_mask(self, game: Game, seat: int) -> np.ndarray:
        """``int8`` mask over all action ids; zeros unless ``seat`` is to act."""
        mask = self._no_actions.copy()
        if seat == game.current:
            for action in game.legal:  # a handful of ids: item writes beat a fancy-index store here
                mask[action] = 1
        return mask

    # ------------------------------------------------------------------ state
    def state(self, game: Game) -> np.ndarray:
        """Full-information state for centralized critics: every hand (absolute seats, T x P), the
        boneyard's tiles (T), the public observation slices as seen by seat 0 (its own hand slice left
        empty), and the seat to act one-hot (P; all zeros once the game is over)."""
        T, P = self.T, self.P
        out = np.zeros(self.state_size, dtype=np.float32)
        ones = []
        for seat in range(P):
            m = game.hands[seat]
            while m:
                low = m & -m
                ones.append((low.bit_length() - 1) * P + seat)
                m ^= low
        for t in game.boneyard():
            ones.append(T * P + t)
        base = T * P + T
        ones.extend(base + i for i in self._board_ones(game, 0))
        ones.extend(base + i for i in self._static_ones[0])
        if game.current >= 0:
            ones.append(base + self.size + game.current)
        out[ones] = 1.0
        public = out[base:base + self.size]
        self._write_public(game, 0, public)
        self._write_scores(game, 0, public)
        self._write_voids(game, 0, public)
        self._write_boneyard(game, public)
        if self.obs_version >= 2:
            write_race(self, game, 0, public, False)  # the public pieces: needs, history
        return out


class _SeatView:
    """The encoder's incremental state for one seat: which game, hand, board length, hand, scores, voids
    and boneyard size its buffer shows (copies of the game's lists, which change in place)."""

    __slots__ = ("buf", "game", "hand", "n_played", "hand_mask", "scores", "is_in", "voids", "boneyard")

    def __init__(self, buf: np.ndarray) -> None:
        self.buf = buf
        self.start(None)

    def start(self, game: Optional[Game]) -> None:
        """A blank buffer for ``game``'s current hand: nothing shown yet."""
        self.game = game
        self.hand = game.hand_number if game is not None else 0
        self.n_played = 0
        self.hand_mask = 0
        self.scores: Optional[list[int]] = None
        self.is_in: Optional[list[bool]] = None
        self.voids: Optional[list[int]] = None
        self.boneyard = -1


def observation_table(rules: Optional[Rules] = None, action_features: bool = False,
                      obs_version: int = OBS_LAYOUT_VERSION) -> str:
    """The observation layout for ``rules`` under ``obs_version`` as a text table with offsets (for docs and
    debugging)."""
    enc = ObservationEncoder(rules or Rules(), action_features, obs_version)
    shapes = {piece.name: piece.shape for piece in OBSERVATION_PIECES}
    lines = [f"{'slice':<12} {'offset':>6} {'size':>5}  shape"]
    for name, sl in enc.slices.items():
        lines.append(f"{name:<12} {sl.start:>6} {sl.stop - sl.start:>5}  {shapes[name]:<13}".rstrip())
    lines.append(f"{'total':<12} {'':>6} {enc.size:>5}")
    return "\n".join(lines)
