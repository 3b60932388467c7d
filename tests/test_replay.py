"""Replays: round trips over random games, files, and tampered records (``allfives_env.core.replay``).

A record written by :func:`game_record` / ``env.replay()`` must survive ``json.dumps``/``json.loads``
and re-simulate through :func:`load_replay` to the very same events and scores. Any change to a record
that the rules do not produce must fail with :class:`ReplayError`, whose message names the hand (and,
for an event, its index in that hand).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

import allfives_env
from allfives_env import allfives_v0
from allfives_env.core import ReplayError, Rules
from allfives_env.core.events import Draw, GameOver, HandStart, Play, Settlement
from allfives_env.core.deal import Deal
from allfives_env.core.game import Game
from allfives_env.core.replay import REPLAY_FORMAT, REPLAY_VERSION, game_record, load_replay, read_record, save_replay

OPTION_SETS = [
    pytest.param({}, id="default-2p"),
    pytest.param({"num_players": 3}, id="3p"),
    pytest.param({"num_players": 4}, id="4p-team"),
    pytest.param({"num_players": 4, "partnership": False, "hand_end": "winner_takes"}, id="4p-cut-winner-takes"),
    pytest.param({"may_draw_when_able": True, "max_draws_per_turn": 2}, id="draw-when-able"),
    pytest.param({"first_leader": "highest_double", "no_double_fallback": "draw_until_double", "hand_size": 2},
                 id="draw-until-double"),
    pytest.param({"first_leader": "highest_double", "no_double_fallback": "redeal", "num_players": 4,
                  "hand_size": 1}, id="redeal"),
    pytest.param({"first_leader": "highest_double", "no_double_fallback": "heaviest_tile", "must_lead_it": False,
                  "num_players": 3, "after_block": "lowest_pips"}, id="highest-double"),
    pytest.param({"after_block": "rotate", "boneyard_reserve": 2, "hand_size": "five_always"}, id="rotate-reserve"),
    pytest.param({"hand_end": "winner_takes", "bonus_round": "round_each", "blocked_award": "difference",
                  "num_players": 3, "allow_negative": False}, id="winner-takes-3p"),
    pytest.param({"score_unit": 5, "exact_target": True, "target": 61, "min_first_score": 10, "max_hands": 4},
                 id="unit5-exact"),
    pytest.param({"max_pip": 9, "num_players": 4, "spinner_count": "sniff", "spinner_sides_first": False,
                  "win_check": "end_of_hand"}, id="double-nine"),
    pytest.param({"max_pip": 12, "num_players": 2, "rounding": "none", "lead_scores": False, "max_hands": 2},
                 id="double-twelve"),
]


def random_game(opts: dict, seed: int, stop_at: int | None = None) -> Game:
    rng = np.random.default_rng(seed)
    game = Game(Rules.from_options({"max_hands": 6, **opts}), np.random.default_rng(seed + 1000))
    steps = 0
    while not game.over and (stop_at is None or steps < stop_at):
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])
        steps += 1
    return game


def json_round_trip(record: dict) -> dict:
    return json.loads(json.dumps(record))


def assert_same_game(a: Game, b: Game) -> None:
    assert a.events == b.events
    assert a.scores == b.scores
    assert a.over == b.over and a.winner == b.winner and a.truncated == b.truncated
    assert a.hand_number == b.hand_number
    if not a.over:
        assert a.legal_actions() == b.legal_actions() and a.current_player == b.current_player
        assert [a.hand(s) for s in range(a.num_players)] == [b.hand(s) for s in range(b.num_players)]
        assert a.boneyard() == b.boneyard()


# ====================================================================== round trips
@pytest.mark.parametrize("opts", OPTION_SETS)
@pytest.mark.parametrize("seed", range(4))
def test_round_trip_whole_games(opts, seed):
    game = random_game(opts, seed)
    assert game.over
    record = json_round_trip(game_record(game, seed=seed))
    assert record["format"] == REPLAY_FORMAT and record["version"] == REPLAY_VERSION
    assert record["seed"] == seed and record["over"] is True
    assert record["final_scores"] == game.scores and record["winner"] == game.winner
    assert len(record["hands"]) == game.hand_number
    loaded = load_replay(record)
    assert_same_game(loaded, game)
    # a loaded game records itself identically
    assert json_round_trip(game_record(loaded, seed=seed)) == record


@pytest.mark.parametrize("opts", OPTION_SETS[:6])
@pytest.mark.parametrize("stop_at", [0, 1, 7, 25])
def test_round_trip_unfinished_games(opts, stop_at):
    game = random_game(opts, seed=stop_at, stop_at=stop_at)
    record = json_round_trip(game_record(game))
    loaded = load_replay(record)
    assert_same_game(loaded, game)
    if not game.over:
        # the loaded game plays on exactly like the original
        a = game.legal_actions()[-1]
        game.step(a)
        loaded.step(a)
        assert loaded.events == game.events


@pytest.mark.parametrize("num_players", [2, 3, 4])
@pytest.mark.parametrize("seed", range(3))
def test_env_replay_round_trip(num_players, seed):
    env = allfives_v0.raw_env(num_players=num_players, max_hands=3, reward="points")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while env.agents:
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    record = env.replay()
    assert record["seed"] == seed
    loaded = load_replay(json_round_trip(record))
    assert_same_game(loaded, env.game)


def test_env_replay_with_fixed_deal_and_scores():
    env = allfives_v0.raw_env(hand_size="five_always", max_hands=2)
    hands = [["5-5", "5-0", "6-0", "3-1", "6-5"], ["5-3", "6-6", "4-4", "6-2", "6-1"]]
    env.reset(seed=9, options={"hands": hands, "boneyard": ["1-1", "4-2", "5-2"], "leader": 0, "scores": [100, 40]})
    while env.agents:
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    record = json_round_trip(env.replay())
    assert record["hands"][0]["scores_before"] == [100, 40]
    assert record["hands"][0]["deal"]["boneyard"][:3] == [[1, 1], [2, 4], [2, 5]]
    assert_same_game(load_replay(record), env.game)


@pytest.mark.parametrize("seed", range(3))
def test_env_replay_of_a_single_hand_episode(seed):
    """``episode="hand"`` records must load too: the replay ends after the one hand, like the game."""
    env = allfives_v0.raw_env(episode="hand")
    env.reset(seed=seed)
    while env.agents:
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    record = json_round_trip(env.replay())
    assert_same_game(load_replay(record), env.game)


def test_save_and_load_file(tmp_path: Path):
    game = random_game({"num_players": 3}, seed=5)
    path = save_replay(game, tmp_path / "g.replay.json", seed=5)
    assert path.exists()
    on_disk = json.loads(path.read_text())
    assert on_disk == json_round_trip(game_record(game, seed=5))
    assert_same_game(load_replay(path), game)
    assert_same_game(load_replay(str(path)), game)
    assert_same_game(allfives_env.load_replay(path.read_text()), game)  # a JSON string works too
    # a record (not a game) saves as is
    path2 = save_replay(on_disk, tmp_path / "copy.json")
    assert json.loads(path2.read_text()) == on_disk


def test_read_record_accepts_dict_string_and_path(tmp_path: Path):
    record = game_record(random_game({}, seed=1))
    text = json.dumps(record)
    (tmp_path / "r.json").write_text(text)
    for source in (record, text, tmp_path / "r.json", str(tmp_path / "r.json")):
        assert read_record(source)["format"] == REPLAY_FORMAT


# ====================================================================== tampering
@pytest.fixture(scope="module")
def record() -> dict:
    """A finished 2-player game of several hands with plays, points, draws, passes and settlements."""
    for seed in range(200):
        game = random_game({"max_hands": 3, "target": 10_000}, seed)
        kinds = {type(e) for e in game.events}
        events_h1 = game.events[: game.hand_records[1].first_event] if len(game.hand_records) > 1 else []
        if (
            game.hand_number >= 2
            and {Play, Draw, Settlement, GameOver} <= kinds
            and any(type(e) is Draw for e in events_h1)
        ):
            return json_round_trip(game_record(game, seed=seed))
    raise AssertionError("no suitable game found")


def _tampered(record: dict, change) -> dict:
    rec = copy.deepcopy(record)
    change(rec)
    return rec


def _find(rec: dict, kind: str, hand: int = 0, pred=lambda e: True) -> tuple[int, dict]:
    for i, e in enumerate(rec["hands"][hand]["events"]):
        if e["type"] == kind and pred(e):
            return i, e
    raise AssertionError(f"no {kind} event in hand {hand + 1}")


def expect_replay_error(rec, *fragments: str) -> str:
    with pytest.raises(ReplayError) as info:
        load_replay(rec)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert isinstance(info.value, ValueError)
    return message


def test_untampered_record_loads(record):
    load_replay(copy.deepcopy(record))


def test_changed_play_points(record):
    rec = copy.deepcopy(record)
    i, play = _find(rec, "play")
    play["points"] += 5
    expect_replay_error(rec, "hand 1", f"event {i}", "points")


def test_changed_scoring_play_points_in_later_hand(record):
    rec = copy.deepcopy(record)
    i, play = _find(rec, "play", hand=1)
    play["points"] = 35 if play["points"] != 35 else 30
    expect_replay_error(rec, "hand 2", f"event {i}")


def test_changed_count(record):
    rec = copy.deepcopy(record)
    plays = [(i, e) for i, e in enumerate(rec["hands"][0]["events"]) if e["type"] == "play"]
    j, play = plays[1]
    play["count"] += 1
    expect_replay_error(rec, "hand 1", f"event {j}", "count")


def test_swapped_tile(record):
    rec = copy.deepcopy(record)
    i, play = _find(rec, "play")
    play["tile"] = [6, 6] if play["tile"] != [6, 6] else [0, 0]
    expect_replay_error(rec, "hand 1", f"event {i}")


def test_changed_slot(record):
    rec = copy.deepcopy(record)
    plays = [(i, e) for i, e in enumerate(rec["hands"][0]["events"]) if e["type"] == "play"]
    i, play = plays[1]
    play["slot"] = "N" if play["slot"] != "N" else "S"
    expect_replay_error(rec, "hand 1", f"event {i}")


def test_changed_drawn_tile(record):
    rec = copy.deepcopy(record)
    i, draw = _find(rec, "draw")
    draw["tile"] = [6, 6] if draw["tile"] != [6, 6] else [0, 0]
    expect_replay_error(rec, "hand 1", f"event {i}")


def test_dropped_middle_event(record):
    rec = copy.deepcopy(record)
    events = rec["hands"][0]["events"]
    k = [n for n, e in enumerate(events) if e["type"] == "play"][1]  # the second play of hand 1
    del events[k]
    expect_replay_error(rec, "hand 1", f"event {k}")


def test_dropped_draw_event(record):
    rec = copy.deepcopy(record)
    i, _ = _find(rec, "draw")
    del rec["hands"][0]["events"][i]
    expect_replay_error(rec, "hand 1", f"event {i}")


def test_dropped_settlement(record):
    rec = copy.deepcopy(record)
    i, _ = _find(rec, "settlement")
    del rec["hands"][0]["events"][i]
    # the engine's settlement then meets the next recorded event (the start of hand 2)
    expect_replay_error(rec, "hand 2, event 0", "settlement")


def test_dropped_final_event(record):
    """The engine's last event (game_over) must be in the record too."""
    rec = copy.deepcopy(record)
    assert rec["hands"][-1]["events"][-1]["type"] == "game_over"
    rec["hands"][-1]["events"].pop()
    expect_replay_error(rec, f"hand {len(rec['hands'])}")


