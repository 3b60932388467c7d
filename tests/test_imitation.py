"""The imitation warm start: recorded demonstrations, cloning a teacher, and a run that starts from one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]  # pytest puts it on sys.path (pyproject: pythonpath)
from allfives_env.agents import make_agent  # noqa: E402
from allfives_env.core import Rules  # noqa: E402
from allfives_env.policy import read_policy_header  # noqa: E402
from allfives_env.single_seat import AllFivesSingleSeatEnv  # noqa: E402
from training.config import ConfigError, load_config  # noqa: E402
from training.imitation import collect_demonstrations, imitate  # noqa: E402
from training.train import train  # noqa: E402

TINY = ROOT / "configs" / "tiny.yaml"
ENV = {"rules": Rules(num_players=2, target=60), "reward": "win", "action_features": True}


def test_demonstrations_are_legal_reproducible_and_carry_game_returns() -> None:
    demos = collect_demonstrations(ENV, {"random": 1.0, "greedy": 1.0}, "greedy", 600, seed=3, gamma=1.0)
    assert len(demos) == 600 and demos.obs.dtype == np.float16 and demos.obs.shape[1] == 152 + 28 * 4 * 12
    assert all(demos.masks[i, a] for i, a in enumerate(demos.actions))
    # win reward, no discount: every decision's return is its game's result (0 for the last, cut-off game)
    assert set(np.unique(demos.returns)) <= {-1.0, 0.0, 1.0} and {-1.0, 1.0} <= set(np.unique(demos.returns))
    again = collect_demonstrations(ENV, {"random": 1.0, "greedy": 1.0}, "greedy", 600, seed=3, gamma=1.0)
    assert np.array_equal(demos.obs, again.obs) and np.array_equal(demos.actions, again.actions)
    other = collect_demonstrations(ENV, {"random": 1.0, "greedy": 1.0}, "greedy", 600, seed=4, gamma=1.0)
    assert not np.array_equal(demos.actions, other.actions)
    split = collect_demonstrations(ENV, {"random": 1.0}, "greedy", 300, seed=3, gamma=0.9, processes=2)
    assert len(split) == 300 and all(split.masks[i, a] for i, a in enumerate(split.actions))


def test_a_search_teacher_records_legal_reproducible_demonstrations() -> None:
    """configs/ppo_4p.yaml distils pimc: its labels must be legal and the same for the same seed (a rebuild
    of the shipped file depends on it), in the 4-player game it ships for."""
    env = {"rules": Rules(num_players=4, target=60), "reward": "points", "action_features": True,
           "partner": "expert"}
    teacher = "pimc:samples=8"
    demos = collect_demonstrations(env, {"greedy": 1.0}, teacher, 120, seed=5, gamma=0.99)
    again = collect_demonstrations(env, {"greedy": 1.0}, teacher, 120, seed=5, gamma=0.99)
    assert np.array_equal(demos.actions, again.actions) and np.array_equal(demos.obs, again.obs)
    assert all(demos.masks[i, a] for i, a in enumerate(demos.actions))
    # with more than one placement the search, not a fixed rule, chose: some of its moves are not greedy's
    greedy = collect_demonstrations(env, {"greedy": 1.0}, "greedy", 120, seed=5, gamma=0.99)
    assert not np.array_equal(demos.actions, greedy.actions)


def test_cloning_greedy_learns_its_moves() -> None:
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    demos = collect_demonstrations(ENV, {"random": 1.0}, "greedy", 3000, seed=0, gamma=0.99)
    model = MaskablePPO("MlpPolicy", AllFivesSingleSeatEnv(**ENV), seed=0, device="cpu",
                        policy_kwargs={"net_arch": {"pi": [64], "vf": [16]}})
    lines: list[str] = []
    stats = imitate(model.policy, demos, epochs=6, batch_size=128, learning_rate=3e-3, seed=0, log=lines.append)
    assert len(lines) == 6 and "held-out agreement" in lines[-1]
    # greedy's choice is the legal placement with the most points now (ties: the heavier tile); both are
    # features, so even a small net on 3000 decisions agrees with it far more often than chance (0.43,
    # forced moves included) does; an untrained or broken clone stays near chance
    chance = float(np.mean(1.0 / demos.masks.sum(axis=1)))
    assert stats["test_agreement"] > chance + 0.12, (stats, chance)


def test_a_run_with_a_warm_start_records_it_and_exports_a_feature_policy(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    train(TINY, run_dir=str(run), progress=False, overrides=[
        "imitation.teacher=greedy", "imitation.decisions=800", "imitation.epochs=2", "imitation.processes=1",
        "env.action_features=true", "league.enabled=false"])
    out = capsys.readouterr().out
    assert "imitation: 800 decisions" in out and "imitation epoch 2/2" in out
    stats = json.loads((run / "imitation.json").read_text())
    assert stats["epoch"] == 2 and 0.0 <= stats["test_agreement"] <= 1.0
    header = read_policy_header(run / "policy.npz")
    assert header["action_features"] is True and header["obs_size"] == 152 + 28 * 4 * 12
    # the agent computes the features itself, whatever env it plays in
    agent = make_agent(f"ppo:path={run / 'policy.npz'}", seed=0)
    env = AllFivesSingleSeatEnv(opponents=[agent], rules=ENV["rules"])
    env.reset(seed=1)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        done = terminated or truncated


def test_imitation_config_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("imitation: {teacher: nobody}\n")
    with pytest.raises(ConfigError, match=r"imitation\.teacher: unknown agent 'nobody'"):
        load_config(bad)
    bad.write_text("imitation: {teacher: expert, epochs: 0}\n")
    with pytest.raises(ConfigError, match=r"imitation\.epochs: must be an integer from 1 to 1,000,000, got 0"):
        load_config(bad)
    bad.write_text("env: {action_features: 1}\n")
    with pytest.raises(ConfigError, match=r"env\.action_features: must be true or false"):
        load_config(bad)
