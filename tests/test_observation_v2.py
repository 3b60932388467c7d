"""Observation version 2 ("pieces for the race"): the two engines agree bit for bit, each new piece holds the
values worked out by hand on fixed deals, version 1 is unchanged, every front end takes and checks
``obs_version``, and a version-2 policy file round-trips and plays (AEC env, vector-env opponent)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from allfives_env.batch import BatchGame
from allfives_env.batch.observe import BatchObserver
from allfives_env.core import Deal, Game, Rules
from allfives_env.core.errors import BatchError, RulesError
from allfives_env.encoding import (
    ACTION_FEATURES, HISTORY_COLUMNS, NEED_BINS, OBSERVATION_PIECES, ObservationEncoder, bonus_bound, feature_names,
    need_fives, observation_shape, observation_table, pieces_table,
)

from test_batch_observe import check_observations, rule_sets

C = len(HISTORY_COLUMNS)


# ====================================================================== the two engines
def check_v2(rules: Rules, n: int, seed: int, action_features: bool) -> int:
    """Every seat at every decision of ``n`` random batch games: the batch observer (version 2) equals the
    encoder (version 2) re-simulating the same games; the decisions compared."""
    return check_observations(rules, n, seed, action_features, obs_version=2)


FIXED_CONFIGS = [
    dict(num_players=2),
    dict(num_players=3, max_pip=9, may_draw_when_able=True, hand_end="winner_takes", bonus_round="round_each"),
    dict(num_players=4, hand_end="winner_takes", max_draws_per_turn=1, target=100),
    dict(num_players=2, max_pip=9, boneyard_reserve=2, score_unit=5, hand_end="winner_takes", win_check="end_of_hand"),
    dict(num_players=3, first_leader="highest_double", no_double_fallback="draw_until_double", min_first_score=10),
]


@pytest.mark.parametrize("action_features", [False, True])
def test_v2_batch_observations_equal_the_encoders(action_features: bool) -> None:
    compared = 0
    for j, options in enumerate(FIXED_CONFIGS):
        rules = Rules.from_options({**options, "max_hands": 3})
        compared += check_v2(rules, 2, 300 + j, action_features)
    for j, rules in enumerate(rule_sets(6, 40 + action_features)):
        compared += check_v2(rules, 2, 400 + j, action_features)
    assert compared > 300


def test_v2_needs_a_batch_that_keeps_the_history_and_v1_ignores_it() -> None:
    rules = Rules()
    with pytest.raises(BatchError, match="history=True"):
        BatchObserver(rules, False, 2).observe(BatchGame(rules, 2, 0))
    plain, kept = BatchGame(rules, 3, 5), BatchGame(rules, 3, 5, history=True)
    for _ in range(6):
        assert np.array_equal(plain.observe(), kept.observe())  # version 1 reads nothing of the history
        acts = plain.random_actions(np.arange(3, dtype=np.uint64))
        plain.step(acts)
        kept.step(acts)
    assert (plain.S["hist"] == 0).all() and kept.S["hist"].any()
    assert kept.observe(obs_version=2).shape == (3, ObservationEncoder(rules, False, 2).size)


# ====================================================================== the layout
def test_v1_is_unchanged_and_v2_adds_its_pieces_after_lead() -> None:
    rules = Rules()
    v1, v2 = ObservationEncoder(rules), ObservationEncoder(rules, obs_version=2)
    assert v1.size == 152 and observation_shape(rules).size == 152  # the default 2p layout, as before
    assert list(v1.slices) == [p.name for p in OBSERVATION_PIECES if p.since == 1 and not p.optional]
    assert list(v2.slices)[:len(v1.slices)] == list(v1.slices)
    assert list(v2.slices)[len(v1.slices):] == ["needs", "pips", "bonus", "history"]
    assert all(v2.slices[name] == sl for name, sl in v1.slices.items())
    with_features = ObservationEncoder(rules, True, 2)
    assert list(with_features.slices)[-1] == "features"
    assert feature_names(2) == ACTION_FEATURES + ("pips_after", "cross")
    F = with_features.slices["features"]
    assert F.stop - F.start == 4 * 28 * 14
    assert "needs" not in observation_table(rules) and "history" in observation_table(rules, obs_version=2)
    assert "``needs``" in pieces_table() and "``needs``" not in pieces_table(obs_version=1)


@pytest.mark.parametrize("bad", [0, 3, True, "2", 2.0, None])
def test_bad_versions_are_refused_with_the_allowed_ones(bad: object) -> None:
    with pytest.raises(RulesError, match="obs_version=.*choose 1 or 2"):
        ObservationEncoder(Rules(), False, bad)  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="choose 1 or 2"):
        BatchObserver(Rules(), False, bad)  # type: ignore[arg-type]


# ====================================================================== hand-built positions
E10_HANDS = [["5-5", "5-0", "0-6", "3-1", "5-6"], ["5-3", "6-6", "4-4", "6-2", "1-6"]]
E10_BONEYARD = ["1-1", "2-4", "5-2", "0-0", "0-1", "0-2", "0-3", "0-4", "1-2", "1-4", "1-5", "2-2", "2-3", "3-3",
                "3-4", "3-6", "4-5", "4-6"]


def e10_game(**options: object) -> Game:
    """docs/rules.md §9 E10: 2 players, 5 tiles each, P0 leads."""
    rules = Rules.from_options({"hand_size": 5, **options})
    deal = Deal.from_tiles(rules, E10_HANDS, E10_BONEYARD, 0)
    return Game(rules, 0, deals=[deal])


def play(game: Game, name: str) -> None:
    """Play ``tile@end`` (the tile's pips in either order)."""
    tile, end = name.split("@")
    a, b = sorted(tile.split("-"))
    for action, given in zip(game.legal, game.action_names()):
        t, e = given.split("@")
        if sorted(t.split("-")) == [a, b] and e == end:
            game.step(action)
            return
    raise AssertionError(f"{name} is not legal: {game.action_names()}")


def piece(encoder: ObservationEncoder, obs: np.ndarray, name: str) -> np.ndarray:
    return obs[encoder.slices[name]]


def test_history_after_a_scoring_play_and_three_draws_then_cleared_at_a_new_hand() -> None:
    game = e10_game()
    enc = ObservationEncoder(game.rules, obs_version=2)
    play(game, "5-5@W")  # P0 leads: count 10
    play(game, "5-3@E")  # P1: count 13, no points; best on offer was 10 (5-0 on the lone spinner)
    play(game, "5-0@W")  # P0: count 3
    # P1 cannot play on 0/3/5/5: draws 1-1, 2-4, 5-2 and must play 5-2; it chooses N (count 5)
    play(game, "5-2@N")
    history = piece(enc, enc.encode(game, 0), "history").reshape(2, C)
    # newest: exists, placed, not passed, 3 drawn / 4, 5 points / 20, 7 pips / 12, best on offer 5 / 20 (the
    # table 0/3/5/5 with 5-5 and 5-3 gone: 0-2 on W or 5-2 on N make 5, nothing makes 10)
    assert history[0].tolist() == pytest.approx([1, 1, 0, 0.75, 0.25, 7 / 12, 0.25])
    assert history[1].tolist() == pytest.approx([1, 1, 0, 0, 0, 8 / 12, 0.5])  # 5-3, best 10 (5-0@E)
    seen_by_p1 = piece(enc, enc.encode(game, 1), "history").reshape(2, C)  # P0's turns: 5-0 then the 5-5 lead
    assert seen_by_p1[0].tolist() == pytest.approx([1, 1, 0, 0, 0, 5 / 12, 0.5])  # best: 5-0 on E made 10
    assert seen_by_p1[1].tolist() == pytest.approx([1, 1, 0, 0, 0.5, 10 / 12, 0.5])  # the lead scored 10; best 10
    for name in ("5-6@S", "6-2@N", "3-1@E", "1-1@E", "0-6@W"):  # the rest of E10: P0 dominoes
        play(game, name)
    assert game.hand_number == 2 and game.current == 0  # P0 leads hand 2
    for seat in (0, 1):
        assert not piece(enc, enc.encode(game, seat), "history").any()


def test_history_of_a_pass() -> None:
    game = e10_game(boneyard_reserve=18)  # nothing may be drawn: P1 passes at once
    enc = ObservationEncoder(game.rules, obs_version=2)
    for name in ("5-5@W", "5-3@E", "5-0@W"):
        play(game, name)
    assert game.current == 0  # P1 passed
    history = piece(enc, enc.encode(game, 0), "history").reshape(2, C)
    assert history[0].tolist() == pytest.approx([1, 0, 1, 0, 0, 0, 0.25])
    assert history[1].tolist() == pytest.approx([1, 1, 0, 0, 0, 8 / 12, 0.5])


def test_pips_by_hand() -> None:
    game = e10_game()
    enc = ObservationEncoder(game.rules, obs_version=2)
    pips = piece(enc, enc.encode(game, 0), "pips")
    total = 168  # the double-six set's pips
    own = 10 + 5 + 6 + 4 + 11
    unseen = total - own
    mean = unseen / 23
    assert pips.tolist() == pytest.approx([own / total, unseen / total, 5 * mean / total, 18 * mean / total, 5 / 28])
    play(game, "5-5@W")
    pips = piece(enc, enc.encode(game, 1), "pips")
    own1 = 8 + 12 + 8 + 8 + 7
    unseen1 = total - 10 - own1
    assert pips.tolist() == pytest.approx([own1 / total, unseen1 / total, 4 * unseen1 / 22 / total,
                                           18 * unseen1 / 22 / total, 5 / 28])


def test_needs_by_hand() -> None:
    assert need_fives(Rules(), 235) == 3 and need_fives(Rules(), 250) == 0 and need_fives(Rules(), 260) == 0
    assert need_fives(Rules(), 249) == 1 and need_fives(Rules(score_unit=5), 47) == 3
    rules = Rules(hand_size=5)
    deal = Deal.from_tiles(rules, E10_HANDS, E10_BONEYARD, 0)
    game = Game(rules, 0, deals=[deal], scores=[235, 100])
    enc = ObservationEncoder(rules, obs_version=2)
    needs = piece(enc, enc.encode(game, 0), "needs").reshape(2, NEED_BINS + 1)
    assert needs[0].tolist() == [0, 0, 1] + [0] * 10  # 15 points: 3 fives
    assert needs[1].tolist() == [0] * 12 + [1]  # 150 points: more than 12 fives
    play(game, "5-5@W")  # +10: 245, one five left
    needs = piece(enc, enc.encode(game, 1), "needs").reshape(2, NEED_BINS + 1)
    assert needs[1].tolist() == [1] + [0] * 12 and needs[0].tolist() == [0] * 12 + [1]  # as seat 1 sees it
    # a side past the target (the end-of-hand win check lets play go on): all zeros
    rules = Rules(hand_size=5, win_check="end_of_hand")
    game = Game(rules, 0, deals=[Deal.from_tiles(rules, E10_HANDS, E10_BONEYARD, 0)], scores=[245, 0])
    play(game, "5-5@W")  # 255
    enc = ObservationEncoder(rules, obs_version=2)
    assert not piece(enc, enc.encode(game, 1), "needs").reshape(2, NEED_BINS + 1)[1].any()


def test_bonus_that_can_decide() -> None:
    # winner_takes: P0's opponents hold at most the unseen pips (168 - 36 = 132 -> 130 points)
    rules = Rules(hand_size=5, hand_end="winner_takes")
    assert bonus_bound(rules, 132, 1) == 130 and bonus_bound(Rules(), 132, 1) == 0
    assert bonus_bound(Rules(num_players=3, hand_end="winner_takes", bonus_round="round_each"), 13, 2) == 15
    for scores, flags in (([120, 0], [1, 0]), ([119, 82], [0, 1]), ([100, 79], [0, 0])):
        game = Game(rules, 0, deals=[Deal.from_tiles(rules, E10_HANDS, E10_BONEYARD, 0)], scores=scores)
        enc = ObservationEncoder(rules, obs_version=2)
        # P1 (another side) may gain at most the unseen pips plus P0's hand: all 168 but its own 36... as P0 sees
        # it, P1's opponents hold at most 132 + 36 = 168 pips -> 170 points: from 80 on that reaches 250
        assert piece(enc, enc.encode(game, 0), "bonus").tolist() == flags, scores
    game = Game(Rules(hand_size=5), 0, deals=[Deal.from_tiles(Rules(hand_size=5), E10_HANDS, E10_BONEYARD, 0)],
                scores=[249, 249])
    enc = ObservationEncoder(game.rules, obs_version=2)
    assert not piece(enc, enc.encode(game, 0), "bonus").any()  # deduct_own: no bonus, ever


def test_cross_and_pips_after() -> None:
    rules = Rules(hand_size=5)
    game = Game(rules, 0, deals=[Deal.from_tiles(rules, E10_HANDS, E10_BONEYARD, 0)], scores=[240, 0])
    enc = ObservationEncoder(rules, True, 2)
    obs = enc.encode(game, 0)
    F = len(enc.feature_names)
    rows = obs[enc.slices["features"]].reshape(-1, F)
    by_name = dict(zip(game.action_names(), game.legal))
    lead_55, lead_50, lead_65 = (rows[by_name[n]] for n in ("5-5@W", "5-0@W", "6-5@W"))
    assert lead_55[-1] == 1 and lead_50[-1] == 0 and lead_65[-1] == 0  # 10 points reach 250; 5 and 0 do not
    assert lead_55[-2] == pytest.approx((36 - 10) / 168) and lead_65[-2] == pytest.approx((36 - 11) / 168)


# ====================================================================== front ends and policy files
@pytest.mark.parametrize("bad", [3, "2", True])
def test_every_front_end_refuses_a_bad_obs_version(bad: object) -> None:
    from allfives_env.allfives_v0 import env, raw_env
    from allfives_env.selfplay import AllFivesSelfPlayEnv
    from allfives_env.single_seat import AllFivesSingleSeatEnv
    from allfives_env.vector import AllFivesVectorEnv

    for make in (raw_env, env, AllFivesSingleSeatEnv, AllFivesVectorEnv, AllFivesSelfPlayEnv):
        with pytest.raises(RulesError, match="obs_version"):
            make(obs_version=bad)


def test_every_front_end_observes_version_2() -> None:
    from allfives_env.allfives_v0 import raw_env
    from allfives_env.selfplay import AllFivesSelfPlayEnv
    from allfives_env.single_seat import AllFivesSingleSeatEnv
    from allfives_env.vector import AllFivesVectorEnv

    size = ObservationEncoder(Rules(), False, 2).size
    aec = raw_env(obs_version=2)
    aec.reset(seed=1)
    assert aec.observe(aec.agent_selection)["observation"].shape == (size,)
    single = AllFivesSingleSeatEnv(obs_version=2)
    assert single.reset(seed=1)[0].shape == (size,)
    vec = AllFivesVectorEnv(3, obs_version=2)
    obs, _ = vec.reset(seed=2)
    assert obs.shape == (3, size) and vec.batch.history
    selfplay = AllFivesSelfPlayEnv(2, obs_version=2, privileged=("state",))
    obs, info = selfplay.reset(seed=3)
    assert obs.shape == (2, size) and info["state"].shape[1] == ObservationEncoder(Rules(), False, 2).state_size


def _write_v2_policy(path: Path, rules: Rules, action_features: bool = False) -> Path:
    from allfives_env.policy.file import write_policy_file

    enc = ObservationEncoder(rules, action_features, 2)
    rng = np.random.default_rng(0)
    hidden = (rng.normal(0, 0.1, (16, enc.size)).astype(np.float32), np.zeros(16, np.float32))
    action = (rng.normal(0, 0.1, (enc.num_actions, 16)).astype(np.float32), np.zeros(enc.num_actions, np.float32))
    return write_policy_file(path, rules, [hidden], action, "relu", {}, (enc.size,), enc.num_actions, obs_version=2)


def test_a_v2_policy_round_trips_and_plays_in_the_aec_env_and_as_a_vector_opponent(tmp_path: Path) -> None:
    from allfives_env.agents import make_agent
    from allfives_env.allfives_v0 import raw_env
    from allfives_env.policy import load_policy
    from allfives_env.policy.errors import PolicyError
    from allfives_env.vector import AllFivesVectorEnv

    rules = Rules()
    path = _write_v2_policy(tmp_path / "v2.npz", rules)
    policy = load_policy(path)
    assert policy.obs_version == 2 and policy.obs_size == ObservationEncoder(rules, False, 2).size
    # plays every seat of an AEC game (the env itself observes version 1: the agent encodes with its own)
    agent = make_agent(f"ppo:path={path}", seed=0)
    env = raw_env()
    env.reset(seed=4)
    for name in env.agent_iter(max_iter=5000):
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(agent.act(env.player_view(name)))
    # a vector-env opponent: the env keeps the history for it
    vec = AllFivesVectorEnv(4, opponents=[f"ppo:path={path}"])
    obs, _ = vec.reset(seed=5)
    assert vec.batch.history and obs.shape == (4, ObservationEncoder(rules).size)
    for _ in range(30):
        masks = vec.action_masks()
        vec.step(np.array([np.flatnonzero(m)[0] for m in masks]))
    # a version the library does not know is refused with the versions it does
    from test_policy import _rewrite_header  # type: ignore[import-not-found]

    bad = _rewrite_header(path, tmp_path / "v3.npz", obs_layout_version=3)
    with pytest.raises(PolicyError, match="layout version 3.*1 or 2"):
        load_policy(bad)


# ====================================================================== conformance under version 2
@pytest.mark.filterwarnings("ignore:ignoring unknown reset option")
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("options", [{}, {"num_players": 4, "hand_end": "winner_takes", "max_hands": 1},
                                     {"num_players": 3, "may_draw_when_able": True}])
def test_the_env_conformance_checks_pass_under_version_2(options: dict) -> None:
    from gymnasium.utils.env_checker import check_env
    from pettingzoo.test import api_test

    from allfives_env.allfives_v0 import raw_env
    from allfives_env.single_seat import AllFivesSingleSeatEnv

    api_test(raw_env(obs_version=2, **options), num_cycles=300)
    check_env(AllFivesSingleSeatEnv(opponents=["random"], obs_version=2, action_features=True, **options),
              skip_render_check=True)