def test_inserted_event(record):
    rec = copy.deepcopy(record)
    i, play = _find(rec, "play")
    rec["hands"][0]["events"].insert(i + 1, copy.deepcopy(play))
    expect_replay_error(rec, "hand 1", f"event {i + 1}")


def test_changed_deal_tile_swap(record):
    """Swap the first tile played in hand 1 with a tile of another seat's hand in the deal."""
    rec = copy.deepcopy(record)
    i, play = _find(rec, "play")
    seat = play["seat"]
    hands = rec["hands"][0]["deal"]["hands"]
    other = (seat + 1) % len(hands)
    k = hands[seat].index(play["tile"])
    hands[seat][k], hands[other][0] = hands[other][0], hands[seat][k]
    expect_replay_error(rec, "hand 1", f"event {i}")


def test_changed_deal_boneyard_order(record):
    rec = copy.deepcopy(record)
    i, draw = _find(rec, "draw")
    bone = rec["hands"][0]["deal"]["boneyard"]
    k = bone.index(draw["tile"])
    bone[k], bone[-1] = bone[-1], bone[k]
    expect_replay_error(rec, "hand 1")


def test_deal_with_duplicate_tile(record):
    rec = copy.deepcopy(record)
    hands = rec["hands"][0]["deal"]["hands"]
    hands[1][0] = list(hands[0][0])
    expect_replay_error(rec, "hand 1", "twice")


