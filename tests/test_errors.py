"""Errors: bad configs, bad deals, illegal actions, finished games, and the ``env()`` wrapper.

Every error the library raises on bad input is one of its own exceptions and also a ``ValueError``
(``GameOverError`` a ``RuntimeError``), and its message says what was wrong and what is allowed.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import allfives_env
from allfives_env import allfives_v0
from allfives_env.core import (
    NotResetError,
    AllFivesError,
    Deal,
    DealError,
    Game,
    GameOverError,
    IllegalActionError,
    ReplayError,
    Rules,
    RulesError,
)
from allfives_env.core.actions import action_name, encode_action, parse_action
from allfives_env.core.tiles import tile_set

TILES = tile_set(6)


def raises(exc, f, *fragments):
    with pytest.raises(exc) as info:
        f()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


# ====================================================================== exception classes
def test_exception_hierarchy():
    for cls in (RulesError, DealError, IllegalActionError, ReplayError):
        assert issubclass(cls, AllFivesError) and issubclass(cls, ValueError)
    assert issubclass(GameOverError, AllFivesError) and issubclass(GameOverError, RuntimeError)
    assert allfives_env.RulesError is RulesError and allfives_env.IllegalActionError is IllegalActionError


# ====================================================================== bad configs
BAD_OPTIONS = [
    ({"num_players": 5}, ["num_players=5", "2, 3 or 4"]),
    ({"num_players": 1}, ["num_players=1", "2, 3 or 4"]),
    ({"num_players": 2.0}, ["num_players"]),
    ({"num_players": True}, ["num_players"]),
    ({"max_pip": 7}, ["max_pip=7", "6", "9", "12"]),
    ({"max_pip": 6.0}, ["max_pip"]),
    ({"num_players": 4, "hand_size": 9}, ["hand_size=9", "needs 36 tiles", "the double-six set has 28"]),
    ({"num_players": 3, "hand_size": 10}, ["needs 30 tiles", "double-six set has 28"]),
    ({"num_players": 4, "max_pip": 9, "hand_size": 14}, ["needs 56 tiles", "double-nine set has 55"]),
    ({"num_players": 4, "max_pip": 12, "hand_size": 23}, ["needs 92 tiles", "double-twelve set has 91"]),
    ({"hand_size": 0}, ["hand_size=0", "positive integer", "five_always"]),
    ({"hand_size": -3}, ["hand_size=-3"]),
    ({"hand_size": "lots"}, ["hand_size='lots'", "default", "five_always", "seven_five"]),
    ({"hand_size": 4.5}, ["hand_size=4.5"]),
    ({"num_players": 3, "partnership": True}, ["partnership=True", "4 players", "num_players=3"]),
    ({"num_players": 2, "partnership": True}, ["partnership=True", "4 players"]),
    ({"num_players": 4, "partnership": "sometimes"}, ["partnership='sometimes'", "true, false or 'auto'"]),
    ({"boneyard_reserve": 11}, ["boneyard_reserve=11", "0 to 10"]),
    ({"boneyard_reserve": -1}, ["boneyard_reserve=-1", "0 to 10"]),
    ({"num_players": 4, "boneyard_reserve": 9}, ["boneyard_reserve=9", "0 to 8"]),
    ({"boneyard_reserve": 1.5}, ["boneyard_reserve=1.5"]),
    ({"first_leader": "oldest"}, ["first_leader='oldest'", "random", "highest_double"]),
    ({"no_double_fallback": "cry"}, ["no_double_fallback='cry'", "heaviest_tile", "redeal", "draw_until_double"]),
    ({"after_block": "winner"}, ["after_block='winner'", "random", "lowest_pips", "rotate"]),
    ({"spinner": "none"}, ["spinner='none'", "first_double", "outside v1"]),
    ({"spinner": "all_doubles"}, ["spinner='all_doubles'", "first_double"]),
    ({"spinner_count": "muggins"}, ["spinner_count='muggins'", "allfives", "sniff"]),
    ({"hand_end": "nobody"}, ["hand_end='nobody'", "deduct_own", "winner_takes"]),
    ({"rounding": "up"}, ["rounding='up'", "nearest", "down", "none"]),
    ({"bonus_round": "never"}, ["bonus_round='never'", "sum_then_round", "round_each"]),
    ({"blocked_award": "all"}, ["blocked_award='all'", "opponents_total", "difference"]),
    ({"win_check": "later"}, ["win_check='later'", "immediate", "end_of_hand"]),
    ({"may_draw_when_able": "yes"}, ["may_draw_when_able='yes'", "true or false"]),
    ({"spinner_sides_first": 1}, ["spinner_sides_first=1", "true or false"]),
    ({"must_lead_it": None}, ["must_lead_it=None", "true or false"]),
    ({"lead_scores": "no"}, ["lead_scores"]),
    ({"allow_negative": 0}, ["allow_negative=0"]),
    ({"exact_target": 1}, ["exact_target=1"]),
    ({"max_draws_per_turn": 0}, ["max_draws_per_turn=0", "positive integer", "unlimited"]),
    ({"max_draws_per_turn": 2.5}, ["max_draws_per_turn=2.5"]),
    ({"score_unit": 2}, ["score_unit=2", "1", "5"]),
    ({"score_unit": 5, "rounding": "none"}, ["rounding='none'", "score_unit=5", "nearest", "down"]),
    ({"min_first_score": -5}, ["min_first_score=-5"]),
    ({"target": 0}, ["target=0", "positive integer"]),
    ({"target": -10}, ["target=-10"]),
    ({"target": "high"}, ["target='high'"]),
    ({"max_hands": 0}, ["max_hands=0", "positive integer", "no cap"]),
    ({"max_hands": 2.5}, ["max_hands=2.5"]),
]


@pytest.mark.parametrize("options, fragments", BAD_OPTIONS, ids=[repr(o) for o, _ in BAD_OPTIONS])
def test_bad_option_is_a_rules_error_naming_it(options, fragments):
    raises(RulesError, lambda: Rules(**options), *fragments)
    raises(RulesError, lambda: Rules.from_options(options), *fragments)
    # the environment rejects the same options, with the same message
    raises(ValueError, lambda: allfives_v0.raw_env(**options), *fragments)


@pytest.mark.parametrize(
    "key, suggestion",
    [("num_player", "num_players"), ("handsize", "hand_size"), ("spiner_count", "spinner_count"),
     ("boneyard_reserv", "boneyard_reserve"), ("winchek", "win_check"), ("max_hand", "max_hands")],
)
def test_unknown_option_suggests_the_closest(key, suggestion):
    message = raises(RulesError, lambda: Rules.from_options({key: 1}), f"unknown rules option {key!r}",
                     f"did you mean {suggestion!r}")
    assert "allowed options" in message and "num_players" in message
    raises(RulesError, lambda: allfives_v0.raw_env(**{key: 1}), f"did you mean {suggestion!r}")


def test_unknown_option_without_a_close_match():
    message = raises(RulesError, lambda: Rules.from_options({"zzzzzzzz": 1}), "unknown rules option 'zzzzzzzz'")
    assert "did you mean" not in message and "allowed options" in message


def test_valid_edge_options_are_accepted():
    assert Rules(num_players=4, hand_size=7).hand_size == 7  # 28 tiles exactly, empty boneyard
    assert Rules(num_players=4, hand_size=7).boneyard_size == 0
    assert Rules(boneyard_reserve=10).boneyard_reserve == 10
    assert Rules(partnership="auto", num_players=4).partnership is True
    assert Rules(partnership="auto", num_players=3).partnership is False
    assert Rules(target="auto").target == 250
    assert Rules(hand_size="default", num_players=3).hand_size == 7
    assert Rules(max_hands=None).max_hands is None
    assert Rules(score_unit=5, rounding="down").target == 50


def test_env_options_errors():
    raises(RulesError, lambda: allfives_v0.raw_env(reward="money"), "reward='money'", "win", "points")
    raises(RulesError, lambda: allfives_v0.raw_env(episode="round"), "episode='round'", "game", "hand")
    raises(RulesError, lambda: allfives_v0.raw_env(render_mode="svg"), "render_mode='svg'", "ansi", "human", "rgb_array")
    raises(RulesError, lambda: allfives_v0.raw_env(rules=Rules(), num_players=3), "not both", "num_players")
    raises(RulesError, lambda: allfives_v0.env(num_players=6), "num_players=6")


# ====================================================================== bad deals
HANDS_2P = [
    ["0-0", "0-1", "0-2", "0-3", "0-4", "0-5", "0-6", "1-1", "1-2"],
    ["2-6", "3-6", "4-6", "5-6", "6-6", "2-2", "2-3", "2-4", "2-5"],
]


def _reset(options, **env_kwargs):
    env = allfives_v0.raw_env(**env_kwargs)
    return lambda: env.reset(seed=0, options=options)


def test_good_fixed_deal_is_accepted():
    env = allfives_v0.raw_env()
    env.reset(seed=0, options={"hands": HANDS_2P, "boneyard": ["1-3"], "leader": 1})
    assert env.game.hand(0) == sorted(TILES.parse(t) for t in HANDS_2P[0])
    assert env.game.boneyard()[0] == TILES.parse("1-3")
    assert env.agent_selection == "player_1"


@pytest.mark.parametrize(
    "options, fragments",
    [
        ({"hands": [HANDS_2P[0][:-1] + ["0-0"], HANDS_2P[1]]}, ["0-0", "appears twice", "hand 0"]),
        ({"hands": [HANDS_2P[0], HANDS_2P[1][:-1] + ["0-1"]]}, ["1-0", "appears twice", "hand 0", "hand 1"]),
        ({"hands": HANDS_2P, "boneyard": ["6-6"]}, ["6-6", "appears twice", "hand 1", "boneyard"]),
        ({"hands": HANDS_2P, "boneyard": ["1-3", "1-3"]}, ["3-1", "appears twice"]),
        ({"hands": [HANDS_2P[0][:-1], HANDS_2P[1]]}, ["seat 0", "8 tiles", "hand_size=9"]),
        ({"hands": [HANDS_2P[0], HANDS_2P[1] + ["3-3"]]}, ["seat 1", "10 tiles", "exactly 9"]),
        ({"hands": [HANDS_2P[0]]}, ["2 hands", "got 1"]),
        ({"hands": HANDS_2P + [["3-3"]]}, ["2 hands", "got 3"]),
        ({"hands": [HANDS_2P[0][:-1] + ["7-7"], HANDS_2P[1]]}, ["7-7", "not in the double-6 set", "0..6"]),
        ({"hands": [HANDS_2P[0][:-1] + ["6-9"], HANDS_2P[1]]}, ["6-9"]),
        ({"hands": [HANDS_2P[0][:-1] + [28], HANDS_2P[1]]}, ["28", "out of range", "0..27"]),
        ({"hands": [HANDS_2P[0][:-1] + ["six-four"], HANDS_2P[1]]}, ["six-four", "'a-b'"]),
        ({"hands": [HANDS_2P[0][:-1] + [[1]], HANDS_2P[1]]}, ["[1]"]),
        ({"hands": HANDS_2P, "leader": 2}, ["leader=2", "0..1"]),
        ({"hands": HANDS_2P, "leader": -1}, ["leader=-1", "0..1"]),
        ({"hands": HANDS_2P, "leader": "0"}, ["leader='0'", "0..1"]),
        ({"hands": HANDS_2P, "scores": [1, 2, 3]}, ["scores", "2 integers"]),
        ({"hands": HANDS_2P, "scores": [1.5, 2]}, ["scores"]),
    ],
    ids=["dup-in-hand", "dup-across-hands", "dup-in-boneyard", "dup-boneyard-twice", "short-hand", "long-hand",
         "too-few-hands", "too-many-hands", "pip-7", "pip-9", "id-28", "unreadable", "one-pip", "leader-2",
         "leader-neg", "leader-str", "scores-len", "scores-float"],
)
def test_bad_deal_is_a_deal_error(options, fragments):
    raises(DealError, _reset(options), *fragments)


def test_bad_deal_in_the_partnership_game():
    hands = [["0-0", "0-1", "0-2", "0-3", "0-4"], ["0-5", "0-6", "1-1", "1-2", "1-3"],
             ["1-4", "1-5", "1-6", "2-2", "2-3"], ["2-4", "2-5", "2-6", "3-3", "3-4"]]
    raises(DealError, _reset({"hands": hands, "scores": [0, 0, 0, 0]}, num_players=4), "2 integers", "team")
    raises(DealError, _reset({"hands": hands, "leader": 4}, num_players=4), "leader=4", "0..3")
    _reset({"hands": hands, "scores": [10, 20]}, num_players=4)()


NO_DOUBLES = [["6-3", "5-1", "4-0", "3-1", "2-0"], ["6-4", "5-2", "4-1", "3-2", "2-1"]]


@pytest.mark.parametrize("drawer", [2, -1, "x", 1.5, "0"])
def test_bad_opening_drawer_is_a_deal_error(drawer):
    """errors.py: every error on bad input is one of the library's own (a DealError here, not a TypeError)."""
    env_kwargs = dict(hand_size="five_always", first_leader="highest_double", no_double_fallback="draw_until_double")
    raises(DealError, _reset({"hands": NO_DOUBLES, "opening_drawer": drawer}, **env_kwargs), "opening_drawer")


