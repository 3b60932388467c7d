"""Play one game between agents on the core engine, fast, and report what happened.

This is the loop every evaluation runs: no PettingZoo wrappers, one :class:`PlayerView` per decision,
each agent timed. ``deal_seed`` makes the deals independent of play, which is what duplicate
evaluation needs (the same deals replayed with the agents in other seats).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

from .agents.base import Agent, OracleView, PlayerView
from .agents.registry import AgentError
from .core.errors import IllegalActionError, short_repr
from .core.game import Game
from .core.rules import Rules


@dataclass
class GameResult:
    """The outcome of one game, seen by side (team in a partnership, else player)."""

    winner: Optional[int]
    scores: list[int]
    start_scores: list[int]
    hands: int
    truncated: bool
    decisions: list[int] = field(default_factory=list)  # per seat
    think_seconds: list[float] = field(default_factory=list)  # per seat

    @property
    def gains(self) -> list[int]:
        """Points each side gained over the game (plays and settlements)."""
        return [s - t for s, t in zip(self.scores, self.start_scores)]


def play_game(
    rules: Rules,
    agents: Sequence[Agent],
    seed: int,
    deal_seed: Optional[int] = None,
    agent_seeds: Optional[Sequence[Optional[int]]] = None,
    game: Optional[Game] = None,
) -> GameResult:
    """Play a whole game with ``agents[seat]`` in each seat.

    ``seed`` drives the game's own random choices (random leaders), ``deal_seed`` the deals (default:
    ``seed``), ``agent_seeds[seat]`` reseeds each agent before the game. ``game`` may be given to start
    from a prepared position instead.
    """
    if len(agents) != rules.num_players:
        raise AgentError(f"need one agent per seat: {rules.num_players} agents, got {len(agents)}")
    for seat, agent in enumerate(agents):
        if not isinstance(agent, Agent):
            raise AgentError(f"the agent in seat {seat} is {short_repr(agent)}, not an Agent: build one with "
                             f"make_agent('greedy') or the like")
    if agent_seeds is not None and len(agent_seeds) != rules.num_players:
        raise AgentError(f"need one agent seed per seat: {rules.num_players}, got {len(agent_seeds)}")
    if game is None:
        game = Game(rules, seed, deal_seed=seed if deal_seed is None else deal_seed)
    for seat, agent in enumerate(agents):
        agent.reset(None if agent_seeds is None else agent_seeds[seat])
    views = [
        (OracleView if agent.uses_hidden_information else PlayerView)(game, seat) for seat, agent in enumerate(agents)
    ]
    n = rules.num_players
    decisions = [0] * n
    think = [0.0] * n
    start_scores = list(game.scores)
    clock = time.perf_counter
    while not game.over:
        seat = game.current
        t0 = clock()
        action = agents[seat].act(views[seat])
        think[seat] += clock() - t0
        decisions[seat] += 1
        if action not in game.legal:
            raise IllegalActionError(
                f"agent {agents[seat]!r} in seat {seat} chose {action!r}; legal: {', '.join(game.action_names())}"
            )
        game.step(action)
    return GameResult(game.winner, list(game.scores), start_scores, game.hands_completed, game.truncated, decisions, think)
