"""The plain arguments of the env front ends, one checker each, so each has one message whichever env refused it.

``reward``, ``episode``, ``seat``, ``action_features``, ``obs_version``, ``render_mode``, ``illegal_action`` and
``illegal_reward`` are taken by several front ends: the PettingZoo env, the single-seat env, the vector env and
the training and RLlib adapters over them. Each checker raises :class:`RulesError` naming the argument, the
value and what is allowed, and returns the value in its checked type. They need nothing but the core, so they
sit below every front end; the checkers that need the agents (the opponents' mixture) are in
:mod:`allfives_env.seat_setup`, which hands these on too.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .core.errors import RulesError, short_repr
from .core.outcome import EPISODE_MODES, REWARD_MODES
from .core.values import is_finite_number, is_integer

__all__ = ["ILLEGAL_ACTION_MODES", "OBS_VERSIONS", "check_action_features", "check_obs_version", "check_episode", "check_illegal_action",
           "check_illegal_reward", "check_render_mode", "check_reward", "check_seat", "either"]

#: What the single-seat env does with an illegal learner action: end the episode with ``illegal_reward``
#: (PettingZoo's classic envs do, and gymnasium's env checker needs it) or raise.
ILLEGAL_ACTION_MODES = ("terminate", "raise")


def either(choices: Sequence[str]) -> str:
    """``'a' or 'b'``: the allowed values of a mode, as the error messages name them."""
    return " or ".join(repr(c) for c in choices)


def check_reward(reward: Any) -> str:
    """``reward``: ``"win"`` (+1 / -1 / 0 at the end) or ``"points"`` (the score change each step)."""
    if reward not in REWARD_MODES:
        raise RulesError(f"reward={short_repr(reward)} is not allowed: choose {either(REWARD_MODES)}")
    return str(reward)


def check_episode(episode: Any) -> str:
    """``episode``: ``"game"`` (to the target) or ``"hand"`` (one hand)."""
    if episode not in EPISODE_MODES:
        raise RulesError(f"episode={short_repr(episode)} is not allowed: choose {either(EPISODE_MODES)}")
    return str(episode)


def check_seat(seat: Any, num_players: int) -> Optional[int]:
    """The learner's ``seat``: 0..num_players-1, or None for a random seat each episode."""
    if seat is not None and not (is_integer(seat) and 0 <= seat < num_players):
        raise RulesError(f"seat={short_repr(seat)} is not allowed: give 0..{num_players - 1}, or None for a random "
                         "seat each episode")
    return None if seat is None else int(seat)


def check_action_features(action_features: Any) -> bool:
    """``action_features``: a real bool (a truthy string such as ``"no"`` is refused, not read as True)."""
    if not isinstance(action_features, (bool, np.bool_)):
        raise RulesError(f"action_features={short_repr(action_features)} is not allowed: give True or False")
    return bool(action_features)


#: Every observation version this library encodes (:mod:`allfives_env.encoding`): 1, the default layout, and 2,
#: which adds the ``needs``, ``pips``, ``bonus`` and ``history`` pieces and two action-feature columns.
OBS_VERSIONS = (1, 2)


def check_obs_version(obs_version: Any) -> int:
    """``obs_version``: one of :data:`OBS_VERSIONS` (an integer, not a bool)."""
    if isinstance(obs_version, (bool, np.bool_)) or not is_integer(obs_version) or int(obs_version) not in OBS_VERSIONS:
        raise RulesError(f"obs_version={short_repr(obs_version)} is not allowed: choose "
                         f"{' or '.join(str(v) for v in OBS_VERSIONS)} (1: the default layout; 2 adds the needs, pips, "
                         "bonus and history pieces)")
    return int(obs_version)


def check_render_mode(render_mode: Any, allowed: Sequence[str]) -> Optional[str]:
    """``render_mode``: one of the env's ``allowed`` modes, or None (each env renders its own set)."""
    if render_mode is not None and not (isinstance(render_mode, str) and render_mode in allowed):
        raise RulesError(f"render_mode={short_repr(render_mode)} is not allowed: choose {either(allowed)} or None")
    return render_mode


def check_illegal_action(illegal_action: Any) -> str:
    """``illegal_action``: see :data:`ILLEGAL_ACTION_MODES`."""
    if illegal_action not in ILLEGAL_ACTION_MODES:
        raise RulesError(f"illegal_action={short_repr(illegal_action)} is not allowed: choose "
                         f"{either(ILLEGAL_ACTION_MODES)}")
    return str(illegal_action)


def check_illegal_reward(illegal_reward: Any) -> float:
    """``illegal_reward``: a finite number (a nan or inf reward would poison every return it enters)."""
    if not is_finite_number(illegal_reward):
        raise RulesError(f"illegal_reward={short_repr(illegal_reward)} is not allowed: give a finite number, e.g. -1.0")
    return float(illegal_reward)
