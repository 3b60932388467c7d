"""Compiled determinized search (``pimc`` and ``oracle``): sample the hidden tiles, try every candidate
move on the guess, roll out to the end of the hand, all in one numba call per decision.

The semantics are those of :class:`allfives_env.agents.search.PIMCAgent` on the Python core, move for
move: for each of ``samples`` guesses (:func:`deal_hidden`, a port of ``sample_hidden``: each other seat
gets its known number of unseen tiles, none showing a value it is known to lack, the most constrained
seat first, the shuffle redrawn on failure and the voids dropped after ``tries`` failures) every
candidate is applied to a copy of the guess (one record copy: :mod:`.layout`), played on to the end of
the hand by the engine's own step (:func:`.play.advance`) with the rollout policy's moves
(:func:`rollout_action`), and valued as the seat's side's gain minus the mean gain of the other sides,
plus or minus ``win_bonus`` targets when the game is won in the rollout (:func:`rollout_value`). The
totals over the guesses come back to the agent, which adds its prior. The values equal the Python
search's on the same guess exactly (``tests/test_batch_search.py``).

Rollouts: ``greedy``, ``random``, ``epsilon`` and ``expert`` (:func:`expert_action`: the batch
``expert`` agent's analysis for the seat to act, reading only what that seat sees, ties to the first in
legal order so that the Python reference makes the same move). :func:`sifted_search` is the same search
with successive elimination of candidates (``pimc``'s ``min_samples``; ``pimc-sift``), and the ``expert``
prior computed in the kernel (:func:`add_expert_prior`, the Python agent's values exactly).

Randomness is the search's own splitmix64 stream (a one-element ``uint64`` state the caller seeds), so
a decision is a function of the public position and the seed alone; the Python search draws from numpy
instead, so the two engines make the same kind of choices, not bit-identical ones.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping, NamedTuple, Optional, Sequence

import numpy as np
from .jit import njit

from ..core.errors import BatchError, IllegalActionError, RulesError, short_repr
from ..core.rules import Rules
from ..core.search_constants import HIDDEN_TRIES, POINTS_OVER_PIPS
from ..core.seeds import check_seed
from ..core.values import is_finite_number, is_integer
from ..core.view import PlayerView
from .board import count_after
from .checks import integer_values, kernel_buffer
from .dealing import GOLDEN, SHIFT32, mix64
from .layout import (
    BONEYARD, DRAW_ACTION, HIGH_AT, LOW_AT, NUM_PLAYERS, NUM_SIDES, PIPS_AT, TARGET, TILE_COUNT, layout_for,
)
from .agents import EXPERT, agent_work, collect_placements, game_values, mark_best, weight_vector
from .analysis import ACTIONS
from .kernels import first_illegal, step_games
from .play import advance, side_of
from .position import position_record, public_vector, record_dtype, search_rules, sync_hand_bits, write_position

#: Rollout policies by the code the kernels take.
ROLLOUT_CODES = {"greedy": 0, "random": 1, "epsilon": 2, "expert": 3}
GREEDY, RANDOM, EPSILON, EXPERT_ROLLOUT = 0, 1, 2, 3
#: The most guesses one search call takes: the sifted search keeps every candidate's value of every
#: guess (8 bytes each), so this bounds its buffer (about 8 MB a candidate).
MAX_SAMPLES = 1_000_000
_SHIFT11 = np.uint64(11)
_TWO_TO_53 = 9007199254740992.0


# ---------------------------------------------------------------- the search's random stream
@njit(cache=True)
def next_u64(state: np.ndarray) -> np.uint64:
    """The next 64 random bits of the stream whose state is ``state[0]`` (splitmix64)."""
    s = state[0] + GOLDEN
    state[0] = s
    return mix64(s)


@njit(cache=True)
def below(state: np.ndarray, k: int) -> np.int64:
    """A uniform integer 0..k-1 (multiply-shift on 32 bits; k is small)."""
    return np.int64(((next_u64(state) >> SHIFT32) * np.uint64(k)) >> SHIFT32)


@njit(cache=True)
def uniform(state: np.ndarray) -> float:
    """A uniform float in [0, 1) with 53 random bits."""
    return np.float64(next_u64(state) >> _SHIFT11) / _TWO_TO_53


# ---------------------------------------------------------------- guessing the hidden tiles
@njit(cache=True)
def plan_hidden(g, R: np.ndarray, unseen: np.ndarray, order: np.ndarray) -> tuple[int, int]:
    """What a guess of ``g``'s hidden tiles must respect, as ``sample_hidden`` reads it: the unseen tiles
    (those of ``g`` in the boneyard, placeholders included, ascending) into ``unseen``, and the other
    seats into ``order``, the fewest allowed tiles to spare first (allowed: unseen and showing no value
    the seat is known to lack; ties by seat). Returns how many of each."""
    n = 0
    for t in range(R[TILE_COUNT]):
        if g.owner[t] == BONEYARD:
            unseen[n] = t
            n += 1
    spare = np.zeros(4, dtype=np.int64)
    k = 0
    for s in range(R[NUM_PLAYERS]):
        if s == g.current:
            continue
        allowed = 0
        for i in range(n):
            t = unseen[i]
            allowed += not (((1 << R[LOW_AT + t]) | (1 << R[HIGH_AT + t])) & g.voids[s])
        spare[s] = allowed - g.hand_count[s]
        j = k  # a stable insertion: equal keys keep the seat order
        while j > 0 and spare[order[j - 1]] > spare[s]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = s
        k += 1
    return n, k


@njit(cache=True)
def deal_hidden(g, R: np.ndarray, unseen: np.ndarray, order: np.ndarray, pool: np.ndarray, state: np.ndarray,
                tries: int) -> bool:
    """Deal the ``unseen`` tiles into the hands of the seats in ``order`` and the boneyard of ``g`` at
    random: seat ``s`` gets ``g.hand_count[s]`` tiles, none showing a value of ``g.voids[s]``, the seats
    filled in ``order`` from one shuffle (each taking the first tiles it may hold), the shuffle redrawn
    when a seat cannot be filled and the voids ignored on the last of ``tries + 1`` attempts; what is
    left is the boneyard, in the shuffled order. False when even that fails (inconsistent sizes)."""
    n = unseen.shape[0]
    for attempt in range(tries + 1):
        relax = attempt == tries
        for k in range(n):
            pool[k] = unseen[k]
        for k in range(n - 1, 0, -1):
            j = below(state, k + 1)
            tmp = pool[k]
            pool[k] = pool[j]
            pool[j] = tmp
        left = n
        ok = True
        for s in order:
            need = g.hand_count[s]
            void = 0 if relax else g.voids[s]
            kept = 0
            for i in range(left):
                t = pool[i]
                if need and not (((1 << R[LOW_AT + t]) | (1 << R[HIGH_AT + t])) & void):
                    g.owner[t] = s
                    need -= 1
                else:
                    pool[kept] = t
                    kept += 1
            left = kept
            if need:
                ok = False
                break
        if ok:
            if left != R[TILE_COUNT] - g.next_draw:
                return False
            for k in range(left):
                g.deal[g.next_draw + k] = pool[k]
                g.owner[pool[k]] = BONEYARD
            sync_hand_bits(g, R)
            return True
    return False


# ---------------------------------------------------------------- rollouts
@njit(cache=True)
def greedy_action(g, R: np.ndarray) -> np.int64:
    """The greedy rollout's move: the most points now (a count that is a multiple of 5), ties to the
    heaviest tile, the first such in the legal order; "draw" is never chosen."""
    draw = R[DRAW_ACTION]
    best_key = -1
    best = np.int64(g.legal[0])
    for k in range(g.n_legal):
        a = np.int64(g.legal[k])
        if a == draw:
            continue
        tile = a >> 2
        c = count_after(g.board, tile, a & 3, R[LOW_AT:HIGH_AT], R[HIGH_AT:PIPS_AT])
        key = (c if c % 5 == 0 else 0) * POINTS_OVER_PIPS + R[PIPS_AT + tile]
        if key > best_key:
            best_key = key
            best = a
    return best


@njit(cache=True)
def expert_action(g, R: np.ndarray, X) -> np.int64:
    """The ``expert`` agent's move for the seat to act in ``g``, from what that seat sees (the other hands
    of a guess are unseen to it, as in play): the draw when it is all that is legal, a single placement as
    it is, else the first in legal order of its best placements by (value, tile pips). ``X``:
    :attr:`SearchKit.expert`. Deterministic, so the Python reference makes the same move."""
    W, ints, floats, after, rows, values, tied = X
    m = collect_placements(g, R, ints[ACTIONS])
    if m == 0:
        return np.int64(g.legal[0])
    if m > 1:
        game_values(g, R, EXPERT, W, ints, floats, after, rows, values)
        mark_best(R, ints[ACTIONS], values, m, tied)
        for j in range(m):
            if tied[j]:
                return np.int64(ints[ACTIONS, j])
    return np.int64(ints[ACTIONS, 0])


@njit(cache=True)
def rollout_action(g, R: np.ndarray, policy: int, epsilon: float, state: np.ndarray, X) -> np.int64:
    """The rollout policy's move in ``g``: a forced move as it is; else ``random`` picks uniformly,
    ``epsilon`` does so with probability ``epsilon`` and is greedy otherwise, ``greedy`` always is, and
    ``expert`` plays :func:`expert_action`."""
    n = g.n_legal
    if n == 1:
        return np.int64(g.legal[0])
    if policy == EXPERT_ROLLOUT:
        return expert_action(g, R, X)
    if policy == RANDOM or (policy == EPSILON and uniform(state) < epsilon):
        return np.int64(g.legal[below(state, n)])
    return greedy_action(g, R)


@njit(cache=True)
def rollout_value(g, R: np.ndarray, before: np.ndarray, seat: int, win_bonus: float) -> float:
    """``seat``'s side's gain since ``before`` minus the mean gain of the other sides, plus ``win_bonus``
    targets for a game won in the rollout (minus for one lost): the core's reward rule
    (:func:`~allfives_env.core.outcome.side_rewards`, ``"points"`` plus ``win_bonus`` times the target times
    ``"win"``) compiled; ``tests/test_reward_rule.py`` holds the two equal."""
    sides = R[NUM_SIDES]
    side = side_of(R, seat)
    total = 0
    mine = 0
    for s in range(sides):
        gain = g.scores[s] - before[s]
        total += gain
        if s == side:
            mine = gain
    value = mine - (total - mine) / (sides - 1)
    if g.winner >= 0:
        value += win_bonus * R[TARGET] * (1 if g.winner == side else -1)
    return value


@njit(cache=True)
def play_out(S, R, action, policy, epsilon, state, X, elog, before, seat, win_bonus) -> float:
    """Play ``action`` on a copy (``S[2]``) of the guess ``S[1]``, then the rollout policy to the end of
    the hand; the :func:`rollout_value` for ``seat``."""
    S[2] = S[1]
    g = S[2]
    advance(g, R, action, elog)
    while not g.over:
        advance(g, R, rollout_action(g, R, policy, epsilon, state, X), elog)
    return rollout_value(g, R, before, seat, win_bonus)


@njit(cache=True)
def hidden_plan(g, R: np.ndarray):
    """What a guess of ``g``'s hidden tiles is dealt from (:func:`plan_hidden`): the unseen tiles, the
    other seats in filling order, and a shuffle buffer for :func:`deal_hidden`."""
    unseen = np.empty(R[TILE_COUNT], dtype=np.int64)
    order = np.empty(4, dtype=np.int64)
    pool = np.empty(R[TILE_COUNT], dtype=np.int64)
    n, k = plan_hidden(g, R, unseen, order)
    return unseen[:n], order[:k], pool


@njit(cache=True)
def start_search(S, R: np.ndarray, pub: np.ndarray):
    """Write the position of ``pub`` into ``S[0]``; returns the seat to act, the sides' scores before the
    search (what :func:`rollout_value` counts gains from) and the :func:`hidden_plan` of the position."""
    write_position(S[0], R, pub)
    before = np.zeros(4, dtype=np.int64)
    for s in range(R[NUM_SIDES]):
        before[s] = S[0].scores[s]
    unseen, order, pool = hidden_plan(S[0], R)
    return S[0].current, before, unseen, order, pool


@njit(cache=True)
def next_guess(S, R, deal, unseen, order, pool, state, tries) -> bool:
    """``S[1]`` = a fresh guess of the hidden tiles of ``S[0]`` (``S[0]`` as it is without ``deal``);
    False when they cannot be dealt."""
    S[1] = S[0]
    return not deal or deal_hidden(S[1], R, unseen, order, pool, state, tries)


@njit(cache=True)
def search_totals(S, R, pub, candidates, samples, deal, policy, epsilon, win_bonus, state, tries, elog,
                  totals, X) -> bool:
    """Add to ``totals[i]`` the rollout values of ``candidates[i]`` over ``samples`` guesses of the
    position of the public vector ``pub`` (written into ``S[0]``; guessed into ``S[1]`` when ``deal``,
    else taken as it is), each candidate played on a copy (``S[2]``). False when the hidden tiles could
    not be dealt."""
    seat, before, unseen, order, pool = start_search(S, R, pub)
    for _ in range(samples):
        if not next_guess(S, R, deal, unseen, order, pool, state, tries):
            return False
        for i in range(candidates.shape[0]):
            totals[i] += play_out(S, R, candidates[i], policy, epsilon, state, X, elog, before, seat, win_bonus)
    return True


@njit(cache=True)
def add_expert_prior(S, R, candidates, weight, X, prior) -> None:
    """Add ``weight`` times the ``expert`` agent's value of each placement among ``candidates`` in the
    position ``S[0]`` to ``prior`` (the same values as the Python ``ExpertAgent.evaluate``; a draw gets
    none)."""
    W, ints, floats, after, rows, values, tied = X
    m = game_values(S[0], R, EXPERT, W, ints, floats, after, rows, values)
    for i in range(candidates.shape[0]):
        for j in range(m):
            if ints[ACTIONS, j] == candidates[i]:
                prior[i] += weight * values[j]


@njit(cache=True)
def sifted_search(S, R, pub, candidates, prior, expert_weight, min_samples, max_samples, z, delta, deal, policy,
                  epsilon, win_bonus, state, tries, elog, X, sampled, alive, means) -> int:
    """Successive elimination over guesses, for ``pimc`` with ``min_samples``: each guess is dealt as in
    :func:`search_totals` and every candidate still in the running (``alive``) is played out on it.
    After every ``min_samples`` guesses the leader is the live candidate with the best mean plus
    ``prior``; another is dropped once its paired difference with the leader, plus the indifference
    margin ``delta``, is above ``z`` standard errors (it is worse, or at most ``delta`` better, with
    confidence). The search stops when one candidate is left or after ``max_samples`` guesses, so clear
    decisions cost a few guesses and close ones the most.

    ``prior`` (per candidate; ``expert_weight`` times the expert's values is added to it first, see
    :func:`add_expert_prior`) is updated in place; ``sampled[k, i]`` receives candidate i's value on guess
    k, ``means[i]`` its mean over the guesses it saw. Returns the guesses dealt, -1 when the hidden tiles
    could not be dealt."""
    seat, before, unseen, order, pool = start_search(S, R, pub)
    if expert_weight != 0.0:
        add_expert_prior(S, R, candidates, expert_weight, X, prior)
    c = candidates.shape[0]
    alive[:] = True
    left = c
    totals = np.zeros(c, dtype=np.float64)
    seen = np.zeros(c, dtype=np.int64)
    used = 0
    while used < max_samples and left > 1:
        if not next_guess(S, R, deal, unseen, order, pool, state, tries):
            return -1
        for i in range(c):
            if alive[i]:
                v = play_out(S, R, candidates[i], policy, epsilon, state, X, elog, before, seat, win_bonus)
                sampled[used, i] = v
                totals[i] += v
                seen[i] += 1
        used += 1
        if used % min_samples == 0:
            left -= eliminate(sampled, used, totals, prior, alive, z, delta)
    for i in range(c):
        means[i] = totals[i] / seen[i] if seen[i] else 0.0
    return used


@njit(cache=True)
def eliminate(sampled, used, totals, prior, alive, z, delta) -> int:
    """One round of :func:`sifted_search`'s elimination over the first ``used`` guesses (every live
    candidate saw all of them); how many candidates it dropped."""
    c = totals.shape[0]
    best = -1
    for i in range(c):
        if alive[i] and (best < 0 or totals[i] / used + prior[i] > totals[best] / used + prior[best]):
            best = i
    dropped = 0
    for j in range(c):
        if not alive[j] or j == best:
            continue
        mean = 0.0
        for q in range(used):
            mean += sampled[q, best] - sampled[q, j]
        mean /= used
        var = 0.0
        for q in range(used):
            d = sampled[q, best] - sampled[q, j] - mean
            var += d * d
        var /= max(used - 1, 1)
        margin = mean + prior[best] - prior[j] + delta
        if margin > 0 and margin * margin * used > z * z * var:
            alive[j] = False
            dropped += 1
    return dropped


@njit(cache=True)
def deal_first(S, R: np.ndarray, state: np.ndarray, tries: int) -> bool:
    """One guess of the hidden tiles of the record ``S[0]``, dealt into it (for callers outside the search)."""
    unseen, order, pool = hidden_plan(S[0], R)
    return deal_hidden(S[0], R, unseen, order, pool, state, tries)


# ---------------------------------------------------------------- the Python face
class SearchKit(NamedTuple):
    """What the kernels need for one rules object: the search rules vector (with the tile tables), the
    (empty) replay log and three records to work in (used inside one compiled call at a time)."""

    R: np.ndarray
    no_log: np.ndarray
    work: np.ndarray
    #: the ``expert`` rollout's weights and work arrays: (W, ints, floats, after, rows, values, tied)
    expert: tuple


@lru_cache(maxsize=64)
def search_kit(rules: Rules) -> SearchKit:
    """The :class:`SearchKit` of ``rules`` (built once per rules object)."""
    layout = layout_for(rules)
    no_log = np.zeros((0, layout.log_width), np.int32)
    work, values, tied = agent_work(layout)
    expert = (weight_vector(), work.ints, work.floats, work.after, work.rows, values, tied)
    return SearchKit(search_rules(rules), no_log, np.zeros(3, dtype=layout.dtype), expert)


def _checked_view(view: Any) -> PlayerView:
    """``view`` when it is a :class:`PlayerView` (the search reads its public API), else a :class:`BatchError`."""
    if not isinstance(view, PlayerView):
        raise BatchError(f"the search needs a PlayerView (a player's view of a game); got {short_repr(view)}")
    return view


def _checked_candidates(view: PlayerView, candidates: Any) -> np.ndarray:
    """``candidates`` as distinct legal action ids of ``view.seat`` (int64), or a clear error: the kernels
    index the position's tables with them."""
    try:
        count = len(candidates)
    except TypeError:
        raise BatchError(f"candidates must be a sequence of legal action ids; got {short_repr(candidates)}") from None
    acts = integer_values(candidates, "candidates", (count,), error=IllegalActionError)
    legal = set(view.legal)
    if not count or len(set(acts.tolist())) != count or not legal.issuperset(acts.tolist()):
        raise IllegalActionError(f"candidates must be distinct legal actions of seat {view.seat} (at least one); "
                                 f"got {acts.tolist()}, legal: {sorted(legal)}")
    return acts


