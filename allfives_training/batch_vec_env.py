"""A stable-baselines3 ``VecEnv`` over the library's vector env: ``vec_env: batch`` in a training config.

All the game work is :class:`allfives_env.vector.AllFivesVectorEnv` (the single-seat env for ``n`` games of
one compiled batch, with its ``same_step`` autoreset); this adapter only speaks SB3's protocol:

* ``reset()`` / ``step_async`` / ``step_wait`` with SB3's seeding (:meth:`seed`, then the next reset) and a
  list of per-game info dicts (``scores``, ``seat``, ``hand``, ``action_mask``, ``TimeLimit.truncated``), plus
  ``terminal_observation`` and ``Monitor``'s ``episode`` (``r``, ``l``, ``t``) at the end of an episode;
* ``action_masks()`` for MaskablePPO;
* ``env_method("set_opponents", specs, weights)`` (the league), ``env_method("seated_specs")`` and
  ``get_attr("seat")``.

An illegal action raises :class:`~allfives_env.core.errors.IllegalActionError` naming the game (a masked
learner never takes one); opponents the batch engine cannot play are refused with an
:class:`~allfives_env.agents.registry.AgentError` (:func:`batch_spec_problem`).
"""

from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from allfives_env.batch_opponents import BatchPolicyAgent, batch_spec_problem, make_batch_opponent
from allfives_env.core.errors import RulesError
from allfives_env.vector import AllFivesVectorEnv

__all__ = ["BatchPolicyAgent", "BatchSingleSeatVecEnv", "batch_spec_problem", "make_batch_opponent"]


class BatchSingleSeatVecEnv(VecEnv):
    """SB3's view of an :class:`~allfives_env.vector.AllFivesVectorEnv` of ``n_envs`` games. Takes the vector
    env's arguments (``opponents``, ``opponent_weights``, ``partner``, ``seat``, ``reward``, ``episode``,
    ``action_features``, the rules, ``record``)."""

    def __init__(self, n_envs: int, **kwargs: Any) -> None:
        if "autoreset_mode" in kwargs:
            raise RulesError("the SB3 adapter sets autoreset_mode='same_step' itself (SB3 reads the final observation "
                             "from the info): leave it out")
        self.venv = AllFivesVectorEnv(n_envs, autoreset_mode="same_step", **kwargs)
        self.render_mode = None
        self.episode_return = np.zeros(self.venv.num_envs)
        self.episode_length = np.zeros(self.venv.num_envs, dtype=np.int64)
        self.actions: Optional[np.ndarray] = None
        self.t_start = time.time()
        self._started = False
        super().__init__(self.venv.num_envs, self.venv.single_observation_space, self.venv.single_action_space)

    @property
    def rules(self) -> Any:
        """The rules every game is played under."""
        return self.venv.rules

    @property
    def batch(self) -> Any:
        """The compiled batch of games (None before the first reset)."""
        return self.venv.batch

    @property
    def opponent_specs(self) -> list[str]:
        """The opponents' mixture of every game (as last set for all of them)."""
        return self.venv.opponent_specs

    @property
    def opponent_weights(self) -> list[float]:
        """The mixture's weights."""
        return self.venv.opponent_weights

    # -------------------------------------------------------------- SB3's protocol
    def reset(self) -> np.ndarray:
        """Deal ``n`` new games (seeded by :meth:`seed` when it was called, else from the previous stream, or
        fresh entropy the first time); the learner's first observations."""
        if any(self._options):
            raise RulesError("vec_env: batch deals every game from the engine's streams; reset options (fixed "
                             "hands, boneyard, scores) are not supported: use the single-seat env for them")
        obs, info = self.venv.reset(seed=self._seeds[0])
        self._started = True
        self.episode_return[:] = 0.0
        self.episode_length[:] = 0
        self.reset_infos = self._per_game(info)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Keep the learner's actions for :meth:`step_wait`."""
        self.actions = np.asarray(actions).reshape(-1)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """Play the learner's actions and the opponents' replies; rewards, auto-reset, observations."""
        if not self._started:
            raise RulesError("call reset() before step()")
        obs, rewards, terminated, truncated, info = self.venv.step(self.actions)
        done = terminated | truncated
        self.episode_return += rewards
        self.episode_length += 1
        fresh = self._per_game(info)
        if not done.any():
            return obs, rewards.astype(np.float32), done, fresh
        final = self._per_game(info["final_info"])
        elapsed = round(time.time() - self.t_start, 6)
        infos = list(fresh)
        for i in np.flatnonzero(done).tolist():
            infos[i] = {**final[i], "terminal_observation": info["final_obs"][i],
                        "TimeLimit.truncated": bool(truncated[i]),
                        "episode": {"r": round(float(self.episode_return[i]), 6), "l": int(self.episode_length[i]),
                                    "t": elapsed}}
            self.reset_infos[i] = fresh[i]
        self.episode_return[done] = 0.0
        self.episode_length[done] = 0
        return obs, rewards.astype(np.float32), done, infos

    @staticmethod
    def _per_game(info: dict[str, Any]) -> list[dict]:
        """Gymnasium's vector info as SB3's list of one dict per game."""
        masks, seats, scores, hands = info["action_mask"], info["seat"], info["scores"], info["hand"]
        return [{"scores": s, "seat": seat, "hand": h, "action_mask": m, "TimeLimit.truncated": False}
                for s, seat, h, m in zip(scores.tolist(), seats.tolist(), hands.tolist(), masks)]

    def action_masks(self) -> np.ndarray:
        """bool (n, num_actions): the learner's legal actions in every game."""
        return self.venv.action_masks()

    # -------------------------------------------------------------- the league
    def set_opponents(self, opponents: Sequence[str], weights: Sequence[float], indices: VecEnvIndices = None) -> None:
        """Draw the opponents of the games ``indices`` (default all) from this mixture from their next
        episode on (:meth:`AllFivesVectorEnv.set_opponents`)."""
        self.venv.set_opponents(opponents, weights, list(self._get_indices(indices)))

    def seated_specs(self, i: int) -> list[Optional[str]]:
        """The spec playing each seat of game ``i`` in its current episode (None: the learner's seat)."""
        return self.venv.seated_specs(i)

    # -------------------------------------------------------------- SB3's VecEnv forwarding
    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """``action_masks`` (one mask per game), ``set_opponents`` (for the games ``indices``, one None per
        game) and ``seated_specs``; the games share one engine, so there is no per-game env object."""
        idx = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self.action_masks()[idx])
        if method_name == "set_opponents":
            self.set_opponents(*method_args, indices=idx, **method_kwargs)
            return [None] * len(idx)
        if method_name == "seated_specs":
            return [self.seated_specs(i) for i in idx]
        raise AttributeError(f"the batch vec env has no per-game method {method_name!r}: it answers action_masks, "
                             "set_opponents and seated_specs")

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute per game: ``seat`` (each game's learner seat), else the vec env's own attribute
        (shared by every game: ``rules``, ``render_mode``, ``action_masks``, ...) or the vector env's
        (``reward_mode``, ``episode``, ...)."""
        idx = list(self._get_indices(indices))
        if attr_name == "seat":
            return self.venv.seats[idx].tolist()
        if attr_name.startswith("_"):
            raise AttributeError(f"the batch vec env has no attribute {attr_name!r}")
        owner = self if hasattr(self, attr_name) else self.venv
        if not hasattr(owner, attr_name):
            raise AttributeError(f"the batch vec env has no attribute {attr_name!r}")
        return [getattr(owner, attr_name)] * len(idx)

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
        self.venv.close()
