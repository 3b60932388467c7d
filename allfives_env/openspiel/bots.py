"""OpenSpiel's search bots as our agents: ``openspiel-ismcts`` and ``openspiel-mcts``.

Opponents nobody here wrote. Each decision builds a ``python_allfives`` state from the agent's
:class:`~allfives_env.core.view.PlayerView` (:func:`~allfives_env.openspiel.position.state_for_view`:
a one-hand episode from the hand's start, returns in points / ``point_scale``, the hidden past a
consistent guess) and asks OpenSpiel's bot for a move:

* ``openspiel-ismcts`` runs OpenSpiel's ``ISMCTSBot`` (information-set MCTS, Cowling et al. 2011)
  with random rollouts: ``sims`` simulations, each on a fresh world drawn by
  ``resample_from_infostate`` (or one of ``worlds`` stored worlds), UCT with ``uct_c``, the most
  visited move. The rollouts (:class:`CoreRolloutEvaluator`) follow OpenSpiel's
  ``RandomRolloutEvaluator`` exactly in distribution but run on the core engine, ten times faster.
* ``openspiel-mcts`` runs OpenSpiel's (perfect-information) ``MCTSBot`` on ``worlds`` determinized
  worlds, ``sims / worlds`` simulations each, and plays the move with the most visits summed over the
  worlds (determinized UCT; MCTS alone on the true state would cheat).

The horizon is the end of the current hand, as for ``pimc``. Both are deterministic for a seed: every
random choice (worlds, rollouts, tie breaks) comes from generators drawn from the agent's own seeded
generator, which ``reset(seed)`` reseeds. They never see hidden tiles: the view has none to give.
``seconds_per_move`` is the mean think time of the decisions searched (forced moves excluded).

The agent registry names the two classes by path (``"allfives_env.openspiel.bots:OpenSpielISMCTSAgent"``,
see :mod:`allfives_env.agents`) and imports this module only when one is built: ``make_agent`` works
without importing this package, and the agents below it never import it. A rename here must follow
there (tests/test_structure.py checks that every registered path names a class that exists).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..agents.base import PlayerView, SearchingAgent
from ..agents.registry import AgentError
from ..core.errors import RulesError
from ..core.rules import SUPPORTED_MAX_PIPS
from .params import make_config

_SEEDS = 1 << 31
#: The search game with the largest points bound (the biggest tile set, four seats): a ``point_scale``
#: that keeps its returns finite keeps those of every search game, whatever the rules of the match.
_WIDEST_SEARCH = {"players": 4, "max_pip": max(SUPPORTED_MAX_PIPS), "episode": "hand", "returns": "points"}


class CoreRolloutEvaluator:
    """Random rollouts to the end of the episode, for OpenSpiel's bots (the ``Evaluator`` interface:
    ``evaluate`` and ``prior``). The same distribution as OpenSpiel's ``RandomRolloutEvaluator`` (a
    uniformly random legal move at each decision, chance by its probabilities: the boneyard drawn in a
    uniformly random order), but played on the core engine directly instead of through OpenSpiel's
    state API, which is about ten times faster. ``rollouts`` rollouts per call, averaged."""

    def __init__(self, rollouts: int, random_state: np.random.RandomState) -> None:
        self.rollouts = rollouts
        self.random_state = random_state

    def evaluate(self, state: Any) -> np.ndarray:
        """Mean returns of ``rollouts`` random continuations of ``state``."""
        from ..core.outcome import zero_sum_share

        rs = self.random_state
        total = np.zeros(state.num_players())
        for _ in range(self.rollouts):
            working = state
            while working.is_chance_node():  # only reached from MCTS leaves: resolve chance first
                working = working.clone() if working is state else working
                outcomes, probs = zip(*working.chance_outcomes())
                working.apply_action(int(rs.choice(outcomes, p=probs)))
            track = working.track
            if track.is_terminal:
                total += track.returns()
                continue
            game = track.game.clone()
            stock = list(reversed(game.boneyard()))
            rs.shuffle(stock)
            game.replace_hidden(0, {s: game.hands[s] for s in range(1, game.num_players)}, list(reversed(stock)))
            while not game.over:
                if game.is_chance_node():  # a draw (the episode is one hand): the shuffled boneyard's next tile
                    game.apply_chance(game.stock[-1])
                    continue
                legal = game.legal
                game.step(legal[rs.randint(len(legal))] if len(legal) > 1 else legal[0])
            config = track.config
            gains = [now - then for now, then in zip(game.scores, config.scores)]
            total += [zero_sum_share(gains, game.side_of[s]) / config.point_scale for s in range(game.num_players)]
        return total / self.rollouts

    def prior(self, state: Any) -> list[tuple[int, float]]:
        """Uniform over the legal actions (chance outcomes at a chance node)."""
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions(state.current_player())
        return [(a, 1.0 / len(legal)) for a in legal]


class _OpenSpielAgent(SearchingAgent):
    """What both bots share: parameter checks, the search state, seeding, timing."""

    name = "openspiel"

    def __init__(self, seed: Optional[int] = None, **params: Any) -> None:
        super().__init__(seed, **params)
        from .game import AllFivesGame  # noqa: F401  (imports pyspiel: fails here, clearly, without the extra)

        self.fallbacks = 0  # decisions where no consistent world was found (a random legal move was played)

    def _keep_search_params(self, sims: int, uct_c: float, rollouts: int, worlds: int, point_scale: float) -> None:
        """Check the parameters both bots share (positive; ``worlds`` is the subclass's to check) and keep them."""
        for name, value in (("sims", sims), ("rollouts", rollouts), ("uct_c", uct_c), ("point_scale", point_scale)):
            if not value > 0:
                raise AgentError(f"{name}={value!r} is not allowed: give a positive number")
        try:  # refused here, not at the first search, where the search game's own check would stop the match
            make_config({**_WIDEST_SEARCH, "point_scale": float(point_scale)})
        except RulesError as exc:
            raise AgentError(str(exc).replace("parameter ", "", 1)) from None
        self.sims, self.uct_c, self.rollouts, self.worlds = sims, float(uct_c), rollouts, worlds
        self.point_scale = float(point_scale)

    def search(self, view: PlayerView, legal: list[int]) -> int:
        """The bot's move for ``view.seat``, searched in a world consistent with the view."""
        from .position import state_for_view

        world_rng = np.random.default_rng(int(self.rng.integers(_SEEDS)))
        random_state = np.random.RandomState(int(self.rng.integers(_SEEDS)))
        state = state_for_view(view, world_rng, self.point_scale)
        if state is None:
            self.fallbacks += 1
            action = legal[int(self.rng.integers(len(legal)))]
        else:
            action = int(self._search(state, world_rng, random_state))
        if action not in legal:  # pragma: no cover - the bots choose among the state's legal actions
            raise AgentError(f"{self.name} chose {action}, not among the legal actions {legal}")
        return action

    def _search(self, state: Any, world_rng: np.random.Generator, random_state: np.random.RandomState) -> int:
        raise NotImplementedError


class OpenSpielISMCTSAgent(_OpenSpielAgent):
    """OpenSpiel's ``ISMCTSBot`` with a random-rollout evaluator (see the module doc).

    ``sims`` simulations per decision, ``uct_c`` the UCT constant (returns are points / ``point_scale``),
    ``rollouts`` random rollouts per evaluated leaf, ``worlds`` the most distinct worlds to sample per
    decision (-1: a new one every simulation).
    """

    name = "openspiel-ismcts"

    def __init__(self, seed: Optional[int] = None, sims: int = 100, uct_c: float = 2.0, rollouts: int = 1,
                 worlds: int = -1, point_scale: float = 25.0) -> None:
        super().__init__(seed, sims=sims, uct_c=uct_c, rollouts=rollouts, worlds=worlds, point_scale=point_scale)
        self._keep_search_params(sims, uct_c, rollouts, worlds, point_scale)
        if not (worlds == -1 or worlds >= 1):
            raise AgentError(f"worlds={worlds!r} is not allowed: give a positive number, or -1 (a new world every "
                             "simulation)")

    def _search(self, state: Any, world_rng: np.random.Generator, random_state: np.random.RandomState) -> int:
        from open_spiel.python.algorithms import ismcts

        evaluator = CoreRolloutEvaluator(self.rollouts, random_state)
        bot = ismcts.ISMCTSBot(
            game=state.get_game(), evaluator=evaluator, uct_c=self.uct_c, max_simulations=self.sims,
            max_world_samples=self.worlds, random_state=random_state,
            final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
        )
        bot.set_resampler(lambda s, player: s.resample_from_infostate(player, rng=world_rng))
        return bot.step(state)


class OpenSpielMCTSAgent(_OpenSpielAgent):
    """OpenSpiel's ``MCTSBot`` on determinized worlds (see the module doc).

    ``sims`` simulations per decision in all, split over ``worlds`` sampled worlds; ``uct_c``,
    ``rollouts`` and ``point_scale`` as for ``openspiel-ismcts``.
    """

    name = "openspiel-mcts"

    def __init__(self, seed: Optional[int] = None, sims: int = 100, uct_c: float = 2.0, rollouts: int = 1,
                 worlds: int = 10, point_scale: float = 25.0) -> None:
        super().__init__(seed, sims=sims, uct_c=uct_c, rollouts=rollouts, worlds=worlds, point_scale=point_scale)
        self._keep_search_params(sims, uct_c, rollouts, worlds, point_scale)
        if not worlds > 0:
            raise AgentError(f"worlds={worlds!r} is not allowed: give a positive number")
        if worlds > sims:
            raise AgentError(f"worlds={worlds} is not allowed with sims={sims}: each world needs a simulation")

    def _search(self, state: Any, world_rng: np.random.Generator, random_state: np.random.RandomState) -> int:
        from open_spiel.python.algorithms import mcts

        evaluator = CoreRolloutEvaluator(self.rollouts, random_state)
        per_world = [self.sims // self.worlds + (1 if i < self.sims % self.worlds else 0) for i in range(self.worlds)]
        player = state.current_player()
        visits: dict[int, int] = {a: 0 for a in state.legal_actions()}
        for sims in per_world:
            world = state.resample_from_infostate(player, rng=world_rng)
            bot = mcts.MCTSBot(state.get_game(), self.uct_c, sims, evaluator, solve=False, random_state=random_state)
            root = bot.mcts_search(world)
            for child in root.children:
                visits[child.action] += child.explore_count
        best = max(visits.values())
        ties = sorted(a for a, v in visits.items() if v == best)
        return ties[int(random_state.randint(len(ties)))]