def _checked_count(value: Any, name: str, low: int) -> int:
    """``value`` as an int from ``low`` to :data:`MAX_SAMPLES`, or a :class:`BatchError`."""
    if not is_integer(value) or not low <= value <= MAX_SAMPLES:
        raise BatchError(f"{name}={short_repr(value)} is not allowed: give an integer from {low} to {MAX_SAMPLES}")
    return int(value)


def _checked_real(value: Any, name: str) -> float:
    """``value`` as a finite float, or a :class:`BatchError`."""
    if not is_finite_number(value):
        raise BatchError(f"{name}={short_repr(value)} is not allowed: give a finite number")
    return float(value)


def _search_inputs(view: Any, candidates: Any, rollout: Any, epsilon: Any, win_bonus: Any, seed: Any,
                   hidden: Any) -> tuple[SearchKit, np.ndarray, np.ndarray, float, float, np.ndarray]:
    """The checked arguments both searches share: the kit, the public vector, the candidates, epsilon,
    win_bonus and the seeded stream."""
    view = _checked_view(view)
    if not isinstance(rollout, str) or rollout not in ROLLOUT_CODES:
        raise BatchError(f"rollout={short_repr(rollout)} is not allowed: choose one of {list(ROLLOUT_CODES)}")
    acts = _checked_candidates(view, candidates)
    epsilon = _checked_real(epsilon, "epsilon")
    if not 0.0 <= epsilon <= 1.0:
        raise BatchError(f"epsilon={epsilon!r} is not allowed: give a probability from 0 to 1")
    win_bonus = _checked_real(win_bonus, "win_bonus")
    state = np.array([check_seed(seed, allow_none=False)], dtype=np.uint64)
    if hidden is None:
        pub = public_vector(view)
    elif isinstance(hidden, tuple) and len(hidden) == 2:
        pub = public_vector(view, hidden[0], hidden[1])
    else:
        raise BatchError(f"hidden must be None or (other_hands, boneyard); got {short_repr(hidden)}")
    return search_kit(view.rules), pub, acts, epsilon, win_bonus, state