@pytest.mark.parametrize("hands", [[None, None], [HANDS_2P[0], 5], "abc"], ids=["none-hands", "int-hand", "string"])
def test_malformed_hands_are_a_deal_error(hands):
    raises(DealError, _reset({"hands": hands}))


def test_deal_options_need_hands():
    raises(DealError, _reset({"boneyard": ["1-3"]}), "hands")
    raises(DealError, _reset({"leader": 0}), "hands")


def test_unknown_reset_option_warns():
    env = allfives_v0.raw_env()
    with pytest.warns(UserWarning, match="ignoring unknown reset option"):
        env.reset(seed=0, options={"hnads": HANDS_2P})


def test_deal_from_tiles_bigger_set():
    rules = Rules(max_pip=9, hand_size=2)
    t9 = tile_set(9)
    deal = Deal.from_tiles(rules, [["9-9", "8-9"], [[0, 0], 1]], rng=np.random.default_rng(0))
    assert deal.hands == ((t9.parse("9-9"), t9.parse("9-8")), (0, 1))
    assert len(deal.boneyard) == 55 - 4
    raises(DealError, lambda: Deal.from_tiles(rules, [["9-9", 54], ["0-0", "0-1"]]), "9-9", "appears twice")
    raises(DealError, lambda: Deal.from_tiles(rules, [["9-9", "10-1"], ["0-0", "0-1"]]), "10-1", "0..9")
    raises(DealError, lambda: Deal.from_tiles(rules, [["9-9", 55], ["0-0", "0-1"]]), "55", "0..54")


