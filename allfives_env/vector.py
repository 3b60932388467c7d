"""``AllFives-v0`` as a Gymnasium vector env on the compiled batch engine: ``num_envs`` games in lockstep.

``gymnasium.make_vec("AllFives-v0", num_envs=4096, vectorization_mode="vector_entry_point", **kwargs)``
returns an :class:`AllFivesVectorEnv`: the single-seat env (:class:`~allfives_env.single_seat.
AllFivesSingleSeatEnv`) for every game of one :class:`~allfives_env.batch.BatchGame`, without a process, a
pipe or a Python loop per game. One :meth:`~AllFivesVectorEnv.step` applies the learner's actions, lets
the opponents of every game reply in lockstep (each opponent kind chooses for all its games in one compiled
call) until every game is back at the learner's turn or over, then computes the rewards and observes.

The same as the single-seat env, by construction: the arguments are checked by the same plain checker
(:func:`~allfives_env.seat_setup.seat_setup`), and a test plays the vector env's games again, deal for deal
and move for move, in the single-seat env and compares what both return:

* the observation (bit for bit, ``action_features`` included), the action space and the masks;
* the learner's seat (``seat``, or random per episode), the opponents drawn per seat and per episode from
  the mixture (``opponents`` / ``opponent_weights``; ``partner`` for a partnership's partner seat);
* the rewards (:func:`~allfives_env.core.outcome.side_rewards`): ``points`` = the side's score change minus
  the mean change of the other sides over the target since the learner's previous action (what the
  opponents scored before its first move counts at its first step); ``win`` = +1 / -1 / 0 at the end;
  ``terminated`` / ``truncated`` (the ``max_hands`` cap) as there;
* the infos, as Gymnasium's vector infos (a ``(num_envs, ...)`` array per key and a ``_key`` mask):
  ``action_mask`` (bool, the legal actions: also :meth:`~AllFivesVectorEnv.action_masks`, which
  MaskablePPO reads), ``seat``, ``scores`` and ``hand``.

Gymnasium 1.x autoreset: ``autoreset_mode="next_step"`` (Gymnasium's default: the step after an episode
ends starts the next one, ignores that game's action and returns reward 0) or ``"same_step"`` (the next
episode starts at once; the last observation and info are in ``info["final_obs"]`` / ``info["final_info"]``,
as stable-baselines3 expects). ``reset(seed=...)`` deals every game from that seed; ``reset()`` deals a new
batch from the env's own generator (fresh entropy the first time).

What differs from the single-seat env, and why: the opponents are batch opponents
(:mod:`allfives_env.batch_opponents`: the agents the registry holds a batch twin for, such as ``random``,
``greedy``, ``expert`` and greedy policy files), each with its own random stream; any other agent spec is
refused with an :class:`AgentError` that lists the agents with a batch twin.
An illegal action raises :class:`IllegalActionError` naming the game and its legal actions, and nothing is
applied (a masked learner never takes one). A game that ends before the learner's first decision (possible
in one-hand episodes) is dealt again at once. The deals come from the batch engine's streams, so they
differ from the single-seat env's for the same seed.
"""

from __future__ import annotations

import copy
import itertools
import secrets
from collections.abc import Iterable
from typing import Any, Optional, Sequence, Union

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from .batch import BatchGame
from .batch.checks import MAX_GAMES, integer_values
from .batch.engine import available_memory, memory_needed as batch_memory_needed
from .batch.observe import BatchObserver
from .batch_opponents import STREAM_LIMIT, OpponentPool, check_batch_specs
from .core.actions import describe_action, describe_legal
from .core.errors import AgentError, BatchError, IllegalActionError, NotResetError, SeedError, short_repr
from .core.outcome import side_rewards
from .core.seeds import MAX_SEED, check_seed
from .core.values import is_integer
from .encoding import ObservationEncoder
from .seat_setup import opponent_mixture, seat_setup

__all__ = ["AUTORESET_MODES", "AllFivesVectorEnv", "memory_needed"]

#: The autoreset modes the vector env plays, by the names ``make_vec`` users pass.
AUTORESET_MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}


def memory_needed(rules: Any, num_envs: int, action_features: bool = False, record: bool = False) -> int:
    """Bytes a vector env of ``num_envs`` games under ``rules`` holds: the batch engine's games
    (:func:`~allfives_env.batch.engine.memory_needed`) and, per observation entry of every game, the
    observation space's bounds (Gymnasium's ``Box`` keeps ``low`` and ``high`` in float32 and a bool array
    of each bounded side: 10 bytes) and two float32 observation arrays (a step's, and ``same_step``'s final
    ones), plus two bool legal masks. The observation is what grows with the rules (4 players, double-12
    and action features: 4,961 floats a game), so it is what the check must count before it is built.
    Policy opponents add one observation buffer each, which is not counted."""
    return int(num_envs) * _bytes_per_game(rules, ObservationEncoder(rules, action_features), record)


