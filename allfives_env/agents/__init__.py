"""Baseline agents behind one protocol, with a registry by name.

``make_agent("greedy", seed=0)``; ``agent_names()`` lists them. Every agent has ``act(view) -> action``
(see :class:`PlayerView` for what it may see) and ``reset(seed)``.

The ladder, weakest first: ``random``, ``greedy``, ``defensive``, ``expert``, ``pimc`` (determinized
Monte-Carlo search); ``oracle`` is the same search with the true hidden tiles, for analysis only.
Trained policies: ``ppo`` plays a policy file (``path=FILE.npz``), ``ppo-2p``, ``ppo-3p`` and ``ppo-4p`` the shipped ones.
Outside opponents: ``openspiel-ismcts`` and ``openspiel-mcts``, OpenSpiel's own search bots (the optional
extra ``[openspiel]``; pyspiel is imported only when one is built, see :mod:`allfives_env.openspiel.bots`).
"""

from __future__ import annotations

from typing import Optional

from .base import Agent, OracleView, PlayerView
from .basic import DefensiveAgent, GreedyAgent, RandomAgent
from .expert import ExpertAgent
from .policy import PolicyAgent, ShippedPolicyAgent, shipped_agent_classes
from .search import OracleAgent, PIMCAgent, PIMCNetAgent, PIMCSiftAgent, sample_hidden
from .registry import AgentError, agent_names, describe_agents, make_agent, parse_agent_spec, register_agent

register_agent("random", RandomAgent, "uniform over the legal actions")
register_agent("greedy", GreedyAgent, "the placement that scores most now; ties shed the heaviest tile")
register_agent("defensive", DefensiveAgent, "points now minus the next player's best possible reply")
register_agent("expert", ExpertAgent, "a hand-written heuristic: score, deny, block, follow up, shed; tunable weights")
register_agent("pimc", PIMCAgent, "determinized Monte-Carlo search over sampled hidden tiles (samples=200)")
register_agent("pimc-sift", PIMCSiftAgent,
               "pimc with expert rollouts and successive elimination of candidates (samples<=80): stronger, same think time")
register_agent("pimc-net", PIMCNetAgent, "pimc whose prior adds a trained policy's preferences (policy=ppo-2p, policy_weight=1)")
register_agent("oracle", OracleAgent, "ANALYSIS ONLY: the pimc search on the true hidden tiles")
register_agent("ppo", PolicyAgent, "a trained policy file (numpy only): path=FILE.npz, sample=false, temperature=1")
for _name, (_cls, _description) in shipped_agent_classes().items():
    register_agent(_name, _cls, _description)


def _openspiel_agent(kind: str, seed: Optional[int], **params: object) -> Agent:
    """Build an OpenSpiel bot agent; its module (and pyspiel) is imported only now."""
    try:
        from ..openspiel import bots
    except ImportError as exc:  # OpenSpielUnavailableError, or a broken install
        raise AgentError(f"agent {kind!r} needs OpenSpiel: {exc}") from None
    cls = {"openspiel-ismcts": bots.OpenSpielISMCTSAgent, "openspiel-mcts": bots.OpenSpielMCTSAgent}[kind]
    return cls(seed=seed, **params)


def openspiel_ismcts(seed: Optional[int] = None, sims: int = 100, uct_c: float = 2.0, rollouts: int = 1,
                     worlds: int = -1, point_scale: float = 25.0) -> Agent:
    """OpenSpiel's ISMCTSBot (see :class:`allfives_env.openspiel.bots.OpenSpielISMCTSAgent`)."""
    return _openspiel_agent("openspiel-ismcts", seed, sims=sims, uct_c=uct_c, rollouts=rollouts, worlds=worlds,
                            point_scale=point_scale)


def openspiel_mcts(seed: Optional[int] = None, sims: int = 100, uct_c: float = 2.0, rollouts: int = 1,
                   worlds: int = 10, point_scale: float = 25.0) -> Agent:
    """OpenSpiel's MCTSBot on determinized worlds (see :class:`allfives_env.openspiel.bots.OpenSpielMCTSAgent`)."""
    return _openspiel_agent("openspiel-mcts", seed, sims=sims, uct_c=uct_c, rollouts=rollouts, worlds=worlds,
                            point_scale=point_scale)


register_agent("openspiel-ismcts", openspiel_ismcts,
               "OpenSpiel's ISMCTS bot, random rollouts to the hand end (sims=100; extra [openspiel])")
register_agent("openspiel-mcts", openspiel_mcts,
               "OpenSpiel's MCTS bot on determinized worlds (sims=100, worlds=10; extra [openspiel])")

__all__ = [
    "Agent", "AgentError", "DefensiveAgent", "ExpertAgent", "GreedyAgent", "OracleAgent", "OracleView", "PIMCAgent", "PlayerView",
    "PIMCNetAgent", "PIMCSiftAgent", "PolicyAgent", "RandomAgent", "ShippedPolicyAgent", "sample_hidden",
    "agent_names", "describe_agents", "make_agent", "parse_agent_spec", "register_agent",
]
