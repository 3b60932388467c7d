"""The env RLlib's single-agent env runners step: ``AllFives-v0``'s vector env on the batch engine, the mask
moved into the observation.

RLlib 2.60's ``SingleAgentEnvRunner`` builds its envs with ``gymnasium.make_vec(..., vectorization_mode=
config.gym_env_vectorize_mode)`` and, for an env registered with ``ray.tune.registry.register_env``, registers
the creator as both the single and the vector entry point (the vector one gets ``num_envs`` in its config).
So with ``config.env_runners(gym_env_vectorize_mode="vector_entry_point")`` the runner takes
:class:`allfives_env.vector.AllFivesVectorEnv` as it is: every runner steps ``num_envs_per_env_runner``
games of one compiled batch, opponents included, in one call.

One thin adapter remains, :class:`MaskInObservation`, because RLlib's RLModules see only the observation
(the env-to-module connectors batch ``obs``; infos stay in the episodes): the observation becomes
``{"observations": obs, "action_mask": float32 mask}`` for :class:`~allfives_training.rllib.module.MaskedPPOModule`.
The mask is the vector env's :meth:`~allfives_env.vector.AllFivesVectorEnv.action_masks` (all zero for a
game whose episode just ended: RLlib stores no action for it, and the env ignores the one it sends at the
next step, Gymnasium's ``next_step`` autoreset, which is the one RLlib's runner expects). The infos are
dropped: RLlib copies every info into its episodes, and nothing in training reads them.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import gymnasium
import numpy as np
from gymnasium.vector import VectorWrapper
from gymnasium.vector.utils import batch_space

from allfives_env.core.errors import BatchError
from allfives_env.core.rules import Rules

__all__ = ["MaskInObservation", "make_vector_env", "VECTOR_KEYS"]

#: the config keys :func:`make_vector_env` passes on to ``AllFives-v0``'s vector env
VECTOR_KEYS = ("rules", "opponents", "opponent_weights", "partner", "seat", "reward", "episode", "action_features")


class MaskInObservation(VectorWrapper):
    """A vector env's observations as ``{"observations", "action_mask"}`` (see the module doc)."""

    def __init__(self, env: gymnasium.vector.VectorEnv) -> None:
        super().__init__(env)
        n_actions = int(env.single_action_space.n)
        self.single_observation_space = gymnasium.spaces.Dict({
            "observations": env.single_observation_space,
            "action_mask": gymnasium.spaces.Box(0.0, 1.0, (n_actions,), np.float32),
        })
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)

    def _with_mask(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return {"observations": obs, "action_mask": self.env.unwrapped.action_masks().astype(np.float32)}

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple[dict, dict]:
        obs, _ = self.env.reset(seed=seed, options=options)
        return self._with_mask(obs), {}

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        obs, rewards, terminated, truncated, _ = self.env.step(actions)
        return self._with_mask(obs), rewards, terminated, truncated, {}


def make_vector_env(config: Mapping[str, Any]) -> MaskInObservation:
    """RLlib's env creator: ``config`` holds ``num_envs`` (set by RLlib's runner) and the vector env's
    arguments (:data:`VECTOR_KEYS`; ``rules`` a :class:`Rules` or its options); anything else is refused with a :class:`BatchError`."""
    config = dict(config)
    num_envs = config.pop("num_envs", 1)
    unknown = sorted(set(config) - set(VECTOR_KEYS))
    if unknown:
        raise BatchError(f"the RLlib vector env got unknown config key(s) {unknown}; allowed: num_envs, "
                         + ", ".join(VECTOR_KEYS))
    if isinstance(config.get("rules"), Mapping):
        config["rules"] = Rules.from_options(dict(config["rules"]))
    # num_envs as given: the vector env checks it (an integer 1..MAX_GAMES), with the message the other front ends give
    env = gymnasium.make_vec("AllFives-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
                             autoreset_mode="next_step", **config)
    return MaskInObservation(env)
