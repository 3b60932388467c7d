"""Position analysis from one seat's view: what each legal placement scores, risks and leaves behind.

The scripted agents weigh these quantities (``greedy`` the points now, ``defensive`` the best reply,
``expert`` all of them) and the ``features`` slice of the observation hands them to a network, so they
are computed here, once, below both. Everything reads a :class:`~allfives_env.core.view.PlayerView`:
public information and the seat's own hand only, so two positions that differ only in hidden tiles
get the same analysis.

The opponent model. The next seat is always an opponent (partners sit two apart). Its hand is taken as
a uniform draw of ``hand size`` tiles from the unseen tiles it is not known to lack; the chance that it
holds none of ``k`` given tiles is then hypergeometric (:func:`no_hit_chances`), which makes the
expected best reply and the chance of a block exact under that model.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

from .core.board import Board
from .core.tiles import TileSet
from .core.view import PlayerView

#: The kinds of placement: it wins the game, it empties the hand (a domino), anything else.
WINS, DOMINO, NORMAL = 2, 1, 0
#: What an opponent's reply that wins it the game costs, in count points, on top of its points: the
#: expert's default ``w_target``, and the value the ``features`` slice uses.
GAME_WINNING_REPLY_COST = 60.0


class PlacementFeatures(NamedTuple):
    """What one placement does, in count points where it is points (whatever ``score_unit``).

    For a placement that wins or dominoes only ``kind``, ``now``, ``pips`` and ``double`` are filled:
    nothing follows it in the hand.
    """

    kind: int  #: :data:`WINS`, :data:`DOMINO` or :data:`NORMAL`
    now: int  #: points it scores (in score units)
    pips: int  #: the tile's pips
    double: bool  #: the tile is a double
    deny: float  #: the opponent's expected best reply, a game-winning one costing the reply cost more
    block: float  #: the chance the opponent cannot follow, x2 when it may not draw (it passes)
    mate: float  #: the partner's expected reply (0 unless asked for)
    follow: int  #: our best points next turn on the ends left (score units)
    fit: int  #: kept tiles that fit the new ends
    shown: int  #: distinct pip values in the kept hand
    p_lose: float  #: the chance the opponent holds a reply that wins it the game


#: The names of the columns of a :class:`PlacementFeatures` row.
FEATURE_NAMES: tuple[str, ...] = PlacementFeatures._fields


class Position(NamedTuple):
    """The facts of the position the expert's weights depend on (the same for every placement)."""

    opponent_room: int  #: points the next (opposing) seat's side still needs to reach the target
    smallest_opponent_hand: int  #: tiles in the smallest hand of any opposing seat


def possible_tiles(tiles: TileSet, unseen_mask: int, void_values: int) -> int:
    """Unseen tiles showing none of the values in ``void_values`` (a bit mask of pip values)."""
    if not void_values:
        return unseen_mask
    excluded = 0
    v = 0
    while void_values:
        if void_values & 1:
            excluded |= tiles.pip_mask[v]
        void_values >>= 1
        v += 1
    return unseen_mask & ~excluded


def no_hit_chances(pool: int, hand: int, upto: int) -> list[float]:
    """``q[k]`` = chance that a uniform ``hand``-tile draw from ``pool`` tiles misses ``k`` given tiles,
    for k = 0..upto (hypergeometric, C(pool-k, hand) / C(pool, hand))."""
    q = [1.0]
    p = 1.0
    for k in range(upto):
        if pool - k <= 0 or pool - hand - k <= 0:
            p = 0.0
        else:
            p *= (pool - hand - k) / (pool - k)
        q.append(p)
    return q


def points_if(view: PlayerView, action: int) -> int:
    """Points ``view.seat`` would score by playing ``action`` now (0 for the draw action)."""
    if action == view.draw_action:
        return 0
    board = view.board
    return view.points_for_count(view.seat, board.count_after(action >> 2, action & 3), board.size == 0)


def best_reply_points(view: PlayerView, board: Board, replier: int, possible_mask: int) -> int:
    """The most ``replier`` could score on ``board`` with one tile from ``possible_mask``.

    ``board`` is usually a copy with a candidate move already placed; ``possible_mask`` the tiles the
    replier might hold (unseen tiles minus its known voids).
    """
    if board.size == 0 or not possible_mask:
        return 0
    best = 0
    for a in board.placements(possible_mask):
        count = board.count_after(a >> 2, a & 3)
        if count > best and count % 5 == 0:
            best = count
    return view.points_for_count(replier, best) if best else 0


def expected_best(utils: list[float], q: Sequence[float]) -> float:
    """The expected maximum of the scoring replies ``utils`` (one per tile) when each tile is held with
    the no-hit chances ``q``: the k-th best counts when the k better ones are all missing."""
    utils.sort(reverse=True)
    total = 0.0
    for k, u in enumerate(utils):
        total += u * (q[k] - q[k + 1])
    return total


