"""The batch engine's layout (allfives_env/batch/layout.py): the rules vector laid out from the option table,
encodings that state what the kernels play, and one layout per rules object shared by everything that plays
those rules."""

from __future__ import annotations

import numpy as np
import pytest

from allfives_env.batch import BatchGame, layout
from allfives_env.batch.agents import make_batch_agent
from allfives_env.batch.observe import BatchObserver
from allfives_env.core import Rules
from allfives_env.core.errors import BatchError
from allfives_env.core.options import OPTIONS
from allfives_env.core.tiles import tile_set


def test_slots_follow_the_option_table_then_the_derived_values() -> None:
    names = [o.name for o in OPTIONS] + [name for name, _ in layout.DERIVED]
    assert list(layout.SLOT) == names and list(layout.SLOT.values()) == list(range(len(names)))
    assert layout.VALUE_BITS == len(names)
    # the names the kernels read are plain integers (numba compiles them in as constants), at their option's slot
    for constant, name in (("NUM_PLAYERS", "num_players"), ("RESERVE", "boneyard_reserve"), ("MAX_HANDS", "max_hands"),
                           ("TILE_COUNT", "tile_count"), ("STOP_AFTER_HAND", "stop_after_hand")):
        assert type(getattr(layout, constant)) is int and getattr(layout, constant) == layout.SLOT[name]


def test_the_vector_holds_each_option_at_its_slot_and_the_derived_values_after() -> None:
    rules = Rules(num_players=3, max_pip=9, rounding="down", may_draw_when_able=True, max_draws_per_turn=None)
    r = layout.rules_vector(rules, stop_after_hand=True)
    assert r[layout.NUM_PLAYERS] == 3 and r[layout.MAX_PIP] == 9 and r[layout.MAX_DRAWS] == -1
    assert r[layout.ROUNDING] == layout.ROUND_DOWN and r[layout.MAY_DRAW] == 1
    assert r[layout.SLOT["spinner"]] == 0  # played alone: its slot holds the one value's index
    assert (r[layout.TILE_COUNT], r[layout.NUM_VALUES], r[layout.NUM_SIDES]) == (55, 10, 3)
    assert (r[layout.DRAW_ACTION], r[layout.NUM_ACTIONS], r[layout.STOP_AFTER_HAND]) == (220, 221, 1)
    assert list(r[layout.HIGH_AT:layout.HIGH_AT + 55]) == list(tile_set(9).high) and r.flags.writeable


def test_every_option_states_what_the_kernels_play() -> None:
    """Each value of the table's domain is one the kernels play (a code), and nothing accepts a value it does
    not declare: an encoding of no values refuses all, an integer one refuses what is not an integer."""
    assert set(layout.ENCODERS) == {o.name for o in OPTIONS}
    for o in OPTIONS:
        for case in o.cases(Rules()):
            rules = Rules.from_options(case)
            assert isinstance(layout.ENCODERS[o.name].code(o.name, getattr(rules, o.name)), int)
    with pytest.raises(BatchError, match=r"trial='on' is not played by the batch engine \(it plays \[\]\)"):
        layout.Encoding(()).code("trial", "on")
    with pytest.raises(BatchError, match="trial='on' is not an integer"):
        layout.integer().code("trial", "on")
    with pytest.raises(BatchError, match=r"trial=7 is not played by the batch engine \(it plays \[1, 5\]\)"):
        layout.integer(1, 5).code("trial", 7)
    assert layout.integer(none=-1).code("trial", None) == -1 and layout.only("x").code("trial", "x") == 0


def test_an_option_of_the_table_without_an_encoding_refuses_every_rules_object(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout, "ENCODERS", {k: v for k, v in layout.ENCODERS.items() if k != "spinner"})
    with pytest.raises(BatchError, match=r"no encoding for rules option\(s\) \['spinner'\].*only\(default\)"):
        layout.layout_for(Rules())


def test_one_layout_per_rules_object_shared_by_batches_observers_and_agents() -> None:
    rules = Rules(num_players=4, target=100)
    shared = layout.layout_for(rules)
    assert layout.layout_for(Rules(num_players=4, target=100)) is shared
    a, b = BatchGame(rules, 2, seed=0), BatchGame(rules, 3, seed=1, stop_after_hand=True)
    assert a.layout is shared and b.layout is shared and a.tables is shared.tables
    assert a.S.dtype == shared.dtype == layout.state_dtype(6) and a.num_actions == shared.num_actions == 112
    assert not shared.vector.flags.writeable and a.rules_vector is not b.rules_vector
    assert a.rules_vector[layout.STOP_AFTER_HAND] == 0 and b.rules_vector[layout.STOP_AFTER_HAND] == 1
    observer = BatchObserver(rules, True)
    assert observer.work.rows.shape[0] == shared.max_legal
    agent = make_batch_agent("expert", 0, 2)
    agent.act(a)
    assert agent._work_for(a)[0].rows.shape[0] == shared.max_legal


def test_a_value_the_kernels_do_not_play_is_refused_and_changes_no_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    before = layout.layout_for(Rules(rounding="down"))
    vector = before.vector.copy()
    monkeypatch.setattr(layout, "ENCODERS", {**layout.ENCODERS, "rounding": layout.choice("nearest", "down")})
    assert layout.layout_for(Rules(rounding="down")) is before
    with pytest.raises(BatchError, match=r"rounding='none' is not played by the batch engine \(it plays \['nearest', "
                                         r"'down'\]\); play these rules with the core"):
        BatchGame(Rules(rounding="none"), 1, seed=0)
    assert np.array_equal(before.vector, vector)