def test_fixed_deal_without_double_under_redeal():
    rules = Rules(first_leader="highest_double", no_double_fallback="redeal")
    hands = [["0-1", "0-2", "0-3", "0-4", "0-5", "0-6", "1-2", "1-3", "1-4"],
             ["1-5", "1-6", "2-3", "2-4", "2-5", "2-6", "3-4", "3-5", "3-6"]]
    deal = Deal.from_tiles(rules, hands, ["4-5", "4-6", "5-6", "0-0", "1-1", "2-2", "3-3", "4-4", "5-5", "6-6"])
    raises(DealError, lambda: Game(rules, 0, deals=[deal]), "no double", "leader")
    # giving a leader settles it
    deal = Deal.from_tiles(rules, hands, None, leader=1, rng=np.random.default_rng(0))
    assert Game(rules, 0, deals=[deal]).current_player == 1


def test_game_scores_validation():
    raises(DealError, lambda: Game(Rules(), 0, scores=[0]), "2 integers")
    raises(DealError, lambda: Game(Rules(num_players=3), 0, scores=[0, 0]), "3 integers", "player")


# ====================================================================== illegal actions
@pytest.fixture
def env():
    e = allfives_v0.raw_env()
    e.reset(seed=0, options={"hands": HANDS_2P, "leader": 0})
    return e


