"""Batch agents: ``random``, ``greedy`` and ``expert`` choosing a move in every live game of a batch at once.

Each is the compiled twin of the Python agent of the same name (:mod:`allfives_env.agents.basic`,
:mod:`allfives_env.agents.expert`): for every game it computes the values the Python agent computes, bit
for bit (greedy: the points a placement scores now; expert: the weighted sum of
:meth:`~allfives_env.agents.expert.ExpertAgent.evaluate`, the same float64 operations in the same
order, over the compiled placement analysis of :mod:`.analysis`), ranks the placements by (value, tile
pips) as :func:`~allfives_env.agents.basic.choose_best` does, and so finds the same tied-best set. Only
the last tie-break differs: the Python agent draws from its numpy generator, a batch agent from its own
splitmix64 stream per game (never the game's own stream, which deals), seeded from ``(seed, game
index)``: the same seed gives the same choices. Like the Python agents, greedy and expert draw only when
drawing is the only legal action, and a single placement is taken without a draw from the stream.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
from .jit import njit

from ..core.errors import AgentError, BatchError, SeedError, short_repr
from ..core.seeds import MAX_SEED
from ..core.values import is_integer
from ..expert_weights import DEFAULT_WEIGHTS, DOMINO_PRIORITY, MOBILITY_CAP, WIN_PRIORITY
from . import kernels
from .analysis import (
    ACTIONS, BLOCK, BUF, DENY, DOMINO, DOUBLE, FIT, FOLLOW, KIND, MATE, NOW, PIPS, SHOWN, WINS, Work, make_work,
    placement_rows,
)
from .board import count_after
from .checks import MAX_GAMES, batch_game
from .dealing import GOLDEN, SHIFT32, mix64, seed_streams
from .layout import B_SIZE, DRAW_ACTION, HIGH_AT, LOW_AT, PIPS_AT, SCORE_UNIT, BatchLayout
from .play import points_for_count

#: The compiled agents, by name; the index is the kind the kernels read. Which registered agents play in
#: a batch is the agent registry's to say (``has_batch_twin``): each of these is registered there as the
#: batch twin of its Python agent (:func:`build_batch_twin`).
BATCH_AGENTS = ("random", "greedy", "expert")
RANDOM, GREEDY, EXPERT = range(3)
#: The expert's weights in the order of the weight vector the kernels read.
WEIGHT_NAMES = tuple(DEFAULT_WEIGHTS)
(W_SCORE, W_DENY, W_TARGET, W_DANGER, DANGER_MARGIN, W_BLOCK, W_FOLLOW, W_MOBILITY, W_VARIETY, W_PIPS,
 W_PIPS_LATE, W_DOUBLE, LATE_HAND, W_PARTNER) = (WEIGHT_NAMES.index(name) for name in (
    "w_score", "w_deny", "w_target", "w_danger", "danger_margin", "w_block", "w_follow", "w_mobility", "w_variety",
    "w_pips", "w_pips_late", "w_double", "late_hand", "w_partner"))
#: Mixed into the seed, so that an agent seeded like its batch draws from other streams than the deals.
_STREAM_SALT = np.uint64(0xA5A5_3C3C_0F0F_9696)


def weight_vector(weights: Optional[dict[str, float]] = None) -> np.ndarray:
    """The expert's weights as the kernels read them (:data:`WEIGHT_NAMES` order), defaults filled in."""
    weights = weights or {}
    return np.array([weights.get(k, DEFAULT_WEIGHTS[k]) for k in WEIGHT_NAMES], dtype=np.float64)


def agent_work(layout: BatchLayout) -> tuple[Work, np.ndarray, np.ndarray]:
    """Work arrays for valuing the placements of one game at a time in the set of ``layout``: the
    analysis' (:func:`.analysis.make_work`), the values and the tied-best flags."""
    work = make_work(layout)
    legal = work.rows.shape[0]
    return work, np.zeros(legal, np.float64), np.zeros(legal, np.bool_)


