"""The arguments of a one-learner env, checked once: the single-seat env and the vector env both read them.

:func:`seat_setup` turns the keyword arguments both envs take (``opponents``, ``opponent_weights``,
``partner``, ``seat``, ``reward``, ``episode``, ``action_features``, the rules) into a :class:`SeatSetup`,
or raises the package's typed errors naming what was wrong and what is allowed. It builds no agent and no
game: each env then builds its own opponents (registry agents one game at a time, batch agents for a
whole batch), so the vector env never has to build a single-seat env to learn whether its arguments are
good, and the two envs cannot disagree about what is allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import numpy as np

from .agents.base import Agent
from .agents.registry import AgentError
from .core.errors import RulesError, short_repr
from .core.outcome import EPISODE_MODES, REWARD_MODES
from .core.rules import Rules, rules_from
from .core.values import is_finite_number, is_integer

__all__ = ["OpponentLike", "SeatSetup", "either", "opponent_mixture", "seat_setup"]

OpponentLike = Union[str, Agent]


def either(choices: Sequence[str]) -> str:
    """``'a' or 'b'``: the allowed values of a mode, as the error messages name them."""
    return " or ".join(repr(c) for c in choices)


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
               rules: Optional[Rules] = None, options: Optional[dict[str, Any]] = None) -> SeatSetup:
    """Check a one-learner env's arguments (``options``: the rules options given as keywords) and return
    them as a :class:`SeatSetup`. Raises :class:`RulesError` or :class:`AgentError`."""
    rules = rules_from(rules, options or {})
    n = rules.num_players
    if reward not in REWARD_MODES:
        raise RulesError(f"reward={short_repr(reward)} is not allowed: choose {either(REWARD_MODES)}")
    if episode not in EPISODE_MODES:
        raise RulesError(f"episode={short_repr(episode)} is not allowed: choose {either(EPISODE_MODES)}")
    if seat is not None and not (is_integer(seat) and 0 <= seat < n):
        raise RulesError(f"seat={short_repr(seat)} is not allowed: give 0..{n - 1}, or None for a random seat each episode")
    if not isinstance(action_features, (bool, np.bool_)):
        raise RulesError(f"action_features={short_repr(action_features)} is not allowed: give True or False")
    specs, weights = opponent_mixture(opponents, opponent_weights)
    if partner is not None and not rules.partnership:
        raise AgentError(
            f"partner={short_repr(partner)} is only for a 4-player partnership game (seats 0+2 vs 1+3); "
            f"these rules have {n} players{' playing cut-throat' if n == 4 else ''}: leave partner out"
        )
    if partner is not None and not isinstance(partner, (str, Agent)):
        raise AgentError(f"an opponent must be an agent spec string or an Agent, got {short_repr(partner)}")
    return SeatSetup(rules, specs, weights, partner, None if seat is None else int(seat), reward, episode,
                     bool(action_features))
