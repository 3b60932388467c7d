"""Advantages for one policy that plays several seats of each game: each seat's decisions form their own
trajectory, interleaved with the other seats' in the env's steps.

Why a function of its own: a self-play env steps one decision per game per step, taken by whichever seat is
to act, and hands back every seat's reward for that step. A seat's transition runs from one of its decisions
to its next one: its reward is the sum of what that seat received at every step in between (its own move,
then the other seats' replies), and its next value is the value at its next decision. GAE then runs along
each (game, seat) trajectory. Doing it in one backward pass over the rollout, with per-(game, seat) carries,
keeps it to a few array operations per step and no Python per game.

Episode ends cut every seat's trace of that game: a step that ended the episode resets the carries of all
its seats before that step's (terminal) rewards are added, so the terminal reward reaches the last
decision of every seat, and nothing of the next episode flows back. A trajectory still open when the rollout
ends bootstraps from ``bootstrap[game, seat]``: the critic's value of that seat's position after the rollout.
"""

from __future__ import annotations

import numpy as np

__all__ = ["seat_advantages"]


def seat_advantages(actor: np.ndarray, values: np.ndarray, rewards: np.ndarray, ended: np.ndarray,
                    bootstrap: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """float64 ``(T, N)`` GAE advantages of the decisions in a rollout of ``T`` steps of ``N`` games.

    ``actor`` int ``(T, N)``: the seat whose decision step ``t`` of game ``n`` applied, or -1 where the step
    holds no decision to learn from (an opponent's move, a restart step); ``values`` ``(T, N)``: the critic's
    value of each such decision; ``rewards`` ``(T, N, P)``: every seat's reward from each step; ``ended`` bool
    ``(T, N)``: the step ended its game's episode; ``bootstrap`` ``(N, P)``: each seat's value after the last
    step (read only for trajectories the rollout leaves open). Entries where ``actor`` is -1 are 0."""
    T, N = actor.shape
    P = rewards.shape[2]
    if values.shape != (T, N) or rewards.shape[:2] != (T, N) or ended.shape != (T, N) or bootstrap.shape != (N, P):
        raise ValueError(f"seat_advantages: shapes actor {actor.shape}, values {values.shape}, rewards "
                         f"{rewards.shape}, ended {ended.shape}, bootstrap {bootstrap.shape} do not agree")
    next_value = np.asarray(bootstrap, dtype=np.float64).copy()
    next_advantage = np.zeros((N, P))
    pending = np.zeros((N, P))  # rewards a seat received after its latest decision (scanning backwards)
    advantages = np.zeros((T, N))
    for t in range(T - 1, -1, -1):
        cut = ended[t]
        next_value[cut] = 0.0
        next_advantage[cut] = 0.0
        pending[cut] = 0.0
        pending += rewards[t]
        games = np.flatnonzero(actor[t] >= 0)
        seats = actor[t, games]
        delta = pending[games, seats] + gamma * next_value[games, seats] - values[t, games]
        advantage = delta + gamma * lam * next_advantage[games, seats]
        advantages[t, games] = advantage
        next_value[games, seats] = values[t, games]
        next_advantage[games, seats] = advantage
        pending[games, seats] = 0.0
    return advantages
