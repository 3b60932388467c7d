"""Opponents for a whole batch of games: the batch agents and policy files, each choosing for every game at
once, and the per-game mixture they are drawn from.

The vector env (:mod:`allfives_env.vector`) seats these in the games of one
:class:`~allfives_env.batch.BatchGame`: :class:`OpponentPool` keeps one batch opponent per distinct agent
spec and each game's mixture weights over them. An agent spec has a batch opponent when the agent registry
holds a batch twin for its agent (:func:`~allfives_env.agents.registry.has_batch_twin`): the compiled
``random``, ``greedy`` and ``expert``, and policy files (``ppo:path=FILE.npz``, a shipped policy such as
``ppo-2p``) played greedily by batched forward passes (:class:`BatchPolicyAgent`, the twin
:data:`POLICY_TWIN` those agents are registered with); any other spec is refused with the reason
(:func:`batch_spec_problem`).

A spec's parameters are checked by the registry's one rule (:func:`~allfives_env.agents.registry.
check_agent_spec`) before anything else, and a policy file is opened by the registry's own agent, so a spec
the single-seat env refuses is refused here with the same message.

A pool changes only once everything it needs is built: a refused :meth:`OpponentPool.ids` (a policy file
that cannot be read) leaves its agents, its weights and the generator it draws seeds from as they were.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any, Optional, Sequence

import numpy as np

from .agents.policy import PolicyAgent
from .agents.registry import AgentError, BatchTwin, batch_agent_names, batch_twin, check_agent_spec, make_agent
from .batch import BatchGame
from .batch.observe import BatchObserver
from .core.errors import AllFivesError, short_repr
from .policy import NumpyPolicy

__all__ = ["BatchPolicyAgent", "OpponentPool", "POLICY_TWIN", "STREAM_LIMIT", "batch_spec_problem",
           "check_batch_specs", "make_batch_opponent"]

STREAM_LIMIT = 2**62  # seeds of the batch engine and the batch agents are drawn below this


def _batch_spec(spec: Any) -> tuple[str, dict[str, Any], BatchTwin]:
    """The name, checked parameters and batch twin of an opponent spec that can play in a batch of games,
    or an :class:`AgentError` saying why it cannot: the registry's parameter rule first, then whether the
    registry has a batch twin for it, then what the twin itself refuses. Nothing is built or read."""
    name, params = check_agent_spec(spec)
    twin = batch_twin(name)
    if twin is None:
        raise AgentError(f"opponent {short_repr(spec)} has no batch implementation; the batch engine plays the agents "
                         f"registered with a batch twin: {', '.join(batch_agent_names())}; use the one-game env "
                         "AllFives-v0 (vec_env: dummy or subproc in a training config) for other agents")
    problem = twin.problem(name, params) if twin.problem is not None else None
    if problem is not None:
        raise AgentError(f"opponent {short_repr(spec)}: {problem}")
    return name, params, twin


def batch_spec_problem(spec: Any) -> Optional[str]:
    """Why an opponent spec cannot play in a batch of games (the vector env), or None when it can."""
    try:
        _batch_spec(spec)
    except AgentError as exc:
        return str(exc)
    return None


class BatchPolicyAgent:
    """A policy played in every game at once: one forward pass over the observations of the seats to
    act, the highest legal logit (the first of equal maxima, as :class:`~allfives_env.agents.PolicyAgent`).
    Takes the policy loaded (by the registry's agent, :func:`make_batch_opponent`), so that a file is read
    once, when the opponent joins, and never again while it plays.

    Its moves are checked when applied (no ``legal_by_construction``): the argmax of a row whose legal
    logits are all ``-inf`` would name action 0, legal or not."""

    def __init__(self, policy: NumpyPolicy, rules: Any, n: int) -> None:
        self.policy = policy
        self.policy.check_rules(rules)
        self.observer = BatchObserver(rules, self.policy.action_features, self.policy.obs_version)
        #: a version-2 policy reads the turn history: the batch it plays in must keep it (BatchGame(history=True))
        self.needs_history = self.policy.obs_version >= 2
        self.players = rules.num_players
        self.obs = np.zeros((n, self.observer.size), dtype=np.float32)
        self.mask = np.zeros((n, self.policy.num_actions), dtype=np.bool_)

    def reset(self, seed: int) -> None:
        """Nothing to restart: the policy plays the argmax, with no random stream (the pool reseeds every
        opponent of a new batch alike)."""

    def act(self, batch: BatchGame, where: Optional[np.ndarray] = None) -> np.ndarray:
        """The chosen action of every game in ``where`` (default: every live game); -1 elsewhere."""
        current = batch.current
        live = current >= 0
        chosen = live if where is None else (np.asarray(where, dtype=bool) & live)
        # other games are observed from a seat not to act: no action features computed for them
        seats = np.where(chosen, current, (np.maximum(current, 0) + 1) % self.players)
        obs = self.observer.observe(batch, seats, out=self.obs)
        batch.legal_mask(out=self.mask)
        rows = np.flatnonzero(chosen)
        out = np.full(batch.n, -1, dtype=np.int64)
        if len(rows):
            masked = np.where(self.mask[rows], self.policy.forward(obs[rows]), -np.inf)
            out[rows] = np.argmax(masked, axis=1)
        return out


def check_batch_specs(specs: Sequence[Any]) -> list[str]:
    """The specs as given once each has a batch implementation (so each is a spec string: an Agent object
    has none), or an :class:`AgentError` for the first that has not."""
    for spec in specs:
        _batch_spec(spec)
    return list(specs)


def make_batch_opponent(spec: str, rules: Any, n: int, seed: int) -> Any:
    """The batch opponent of an agent spec, built by the batch twin the registry holds for it (or an
    :class:`~allfives_env.agents.registry.AgentError` saying why the spec has none). A twin's own typed
    error passes as it is; a plain ``TypeError``/``ValueError`` from a registered twin becomes an
    :class:`AgentError` naming the agent, as :func:`~allfives_env.agents.registry.make_agent` does."""
    name, params, twin = _batch_spec(spec)
    try:
        return twin.build(name, params, rules, n, seed)
    except AllFivesError:
        raise
    except (TypeError, ValueError) as exc:
        raise AgentError(f"the batch twin of agent {name!r} with {short_repr(params)}: {exc}") from None


def _policy_problem(name: str, params: dict[str, Any]) -> Optional[str]:
    """What the batch twin of a policy agent cannot play: sampling (it plays the argmax)."""
    if params.get("sample", False) is not False:
        return ("the batch engine plays policy files greedily (the argmax, as league snapshots play); leave out "
                "sample=true, or use the one-game env AllFives-v0 (vec_env: dummy or subproc in a training config)")
    return None


def _build_policy_twin(name: str, params: dict[str, Any], rules: Any, n: int, seed: int) -> BatchPolicyAgent:
    """A :class:`BatchPolicyAgent` playing the policy of ``ppo`` or a shipped policy: the file is opened by
    the registry's agent of that name, which checks what the single-seat env checks (the path, the
    temperature, the file) with the same messages. ``seed`` is not needed: the argmax draws nothing. An agent
    registered with this twin that plays no policy file is refused: there is no policy to batch."""
    agent = make_agent(name, **params)
    if not isinstance(agent, PolicyAgent):
        raise AgentError(f"agent {name!r} is registered with the policy batch twin but is a "
                         f"{type(agent).__name__}, not a PolicyAgent: register it without batch=, or make it a "
                         "PolicyAgent")
    return BatchPolicyAgent(agent.policy, rules, n)


#: The batch twin of ``ppo`` and the shipped policies, named on their registration lines (allfives_env.agents).
POLICY_TWIN = BatchTwin(_build_policy_twin, _policy_problem)


def takes_where(agent: Any) -> bool:
    """Whether ``agent.act`` takes ``where`` (a bool (n,) mask of the games to compute), so that it spends
    nothing on the games where another agent, or the learner, is to act."""
    try:
        return "where" in inspect.signature(agent.act).parameters
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return False


class OpponentPool:
    """The opponents' batch agents, one per distinct spec, and each game's mixture weights over them."""

    def __init__(self, rules: Any, n: int) -> None:
        self.rules = rules
        self.n = n
        self.specs: list[str] = []
        self.agents: list[Any] = []
        self.where: list[bool] = []
        self.legal_by_construction: list[bool] = []
        self.weights = np.zeros((n, 0))
        self.rng = np.random.default_rng(0)

    @property
    def needs_history(self) -> bool:
        """Whether an agent of the pool reads the batch's turn history (a version-2 policy)."""
        return any(getattr(agent, "needs_history", False) is True for agent in self.agents if agent is not None)

    def ids(self, specs: Sequence[str]) -> list[int]:
        """The pool index of each spec, building the agents not yet in the pool. Every new agent is built
        (its seed drawn from a copy of the generator) before the pool or its generator changes, so a spec
        refused here changes nothing."""
        rng = copy.deepcopy(self.rng)
        built: dict[str, Any] = {}
        for spec in specs:
            k = self.specs.index(spec) if spec in self.specs else -1
            if spec not in built and (k < 0 or self.agents[k] is None):
                built[spec] = make_batch_opponent(spec, self.rules, self.n, int(rng.integers(STREAM_LIMIT)))
        self.rng.bit_generator.state = rng.bit_generator.state  # in place: the env may share this generator
        for spec, agent in built.items():
            if spec not in self.specs:
                self.specs.append(spec)
                self.agents.append(None)
                self.where.append(False)
                self.legal_by_construction.append(False)
                self.weights = np.concatenate([self.weights, np.zeros((self.n, 1))], axis=1)
            k = self.specs.index(spec)
            self.agents[k], self.where[k] = agent, takes_where(agent)
            self.legal_by_construction[k] = getattr(agent, "legal_by_construction", False) is True
        return [self.specs.index(spec) for spec in specs]

    def set_mixture(self, specs: Sequence[str], weights: np.ndarray, games: np.ndarray) -> None:
        """Games ``games`` draw their opponents from ``specs`` with probabilities ``weights`` from now on."""
        ids = self.ids(specs)
        rows = np.zeros((len(games), len(self.specs)))
        for k, w in zip(ids, weights):
            rows[:, k] += w
        self.weights[games] = rows

    def reseed(self, rng: np.random.Generator) -> None:
        """Restart every agent of the pool with a seed drawn from ``rng`` (a new batch). Nothing is built or
        read again, so this cannot fail: a policy file that has gone since its opponent joined plays on
        from memory, as the single-seat env's agents do."""
        self.rng = rng
        for agent in self.agents:
            if agent is not None:
                agent.reset(int(rng.integers(STREAM_LIMIT)))

    def prune(self, seated: np.ndarray, keep: Sequence[int]) -> None:
        """Drop the agents no game draws any more and none has seated (``keep``: the partner's)."""
        used = set(np.unique(seated[seated >= 0]).tolist()) | set(keep)
        for k in range(len(self.specs)):
            if k not in used and not self.weights[:, k].any():
                self.agents[k] = None

    def act(self, k: int, batch: BatchGame, where: np.ndarray) -> np.ndarray:
        """Agent ``k``'s actions; only the games in ``where`` are read."""
        agent = self.agents[k]
        if self.where[k]:
            return agent.act(batch, where)
        # An agent without ``where`` chooses in every live game, and every game is live here (most of them at
        # the learner's turn, or another agent's): the games outside ``where`` are marked over while it
        # chooses, so it skips them as it skips finished games (the expert's analysis is most of a step).
        over = batch.S["over"]
        saved = over.copy()
        over[~where] = 1
        try:
            return agent.act(batch)
        finally:
            over[:] = saved