@njit(cache=True)
def collect_placements(g, R: np.ndarray, actions: np.ndarray) -> int:
    """The legal placements (the draw action left out) of the seat to act into ``actions``; how many."""
    m = 0
    for k in range(g.n_legal):
        a = g.legal[k]
        if a != R[DRAW_ACTION]:
            actions[m] = a
            m += 1
    return m


@njit(cache=True)
def expert_value(row: np.ndarray, W: np.ndarray, unit: int, deny_w: float, pip_w: float, double_w: float) -> float:
    """One placement's value from its feature row, as :meth:`ExpertAgent.evaluate` adds it up."""
    kind = row[KIND]
    if kind == WINS:
        return WIN_PRIORITY + row[NOW]
    if kind == DOMINO:
        return DOMINO_PRIORITY + row[NOW]
    value = W[W_SCORE] * row[NOW] * unit + pip_w * row[PIPS] + (double_w if row[DOUBLE] else 0.0)
    value -= deny_w * row[DENY]
    value += W[W_BLOCK] * row[BLOCK]
    value += W[W_PARTNER] * row[MATE]
    if row[FOLLOW]:
        value += W[W_FOLLOW] * row[FOLLOW] * unit
    value += W[W_MOBILITY] * min(row[FIT], MOBILITY_CAP)
    value += W[W_VARIETY] * row[SHOWN]
    return value


@njit(cache=True)
def game_values(g, R, kind, W, ints, floats, after, rows, values) -> int:
    """The values of the seat to act's placements ``ints[ACTIONS, :m]`` into ``values[:m]``; returns m.
    Greedy: the points each scores now; expert: :func:`expert_value` (random: zeros)."""
    seat = g.current
    m = collect_placements(g, R, ints[ACTIONS])
    if kind == EXPERT and m:
        opp_room, smallest = placement_rows(g, R, seat, m, W[W_TARGET], W[W_PARTNER] != 0.0, ints, floats, after,
                                            rows)
        unit = R[SCORE_UNIT]
        danger = opp_room * unit <= W[DANGER_MARGIN]
        deny_w = W[W_DENY] * (1.0 + (W[W_DANGER] if danger else 0.0))
        late = smallest <= W[LATE_HAND]
        pip_w = W[W_PIPS_LATE] if late else W[W_PIPS]
        double_w = 0.0 if late else W[W_DOUBLE]
        for j in range(m):
            values[j] = expert_value(rows[j], W, unit, deny_w, pip_w, double_w)
    elif kind == GREEDY:
        b = g.board
        is_lead = b[B_SIZE] == 0
        low = R[LOW_AT:HIGH_AT]
        high = R[HIGH_AT:PIPS_AT]
        for j in range(m):
            a = ints[ACTIONS, j]
            values[j] = points_for_count(g, R, seat, count_after(b, a >> 2, a & 3, low, high), is_lead)
    else:
        values[:m] = 0.0
    return m


@njit(cache=True)
def mark_best(R: np.ndarray, actions: np.ndarray, values: np.ndarray, m: int, tied: np.ndarray) -> int:
    """``tied[j]`` = placement j ranks first by (value, tile pips), as ``choose_best`` ranks; how many do."""
    best = 0
    for j in range(1, m):
        v, p = values[j], R[PIPS_AT + (actions[j] >> 2)]
        bv, bp = values[best], R[PIPS_AT + (actions[best] >> 2)]
        if v > bv or (v == bv and p > bp):
            best = j
    bv, bp = values[best], R[PIPS_AT + (actions[best] >> 2)]
    k = 0
    for j in range(m):
        tied[j] = values[j] == bv and R[PIPS_AT + (actions[j] >> 2)] == bp
        k += 1 if tied[j] else 0
    return k


