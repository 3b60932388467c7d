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
  scoring reply on the ends we leave. Off by default: measured, it made the team weaker, since the
  opponent in between plays first on the same ends.

The default weights came from a coordinate search (each weight tried at 0, 0.5x, 1.5x and 2.5x of its
value, kept when the win rate rose) on duplicate 2-player games against ``defensive``; the README's
strength tables give what they measure.

Weights are constructor keywords; non-default values are stored in ``params`` so :meth:`Agent.spec`
rebuilds the same agent. Ties are broken toward the heavier tile, then by the agent's own seeded
generator, so the agent is deterministic for a given seed.
"""

from __future__ import annotations

from typing import Optional

from ..analysis import DOMINO, WINS, PlacementFeatures, placement_features
from ..expert_weights import DEFAULT_WEIGHTS, DOMINO_PRIORITY, MOBILITY_CAP, WIN_PRIORITY
from .base import Agent, PlayerView
from .basic import choose_best

_W = DEFAULT_WEIGHTS


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
    # the weights, as attributes (set from the parameters by __init__; read on every move)
    w_score: float
    w_deny: float
    w_target: float
    w_danger: float
    danger_margin: float
    w_block: float
    w_follow: float
    w_mobility: float
    w_variety: float
    w_pips: float
    w_pips_late: float
    w_double: float
    late_hand: float
    w_partner: float

    def __init__(
        self,
        seed: Optional[int] = None,
        w_score: float = _W["w_score"],
        w_deny: float = _W["w_deny"],
        w_target: float = _W["w_target"],
        w_danger: float = _W["w_danger"],
        danger_margin: float = _W["danger_margin"],
        w_block: float = _W["w_block"],
        w_follow: float = _W["w_follow"],
        w_mobility: float = _W["w_mobility"],
        w_variety: float = _W["w_variety"],
        w_pips: float = _W["w_pips"],
        w_pips_late: float = _W["w_pips_late"],
        w_double: float = _W["w_double"],
        late_hand: float = _W["late_hand"],
        w_partner: float = _W["w_partner"],
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
        for row in rows:
            if row.kind == WINS:
                out.append(WIN_PRIORITY + row.now)
                continue
            if row.kind == DOMINO:
                out.append(DOMINO_PRIORITY + row.now)
                continue
            # the same additions, in the same order, as one expression per feature: decisions stay bit-exact
            value = self.w_score * row.now * unit + pip_w * row.pips + (double_w if row.double else 0.0)
            value -= deny_w * row.deny
            value += self.w_block * row.block
            value += self.w_partner * row.mate
            if row.follow:
                value += self.w_follow * row.follow * unit
            value += self.w_mobility * min(row.fit, MOBILITY_CAP)
            value += self.w_variety * row.shown
            out.append(value)
        return out

    def features(self, view: PlayerView, actions: list[int]) -> tuple[tuple[float, float, float], list[PlacementFeatures]]:
        """The unweighted features of each placement in ``actions`` (:func:`allfives_env.analysis.
        placement_features`, with this agent's ``w_target`` as the cost of a game-winning reply), and the
        weights that depend on the position: ``deny_w`` (raised when the opponent nears the target),
        ``pip_w`` and ``double_w`` (changed late in the hand)."""
        position, rows = placement_features(view, actions, self.w_target, partner=bool(self.w_partner))
        unit = view.rules.score_unit
        danger = position.opponent_room * unit <= self.danger_margin
        deny_w = self.w_deny * (1.0 + (self.w_danger if danger else 0.0))
        late = position.smallest_opponent_hand <= self.late_hand
        pip_w = self.w_pips_late if late else self.w_pips
        double_w = 0.0 if late else self.w_double
        return (deny_w, pip_w, double_w), rows