def guess_position(view: PlayerView, seed: int = 0) -> np.ndarray:
    """The position ``view.seat`` sees as a one-game record array (:func:`.position.position_record`)
    with the hidden tiles dealt by one guess of the compiled sampler, from the stream seeded ``seed``."""
    view = _checked_view(view)
    state = np.array([check_seed(seed, allow_none=False)], dtype=np.uint64)
    kit = search_kit(view.rules)
    rec = position_record(view)
    if not deal_first(rec, kit.R, state, HIDDEN_TRIES):
        raise RuntimeError("could not deal the hidden tiles: hand sizes exceed the unseen tiles")  # pragma: no cover
    return rec


def step_position(rec: np.ndarray, rules: Rules, action: int) -> None:
    """Apply the legal decision ``action`` to the one-game record array ``rec`` under the search rules
    of ``rules`` (play stops at the end of the hand), as ``Game.step`` would on a fork. ``rec`` must be
    a record this module made (:func:`guess_position`, :func:`.position.position_record`) under the
    same rules; an action that is not legal in it is an :class:`IllegalActionError` and changes nothing."""
    if not isinstance(rules, Rules):
        raise RulesError(f"rules must be a Rules object, got {short_repr(rules)}")
    rec = kernel_buffer(rec, "rec (a one-game record)", (1,), record_dtype(rules.max_pip))
    acts = integer_values([action], "action", (1,), error=IllegalActionError)
    if rec[0]["over"] or first_illegal(rec, acts) >= 0:
        legal = sorted(int(a) for a in rec[0]["legal"][:rec[0]["n_legal"]]) if not rec[0]["over"] else []
        raise IllegalActionError(f"action {int(action)} is not legal in this position; legal actions: {legal}")
    kit = search_kit(rules)
    step_games(rec, kit.R, acts, kit.no_log, np.zeros((1, 0), dtype=np.int16))