def _bytes_per_game(rules: Any, encoder: ObservationEncoder, record: bool) -> int:
    """One game's share of :func:`memory_needed`, from the encoder the env builds anyway."""
    return batch_memory_needed(rules, 1, record) + 18 * encoder.size + 2 * encoder.num_actions


def check_memory(rules: Any, encoder: ObservationEncoder, num_envs: int, record: bool) -> None:
    """A :class:`BatchError` naming the memory ``num_envs`` games need and a ``num_envs`` that fits, before
    anything of that size is allocated (a batch too large for the machine would otherwise fail with
    numpy's raw ``MemoryError`` half-built, or swap)."""
    available = available_memory()
    per_game = _bytes_per_game(rules, encoder, record)
    needed = num_envs * per_game
    if available is None or needed <= available:
        return
    fits = min(available // per_game, MAX_GAMES)
    advice = f"use num_envs={fits} or fewer" if fits else "not even one game fits: free some memory"
    raise BatchError(f"num_envs={num_envs} needs about {needed / 2**30:.1f} GiB ({per_game:,} bytes a game: the "
                     f"observations and their bounds in the observation space, and the games), more than the "
                     f"{available / 2**30:.1f} GiB of memory available: {advice}")


def check_autoreset_mode(value: Any) -> AutoresetMode:
    """``value`` (a name or Gymnasium's enum) as the enum, or a :class:`BatchError` naming the choices."""
    for name, mode in AUTORESET_MODES.items():
        if value == name or value is mode:
            return mode
    raise BatchError(f"autoreset_mode={short_repr(value)} is not allowed: choose 'next_step' (Gymnasium's default) "
                     "or 'same_step' (the final observation in the info, as stable-baselines3 reads it)")


def deal_batch(rules: Any, num_envs: int, seed: Any, options: Any, rng: Optional[np.random.Generator], *,
               episode: str, record: bool, env: str, fixed: str,
               history: bool = False) -> tuple[np.random.Generator, BatchGame]:
    """The new generator and batch of a batch env's ``reset(seed=..., options=...)``, the part both batch envs
    share: ``seed`` checked (one integer for the whole batch: game ``i``'s deals depend on it and ``i`` only),
    else drawn from a copy of the env's generator ``rng`` (fresh OS entropy the first time), so that a refused
    reset (options, a bad seed, a batch too large for memory) leaves the env as it was. ``env`` and ``fixed``
    name the env and the one that takes a fixed deal, for the refusal of ``options``; ``history``: the batch keeps
    the turn history (observation version 2)."""
    if options:
        raise BatchError(f"reset options {short_repr(options)} are not supported by {env}: it deals every game "
                         f"from the batch engine's streams (fix a deal with {fixed})")
    if seed is not None and not is_integer(seed):
        raise SeedError(f"seed={short_repr(seed)} is not allowed: give one non-negative integer for the whole "
                        "batch (game i's deals depend on it and i), or None")
    seed = check_seed(seed)
    if seed is None:  # on success the generator is replaced anyway: drawing from a copy changes nothing
        seed = int(copy.deepcopy(rng).integers(MAX_SEED)) if rng is not None else \
            secrets.randbelow(MAX_SEED)  # fresh entropy from the OS, as numpy's own fresh seeds are
    new_rng = np.random.default_rng(seed)
    batch = BatchGame(rules, num_envs, seed=int(new_rng.integers(STREAM_LIMIT)), stop_after_hand=episode == "hand",
                      record=record, history=history)
    return new_rng, batch


class AllFivesVectorEnv(gymnasium.vector.VectorEnv):
    """All Fives for one learner seat in each of ``num_envs`` games of one compiled batch (see the module
    docstring). Takes the single-seat env's arguments (``opponents``, ``opponent_weights``, ``partner``,
    ``seat``, ``reward``, ``episode``, ``action_features``, the rules as ``rules=Rules(...)`` or keywords),
    plus ``autoreset_mode``, ``record`` (keep every game's decisions, so ``env.batch.replay(i)`` can
    rebuild it; off for speed) and ``obs_version`` (1, the default layout, or 2: :mod:`allfives_env.encoding`).
    The batch keeps the turn history (``BatchGame(history=True)``) when version 2 is asked for or an opponent
    is a version-2 policy."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, opponents: Sequence[str] = ("random",),
                 opponent_weights: Optional[Sequence[float]] = None, partner: Optional[str] = None,
                 seat: Optional[int] = None, reward: str = "win", episode: str = "game", action_features: bool = False,
                 rules: Any = None, autoreset_mode: Any = "next_step", record: bool = False, obs_version: int = 1,
                 **options: Any) -> None:
        if not is_integer(num_envs) or not 1 <= num_envs <= MAX_GAMES:
            raise BatchError(f"num_envs={short_repr(num_envs)} is not allowed: give the number of games, an integer "
                             f"1..{MAX_GAMES}")
        setup = seat_setup(opponents, opponent_weights, partner, seat, reward, episode, action_features, rules, options,
                           obs_version)
        if not isinstance(record, (bool, np.bool_)):
            raise BatchError(f"record={short_repr(record)} is not allowed: give True or False")
        opponents = check_batch_specs(setup.opponents)
        partner = None if setup.partner is None else check_batch_specs([setup.partner])[0]
        autoreset = check_autoreset_mode(autoreset_mode)
        encoder = ObservationEncoder(setup.rules, setup.action_features, setup.obs_version)  # small: one game's bounds
        self.obs_version = setup.obs_version
        check_memory(setup.rules, encoder, int(num_envs), bool(record))
        n = self.num_envs = int(num_envs)
        self.rules = rules = setup.rules
        self.reward_mode, self.episode, self.fixed_seat = setup.reward, setup.episode, setup.seat
        self.partner = partner
        self.record = bool(record)
        self.autoreset_mode = autoreset
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = None
        self.single_observation_space = spaces.Box(encoder.low, encoder.high, dtype=np.float32)
        self.single_action_space = spaces.Discrete(encoder.num_actions)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.observer = BatchObserver(rules, setup.action_features, setup.obs_version)
        self.players, self.sides = rules.num_players, rules.num_sides
        self.side_of_seat = np.array([rules.side_of(s) for s in range(self.players)], dtype=np.int64)
        self.pool = OpponentPool(rules, n)
        self.pool.set_mixture(opponents, setup.weights, np.arange(n))
        self.opponent_specs, self.opponent_weights = opponents, list(setup.weights)
        self.partner_id = None if partner is None else self.pool.ids([partner])[0]
        self.batch: Optional[BatchGame] = None
        self.rng: Optional[np.random.Generator] = None
        self.seats = np.zeros(n, dtype=np.int64)
        self.seated = np.full((n, self.players), -1, dtype=np.int64)
        self.last_scores = np.zeros((n, self.sides), dtype=np.int64)
        self.start_scores = np.zeros((n, self.sides), dtype=np.int64)
        self.masks = np.zeros((n, encoder.num_actions), dtype=np.bool_)
        self.rows = np.arange(n)
        self.restart_next = np.zeros(n, dtype=bool)  # next_step mode: games whose episode ended at the last step

    # -------------------------------------------------------------- episodes
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple[np.ndarray, dict]:
        """Deal ``num_envs`` new games: from ``seed`` (one integer for the whole batch: game ``i``'s deals
        depend on it and ``i`` only), else from the env's generator. ``options`` is not supported.

        Transactional: the new batch (the one step that can be refused, for memory) is built before anything
        of the env changes, and the seed of ``reset()`` is drawn from a copy of the generator, so a refused
        reset leaves the env as it was. The opponents are restarted, not rebuilt: a policy file is read once,
        when its opponent joins."""
        rng, batch = deal_batch(self.rules, self.num_envs, seed, options, self.rng, episode=self.episode,
                                record=self.record, env="the vector env", fixed="the one-game env AllFives-v0",
                                history=self.obs_version >= 2 or self.pool.needs_history)
        self.rng, self.batch = rng, batch  # nothing below can be refused
        self.pool.reseed(rng)
        self._deal(batch, rng, self.rows)
        self._play_opponents(batch)
        self._redeal_finished(batch, rng)
        self.restart_next[:] = False
        return self._observe(batch), self._infos(batch)

    # The helpers below take the live batch (and generator) they are handed: reset makes them, step reads
    # them once, and a helper never meets an env that has none.
    def _deal(self, batch: BatchGame, rng: np.random.Generator, games: np.ndarray) -> None:
        """The learner's seat and the opponents of each (re)started game, drawn from its mixture."""
        m, P = len(games), self.players
        seats: np.ndarray = np.full(m, self.fixed_seat, dtype=np.int64) if self.fixed_seat is not None else \
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
        scores = batch.scores[games]
        self.last_scores[games] = scores
        self.start_scores[games] = scores

    def _play_opponents(self, batch: BatchGame) -> None:
        """Step the opponents of every game, all kinds in lockstep, until each game is at the learner's turn
        or over."""
        rows = self.rows
        while True:
            current = batch.current
            need = (current >= 0) & (current != self.seats)
            if not need.any():
                return
            ids = np.where(need, self.seated[rows, current], -1)
            actions = np.full(self.num_envs, -1, dtype=np.int64)
            trusted = True
            for k in np.flatnonzero(np.bincount(ids[need])).tolist():
                chosen = ids == k
                actions[chosen] = self.pool.act(k, batch, chosen)[chosen]
                trusted = trusted and self.pool.legal_by_construction[k]
            if trusted:  # the library's own batch agents choose from the legal sets: no second scan
                batch.step_legal(actions)
            else:  # a twin registered by a user: its moves are checked as a public step checks them
                batch.step(actions)

    def _redeal_finished(self, batch: BatchGame, rng: np.random.Generator) -> None:
        """Deal new episodes to the finished games until every game waits for the learner (a game can end
        before the learner's first decision in a one-hand episode)."""
        while True:
            restarted = batch.reset_done()
            if not restarted.any():
                return
            self._deal(batch, rng, np.flatnonzero(restarted))
            self._play_opponents(batch)

    # -------------------------------------------------------------- stepping
    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Play the learner's action in every game and the opponents' replies; observations, rewards
        (float64), terminated, truncated and infos of every game, with Gymnasium's autoreset."""
        batch, rng = self.batch, self.rng
        if batch is None or rng is None:  # reset sets both; close drops the batch
            raise NotResetError("call reset() before step()")
        acts = integer_values(actions, "actions (one action id per game)", (self.num_envs,), error=IllegalActionError)
        waiting = ~self.restart_next
        self._check_legal(batch, acts, waiting)
        if self.restart_next.any():  # next_step mode: the games that ended at the last step start again
            self._redeal_finished(batch, rng)
        batch.step_legal(np.where(waiting, acts, -1))  # _check_legal has checked them against the masks
        self._play_opponents(batch)
        done = batch.done
        rewards = self._rewards(batch, done, waiting)
        truncated = batch.truncated & done
        terminated = done & ~truncated
        infos: dict[str, Any] = {}
        if self.autoreset_mode is AutoresetMode.SAME_STEP and done.any():
            # the games still running are observed from a seat not to act: no action features computed for them
            final = self.observer.observe(batch, np.where(done, self.seats, (self.seats + 1) % self.players))
            final[~done] = 0.0
            infos = {"final_obs": final, "_final_obs": done.copy(),
                     "final_info": self._infos(batch, done, np.zeros_like(self.masks)), "_final_info": done.copy()}
            self._redeal_finished(batch, rng)
        else:
            self.restart_next = done
        obs = self._observe(batch)
        infos.update(self._infos(batch))
        return obs, rewards, terminated, truncated, infos

    def _check_legal(self, batch: BatchGame, acts: np.ndarray, waiting: np.ndarray) -> None:
        """An :class:`IllegalActionError` for the first game waiting for the learner whose action is not
        legal, naming it and its legal actions; before anything is applied."""
        in_range = (acts >= 0) & (acts < self.masks.shape[1])
        legal = np.zeros(self.num_envs, dtype=bool)
        legal[in_range] = self.masks[in_range, acts[in_range]]
        bad = np.flatnonzero(waiting & ~legal)
        if not len(bad):
            return
        i, action = int(bad[0]), int(acts[bad[0]])
        what = describe_action(action, batch.tiles, self.masks.shape[1])
        raise IllegalActionError(f"env {i}: {what} is not legal for the learner (seat {int(self.seats[i])}); "
                                 f"{describe_legal(np.flatnonzero(self.masks[i]), batch.tiles)}; nothing was applied")

    def _rewards(self, batch: BatchGame, done: np.ndarray, waiting: np.ndarray) -> np.ndarray:
        """The learner's reward in every game (float64), as the single-seat env computes it; 0 for a game
        that only started again at this step."""
        rows = self.rows
        scores = batch.scores.astype(np.int64)
        mine_side = self.side_of_seat[self.seats]
        if self.reward_mode == "points":
            gains = scores - self.last_scores
            self.last_scores[waiting] = scores[waiting]  # a restarted game's opening moves count at its first step
            rewards = side_rewards("points", gains, scale=self.rules.target)[rows, mine_side]
            return np.where(waiting, rewards, 0.0)
        if not done.any():
            return np.zeros(self.num_envs)
        results = side_rewards("win", scores - self.start_scores, done, batch.winner, hand=self.episode == "hand")
        return results[rows, mine_side]

    def _observe(self, batch: BatchGame) -> np.ndarray:
        """The learner's observation of every game (a new array), and the action masks of the next step: a
        new read-only array each step, so the info and :meth:`action_masks` hand it out without a copy and
        what a caller kept from an earlier step never changes."""
        self.masks = batch.legal_mask()
        self.masks.flags.writeable = False
        return self.observer.observe(batch, self.seats)

    def _infos(self, batch: BatchGame, games: Optional[np.ndarray] = None,
               masks: Optional[np.ndarray] = None) -> dict[str, Any]:
        """Gymnasium's vector info of the single-seat env's info keys, for ``games`` (bool; default all);
        ``masks``: the action masks to report (default the learner's legal actions now)."""
        there = np.ones(self.num_envs, dtype=bool) if games is None else games
        info = {"action_mask": self.masks if masks is None else masks, "seat": self.seats.copy(),
                "scores": batch.scores, "hand": batch.hand_number}
        for key in list(info):
            info[f"_{key}"] = there.copy()
        return info

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, num_actions), read-only: the learner's legal actions in every game (MaskablePPO
        reads this); all False for a game whose episode ended (next_step mode: it restarts at the next step)."""
        return self.masks

    # -------------------------------------------------------------- opponents
    def set_opponents(self, opponents: Sequence[str], weights: Optional[Sequence[float]] = None,
                      indices: Union[None, int, Iterable[int]] = None) -> None:
        """Draw the opponents of the games ``indices`` (default all) from this mixture from their next episode
        on; checked as the constructor checks it, and every spec must have a batch opponent.

        ``indices``: a game index or any iterable of them (a list, a range, a generator, a numpy integer
        array), each 0..num_envs-1 and given once, as stable-baselines3's ``env_method(indices=...)`` takes
        them; an empty one names no game, so nothing changes (the mixture is still checked). Bad input is an
        :class:`AgentError` (a spec, a weight, an index) and changes nothing."""
        given, mixture = opponent_mixture(opponents, weights)
        specs = check_batch_specs(given)
        games = self.rows if indices is None else self._indices(indices)
        if not len(games):
            return
        self.pool.set_mixture(specs, mixture, games)
        if self.batch is not None and self.pool.needs_history and not self.batch.history:
            self.batch.keep_history()  # a version-2 policy joins: its games start a new episode, so a new hand, first
        if len(games) == self.num_envs:
            self.opponent_specs, self.opponent_weights = list(specs), list(mixture)
        self.pool.prune(self.seated, [] if self.partner_id is None else [self.partner_id])

    def _indices(self, indices: Any) -> np.ndarray:
        """Game indices (one, or an iterable of them) as an int64 array, each checked to be an integer
        0..num_envs-1 given once. At most num_envs + 1 items are read, so an endless generator is refused
        rather than read forever."""
        allowed = f"game indices are integers and must lie in 0..{self.num_envs - 1}, each given once"
        if isinstance(indices, np.ndarray):
            indices = indices.tolist()  # Python scalars: an integer array's entries are ints, a bool array's bools
        if is_integer(indices):
            items: list[Any] = [indices]
        elif isinstance(indices, (str, bytes)) or not isinstance(indices, Iterable):
            raise AgentError(f"indices={short_repr(indices)} is not allowed: give a game index, an iterable of them "
                             f"or None for every game ({allowed})")
        else:
            items = list(itertools.islice(iter(indices), self.num_envs + 1))
        if len(items) > self.num_envs:
            raise AgentError(f"indices names more than the {self.num_envs} games: {allowed}")
        for item in items:
            if not is_integer(item) or not 0 <= item < self.num_envs:
                raise AgentError(f"indices holds {short_repr(item)}, which is not a game index: {allowed}")
        games = np.array(items, dtype=np.int64)
        values, counts = np.unique(games, return_counts=True)
        if (counts > 1).any():
            raise AgentError(f"indices names games {short_repr(values[counts > 1].tolist())} more than once: "
                             f"{allowed}")
        return games

    def seated_specs(self, i: int) -> list[Optional[str]]:
        """The spec playing each seat of game ``i`` in its current episode (None: the learner's seat)."""
        if not is_integer(i) or not 0 <= i < self.num_envs:
            raise AgentError(f"game index {short_repr(i)} must lie in 0..{self.num_envs - 1}")
        return [None if k < 0 else self.pool.specs[k] for k in self.seated[int(i)].tolist()]

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release but the games: no process, no file."""
        self.batch = None
