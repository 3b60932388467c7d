"""The opt-in ``features`` observation slice: what it holds, where, its bounds, and the envs that use it."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from allfives_env import allfives_v0
from allfives_env.agents.expert import ExpertAgent
from allfives_env.analysis import DOMINO, FEATURE_NAMES, NORMAL, WINS, placement_features
from allfives_env.core.view import PlayerView
from allfives_env.core import Game, Rules, RulesError
from allfives_env.encoding import ACTION_FEATURES, ObservationEncoder, observation_table
from allfives_env.single_seat import AllFivesSingleSeatEnv

F = len(ACTION_FEATURES)


def _positions(rules: Rules, games: int, seed: int = 0):
    """(game, seat to act) at every decision of some games played by greedy/random moves."""
    rng = np.random.default_rng(seed)
    for g in range(games):
        game = Game(rules, seed + g)
        while not game.over:
            yield game, game.current
            legal = game.legal
            game.step(legal[int(rng.integers(len(legal)))])


def test_layout_adds_one_slice_at_the_end_and_nothing_else_moves() -> None:
    rules = Rules()
    plain, rich = ObservationEncoder(rules), ObservationEncoder(rules, action_features=True)
    assert rich.slices["features"] == slice(plain.size, plain.size + 4 * plain.T * F)
    assert {k: v for k, v in rich.slices.items() if k != "features"} == plain.slices
    assert rich.size == 152 + 28 * 4 * F and "features" in observation_table(rules, action_features=True)
    with pytest.raises(RulesError, match="action_features"):
        ObservationEncoder(rules, action_features="yes")


@pytest.mark.parametrize("options", [{}, {"num_players": 4}, {"score_unit": 5, "may_draw_when_able": True}])
def test_features_describe_exactly_the_legal_placements(options: dict) -> None:
    rules = Rules(**options)
    plain, rich = ObservationEncoder(rules), ObservationEncoder(rules, action_features=True)
    expert = ExpertAgent(seed=0)
    sl = rich.slices["features"]
    draw = 4 * rich.T
    checked = 0
    for game, seat in _positions(rules, 6):
        for s in range(rules.num_players):
            obs = rich.encode(game, s)
            assert np.all(obs >= rich.low) and np.all(obs <= rich.high)
            np.testing.assert_array_equal(obs[:plain.size], plain.encode(game, s))  # the rest is unchanged
            table = obs[sl].reshape(4 * rich.T, F)
            if s != seat:
                assert not table.any(), "only the seat to act gets features"
                continue
            placements = [a for a in game.legal if a != draw]
            assert sorted(np.flatnonzero(table[:, 0])) == sorted(placements)  # the legal flag
            _, rows = expert.features(PlayerView(game, s), placements)
            for action, (kind, now, pips, double, *_rest) in zip(placements, rows):
                row = dict(zip(ACTION_FEATURES, table[action]))
                assert row["wins"] == (kind == WINS) and row["domino"] == (kind == DOMINO)
                assert row["now"] == pytest.approx(now * rules.score_unit / 20)
                assert row["pips"] == pytest.approx(pips / (2 * rules.max_pip)) and row["double"] == double
                checked += 1
    assert checked > 100


def test_the_slice_columns_are_named_analysis_features() -> None:
    # one list of names: every column after legal/wins/domino is a field of the analysis row
    assert ACTION_FEATURES[:3] == ("legal", "wins", "domino")
    assert set(ACTION_FEATURES[3:]) <= set(FEATURE_NAMES)


def test_the_expert_reads_the_shared_analysis() -> None:
    rules = Rules(num_players=4)
    expert = ExpertAgent(seed=0)
    for game, seat in _positions(rules, 3, seed=5):
        view = PlayerView(game, seat)
        actions = [a for a in game.legal if a != 4 * game.tiles.size]
        assert expert.features(view, actions)[1] == placement_features(view, actions)[1]


def test_expert_value_is_its_weighted_features() -> None:
    """``evaluate`` is a weighted sum of ``features`` rows (decisions unchanged by the split)."""
    rules = Rules()
    expert = ExpertAgent(seed=0)
    w = expert.weights
    for game, seat in _positions(rules, 4, seed=7):
        view = PlayerView(game, seat)
        actions = [a for a in game.legal if a != 4 * game.tiles.size]
        if not actions:
            continue
        (deny_w, pip_w, double_w), rows = expert.features(view, actions)
        for value, (kind, now, pips, double, deny, block, mate, follow, fit, shown, p_lose) in zip(
                expert.evaluate(view, actions), rows):
            assert 0.0 <= p_lose <= 1.0 and 0.0 <= block <= 2.0
            if kind != NORMAL:
                assert value >= 1e6
                continue
            expected = (w["w_score"] * now + pip_w * pips + (double_w if double else 0.0) - deny_w * deny
                        + w["w_block"] * block + w["w_follow"] * follow + w["w_mobility"] * min(fit, 3)
                        + w["w_variety"] * shown)
            assert value == pytest.approx(expected)


def test_single_seat_env_with_features_passes_the_checkers() -> None:
    env = AllFivesSingleSeatEnv(opponents=["greedy"], action_features=True)
    check_env(env, skip_render_check=True)
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3.check_env(AllFivesSingleSeatEnv(opponents=["expert"], action_features=True), warn=True)
    with pytest.raises(ValueError, match="action_features"):
        AllFivesSingleSeatEnv(action_features=1)


@pytest.mark.filterwarnings("ignore:ignoring unknown reset option")  # api_test passes options={"options": 1}
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
def test_pettingzoo_env_with_features_passes_api_and_seed_tests() -> None:
    api_test(allfives_v0.env(action_features=True, max_hands=1), num_cycles=200)
    seed_test(lambda: allfives_v0.env(action_features=True, max_hands=1), num_cycles=100)
    env = allfives_v0.env(action_features=True)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    assert obs["observation"].shape == (152 + 28 * 4 * F,)
