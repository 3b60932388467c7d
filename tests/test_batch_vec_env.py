"""The batch vec env (``vec_env: batch``, allfives_training/batch_vec_env.py): SB3's VecEnv contract checked the way
``stable_baselines3.common.env_checker`` checks an env, the single-seat env's rewards and observations,
batch opponents, the league's policy files, and MaskablePPO training on it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from allfives_env.agents.registry import AgentError  # noqa: E402
from allfives_env.core.errors import IllegalActionError, RulesError  # noqa: E402
from allfives_env.core.outcome import zero_sum_share  # noqa: E402
from allfives_env.core.replay import load_replay  # noqa: E402
from allfives_env.core.rules import Rules  # noqa: E402
from allfives_env.encoding import ObservationEncoder  # noqa: E402
from allfives_env.single_seat import AllFivesSingleSeatEnv  # noqa: E402
from allfives_training.batch_vec_env import BatchSingleSeatVecEnv, batch_spec_problem  # noqa: E402

TWO = Rules(num_players=2, target=60)


def _env(n: int = 8, seed: int = 3, **kwargs) -> BatchSingleSeatVecEnv:
    kwargs.setdefault("rules", TWO)
    env = BatchSingleSeatVecEnv(n, **kwargs)
    env.seed(seed)
    return env


def _random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.argmax(masks * rng.random(masks.shape), axis=1)


def _play(env: BatchSingleSeatVecEnv, steps: int, seed: int = 0):
    """Random legal learner actions for ``steps`` steps: yields (obs, rewards, dones, infos) of each."""
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        masks = np.stack(env.env_method("action_masks"))
        yield env.step(_random_actions(masks, rng))


def test_spaces_shapes_dtypes_masks_and_auto_reset_infos() -> None:
    env = _env(6, reward="points")
    single = AllFivesSingleSeatEnv(rules=TWO)
    assert env.observation_space == single.observation_space and env.action_space == single.action_space
    obs = env.reset()
    assert obs.shape == (6,) + env.observation_space.shape and obs.dtype == np.float32
    assert all(env.observation_space.contains(o) for o in obs)
    assert len(env.reset_infos) == 6 and {"scores", "seat", "hand"} <= set(env.reset_infos[0])
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    assert is_masking_supported(env) and get_action_masks(env).shape == (6, env.action_space.n)
    ends = 0
    for obs, rewards, dones, infos in _play(env, 300):
        assert obs.shape == (6, env.observation_space.shape[0]) and obs.dtype == np.float32
        assert rewards.shape == (6,) and rewards.dtype == np.float32 and dones.dtype == np.bool_
        assert len(infos) == 6 and all(env.observation_space.contains(o) for o in obs)
        masks = env.action_masks()
        assert masks.dtype == np.bool_ and masks.any(axis=1).all()  # every game waits for the learner
        assert np.array_equal(masks, get_action_masks(env))
        for i in np.flatnonzero(dones):
            info = infos[i]
            assert env.observation_space.contains(info["terminal_observation"])
            assert isinstance(info["TimeLimit.truncated"], bool)
            assert info["episode"]["l"] >= 1 and env.reset_infos[i]["hand"] == 1
            ends += 1
        assert not any("terminal_observation" in infos[i] for i in np.flatnonzero(~dones))
    assert ends > 10
    assert env.get_attr("reward_mode", indices=[1]) == ["points"] and len(env.get_attr("seat")) == 6
    assert env.has_attr("action_masks") and not env.has_attr("no_such_thing")
    assert env.env_is_wrapped(object) == [False] * 6
    env.close()


def test_the_same_seed_replays_the_same_games_and_another_does_not() -> None:
    runs = []
    for seed in (11, 11, 12):
        env = _env(5, seed=seed, reward="points")
        first = env.reset()
        steps = list(_play(env, 60))
        runs.append((first, [s[0] for s in steps], [s[1] for s in steps], env.get_attr("seat")))
    (a0, a_obs, a_rew, a_seat), (b0, b_obs, b_rew, b_seat), (c0, c_obs, _, _) = runs
    assert np.array_equal(a0, b0) and a_seat == b_seat
    assert all(np.array_equal(x, y) for x, y in zip(a_obs, b_obs)) and np.array_equal(a_rew, b_rew)
    assert not (np.array_equal(a0, c0) and all(np.array_equal(x, y) for x, y in zip(a_obs, c_obs)))


def test_observations_and_masks_are_the_single_seat_envs_of_the_same_game() -> None:
    env = _env(4, record=True, action_features=True)
    encoder = ObservationEncoder(TWO, action_features=True)
    obs = env.reset()
    for k, (obs, _, _, _) in enumerate(_play(env, 40)):
        if k % 8:
            continue
        for i in range(4):
            game = load_replay(env.batch.replay(i))  # the core re-simulates the batch game
            seat = env.get_attr("seat", indices=[i])[0]
            assert game.current == seat and not game.over
            assert np.array_equal(obs[i], encoder.encode(game, seat))
            assert np.array_equal(env.action_masks()[i], encoder.action_mask(game, seat).astype(bool))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_points_rewards_of_an_episode_sum_to_the_final_score_share(players: int) -> None:
    rules = Rules(num_players=players, target=60)
    env = _env(8, reward="points", rules=rules)
    env.reset()
    total = np.zeros(8)
    checked = 0
    for _, rewards, dones, infos in _play(env, 250):
        total += rewards
        for i in np.flatnonzero(dones):
            info = infos[i]
            side = rules.side_of(info["seat"])
            expected = zero_sum_share(info["scores"], side) / rules.target
            assert total[i] == pytest.approx(expected, abs=1e-5)
            assert info["episode"]["r"] == pytest.approx(expected, abs=1e-5)
            total[i] = 0.0
            checked += 1
    assert checked >= 5


@pytest.mark.parametrize("episode", ["game", "hand"])
def test_win_rewards_come_at_the_end_and_follow_the_winner(episode: str) -> None:
    env = _env(8, reward="win", episode=episode)
    env.reset()
    seen = set()
    for _, rewards, dones, infos in _play(env, 250):
        assert not rewards[~dones].any()
        for i in np.flatnonzero(dones):
            gains = np.asarray(infos[i]["scores"])  # every episode starts at 0-0
            mine = gains[TWO.side_of(infos[i]["seat"])]
            expected = 0.0 if (gains == gains.max()).sum() > 1 else (1.0 if mine == gains.max() else -1.0)
            assert rewards[i] == expected
            seen.add(float(rewards[i]))
    assert {1.0, -1.0} <= seen


def test_the_opponents_are_batch_agents_that_play_their_seats_in_lockstep() -> None:
    from allfives_env.batch.agents import BatchAgent

    env = _env(12, record=True, opponents=["random", "greedy", "expert"])
    env.reset()
    assert all(isinstance(a, BatchAgent) for a in env.venv.pool.agents)
    calls = []  # (agent index, seat to act, the agent's moves, decisions logged so far) per call

    class Spy:
        def __init__(self, k: int, agent: BatchAgent) -> None:
            self.k, self.agent = k, agent

        def act(self, batch):
            out = self.agent.act(batch)
            logged = [len(batch.decisions(i)) for i in range(batch.n)]
            calls.append((self.k, batch.current, out, logged, env.venv.seated.copy()))
            return out

    for k, agent in enumerate(env.venv.pool.agents):
        env.venv.pool.agents[k] = Spy(k, agent)
        env.venv.pool.where[k] = False
    moves = 0
    for _, _, dones, _ in _play(env, 60):
        for k, current, out, logged, seated in calls:
            for i in np.flatnonzero(~dones & (current >= 0)):
                if seated[i, current[i]] == k:  # this agent's seat was to act: its move was played
                    assert env.batch.decisions(i)[logged[i]] == out[i]
                    moves += 1
        assert len({k for k, *_ in calls}) <= 3  # one call per kind and round: len(calls) per step is small
        calls.clear()
    assert moves > 100


def test_the_learner_seat_is_drawn_or_fixed_and_the_partner_plays_its_seat() -> None:
    env = _env(16, rules=Rules(num_players=4), partner="random", opponents=["random"])
    env.reset()
    assert set(env.get_attr("seat")) == {0, 1, 2, 3}
    for i in range(16):
        seated = env.env_method("seated_specs", indices=[i])[0]
        seat = env.get_attr("seat", indices=[i])[0]
        assert seated[seat] is None and all(s == "random" for k, s in enumerate(seated) if k != seat)
    fixed = _env(6, seat=1)
    fixed.reset()
    list(_play(fixed, 50))
    assert fixed.get_attr("seat") == [1] * 6


def test_errors_are_clear() -> None:
    assert batch_spec_problem("expert") is None and batch_spec_problem("ppo:path=x.npz") is None
    assert "no batch implementation" in batch_spec_problem("pimc:samples=5")
    assert "greedily" in batch_spec_problem("ppo:path=x.npz,sample=true")
    with pytest.raises(AgentError, match="no batch implementation"):
        BatchSingleSeatVecEnv(2, opponents=["pimc"], rules=TWO)
    with pytest.raises(RulesError, match="reward="):
        BatchSingleSeatVecEnv(2, reward="money", rules=TWO)
    env = _env(3)
    env.reset()
    bad = np.array([np.flatnonzero(~m)[0] for m in env.action_masks()])
    with pytest.raises(IllegalActionError, match="not legal"):
        env.step(bad)
    with pytest.raises(AgentError, match="no batch implementation"):
        env.env_method("set_opponents", ["pimc"], [1.0])
    env.set_options({"scores": [10, 0]})
    with pytest.raises(RulesError, match="reset options"):
        env.reset()
    with pytest.raises(AttributeError):
        env.env_method("render")


def test_set_opponents_changes_the_mixture_from_the_next_episode() -> None:
    env = _env(8, opponents=["random"])
    env.reset()
    env.env_method("set_opponents", ["ppo-2p"], [1.0], indices=[0, 1, 2, 3])
    assert env.env_method("seated_specs", indices=[0])[0].count("random") == 1  # the episode keeps its opponent
    drawn = {i: set() for i in range(8)}
    for _, _, dones, _ in _play(env, 200):
        for i in np.flatnonzero(dones):
            drawn[i].update(s for s in env.seated_specs(i) if s is not None)
    assert all(drawn[i] == {"ppo-2p"} for i in range(4)) and all(drawn[i] == {"random"} for i in range(4, 8))


def test_a_policy_file_plays_as_its_agent_does() -> None:
    from allfives_env.agents.policy import ShippedPolicyAgent
    from allfives_env.agents.base import PlayerView
    from allfives_env.agents.registry import make_agent
    from allfives_training.batch_vec_env import make_batch_opponent

    env = _env(6, record=True, opponents=["random"])
    env.reset()
    list(_play(env, 5))
    batch_agent = make_batch_opponent("ppo-2p", TWO, 6, seed=0)
    chosen = batch_agent.act(env.batch)
    agent = make_agent("ppo-2p")
    assert isinstance(agent, ShippedPolicyAgent)
    for i in range(6):
        game = load_replay(env.batch.replay(i))
        assert chosen[i] == agent.act(PlayerView(game, game.current))


def test_maskable_ppo_learns_a_few_steps_on_it() -> None:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = _env(8, reward="points", opponents=["random"])
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [16]})
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256
    assert len(model.ep_info_buffer) > 0  # Monitor's episode infos reach SB3's logger


def test_a_training_run_with_the_league_on_the_batch_vec_env(tmp_path: Path) -> None:
    from allfives_training.train import train

    summary = train(ROOT / "configs" / "tiny.yaml", run_dir=str(tmp_path / "run"), progress=False,
                    overrides=["vec_env=batch", "output.tensorboard=false", "output.plot=false",
                               "evaluation.replays=0", "evaluation.every=0", "evaluation.at_start=false"])
    assert summary["steps"] == 1024 and (tmp_path / "run" / "policy.npz").is_file()
    assert len(list((tmp_path / "run" / "league").glob("snapshot_*.npz"))) >= 2