def search_values(view: PlayerView, candidates: Sequence[int], samples: int, rollout: str = "greedy",
                  epsilon: float = 0.1, win_bonus: float = 1.0, seed: int = 0,
                  hidden: Optional[tuple[Mapping[int, int], Sequence[int]]] = None) -> np.ndarray:
    """The summed rollout values of each of ``candidates`` (legal actions of ``view.seat``, to act) over
    ``samples`` guesses of the hidden tiles, from the search stream seeded ``seed``. ``hidden`` (other
    hands as masks, the boneyard, index 0 drawn next) fixes the hidden part instead of guessing it: the
    oracle's true tiles. Every argument is checked before the kernel runs (typed errors)."""
    kit, pub, acts, epsilon, win_bonus, state = _search_inputs(view, candidates, rollout, epsilon, win_bonus,
                                                               seed, hidden)
    samples = _checked_count(samples, "samples", 1)
    totals = np.zeros(len(acts), dtype=np.float64)
    ok = search_totals(kit.work, kit.R, pub, acts, samples, hidden is None, ROLLOUT_CODES[rollout],
                       epsilon, win_bonus, state, HIDDEN_TRIES, kit.no_log, totals, kit.expert)
    if not ok:
        raise RuntimeError("could not deal the hidden tiles: hand sizes exceed the unseen tiles")  # pragma: no cover
    return totals


