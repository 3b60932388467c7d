"""Bad input to the engine, the environments and replays: a typed error that names it, never a traceback
or a silent change of meaning. Each test here failed before its fix."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allfives_env import allfives_v0
from allfives_env.agents.registry import AgentError
from allfives_env.core import (
    AllFivesError, DealError, Game, GameOverError, IllegalActionError, ReplayError, Rules, RulesError, SeedError,
)
from allfives_env.core.errors import short_repr
from allfives_env.core.replay import game_record, load_replay
from allfives_env.single_seat import AllFivesSingleSeatEnv


def finished_record(seed: int = 3, **options: Any) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    game = Game(Rules(**options), seed=seed)
    while not game.over:
        game.step(game.legal[int(rng.integers(len(game.legal)))])
    return game_record(game, seed)


# ============================================================ numpy values (defect 5)
def test_numpy_integers_in_rules_are_plain_ints() -> None:
    rules = Rules(num_players=np.int64(3), target=np.int32(150), must_lead_it=np.bool_(False), max_pip=np.int64(6))
    assert rules == Rules(num_players=3, target=150, must_lead_it=False)
    assert type(rules.num_players) is int and type(rules.must_lead_it) is bool
    json.dumps(rules.to_dict())


def test_numpy_seed_gives_a_json_replay() -> None:
    env = allfives_v0.raw_env()
    env.reset(seed=np.int64(5))
    record = env.replay()
    assert type(record["seed"]) is int and record["seed"] == 5
    json.dumps(record)


# ============================================================ fixed leaders (defect 6)
def test_a_leader_fixed_against_the_rules_is_recorded_and_verifies() -> None:
    env = allfives_v0.raw_env(first_leader="highest_double", hand_size=5)
    hands = [["6-6", "5-0", "0-6", "3-1", "5-6"], ["5-3", "2-2", "4-4", "6-2", "1-6"]]
    env.reset(seed=0, options={"hands": hands, "leader": 1})
    assert env.game.current == 1
    rng = np.random.default_rng(0)
    while not env.game.over:
        env.game.step(env.game.legal[int(rng.integers(len(env.game.legal)))])
    record = env.replay()
    assert record["hands"][0]["leader_fixed"] is True
    assert load_replay(json.loads(json.dumps(record))).scores == env.game.scores
    # without the flag the leader contradicts the rules, said once per hand
    del record["hands"][0]["leader_fixed"]
    with pytest.raises(ReplayError) as info:
        load_replay(record)
    assert "leader 1 does not follow" in str(info.value) and str(info.value).count("hand 1:") == 1
    # and a flag on a hand whose leader the rules give is refused too
    plain = finished_record(first_leader="highest_double")
    plain["hands"][0]["leader_fixed"] = True
    with pytest.raises(ReplayError, match="leader_fixed"):
        load_replay(plain)


# ============================================================ rules that cannot end (defect 7)
@pytest.mark.parametrize("options, fragment", [
    (dict(exact_target=True, target=61), "multiple of 5"),
    (dict(exact_target=True, target=252), "can never be won"),
    (dict(min_first_score=40), "from 0 (off) to 35"),
    (dict(min_first_score=65, max_pip=9), "to 60"),
    (dict(target=10**9), "up to 10000"),
    (dict(target=3000, score_unit=5), "up to 2000"),
    (dict(target=10**5000), "target="),
], ids=short_repr)
def test_rules_that_can_never_be_won_are_refused(options: dict, fragment: str) -> None:
    with pytest.raises(RulesError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        Rules(**options)


def test_reachable_exact_targets_are_accepted() -> None:
    Rules(exact_target=True, target=61, score_unit=5)
    Rules(exact_target=True, target=250)
    Rules(exact_target=True, target=61, rounding="none", hand_end="winner_takes")
    Rules(min_first_score=35)


# ============================================================ reset options (defect 8)
@pytest.mark.parametrize("scores, fragment", [
    ({"a": 1, "b": 2}, "list of 2 integers"),
    ([True, False], "list of 2 integers"),
    ([6.9, 4.2], "list of 2 integers"),
    ([250, 0], "would have won"),
    ([600, 600], "to 499"),
    ("12", "list of 2 integers"),
    ([1, 2, 3], "list of 2 integers"),
])
def test_wrong_starting_scores_are_refused(scores: Any, fragment: str) -> None:
    env = allfives_v0.raw_env()
    with pytest.raises(DealError, match=fragment):
        env.reset(seed=0, options={"scores": scores})


def test_scores_respect_allow_negative_and_exact_target() -> None:
    with pytest.raises(DealError, match="0 \\(allow_negative=False\\)"):
        allfives_v0.raw_env(allow_negative=False).reset(seed=0, options={"scores": [-5, 0]})
    with pytest.raises(DealError, match="never reach"):
        allfives_v0.raw_env(exact_target=True).reset(seed=0, options={"scores": [3, 0]})
    env = allfives_v0.raw_env()
    env.reset(seed=0, options={"scores": [np.int64(240), 10]})
    assert env.game.scores == [240, 10] and type(env.game.scores[0]) is int


@pytest.mark.parametrize("tile", [[6.9, 4.2], [True, 1], {6: 0, 4: 0}, 3.0, "6-4-1", "٣-1", None, [[6, 4]]])
def test_tiles_must_be_integer_pairs(tile: Any) -> None:
    hands = [[tile, "5-0", "0-6", "3-1", "5-6"], ["5-3", "6-6", "4-4", "6-2", "1-6"]]
    with pytest.raises(DealError, match="tile"):
        allfives_v0.raw_env(hand_size=5).reset(seed=0, options={"hands": hands})


def test_a_refused_reset_leaves_the_env_as_it_was() -> None:
    env = allfives_v0.raw_env()
    env.reset(seed=1)
    events = env.game.events[:]
    with pytest.raises(DealError):
        env.reset(options={"scores": [1.5, 0]})
    with pytest.raises(SeedError):
        env.reset(seed=-3)
    assert env.game.events == events


@pytest.mark.parametrize("seed", [-1, "abc", 1.5, True, 2**63, [1]])
def test_bad_seeds_are_refused(seed: Any) -> None:
    with pytest.raises(SeedError, match="seed="):
        allfives_v0.raw_env().reset(seed=seed)
    with pytest.raises(SeedError, match="seed="):
        AllFivesSingleSeatEnv().reset(seed=seed)
    with pytest.raises(SeedError, match="seed="):
        Game(seed=seed)


# ============================================================ the environments (defect 13)
def test_stepping_after_every_agent_left_is_a_typed_error() -> None:
    env = allfives_v0.raw_env()
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert not env.agents
    with pytest.raises(GameOverError, match="reset"):
        env.step(None)


def test_a_done_agent_only_takes_none() -> None:
    env = allfives_v0.raw_env()
    env.reset(seed=2)
    rng = np.random.default_rng(0)
    while not env.game.over:
        obs = env.observe(env.agent_selection)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    with pytest.raises(IllegalActionError, match="step\\(None\\)"):
        env.step(3)


def test_unknown_agents_are_named() -> None:
    env = allfives_v0.raw_env()
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="player_7"):
        env.observe("player_7")
    with pytest.raises(IllegalActionError, match="not an agent"):
        env.observe(["player_0"])


def test_game_legal_cannot_be_changed_from_outside() -> None:
    game = Game(seed=0)
    unheld = next(t for t in range(28) if not (game.hands[game.current] >> t) & 1)
    with pytest.raises(AttributeError):
        game.legal.append(unheld << 2)  # a tuple: the engine's own list is not handed out
    with pytest.raises(IllegalActionError):
        game.step(unheld << 2)


def test_huge_and_strange_actions_are_typed_errors() -> None:
    env = allfives_v0.raw_env()
    env.reset(seed=0)
    for action in (10**5000, -1, 2.5, "1", np.float64(1.0), True):
        with pytest.raises(IllegalActionError):
            env.step(action)
    single = AllFivesSingleSeatEnv(illegal_action="raise")
    single.reset(seed=0)
    for action in (10**30, 10**5000, -1, 2.5, "1", None, True):
        with pytest.raises(IllegalActionError):
            single.step(action)


@pytest.mark.parametrize("kwargs, error, fragment", [
    (dict(opponents=["random"], opponent_weights=[float("nan")]), AgentError, "finite"),
    (dict(opponents=["random", "greedy"], opponent_weights=[float("inf"), 1.0]), AgentError, "finite"),
    (dict(opponents=["random"], opponent_weights=["a"]), AgentError, "finite"),
    (dict(opponents=["random"], opponent_weights=5), AgentError, "finite"),
    (dict(partner="greedy"), AgentError, "partnership"),
    (dict(partner="greedy", num_players=4, partnership=False), AgentError, "cut-throat"),
    (dict(illegal_reward="bad"), RulesError, "illegal_reward"),
    (dict(illegal_reward=float("nan")), RulesError, "illegal_reward"),
    (dict(illegal_reward=None), RulesError, "illegal_reward"),
    (dict(seat=True), RulesError, "seat="),
])
def test_single_seat_refuses_bad_options(kwargs: dict, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        AllFivesSingleSeatEnv(**kwargs)


def test_single_seat_reset_options_fix_the_deal_or_are_refused() -> None:
    env = AllFivesSingleSeatEnv(seat=0, hand_size=5)
    hands = [["6-6", "5-0", "0-6", "3-1", "5-6"], ["5-3", "2-2", "4-4", "6-2", "1-6"]]
    env.reset(seed=0, options={"hands": hands, "leader": 0, "scores": [20, 30]})
    tiles = env.game.tiles
    assert env.game.hand_records[0].hands == tuple(tuple(tiles.parse(t) for t in hand) for hand in hands)
    assert env.game.hand_records[0].scores == (20, 30)
    with pytest.raises(DealError, match="unknown reset option"):
        env.reset(seed=0, options={"hand": hands})
    with pytest.raises(DealError, match="dict"):
        env.reset(seed=0, options=[("hands", hands)])


def test_env_deepcopy_before_reset_is_fresh_and_usable() -> None:
    env = allfives_v0.env()
    other = copy.deepcopy(env)
    other.reset(seed=4)
    env.reset(seed=4)
    assert env.unwrapped.game.hands == other.unwrapped.game.hands


# ============================================================ replay files (defect 9)
def _mutate(record: dict, path: list, value: Any) -> dict:
    out = copy.deepcopy(record)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return out


RECORD = finished_record()


@pytest.mark.parametrize("path, value, fragment", [
    (["hands", 0, "events", 1, "type"], ["play"], "not an event record"),
    (["hands", 0, "events", 1, "type"], {"a": 1}, "not an event record"),
    (["hands", 0, "events", 0, "scores"], 7, "list of integers"),
    (["hands", 0, "events", 0, "scores"], "0, 0", "list of integers"),
    (["hands", 0, "events", 1, "seat"], True, "must be an integer"),
    (["hands", 0, "events", 1, "seat"], 10**5000, "does not|not legal|must be|the record has"),
    (["hands", 0, "events", 1, "count"], 1.5, "must be an integer"),
    (["hands", 0, "events", 1, "tile"], [6.0, 4.0], "tile"),
    (["hands", 0, "events", 1, "extra"], 1, "unknown field"),
    (["hands", 0, "hand"], 2, "numbered"),
    (["hands", 0, "hand"], True, "numbered"),
    (["hands", 0, "scores_before"], {"0": 0}, "scores_before"),
    (["hands", 0, "leader_fixed"], "yes", "leader_fixed"),
    (["version"], True, "version"),
    (["version"], 1.0, "version"),
    (["version"], "1", "version"),
    (["seed"], -4, "seed"),
    (["seed"], "x", "seed"),
    (["winner"], False, "winner"),
    (["rules"], [1, 2], "rules"),
    (["rules", "num_players"], [2], "num_players"),
], ids=short_repr)
def test_corrupt_replay_fields_are_replay_errors(path: list, value: Any, fragment: str) -> None:
    with pytest.raises(ReplayError, match=fragment):
        load_replay(_mutate(RECORD, path, value))


def test_events_grouped_under_the_wrong_hand_are_refused() -> None:
    record = finished_record(seed=8, target=100)
    assert len(record["hands"]) >= 2
    bad = copy.deepcopy(record)
    moved = bad["hands"][0]["events"].pop()  # the first hand's settlement, moved into the second hand
    bad["hands"][1]["events"].insert(0, moved)
    with pytest.raises(ReplayError, match="grouped under the wrong hand|hand"):
        load_replay(bad)


@pytest.mark.parametrize("text, fragment", [
    ('{"format": "allfives-replay", "version": 1, "rules": {}, "hands": [], "x": 1e400}', "integers only"),
    ('{"format": "allfives-replay", "version": 1, "rules": {}, "hands": [], "x": NaN}', "integers only"),
    ('{"format": "allfives-replay", "version": 1, "rules": {}, "seed": ' + "9" * 5000 + ', "hands": []}', "digits"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply|not an All Fives"),
    ('{"a": ' * 5000 + "1" + "}" * 5000, "nested too deeply|not an All Fives"),
    ("\udcff", "JSON"),
], ids=lambda v: short_repr(v)[:30])
def test_hostile_replay_text_is_a_replay_error(text: str, fragment: str) -> None:
    with pytest.raises(ReplayError, match=fragment):
        load_replay(text if text.startswith("{") else "{" + text) if not text.startswith("[") else load_replay(
            "{\"a\": " + text + "}")


def test_replay_files_are_read_with_a_limit_and_never_confused_with_json(tmp_path: Path, monkeypatch) -> None:
    if os.path.exists("/dev/zero"):
        with pytest.raises(ReplayError, match="larger than"):
            load_replay("/dev/zero")
    with pytest.raises(ReplayError, match="cannot read"):
        load_replay(tmp_path)
    with pytest.raises(ReplayError, match="UTF-8"):
        (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00{")
        load_replay(tmp_path / "bin.json")
    # a relative path that starts with "{" names the file, not JSON text
    monkeypatch.chdir(tmp_path)
    Path("{weird}.json").write_text(json.dumps(RECORD))
    assert load_replay("{weird}.json").scores == load_replay(RECORD).scores
    with pytest.raises(ReplayError):
        load_replay(12)


# ============================================================ property tests: garbage in, typed errors out
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_OPTION_NAMES = sorted(Rules.__dataclass_fields__) + ["bogus"]
_OPTION_VALUES = (_JSON | st.sampled_from([2, 3, 4, 5, 6, 9, 12, 0, -1, 10**30, "auto", "default", "five_always",
                                           "random", "nearest", "sniff", True, False, None, np.int64(4), 10**5000,
                                           np.float64(2.0), np.bool_(True)]))
_ANY_OPTIONS = st.dictionaries(st.sampled_from(_OPTION_NAMES), _OPTION_VALUES, max_size=6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, database=None)
@given(_ANY_OPTIONS)
def test_rules_from_garbage_options_only_raise_rules_errors(options: dict) -> None:
    try:
        rules = Rules.from_options(options)
    except RulesError:
        return
    json.dumps(rules.to_dict())
    assert Rules.from_options(rules.to_dict()) == rules


_TILE = st.one_of(st.lists(st.integers(-2, 13), min_size=2, max_size=2), st.integers(-1, 92), _JSON,
                  st.sampled_from(["6-4", "1-1", "x", "6|6", "0-0"]))
_RESET_OPTIONS = st.one_of(
    _JSON,
    st.fixed_dictionaries({}, optional={
        "hands": st.lists(st.lists(_TILE, max_size=10), max_size=5) | _JSON,
        "boneyard": st.lists(_TILE, max_size=5) | _JSON,
        "leader": _JSON | st.integers(-1, 5),
        "opening_drawer": _JSON | st.integers(-1, 5),
        "scores": st.lists(st.integers(-300, 600) | _JSON, max_size=5) | _JSON,
    }),
)


@pytest.mark.filterwarnings("ignore:ignoring unknown reset option")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, database=None)
@given(options=_RESET_OPTIONS, players=st.sampled_from([2, 3, 4]), seed=st.integers(-5, 2**65) | _JSON)
def test_reset_with_garbage_only_raises_typed_errors(options: Any, players: int, seed: Any) -> None:
    env = allfives_v0.raw_env(num_players=players)
    try:
        env.reset(seed=seed, options=options)
    except AllFivesError:
        return
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"].any()


def _record_mutations() -> st.SearchStrategy:
    """A real record with one field somewhere replaced by garbage, or garbage JSON text."""
    def mutate(path_choice: list, value: Any) -> Any:
        out = copy.deepcopy(RECORD)
        node: Any = out
        for pick in path_choice:
            if isinstance(node, dict) and node:
                keys = sorted(node, key=str)
                key = keys[pick % len(keys)]
            elif isinstance(node, list) and node:
                key = pick % len(node)
            else:
                break
            if not isinstance(node[key], (dict, list)) or pick % 5 == 0:
                node[key] = value
                return out
            node = node[key]
        return out
    return st.builds(mutate, st.lists(st.integers(0, 1000), min_size=1, max_size=6), _JSON)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, database=None)
@given(st.one_of(_record_mutations(), _JSON, st.text(max_size=50).map(lambda t: "{" + t)))
def test_load_replay_of_garbage_only_raises_replay_errors(source: Any) -> None:
    try:
        load_replay(source)
    except ReplayError:
        pass


@pytest.mark.parametrize("make", [allfives_v0.raw_env, allfives_v0.env, AllFivesSingleSeatEnv])
@pytest.mark.parametrize("kwargs", [
    dict(rules="x"), dict(rules={"num_players": 2}), dict(reward=10**5000), dict(episode=[[[[[[]]]]]]),
    dict(render_mode=5), dict(action_features="yes"), dict(hand_size=10**5000),
], ids=short_repr)
def test_env_constructors_refuse_garbage_with_typed_errors(make: Any, kwargs: dict) -> None:
    with pytest.raises(RulesError):
        make(**kwargs)


def test_single_seat_opponents_must_be_a_list() -> None:
    with pytest.raises(AgentError, match="list of agent specs"):
        AllFivesSingleSeatEnv(opponents=5)
