"""Per-seat advantages (allfives_training/selfplay/returns.py) against a plain per-trajectory GAE written out
game by game and seat by seat."""

from __future__ import annotations

import numpy as np
import pytest

from allfives_training.selfplay.returns import seat_advantages


def _reference(actor, values, rewards, ended, bootstrap, gamma, lam):
    """Split every game into its seats' trajectories and run textbook GAE along each."""
    T, N = actor.shape
    P = rewards.shape[2]
    out = np.zeros((T, N))
    for n in range(N):
        for s in range(P):
            steps = [t for t in range(T) if actor[t, n] == s]
            # transitions: from each decision to the seat's next decision, or the episode's end, or the rollout end
            adv_next, value_next = None, None
            for k in range(len(steps) - 1, -1, -1):
                t = steps[k]
                end = next((u for u in range(t, T) if ended[u, n]), None)
                nxt = steps[k + 1] if k + 1 < len(steps) else None
                if end is not None and (nxt is None or end < nxt):
                    reward = rewards[t:end + 1, n, s].sum()
                    v_next, a_next = 0.0, 0.0
                elif nxt is not None:
                    reward = rewards[t:nxt, n, s].sum()
                    v_next, a_next = values[nxt, n], out[nxt, n]
                else:
                    reward = rewards[t:, n, s].sum()
                    v_next, a_next = bootstrap[n, s], 0.0
                delta = reward + gamma * v_next - values[t, n]
                out[t, n] = delta + gamma * lam * a_next
    return out


@pytest.mark.parametrize("seed", range(6))
def test_matches_gae_along_each_seats_trajectory(seed: int) -> None:
    rng = np.random.default_rng(seed)
    T, N, P = 23, 7, 2 + seed % 3
    actor = rng.integers(-1, P, size=(T, N))
    values = np.where(actor >= 0, rng.normal(size=(T, N)), 0.0)
    rewards = rng.normal(size=(T, N, P)) * (rng.random((T, N, P)) < 0.3)
    ended = rng.random((T, N)) < 0.1
    bootstrap = rng.normal(size=(N, P))
    got = seat_advantages(actor, values, rewards, ended, bootstrap, 0.97, 0.9)
    np.testing.assert_allclose(got, _reference(actor, values, rewards, ended, bootstrap, 0.97, 0.9), atol=1e-12)
    assert (got[actor < 0] == 0).all()


def test_a_terminal_reward_reaches_every_seats_last_decision() -> None:
    actor = np.array([[0], [1], [0], [1]])
    rewards = np.zeros((4, 1, 2))
    rewards[3, 0] = [-1.0, 1.0]  # seat 1's move ends the game and wins it
    ended = np.array([[False], [False], [False], [True]])
    adv = seat_advantages(actor, np.zeros((4, 1)), rewards, ended, np.full((1, 2), 5.0), 1.0, 1.0)
    assert adv[:, 0].tolist() == [-1.0, 1.0, -1.0, 1.0]  # the bootstrap of 5 is never read: the game ended


def test_shapes_that_disagree_are_refused() -> None:
    with pytest.raises(ValueError, match="do not agree"):
        seat_advantages(np.zeros((3, 2), int), np.zeros((3, 2)), np.zeros((3, 2, 2)), np.zeros((3, 2), bool),
                        np.zeros((2, 3)), 0.99, 0.95)