def test_illegal_action_lists_the_legal_ones_by_name(env):
    env.step(parse_action("2-1@W", env.game.tiles))  # lead 2-1: W=2, E=1
    assert env.agent_selection == "player_1"
    legal_names = env.game.action_names(env.game.legal_actions())
    illegal = parse_action("6-6@W", env.game.tiles)
    message = raises(IllegalActionError, lambda: env.step(illegal), "6-6@W", "not legal", "legal actions:")
    for name in legal_names:
        assert name in message
    assert "player_1" in message


def test_illegal_lead_message(env):
    legal = env.game.legal_actions()
    bad = parse_action("6-4@E", env.game.tiles)
    message = raises(IllegalActionError, lambda: env.step(bad), "6-4@E", "not legal for seat 0", "legal actions:")
    assert "0-0@W" in message and "2-1@W" in message  # a lead goes on slot W
    assert re.search(r"ids \[[0-9, ]+\]", message)
    assert env.game.legal_actions() == legal  # nothing changed
    assert isinstance(IllegalActionError("x"), ValueError)


@pytest.mark.parametrize("action", [-1, 112, 999, 10**9])
def test_out_of_range_actions(env, action):
    raises(IllegalActionError, lambda: env.step(action), f"action {action} is out of range 0..111", "legal actions:")


def test_out_of_range_with_the_draw_action():
    e = allfives_v0.raw_env(may_draw_when_able=True)
    e.reset(seed=0)
    raises(IllegalActionError, lambda: e.step(113), "out of range 0..112")


@pytest.mark.parametrize("action", [1.5, 4.0, "4", "6-4@E", None, True, False, [4], np.float64(4.0)])
def test_non_integer_actions(env, action):
    raises(IllegalActionError, lambda: env.step(action), "not an integer action id", "legal actions:")