@njit(cache=True)
def pick_tied(actions: np.ndarray, tied: np.ndarray, m: int, k: int, states: np.ndarray, i: int,
              buf: np.ndarray) -> int:
    """One of the ``k`` tied placements, uniformly from game ``i``'s stream (the ties taken in ascending
    action order, so the choice depends on the position only)."""
    n = 0
    for j in range(m):
        if tied[j]:
            a = actions[j]
            x = n
            while x > 0 and buf[x - 1] > a:
                buf[x] = buf[x - 1]
                x -= 1
            buf[x] = a
            n += 1
    if k == 1:
        return buf[0]
    s = states[i] + GOLDEN
    states[i] = s
    return buf[np.int64(((mix64(s) >> SHIFT32) * np.uint64(k)) >> SHIFT32)]


@njit(cache=True)
def act_games(S, R, kind, W, states, out, ints, floats, after, rows, values, tied) -> None:
    """``out[i]`` = the agent's move in game ``i`` (-1 where the game is over): the draw when it is all
    that is legal, a single placement as it is, else one of the best placements."""
    for i in range(S.shape[0]):
        g = S[i]
        if g.over:
            out[i] = -1
            continue
        m = collect_placements(g, R, ints[ACTIONS])
        if m == 0:
            out[i] = g.legal[0]
            continue
        if m == 1:
            out[i] = ints[ACTIONS, 0]
            continue
        game_values(g, R, kind, W, ints, floats, after, rows, values)
        k = mark_best(R, ints[ACTIONS], values, m, tied)
        out[i] = pick_tied(ints[ACTIONS], tied, m, k, states, i, ints[BUF])


@njit(cache=True)
def evaluate_games(S, R, kind, W, actions, values, tied, ints, floats, after, rows) -> None:
    """Per game: its placements (``actions[i, :m]``, -1 after), their values and whether each is among
    the best (``tied``); nothing for a finished game."""
    actions[:, :] = -1
    values[:, :] = np.nan
    tied[:, :] = False
    for i in range(S.shape[0]):
        g = S[i]
        if g.over:
            continue
        if kind == RANDOM:  # every legal action, the draw too, is equally likely
            for k in range(g.n_legal):
                actions[i, k] = g.legal[k]
                values[i, k] = 0.0
                tied[i, k] = True
            continue
        m = game_values(g, R, kind, W, ints, floats, after, rows, values[i])
        actions[i, :m] = ints[ACTIONS, :m]
        if m:
            mark_best(R, actions[i], values[i], m, tied[i])


