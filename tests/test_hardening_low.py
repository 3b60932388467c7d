"""Hostile input at three smaller surfaces: crafted ``.npy`` headers in policy files (and the imitation
warm start's recorded parts), the seeds a replay is saved with, and the OpenSpiel game's parameters and
``resample_from_infostate``. Each must be refused with the package's typed error, nothing changed."""

from __future__ import annotations

import json
import re
import struct
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from allfives_env.core import Game, ReplayError, Rules
from allfives_env.core.errors import SeedError
from allfives_env.core.replay import game_record, load_replay, save_replay
from allfives_env.policy import PolicyError, load_policy, read_policy_header


# ------------------------------------------------------------------------------------------------ .npy headers
def _npy(header: str) -> bytes:
    """An .npy member (format 1.0) with ``header`` as its header text, and no data."""
    raw = header.encode("latin1")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(raw)) + raw


# numpy parses the header with ast.literal_eval, then again after tokenize (the Python 2 path)
CRAFTED_HEADERS = {
    "tokenize_eof": "{'descr': '<f4', 'fortran_order': False, 'shape': (3, \n",  # tokenize.TokenError
    "open_triple_quote": "'''abc\n",  # tokenize.TokenError (EOF in multi-line string)
    "bad_indent": "  {}\n x\n",  # IndentationError, a SyntaxError
    "parser_stack": "-" * 9000 + "1\n",  # MemoryError: the parser's stack overflows
}


