"""``expert``: a hand-written All Fives heuristic that plays the way a strong human player does.

Each legal placement gets a value, a weighted sum of features that a good player weighs at the table;
the agent plays the highest. Every feature reads only what the seat may see (its own hand, the table,
the unseen tiles, the known voids, hand sizes, scores and the boneyard size), so two games that differ
only in hidden tiles get the same decision.

The features, and why they matter (all in count points, so the weights are comparable; under
``score_unit=5`` the points of a play are scaled back to the count before weighing):

* **score now** (``w_score``): the points the play scores. A play that takes the side to the target
  wins the game and beats everything (under ``win_check='immediate'``); a play that empties the hand
  (a domino) comes next, since nobody can reply to it.
* **deny** (``w_deny``): the *expected* best reply of the next player, always an opponent (partners sit
  two apart). ``defensive`` takes the worst case over every tile that player might hold, which throws
  away good plays for fear of tiles it very likely does not have. Here each scoring reply counts by
  the chance that the opponent holds it: its hand is taken as a uniform draw of ``hand size`` tiles
  from the unseen tiles it is not known to lack, and the expected maximum over that draw is exact
  (hypergeometric). A reply that would take the opponent to the target costs ``w_target`` more (it
  loses the game). When the opponent is within ``danger_margin`` count points of the target, denial
  weighs ``1 + w_danger`` times as much.
* **block** (``w_block``): the chance that the opponent has no tile for the new ends (the same
  hypergeometric model, known voids included), so it must draw, which fills its hand with pips and
  gives us the table, or pass (then it counts double: we simply play again). Playing onto numbers an
  opponent is known to lack is the classic way to get there.
* **follow-up** (``w_follow``): the best we could score next turn on the ends we leave, with the tiles
  we keep. Setting a count we can cash in is how strong players build runs of scores.
* **mobility** (``w_mobility`` per kept tile that fits the new ends, up to 3; ``w_variety`` per
  different number in the kept hand): a varied hand rarely has to draw, and drawing both costs pips
  and hands the table to the opponent.
* **shed** (``w_pips`` per pip played; ``w_pips_late`` once an opponent holds ``late_hand`` tiles or
  fewer and the hand may end at any moment): pips left in hand are deducted when the hand ends.
  Doubles fit only one number and get stranded, so playing one earns ``w_double`` early; late in the
  hand that bonus is dropped and a double is played only for its points or its pips.
* **partner** (``w_partner``): in the 4-player partnership game, a share of the partner's expected
  scoring reply on the ends we leave. Off by default: measured, it made the team weaker (4 players,
  1000 duplicate games against two ``defensive`` players: 76.6% won at 0.3, 79.1% at 0), since the
  opponent in between plays first on the same ends.

The default weights came from a coordinate search (each weight tried at 0, 0.5x, 1.5x and 2.5x of its
value, kept when the win rate rose) on 1600 duplicate 2-player games per setting against
``defensive``; the untuned first guess won 76%. The biggest single contributions: deny (without it
the agent drops below 50% against ``defensive``), block, the double bonus and mobility. On fresh
deals (2 players, default rules, seeds 50000-50999 in both seatings) the defaults win 82% of 2000
games against ``defensive`` and 89% of 1000 against ``greedy``, at well under 0.2 ms a move.

Weights are constructor keywords; non-default values are stored in ``params`` so :meth:`Agent.spec`
rebuilds the same agent. Ties are broken toward the heavier tile, then by the agent's own seeded
generator, so the agent is deterministic for a given seed.
"""

from __future__ import annotations

from typing import Callable, Optional

from ..core.board import Board
from .base import Agent, PlayerView
from .basic import choose_best
from .scoring import possible_tiles

#: The kinds of placement in :meth:`ExpertAgent.features`: it wins the game, it empties the hand, other.
WINS, DOMINO, NORMAL = 2, 1, 0
#: The columns of a :meth:`ExpertAgent.features` row.
FEATURE_NAMES = ("kind", "now", "pips", "double", "deny", "block", "mate", "follow", "fit", "shown", "p_lose")

#: Default weights, tuned by coordinate search on duplicate 2-player matches against ``defensive``
#: (see the module docstring for what each one rewards). All are in count points whatever
#: ``score_unit`` is, except ``late_hand``, a number of tiles.
DEFAULT_WEIGHTS: dict[str, float] = {
    "w_score": 1.0,
    "w_deny": 1.0,
    "w_target": 60.0,
    "w_danger": 0.5,
    "danger_margin": 35.0,
    "w_block": 7.5,
    "w_follow": 0.3,
    "w_mobility": 1.5,
    "w_variety": 0.5,
    "w_pips": 0.15,
    "w_pips_late": 0.6,
    "w_double": 5.0,
    "late_hand": 1.0,
    "w_partner": 0.0,
}


def _no_hit_chances(pool: int, hand: int, upto: int) -> list[float]:
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


