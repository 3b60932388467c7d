"""The single-seat gymnasium env: checkers, reward credit, masks, seeding, opponents, errors."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import allfives_env  # noqa: F401  (registers AllFives-v0)
from allfives_env.agents import AgentError
from allfives_env.core import GameOverError, IllegalActionError, RulesError
from allfives_env.single_seat import AllFivesSingleSeatEnv


def _play(env: AllFivesSingleSeatEnv, seed: int, rng: np.random.Generator) -> tuple[list[float], dict]:
    obs, info = env.reset(seed=seed)
    rewards = []
    while True:
        mask = env.action_masks()
        assert mask.any(), "the learner is only asked to act with a legal action available"
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.observation_space.contains(obs)
        rewards.append(reward)
        if terminated or truncated:
            return rewards, info


@pytest.mark.parametrize("options", [{}, {"num_players": 3}, {"num_players": 4}, {"may_draw_when_able": True}])
def test_gymnasium_env_checker(options: dict) -> None:
    check_env(AllFivesSingleSeatEnv(opponents=["random", "greedy"], **options), skip_render_check=True)


def test_sb3_env_checker() -> None:
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3.check_env(AllFivesSingleSeatEnv(opponents=["greedy"]), warn=True)


def test_registered_with_gymnasium() -> None:
    env = gymnasium.make("AllFives-v0", opponents=["expert"], num_players=2)
    obs, info = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape
    assert env.unwrapped.action_masks().any()


def test_win_reward_reaches_the_learner_even_when_an_opponent_ends_the_game() -> None:
    """The loser gets its -1 on the step after which the opponent won (the PettingZoo->SB3 pitfall)."""
    rng = np.random.default_rng(0)
    outcomes = {"won": 0, "lost_on_opponent_move": 0}
    for seed in range(40):
        env = AllFivesSingleSeatEnv(opponents=["greedy"], seat=0, target=60)
        rewards, info = _play(env, seed, rng)
        game = env.game
        assert all(r == 0 for r in rewards[:-1])
        if game.winner == 0:
            assert rewards[-1] == 1.0
            outcomes["won"] += 1
        else:
            assert rewards[-1] == -1.0
            last_play = [e for e in game.events if e.kind == "play"][-1]
            outcomes["lost_on_opponent_move"] += last_play.seat != 0
    assert outcomes["won"] > 0 and outcomes["lost_on_opponent_move"] > 0


def test_points_reward_sums_to_the_side_score_difference() -> None:
    rng = np.random.default_rng(1)
    for seed in range(5):
        env = AllFivesSingleSeatEnv(opponents=["random"], reward="points", seat=1)
        rewards, info = _play(env, seed, rng)
        scores = env.game.scores
        assert sum(rewards) == pytest.approx((scores[1] - scores[0]) / env.rules.target)


def test_partnership_rewards_follow_the_team() -> None:
    rng = np.random.default_rng(2)
    env = AllFivesSingleSeatEnv(opponents=["random"], partner="greedy", num_players=4, reward="points", seat=2)
    rewards, _ = _play(env, 3, rng)
    team, other = env.game.scores[0], env.game.scores[1]
    assert sum(rewards) == pytest.approx((team - other) / env.rules.target)
    assert env._seated[0].name == "greedy"  # the partner seat


def test_mask_matches_the_game_and_is_empty_when_over() -> None:
    env = AllFivesSingleSeatEnv(opponents=["random"])
    env.reset(seed=4)
    assert sorted(np.flatnonzero(env.action_masks()).tolist()) == sorted(env.game.legal)
    _play(env, 4, np.random.default_rng(0))
    assert not env.action_masks().any()


def test_seeded_episodes_are_reproducible_and_seeds_differ() -> None:
    def trajectory(seed: int) -> list:
        env = AllFivesSingleSeatEnv(opponents=["random", "greedy"], opponent_weights=[0.5, 0.5])
        rewards, info = _play(env, seed, np.random.default_rng(9))
        return [e for e in env.game.events]

    assert trajectory(11) == trajectory(11)
    assert trajectory(11) != trajectory(12)


def test_learner_seat_is_random_unless_fixed() -> None:
    env = AllFivesSingleSeatEnv(opponents=["random"], num_players=3)
    seats = {env.reset(seed=s)[1]["seat"] for s in range(30)}
    assert seats == {0, 1, 2}
    fixed = AllFivesSingleSeatEnv(opponents=["random"], seat=1, num_players=3)
    assert {fixed.reset(seed=s)[1]["seat"] for s in range(10)} == {1}


def test_opponent_mixture_weights_are_used() -> None:
    env = AllFivesSingleSeatEnv(opponents=["random", "greedy"], opponent_weights=[0.0, 1.0], seat=0)
    for seed in range(5):
        env.reset(seed=seed)
        assert env._seated[1].name == "greedy"


def test_illegal_actions_terminate_or_raise() -> None:
    env = AllFivesSingleSeatEnv(opponents=["random"])
    env.reset(seed=0)
    illegal = next(a for a in range(env.action_space.n) if not env.action_masks()[a])
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert terminated and reward == -1.0 and "legal actions" in info["illegal_action"]
    with pytest.raises(GameOverError, match="episode is over"):
        env.step(0)
    strict = AllFivesSingleSeatEnv(opponents=["random"], illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError, match="legal actions"):
        strict.step(illegal)
    with pytest.raises(IllegalActionError, match="out of range"):
        strict.step(10_000)
    with pytest.raises(IllegalActionError, match="not an integer"):
        strict.step("6-4@W")


def test_bad_configuration_errors() -> None:
    with pytest.raises(AgentError, match="unknown agent"):
        AllFivesSingleSeatEnv(opponents=["grandmaster"])
    with pytest.raises(AgentError, match="one finite, non-negative weight per opponent"):
        AllFivesSingleSeatEnv(opponents=["random", "greedy"], opponent_weights=[1.0])
    with pytest.raises(RulesError, match="seat=5"):
        AllFivesSingleSeatEnv(seat=5)
    with pytest.raises(RulesError, match="reward="):
        AllFivesSingleSeatEnv(reward="money")
    with pytest.raises(RulesError, match="num_players"):
        AllFivesSingleSeatEnv(num_players=7)


def test_single_hand_episodes() -> None:
    env = AllFivesSingleSeatEnv(opponents=["greedy"], episode="hand")
    rewards, info = _play(env, 0, np.random.default_rng(0))
    assert env.game.hands_completed == 1 or env.game.winner is not None
    assert rewards[-1] in (-1.0, 0.0, 1.0)


def test_ansi_render_shows_the_learner_hand() -> None:
    env = AllFivesSingleSeatEnv(opponents=["random"], render_mode="ansi", seat=1)
    env.reset(seed=0)
    assert "player_1's hand" in env.render()


def test_a_game_won_before_the_learners_first_move_is_dealt_again() -> None:
    """With a low target and an immediate win check the other seats can end the game before the learner
    moves; reset() deals again then (as the vector env does), so every episode starts at a decision."""
    from allfives_env.core import Rules

    rules = Rules(num_players=3, target=10, win_check="immediate")  # about one deal in six ends at once
    env = AllFivesSingleSeatEnv(opponents=["expert", "random"], rules=rules, reward="points", episode="hand")
    starts = []
    original = env._start

    def counting(options: object) -> None:
        starts.append(options)
        original(options)

    env._start = counting  # type: ignore[method-assign]
    redealt = ended = 0
    for seed in range(100):
        before = len(starts)
        env.reset(seed=seed, options={"scores": [5, 5, 5]})  # every side one play from the target
        redealt += len(starts) - before > 1
        ended += env.game.over
    assert redealt == 0 and ended > 0  # a fixed start is played as given, even when it ends at once

    for seed in range(100):
        before = len(starts)
        env.reset(seed=seed)
        redealt += len(starts) - before > 1
        assert env.action_masks().any() and not env.game.over, seed
    assert redealt > 0, "no game ended before the learner moved: choose rules where one does"
