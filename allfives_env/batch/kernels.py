"""The batch loops: every kernel here walks the ``n`` game records once, with no Python in between.

The per-game logic lives in :mod:`.play` and :mod:`.dealing`; these are the entry points the Python
class :class:`~allfives_env.batch.engine.BatchGame` calls, one call per batch operation.
"""

from __future__ import annotations

import numpy as np
from .jit import njit

from .dealing import GOLDEN, SHIFT32, mix64, new_game, seed_streams
from .play import advance


@njit(cache=True)
def start_games(S, R, seed, first, elog) -> None:
    """Seed game ``first + i``'s stream into ``S[i]`` and deal its first episode."""
    states = np.zeros(S.shape[0], dtype=np.uint64)
    seed_streams(states, seed, first)
    for i in range(S.shape[0]):
        S[i].rng = states[i]
        S[i].episodes = 0
        new_game(S[i], R, elog)


@njit(cache=True)
def first_illegal(S, actions) -> int:
    """The index of the first live game whose action is neither legal for it nor -1 (no move), or -1."""
    for i in range(S.shape[0]):
        g = S[i]
        a = actions[i]
        if g.over or a == -1:
            continue
        ok = False
        for k in range(g.n_legal):
            if g.legal[k] == a:
                ok = True
                break
        if not ok:
            return i
    return -1


@njit(cache=True)
def step_games(S, R, actions, elog, taken) -> int:
    """Apply ``actions[i]`` to every live game ``i`` (finished games, and games given -1, are left
    alone); each decision is
    appended to that game's row of ``taken`` while it has room. Returns the most decisions any game
    has taken, so the caller can grow ``taken`` before it fills."""
    most = 0
    cap = taken.shape[1]
    for i in range(S.shape[0]):
        g = S[i]
        if g.over or actions[i] == -1:
            continue
        k = g.decisions
        if k < cap:
            taken[i, k] = actions[i]
        advance(g, R, actions[i], elog)
        most = max(most, g.decisions)
    return most


@njit(cache=True)
def fill_legal_mask(S, out) -> None:
    """``out[i, a]`` = action ``a`` is legal in game ``i`` (all False for a finished game)."""
    out[:, :] = False
    for i in range(S.shape[0]):
        g = S[i]
        for k in range(g.n_legal):
            out[i, g.legal[k]] = True


@njit(cache=True)
def restart_finished(S, R, elog) -> int:
    """Deal a new episode for every finished game from its own stream; the number restarted."""
    restarted = 0
    for i in range(S.shape[0]):
        if S[i].over:
            S[i].episodes += 1
            new_game(S[i], R, elog)
            restarted += 1
    return restarted


@njit(cache=True)
def replay_game(S, R, decisions, elog) -> None:
    """Re-run the one game in ``S`` from its episode's first state with the recorded ``decisions``,
    logging every event (its replay)."""
    g = S[0]
    g.rng = g.episode_rng
    new_game(g, R, elog)
    for k in range(decisions.shape[0]):
        if g.over:
            break
        advance(g, R, decisions[k], elog)


@njit(cache=True)
def random_actions(S, states, out) -> None:
    """A uniformly random legal action for every live game (-1 for finished ones), drawn from
    ``states[i]``, a stream of the caller's (never the game's own, which deals: a replay re-deals from
    it and must find it untouched by the players)."""
    for i in range(S.shape[0]):
        g = S[i]
        if g.over:
            out[i] = -1
            continue
        s = states[i] + GOLDEN
        states[i] = s
        out[i] = g.legal[np.int64(((mix64(s) >> SHIFT32) * np.uint64(g.n_legal)) >> SHIFT32)]