class ExpertAgent(Agent):
    """A weighted-feature heuristic: score, deny, block, follow up, stay mobile, shed heavy tiles.

    Parameters (all floats, defaults in :data:`DEFAULT_WEIGHTS`): ``w_score`` points now; ``w_deny``
    expected opponent reply; ``w_target`` extra cost of a reply that wins the opponent the game;
    ``w_danger`` extra denial weight when the opponent is within ``danger_margin`` of the target;
    ``w_block`` chance the opponent cannot follow; ``w_follow`` our best next score on the ends left;
    ``w_mobility`` kept tiles that fit the new ends; ``w_variety`` distinct numbers kept; ``w_pips`` /
    ``w_pips_late`` value per pip shed (early / when an opponent holds ``late_hand`` tiles or fewer);
    ``w_double`` bonus for playing a double early; ``w_partner`` share of the partner's expected reply.
    """

    name = "expert"

    def __init__(
        self,
        seed: Optional[int] = None,
        w_score: float = 1.0,
        w_deny: float = 1.0,
        w_target: float = 60.0,
        w_danger: float = 0.5,
        danger_margin: float = 35.0,
        w_block: float = 7.5,
        w_follow: float = 0.3,
        w_mobility: float = 1.5,
        w_variety: float = 0.5,
        w_pips: float = 0.15,
        w_pips_late: float = 0.6,
        w_double: float = 5.0,
        late_hand: float = 1.0,
        w_partner: float = 0.0,
    ) -> None:
        given = dict(
            w_score=w_score, w_deny=w_deny, w_target=w_target, w_danger=w_danger, danger_margin=danger_margin,
            w_block=w_block, w_follow=w_follow, w_mobility=w_mobility, w_variety=w_variety, w_pips=w_pips,
            w_pips_late=w_pips_late, w_double=w_double, late_hand=late_hand, w_partner=w_partner,
        )
        weights = {key: float(value) for key, value in given.items()}
        super().__init__(seed, **weights)  # the defaults are left out of params and spec()
        self.weights = weights
        for key, value in weights.items():  # w_score, w_deny, ...: read on every move
            setattr(self, key, value)

    # ------------------------------------------------------------------ decision
    def act(self, view: PlayerView) -> int:
        return choose_best(view, lambda actions: self.evaluate(view, actions), self.rng)

    def evaluate(self, view: PlayerView, actions: list[int]) -> list[float]:
        """The value of each placement in ``actions`` for ``view.seat`` (public information only): the
        weighted sum of its :meth:`features`."""
        unit = view.rules.score_unit
        context, rows = self.features(view, actions)
        deny_w, pip_w, double_w = context
        out: list[float] = []
        for kind, now, pips, double, deny, block, mate, follow, fit, shown, _ in rows:
            if kind == WINS:
                out.append(1e9 + now)  # this play wins the game
                continue
            if kind == DOMINO:
                out.append(1e6 + now)  # domino: the hand ends, nobody replies
                continue
            # the same additions, in the same order, as one expression per feature: decisions stay bit-exact
            value = self.w_score * now * unit + pip_w * pips + (double_w if double else 0.0)
            value -= deny_w * deny
            value += self.w_block * block
            value += self.w_partner * mate
            if follow:
                value += self.w_follow * follow * unit
            value += self.w_mobility * min(fit, 3)
            value += self.w_variety * shown
            out.append(value)
        return out

    def features(self, view: PlayerView, actions: list[int]) -> tuple[tuple[float, float, float], list[tuple]]:
        """The unweighted features of each placement in ``actions``, and the weights that depend on the
        position (``deny_w``, ``pip_w``, ``double_w``: raised when the opponent nears the target, changed
        late in the hand).

        One row per action (see :data:`FEATURE_NAMES`): ``kind`` (:data:`WINS`, :data:`DOMINO` or
        :data:`NORMAL`; the other features are 0 unless NORMAL, except ``now``), ``now`` (points scored),
        ``pips``, ``double`` (0/1), ``deny`` (the opponent's expected best reply in count points,
        ``w_target`` added for a reply that wins it the game), ``block`` (the chance it cannot follow, x2
        when it may not draw: it passes), ``mate`` (the partner's expected reply, 0 unless ``w_partner``),
        ``follow`` (our best points next turn on the ends left), ``fit`` (kept tiles fitting the new ends),
        ``shown`` (distinct numbers kept), ``p_lose`` (the chance the opponent holds a reply that wins it
        the game). Also what the ``features`` observation slice encodes, so a network can learn on top.
        """
        game = view._game  # read for public facts (board, scores, voids, hand sizes) and our own hand
        rules = game.rules
        tiles = game.tiles
        seat = view.seat
        n = game.num_players
        side_of = game.side_of
        my_side = side_of[seat]
        scores = game.scores
        target = rules.target
        immediate = rules.win_check == "immediate"
        sizes = game.hand_sizes()  # public: how many tiles each seat holds
        hand = view.hand_mask  # our own tiles only
        unseen = view.unseen_mask
        voids = game.voids
        pips = tiles.pips
        low = tiles.low
        high = tiles.high
        is_double = tiles.is_double
        points_for_count = game.points_for_count
        board = game.board
        # points are weighed in count points (a 15 is worth 15 whether it scores 15 or 3 units), so the
        # weights of the pip and mobility features keep their meaning under score_unit=5
        unit = rules.score_unit

        # the next seat is always an opponent (partners sit two apart)
        nxt = (seat + 1) % n
        opp_side = side_of[nxt]
        opp_possible = possible_tiles(tiles, unseen, voids[nxt])
        opp_pool = opp_possible.bit_count()
        opp_hand = sizes[nxt]
        opp_room = target - scores[opp_side]
        deny_w = self.w_deny * (1.0 + (self.w_danger if opp_room * unit <= self.danger_margin else 0.0))
        q_opp = _no_hit_chances(opp_pool, opp_hand, opp_pool)
        drawable = game.drawable

        partner = (seat + 2) % n if rules.partnership else -1
        if partner >= 0 and self.w_partner:
            mate_possible = possible_tiles(tiles, unseen, voids[partner])
            mate_pool = mate_possible.bit_count()
            q_mate = _no_hit_chances(mate_pool, sizes[partner], mate_pool)
        else:
            mate_possible = 0
            q_mate = []

        min_opp = min(sizes[s] for s in range(n) if side_of[s] != my_side)
        late = min_opp <= self.late_hand
        pip_w = self.w_pips_late if late else self.w_pips
        double_w = 0.0 if late else self.w_double
        my_room = target - scores[my_side]

        rows: list[tuple] = []
        for action in actions:
            tile = action >> 2
            slot = action & 3
            count = board.count_after(tile, slot)
            now = points_for_count(seat, count, board.size == 0)
            if now and immediate and now >= my_room:
                rows.append((WINS, now, pips[tile], is_double[tile], 0.0, 0.0, 0.0, 0, 0, 0, 0.0))
                continue
            kept = hand & ~(1 << tile)
            if not kept:
                rows.append((DOMINO, now, pips[tile], is_double[tile], 0.0, 0.0, 0.0, 0, 0, 0, 0.0))
                continue
            after = board.copy()
            after.place(tile, slot)

            # the opponent's reply: expected best, and the chance it cannot follow at all
            utils, fits, winning = self._replies(after, opp_possible, nxt, opp_room if immediate else -1, unit,
                                                 points_for_count)
            deny = 0.0
            if utils:
                utils.sort(reverse=True)
                for k, u in enumerate(utils):
                    deny += u * (q_opp[k] - q_opp[k + 1])
            p_block = q_opp[fits] if fits < len(q_opp) else 0.0
            block = p_block * (1.0 if drawable else 2.0)
            p_lose = 1.0 - q_opp[winning] if winning < len(q_opp) else 1.0

            mate = 0.0
            if q_mate:
                mutils, _, _ = self._replies(after, mate_possible, partner, -1, unit, points_for_count)
                if mutils:
                    mutils.sort(reverse=True)
                    for k, u in enumerate(mutils):
                        mate += u * (q_mate[k] - q_mate[k + 1])

            # our own next turn on the ends we leave: follow-up score, mobility, variety
            best_follow = 0
            fit = 0  # kept tiles that fit some end of ``after``
            for a in after.placements(kept):
                t = a >> 2
                fit |= 1 << t
                c = after.count_after(t, a & 3)
                if c % 5 == 0 and c > best_follow:
                    best_follow = c
            follow = points_for_count(seat, best_follow) if best_follow else 0
            shown = 0
            m = kept
            while m:
                lowbit = m & -m
                t = lowbit.bit_length() - 1
                shown |= (1 << low[t]) | (1 << high[t])
                m ^= lowbit
            rows.append((NORMAL, now, pips[tile], is_double[tile], deny, block, mate, follow, fit.bit_count(),
                         shown.bit_count(), p_lose))
        return (deny_w, pip_w, double_w), rows

    def _replies(self, after: Board, possible: int, seat: int, room: int, unit: int,
                 points_for_count: Callable[[int, int], int]) -> tuple[list[float], int, int]:
        """The scoring replies ``seat`` could make on ``after`` with a tile of ``possible``, one per
        tile (its best end), as utilities in count points: a reply worth ``room`` points or more (the
        points that seat's side still needs; -1: no such check) wins it the game and adds ``w_target``.
        Also the number of possible tiles that fit any end at all (for the chance of a block), and the
        number whose reply wins the game."""
        best: dict[int, int] = {}
        fit = 0  # possible tiles that fit some end
        for a in after.placements(possible):
            t = a >> 2
            fit |= 1 << t
            c = after.count_after(t, a & 3)
            if c % 5 == 0 and c and c > best.get(t, 0):
                best[t] = c
        fits = fit.bit_count()
        utils: list[float] = []
        winning = 0
        for t, c in best.items():
            p = points_for_count(seat, c)
            if p:
                wins = 0 <= room <= p
                winning += wins
                utils.append(p * unit + (self.w_target if wins else 0.0))
        return utils, fits, winning

