"""Checks: what a run may be asked for (rules, seed, sizes, agents), refused before any game is played."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

from ..agents import Agent, make_agent
from ..agents.registry import check_agent_rules
from ..core.errors import short_repr
from ..core.rules import Rules
from ..match import MAX_MOVE_TIME_LIMIT, MIN_MOVE_TIME_LIMIT, check_move_time_limit  # noqa: F401 - re-exported
from .errors import EvaluationError

#: The most games one run plays (``games``, ``games_per_pair``): every game's record is kept in memory.
MAX_GAMES = 10_000_000
#: The most bootstrap resamples of a tournament's rating intervals (they are held in memory at once).
MAX_BOOTSTRAP = 100_000

RulesLike = Union[Rules, Mapping[str, Any], None]
AgentLike = Union[str, Agent]


def resolve_rules(rules: RulesLike = None, num_players: Optional[int] = None) -> Rules:
    """A :class:`Rules` from a Rules object, an options mapping (``{"hand_end": "winner_takes"}``) or
    None (the defaults), with ``num_players`` applied when given."""
    if isinstance(rules, Rules):
        if num_players is not None and num_players != rules.num_players:
            raise EvaluationError(
                f"num_players={num_players} contradicts the given rules ({rules.num_players} players): "
                "give one or the other"
            )
        return rules
    if rules is not None and not isinstance(rules, Mapping):
        raise EvaluationError(f"rules must be a Rules object or a mapping of options, got {type(rules).__name__}")
    overrides = {} if num_players is None else {"num_players": num_players}
    return Rules.from_options(dict(rules or {}), **overrides)


def check_run_args(processes: int, count: int, what: str) -> None:
    """``processes`` a positive integer, ``count`` (named ``what`` in the message) 1 to :data:`MAX_GAMES`."""
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise EvaluationError(f"processes={short_repr(processes)} must be a positive integer")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_GAMES:
        raise EvaluationError(f"{what}={short_repr(count)} is not allowed: give an integer from 1 to {MAX_GAMES}")


def check_bootstrap(bootstrap: int) -> int:
    """The number of bootstrap resamples: an integer from 0 (none) to :data:`MAX_BOOTSTRAP`."""
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise EvaluationError(f"bootstrap={short_repr(bootstrap)} is not allowed: "
                              f"give an integer from 0 to {MAX_BOOTSTRAP}")
    return bootstrap


def _agent_spec(agent: AgentLike) -> str:
    if isinstance(agent, Agent):
        return agent.spec()
    if not isinstance(agent, str) or not agent.strip():
        raise EvaluationError("an agent must be a spec string such as 'greedy' or 'pimc:samples=50', "
                              f"got {short_repr(agent)}")
    return agent.strip()


def check_agents(agents: Sequence[AgentLike], rules: Optional[Rules] = None, distinct: bool = False) -> list[str]:
    """Spec strings, each built once here so that a bad name or parameter, or an agent that cannot play
    ``rules`` (a policy trained for other rules), fails before any game. With ``distinct`` (a
    tournament), at least two agents and none twice however it is written ("random:" and "random",
    "expert:w_score=1" and "expert")."""
    if isinstance(agents, (str, Agent)) or not isinstance(agents, Sequence):
        raise EvaluationError(f"agents must be a list of spec strings or agents, got {short_repr(agents)}")
    specs = [_agent_spec(a) for a in agents]
    canonical = []
    for spec in specs:
        agent = make_agent(spec)
        if rules is not None:
            check_agent_rules(agent, rules)
        canonical.append(agent.spec())
    if distinct:
        if len(specs) < 2:
            raise EvaluationError(f"a tournament needs at least 2 agents, got {specs}")
        dupes = sorted({s for s, c in zip(specs, canonical) if canonical.count(c) > 1})
        if dupes:
            raise EvaluationError(f"agents must be distinct, got the same agent more than once: {dupes}")
    return specs
