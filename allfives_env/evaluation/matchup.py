"""Match-up: :func:`evaluate` plays one duplicate match-up and sums it up from the first agent's point of view."""

from __future__ import annotations

from typing import Optional, Sequence

from ..core.seeds import check_seed
from .checks import AgentLike, RulesLike, check_agents, check_move_time_limit, check_run_args, resolve_rules
from .results import MatchResult, summarize_match
from .runner import run_matchups
from .scheduling import duplicate_orders, sets_for


def evaluate(
    agents: Sequence[AgentLike],
    rules: RulesLike = None,
    *,
    num_players: Optional[int] = None,
    games: int = 200,
    seed: int = 0,
    processes: int = 1,
    progress: bool = True,
    balanced: bool = False,
    mp_context: Optional[str] = None,
    move_time_limit: Optional[float] = None,
) -> MatchResult:
    """Play one duplicate match-up and summarize it from the first agent's point of view.

    ``agents`` are spec strings (``"greedy"``, ``"pimc:samples=50"``) or agents (their ``spec()`` is
    used), one per side, or two for "the first against a field of the second" with 3 players or 4
    cut-throat. ``games`` is rounded up to whole duplicate sets. ``rules`` is a :class:`Rules` or a
    mapping of rules options; ``num_players`` a shortcut for the player count. The numbers depend only on
    ``seed`` (not on ``processes``), except the measured think times.

    ``move_time_limit``: seconds any agent may take over one move (None: no limit); a slower move stops
    the run with :class:`~allfives_env.evaluation.errors.MoveTimeLimitError`. An agent's own exception
    stops it with :class:`~allfives_env.core.errors.AgentError`, a worker process that dies with
    :class:`~allfives_env.evaluation.errors.WorkerDiedError`; each names the agent or worker, the seat, move
    or duplicate set, and the seeds to replay the game.
    """
    r = resolve_rules(rules, num_players)
    seed = check_seed(seed, allow_none=False)
    check_run_args(processes, games, "games")
    limit = check_move_time_limit(move_time_limit)
    specs = check_agents(agents, r)
    orders = duplicate_orders(r, len(specs), balanced)
    sets = sets_for(games, orders)
    (records,) = run_matchups(r, [(tuple(specs), orders)], sets, seed, processes, progress, " vs ".join(specs),
                              mp_context, limit)
    return summarize_match(specs, r, seed, balanced and len(specs) == 2 and not r.partnership and r.num_players > 2,
                           orders, records)
