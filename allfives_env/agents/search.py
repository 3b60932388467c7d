"""Determinized Monte-Carlo search: ``pimc`` (perfect-information Monte Carlo) and its ``oracle``.

For each decision with a real choice, ``pimc`` draws ``samples`` complete guesses of the hidden tiles
(the other hands and the boneyard order) that agree with everything public: every tile not in its hand
and not on the table is somewhere, each seat holds exactly its known number of tiles, and a seat known to
lack a value (it drew or passed while that value was open) gets no tile showing it. On each guess it
plays every candidate move forward to the end of the hand with a fast rollout policy and scores the
result as its side's points gained minus the mean gained by the other sides (plus a bonus of one
``target`` for winning the game during the rollout, minus one for losing it). All candidates are
compared on the same guesses, which removes most of the noise. The candidate with the best mean value
plus a heuristic prior wins: by default the ``expert`` agent's evaluation of the move (in points),
which corrects what cheap greedy rollouts cannot see (they play both sides greedily with perfect
knowledge of the guess); ``prior="none"`` gives the plain search.

``oracle`` runs the same search on the true hidden tiles. It reads information no player has, so it is
for analysis only: an upper reference for what perfect knowledge is worth.

Rollout policies: ``greedy`` (most points now, ties to the heaviest tile; deterministic), ``random``,
``epsilon`` (greedy, but a uniformly random move with probability ``epsilon``) and ``expert`` (the
``expert`` agent for every seat, each reading only what it would see in play; deterministic, about six
times the cost of ``greedy``: ``benchmarks/pimc_speed.py --also``).

Fixed or sifted guesses: by default every candidate is played out on all ``samples`` guesses. With
``min_samples`` (batch engine), the search eliminates as it goes: after every ``min_samples`` guesses a
candidate is dropped once the leader beats it by more than ``z`` standard errors of their paired
difference, counting anything within ``delta`` points as no loss, and it stops when one candidate is
left or after ``samples`` guesses. Clear decisions then cost a few guesses and close ones up to
``samples``. ``pimc-sift`` is ``pimc`` with ``expert`` rollouts and this elimination: the expensive
rollouts fit in ``pimc``'s think time because most decisions are clear.

Engines: by default (``engine="batch"``) the guesses and rollouts run compiled, on the batch engine, in
one call per decision (:mod:`allfives_env.batch.search`, whose values agree exactly with the Python
evaluation on the same guess); ``engine="python"`` keeps the original pure-Python search on
:class:`~allfives_env.core.game.Game` forks, the reference the batch search is matched against. The two
draw their guesses from different random streams, so they choose alike, not identically.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional

import numpy as np

from ..core.game import Game
from ..core.outcome import zero_sum_share
from ..core.search_constants import HIDDEN_TRIES, POINTS_OVER_PIPS
from .base import Evaluator, OracleView, PlayerView, SearchingAgent
from .basic import tied_best

if TYPE_CHECKING:  # imported where it is used (an expert rollout only), named here for the type checker
    from .expert import ExpertAgent

ROLLOUTS = ("greedy", "random", "epsilon", "expert")
ENGINES = ("batch", "python")
#: The batch search's stream is seeded per decision with a draw below this from the agent's generator.
_STREAM_SEEDS = 1 << 63
#: ``pimc-net``'s default points per nat of the policy's preferences (benchmarks/pimc_net.py picked it).
PIMC_NET_POLICY_WEIGHT = 1.0


class PIMCAgent(SearchingAgent):
    """Determinized Monte-Carlo search over sampled hidden tiles.

    Parameters: ``samples`` (guesses per decision, default 200; the most with ``min_samples``),
    ``rollout`` (policy, see module doc), ``epsilon`` (for the epsilon rollout), ``win_bonus`` (value of
    winning the game during a rollout, in targets; default 1), ``prior`` (an agent with
    ``evaluate(view, actions)`` whose values, times ``prior_weight``, are added to each candidate's mean
    rollout value; default ``"expert"``, ``"none"`` for the plain search), ``engine`` (``"batch"``,
    compiled, or ``"python"``, the reference; see the module doc), ``min_samples`` (0: every candidate
    on all ``samples`` guesses; else the elimination round, see the module doc; batch engine only), ``z``
    and ``delta`` (the elimination's confidence, in standard errors, and indifference margin, in
    points). ``seconds_per_move`` reports the average think time so far, ``guesses`` the guesses dealt.
    """

    name = "pimc"

    def __init__(
        self,
        seed: Optional[int] = None,
        samples: int = 200,
        rollout: str = "greedy",
        epsilon: float = 0.1,
        win_bonus: float = 1.0,
        prior: Optional[str] = "expert",
        prior_weight: float = 1.0,
        engine: str = "batch",
        min_samples: int = 0,
        z: float = 2.0,
        delta: float = 0.0,
    ) -> None:
        prior = "none" if prior in (None, "none", "None", "") else prior
        super().__init__(seed, samples=samples, rollout=rollout, epsilon=epsilon, win_bonus=win_bonus, prior=prior,
                         prior_weight=prior_weight, engine=engine, min_samples=min_samples, z=z, delta=delta)
        if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
            raise ValueError(f"samples={samples!r} is not allowed: give a positive integer")
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout={rollout!r} is not allowed: choose one of {list(ROLLOUTS)}")
        if not 0.0 <= float(epsilon) <= 1.0:
            raise ValueError(f"epsilon={epsilon!r} is not allowed: give a probability in [0, 1]")
        if engine not in ENGINES:
            raise ValueError(f"engine={engine!r} is not allowed: choose one of {list(ENGINES)}")
        if not isinstance(min_samples, int) or isinstance(min_samples, bool) or min_samples < 0:
            raise ValueError(f"min_samples={min_samples!r} is not allowed: give 0 (no elimination) or a positive integer")
        if min_samples and engine != "batch":
            raise ValueError(f"min_samples={min_samples!r} needs engine='batch': the elimination runs compiled only")
        if not (math.isfinite(float(z)) and float(z) > 0):
            raise ValueError(f"z={z!r} is not allowed: give a finite number > 0 (standard errors)")
        if not (math.isfinite(float(delta)) and float(delta) >= 0):
            raise ValueError(f"delta={delta!r} is not allowed: give a finite number >= 0 (points)")
        self.engine = engine
        self.min_samples = min_samples
        self.z = float(z)
        self.delta = float(delta)
        self.guesses = 0
        self.samples = samples
        self.rollout = rollout
        self.epsilon = float(epsilon)
        self.win_bonus = float(win_bonus)
        self.prior_weight = float(prior_weight)
        self._prior: Optional[Evaluator] = None
        # the plain expert prior is computed inside the compiled elimination (the same values, no Python call)
        self._expert_prior = prior == "expert"
        if prior != "none":
            from .registry import make_agent

            prior_agent = make_agent(prior, seed=seed)
            if not isinstance(prior_agent, Evaluator):
                raise ValueError(f"prior={prior!r} has no evaluate(view, actions) method (try 'expert')")
            self._prior = prior_agent
        self._rollout_expert: Optional[ExpertAgent] = None
        if rollout == "expert" and engine == "python":
            from .expert import ExpertAgent

            self._rollout_expert = ExpertAgent(seed=0)

    # ------------------------------------------------------------------ acting
    def search(self, view: PlayerView, legal: list[int]) -> int:
        """The candidate with the best total rollout value over the guesses plus the prior (ties at random)."""
        scores, _ = self._scores(view, legal)
        return self._best(legal, scores)

    def move_scores(self, view: PlayerView, legal: list[int]) -> list[float]:
        """What the search ranks each legal move by, in points: its mean rollout value plus the prior, and
        ``-inf`` for a move the elimination dropped. One fresh search (it advances the agent's generator);
        ``benchmarks/distill_gap.py`` judges other agents' moves by these."""
        scores, guesses = self._scores(view, legal)
        return [s / guesses for s in scores]

    def _scores(self, view: PlayerView, legal: list[int]) -> tuple[list[float], int]:
        """The ranking scores of :meth:`search` and what they are totals over: the fixed search sums
        ``samples`` guesses (plus ``samples`` times the prior), the sifted one gives means (1)."""
        samples = self.samples
        if self.uses_hidden_information and self.rollout in ("greedy", "expert"):
            samples = 1  # the oracle with deterministic rollouts sees the same game every time
        if self.min_samples and samples > 1:
            return self._sifted(view, legal, samples), 1
        if self.engine == "batch":
            totals = self._batch_totals(view, legal, samples)
        else:
            totals = self._python_totals(view, legal, samples)
        draw = view.draw_action
        placements = [a for a in legal if a != draw]
        prior = self._prior_values(view, placements)
        if prior is not None:
            totals = [t + samples * prior.get(a, 0.0) for a, t in zip(legal, totals)]
        return totals, samples

    def _best(self, legal: list[int], scores: list[float]) -> int:
        """The move with the highest score, ties at random from the agent's generator."""
        best = max(scores)
        ties = [a for a, t in zip(legal, scores) if t == best]
        return ties[0] if len(ties) == 1 else ties[int(self.rng.integers(len(ties)))]

    def _sifted(self, view: PlayerView, legal: list[int], samples: int) -> list[float]:
        """Each candidate's mean plus prior in the compiled successive-elimination search, ``-inf`` once
        eliminated."""
        from ..batch.search import sifted_values

        draw = view.draw_action
        placements = [a for a in legal if a != draw]
        if self._expert_prior:
            given = self._extra_prior_values(view, placements)
        else:
            given = self._prior_values(view, placements)
        given = given or {}
        seed = int(self.rng.integers(_STREAM_SEEDS))
        found = sifted_values(view, legal, [given.get(a, 0.0) for a in legal], self.min_samples, samples, self.z,
                              self.delta, self.rollout, self.epsilon, self.win_bonus, seed,
                              expert_weight=self.prior_weight if self._expert_prior else 0.0,
                              hidden=self._hidden(view))
        self.guesses += found.guesses
        return [m + p if live else -math.inf for m, p, live in
                zip(found.means.tolist(), found.prior.tolist(), found.alive.tolist())]

    def _prior_values(self, view: PlayerView, placements: list[int]) -> Optional[dict[int, float]]:
        """The prior's value of each placement in points (times ``prior_weight``) plus any extra term
        (:meth:`_extra_prior_values`), or None without either."""
        extra = self._extra_prior_values(view, placements)
        if self._prior is None:
            return extra
        values = {a: self.prior_weight * v for a, v in zip(placements, self._prior.evaluate(view, placements))}
        if extra:
            values = {a: v + extra.get(a, 0.0) for a, v in values.items()}
        return values

    def _extra_prior_values(self, view: PlayerView, placements: list[int]) -> Optional[dict[int, float]]:
        """Values added to the prior's: none here (``pimc-net`` adds its network's)."""
        return None

    def _python_totals(self, view: PlayerView, legal: list[int], samples: int) -> list[float]:
        """The summed rollout values of every candidate over ``samples`` guesses, on Python forks."""
        totals = [0.0] * len(legal)
        self.guesses += samples
        for _ in range(samples):
            guess = self._guess(view)
            for i, action in enumerate(legal):
                totals[i] += self._evaluate(guess, view.seat, action)
        return totals

    def _batch_totals(self, view: PlayerView, legal: list[int], samples: int) -> list[float]:
        """The same totals from the compiled search (its stream seeded from the agent's generator)."""
        from ..batch.search import search_values

        seed = int(self.rng.integers(_STREAM_SEEDS))
        self.guesses += samples
        values = search_values(view, legal, samples, self.rollout, self.epsilon, self.win_bonus, seed,
                               hidden=self._hidden(view))
        return values.tolist()

    def _hidden(self, view: PlayerView) -> Optional[tuple[dict[int, int], list[int]]]:
        """The hidden tiles to search on, or None to guess them (this agent always guesses)."""
        return None

    def _guess(self, view: PlayerView) -> Game:
        """A search copy of the game with the hidden tiles drawn at random, consistent with what is public."""
        hands, boneyard = sample_hidden(view, self.rng)
        return view.determinized(hands, boneyard)

    def _evaluate(self, root: Game, seat: int, action: int) -> float:
        """Play ``action`` then the rollout policy to the end of the hand; value for ``seat``'s side."""
        game = root.fork()
        before = root.scores
        game.step(action)
        if not game.over:
            self._rollout(game)
        side = game.side_of[seat]
        value = zero_sum_share([now - then for now, then in zip(game.scores, before)], side)
        if game.winner is not None:
            value += self.win_bonus * game.rules.target * (1 if game.winner == side else -1)
        return value

    def _rollout(self, game: Game) -> None:
        """Play to the end of the hand (the fork stops there) with the rollout policy."""
        rng = self.rng
        policy = self.rollout
        eps = self.epsilon
        pips = game.tiles.pips
        draw = game.draw_action
        step = game.step
        while not game.over:
            legal = game.legal
            if len(legal) == 1:
                step(legal[0])
                continue
            if policy == "expert":
                step(self._expert_rollout_move(game))
                continue
            if policy == "random" or (policy == "epsilon" and rng.random() < eps):
                step(legal[int(rng.integers(len(legal)))])
                continue
            count_after = game.board.count_after
            best_key = -1
            best = legal[0]
            for action in legal:
                if action == draw:
                    continue
                tile = action >> 2
                count = count_after(tile, action & 3)
                key = (count if count % 5 == 0 else 0) * POINTS_OVER_PIPS + pips[tile]
                if key > best_key:
                    best_key = key
                    best = action
            step(best)

    def _expert_rollout_move(self, game: Game) -> int:
        """The expert rollout's move (as the compiled ``expert_action``): the first in legal order of the
        expert's tied-best placements, so that no random tie-break separates the two engines."""
        view = PlayerView(game, game.current)
        expert = self._rollout_expert
        assert expert is not None, "only an expert rollout on the python engine asks"
        return tied_best(view, lambda actions: expert.evaluate(view, actions))[0]


class PIMCSiftAgent(PIMCAgent):
    """``pimc`` with ``expert`` rollouts and successive elimination (see the module doc): a stronger
    search in about ``pimc``'s think time. The defaults (``samples=80``, ``min_samples=8``, ``z=1.5``,
    ``delta=1``) were picked in ``benchmarks/search_vs_pimc.py`` matches against ``pimc``; every ``pimc``
    parameter can be changed."""

    name = "pimc-sift"

    def __init__(
        self,
        seed: Optional[int] = None,
        samples: int = 80,
        rollout: str = "expert",
        epsilon: float = 0.1,
        win_bonus: float = 1.0,
        prior: Optional[str] = "expert",
        prior_weight: float = 1.0,
        engine: str = "batch",
        min_samples: int = 8,
        z: float = 1.5,
        delta: float = 1.0,
    ) -> None:
        super().__init__(seed, samples=samples, rollout=rollout, epsilon=epsilon, win_bonus=win_bonus, prior=prior,
                         prior_weight=prior_weight, engine=engine, min_samples=min_samples, z=z, delta=delta)


class PIMCNetAgent(PIMCAgent):
    """``pimc`` guided by a trained policy: the same search, with the network's preferences added to its
    prior.

    ``policy`` is a policy agent (default the shipped ``ppo-2p``; ``policy=ppo-4p``, ``ppo-3p`` or
    ``ppo:path=...`` for other games) whose :meth:`~allfives_env.agents.policy.PolicyAgent.evaluate` gives
    each candidate its log-probability under the policy minus the mean over the legal moves;
    ``policy_weight`` (points per nat) puts that in the units of the rollout values. It is added to
    ``pimc``'s own prior (``prior``, default ``expert``, times ``prior_weight``), so ``policy_weight=0`` is
    ``pimc`` itself. The cost over ``pimc`` is one numpy forward pass per searched move.
    """

    name = "pimc-net"

    def __init__(
        self,
        seed: Optional[int] = None,
        samples: int = 200,
        rollout: str = "greedy",
        epsilon: float = 0.1,
        win_bonus: float = 1.0,
        prior: Optional[str] = "expert",
        prior_weight: float = 1.0,
        engine: str = "batch",
        min_samples: int = 0,
        z: float = 2.0,
        delta: float = 0.0,
        policy: str = "ppo-2p",
        policy_weight: float = PIMC_NET_POLICY_WEIGHT,
    ) -> None:
        super().__init__(seed, samples=samples, rollout=rollout, epsilon=epsilon, win_bonus=win_bonus, prior=prior,
                         prior_weight=prior_weight, engine=engine, min_samples=min_samples, z=z, delta=delta)
        self._record_params(policy=policy, policy_weight=policy_weight)  # pimc's __init__ records only its own
        if not math.isfinite(float(policy_weight)) or float(policy_weight) < 0:
            raise ValueError(f"policy_weight={policy_weight!r} is not allowed: give a finite number >= 0")
        from .registry import make_agent

        policy_agent = make_agent(policy, seed=seed)
        if not isinstance(policy_agent, Evaluator):
            raise ValueError(f"policy={policy!r} is not a trained policy agent (try 'ppo-2p' or 'ppo:path=FILE.npz')")
        self._policy = policy_agent
        self.policy_weight = float(policy_weight)

    def _extra_prior_values(self, view: PlayerView, placements: list[int]) -> Optional[dict[int, float]]:
        """``policy_weight`` times the network's log-probability of each placement minus their mean."""
        if not self.policy_weight:
            return None
        net = self._policy.evaluate(view, placements)
        return {a: self.policy_weight * v for a, v in zip(placements, net)}


class OracleAgent(PIMCAgent):
    """The ``pimc`` search run on the true hidden tiles. Reads other hands and the boneyard order:
    analysis only, never a fair opponent."""

    name = "oracle"
    uses_hidden_information = True

    def _guess(self, view: PlayerView) -> Game:
        """The true game (a fork of it)."""
        return _true_game(view).fork()

    def _hidden(self, view: PlayerView) -> Optional[tuple[dict[int, int], list[int]]]:
        """The true other hands (as masks) and the boneyard in draw order."""
        game = _true_game(view)
        tiles = view.tiles
        hands = {s: tiles.mask_of(game.hand(s)) for s in range(view.num_players) if s != view.seat}
        return hands, game.boneyard()


def _true_game(view: PlayerView) -> Game:
    """The game behind an :class:`OracleView`; a plain view is refused."""
    if not isinstance(view, OracleView):
        raise TypeError("the oracle needs an OracleView (the harness gives one to agents with uses_hidden_information)")
    return view.game


def sample_hidden(view: PlayerView, rng: np.random.Generator,
                  tries: int = HIDDEN_TRIES) -> tuple[dict[int, int], list[int]]:
    """Deal the tiles ``view.seat`` cannot see into the other hands and the boneyard at random, so that
    each seat gets its known number of tiles and none showing a value it is known to lack.

    Seats are filled most constrained first, from one shuffle; if a seat cannot be filled the shuffle is
    redrawn, and after ``tries`` failures the void constraints are dropped (they are inferences, and an
    impossible combination means one was too strong). Returns (seat -> hand mask, boneyard list).
    """
    tiles = view.tiles
    seat = view.seat
    n = view.num_players
    unseen = tiles.tiles_of(view.unseen_mask)
    sizes = view.hand_sizes
    pip_bits = tiles.pip_bits
    others = [s for s in range(n) if s != seat]
    voids = view.voids
    allowed = {s: [t for t in unseen if not pip_bits[t] & voids[s]] for s in others}
    order = sorted(others, key=lambda s: len(allowed[s]) - sizes[s])
    for attempt in range(tries + 1):
        relax = attempt == tries
        pool = [unseen[i] for i in rng.permutation(len(unseen)).tolist()]
        hands: dict[int, int] = {}
        ok = True
        for s in order:
            need = sizes[s]
            mask = 0
            void = 0 if relax else voids[s]
            rest = []
            for t in pool:
                if need and not pip_bits[t] & void:
                    mask |= 1 << t
                    need -= 1
                else:
                    rest.append(t)
            if need:
                ok = False
                break
            hands[s] = mask
            pool = rest
        if ok:
            return hands, pool
    raise RuntimeError("could not deal the hidden tiles: hand sizes exceed the unseen tiles")  # pragma: no cover
