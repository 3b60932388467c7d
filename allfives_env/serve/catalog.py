"""What the new-game dialog offers: the registry's agents (with the player counts each plays), the search
agents that can analyse a position, and the main rules options, all read from their one source (the agent
registry, the rules option table), never listed by hand.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..agents.base import Analyst
from ..agents.registry import agent_names, describe_agents, make_agent
from ..core.errors import AllFivesError
from ..core.options import OPTIONS
from ..core.rules import Rules
from .schemas import RequestError
from .sessions import build_agent

__all__ = ["MAIN_OPTIONS", "catalog", "check_offered", "warm_up"]

#: The rules options the dialog shows (the others keep their defaults; the API takes any of them).
MAIN_OPTIONS = ("max_pip", "target", "hand_end", "spinner_count", "score_unit", "may_draw_when_able", "first_leader",
                "after_block", "win_check", "exact_target", "allow_negative", "lead_scores")


def _agent_entry(name: str, description: str) -> dict[str, Any]:
    """One agent: whether it can be built here (an extra may be missing), and for which player counts
    (a trained policy plays the count it was trained for; a hidden-information oracle plays none)."""
    entry: dict[str, Any] = {"name": name, "description": description, "players": [], "analyst": False, "why": ""}
    try:
        agent = make_agent(name, seed=0)
    except AllFivesError as exc:
        entry["why"] = str(exc)
        return entry
    if agent.uses_hidden_information:
        entry["why"] = "reads the other hands: analysis only, not offered as an opponent"
        return entry
    entry["analyst"] = isinstance(agent, Analyst)
    for players in (2, 3, 4):
        try:
            build_agent(name, 0, Rules.from_options({"num_players": players}))
        except AllFivesError:
            continue
        entry["players"].append(players)
    return entry


def _option_entry(name: str) -> dict[str, Any]:
    option = next(o for o in OPTIONS if o.name == name)
    return {"name": name, "kind": option.kind, "choices": list(option.choices), "default": option.default,
            "doc": option.doc, "none_means": option.none_means, "low": option.low}


@lru_cache(maxsize=1)
def catalog() -> dict[str, Any]:
    """The dialog's choices (built once: building every agent loads the shipped policies)."""
    described = describe_agents()
    agents = [_agent_entry(name, described[name]) for name in agent_names()]
    return {
        "agents": agents,
        "analysts": [a["name"] for a in agents if a["analyst"]],
        "rules": [_option_entry(name) for name in MAIN_OPTIONS],
        "players": [2, 3, 4],
    }


def check_offered(spec: str, players: int, analyst: bool = False) -> None:
    """Refuse (422) an agent the web game does not offer for ``players``: only registered names it lists,
    without parameters. A parameter could name a file (``ppo:path=...``) or ask for a search without end
    (``pimc:samples=10**9``); the web game takes neither from a request."""
    entries = catalog()["agents"]
    offered = [a["name"] for a in entries if (a["analyst"] if analyst else True) and players in a["players"]]
    if spec not in offered:
        what = "analyst" if analyst else f"opponent for {players} players"
        extra = " (the web game takes agent names without parameters)" if ":" in spec else ""
        raise RequestError(422, f"agent {spec[:40]!r} is not offered as an {what}{extra}; choose one of {offered}")


def warm_up(analyst: str = "pimc-sift") -> None:
    """Run one analysis on a fresh game, so the compiled search is ready before the first hint asks."""
    from ..core.game import Game
    from ..core.view import PlayerView

    game = Game(Rules(), 0)
    while len(game.legal) < 2 and not game.over:
        game.step(game.legal[0])
    if not game.over:
        agent = make_agent(analyst, seed=0)
        assert isinstance(agent, Analyst), f"{analyst} values no moves: warm up a search agent"
        agent.move_scores(PlayerView(game, game.current), sorted(game.legal))
