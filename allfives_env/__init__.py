"""All Fives dominoes: an exact rules engine and a PettingZoo environment for reinforcement learning.

``from allfives_env import allfives_v0`` gives the environment; :mod:`allfives_env.core` the pure game.
Importing this package needs numpy, gymnasium and pettingzoo only.
"""

from __future__ import annotations

from . import allfives_v0
from .core import (
    Deal,
    DealError,
    Game,
    GameOverError,
    IllegalActionError,
    ReplayError,
    Rules,
    RulesError,
)
from .core.replay import game_record, load_replay, save_replay

__version__ = "0.1.0"
ENV_ID = "allfives/allfives_v0"


def _register() -> None:
    """Make ``pettingzoo.make("aec", "allfives/allfives_v0")`` work once this package is imported."""
    try:
        from pettingzoo.env_registry.registration import aec_registry, register
    except ImportError:  # pettingzoo without a registry (older than 1.27)
        return
    # the registry keys ids in Gymnasium style ("allfives/allfives-v0")
    registered = {spec.entry_point for spec in aec_registry.values()}
    if "allfives_env.allfives_v0:env" not in registered:
        register("aec", ENV_ID, entry_point="allfives_env.allfives_v0:env")


_register()


def _register_gymnasium() -> None:
    """``gymnasium.make("AllFives-v0", opponents=["expert"])``: the single-seat env for SB3 and friends;
    ``gymnasium.make_vec("AllFives-v0", num_envs=N, vectorization_mode="vector_entry_point")``: the same
    semantics for N games of the compiled batch engine (:mod:`allfives_env.vector`)."""
    import gymnasium

    if "AllFives-v0" not in gymnasium.registry:
        gymnasium.register(id="AllFives-v0", entry_point="allfives_env.single_seat:AllFivesSingleSeatEnv",
                           vector_entry_point="allfives_env.vector:AllFivesVectorEnv")


_register_gymnasium()

__all__ = [
    "Deal", "DealError", "ENV_ID", "Game", "GameOverError", "IllegalActionError", "ReplayError", "Rules",
    "RulesError", "allfives_v0", "game_record", "load_replay", "save_replay",
]