class BatchAgent:
    """A batch agent for batches of ``n`` games (:func:`make_batch_agent` builds one).

    :meth:`act` gives one move per game; :meth:`values` the values and tied-best placements behind it.
    """

    #: Every move is read from the game's own legal list (the kernels pick an index into it), so a front end
    #: may apply them with :meth:`~.engine.BatchGame.step_legal`, without a second legality scan.
    legal_by_construction = True

    def __init__(self, name: str, seed: int, n: int, weights: Optional[dict[str, float]] = None) -> None:
        """Checked arguments only: :func:`make_batch_agent` checks them."""
        self.name = name
        self.kind = BATCH_AGENTS.index(name)
        self.n = n
        self.weights = dict(weights or {})
        self.W = weight_vector(self.weights)
        self.states = np.zeros(n, dtype=np.uint64)
        self.reset(seed)
        self._work: dict[int, tuple[Work, np.ndarray, np.ndarray]] = {}

    def reset(self, seed: int) -> None:
        """Restart every game's tie-break stream from ``seed``."""
        self.seed = _checked_seed(seed)
        seed_streams(self.states, np.uint64(self.seed) ^ _STREAM_SALT, np.uint64(0))

    def _work_for(self, batch: Any) -> tuple[Work, np.ndarray, np.ndarray]:
        """The work arrays for the batch's set (made once per set), after checking the batch's size."""
        batch = batch_game(batch, f"the {self.name} batch agent")
        if batch.n != self.n:
            raise BatchError(f"this {self.name} batch agent was made for {self.n} games; the batch has {batch.n}")
        max_pip = batch.rules.max_pip
        if max_pip not in self._work:
            self._work[max_pip] = agent_work(batch.layout)
        return self._work[max_pip]

    def act(self, batch: Any) -> np.ndarray:
        """int64 (n,): the move of every live game's seat to act, -1 for a finished game."""
        work, values, tied = self._work_for(batch)
        out = np.empty(self.n, dtype=np.int64)
        if self.kind == RANDOM:
            kernels.random_actions(batch.S, self.states, out)
        else:
            act_games(batch.S, batch.rules_vector, self.kind, self.W, self.states, out, work.ints, work.floats,
                      work.after, work.rows, values, tied)
        return out

    def values(self, batch: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per game, its legal placements (int64 (n, L), -1 after the last), the agent's value of each
        (float64, NaN after the last) and the tied-best ones (bool): the set the agent's move is drawn
        from when more than one placement is legal. ``random``: every legal action (the draw too), value
        0, all tied. Uses no random stream."""
        work, _, _ = self._work_for(batch)
        L = work.rows.shape[0]
        actions = np.empty((self.n, L), dtype=np.int64)
        values = np.empty((self.n, L), dtype=np.float64)
        tied = np.empty((self.n, L), dtype=np.bool_)
        evaluate_games(batch.S, batch.rules_vector, self.kind, self.W, actions, values, tied, work.ints, work.floats,
                       work.after, work.rows)
        return actions, values, tied

    def __repr__(self) -> str:
        """The agent's name and batch size."""
        return f"<BatchAgent {self.name} n={self.n}>"


def _checked_seed(seed: Any) -> int:
    """``seed`` as an int 0..2**63-1, or a :class:`SeedError`."""
    if not is_integer(seed) or not 0 <= seed <= MAX_SEED:
        raise SeedError(f"seed={short_repr(seed)} is not allowed: give an integer from 0 to 2**63-1")
    return int(seed)


def make_batch_agent(name: str, seed: int, n: int, **weights: Any) -> BatchAgent:
    """The batch agent ``name`` (one of :data:`BATCH_AGENTS`) for batches of ``n`` games, its tie-breaks
    seeded by ``seed``; ``expert`` takes the keyword weights of :class:`~allfives_env.agents.expert.
    ExpertAgent` (finite numbers). Unknown names and weights raise :class:`~allfives_env.agents.registry.
    AgentError` naming what is allowed."""
    if not isinstance(name, str) or name not in BATCH_AGENTS:
        raise AgentError(f"unknown batch agent {short_repr(name)}; batch agents: {list(BATCH_AGENTS)}")
    if not is_integer(n) or not 1 <= n <= MAX_GAMES:
        raise BatchError(f"n={short_repr(n)} is not allowed: give the number of games of the batch, an integer 1..{MAX_GAMES}")
    if weights and name != "expert":
        raise AgentError(f"batch agent {name!r} takes no parameters; got {sorted(weights)}")
    checked = {}
    for key, value in weights.items():
        if key not in DEFAULT_WEIGHTS:
            raise AgentError(f"batch agent 'expert' takes no parameter {short_repr(key)}; it takes {list(WEIGHT_NAMES)}")
        ok = (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
              and math.isfinite(value))
        if not ok:
            raise AgentError(f"batch agent 'expert': {key}={short_repr(value)} is not allowed: give a finite number")
        checked[key] = float(value)
    return BatchAgent(name, _checked_seed(seed), int(n), checked)


def build_batch_twin(name: str, params: dict[str, Any], rules: Any, n: int, seed: int) -> BatchAgent:
    """The agent registry's batch twin of ``random``, ``greedy`` and ``expert`` (``batch=`` on their
    registration line): the compiled agent of that name, its parameters (the expert's weights) as given.
    ``rules`` is not needed: the kernels read each batch's rules as it plays."""
    return make_batch_agent(name, seed, n, **params)