def test_deal_missing_tiles(record):
    rec = copy.deepcopy(record)
    rec["hands"][0]["deal"]["boneyard"].pop()
    expect_replay_error(rec, "hand 1")


def test_deal_wrong_hand_size(record):
    rec = copy.deepcopy(record)
    deal = rec["hands"][0]["deal"]
    deal["boneyard"].append(deal["hands"][0].pop())
    expect_replay_error(rec, "hand 1", "hand_size")


def test_tile_outside_the_set(record):
    rec = copy.deepcopy(record)
    rec["hands"][0]["deal"]["hands"][0][0] = [7, 7]
    expect_replay_error(rec, "hand 1")


def test_changed_leader(record):
    rec = copy.deepcopy(record)
    h = rec["hands"][0]
    h["leader"] = (h["leader"] + 1) % len(h["deal"]["hands"])
    expect_replay_error(rec, "hand 1")


def test_changed_leader_of_later_hand(record):
    rec = copy.deepcopy(record)
    h = rec["hands"][1]
    h["leader"] = (h["leader"] + 1) % len(h["deal"]["hands"])
    expect_replay_error(rec, "hand 2")


def test_changed_starting_scores(record):
    rec = copy.deepcopy(record)
    rec["hands"][0]["scores_before"] = [5, 0]
    expect_replay_error(rec, "hand 1", "event 0")