def replies(view: PlayerView, after: Board, possible: int, seat: int, room: int,
            winning_reply_cost: float) -> tuple[list[float], int, int]:
    """The scoring replies ``seat`` could make on ``after`` with a tile of ``possible``, one per tile
    (its best end), as utilities in count points: a reply worth ``room`` points or more (the points that
    seat's side still needs; -1: no such check) wins it the game and adds ``winning_reply_cost``. Also
    the number of possible tiles that fit any end at all (for the chance of a block), and the number
    whose reply wins the game."""
    unit = view.rules.score_unit
    best: dict[int, int] = {}
    fit = 0  # possible tiles that fit some end
    for a in after.placements(possible):
        t = a >> 2
        fit |= 1 << t
        c = after.count_after(t, a & 3)
        if c % 5 == 0 and c and c > best.get(t, 0):
            best[t] = c
    utils: list[float] = []
    winning = 0
    for t, c in best.items():
        p = view.points_for_count(seat, c)
        if p:
            wins = 0 <= room <= p
            winning += wins
            utils.append(p * unit + (winning_reply_cost if wins else 0.0))
    return utils, fit.bit_count(), winning


def placement_features(
    view: PlayerView, actions: Sequence[int], winning_reply_cost: float = GAME_WINNING_REPLY_COST,
    partner: bool = False,
) -> tuple[Position, list[PlacementFeatures]]:
    """The :class:`PlacementFeatures` of each placement in ``actions`` for ``view.seat``, and the
    :class:`Position` they share. ``partner`` also estimates the partner's reply (``mate``) in a
    partnership game; it costs as much again."""
    rules = view.rules
    tiles = view.tiles
    seat = view.seat
    n = view.num_players
    side_of = view.side_of
    my_side = side_of[seat]
    scores = view.scores
    immediate = rules.win_check == "immediate"
    sizes = view.hand_sizes
    hand = view.hand_mask
    unseen = view.unseen_mask
    voids = view.voids
    board = view.board

    nxt = (seat + 1) % n
    opp_possible = possible_tiles(tiles, unseen, voids[nxt])
    opp_pool = opp_possible.bit_count()
    opp_room = rules.target - scores[side_of[nxt]]
    q_opp = no_hit_chances(opp_pool, sizes[nxt], opp_pool)
    drawable = view.drawable

    mate_seat = (seat + 2) % n if rules.partnership and partner else -1
    mate_possible = possible_tiles(tiles, unseen, voids[mate_seat]) if mate_seat >= 0 else 0
    q_mate = no_hit_chances(mate_possible.bit_count(), sizes[mate_seat], mate_possible.bit_count()) \
        if mate_seat >= 0 else []
    position = Position(opp_room, min(sizes[s] for s in range(n) if side_of[s] != my_side))
    my_room = rules.target - scores[my_side]

    rows: list[PlacementFeatures] = []
    for action in actions:
        tile = action >> 2
        slot = action & 3
        now = view.points_for_count(seat, board.count_after(tile, slot), board.size == 0)
        pips, double = tiles.pips[tile], tiles.is_double[tile]
        if now and immediate and now >= my_room:
            rows.append(PlacementFeatures(WINS, now, pips, double, 0.0, 0.0, 0.0, 0, 0, 0, 0.0))
            continue
        kept = hand & ~(1 << tile)
        if not kept:
            rows.append(PlacementFeatures(DOMINO, now, pips, double, 0.0, 0.0, 0.0, 0, 0, 0, 0.0))
            continue
        after = board.copy()
        after.place(tile, slot)
        rows.append(_normal_features(view, after, now, pips, double, kept, opp_possible, nxt,
                                     opp_room if immediate else -1, q_opp, drawable, winning_reply_cost,
                                     mate_possible, mate_seat, q_mate))
    return position, rows


def _normal_features(
    view: PlayerView, after: Board, now: int, pips: int, double: bool, kept: int, opp_possible: int, nxt: int,
    opp_room: int, q_opp: list[float], drawable: int, winning_reply_cost: float, mate_possible: int,
    mate_seat: int, q_mate: list[float],
) -> PlacementFeatures:
    """The features of a placement after which the hand goes on (``after`` is the board it leaves)."""
    utils, fits, winning = replies(view, after, opp_possible, nxt, opp_room, winning_reply_cost)
    deny = expected_best(utils, q_opp) if utils else 0.0
    block = (q_opp[fits] if fits < len(q_opp) else 0.0) * (1.0 if drawable else 2.0)
    p_lose = 1.0 - q_opp[winning] if winning < len(q_opp) else 1.0
    mate = 0.0
    if q_mate:
        mutils, _, _ = replies(view, after, mate_possible, mate_seat, -1, winning_reply_cost)
        if mutils:
            mate = expected_best(mutils, q_mate)

    # our own next turn on the ends we leave: follow-up score, mobility, variety
    best_follow = 0
    fit = 0  # kept tiles that fit some end of ``after``
    for a in after.placements(kept):
        t = a >> 2
        fit |= 1 << t
        c = after.count_after(t, a & 3)
        if c % 5 == 0 and c > best_follow:
            best_follow = c
    follow = view.points_for_count(view.seat, best_follow) if best_follow else 0
    low, high = view.tiles.low, view.tiles.high
    shown = 0
    m = kept
    while m:
        lowbit = m & -m
        t = lowbit.bit_length() - 1
        shown |= (1 << low[t]) | (1 << high[t])
        m ^= lowbit
    return PlacementFeatures(NORMAL, now, pips, double, deny, block, mate, follow, fit.bit_count(), shown.bit_count(),
                             p_lose)
