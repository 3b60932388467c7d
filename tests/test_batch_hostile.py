"""The batch engine under hostile input: no public call writes outside an array, crashes the process, or
leaves a game changed when it refuses.

numba does no bounds checks, so each public call checks its arrays before a kernel sees them
(``allfives_env/batch/checks.py``). The regression tests below are the calls that once wrote past an
array's end or were misread; the hypothesis test drives every public method of ``BatchGame``,
``BatchObserver`` and the batch agents with random shapes, dtypes, memory layouts and values, and
accepts only the package's typed errors, with every game's state (and decision log) unchanged after a
refused call. ``tests/test_batch_boundscheck.py`` runs this module again with ``NUMBA_BOUNDSCHECK=1``,
where any stray index would raise ``IndexError`` instead of corrupting memory.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allfives_env.batch import BatchGame
from allfives_env.batch import engine as batch_engine
from allfives_env.batch import kernels
from allfives_env.batch.agents import BATCH_AGENTS, make_batch_agent
from allfives_env.batch.observe import BatchObserver
from allfives_env.core import Rules
from allfives_env.core.errors import AllFivesError, BatchError, IllegalActionError
from allfives_env.core.replay import load_replay
from helpers import same_state

N = 3  # games per batch in the property test: small, so a wrong size is easy to hit
HOSTILE = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                   derandomize=True, database=None, max_examples=int(os.environ.get("ALLFIVES_HOSTILE_EXAMPLES", 120)))


# ---------------------------------------------------------------- the calls that once wrote outside
def test_a_short_out_or_states_array_is_refused_before_any_write() -> None:
    batch = BatchGame(Rules(), 64, 0)
    before = batch.S.copy()
    with pytest.raises(BatchError, match=r"out must be .* shape \(64, 112\).*shape \(1, 112\)"):
        batch.legal_mask(np.zeros((1, 112), bool))
    with pytest.raises(BatchError, match=r"states must be .* uint64 .* shape \(64,\).*shape \(2,\)"):
        batch.random_actions(np.zeros(2, np.uint64))
    assert same_state(batch.S, before)


@pytest.mark.parametrize("out", [
    np.zeros((4, 112), np.int64), np.zeros((4, 112), np.float32), np.zeros(4 * 112, bool), [[False] * 112] * 4,
    np.zeros((112, 4), bool).T, np.zeros((8, 112), bool)[::2],
], ids=["int", "float", "1-D", "list", "F-order", "strided"])
def test_legal_mask_out_must_be_a_c_ordered_bool_array_of_the_batch_shape(out: Any) -> None:
    with pytest.raises(BatchError, match="out must be a writable, C-contiguous bool numpy array"):
        BatchGame(Rules(), 4, 0).legal_mask(out)


@pytest.mark.parametrize("states", [np.zeros(4, np.int64), np.zeros(4, float), None, np.zeros((4, 1), np.uint64),
                                    [0, 0, 0, 0], np.zeros(8, np.uint64)[::2]],
                         ids=["int64", "float", "None", "2-D", "list", "strided"])
def test_random_actions_states_must_be_the_callers_uint64_streams(states: Any) -> None:
    with pytest.raises(BatchError, match="states must be a writable, C-contiguous uint64"):
        BatchGame(Rules(), 4, 0).random_actions(states)


def test_read_only_arrays_are_refused_where_a_kernel_writes() -> None:
    batch = BatchGame(Rules(), 4, 0)
    for call, shape, dtype in ((lambda a: batch.observe(out=a), (4, batch.observe().shape[1]), np.float32),
                               (lambda a: batch.legal_mask(a), (4, batch.num_actions), np.bool_),
                               (lambda a: batch.random_actions(a), (4,), np.uint64)):
        frozen = np.zeros(shape, dtype)
        frozen.flags.writeable = False
        with pytest.raises(BatchError, match="read-only"):
            call(frozen)


def test_unsigned_values_beyond_int64_are_not_read_as_minus_one() -> None:
    """2**64-1 as int64 is -1: "no move" for an action, "the seat to act" for a seat."""
    batch = BatchGame(Rules(), 2, 0)
    before = batch.S.copy()
    with pytest.raises(IllegalActionError, match="18446744073709551615"):
        batch.step(np.full(2, 2**64 - 1, np.uint64))
    with pytest.raises(BatchError, match="18446744073709551615"):
        batch.observe(seats=np.array([0, 2**64 - 1], np.uint64))
    assert same_state(batch.S, before)
    batch.step(np.array(batch.random_actions(np.zeros(2, np.uint64)), np.uint64).clip(0))  # small uint64: fine


@pytest.mark.parametrize("value", [np.array([1, 0]), "yes", 1, None])
def test_action_features_must_be_a_bool(value: Any) -> None:
    with pytest.raises(BatchError, match="action_features"):
        BatchGame(Rules(), 2, 0).observe(action_features=value)
    with pytest.raises(BatchError, match="action_features"):
        BatchObserver(Rules(), value)


def test_observers_and_agents_take_only_a_batch() -> None:
    observer = BatchObserver(Rules())
    agent = make_batch_agent("expert", 0, 2)
    for other in ("batch", None, np.zeros(2), object()):
        with pytest.raises(BatchError, match="needs a BatchGame"):
            observer.observe(other)
        with pytest.raises(BatchError, match="needs a BatchGame"):
            agent.act(other)
        with pytest.raises(BatchError, match="needs a BatchGame"):
            agent.values(other)


def test_a_batch_larger_than_the_memory_available_is_refused_before_allocating(monkeypatch: pytest.MonkeyPatch) -> None:
    per_game = batch_engine.memory_needed(Rules(), 1)
    assert per_game == batch_engine.memory_needed(Rules(), 1000) // 1000 and 400 < per_game < 2000
    assert batch_engine.memory_needed(Rules(), 10, record=False) < batch_engine.memory_needed(Rules(), 10)
    monkeypatch.setattr(batch_engine, "available_memory", lambda: 100 * per_game)
    BatchGame(Rules(), 100, 0)
    with pytest.raises(BatchError, match=r"101 games needs about .* more than .* available.*first_game"):
        BatchGame(Rules(), 101, 0)


@pytest.mark.skipif(os.environ.get("NUMBA_BOUNDSCHECK") != "1", reason="only meaningful with NUMBA_BOUNDSCHECK=1")
def test_the_bounds_checks_are_on_in_the_boundscheck_run() -> None:
    """Proof that the boundscheck run compiled its own kernels (a cached build without checks would
    write past the end instead): a kernel called directly, past the checker, raises IndexError."""
    batch = BatchGame(Rules(), 8, 0)
    with pytest.raises(IndexError):
        kernels.fill_legal_mask(batch.S, np.zeros((1, batch.num_actions), bool))


# ---------------------------------------------------------------- random hostile calls
def _arrays(shapes: list[tuple[int, ...]]) -> st.SearchStrategy:
    """Arrays of a random dtype and shape (mostly the interesting ones), with random values, in a random
    layout: C order, read-only, Fortran order or a strided view."""
    dtypes = st.sampled_from([np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64,
                              np.float32, np.float64, np.complex64])

    @st.composite
    def build(draw: Callable) -> np.ndarray:
        dtype = np.dtype(draw(dtypes))
        shape = draw(st.sampled_from(shapes))
        size = int(np.prod(shape))
        if dtype.kind == "b":
            values = draw(st.lists(st.booleans(), min_size=size, max_size=size))
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            edge = st.sampled_from([info.min, info.max, -1, 0, 1, 2, 3, 111, 112])
            values = draw(st.lists(st.one_of(edge, st.integers(int(info.min), int(info.max))).filter(
                lambda v: info.min <= v <= info.max), min_size=size, max_size=size))
        else:
            values = draw(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), min_size=size,
                                   max_size=size))
        arr = np.array(values, dtype=dtype).reshape(shape)
        layout = draw(st.sampled_from(["C", "C", "read-only", "F", "strided"]))
        if layout == "read-only":
            arr.flags.writeable = False
        elif layout == "F":
            arr = np.asfortranarray(arr)
        elif layout == "strided" and arr.ndim:
            wide = np.zeros((arr.shape[0] * 2,) + arr.shape[1:], dtype)
            wide[::2] = arr
            arr = wide[::2]
        return arr

    return build()


def _values(shapes: list[tuple[int, ...]]) -> st.SearchStrategy:
    """Anything a careless or hostile caller might pass: arrays as above, scalars, lists, other objects."""
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=3))
    return st.one_of(_arrays(shapes), scalars, st.lists(st.integers(-3, 200), max_size=5),
                     st.lists(st.lists(st.integers(-1, 3), max_size=3), max_size=3))


def _operations(batch: BatchGame, obs_size: int, feature_size: int) -> st.SearchStrategy:
    """(name, call) pairs over every public method, each with hostile or valid arguments."""
    n, a = batch.n, batch.num_actions
    index = st.one_of(st.integers(-2 * n, 2 * n), st.integers(-(2**70), 2**70), st.floats(), st.none(), st.text(max_size=2))
    legal_actions = st.integers(0, 2**32).map(lambda s: ("valid", np.zeros(n, np.uint64) + np.uint64(s)))
    out_shapes = [(n, a), (1, a), (n,), (n, a + 1), (0, a), (2 * n, a)]
    obs_shapes = [(n, obs_size), (n, feature_size), (1, obs_size), (n, obs_size + 1), (n,)]
    seat_shapes = [(n,), (1,), (n, 1), ()]
    agents = [make_batch_agent(name, 0, n) for name in BATCH_AGENTS] + [make_batch_agent("expert", 0, n + 1)]
    observers = [BatchObserver(batch.rules), BatchObserver(batch.rules, True), BatchObserver(Rules(max_pip=9))]
    return st.one_of(
        st.tuples(st.just("legal_mask"), st.one_of(st.none(), _values(out_shapes))),
        st.tuples(st.just("observe"), st.one_of(st.none(), _values(seat_shapes)),
                  st.one_of(st.booleans(), _values([(2,), ()])), st.one_of(st.none(), _values(obs_shapes))),
        st.tuples(st.just("observer.observe"), st.sampled_from(observers),
                  st.one_of(st.just(batch), _values([(n,)])), st.one_of(st.none(), _values(seat_shapes)),
                  st.one_of(st.none(), _values(obs_shapes))),
        st.tuples(st.just("step"), st.one_of(legal_actions, _values([(n,), (1,), (n, 1), ()]))),
        st.tuples(st.just("random_actions"), _values([(n,), (1,), (2 * n,), (n, 1)])),
        st.tuples(st.sampled_from(["legal_actions", "decisions", "replay"]), index),
        st.tuples(st.just("reset_done")),
        st.tuples(st.sampled_from(["agent.act", "agent.values"]), st.sampled_from(agents),
                  st.one_of(st.just(batch), _values([(n,)]))),
        st.tuples(st.just("agent.reset"), st.sampled_from(agents), st.one_of(st.integers(-5, 2**64), st.floats(), st.none())),
    )


def _call(batch: BatchGame, op: tuple) -> None:
    """Run one drawn operation on ``batch``."""
    name = op[0]
    if name == "legal_mask":
        batch.legal_mask(op[1])
    elif name == "observe":
        batch.observe(seats=op[1], action_features=op[2], out=op[3])
    elif name == "observer.observe":
        op[1].observe(op[2], op[3], op[4])
    elif name == "step":
        actions = op[1]
        if isinstance(actions, tuple):  # a valid step: random legal actions from the drawn streams
            if batch.done.all():
                batch.reset_done()
            actions = batch.random_actions(actions[1])
        batch.step(actions)
    elif name == "random_actions":
        batch.random_actions(op[1])
    elif name in ("legal_actions", "decisions", "replay"):
        getattr(batch, name)(op[1])
    elif name == "reset_done":
        batch.reset_done()
    elif name in ("agent.act", "agent.values"):
        getattr(op[1], name.split(".")[1])(op[2])
    else:
        op[1].reset(op[2])


@settings(HOSTILE)
@given(seed=st.integers(0, 2**31), data=st.data())
def test_random_hostile_calls_raise_only_typed_errors_and_change_nothing_when_refused(seed: int, data: Any) -> None:
    batch = BatchGame(Rules(), N, seed)
    obs_size = batch.observe().shape[1]
    feature_size = batch.observe(action_features=True).shape[1]
    ops = _operations(batch, obs_size, feature_size)
    for _ in range(data.draw(st.integers(1, 12), label="calls")):
        op = data.draw(ops, label="call")
        state, log = batch.S.copy(), batch._log.copy()
        try:
            _call(batch, op)
        except AllFivesError:
            assert same_state(batch.S, state), f"a refused {op[0]} changed a game"
            assert np.array_equal(batch._log, log), f"a refused {op[0]} changed a decision log"
    for i in range(N):  # whatever was accepted left every game a valid one: its replay verifies in the core
        load_replay(batch.replay(i))


def test_the_search_functions_check_what_they_hand_their_kernels() -> None:
    """Candidates, counts, the hidden tiles and a record index the search kernels' tables: each is checked
    first (a tile id of 999 in a boneyard guess once reached the kernel)."""
    from allfives_env.agents import PlayerView
    from allfives_env.agents.search import sample_hidden
    from allfives_env.batch.search import guess_position, search_values, step_position
    from allfives_env.core.errors import DealError
    from helpers import positions

    game = positions(Rules(), 5, 1)[0]
    view = PlayerView(game, game.current)
    hands, boneyard = sample_hidden(view, np.random.default_rng(0))
    legal = list(view.legal)
    assert search_values(view, legal, 1, hidden=(hands, iter(boneyard))).shape == (len(legal),)  # any iterable
    for bad in ([], [legal[0], legal[0]], [999], [1.5], "abc"):
        with pytest.raises((IllegalActionError, BatchError)):
            search_values(view, bad, 1)
    for samples in (0, -1, 1.5, True, 10**9):
        with pytest.raises(BatchError, match="samples"):
            search_values(view, legal, samples)
    for hidden_boneyard in ([999] + list(boneyard)[1:], list(boneyard)[:-1], 5, None):
        with pytest.raises(DealError):
            search_values(view, legal, 1, hidden=(hands, hidden_boneyard))
    with pytest.raises(BatchError, match="rollout"):
        search_values(view, legal, 1, rollout="nope")
    rec = guess_position(view, seed=1)
    before = rec.copy()
    with pytest.raises(IllegalActionError, match="not legal"):
        step_position(rec, view.rules, 10**6)
    with pytest.raises(BatchError, match="rec"):
        step_position(np.zeros(1, np.int64), view.rules, legal[0])  # not a record of this set
    with pytest.raises(BatchError, match="rec"):
        step_position(guess_position(view, seed=1).copy(), Rules(max_pip=9), legal[0])  # another set's record
    assert same_state(rec, before)
