"""The win-probability potential (allfives_training/win_potential.py): measured from seeded expert games, the
same for the same seed, monotone in both sides' needs, symmetric with two sides, read per side and per seat,
and stored as checked JSON that refuses corrupt, foreign and mismatched files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from allfives_env.core import Rules
from allfives_training.win_potential import (
    WinTable, WinTableError, build_win_table, load_win_table, needs_in_fives, save_win_table,
)

RULES = Rules(num_players=2, target=100)


@pytest.fixture(scope="module")
def table() -> WinTable:
    return build_win_table(RULES, games=300, seed=7)


def test_needs_count_the_fives_left_and_zero_at_the_target() -> None:
    assert needs_in_fives(np.array([0, 95, 96, 100, 130]), 100).tolist() == [20, 1, 1, 0, 0]


def test_the_same_seed_gives_the_same_table_and_another_seed_another(table: WinTable) -> None:
    again = build_win_table(RULES, games=300, seed=7)
    np.testing.assert_array_equal(again.probability, table.probability)
    other = build_win_table(RULES, games=300, seed=8)
    assert not np.array_equal(other.probability, table.probability)


def test_the_table_is_a_monotone_symmetric_probability(table: WinTable) -> None:
    p = table.probability
    assert p.shape == (21, 21) and ((p >= 0) & (p <= 1)).all()
    assert (np.diff(p, axis=1) >= -1e-12).all()  # the other side needs more: never worse
    assert (np.diff(p, axis=0) <= 1e-12).all()  # this side needs more: never better
    np.testing.assert_allclose(p + p.T, 1.0, atol=1e-12)
    assert p[0, 5] == 1.0 and p[5, 0] == 0.0
    assert p[1, 20] > 0.9 and p[20, 1] < 0.1  # one five to go against twenty: nearly won


def test_potential_reads_each_side_and_each_seat() -> None:
    rules = Rules(num_players=4, partnership=True, target=100)
    table = build_win_table(rules, games=60, seed=1)
    scores = np.array([[90, 40], [40, 90]])
    phi = table.potential(scores)
    assert phi.shape == (2, 2)
    assert phi[0, 0] == table.probability[2, 12] and phi[0, 1] == table.probability[12, 2]
    assert phi[0, 0] > phi[0, 1]
    seats = table.seat_potential(scores)
    assert seats.shape == (2, 4) and seats[0].tolist() == [phi[0, 0], phi[0, 1], phi[0, 0], phi[0, 1]]
    with pytest.raises(WinTableError, match="3 sides"):
        table.potential(np.zeros((1, 3), dtype=np.int64))


def test_three_sides_read_the_closest_other_side() -> None:
    rules = Rules(num_players=3, target=60)
    table = build_win_table(rules, games=80, seed=2)
    phi = table.potential(np.array([[50, 55, 0]]))[0]
    p = table.probability
    assert phi.tolist() == [p[2, 1], p[1, 2], p[12, 1]]
    assert phi[1] > phi[0] > phi[2]


def test_a_saved_table_loads_back_and_bad_files_are_refused(table: WinTable, tmp_path: Path) -> None:
    path = tmp_path / "win.json"
    save_win_table(table, path)
    loaded = load_win_table(path, RULES)
    np.testing.assert_array_equal(loaded.probability, table.probability)  # exact: a resumed run reads it back
    assert (loaded.games, loaded.seed) == (300, 7)
    with pytest.raises(WinTableError, match="made for"):
        load_win_table(path, Rules(num_players=2, target=150))
    data = json.loads(path.read_text())
    cases = {
        "not JSON": b"\x80PK not json",
        "not a win table": json.dumps({"format": "something-else"}).encode(),
        "version": json.dumps({**data, "version": 99}).encode(),
        "bad or missing field": json.dumps({k: v for k, v in data.items() if k != "probability"}).encode(),
        "probabilities": json.dumps({**data, "probability": [[2.0] * 21] * 21}).encode(),
        "integers": json.dumps({**data, "games": "many"}).encode(),
    }
    for message, content in cases.items():
        path.write_bytes(content)
        with pytest.raises(WinTableError, match=message):
            load_win_table(path)
    with pytest.raises(WinTableError, match="cannot be read"):
        load_win_table(tmp_path / "missing.json")
    import os

    os.mkfifo(tmp_path / "pipe.json")
    with pytest.raises(WinTableError):  # refused at once, never waited on
        load_win_table(tmp_path / "pipe.json")
    (tmp_path / "big.json").write_bytes(b" " * (2 << 20))
    with pytest.raises(WinTableError):
        load_win_table(tmp_path / "big.json")


@pytest.mark.parametrize("kwargs, message", [
    (dict(games=0), "games=0"), (dict(games=2.5), "games=2.5"), (dict(seed=-1), "seed=-1"),
    (dict(prior_games=-1.0), "prior_games"), (dict(rules={"target": 100}), "Rules object"),
])
def test_bad_arguments_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(WinTableError, match=message):
        build_win_table(**{"rules": RULES, **kwargs})


def test_a_score_below_zero_reads_the_last_row(table: WinTable) -> None:
    phi = table.potential(np.array([[-15, 40]]))[0]
    assert phi.tolist() == [table.probability[20, 12], table.probability[12, 20]]