def test_numpy_integer_actions_are_accepted(env):
    action = env.game.legal_actions()[0]
    env.step(np.int64(action))
    env2 = allfives_v0.raw_env()
    env2.reset(seed=0, options={"hands": HANDS_2P, "leader": 0})
    env2.step(np.int32(action))
    assert env2.game.events == env.game.events


def test_core_game_illegal_actions():
    game = Game(Rules(), 0, deals=[Deal.from_tiles(Rules(), HANDS_2P, leader=0, rng=np.random.default_rng(0))])
    raises(IllegalActionError, lambda: game.step(parse_action("6-6@W", game.tiles)), "6-6@W", "not legal")
    raises(IllegalActionError, lambda: game.step("0-0@W"), "not an integer")
    raises(IllegalActionError, lambda: game.step(1), "0-0@E", "not legal", "0-0@W")
    game.step(0)  # still playable after the errors


def test_action_parsing_errors():
    raises(IllegalActionError, lambda: parse_action("6-4", TILES), "W, E, N, S")
    raises(IllegalActionError, lambda: parse_action("6-4@X", TILES), "W, E, N, S")
    raises(IllegalActionError, lambda: parse_action("6-9@W", TILES), "6-9")
    raises(IllegalActionError, lambda: parse_action(500, TILES), "out of range")
    raises(IllegalActionError, lambda: encode_action(3, 7), "slot 7")
    assert parse_action("4-6@e", TILES) == parse_action("6-4@E", TILES) == TILES.parse("6-4") * 4 + 1
    assert parse_action("draw", TILES) == 112
    assert action_name(112, TILES) == "draw"
    assert action_name(TILES.parse("6-4") * 4 + 1, TILES) == "6-4@E"


# ====================================================================== finished games
def _finish(game, rng):
    while not game.over:
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])


def test_stepping_a_finished_game_raises_game_over():
    rng = np.random.default_rng(0)
    game = Game(Rules(max_hands=1), rng)
    _finish(game, rng)
    message = raises(GameOverError, lambda: game.step(0), "game is over", "new game")
    assert str(game.scores) in message
    raises(RuntimeError, lambda: game.step(0))
    assert game.legal_actions() == [] and game.current_player == -1


def test_stepping_a_finished_env():
    env = allfives_v0.raw_env(max_hands=1)
    env.reset(seed=2)
    while not any(env.terminations.values()) and not any(env.truncations.values()):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    # a done agent may only pass None
    with pytest.raises(ValueError):
        env.step(0)
    while env.agents:
        env.step(None)
    assert env.game.over


# ====================================================================== the env() wrapper
def test_env_wrapper_terminates_on_illegal_action():
    env = allfives_v0.env()
    env.reset(seed=0, options={"hands": HANDS_2P, "leader": 0})
    offender = env.agent_selection
    mask = env.observe(offender)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards[offender] == -1
    assert all(r == 0 for a, r in env.rewards.items() if a != offender)
    rewards = {}
    for agent in env.agent_iter():
        _, reward, term, trunc, _ = env.last()
        assert term or trunc
        rewards[agent] = reward
        env.step(None)
    assert rewards[offender] == -1
    assert env.agents == []


def test_env_wrapper_terminates_on_illegal_action_mid_game():
    env = allfives_v0.env(num_players=3)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(5):
        obs, *_ = env.last()
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    offender = env.agent_selection
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert all(env.terminations.values())
    assert env.rewards[offender] == -1 and sum(env.rewards.values()) == -1


@pytest.mark.parametrize("action", [10_000, -1, 2.5, "3", True, None])
def test_env_wrapper_out_of_space_action_is_a_typed_error(action):
    # PettingZoo's own wrapper asserts; env() raises this package's error and changes nothing
    env = allfives_v0.env()
    env.reset(seed=0)
    before = env.unwrapped.game.events[:]
    with pytest.raises(IllegalActionError, match="0..111"):
        env.step(action)
    assert env.unwrapped.game.events == before


@pytest.mark.parametrize("call", ["step", "observe", "state", "render", "last", "agent_iter"])
@pytest.mark.parametrize("make", [allfives_v0.env, allfives_v0.raw_env])
def test_env_before_reset_is_a_typed_error(make, call):
    env = make(render_mode="ansi")
    calls = {
        "step": lambda: env.step(0), "observe": lambda: env.observe("player_0"), "state": env.state,
        "render": env.render, "last": env.last, "agent_iter": lambda: next(iter(env.agent_iter())),
    }
    if make is allfives_v0.raw_env and call == "render":
        assert "reset" in calls[call]()  # the raw env renders a placeholder
        return
    with pytest.raises(NotResetError, match="reset"):
        calls[call]()
