"""The arguments of the envs, checked once: every front end reads them through the checkers here.

Each argument that more than one env takes (``reward``, ``episode``, ``seat``, ``action_features``,
``render_mode``, ``illegal_action``, ``illegal_reward``, the opponents' mixture) has one checker, so it has one
message, whichever env refused it: the single-seat env, the vector env and the training and RLlib adapters
over them all call these. The checkers of plain values are defined in :mod:`allfives_env.env_args`, below
every front end (the PettingZoo env takes some of them too and may not import this module); this module
hands them on with the checkers that need the agents (the opponents' mixture).

:func:`seat_setup` turns the keyword arguments both envs take (``opponents``, ``opponent_weights``,
``partner``, ``seat``, ``reward``, ``episode``, ``action_features``, the rules) into a :class:`SeatSetup`,
or raises the package's typed errors naming what was wrong and what is allowed. It builds no agent and no
game: each env then builds its own opponents (registry agents one game at a time through
:func:`build_opponent`, batch agents for a whole batch), so the vector env never has to build a
single-seat env to learn whether its arguments are good, and the two envs cannot disagree about what is
allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from .agents.base import Agent
from .agents.registry import AgentError, check_agent_rules, make_agent
from .core.errors import short_repr
from .core.rules import Rules, rules_from
from .core.values import is_finite_number
from .env_args import (ILLEGAL_ACTION_MODES, check_action_features, check_episode, check_illegal_action,  # noqa: F401
                  check_illegal_reward, check_obs_version, check_render_mode, check_reward, check_seat, either)

__all__ = ["ILLEGAL_ACTION_MODES", "OpponentLike", "SeatSetup", "build_opponent", "check_action_features",
           "check_episode", "check_illegal_action", "check_illegal_reward", "check_render_mode", "check_reward",
           "check_seat", "either", "opponent_mixture", "seat_setup"]

OpponentLike = Union[str, Agent]

def build_opponent(opponent: OpponentLike, rules: Rules) -> Agent:
    """The agent of a spec (built from the registry), or the Agent given, checked now to play ``rules``: a
    policy trained for other rules is refused when the env is built or its mixture set, as the vector env
    refuses it, rather than at its first move inside a reset, which would leave the env half-dealt."""
    agent = opponent if isinstance(opponent, Agent) else make_agent(opponent)
    check_agent_rules(agent, rules)
    return agent


@dataclass(frozen=True)
class SeatSetup:
    """Checked arguments of a one-learner env: the rules, the opponents' mixture (specs or agents, and
    weights summing to 1), the partner (a partnership's partner seat, or None: drawn from the mixture),
    the learner's seat (None: random each episode), the reward and episode modes and whether the
    observation has the action-feature slice."""

    rules: Rules
    opponents: tuple[OpponentLike, ...]
    weights: np.ndarray
    partner: Optional[OpponentLike]
    seat: Optional[int]
    reward: str
    episode: str
    action_features: bool
    obs_version: int = 1


def opponent_mixture(opponents: Any, opponent_weights: Any = None) -> tuple[tuple[OpponentLike, ...], np.ndarray]:
    """The opponents (a spec, an Agent, or a non-empty list of them) and their mixture weights
    (default uniform), normalised to sum to 1; an :class:`AgentError` says what is wrong."""
    if isinstance(opponents, (str, Agent)):
        opponents = [opponents]
    if not isinstance(opponents, (list, tuple)):
        raise AgentError(f"opponents={short_repr(opponents)} is not allowed: give a list of agent specs or Agents, "
                         "e.g. ['expert']")
    if not opponents:
        raise AgentError("opponents must name at least one agent, e.g. ['random'] or ['expert', 'greedy']")
    for opponent in opponents:
        if not isinstance(opponent, (str, Agent)):
            raise AgentError(f"an opponent must be an agent spec string or an Agent, got {short_repr(opponent)}")
    if opponent_weights is None:
        return tuple(opponents), np.full(len(opponents), 1.0 / len(opponents))
    listed = isinstance(opponent_weights, (list, tuple)) or (isinstance(opponent_weights, np.ndarray)
                                                             and opponent_weights.ndim == 1)
    given = list(opponent_weights) if listed else None
    each_ok = (given is not None and len(given) == len(opponents)
               and all(is_finite_number(w) and w >= 0 for w in given))
    weights = np.asarray(given, dtype=float) if each_ok else np.zeros(0)
    # the sum is checked too: finite weights can add up past the largest float (1e308 + 1e308 = inf), and
    # dividing by inf would give every opponent weight 0
    with np.errstate(over="ignore"):
        total = float(weights.sum())
    if not 0 < total < math.inf:
        raise AgentError(f"opponent_weights={short_repr(opponent_weights)} must give one finite, non-negative weight "
                         f"per opponent ({len(opponents)}), with a sum that is finite (at most about 1.8e308) and "
                         "greater than 0")
    return tuple(opponents), weights / total


def seat_setup(opponents: Any = ("random",), opponent_weights: Any = None, partner: Any = None, seat: Any = None,
               reward: Any = "win", episode: Any = "game", action_features: Any = False,
               rules: Optional[Rules] = None, options: Optional[dict[str, Any]] = None,
               obs_version: Any = 1) -> SeatSetup:
    """Check a one-learner env's arguments (``options``: the rules options given as keywords) and return
    them as a :class:`SeatSetup`. Raises :class:`RulesError` or :class:`AgentError`."""
    rules = rules_from(rules, options or {})
    n = rules.num_players
    reward, episode = check_reward(reward), check_episode(episode)
    seat, action_features = check_seat(seat, n), check_action_features(action_features)
    obs_version = check_obs_version(obs_version)
    specs, weights = opponent_mixture(opponents, opponent_weights)
    if partner is not None and not rules.partnership:
        raise AgentError(
            f"partner={short_repr(partner)} is only for a 4-player partnership game (seats 0+2 vs 1+3); "
            f"these rules have {n} players{' playing cut-throat' if n == 4 else ''}: leave partner out"
        )
    if partner is not None and not isinstance(partner, (str, Agent)):
        raise AgentError(f"an opponent must be an agent spec string or an Agent, got {short_repr(partner)}")
    return SeatSetup(rules, specs, weights, partner, seat, reward, episode, action_features, obs_version)
