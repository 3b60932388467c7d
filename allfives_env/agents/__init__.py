"""Baseline agents behind one protocol, with a registry by name.

``make_agent("greedy", seed=0)``; ``agent_names()`` lists them. Every agent has ``act(view) -> action``
(see :class:`PlayerView` for what it may see) and ``reset(seed)``.

The ladder, weakest first: ``random``, ``greedy``, ``defensive``, ``expert``, ``pimc`` (determinized
Monte-Carlo search); ``oracle`` is the same search with the true hidden tiles, for analysis only.
Trained policies: ``ppo`` plays a policy file (``path=FILE.npz``), ``ppo-2p``, ``ppo-3p`` and ``ppo-4p`` the shipped ones.
Outside opponents: ``openspiel-ismcts`` and ``openspiel-mcts``, OpenSpiel's own search bots (the optional
extra ``[openspiel]``): registered here by the path of their module, :mod:`allfives_env.openspiel.bots`, which
(with pyspiel) is imported only when one is built.

Batch twins: ``random``, ``greedy`` and ``expert`` have compiled twins in :mod:`allfives_env.batch.agents`,
``ppo`` and the shipped policies a batched forward pass in :mod:`allfives_env.batch_opponents`; each is
named on its agent's registration line (by path: imported only when the vector env seats one), and the
vector env plays exactly the agents registered with one.
"""

from __future__ import annotations

from .base import Agent, OracleView, PlayerView
from .basic import DefensiveAgent, GreedyAgent, RandomAgent
from .expert import ExpertAgent
from .policy import PolicyAgent, ShippedPolicyAgent, shipped_agent_classes
from .search import OracleAgent, PIMCAgent, PIMCNetAgent, PIMCSiftAgent, sample_hidden
from .registry import (
    AgentError, BatchTwin, Extra, agent_names, batch_agent_names, batch_twin, describe_agents, has_batch_twin,
    make_agent, parse_agent_spec, register_agent, unregister_agent,
)

# the batch twins live in the batch engine (compiled) and above the agents (policy files): named by path
_COMPILED_TWIN = "allfives_env.batch.agents:build_batch_twin"
_POLICY_TWIN = "allfives_env.batch_opponents:POLICY_TWIN"

register_agent("random", RandomAgent, "uniform over the legal actions", batch=_COMPILED_TWIN)
register_agent("greedy", GreedyAgent, "the placement that scores most now; ties shed the heaviest tile",
               batch=_COMPILED_TWIN)
register_agent("defensive", DefensiveAgent, "points now minus the next player's best possible reply")
register_agent("expert", ExpertAgent, "a hand-written heuristic: score, deny, block, follow up, shed; tunable weights",
               batch=_COMPILED_TWIN)
register_agent("pimc", PIMCAgent, "determinized Monte-Carlo search over sampled hidden tiles (samples=200)")
register_agent("pimc-sift", PIMCSiftAgent,
               "pimc with expert rollouts and successive elimination of candidates (samples<=80): stronger, same think time")
register_agent("pimc-net", PIMCNetAgent, "pimc whose prior adds a trained policy's preferences (policy=ppo-2p, policy_weight=1)")
register_agent("oracle", OracleAgent, "ANALYSIS ONLY: the pimc search on the true hidden tiles")
register_agent("ppo", PolicyAgent, "a trained policy file (numpy only): path=FILE.npz, sample=false, temperature=1",
               batch=_POLICY_TWIN)
for _name, (_cls, _description) in shipped_agent_classes().items():
    register_agent(_name, _cls, _description, batch=_POLICY_TWIN)


# OpenSpiel's bots live in the package above (allfives_env/openspiel/bots.py) and need pyspiel: named here by
# path, imported only when one is built, so this layer imports nothing above it (tests/test_structure.py)
_OPENSPIEL = Extra("openspiel", "pyspiel")
register_agent("openspiel-ismcts", "allfives_env.openspiel.bots:OpenSpielISMCTSAgent",
               "OpenSpiel's ISMCTS bot, random rollouts to the hand end (sims=100)", extra=_OPENSPIEL)
register_agent("openspiel-mcts", "allfives_env.openspiel.bots:OpenSpielMCTSAgent",
               "OpenSpiel's MCTS bot on determinized worlds (sims=100, worlds=10)", extra=_OPENSPIEL)
register_agent("miniature-cfr", "allfives_env.openspiel.tabular:MiniatureCFRAgent",
               "the CFR+ solution of the miniature (max_pip=3, 2 tiles each, no draws; allfives nashconv); "
               "sample=true", extra=_OPENSPIEL)

__all__ = [
    "Agent", "AgentError", "BatchTwin", "DefensiveAgent", "Extra", "ExpertAgent", "GreedyAgent", "OracleAgent", "OracleView", "PIMCAgent", "PlayerView",
    "PIMCNetAgent", "PIMCSiftAgent", "PolicyAgent", "RandomAgent", "ShippedPolicyAgent", "sample_hidden",
    "agent_names", "batch_agent_names", "batch_twin", "describe_agents", "has_batch_twin", "make_agent",
    "parse_agent_spec", "register_agent", "unregister_agent",
]