@pytest.mark.parametrize("name", sorted(CRAFTED_HEADERS))
def test_a_crafted_npy_header_is_a_policy_error(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.npy", _npy(CRAFTED_HEADERS[name]))
    for read in (load_policy, read_policy_header):
        with pytest.raises(PolicyError, match="not a readable .npy array"):
            read(path)


def test_a_python2_header_is_a_policy_error_where_warnings_are_errors(tmp_path: Path) -> None:
    """numpy warns (UserWarning) when it had to rewrite a Python 2 header; under ``-W error`` that warning
    is raised from inside the reader."""
    path = tmp_path / "py2.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.npy", _npy("{'descr': '|u1', 'fortran_order': False, 'shape': (3L,), }\n"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(PolicyError, match="not a readable .npy array"):
            load_policy(path)


def test_a_crafted_header_in_a_recorded_imitation_part_is_recorded_again(tmp_path: Path) -> None:
    """``allfives_training.imitation._load_part`` catches the policy reader's error set: a part whose header is
    crafted is reported unreadable (and so recorded again), not a crash of the run."""
    imitation = pytest.importorskip("allfives_training.imitation")
    path = tmp_path / "part.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("identity.npy", _npy(CRAFTED_HEADERS["tokenize_eof"]))
        for name in imitation.PART_ARRAYS:
            archive.writestr(f"{name}.npy", _npy(CRAFTED_HEADERS["tokenize_eof"]))
    part, why = imitation._load_part(path, "id", 4, 10, 5)
    assert part is None and why.startswith("unreadable (TokenError")


# ------------------------------------------------------------------------------------------------ replay seeds
@pytest.fixture(scope="module")
def finished_game() -> Game:
    game = Game(Rules(max_hands=2), 3)
    while not game.over:
        game.step(game.legal[0])
    return game


@pytest.mark.parametrize("seed", [np.int64(5), np.uint8(5), np.int32(5)])
def test_save_replay_takes_numpy_integer_seeds_as_plain_ints(tmp_path: Path, finished_game: Game, seed) -> None:
    path = save_replay(finished_game, tmp_path / "r.json", seed=seed)
    text = path.read_text()
    assert json.loads(text)["seed"] == 5 and '"seed": 5,' in text
    assert load_replay(path).scores == finished_game.scores


@pytest.mark.parametrize("seed", [5.0, -1, "x", 2**200, 2**63, True, np.float64(5), np.uint64(2**64 - 1), [5]])
def test_save_replay_refuses_every_seed_load_replay_refuses(tmp_path: Path, finished_game: Game, seed) -> None:
    fresh, kept = tmp_path / "new.json", tmp_path / "kept.json"
    kept.write_text("old content")
    for path in (fresh, kept):
        with pytest.raises(SeedError, match=r"replay seed=.* 0 to 2\*\*63-1"):
            save_replay(finished_game, path, seed=seed)
    assert not fresh.exists() and kept.read_text() == "old content"  # nothing written
    with pytest.raises(SeedError):
        game_record(finished_game, seed=seed)
    if not isinstance(seed, np.generic) and seed != 2**200:  # the forms a JSON file can hold
        record = {**game_record(finished_game), "seed": seed}
        with pytest.raises(ReplayError, match="replay seed="):
            load_replay(record)  # the same rule when reading


def test_save_replay_checks_a_records_own_seed(tmp_path: Path, finished_game: Game) -> None:
    record = game_record(finished_game)
    path = save_replay({**record, "seed": np.int64(7)}, tmp_path / "r.json")
    assert json.loads(path.read_text())["seed"] == 7 and load_replay(path).over
    with pytest.raises(SeedError):
        save_replay({**record, "seed": -3}, tmp_path / "bad.json")
    with pytest.raises(ReplayError, match="carries its own"):
        save_replay(record, tmp_path / "both.json", seed=4)
    assert not (tmp_path / "bad.json").exists() and not (tmp_path / "both.json").exists()


def test_a_replay_seed_past_2_63_is_refused_when_read(finished_game: Game) -> None:
    """2**63 has 19 digits (within the reader's digit limit) but no seed can be that large."""
    text = json.dumps({**game_record(finished_game), "seed": 2**63})
    with pytest.raises(ReplayError, match="replay seed="):
        load_replay(text)


# ------------------------------------------------------------------------------------------------ OpenSpiel
@pytest.fixture(scope="module")
def openspiel():
    pytest.importorskip("pyspiel")
    import allfives_env.openspiel as module

    return module


def test_max_hands_is_bounded_by_openspiels_32_bit_lengths(openspiel) -> None:
    from allfives_env.core import RulesError

    with pytest.raises(RulesError, match=r"max_hands=77000000 is not allowed: give 1 to 37675151 for these rules"):
        openspiel.AllFivesGame({"max_hands": 77_000_000})  # was a raw TypeError from pyspiel.GameInfo
    from allfives_env.openspiel.params import INT_MAX, max_hands_limit

    for extra in ({}, {"may_draw_when_able": True}, {"max_pip": 9, "players": 3}):
        limit = max_hands_limit(Rules.from_options({"num_players": extra.get("players", 2),
                                                    **{k: v for k, v in extra.items() if k != "players"}}))
        game = openspiel.AllFivesGame({**extra, "max_hands": limit})
        assert game.max_history_length() <= INT_MAX and game.max_game_length() > 0
        for hands in (limit + 1, 77_000_000):
            with pytest.raises(RulesError, match=rf"max_hands={hands} is not allowed: give 1 to {limit}"):
                openspiel.AllFivesGame({**extra, "max_hands": hands})
    assert max_hands_limit(Rules()) == 37_675_151
    assert openspiel.AllFivesGame({"max_hands": 10**9, "episode": "hand"}).max_game_length() == 28
    for params in ({"max_hands": 2**40}, {"target": -2**31 - 1}):
        with pytest.raises(RulesError, match="integer parameters run from"):
            openspiel.load_game(**params)  # pyspiel itself would fail converting it to C++


def test_point_scale_must_leave_the_utility_bounds_finite(openspiel) -> None:
    from allfives_env.core import RulesError

    for params in ({"returns": "points"}, {"returns": "points", "max_hands": 37_675_151}):
        with pytest.raises(RulesError, match="point_scale=5e-324 is not allowed") as info:
            openspiel.AllFivesGame({**params, "point_scale": 5e-324})
        least = float(re.search(r"at least ([0-9.e+-]+)", str(info.value)).group(1))
        game = openspiel.AllFivesGame({**params, "point_scale": least})  # the minimum it names is allowed
        assert np.isfinite([game.min_utility(), game.max_utility()]).all() and game.max_utility() > 0
    assert openspiel.AllFivesGame({"point_scale": 5e-324}).max_utility() == 1.0  # "win" returns do not use it
    assert openspiel.AllFivesGame({"returns": "points", "point_scale": 1e308}).max_utility() > 0


def test_the_search_bots_refuse_such_a_point_scale_when_made(openspiel) -> None:
    """Their one-hand search games divide points by it: refused at construction, not at the first move."""
    from allfives_env.agents import AgentError, make_agent

    for name in ("openspiel-ismcts", "openspiel-mcts"):
        with pytest.raises(AgentError, match="point_scale=1e-320 is not allowed: .* at least"):
            make_agent(name, point_scale=1e-320)
        assert make_agent(name, point_scale=1e-300).point_scale == 1e-300


@pytest.fixture
def decision_state(openspiel):
    import pyspiel

    state = openspiel.load_game(players=2).new_initial_state()
    rng = np.random.default_rng(0)
    while state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes())
        state.apply_action(int(rng.choice(outcomes, p=probs)))
    return state, pyspiel.UniformProbabilitySampler(0.0, 1.0)


@pytest.mark.parametrize("player_id", [1.5, True, np.bool_(False), -1, 2, None, "x", 2**70, float("nan")])
def test_resample_takes_only_a_seat(openspiel, decision_state, player_id) -> None:
    state, sampler = decision_state
    history = state.history()
    with pytest.raises(openspiel.OpenSpielStateError, match="player_id=.* not allowed: give a seat"):
        state.resample_from_infostate(player_id, sampler)
    assert state.history() == history
    assert state.resample_from_infostate(np.int64(1), sampler).legal_actions() == state.legal_actions()


@pytest.mark.parametrize("sampler", ["x", 5, lambda: 2.0, lambda: -1, lambda: float("nan"), lambda: 1e300,
                                     lambda: 1.0, lambda: "a", lambda: None],
                         ids=["str", "int", "2.0", "-1", "nan", "1e300", "1.0", "returns-str", "returns-None"])
def test_resample_takes_only_a_sampler_of_probabilities(openspiel, decision_state, sampler) -> None:
    state, _ = decision_state
    history = state.history()
    with pytest.raises(openspiel.OpenSpielStateError, match=r"probability_sampler.*\[0, 1\)"):
        state.resample_from_infostate(0, sampler)
    assert state.history() == history


def test_resample_takes_only_a_generator(openspiel, decision_state) -> None:
    state, sampler = decision_state
    for rng in (5, np.random.RandomState(0), "seed"):
        with pytest.raises(openspiel.OpenSpielStateError, match="rng=.* numpy Generator"):
            state.resample_from_infostate(0, sampler, rng=rng)
    assert state.resample_from_infostate(0, lambda: 0.0).legal_actions() == state.legal_actions()
