"""The exactly solved miniature: a game small enough that exploitability is computed exactly, not estimated.

All Fives itself is far too large for an exact best response, so exploitability is measured there by training
one (``allfives exploit``). The miniature keeps the game's rules, fives scoring and the spinner included, and
shrinks the rest until OpenSpiel can walk its whole tree: 2 players, the double-three set (10 tiles), 2 tiles
each, the rest reserved (no draws), one hand, returns in points (:data:`MINIATURE`). Its tree has about 13,000
decision nodes and 1,950 information states.

* :func:`agent_policy` turns any agent into a tabular policy over those information states: ``random`` is
  its uniform policy, an agent with ``action_probabilities(view)`` (``miniature-cfr``) its stated mixed
  strategy; every other agent is the move it makes at each information state, reset with ``seed`` there first
  (so a searching agent's sampled worlds make its play a fixed function of what it knows).
* :func:`nash_conv` is OpenSpiel's exact NashConv: the sum over the players of what a best response to the
  others' policies gains over the policy's own value, in points (0 for a Nash equilibrium).
* :func:`solve` runs OpenSpiel's CFR+ and returns its average policy, a near-equilibrium.
"""

from __future__ import annotations

import time
from typing import Any

import pyspiel
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import cfr, exploitability

from ..agents import make_agent
from ..core.errors import AgentError
from ..core.view import PlayerView
from .game import SHORT_NAME

__all__ = ["MINIATURE", "agent_policy", "miniature_game", "nash_conv", "solution_table", "solve"]

#: The miniature's parameters of the ``python_allfives`` game (rules options plus the episode and returns).
MINIATURE: dict[str, Any] = {"players": 2, "max_pip": 3, "hand_size": 2, "boneyard_reserve": 6,
                             "episode": "hand", "returns": "points"}


def miniature_game(**changes: Any) -> pyspiel.Game:
    """The miniature as an OpenSpiel game (``changes`` replace parameters, e.g. ``hand_size=1``)."""
    return pyspiel.load_game(SHORT_NAME, {**MINIATURE, **changes})


def _decision_states(game: pyspiel.Game) -> dict[str, Any]:
    """One state of every information state of the game, by its string (the whole tree is walked)."""
    found: dict[str, Any] = {}
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend(state.child(a) for a, _ in state.chance_outcomes())
            continue
        found.setdefault(state.information_state_string(), state)
        stack.extend(state.child(a) for a in state.legal_actions())
    return found


def agent_policy(game: pyspiel.Game, spec: str, seed: int = 0) -> os_policy.TabularPolicy:
    """``spec``'s policy over every information state of ``game`` (see the module docstring)."""
    policy = os_policy.TabularPolicy(game)
    agent = make_agent(spec)
    if agent.uses_hidden_information:
        raise AgentError(f"agent {spec!r} reads the hidden tiles (an analysis oracle): it has no policy over "
                         "information states, so no NashConv")
    uniform = agent.spec() == "random"
    mixed = getattr(agent, "action_probabilities", None)  # an agent that states its mixed strategy
    for key, state in _decision_states(game).items():
        row = policy.policy_for_key(key)
        legal = state.legal_actions()
        row[:] = 0.0
        if uniform:
            row[legal] = 1.0 / len(legal)
            continue
        seat = state.current_player()
        agent.reset(seed)
        if callable(mixed):
            for a, p in mixed(PlayerView(state.track.game, seat)).items():
                row[a] = p
            continue
        action = int(agent.act(PlayerView(state.track.game, seat)))
        if action not in legal:
            raise AgentError(f"agent {spec!r} chose {action}, not a legal action {legal} in seat {seat}")
        row[action] = 1.0
    return policy


def nash_conv(game: pyspiel.Game, policy: Any) -> float:
    """The exact NashConv of ``policy`` in ``game`` (points; OpenSpiel's ``exploitability.nash_conv``)."""
    return float(exploitability.nash_conv(game, policy))


def solve(game: pyspiel.Game, iterations: int) -> tuple[os_policy.TabularPolicy, float, float]:
    """CFR+ (OpenSpiel's) for ``iterations``: its average policy, that policy's NashConv, and the seconds."""
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations={iterations!r}: give a positive integer")
    started = time.perf_counter()
    solver = cfr.CFRPlusSolver(game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    seconds = time.perf_counter() - started
    return average, nash_conv(game, average), seconds


def solution_table(policy: os_policy.TabularPolicy) -> dict[str, dict[int, float]]:
    """A tabular policy as a tabular policy file's table: information state -> {action id: probability > 0}."""
    return {key: {a: float(p) for a, p in enumerate(policy.action_probability_array[i]) if p > 0}
            for key, i in policy.state_lookup.items()}