def test_changed_settlement_scores(record):
    rec = copy.deepcopy(record)
    i, s = _find(rec, "settlement")
    s["scores"][0] += 5
    expect_replay_error(rec, "hand 1", f"event {i}")


def test_changed_final_scores(record):
    rec = copy.deepcopy(record)
    rec["final_scores"][0] += 5
    expect_replay_error(rec, "final scores")


def _flip_winner(r):
    r["winner"] = 1 if r["winner"] != 1 else 0


def _flip_truncated(r):
    r["truncated"] = not r["truncated"]


def _not_over(r):
    r["over"] = False


def _later_scores_before(r):
    r["hands"][1]["scores_before"] = [s + 5 for s in r["hands"][1]["scores_before"]]


@pytest.mark.parametrize(
    "change",
    [_flip_winner, _flip_truncated, _not_over, _later_scores_before],
    ids=["winner", "truncated", "over", "hand2-scores_before"],
)
def test_record_fields_that_contradict_the_re_simulation(record, change):
    """Like ``final_scores``, the record's outcome fields and each hand's ``scores_before`` must agree with
    the re-simulated game; a record that contradicts itself is corrupt."""
    with pytest.raises(ReplayError):
        load_replay(_tampered(record, change))


def test_changed_rules(record):
    rec = copy.deepcopy(record)
    rec["rules"]["hand_end"] = "winner_takes"
    message = expect_replay_error(rec, "settlement")
    assert message.startswith("hand ") and ", event " in message


def test_record_says_over_but_events_stop(record):
    rec = copy.deepcopy(record)
    del rec["hands"][-1]
    rec["hands"][-1]["events"] = rec["hands"][-1]["events"][:3]
    expect_replay_error(rec, "over")


def test_event_after_game_over(record):
    rec = copy.deepcopy(record)
    i, play = _find(rec, "play")
    rec["hands"][-1]["events"].append(copy.deepcopy(play))
    expect_replay_error(rec, f"hand {len(rec['hands'])}", "after the game is over")


