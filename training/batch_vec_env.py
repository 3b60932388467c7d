"""A stable-baselines3 ``VecEnv`` over one compiled batch of games: the learner holds one seat in each of
``n`` games of a :class:`~allfives_env.batch.BatchGame`, and batch agents play every other seat.

``vec_env: batch`` in a training config (issue 12). It is the single-seat env
(:class:`~allfives_env.single_seat.AllFivesSingleSeatEnv`) for ``n`` games at once, without a process, a
pipe or a Python loop per game: one :meth:`step` applies the learner's ``n`` actions, then steps the
opponents in lockstep (each opponent kind chooses for all its games in one compiled call) until every game
is back at the learner's turn or over, then computes the rewards, restarts the finished games and
observes all games with :class:`~allfives_env.batch.observe.BatchObserver`.

The same as the single-seat env, by construction (the arguments are checked by the same plain checker,
:func:`~allfives_env.seat_setup.seat_setup`, without building an env or an agent):

* the observation (the flat vector, bit for bit), the action space and ``action_masks()``;
* the learner's seat (``seat``, or random per episode), the opponents drawn per seat and per episode from
  the mixture (``opponents`` / ``opponent_weights``; ``partner`` for a partnership's partner seat);
* the rewards: ``points`` = the side's score change minus the mean change of the other sides over the
  target, summed since the learner's previous action (what the opponents scored before its first move
  counts at its first step); ``win`` = +1 / -1 / 0 at the end (a one-hand episode's winner is the unique
  top gainer); ``terminated`` / ``truncated`` (``max_hands``) as there;
* the infos (``scores``, ``seat``, ``hand``) plus SB3's ``terminal_observation``, ``TimeLimit.truncated``
  and ``Monitor``'s ``episode`` (``r``, ``l``, ``t``) at the end of an episode;
* ``env_method("set_opponents", specs, weights)`` (the league): the new mixture from each game's next
  episode on.

What differs, and why: opponents are the batch agents (``random``, ``greedy``, ``expert``, with their own
random streams, not the per-episode reseeded ``Agent`` objects) and policy files (``ppo:path=...``,
``ppo-2p``, played greedily, as league snapshots are, by batched forward passes); any other agent spec
(``pimc``, ``ppo:...,sample=true``) is refused (:func:`batch_spec_problem`). An illegal action raises
:class:`~allfives_env.core.errors.IllegalActionError` (as ``illegal_action="raise"``): a masked learner never
takes one. A game that ends before the learner's first decision (possible in one-hand episodes) is dealt
again at once instead of handing the learner a finished game. Games are dealt by the batch engine's
streams (seeded from ``seed``), so the deals differ from the single-seat env's for the same seed.
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Optional, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from allfives_env.agents.registry import AgentError, parse_agent_spec
from allfives_env.batch import BatchGame
from allfives_env.batch.agents import BATCH_AGENTS, make_batch_agent
from allfives_env.batch.observe import BatchObserver
from allfives_env.core.errors import RulesError, short_repr
from allfives_env.core.outcome import side_rewards
from allfives_env.core.seeds import MAX_SEED, check_seed
from allfives_env.encoding import ObservationEncoder
from allfives_env.policy import SHIPPED_POLICIES, load_policy, shipped_policy_path
from allfives_env.seat_setup import opponent_mixture, seat_setup

__all__ = ["BATCH_AGENTS", "BatchPolicyAgent", "BatchSingleSeatVecEnv", "batch_spec_problem", "make_batch_opponent"]

_STREAM_LIMIT = 2**62  # seeds of the batch engine and the batch agents are drawn below this


def batch_spec_problem(spec: Any) -> Optional[str]:
    """Why an opponent spec cannot play in the batch vec env, or None when it can."""
    try:
        name, params = parse_agent_spec(spec)
    except AgentError as exc:
        return str(exc)
    if name in BATCH_AGENTS:
        return None
    if name == "ppo" or name in SHIPPED_POLICIES:
        if params.get("sample", False) is not False:
            return (f"opponent {short_repr(spec)}: vec_env: batch plays policy files greedily (the argmax, as "
                    "league snapshots play); leave out sample=true, or use vec_env: batched")
        return None
    return (f"opponent {short_repr(spec)} has no batch implementation; vec_env: batch plays "
            f"{', '.join(BATCH_AGENTS)} and policy files (ppo:path=FILE.npz, {', '.join(sorted(SHIPPED_POLICIES))}): "
            "use vec_env: batched for other agents")


class BatchPolicyAgent:
    """A policy file played in every game at once: one forward pass over the observations of the seats to
    act, the highest legal logit (the first of equal maxima, as :class:`~allfives_env.agents.PolicyAgent`)."""

    def __init__(self, path: str, rules: Any, n: int) -> None:
        self.policy = load_policy(path)
        self.policy.check_rules(rules)
        self.observer = BatchObserver(rules, self.policy.action_features)
        self.players = rules.num_players
        self.obs = np.zeros((n, self.observer.size), dtype=np.float32)
        self.mask = np.zeros((n, self.policy.num_actions), dtype=np.bool_)

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


def _check_batch_specs(specs: Sequence[Any]) -> None:
    """An :class:`AgentError` for the first spec that has no batch implementation."""
    for spec in specs:
        problem = batch_spec_problem(spec)
        if problem is not None:
            raise AgentError(problem)


def make_batch_opponent(spec: str, rules: Any, n: int, seed: int) -> Any:
    """The batch opponent of an agent spec: a batch agent or a :class:`BatchPolicyAgent` (or an
    :class:`~allfives_env.agents.registry.AgentError` saying why the spec has none)."""
    problem = batch_spec_problem(spec)
    if problem is not None:
        raise AgentError(problem)
    name, params = parse_agent_spec(spec)
    if name in BATCH_AGENTS:
        return make_batch_agent(name, seed, n, **params)
    path = params.get("path") if name == "ppo" else str(shipped_policy_path(name))
    if not isinstance(path, str):
        raise AgentError(f"opponent {short_repr(spec)}: give the policy file as path=FILE.npz")
    return BatchPolicyAgent(path, rules, n)


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
        self.weights = np.zeros((n, 0))
        self.rng = np.random.default_rng(0)

    def ids(self, specs: Sequence[str]) -> list[int]:
        """The pool index of each spec, building the agents not yet in the pool."""
        out = []
        for spec in specs:
            if spec in self.specs and self.agents[self.specs.index(spec)] is not None:
                out.append(self.specs.index(spec))
                continue
            agent = make_batch_opponent(spec, self.rules, self.n, int(self.rng.integers(_STREAM_LIMIT)))
            if spec in self.specs:
                k = self.specs.index(spec)
                self.agents[k], self.where[k] = agent, takes_where(agent)
            else:
                self.specs.append(spec)
                self.agents.append(agent)
                self.where.append(takes_where(agent))
                self.weights = np.concatenate([self.weights, np.zeros((self.n, 1))], axis=1)
            out.append(self.specs.index(spec))
        return out

    def set_mixture(self, specs: Sequence[str], weights: np.ndarray, games: np.ndarray) -> None:
        """Games ``games`` draw their opponents from ``specs`` with probabilities ``weights`` from now on."""
        ids = self.ids(specs)
        rows = np.zeros((len(games), len(self.specs)))
        for k, w in zip(ids, weights):
            rows[:, k] += w
        self.weights[games] = rows

    def reseed(self, rng: np.random.Generator) -> None:
        """Build every agent of the pool again with seeds drawn from ``rng`` (a new batch)."""
        self.rng = rng
        for k, spec in enumerate(self.specs):
            if self.agents[k] is not None:
                self.agents[k] = make_batch_opponent(spec, self.rules, self.n, int(rng.integers(_STREAM_LIMIT)))

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


class BatchSingleSeatVecEnv(VecEnv):
    """The single-seat env for ``n_envs`` games of one :class:`~allfives_env.batch.BatchGame` (see the
    module docstring). Takes the single-seat env's arguments (``opponents``, ``opponent_weights``,
    ``partner``, ``seat``, ``reward``, ``episode``, ``action_features``, the rules) plus ``record`` (keep
    every game's decisions, so ``batch.replay(i)`` can rebuild it; off for speed)."""

    def __init__(self, n_envs: int, opponents: Sequence[str] = ("random",),
                 opponent_weights: Optional[Sequence[float]] = None, partner: Optional[str] = None,
                 seat: Optional[int] = None, reward: str = "win", episode: str = "game",
                 action_features: bool = False, rules: Any = None, record: bool = False, **options: Any) -> None:
        setup = seat_setup(opponents, opponent_weights, partner, seat, reward, episode, action_features, rules, options)
        if isinstance(n_envs, (bool, np.bool_)) or not isinstance(n_envs, (int, np.integer)) or n_envs < 1:
            raise RulesError(f"n_envs={short_repr(n_envs)} is not allowed: give the number of games, an integer >= 1")
        _check_batch_specs(list(setup.opponents) + ([] if partner is None else [partner]))
        n = int(n_envs)
        self.rules = rules = setup.rules
        self.reward_mode, self.episode, self.fixed_seat = setup.reward, setup.episode, setup.seat
        self.partner = partner
        self.record = bool(record)
        self.render_mode = None
        self.observer = BatchObserver(rules, setup.action_features)
        self.players = rules.num_players
        self.sides = rules.num_sides
        self.side_of_seat = np.array([rules.side_of(s) for s in range(self.players)], dtype=np.int64)
        self.pool = OpponentPool(rules, n)
        self.pool.set_mixture(setup.opponents, setup.weights, np.arange(n))
        self.opponent_specs, self.opponent_weights = list(setup.opponents), list(setup.weights)
        self.partner_id = None if partner is None else self.pool.ids([partner])[0]
        self.batch: Optional[BatchGame] = None
        self.rng: Optional[np.random.Generator] = None
        self.seats = np.zeros(n, dtype=np.int64)
        self.seated = np.full((n, self.players), -1, dtype=np.int64)
        self.last_scores = np.zeros((n, self.sides), dtype=np.int64)
        self.start_scores = np.zeros((n, self.sides), dtype=np.int64)
        self.episode_return = np.zeros(n)
        self.episode_length = np.zeros(n, dtype=np.int64)
        encoder = ObservationEncoder(rules, setup.action_features)
        self.masks = np.zeros((n, encoder.num_actions), dtype=np.bool_)
        self.rows = np.arange(n)
        self.actions: Optional[np.ndarray] = None
        self.t_start = time.time()
        super().__init__(n, spaces.Box(encoder.low, encoder.high, dtype=np.float32), spaces.Discrete(encoder.num_actions))

    # -------------------------------------------------------------- episodes
    def reset(self) -> np.ndarray:
        """Deal ``n`` new games (seeded by :meth:`seed` when it was called, else from the previous
        stream, or fresh entropy the first time); the learner's first observations."""
        if any(self._options):
            raise RulesError("vec_env: batch deals every game from the engine's streams; reset options (fixed "
                             "hands, boneyard, scores) are not supported: use the single-seat env for them")
        seed = self._seeds[0]
        if seed is None:
            seed = int(self.rng.integers(MAX_SEED)) if self.rng is not None else \
                int(np.random.SeedSequence().entropy % MAX_SEED)
        seed = check_seed(seed)
        self.rng = np.random.default_rng(seed)
        self.batch = BatchGame(self.rules, self.num_envs, seed=int(self.rng.integers(_STREAM_LIMIT)),
                               stop_after_hand=self.episode == "hand", record=self.record)
        self.pool.reseed(self.rng)
        self._deal(self.rows)
        self.episode_return[:] = 0.0
        self.episode_length[:] = 0
        self._play_opponents()
        self._redeal_finished()
        self.reset_infos = self._infos()
        self._reset_seeds()
        self._reset_options()
        return self._observe()

    def _deal(self, games: np.ndarray) -> None:
        """The learner's seat and the opponents of each (re)started game, drawn from its mixture."""
        m, P, rng = len(games), self.players, self.rng
        seats = np.full(m, self.fixed_seat, dtype=np.int64) if self.fixed_seat is not None else \
            rng.integers(P, size=m)
        weights = self.pool.weights[games]
        cum = np.cumsum(weights, axis=1)
        u = rng.random((m, P)) * cum[:, -1:]
        who = (u[:, :, None] >= cum[:, None, :]).sum(axis=2)
        last = weights.shape[1] - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)
        who = np.minimum(who, last[:, None])  # u rounded up to the total: the last drawable agent
        at = np.arange(m)
        if self.partner_id is not None:
            who[at, (seats + 2) % P] = self.partner_id
        who[at, seats] = -1
        self.seated[games] = who
        self.seats[games] = seats
        scores = self.batch.scores[games]
        self.last_scores[games] = scores
        self.start_scores[games] = scores

    def _play_opponents(self) -> None:
        """Step the opponents of every game, all kinds in lockstep, until each game is at the learner's
        turn or over."""
        batch, rows = self.batch, self.rows
        while True:
            current = batch.current
            need = (current >= 0) & (current != self.seats)
            if not need.any():
                return
            ids = np.where(need, self.seated[rows, current], -1)
            actions = np.full(self.num_envs, -1, dtype=np.int64)
            for k in np.flatnonzero(np.bincount(ids[need])).tolist():
                chosen = ids == k
                actions[chosen] = self.pool.act(k, batch, chosen)[chosen]
            batch.step(actions)

    def _redeal_finished(self) -> None:
        """Deal new episodes to the finished games until every game waits for the learner (a game can end
        before the learner's first decision in a one-hand episode)."""
        while True:
            restarted = self.batch.reset_done()
            if not restarted.any():
                return
            self._deal(np.flatnonzero(restarted))
            self._play_opponents()

    # -------------------------------------------------------------- stepping
    def step_async(self, actions: np.ndarray) -> None:
        """Keep the learner's actions for :meth:`step_wait`."""
        self.actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """Play the learner's actions and the opponents' replies; rewards, auto-reset, observations."""
        batch = self.batch
        if batch is None:
            raise RulesError("call reset() before step()")
        batch.step(self.actions.reshape(-1))
        self._play_opponents()
        done = batch.done
        rewards = self._rewards(done)
        self.episode_return += rewards
        self.episode_length += 1
        infos = self._infos()
        if done.any():
            self._finish(np.flatnonzero(done), infos)
        return self._observe(), rewards.astype(np.float32), done, infos

    def _rewards(self, done: np.ndarray) -> np.ndarray:
        """The learner's reward in every game (float64), as the single-seat env computes it."""
        batch, rows = self.batch, self.rows
        scores = batch.scores.astype(np.int64)
        mine_side = self.side_of_seat[self.seats]
        if self.reward_mode == "points":
            gains = scores - self.last_scores
            self.last_scores = scores
            return side_rewards("points", gains, scale=self.rules.target)[rows, mine_side]
        if not done.any():
            return np.zeros(self.num_envs)
        results = side_rewards("win", scores - self.start_scores, done, batch.winner, hand=self.episode == "hand")
        return results[rows, mine_side]

    def _finish(self, games: np.ndarray, infos: list[dict]) -> None:
        """The end of the episodes of ``games``: terminal observations, SB3's and Monitor's infos, new
        deals."""
        # the other games are observed from a seat not to act: no action features are computed for them
        seats = self.seats.copy()
        live = np.ones(self.num_envs, dtype=bool)
        live[games] = False
        seats[live] = (seats[live] + 1) % self.players
        final = self.observer.observe(self.batch, seats)
        truncated = self.batch.truncated
        elapsed = round(time.time() - self.t_start, 6)
        for i in games.tolist():
            info = infos[i]
            info["terminal_observation"] = final[i]
            info["TimeLimit.truncated"] = bool(truncated[i])
            info["episode"] = {"r": round(float(self.episode_return[i]), 6), "l": int(self.episode_length[i]),
                               "t": elapsed}
        self.episode_return[games] = 0.0
        self.episode_length[games] = 0
        self._redeal_finished()
        fresh = self._infos()
        for i in games.tolist():
            self.reset_infos[i] = fresh[i]

    def _observe(self) -> np.ndarray:
        """The learner's observation of every game (a new array: SB3 keeps the previous one), and the
        action masks of the next step."""
        self.batch.legal_mask(out=self.masks)
        return self.observer.observe(self.batch, self.seats)

    def _infos(self) -> list[dict]:
        """The single-seat env's info of every game, with SB3's ``TimeLimit.truncated``."""
        batch = self.batch
        return [{"scores": s, "seat": seat, "hand": h, "TimeLimit.truncated": False}
                for s, seat, h in zip(batch.scores.tolist(), self.seats.tolist(), batch.hand_number.tolist())]

    def action_masks(self) -> np.ndarray:
        """bool (n, num_actions): the learner's legal actions in every game."""
        return self.masks.copy()

    # -------------------------------------------------------------- the league
    def set_opponents(self, opponents: Sequence[str], weights: Sequence[float], indices: VecEnvIndices = None) -> None:
        """Draw the opponents of the games ``indices`` (default all) from this mixture from their next
        episode on; checked as the single-seat env checks it, and every spec must have a batch agent."""
        specs, mixture = opponent_mixture(opponents, weights)
        _check_batch_specs(specs)
        games = np.asarray(list(self._get_indices(indices)), dtype=np.int64)
        self.pool.set_mixture(specs, mixture, games)
        if len(games) == self.num_envs:
            self.opponent_specs, self.opponent_weights = list(specs), list(mixture)
        self.pool.prune(self.seated, [] if self.partner_id is None else [self.partner_id])

    def seated_specs(self, i: int) -> list[Optional[str]]:
        """The spec playing each seat of game ``i`` in its current episode (None: the learner's seat)."""
        return [None if k < 0 else self.pool.specs[k] for k in self.seated[i].tolist()]

    # -------------------------------------------------------------- SB3's VecEnv forwarding
    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """``action_masks`` (one mask per game), ``set_opponents`` (for the games ``indices``, one None per
        game) and ``seated_specs``; the games share one engine, so there is no per-game env object."""
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self.masks[idx])
        if method_name == "set_opponents":
            self.set_opponents(*method_args, indices=idx, **method_kwargs)
            return [None] * len(idx)
        if method_name == "seated_specs":
            return [self.seated_specs(i) for i in idx]
        raise AttributeError(f"the batch vec env has no per-game method {method_name!r}: it answers action_masks, "
                             "set_opponents and seated_specs")

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute per game: ``seat`` (each game's learner seat), else the vec env's own attribute
        (shared by every game: ``rules``, ``reward_mode``, ``render_mode``, ``action_masks``, ...)."""
        idx = list(self._get_indices(indices))
        if attr_name == "seat":
            return self.seats[idx].tolist()
        if attr_name.startswith("_") or not hasattr(self, attr_name):
            raise AttributeError(f"the batch vec env has no attribute {attr_name!r}")
        value = getattr(self, attr_name)
        return [value] * len(idx)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute shared by every game (``indices`` must name them all)."""
        if len(list(self._get_indices(indices))) != self.num_envs:
            raise AttributeError("the games of the batch vec env share their attributes: set_attr for all of them")
        if attr_name.startswith("_") or not hasattr(self, attr_name):
            raise AttributeError(f"the batch vec env has no attribute {attr_name!r}")
        setattr(self, attr_name, value)

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """No game is a wrapped gymnasium env (the episode statistics are in the infos, as Monitor's)."""
        return [False] * len(list(self._get_indices(indices)))

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        """No rendering: one None per game."""
        return [None] * self.num_envs

    def close(self) -> None:
        """Nothing to release: no process, no file."""
        self.batch = None