class Sifted(NamedTuple):
    """What :func:`sifted_values` found: per candidate its mean rollout value, its prior (the one given
    plus the expert's) and whether it survived; and how many guesses were dealt."""

    means: np.ndarray
    prior: np.ndarray
    alive: np.ndarray
    guesses: int


def sifted_values(view: PlayerView, candidates: Sequence[int], prior: Sequence[float], min_samples: int,
                  max_samples: int, z: float, delta: float, rollout: str = "expert", epsilon: float = 0.1,
                  win_bonus: float = 1.0, seed: int = 0, expert_weight: float = 0.0,
                  hidden: Optional[tuple[Mapping[int, int], Sequence[int]]] = None) -> Sifted:
    """The successive-elimination search (:func:`sifted_search`) of ``candidates`` for ``view.seat``:
    ``prior`` per candidate, plus ``expert_weight`` times the expert's values computed in the kernel;
    ``hidden`` fixes the hidden tiles as for :func:`search_values`. Every argument is checked before the
    kernel runs (typed errors)."""
    kit, pub, acts, epsilon, win_bonus, state = _search_inputs(view, candidates, rollout, epsilon, win_bonus,
                                                               seed, hidden)
    c = len(acts)
    min_samples = _checked_count(min_samples, "min_samples", 1)
    max_samples = _checked_count(max_samples, "max_samples", min_samples)
    z, delta, expert_weight = (_checked_real(v, name) for v, name in
                               ((z, "z"), (delta, "delta"), (expert_weight, "expert_weight")))
    try:
        priors = np.array(prior, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        priors = None
    if priors is None or priors.shape != (c,) or not np.isfinite(priors).all():
        raise BatchError(f"prior must be {c} finite numbers, one per candidate; got {short_repr(prior)}")
    sampled = np.empty((max_samples, c), dtype=np.float64)
    alive = np.ones(c, dtype=np.bool_)
    means = np.zeros(c, dtype=np.float64)
    used = sifted_search(kit.work, kit.R, pub, acts, priors, expert_weight, min_samples, max_samples,
                         z, delta, hidden is None, ROLLOUT_CODES[rollout], epsilon, win_bonus,
                         state, HIDDEN_TRIES, kit.no_log, kit.expert, sampled, alive, means)
    if used < 0:
        raise RuntimeError("could not deal the hidden tiles: hand sizes exceed the unseen tiles")  # pragma: no cover
    return Sifted(means, priors, alive, used)
