"""Scheduling: the duplicate sets of a match-up (seat orders, how many sets) and the seeds of every game.

Why duplicate deals: in All Fives the deal decides much of a game, so two agents compared on independent
deals need many thousands of games before skill shows through the luck. A *duplicate set* replays the
same deals (hands, boneyard order, leader seat) with the agents in every seat order of the match-up, so
each agent plays the good and the bad cards in turn and the deal luck cancels inside the set:

========================  ===================================================================
players                   one duplicate set (agent indices by seat)
========================  ===================================================================
2                         ``(A, B)``, ``(B, A)``
4, partnership            ``(A, B, A, B)``, ``(B, A, B, A)``: the teams swap cards
3 / 4 cut-throat, k=n     every permutation of the n agents (6 or 24 games)
3 / 4 cut-throat, k=2     "A vs a field of B": every distinct seat order of ``A, B, B(, B)``;
                          ``balanced=True`` adds "B vs a field of A" (the tournament's choice,
                          so that a pair's result does not depend on who was the hero)
========================  ===================================================================

Every game of a set is played with :func:`allfives_env.match.play_game` with the same game seed and
deal seed: the game deals hand k from its own generator seeded ``(deal_seed, k)``, so the deals do not
depend on how the earlier hands went. Seeds come from ``numpy.random.SeedSequence(seed)`` spawn keys
(set index; set index and game index for the agents), never from global state, so any game's seeds can
be computed on their own, in any worker, in any order. Set i uses the same deals in every match-up of a
tournament, which makes the pairs' results comparable on common deals.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..core.rules import Rules
from ..core.seeds import check_seed
from .errors import EvaluationError

#: The spawn key of a tournament's bootstrap generator. Set indices, the other spawn keys, count up from
#: 0 and stay below MAX_GAMES, so the largest 32-bit key keeps the resampling apart from every deal.
BOOTSTRAP_SPAWN_KEY = 2**32 - 1


def _distinct_orders(multiset: Sequence[int]) -> list[tuple[int, ...]]:
    return sorted(set(itertools.permutations(multiset)))


def duplicate_orders(rules: Rules, num_agents: int, balanced: bool = False) -> list[tuple[int, ...]]:
    """The seat orders of one duplicate set: each a tuple giving, per seat, the index of the agent there.

    ``num_agents`` is one per side, or 2 for "hero vs a field" with 3 players or 4 cut-throat (the
    first agent in one seat, the second in all others); ``balanced`` then adds the orders with the roles
    swapped. See this module's docstring for the table.
    """
    n = rules.num_players
    if rules.partnership:
        if num_agents != 2:
            raise EvaluationError(
                f"a partnership match-up takes 2 agents (one per team, seats 0+2 and 1+3), got {num_agents}"
            )
        return [(0, 1, 0, 1), (1, 0, 1, 0)]
    if num_agents == n:
        return list(itertools.permutations(range(n)))
    if num_agents == 2:
        orders = _distinct_orders((0,) + (1,) * (n - 1))
        if balanced:
            orders += _distinct_orders((1,) + (0,) * (n - 1))
        return orders
    if n == 2:
        raise EvaluationError(f"a 2-player match-up takes 2 agents, got {num_agents}")
    raise EvaluationError(
        f"a {n}-player cut-throat match-up takes {n} agents (one per player) or 2 (the first against a "
        f"field of the second), got {num_agents}"
    )


def sets_for(games: int, orders: Sequence[tuple[int, ...]]) -> int:
    """How many duplicate sets of ``orders`` play at least ``games`` games (whole sets only)."""
    return -(-games // len(orders))


def set_seeds(seed: int, set_index: int) -> tuple[int, int]:
    """``(game_seed, deal_seed)`` shared by every game of duplicate set ``set_index``.

    Child ``set_index`` of ``SeedSequence(seed)`` (the spawn key), so any set's seeds can be computed
    on its own, in any worker, in any order.
    """
    state = np.random.SeedSequence(check_seed(seed, allow_none=False), spawn_key=(int(set_index),)).generate_state(2)
    return int(state[0]), int(state[1])


def agent_seeds(seed: int, set_index: int, game_index: int, num_players: int) -> list[int]:
    """The per-seat agent seeds of game ``game_index`` of duplicate set ``set_index``."""
    ss = np.random.SeedSequence(check_seed(seed, allow_none=False), spawn_key=(int(set_index), int(game_index)))
    return [int(s) for s in ss.generate_state(num_players)]


@dataclass(frozen=True)
class SetDeal:
    """Everything that fixes the chance of one duplicate set: its index (its place in the results), the game
    and deal seeds every game of the set shares, and where its games' agent seeds come from
    (``SeedSequence(agent_entropy, spawn_key=agent_key + (game index,))``).

    An evaluation derives all of them from its one seed (:func:`planned_sets`); the bench reads them from a
    frozen deal suite, so that its games never depend on how a seed is expanded."""

    index: int
    game_seed: int
    deal_seed: int
    agent_entropy: int
    agent_key: tuple[int, ...] = ()

    def agent_seeds(self, game_index: int, num_players: int) -> list[int]:
        """The per-seat agent seeds of game ``game_index`` of this set."""
        ss = np.random.SeedSequence(self.agent_entropy, spawn_key=self.agent_key + (int(game_index),))
        return [int(s) for s in ss.generate_state(num_players)]


def planned_sets(seed: int, sets: int) -> list[SetDeal]:
    """The first ``sets`` duplicate sets of an evaluation with ``seed``: :func:`set_seeds` and
    :func:`agent_seeds` of each set index."""
    seed = check_seed(seed, allow_none=False)
    return [SetDeal(s, *set_seeds(seed, s), seed, (s,)) for s in range(sets)]


def bootstrap_generator(seed: int) -> np.random.Generator:
    """The generator of a tournament's bootstrap resamples, apart from every deal of that ``seed``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(BOOTSTRAP_SPAWN_KEY,)))