@pytest.mark.parametrize(
    "change, fragment",
    [
        (lambda r: r.update(format="chess-pgn"), "not an All Fives replay"),
        (lambda r: r.pop("format"), "not an All Fives replay"),
        (lambda r: r.update(version=2), "version"),
        (lambda r: r.pop("version"), "version"),
        (lambda r: r.pop("rules"), "rules"),
        (lambda r: r.pop("hands"), "hands"),
        (lambda r: r.update(hands=[]), "no hands"),
        (lambda r: r["rules"].update(num_players=7), "rules"),
        (lambda r: r["rules"].update(bogus_option=1), "bogus_option"),
        (lambda r: r["hands"][0].pop("deal"), "hand 1"),
        (lambda r: r["hands"][0].pop("events"), "hand 1"),
        (lambda r: r["hands"][0]["events"][1].pop("seat"), "hand 1, event 1"),
        (lambda r: r["hands"][0]["events"][1].update(type="teleport"), "hand 1, event 1"),
        (lambda r: next(e for e in r["hands"][1]["events"] if e["type"] == "play").update(slot="X"), "hand 2, event"),
        (lambda r: r["hands"][0]["deal"].update(hands=None), "hand 1"),
        (lambda r: r["hands"][0].update(opening_drawer="x"), "hand 1"),
        (lambda r: r["hands"][0]["events"][1].update(tile=3.5), "hand 1, event 1"),
        (lambda r: r["hands"][0].update(scores_before=5), "hand 1"),
        (lambda r: r.update(rules="abc"), "rules"),
    ],
    ids=["format", "no-format", "version", "no-version", "no-rules", "no-hands", "empty-hands", "bad-rules",
         "unknown-rule", "no-deal", "no-events", "event-field", "event-type", "bad-slot", "deal-hands-null",
         "drawer-str", "tile-float", "scores-before-int", "rules-string"],
)
def test_malformed_records(record, change, fragment):
    expect_replay_error(_tampered(record, change), fragment)


def test_not_json_and_not_a_replay(tmp_path: Path):
    expect_replay_error("{this is not json", "not valid JSON")
    expect_replay_error("[1, 2, 3]", "cannot read")  # not an object: read as a path, which does not exist
    (tmp_path / "list.json").write_text("[1, 2, 3]")
    expect_replay_error(tmp_path / "list.json", "not an All Fives replay")
    (tmp_path / "bad.json").write_text("{\"format\": ")
    expect_replay_error(tmp_path / "bad.json", "JSON")
    expect_replay_error(tmp_path / "missing.json", "cannot read")
    expect_replay_error(tmp_path, "cannot read")  # a directory


def test_random_binary_file(tmp_path: Path):
    path = tmp_path / "noise.bin"
    path.write_bytes(bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8)) + b"\xff\xfe\x00")
    expect_replay_error(path)
    expect_replay_error(str(path))


def test_replay_error_is_a_value_error():
    assert issubclass(ReplayError, ValueError)
    assert allfives_env.ReplayError is ReplayError


def test_fixed_deal_game_round_trip():
    """A game whose first hand was fixed by the user (Deal.from_tiles) records that deal exactly."""
    rules = Rules(hand_size="five_always", max_hands=1)
    deal = Deal.from_tiles(
        rules,
        [["5-5", "5-0", "0-6", "3-1", "5-6"], ["5-3", "6-6", "4-4", "6-2", "1-6"]],
        ["1-1", "2-4", "5-2"],
        leader=0,
        rng=np.random.default_rng(0),
    )
    game = Game(rules, 0, deals=[deal])
    rng = np.random.default_rng(0)
    while not game.over:
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])
    record = json_round_trip(game_record(game))
    assert record["hands"][0]["deal"]["hands"][0] == [[5, 5], [0, 5], [0, 6], [1, 3], [5, 6]]
    assert record["hands"][0]["leader"] == 0
    assert_same_game(load_replay(record), game)
    first = record["hands"][0]["events"][0]
    assert first == {"type": "hand_start", "hand": 1, "leader": 0, "scores": [0, 0]}
    assert isinstance(game.events[0], HandStart)
