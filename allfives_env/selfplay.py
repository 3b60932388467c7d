"""Self-play on the compiled batch engine: ``num_envs`` games in lockstep, the caller acting for every seat.

:class:`AllFivesSelfPlayEnv` is the batched form of the PettingZoo AEC env (:class:`~allfives_env.env.raw_env`)
for training one shared policy on every seat of a game (self-play, or both partners of a partnership). Each
:meth:`~AllFivesSelfPlayEnv.step` takes one action per game, for the seat to act in that game, and returns
per game what the AEC env gives after the same ``env.step``:

* ``obs``: float32 ``(num_envs, obs_size)``, the observation of the seat to act (``raw_env.observe(agent)
  ["observation"]`` of ``agent_selection``, bit for bit, ``action_features`` included);
* ``rewards``: float64 ``(num_envs, num_players)``, EVERY seat's reward from this step (``raw_env.rewards``):
  ``points`` = each side's score change of the step minus the mean change of the other sides, over the
  target; ``win`` = +1 / -1 / 0 for every seat when the episode ends (:func:`~allfives_env.core.outcome.
  side_rewards`). A seat's return between two of its decisions is the sum of its column over the steps
  between them, whoever acted;
* ``terminated`` / ``truncated`` ``(num_envs,)`` as the AEC env's (truncated: the ``max_hands`` cap);
* ``info``: ``seat`` (int64: the seat whose observation is in the row and whose action the next step
  takes), ``action_mask`` (bool ``(num_envs, num_actions)``, that seat's legal actions; also
  :meth:`~AllFivesSelfPlayEnv.action_masks`), ``scores`` and ``hand``, each with Gymnasium's ``_key``
  mask of the games it holds (all of them).

Autoreset, as Gymnasium's vector envs: ``autoreset_mode="next_step"`` (default): a game whose episode ended
keeps, until the next step, the AEC env's final position: observed from the seat that moved last (its
``agent_selection``), that seat in ``info["seat"]``, its mask all False; the next step deals it a new
episode, ignores its action and pays it 0. ``"same_step"``: the next episode starts at once; the finished
row (as ``next_step`` would show it) is in ``info["final_obs"]`` and ``info["final_info"]`` (``seat``,
``action_mask`` all False, ``scores``, ``hand``, and ``state`` when asked for), with ``_final_obs`` /
``_final_info`` masks of the games that ended. A game that ends before any decision is dealt again at
once (the AEC rules never do it: a leader always has a placement on the empty table; the guard is cheap).

Seeding: ``reset(seed=s)`` deals every game from ``s`` (game ``i``'s deals depend on ``s`` and ``i`` only);
``reset()`` goes on from the env's own generator (fresh entropy the first time), and a refused reset leaves
the env as it was, as the vector env's does.

Privileged outputs, for training only (centralized critics): ``privileged=("state",)`` adds
``info["state"]``, float32 ``(num_envs, state_size)``: each game's full-information state exactly as
``raw_env.state()`` gives it (every hand, the boneyard's tiles, the public slices as seat 0 sees them with
its hand left out, the seat to act). It is computed only when asked for by name; without it nothing hidden
is in any observation or info. Never hand it to a policy that plays.

Errors: an illegal action raises :class:`IllegalActionError` naming the game, the seat, the action and its
legal actions; a wrong shape, dtype or a non-integer action too; nothing is applied then. Stepping before
``reset`` (or after ``close``) is a :class:`NotResetError`; bad constructor arguments get the messages of the
other front ends (their shared checkers).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from .batch import BatchGame
from .batch.checks import MAX_GAMES, integer_values
from .batch.layout import BONEYARD
from .batch.observe import BatchObserver
from .core.actions import describe_action, describe_legal
from .core.errors import BatchError, IllegalActionError, NotResetError, short_repr
from .core.outcome import side_rewards
from .core.rules import rules_from
from .core.values import is_integer
from .encoding import ObservationEncoder
from .env_args import check_action_features, check_episode, check_obs_version, check_reward
from .vector import check_autoreset_mode, check_memory, deal_batch

__all__ = ["PRIVILEGED_OUTPUTS", "AllFivesSelfPlayEnv"]

#: The training-only outputs a caller may ask for by name (``privileged=(...)``), each an ``info`` key.
PRIVILEGED_OUTPUTS = ("state",)


def _check_privileged(privileged: Any) -> tuple[str, ...]:
    """``privileged`` as a tuple of known names, or a :class:`BatchError` listing the allowed ones. A bare
    string is refused rather than read letter by letter."""
    allowed = f"give a tuple of names from {PRIVILEGED_OUTPUTS} (e.g. privileged=('state',)), or () for none"
    if isinstance(privileged, (str, bytes)) or not isinstance(privileged, Iterable):
        raise BatchError(f"privileged={short_repr(privileged)} is not allowed: {allowed}")
    names = list(privileged)
    for name in names:
        if not isinstance(name, str) or name not in PRIVILEGED_OUTPUTS:
            raise BatchError(f"privileged output {short_repr(name)} is unknown: {allowed}")
    return tuple(dict.fromkeys(names))


class AllFivesSelfPlayEnv:
    """All Fives for every seat of ``num_envs`` games of one compiled batch, the caller acting for the seat to
    act in each (see the module docstring). Arguments: ``num_envs`` (1..2**22), ``reward`` ("win" |
    "points"), ``episode`` ("game" | "hand"), ``action_features``, the rules as ``rules=Rules(...)`` or
    keywords, ``autoreset_mode`` ("next_step" | "same_step"), ``record`` (keep every game's decisions, so
    ``env.batch.replay(i)`` can rebuild it; off for speed), ``privileged`` (training-only outputs by name,
    :data:`PRIVILEGED_OUTPUTS`) and ``obs_version`` (1, the default layout, or 2: :mod:`allfives_env.encoding`)."""

    def __init__(self, num_envs: int = 1, reward: str = "win", episode: str = "game", action_features: bool = False,
                 rules: Any = None, autoreset_mode: Any = "next_step", record: bool = False,
                 privileged: Iterable[str] = (), obs_version: int = 1, **options: Any) -> None:
        if not is_integer(num_envs) or not 1 <= num_envs <= MAX_GAMES:
            raise BatchError(f"num_envs={short_repr(num_envs)} is not allowed: give the number of games, an integer "
                             f"1..{MAX_GAMES}")
        self.rules = rules = rules_from(rules, options)
        self.reward_mode = check_reward(reward)
        self.episode = check_episode(episode)
        action_features = check_action_features(action_features)
        self.obs_version = check_obs_version(obs_version)
        if not isinstance(record, (bool, np.bool_)):
            raise BatchError(f"record={short_repr(record)} is not allowed: give True or False")
        self.autoreset_mode = check_autoreset_mode(autoreset_mode)
        self.privileged = _check_privileged(privileged)
        encoder = ObservationEncoder(rules, action_features, self.obs_version)  # small: one game's bounds and sizes
        # the vector env's check counts 18 bytes an observation float a game (its batched space's bounds and
        # two observation arrays); this env keeps no batched space, and the states it may add are smaller
        # than an observation each, so the same check is a safe bound here
        check_memory(rules, encoder, int(num_envs), bool(record))
        n = self.num_envs = int(num_envs)
        self.num_players, self.num_sides = rules.num_players, rules.num_sides
        self.record = bool(record)
        self.action_features = action_features
        self.metadata = {"autoreset_mode": self.autoreset_mode, "render_modes": []}
        self.single_observation_space = spaces.Box(encoder.low, encoder.high, dtype=np.float32)
        self.single_action_space: spaces.Discrete[np.int64] = spaces.Discrete(encoder.num_actions)
        self.observation_size, self.num_actions, self.state_size = encoder.size, encoder.num_actions, encoder.state_size
        self.observer = BatchObserver(rules, action_features, self.obs_version)
        # the state's public block: seat 0's observation without the features (a prefix of the observation:
        # the features slice is the last), its hand slice then cleared
        self._public = BatchObserver(rules, False, self.obs_version) if "state" in self.privileged else None
        # cleared in the state's public block: the hand, and version 2's pieces that read the hand (the
        # encoder's state leaves them at zero)
        self._private_slices = [encoder.slices[name] for name in ("hand", "pips", "bonus") if name in encoder.slices]
        self.side_of_seat = np.array([rules.side_of(s) for s in range(self.num_players)], dtype=np.int64)
        self._sides_are_seats = bool((self.side_of_seat == np.arange(self.num_players)).all())
        self.batch: Optional[BatchGame] = None
        self.rng: Optional[np.random.Generator] = None
        self.seats = np.zeros(n, dtype=np.int64)
        self.start_scores = np.zeros((n, self.num_sides), dtype=np.int64)
        self.masks = np.zeros((n, encoder.num_actions), dtype=np.bool_)
        self.masks.flags.writeable = False
        self.rows = np.arange(n)
        self.restart_next = np.zeros(n, dtype=bool)  # next_step mode: games whose episode ended at the last step

    # -------------------------------------------------------------- episodes
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple[np.ndarray, dict]:
        """Deal ``num_envs`` new games: from ``seed`` (one integer for the whole batch: game ``i``'s deals depend
        on it and ``i`` only), else from the env's generator. ``options`` is not supported.

        Transactional: the new batch (the one step that can be refused, for memory) is built before anything
        of the env changes, and the seed of ``reset()`` is drawn from a copy of the generator, so a refused
        reset leaves the env as it was."""
        rng, batch = deal_batch(self.rules, self.num_envs, seed, options, self.rng, episode=self.episode,
                                record=self.record, env="the self-play env", fixed="the AEC env allfives_v0",
                                history=self.obs_version >= 2)
        self.rng, self.batch = rng, batch  # nothing below can be refused
        self._redeal_finished(batch)
        self.start_scores[:] = batch.S["scores"][:, :self.num_sides]
        self.restart_next[:] = False
        self.seats[:] = batch.S["current"]
        obs = self._observe(batch)
        return obs, self._infos(batch)

    def _redeal_finished(self, batch: BatchGame) -> np.ndarray:
        """Deal new episodes to the finished games until every game waits for a decision; the bool mask of
        the games dealt again (their start scores are the caller's to record)."""
        dealt = np.zeros(self.num_envs, dtype=bool)
        while True:
            restarted = batch.reset_done()
            if not restarted.any():
                return dealt
            dealt |= restarted

    # -------------------------------------------------------------- stepping
    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Play each game's action for its seat to act; observations of the next seats to act, every seat's
        rewards (float64 ``(num_envs, num_players)``), terminated, truncated and infos, with autoreset."""
        batch = self.batch
        if batch is None:  # reset sets it; close drops it
            raise NotResetError("call reset() before step()")
        acts = integer_values(actions, "actions (one action id per game, for its seat to act)", (self.num_envs,),
                              error=IllegalActionError)
        restart = self.restart_next
        waiting = ~restart
        self._check_legal(batch, acts, waiting)
        S = batch.S
        sides = self.num_sides
        if restart.any():  # next_step mode: the games that ended at the last step start again, action ignored
            self._redeal_finished(batch)
            self.start_scores[restart] = S["scores"][restart, :sides]
            acts = np.where(waiting, acts, -1)
        before = S["scores"][:, :sides].astype(np.int64) if self.reward_mode == "points" else None
        movers = S["current"].astype(np.int64)  # the seat acting in each game (a restarted one's: no move)
        batch.step(acts)
        over = S["over"]
        done = over == 1
        scores = S["scores"][:, :sides].astype(np.int64)
        rewards = self._rewards(batch, scores, before, done)
        truncated = (S["truncated"] == 1) & done
        terminated = done & ~truncated
        current = S["current"].astype(np.int64)
        # a finished game stays with the seat that moved last (the AEC env's agent_selection)
        any_done = bool(done.any())
        self.seats = np.where(done, movers, current) if any_done else current
        infos: dict[str, Any] = {}
        if self.autoreset_mode is AutoresetMode.SAME_STEP:
            if any_done:
                final = self.observer.observe(batch, self.seats)
                final[~done] = 0.0
                final_info = self._infos(batch, done, np.zeros_like(self.masks))
                infos = {"final_obs": final, "_final_obs": done.copy(), "final_info": final_info,
                         "_final_info": done.copy()}
                dealt = self._redeal_finished(batch)
                self.start_scores[dealt] = S["scores"][dealt, :sides]
                self.seats = S["current"].astype(np.int64)
        else:
            self.restart_next = done
        obs = self._observe(batch)
        infos.update(self._infos(batch))
        return obs, rewards, terminated, truncated, infos

    def _check_legal(self, batch: BatchGame, acts: np.ndarray, waiting: np.ndarray) -> None:
        """An :class:`IllegalActionError` for the first game waiting for a decision whose action is not legal
        for its seat to act, naming the game, the seat, the action and the legal actions; before anything
        is applied (a game dealt again at this step ignores its action, so any integer does there)."""
        masks = self.masks
        in_range = (acts >= 0) & (acts < masks.shape[1])
        legal = masks[self.rows, np.where(in_range, acts, 0)] & in_range
        if legal.all() or (legal | ~waiting).all():
            return
        i = int(np.flatnonzero(waiting & ~legal)[0])
        what = describe_action(int(acts[i]), batch.tiles, masks.shape[1])
        raise IllegalActionError(f"game {i}: {what} is not legal for seat {int(self.seats[i])}, the seat to act; "
                                 f"{describe_legal(batch.legal_actions(i), batch.tiles)}; nothing was applied")

    def _rewards(self, batch: BatchGame, scores: np.ndarray, before: Optional[np.ndarray],
                 done: np.ndarray) -> np.ndarray:
        """Every seat's reward in every game (float64 ``(num_envs, num_players)``), as the AEC env's
        ``rewards`` after the same step: ``points`` on the step's score change (the AEC env's rounding,
        ``inverse``), ``win`` at an episode's end from the gains since its start. A game dealt again at this
        step made no move, so its gains and rewards are 0."""
        if before is not None:
            sides = side_rewards("points", scores - before, scale=self.rules.target, inverse=True)
        elif done.any():
            sides = side_rewards("win", scores - self.start_scores, done, batch.S["winner"],
                                 hand=self.episode == "hand")
        else:
            return np.zeros((self.num_envs, self.num_players))
        return sides if self._sides_are_seats else sides[:, self.side_of_seat]

    def _observe(self, batch: BatchGame) -> np.ndarray:
        """The observation of every game from ``self.seats`` (a new array), and the masks of the next step: a
        new read-only array each step, handed out without a copy (what a caller kept never changes)."""
        self.masks = batch.legal_mask()
        self.masks.flags.writeable = False
        return self.observer.observe(batch, self.seats)

    def _infos(self, batch: BatchGame, games: Optional[np.ndarray] = None,
               masks: Optional[np.ndarray] = None) -> dict[str, Any]:
        """The infos of ``games`` (bool; default all) with Gymnasium's ``_key`` masks; ``masks``: the action
        masks to report (default the legal actions of the seats to act now)."""
        there = np.ones(self.num_envs, dtype=bool) if games is None else games
        info: dict[str, Any] = {"action_mask": self.masks if masks is None else masks, "seat": self.seats.copy(),
                                "scores": batch.scores, "hand": batch.hand_number}
        if "state" in self.privileged:
            info["state"] = self._state(batch)
        for key in list(info):
            info[f"_{key}"] = there.copy()
        return info

    def _state(self, batch: BatchGame) -> np.ndarray:
        """float32 ``(num_envs, state_size)``: :meth:`ObservationEncoder.state` of every game (training only):
        every hand (tile ``t`` of seat ``s`` at ``t * P + s``), the boneyard's tiles, seat 0's public
        observation (its hand and the features left at zero) and the seat to act one-hot (none once over)."""
        assert self._public is not None  # built when "state" is asked for
        S = batch.S
        n, P = self.num_envs, self.num_players
        owner = S["owner"]
        T = owner.shape[1]
        state = np.zeros((n, self.state_size), dtype=np.float32)
        state[:, :T * P] = (owner[:, :, None] == np.arange(P, dtype=owner.dtype)).reshape(n, T * P)
        state[:, T * P:T * P + T] = owner == BONEYARD
        base = T * P + T
        public = self._public.observe(batch, np.zeros(n, dtype=np.int64))
        for private in self._private_slices:
            public[:, private] = 0.0
        state[:, base:base + public.shape[1]] = public
        current = S["current"]
        live = np.flatnonzero(current >= 0)
        state[live, base + self.observation_size + current[live]] = 1.0
        return state

    def action_masks(self) -> np.ndarray:
        """bool ``(num_envs, num_actions)``, read-only: the legal actions of the seat to act in every game;
        all False for a game whose episode ended (next_step mode: it is dealt again at the next step)."""
        return self.masks

    def close(self) -> None:
        """Drop the games: nothing else to release (no process, no file). ``reset`` starts again."""
        self.batch = None
